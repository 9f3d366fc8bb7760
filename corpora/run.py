"""Rankings: the :class:`Run` type, and a run as other tools hold it.

A run is read from and written to TREC run files and Parquet files (:meth:`Run.read`,
:meth:`Run.write`; the format from the file's suffix, :data:`RUN_FILE_FORMATS`), and converted to
and from pandas DataFrames in PyTerrier's columns (:meth:`Run.from_dataframe`,
:meth:`Run.to_dataframe`) and ranx's ``Run`` (:meth:`Run.from_ranx`, :meth:`Run.to_ranx`).

Order. What comes in is ranked like trec_eval 10 (score descending, scores compared as doubles,
ties by doc id descending, any rank column ignored); ``order="trec9"`` compares the scores as
single-precision floats instead, as trec_eval 9.x does and with it every evaluator that runs its
code (pytrec_eval, ir_measures, PyTerrier's ``Experiment``); ``order="file"`` keeps the order given.
What goes out keeps the run's ranking under both readings: a query whose order the rule rebuilds
from its scores, read either way, keeps them exactly; in any other query (a retriever breaks
ties by doc id *ascending*) the scores are lowered by the smallest steps that make them strictly
decreasing (:func:`trec_scores`). So reading back a written run gives the same rankings, and the
same scores too whenever the run was already in trec_eval's order (any run read from a file or a
DataFrame is). ranx breaks ties by Python's per-process hash of the doc id, so a run for ranx gets
strictly decreasing scores throughout.

The file formats register themselves here (:func:`register_run_file_format`): ``corpora.trec_io``
the TREC files, ``corpora.tsv_run`` MS MARCO's ``qid docid rank``, ``corpora.parquet`` the Parquet
ones; ``import corpora`` imports them all. Every format is gzipped when the name ends in ``.gz``
(:func:`run_file_format`). pandas,
pyarrow and ranx are imported on first use, so that ``import corpora`` stays light. Just over 400
lines: the type, its conversions and the table of file formats they dispatch through, one concept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from corpora.errors import RetbenchError
from corpora.frames import RUN_COLUMNS, id_column, pick_columns, score_column
from corpora.id_hashes import hash_ids
from corpora.run_order import (RUN_ORDERS, SCORE_READINGS, OrderedColumns, RunOrder, ScoreProblem, comparison_keys,
                                order_columns, strictly_decreasing, trec_order)

if TYPE_CHECKING:
    import pandas as pd

#: What a TREC run reader does with fields after the tag: refuse them (a doc id with a space would
#: shift the score column) or ignore them, as trec_eval does.
TrailingFields = Literal["error", "ignore"]
TRAILING_FIELDS: tuple[str, ...] = ("error", "ignore")
#: PyTerrier numbers ranks from 0 (``pyterrier.model.FIRST_RANK``); TREC run files from 1.
DATAFRAME_FIRST_RANK = 0


def doc_index_dtype(n_docs: int) -> type[np.integer]:
    """The type of a run's positions into ``n_docs`` doc ids: int32 below 2^31 (8 MB less per
    2M results than int64), else int64. Searches write their results in it, so a run takes them
    as they are."""
    return np.int32 if n_docs < 2**31 else np.int64


class Run:
    """Rankings: query id -> ranked (doc id, score) pairs, best first.

    Array-backed: a CSR layout of ``offsets`` into flat ``doc_index`` / ``scores`` arrays, with
    ``doc_index`` (:func:`doc_index_dtype`) pointing into the ``doc_ids`` vocabulary (an object array, or a fixed-width
    ``numpy.str_`` array as the TREC file reader makes it). A query with an empty ranking is
    still present (its slice is empty). ``doc_hashes`` (:func:`~corpora.id_hashes.hash_ids` of
    ``doc_ids``, which must not change afterwards) is what the evaluator joins on: a file reader
    hands over the hashes it computed to find repeated lines; otherwise they are computed on
    first use. Kept because it pays (``benchmarks/RESULTS.md``, ``notes.speed_paths_by_hand``).

    >>> run = Run.from_mapping({"q1": [("b", 2.0), ("a", 1.0)], "q2": []})
    >>> run.ranking("q1"), run.ranking("q2"), len(run)
    (['b', 'a'], [], 2)
    """

    __slots__ = ("query_ids", "doc_ids", "offsets", "doc_index", "scores", "_position", "_doc_hashes")

    def __init__(
        self,
        query_ids: Sequence[str],
        doc_ids: Sequence[str] | np.ndarray,
        offsets: np.ndarray,
        doc_index: np.ndarray,
        scores: np.ndarray,
        doc_hashes: np.ndarray | None = None,
    ):
        self.query_ids = list(query_ids)
        # A fixed-width str array (the run file reader's) is kept: 2M Python strings would cost more.
        fixed_width = isinstance(doc_ids, np.ndarray) and doc_ids.dtype.kind == "U"
        self.doc_ids = doc_ids if fixed_width else np.asarray(doc_ids, dtype=object)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        doc_index, index_type = np.asarray(doc_index), doc_index_dtype(len(self.doc_ids))
        if doc_index.dtype != index_type:
            if len(doc_index) and (doc_index.min() < 0 or doc_index.max() >= len(self.doc_ids)):
                raise ValueError("doc_index must hold positions into doc_ids")  # never wrapped silently
            doc_index = doc_index.astype(index_type)
        self.doc_index = doc_index
        self.scores = np.asarray(scores, dtype=np.float64)
        if len(self.offsets) != len(self.query_ids) + 1:
            raise ValueError("offsets must have one more entry than query_ids")
        if doc_hashes is not None and len(doc_hashes) != len(self.doc_ids):
            raise ValueError("doc_hashes must have one entry per doc id")
        self._doc_hashes = doc_hashes
        self._position = {q: j for j, q in enumerate(self.query_ids)}

    @property
    def doc_hashes(self) -> np.ndarray:
        """uint64 :func:`~corpora.id_hashes.hash_ids` of :attr:`doc_ids`, computed once."""
        if self._doc_hashes is None:
            self._doc_hashes = hash_ids(self.doc_ids)
        return self._doc_hashes

    def __len__(self) -> int:
        return len(self.query_ids)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._position

    def _slice(self, query_id: str) -> slice:
        j = self._position[query_id]
        return slice(int(self.offsets[j]), int(self.offsets[j + 1]))

    def ranking(self, query_id: str) -> list[str]:
        """Doc ids best first; empty for a query the run does not hold."""
        if query_id not in self._position:
            return []
        return [str(d) for d in self.doc_ids[self.doc_index[self._slice(query_id)]]]

    def items(self, query_id: str) -> list[tuple[str, float]]:
        if query_id not in self._position:
            return []
        s = self._slice(query_id)
        return [(str(d), float(x)) for d, x in zip(self.doc_ids[self.doc_index[s]], self.scores[s])]

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def to_mapping(self) -> dict[str, list[tuple[str, float]]]:
        return {q: self.items(q) for q in self.query_ids}

    def entry_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Per entry, in the run's order: its query id and its doc id (object arrays)."""
        return (np.repeat(np.asarray(self.query_ids, dtype=object), self.lengths()),
                self.doc_ids[self.doc_index])

    # ----- building ---------------------------------------------------------------------------

    @classmethod
    def from_mapping(cls, rankings: Mapping[str, Iterable[tuple[str, float]]]) -> Run:
        """Build from query id -> ranked (doc id, score) pairs; the order given is kept."""
        vocabulary: dict[str, int] = {}
        offsets = [0]
        doc_index: list[int] = []
        scores: list[float] = []
        for pairs in rankings.values():
            for doc, score in pairs:
                doc_index.append(vocabulary.setdefault(str(doc), len(vocabulary)))
                scores.append(float(score))
            offsets.append(len(doc_index))
        return cls(
            [str(q) for q in rankings],
            np.array(list(vocabulary), dtype=object),
            np.array(offsets),
            np.array(doc_index, dtype=np.int64),
            np.array(scores, dtype=np.float64),
        )

    @classmethod
    def from_ordered(cls, doc_ids: np.ndarray, scores: np.ndarray, ordered: OrderedColumns) -> Run:
        """The run of parallel columns that :func:`~corpora.run_order.order_columns` grouped and
        ordered (the doc ids stay one per row, their hashes travel with the run)."""
        return cls(ordered.query_ids, doc_ids, ordered.offsets, ordered.permutation, scores[ordered.permutation],
                   doc_hashes=ordered.hashes)

    @classmethod
    def from_columns(cls, query_ids: Iterable[str], doc_ids: Iterable[str], scores: Iterable[float],
                     order: RunOrder = "trec") -> Run:
        """A run from parallel columns, one row per result, queries in order of first appearance.

        ``order="trec"`` ranks each query like trec_eval 10 (score descending, scores compared as
        doubles, ties by doc id descending); ``"trec9"`` compares the scores as single-precision
        floats (trec_eval 9.x, pytrec_eval); ``"file"`` keeps the order of the rows. A (query, doc)
        pair given twice is a ``ValueError`` (:meth:`from_dataframe` and the file readers name its row instead).

        >>> Run.from_columns(["q1", "q1", "q1"], ["a", "c", "b"], [1.0, 2.0, 2.0]).ranking("q1")
        ['c', 'b', 'a']
        """
        qids = np.asarray(query_ids if isinstance(query_ids, np.ndarray) else list(query_ids), dtype=object)
        docs = np.asarray(doc_ids if isinstance(doc_ids, np.ndarray) else list(doc_ids), dtype=object)
        values = np.asarray(scores if isinstance(scores, np.ndarray) else list(scores), dtype=np.float64)
        if not len(qids) == len(docs) == len(values):
            raise ValueError("query_ids, doc_ids and scores must have the same length")
        if order not in RUN_ORDERS:
            raise ValueError(f"order must be one of {RUN_ORDERS}, not {order!r}")
        ordered = order_columns(qids, docs, values, order)
        if isinstance(ordered, int):
            raise ValueError(f"document {docs[ordered]!r} is ranked twice for query {qids[ordered]!r}")
        return cls.from_ordered(docs, values, ordered)

    # ----- other tools' forms -----------------------------------------------------------------

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, order: RunOrder = "trec") -> Run:
        """A run from a DataFrame with PyTerrier's columns ``qid, docno, score`` (what a PyTerrier
        transformer returns; ``rank`` and other columns are ignored) or ``query_id, doc_id, score``.

        Ranked like a TREC run file (``order="trec"``: score descending, ties by doc id descending;
        ``"trec9"``: the same, scores compared as floats; ``"file"``: the row order). Ids are strings
        (a column of integers is read as its decimal text); a missing or non-string id, a NaN score and a (query, doc) pair in two rows are
        errors (:class:`~corpora.RetbenchError`) naming the row (counted from 0, as ``df.iloc`` counts).

        >>> import pandas as pd
        >>> frame = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "b"], "score": [1.0, 3.0]})
        >>> Run.from_dataframe(frame).items("q1")
        [('b', 3.0), ('a', 1.0)]
        """
        _require_frame(frame, "Run.from_dataframe")
        return run_from_table(lambda name: frame[name].to_numpy(), list(frame.columns), "DataFrame", order)

    def to_dataframe(self) -> pd.DataFrame:
        """The run as PyTerrier holds results: columns ``qid, docno, score, rank``, rows in the
        run's order, ``rank`` from 0 (PyTerrier's first rank). A query with an empty ranking has no
        row. Scores are :meth:`file_scores`: exact wherever trec_eval's rule (which PyTerrier's
        evaluation applies) ranks them as the run does, else lowered just enough that it does.

        >>> Run.from_mapping({"q1": [("b", 3.0), ("a", 1.0)]}).to_dataframe().to_dict("list")
        {'qid': ['q1', 'q1'], 'docno': ['b', 'a'], 'score': [3.0, 1.0], 'rank': [0, 1]}
        """
        import pandas as pd

        queries, docs = self.entry_columns()
        ranks = np.arange(len(self.doc_index), dtype=np.int64) - np.repeat(self.offsets[:-1], self.lengths())
        return pd.DataFrame({"qid": pd.Series(queries, dtype=object), "docno": pd.Series(docs, dtype=object),
                             "score": self.file_scores(), "rank": ranks + DATAFRAME_FIRST_RANK})

    @classmethod
    def from_ranx(cls, run: Any) -> Run:
        """A run from a ranx ``Run``, or its dict form ``{query id: {doc id: score}}`` (pytrec_eval's
        run too); ranked like a TREC run file (score descending, ties by doc id descending)."""
        data = run.to_dict() if hasattr(run, "to_dict") else run
        if not isinstance(data, Mapping):
            raise RetbenchError(f"Run.from_ranx: got a {type(run).__name__}, not a ranx Run or a dict "
                                "{query id: {doc id: score}}. Fix: pass ranx.Run(...) or its to_dict()")
        qids = [str(q) for q, docs in data.items() for _ in docs]
        docs = [str(d) for ranked in data.values() for d in ranked]
        scores = np.array([s for ranked in data.values() for s in ranked.values()])
        return run_from_table({"qid": np.array(qids, dtype=object), "docno": np.array(docs, dtype=object),
                               "score": scores}.__getitem__, ["qid", "docno", "score"], "ranx run", "trec")

    def to_ranx(self, name: str | None = None) -> Any:
        """The run as a ranx ``Run`` (``name`` its name). ranx sorts each query by score and breaks
        ties by Python's per-process hash of the doc id, so every score is :func:`trec_scores`'
        (strictly decreasing within a query): ranx then ranks as the run does. Needs ranx
        (``pip install "retbench[ranx]"``)."""
        ranx = _import_ranx("Run.to_ranx")
        written = trec_scores(self, name or "run")
        queries, docs = self.entry_columns()
        if not len(written):
            return ranx.Run(name=name)
        data: dict[str, dict[str, float]] = {q: {} for q in self.query_ids}
        for q, d, s in zip(queries.tolist(), docs.tolist(), written.tolist()):
            data[q][d] = s
        return ranx.Run(data, name=name)

    # ----- files ------------------------------------------------------------------------------

    @classmethod
    def read(cls, path: str | Path, order: RunOrder = "trec") -> Run:
        """Read a run file, TREC, MS MARCO TSV or Parquet by its suffix, gzipped for ``.gz``
        (:func:`run_file_format`); see
        :meth:`RunFile.read`."""
        return RunFile.read(path, order).run

    def write(self, path: str | Path, tag: str = "run") -> Path:
        """Write the run to ``path`` in the format its suffix names (``.trec``, ``.txt``, ``.run``:
        TREC; ``.tsv``: MS MARCO, ranks only; ``.parquet``: Parquet; any of them gzipped with ``.gz``
        after it, and a bare ``.gz`` TREC), with :meth:`file_scores`; ``tag`` is the TREC tag (and
        the Parquet file's run id). Returns the path."""
        target = Path(path)
        run_file_format(target, writing=True).write(self, target, tag)
        return target

    def file_scores(self, tag: str = "run") -> np.ndarray:
        """The scores a written run holds, so that trec_eval's rule ranks it as this run is ranked,
        whichever way the evaluator reads the scores (trec_eval 10: doubles; 9.x and pytrec_eval: floats).

        A query whose order the rule rebuilds from its own scores under both readings keeps them
        exactly (every run read from a file or a DataFrame whose ranking does not depend on the
        reading, and a retriever's queries without ties); any other query gets :func:`trec_scores`'
        (strictly decreasing as floats, so as doubles too, by the smallest steps). NaN, or a tie at
        ``-inf`` out of order, is an error naming ``tag``, the query and the document.
        """
        raw = np.asarray(self.scores, dtype=np.float64)
        nan = np.flatnonzero(np.isnan(raw))
        if len(nan):
            raise _score_error(tag, self, ScoreProblem(int(nan[0]), "the score is NaN, which cannot be ranked",
                                                       "give every result a real-valued score"))
        lengths = self.lengths()
        query_of = np.repeat(np.arange(len(self.query_ids)), lengths)
        docs = self.doc_ids[self.doc_index]
        out_of_order = np.zeros(len(raw), dtype=bool)
        for reading in SCORE_READINGS:
            out_of_order |= trec_order(query_of, docs, comparison_keys(raw, reading)) != np.arange(len(raw))
        if not out_of_order.any():
            return raw.copy()
        lowered_query = np.zeros(len(self.query_ids), dtype=bool)
        lowered_query[query_of[out_of_order]] = True
        entries = np.flatnonzero(lowered_query[query_of])
        lowered = strictly_decreasing(raw[entries], np.concatenate([[0], np.cumsum(lengths[lowered_query])]))
        if isinstance(lowered, ScoreProblem):
            raise _score_error(tag, self, ScoreProblem(int(entries[lowered.entry]), lowered.problem, lowered.fix))
        written = raw.copy()
        written[entries] = lowered
        return written


