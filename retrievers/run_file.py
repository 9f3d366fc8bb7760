"""A run you already have, as a system: ``run(PATH)`` in a spec, :meth:`RunSystem.of` in Python.

``run(es.trec)`` stands wherever a retriever does (``--systems bm25,run(es.trec)``,
``rrf(bm25,run(dense.parquet))``, ``weighted(bm25,run(es.trec),alpha=0.3)``); ``run(es.trec, name=prod)``
names it. The file is read by :meth:`corpora.run.RunFile.read` in the format its suffix names (TREC,
MS MARCO's ``qid docid rank`` TSV, Parquet; gzipped for ``.gz``), ranked as trec_eval 10 reads it
(``order="trec"``: score descending, scores compared as doubles, ties by doc id descending;
``"trec9"``: scores compared as floats; ``"file"``: the order of the lines). The path may hold
``{collection}``, replaced by the corpus's name when the system is fitted, so one spec serves a
suite (``run(runs/{collection}.trec)``); without it the file is read when the system is made, so a
mistake in it stops the comparison before anything is loaded.

The label is ``name`` when given, else the file's name without its format suffix (and ``.gz``):
``es`` for ``runs/es.trec.gz``; a file named like a retriever (``dense.parquet``) is labelled
``run-dense``, so the results never pass it off as that retriever.

Against the collection, when fitted and searched, every mismatch is said, never silently absorbed
(each message names the system, counts and quotes up to five ids):

* a document the corpus does not have: refused when the results naming such documents are more
  than :data:`~corpora.inspection.UNMATCHED_LIMIT` (5%) of the run's, the rule for unmatched
  judgments; fewer are skipped (the results below them move up a rank) with a warning (on a
  collection of judgments only, :mod:`corpora.judgments_only`, the runs' documents are the corpus's:
  :meth:`RunSystem.documents` gives them before it is made, so none is unknown);
* a query compared that the run does not rank: it scores 0 (as ``trec_eval -c`` counts it), warned
  with the count;
* a query of the run that is not compared (the collection lacks it, or it has no relevant
  judgment): ignored, warned;
* a ranking deeper than the comparison's depth (the ``k`` of ``search``): cut to its first ``k``, warned;
* a document twice in one query's ranking: refused, as trec_eval refuses it (a file's reader names
  the line; a run given in Python is checked here);
* a run that ranks no document of the corpus for any query compared, or none at all: refused.

Warnings go to the run context's channel (:meth:`~retrievers.context.RunContext.say`): the
comparison's warnings, printed and stored with the results. The manifest records, as the system's
parameters (:meth:`RunSystem.get_params`), the file's SHA-256, its format and the reading.

Inside ``weighted`` a run gives its scores for the documents it ranks and ``-inf`` (unscored) for
the rest (:meth:`RunSystem.score`): min-max runs over its own ranking, as ranx normalises a run.
``bench tune`` refuses a grid holding a run: it has no parameter to tune.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from corpora import Corpus, Queries, RetbenchError, Run
from corpora.inspection import UNMATCHED_LIMIT, quote_ids
from corpora.run import RunFile, run_file_format, run_file_name
from corpora.run_order import RUN_ORDERS
from corpora.wording import counted
from retrievers.base import Retriever, ScoreRetriever
from retrievers.ranking import doc_id_order

__all__ = ["COLLECTION_PLACEHOLDER", "READINGS", "RunSystem", "as_system"]

#: What a run path may hold for the collection's name (the corpus's ``name``), for suites.
COLLECTION_PLACEHOLDER = "{collection}"
#: How each ``order`` reads a run file, as the manifest records it.
READINGS: dict[str, str] = {
    "trec": "trec_eval 10: score descending, scores compared as doubles, ties by doc id descending",
    "trec9": "trec_eval 9.x: score descending, scores compared as single-precision floats, ties by doc id descending",
    "file": "the order of the file's lines, scores as written",
}
_LABEL_CHARACTERS = "letters, digits, '_', '.', '+' or '-'"


def _label_problem(label: str) -> bool:
    from retrievers.spec import _LABEL  # the system-name rule of specs (it names files and TREC tags)

    return not _LABEL.fullmatch(label)


class RunSystem(ScoreRetriever):
    """A ranking read from a run file (``path``) or given in Python (:meth:`of`), compared as a system.

    ``path``: the run file (``{collection}`` is replaced by the corpus's name at fit); ``name``: the
    system's label (default: the file's name without its suffix); ``order``: how the file is read
    (``trec``, ``trec9`` or ``file``, :data:`READINGS`). The module docstring lists what is checked
    against the collection and how each case is said.
    """

    name = "run"
    #: In a spec, ``run(PATH)``: the first argument in the parentheses is this parameter, a path
    #: (:func:`retrievers.spec.build`); quote it when it holds a comma, a parenthesis, '=' or a space.
    positional_parameter: ClassVar[str] = "path"

    def __init__(self, path: str | None = None, name: str | None = None, order: str = "trec"):
        if path is None or not str(path).strip():
            raise RetbenchError("run names no file. Fix: write run(PATH), e.g. run(runs/es.trec)")
        if order not in RUN_ORDERS:
            raise RetbenchError(f"run({path}): order {order!r} is not one of {', '.join(RUN_ORDERS)}. Fix: leave it "
                                "out for trec_eval 10's reading (order=trec)")
        self._setup(str(path), name, order, None, "")
        if COLLECTION_PLACEHOLDER not in self.path:
            self._read(Path(self.path))

    @classmethod
    def of(cls, ranking: object, name: str | None = None) -> RunSystem:
        """A system of a run given in Python: a :class:`corpora.Run`, a ranx ``Run`` (its ``name``
        is the default label) or a pandas DataFrame in PyTerrier's columns (converted by
        :meth:`corpora.Run.from_ranx` and :meth:`~corpora.Run.from_dataframe`, ranked like a TREC
        run file). Labelled ``name``, else the ranx run's name, else ``run``."""
        converted, source = _as_run(ranking)
        if converted is None:
            raise RetbenchError(f"a {type(ranking).__name__} is not a run. Fix: pass a corpora.Run, a ranx Run or "
                                "a DataFrame with columns qid, docno, score")
        if name is None and source == "ranx Run" and getattr(ranking, "name", None):
            name = str(ranking.name)
        system = Retriever.__new__(cls)
        system._setup(None, name, "trec", converted, source)
        return system

    def _setup(self, path: str | None, name: str | None, order: str, run: Run | None, source: str) -> None:
        self.path = path
        self.order = order
        self._name = name
        self._run = run
        self._source = source
        self._read_from: Path | None = None
        self._file_facts: dict[str, str] = {}
        if name is not None:
            if _label_problem(str(name)):
                raise RetbenchError(f"run name {name!r}: expected {_LABEL_CHARACTERS} (it names files and TREC run "
                                    "tags). Fix: write e.g. name=es")
            self.label = str(name)
        if run is not None:
            _check_duplicates(run, self._owner())

    # ----- reading -----------------------------------------------------------------------------

    def _read(self, path: Path) -> None:
        if self._read_from == path:
            return
        read = RunFile.read(path, self.order)  # type: ignore[arg-type]
        _check_duplicates(read.run, self._owner())  # the readers refuse them already; a plugin format might not
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        self._run, self._read_from = read.run, path
        self._file_facts = {"file": str(path), "sha256": digest.hexdigest(), "format": run_file_format(path).name,
                            "reading": READINGS[self.order]}

    def _owner(self) -> str:
        read = self._read_from if self._read_from is not None else self.path  # {collection} replaced, once read
        shown = f" ({read})" if read is not None else ""
        return f"run {self.label!r}{shown}"

    # ----- parameters and label ---------------------------------------------------------------

    def get_params(self) -> dict[str, Any]:
        """``path``, ``name`` and ``order``, and what the manifest records of the run as read: the
        file, its ``sha256``, ``format`` and ``reading`` (for a run given in Python: its ``source``)."""
        params: dict[str, Any] = {"path": self.path, "name": self._name, "order": self.order}
        if self._source:
            params["source"] = self._source
        return {**params, **self._file_facts}

    def non_default_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"path": self.path} if self.path is not None else {}
        if self._name is not None:
            params["name"] = self._name
        if self.order != "trec":
            params["order"] = self.order
        return params

    def default_label(self) -> str:
        """``name`` when given, else the file's name without its format suffix (``run-`` before it when
        it is a retriever's name), else ``run``."""
        if self.path is None:
            return "run"
        stem = run_file_name(self.path)
        from retrievers.registry import names

        label = f"run-{stem}" if stem in names() else stem
        if _label_problem(label):
            raise RetbenchError(f"run({self.path}): the file's name {stem!r} cannot name a system ({_LABEL_CHARACTERS}). "
                                f"Fix: name it, e.g. run({self.path}, name=mine)")
        return label

    def documents(self, collection: str) -> list[str]:
        """The ids of every document the run ranks, each once, its file read for ``collection``
        (``{collection}`` replaced): what a collection of judgments only takes as its documents
        (:func:`corpora.judgments_only.with_documents`)."""
        if self.path is not None:
            self._read(Path(self.path.replace(COLLECTION_PLACEHOLDER, collection)))
        run = self._run
        if run is None:
            return []
        return [str(d) for d in run.doc_ids[np.unique(run.doc_index)]]

    # ----- the seam ---------------------------------------------------------------------------

    def index_bytes(self) -> int | None:
        """None: a stored run has no index of its own (what built it is not known here)."""
        return None

    def fit(self, corpus: Corpus) -> RunSystem:
        """Read the file (its ``{collection}`` replaced by ``corpus.name``) and match the run's
        documents with the corpus's: refused above :data:`~corpora.inspection.UNMATCHED_LIMIT` of
        the results, else skipped with a warning; a run with no result at all is refused."""
        Retriever.fit(self, corpus)
        self._tie_rank = doc_id_order(corpus.ids)
        if self.path is not None:
            self._read(Path(self.path.replace(COLLECTION_PLACEHOLDER, corpus.name)))
        run = self._run
        if run is None or not len(run.doc_index):
            raise RetbenchError(f"{self._owner()} holds no results. Fix: give the run at least one ranked document")
        import pandas as pd  # its hash join: a run names millions of documents

        # Each distinct doc id is looked up once, then spread to the results (a document recurs across queries).
        positions = pd.Index(corpus.id_array()).get_indexer(run.doc_ids.astype(object))[run.doc_index]
        unknown = positions < 0
        if unknown.any():
            missing = list(dict.fromkeys(str(d) for d in run.doc_ids[run.doc_index[unknown]]))
            share = f"{int(unknown.sum()):,} of {counted(len(positions), 'result', spec=',')} " \
                    f"({100 * unknown.sum() / len(positions):.1f}%)"
            documents = f"{counted(len(missing), 'document', spec=',')} the corpus {corpus.name!r} does not have"
            if unknown.sum() > UNMATCHED_LIMIT * len(positions):
                raise RetbenchError(
                    f"{self._owner()}: {share} name {documents} ({quote_ids(missing)}), more than the "
                    f"{UNMATCHED_LIMIT:.0%} that is skipped with a warning. Fix: compare the run on the collection "
                    "it was made for (the same doc ids)")
            self.run_context.say(f"{self._owner()}: skipped {share} naming {documents} ({quote_ids(missing)}); "
                                 "the results below them move up a rank")
        self._positions = positions
        self._where = {q: j for j, q in enumerate(run.query_ids)}  # query id -> its ranking in the run
        return self

    def _lookup(self, queries: Queries, k: int | None) -> tuple[Run, list[str], int, int]:
        """The run on the corpus for ``queries``, each ranking cut to ``k`` (None: whole); and the
        queries it ranks nothing for, how many rankings were cut and the longest of them. Says nothing."""
        run, corpus = self._run, self.corpus
        if run is None:
            raise RetbenchError(f"{self._owner()} is searched before it is fitted. Fix: fit it on the corpus first")
        offsets = [0]
        pieces: list[np.ndarray] = []
        score_pieces: list[np.ndarray] = []
        unranked: list[str] = []
        cut, longest = 0, 0
        for q in queries.ids:
            j = self._where.get(q)
            if j is not None:
                entries = slice(int(run.offsets[j]), int(run.offsets[j + 1]))
                found = self._positions[entries]
                keep = found >= 0
                found, values = found[keep], run.scores[entries][keep]
            else:
                found, values = np.empty(0, dtype=np.int64), np.empty(0)
            if not len(found):
                unranked.append(q)
            if k is not None and len(found) > k:
                cut, longest = cut + 1, max(longest, len(found))
                found, values = found[:k], values[:k]
            pieces.append(found)
            score_pieces.append(values)
            offsets.append(offsets[-1] + len(found))
        ranked = Run(queries.ids, corpus.id_array(), np.array(offsets), np.concatenate(pieces),
                     np.concatenate(score_pieces))
        return ranked, unranked, cut, longest

    def _rankings(self, queries: Queries, k: int | None) -> Run:
        """:meth:`_lookup`, with every mismatch with the compared ``queries`` said (and a run that
        ranks nothing for them refused): the whole comparison's queries, never a batch of them."""
        run, (ranked, unranked, cut, longest) = self._run, self._lookup(queries, k)
        asked = set(queries.ids)
        not_asked = [q for q in run.query_ids if q not in asked]
        if not_asked:
            self.run_context.say(
                f"{self._owner()}: {counted(len(not_asked), 'query', spec=',')} of the run "
                f"{'is' if len(not_asked) == 1 else 'are'} not among the {counted(len(queries), 'query', spec=',')} "
                f"compared (the collection lacks {'it' if len(not_asked) == 1 else 'them'}, or "
                f"{'it has' if len(not_asked) == 1 else 'they have'} no relevant judgment), ignored: "
                f"{quote_ids(not_asked)}")
        if len(unranked) == len(queries):
            raise RetbenchError(f"{self._owner()} ranks no document of the corpus for any of the "
                                f"{counted(len(queries), 'query', spec=',')} compared ({quote_ids(list(queries.ids))}). "
                                "Fix: check that the run was made for this collection's queries and documents")
        if unranked:
            self.run_context.say(f"{self._owner()} ranks no document for {counted(len(unranked), 'query', spec=',')} "
                                 f"of the {len(queries):,} compared, which score 0 (as trec_eval -c counts them): "
                                 f"{quote_ids(unranked)}")
        if cut:
            self.run_context.say(f"{self._owner()} ranks more than the depth of {k} results in "
                                 f"{counted(cut, 'query', spec=',')} (up to {longest:,}); each ranking was cut to "
                                 f"its first {k}")
        return ranked

    def search(self, queries: Queries, k: int) -> Run:
        """The run's rankings of ``queries`` on the corpus, in the run's order, cut to ``k``."""
        return self._rankings(queries, k)

    def check_queries(self, queries: Queries) -> None:
        """Say (or refuse) how the run meets the compared ``queries``, as :meth:`search` does, for a
        fusion that reads its scores: ``weighted`` scores a batch of the queries at a time, and a
        batch is not the comparison's queries (:meth:`score` says nothing)."""
        self._rankings(queries, None)

    def score(self, queries: Queries) -> np.ndarray:
        """The run's scores of the documents it ranks for each query (its whole ranking), ``-inf``
        (unscored) for every other document of the corpus: what ``weighted`` normalises. Says
        nothing: :meth:`check_queries` says it once for the whole comparison."""
        run = self._lookup(queries, None)[0]
        matrix = np.full((len(queries), len(self.corpus)), -np.inf)
        rows = np.repeat(np.arange(len(queries)), run.lengths())
        matrix[rows, run.doc_index] = run.scores
        return matrix