def _score_error(tag: str, run: Run, problem: ScoreProblem) -> RetbenchError:
    block = int(np.searchsorted(run.offsets, problem.entry, side="right") - 1)
    return RetbenchError(f"run {tag!r}: query {run.query_ids[block]!r}, document "
                         f"{run.doc_ids[run.doc_index[problem.entry]]!r}: {problem.problem}. Fix: {problem.fix}")


def trec_scores(run: Run, tag: str = "run", queries: slice | None = None) -> np.ndarray:
    """The scores to write so that every evaluator, whatever its tie rule, ranks the run exactly as
    it is ordered: strictly decreasing within each query as single-precision floats, by the smallest
    change (:func:`~corpora.run_order.strictly_decreasing`); what a results folder's run files hold.
    A NaN score, or a ``-inf`` that would need a step below ``-inf``, is an error naming ``tag``, the
    query and the document. ``queries`` (a slice of the run's query positions, step 1): those
    queries' entries only, the same values (a query's written scores depend on its own alone).

    >>> run = Run.from_mapping({"q": [("a", 2.0), ("b", 2.0), ("c", 1.0)]})
    >>> [float(x) for x in trec_scores(run)] == [2.0, float(np.nextafter(np.float32(2), np.float32(0))), 1.0]
    True
    """
    first, last = (0, len(run.query_ids)) if queries is None else queries.indices(len(run.query_ids))[:2]
    start = int(run.offsets[first])
    written = strictly_decreasing(run.scores[start:int(run.offsets[last])], run.offsets[first:last + 1] - start)
    if isinstance(written, ScoreProblem):
        raise _score_error(tag, run, ScoreProblem(written.entry + start, written.problem, written.fix))
    return written