def _run_kind(ranking: object) -> str:
    """What kind of run ``ranking`` is (``corpora.Run``, ``DataFrame``, ``ranx Run``), or ``""``."""
    if isinstance(ranking, Run):
        return "corpora.Run"
    if hasattr(ranking, "columns") and hasattr(ranking, "__getitem__"):
        return "DataFrame"
    if type(ranking).__module__.split(".")[0] == "ranx" and hasattr(ranking, "to_dict"):
        return "ranx Run"
    return ""


def _as_run(ranking: object) -> tuple[Run | None, str]:
    """(the run, what it was) of a corpora Run, a ranx Run or a DataFrame; (None, "") otherwise."""
    kind = _run_kind(ranking)
    if kind == "DataFrame":
        return Run.from_dataframe(ranking), kind  # type: ignore[arg-type]
    if kind == "ranx Run":
        return Run.from_ranx(ranking), kind
    return (ranking if kind else None), kind  # type: ignore[return-value]


def as_system(item: object) -> Retriever | None:
    """``item`` as a system: itself when it is a retriever, a :class:`RunSystem` when it is a run
    (:meth:`RunSystem.of`), None for anything else (the caller says what it expected)."""
    if isinstance(item, Retriever):
        return item
    return RunSystem.of(item) if _run_kind(item) else None


def _check_duplicates(run: Run, owner: str) -> None:
    """Refuse a document ranked twice for one query, as trec_eval refuses it."""
    if not len(run.doc_index):
        return
    query_of = np.repeat(np.arange(len(run.query_ids)), run.lengths())
    hashes = run.doc_hashes[run.doc_index]
    order = np.lexsort((hashes, query_of))
    same = (query_of[order][1:] == query_of[order][:-1]) & (hashes[order][1:] == hashes[order][:-1])
    for at in np.flatnonzero(same):  # equal hashes: compare the ids themselves
        first, second = int(order[at]), int(order[at + 1])
        doc = str(run.doc_ids[run.doc_index[first]])
        if doc == str(run.doc_ids[run.doc_index[second]]):
            raise RetbenchError(f"{owner}: document {doc!r} is ranked twice for query "
                                f"{run.query_ids[int(query_of[first])]!r}, which trec_eval refuses. Fix: keep one "
                                "result per (query, document)")