def run_from_table(column: Callable[[str], np.ndarray], columns: Sequence[object], owner: str,
                   order: RunOrder) -> Run:
    """The run of a table read a column at a time (``column(name)`` -> its values), in either
    convention of :data:`~corpora.frames.RUN_COLUMNS`; every problem an error naming ``owner`` and
    the row."""
    if order not in RUN_ORDERS:
        raise ValueError(f"order must be one of {RUN_ORDERS}, not {order!r}")
    query_name, doc_name, score_name = pick_columns(columns, RUN_COLUMNS, owner, "rankings")
    qids = id_column(column(query_name), query_name, owner)
    docs = id_column(column(doc_name), doc_name, owner)
    scores = score_column(column(score_name), score_name, owner)
    ordered = order_columns(qids, docs, scores, order)
    if isinstance(ordered, int):
        first = int(np.flatnonzero((qids == qids[ordered]) & (docs == docs[ordered]))[0])
        raise RetbenchError(f"{owner}: row {ordered}: document {docs[ordered]!r} is ranked twice for query "
                            f"{qids[ordered]!r} (first at row {first}). Fix: keep one row per (query, document)")
    return Run.from_ordered(docs, scores, ordered)


def _require_frame(frame: object, caller: str) -> None:
    if not (hasattr(frame, "columns") and hasattr(frame, "__getitem__")):
        raise RetbenchError(f"{caller}: got a {type(frame).__name__}, not a pandas DataFrame. "
                            "Fix: pass a DataFrame (pandas.DataFrame(...))")


def _import_ranx(caller: str) -> Any:
    try:
        import ranx
    except ImportError:
        raise RetbenchError(f"{caller} needs ranx, which is not installed. Fix: pip install \"retbench[ranx]\"") from None
    return ranx


# ----- run files ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFile:
    """A run file as read: the :class:`Run` and its run id (trec_eval's ``runid``: the tag of a TREC
    file's last line; a Parquet file's stored tag, else its name without the suffix)."""

    run: Run
    run_id: str

    @classmethod
    def read(cls, path: str | Path, order: RunOrder = "trec", trailing_fields: TrailingFields = "error") -> RunFile:
        """Read a run file in the format its suffix names (:func:`run_file_format`: ``.parquet`` is
        Parquet, ``.tsv`` MS MARCO's ``qid docid rank``, anything else TREC, as trec_eval reads any
        file name; a further ``.gz`` is gunzipped). ``order="trec"`` ranks each
        query like trec_eval 10 (score descending, ties by doc id descending, rank ignored);
        ``"trec9"`` like trec_eval 9.x and pytrec_eval (the same, scores compared as
        single-precision floats); ``"file"`` keeps the order of the lines or rows.
        ``trailing_fields`` is for TREC lines."""
        target = Path(path)
        if order not in RUN_ORDERS:
            raise ValueError(f"order must be one of {RUN_ORDERS}, not {order!r}")
        if trailing_fields not in TRAILING_FIELDS:
            raise ValueError(f"trailing_fields must be one of {TRAILING_FIELDS}, not {trailing_fields!r}")
        return run_file_format(target).read(target, order, trailing_fields)


@dataclass(frozen=True)
class RunFileFormat:
    """A run file format: the suffixes that name it, a reader ``read(path, order, trailing_fields)
    -> RunFile`` and a writer ``write(run, path, tag)``."""

    name: str
    suffixes: tuple[str, ...]
    read: Callable[[Path, RunOrder, TrailingFields], RunFile]
    write: Callable[[Run, Path, str], None]
    description: str


#: Run file formats by name, filled by the modules that read them (``corpora.trec_io``,
#: ``corpora.parquet``); :func:`run_file_format` picks one by suffix.
RUN_FILE_FORMATS: dict[str, RunFileFormat] = {}
#: The suffix of a gzipped file, read and written through gzip by every format.
GZIP_SUFFIX = ".gz"
#: The format of a file whose suffix no format claims, when reading: trec_eval's own files are named
#: ``results.test``, and ``bench evaluate`` has always read any name as TREC.
DEFAULT_RUN_FILE_FORMAT = "trec"


def register_run_file_format(fmt: RunFileFormat) -> RunFileFormat:
    """Add ``fmt``; a suffix another format claims already is a ``ValueError``."""
    for other in RUN_FILE_FORMATS.values():
        shared = set(other.suffixes) & set(fmt.suffixes)
        if shared and other.name != fmt.name:
            raise ValueError(f"run file suffix(es) {sorted(shared)} of {fmt.name!r} are taken by {other.name!r}")
    RUN_FILE_FORMATS[fmt.name] = fmt
    return fmt


def run_file_format(path: str | Path, *, writing: bool = False) -> RunFileFormat:
    """The format whose suffixes hold ``path``'s (case-insensitive). A name ending in ``.gz`` is
    gzipped: its format is the one of the suffix before (``run.tsv.gz``: ``tsv``; ``es.trec.gz``:
    ``trec``), else the one that claims ``.gz`` itself (TREC, as trec_eval's gzipped runs are named).
    Reading, an unclaimed suffix is :data:`DEFAULT_RUN_FILE_FORMAT`; writing, it is an error listing
    the suffixes known. (``tests/test_run_system.py`` holds the examples: the formats register
    themselves when ``corpora`` is imported.)
    """
    suffix = Path(path).suffix.lower()
    inner = Path(Path(path).stem).suffix.lower() if suffix == GZIP_SUFFIX else ""
    for wanted in (inner, suffix):
        for fmt in RUN_FILE_FORMATS.values():
            if wanted and wanted in fmt.suffixes:
                return fmt
    if not writing and DEFAULT_RUN_FILE_FORMAT in RUN_FILE_FORMATS:
        return RUN_FILE_FORMATS[DEFAULT_RUN_FILE_FORMAT]
    known = "; ".join(f"{', '.join(f.suffixes)} ({f.description})" for f in RUN_FILE_FORMATS.values())
    raise RetbenchError(f"{path}: no run file format has the suffix {suffix or '(none)'!r}. Known: {known}. "
                        "Fix: name the file with one of these suffixes")


def run_file_name(path: str | Path) -> str:
    """``path``'s file name without ``.gz`` and the run file format's suffix that names it: what a run
    file is called when nothing inside names it (a label, a run id): ``es`` for ``runs/es.trec``,
    ``run.dev`` for ``run.dev.tsv.gz``, ``bm25.run.7`` for ``bm25.run.7`` (no format claims ``.7``).
    """
    name = Path(path).name
    if name.lower().endswith(GZIP_SUFFIX):
        name = name[:-len(GZIP_SUFFIX)]
    suffix = Path(name).suffix.lower()
    if any(suffix in fmt.suffixes for fmt in RUN_FILE_FORMATS.values()):
        name = name[:-len(suffix)]
    return name
