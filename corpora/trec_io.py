"""TREC run files and TREC/BEIR qrels files, read and written: the one place retbench does file I/O
for rankings and judgments (over 400 lines: one family of formats, kept together on purpose).

Formats (one judgment or result per line):

* qrels: ``qid iter docid grade`` (TREC, whitespace separated) — ``iter`` is ignored; ``grade`` is
  an integer (:func:`~corpora.number_grammar.parse_grade`), negative meaning judged but never
  relevant (trec_eval: "in pool, unjudged"). BEIR's ``query-id<TAB>corpus-id<TAB>score`` (header
  line optional) is read too. How strictly is a :class:`QrelsRules`: the default is trec_eval's (one
  layout for the whole file, exactly 4 or 3 fields); the collection loaders relax it (3 or 4 fields
  per line, a header line, comma-separated exports). Under any rules a pair judged twice follows
  :class:`QrelsBuilder`: the same grade again counts once, with a warning; another grade is an error.
* run: ``qid Q0 docid rank score tag`` — exactly six fields (a doc id with a space would silently
  shift the score column; trec_eval's habit of ignoring fields after ``tag`` is available with
  ``trailing_fields="ignore"``). ``Q0`` is ignored, and so is ``rank``: a ranking is ordered like
  trec_eval, by ``score`` descending with ties broken by doc id *descending* in byte order
  (``strcmp``), unless ``order="file"`` keeps the order of the lines. Scores are compared as
  doubles, as trec_eval 10 reads them; ``order="trec9"`` compares them as single-precision floats,
  as trec_eval 9.x and pytrec_eval do (two scores equal as floats are a tie there, however they
  differ as doubles; the run keeps the doubles either way). trec_eval's ``runid`` is the ``tag``
  of the last line.

Scores and grades are read by :mod:`corpora.number_grammar`'s one grammar, on every path below:
exactly as trec_eval's ``atof``/``atol`` read them, or refused with the file and line (``1_000``,
``0x10``, a grade ``1e3``).

Both: a line whose first character is ``#`` is a comment (a ``#`` anywhere else belongs to its
token: MS MARCO v2.1 ids contain one); blank lines are skipped; ids are strings, never numbers; a
``.gz`` file is read through gzip. Files are UTF-8 (a byte order mark and ``\\r\\n`` line ends are
fine); a line over :data:`~corpora.input_files.MAX_JUDGMENT_LINE` (1 MiB), a NUL byte, a byte that is
not UTF-8, a folder and a device are errors naming the file (and line); a pipe is read like a file
(:func:`~corpora.input_files.read_input_bytes`).

Writing (:func:`format_run`) makes the scores strictly decreasing inside each query, as floats (so
as doubles too), by the smallest change that keeps the run's order (:func:`trec_scores`), so that
trec_eval 10 and 9.x, pytrec_eval and :func:`read_run` rank the written file exactly as the run was ranked;
:func:`format_raw_scores` keeps the scores as they were. :meth:`Run.write <corpora.Run.write>` (the
TREC format this module registers in :data:`corpora.run.RUN_FILE_FORMATS`) changes only the queries
that need it (:meth:`~corpora.Run.file_scores`), so a run read from a file is written back exactly.

Reading trec_eval's files is a fast path for well-formed files: a run file is split with array
operations (:mod:`corpora.field_columns`, ASCII files), anything else goes through pandas' C
tokenizer (every field as text: its number parsing reads ``True`` as 1 and a grade ``1e3`` as
1000) and :mod:`corpora.number_grammar`'s array readers; when either meets anything unusual it
hands over to a line-by-line parser whose only extra job is to name the file and line of the first
problem. The run reader hands the
doc-id hashes it computes (to find repeated lines) to the :class:`~corpora.Run`, where the
evaluator's join reuses them. pandas is imported on first use, so that ``import corpora`` stays
light.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

import numpy as np

from corpora.errors import InputFileError, RetbenchError
from corpora.field_columns import split_fields
from corpora.model import Qrels, normalise_numeric_id
from corpora.input_files import MAX_JUDGMENT_LINE, decode_utf8, read_input_bytes, refuse_nul_bytes
from corpora.output_files import check_output, write_output
from corpora.number_grammar import grade_array, looks_like_number, parse_grade, parse_score, score_array
from corpora.readers import id_problem
from corpora.run import (TRAILING_FIELDS, Run, RunFile, RunFileFormat, TrailingFields, register_run_file_format,
                         trec_scores)
from corpora.run_order import RUN_ORDERS, RunOrder, order_columns

if TYPE_CHECKING:
    import pandas as pd

QrelsFormat = Literal["auto", "trec", "beir"]
#: The layouts ``bench evaluate --qrels-format`` offers (trec_eval's rules, one layout per file).
QRELS_FORMATS: tuple[str, ...] = ("auto", "trec", "beir")

_COMMENT_LINES = re.compile(rb"(?m)^#[^\n]*(?:\n|\Z)")
_RUN_FIELDS = "qid Q0 docid rank score tag"
_QRELS_FIELDS = "qid iter docid grade"
_BEIR_FIELDS = "query-id<TAB>corpus-id<TAB>score"
_BEIR_HEADER_FIRST = ("query-id", "query_id", "qid")
_PADDED_FIELD = re.compile(rb"(?m)^[ ]|[ ]\r?$|[ ]\t|\t[ ]")


# ----- reading bytes and lines -----------------------------------------------------------------


def _read_bytes(path: Path, what: str) -> bytes:
    """A qrels or run file's bytes (``what``: ``"a qrels file"`` or ``"a run file"``), gunzipped when
    the name ends in ``.gz``, within :func:`~corpora.input_files.read_input_bytes`'s bounds (lines of
    at most :data:`~corpora.input_files.MAX_JUDGMENT_LINE`); a NUL byte is an error at its line."""
    raw = read_input_bytes(path, max_line=MAX_JUDGMENT_LINE, what=what, gzipped=path.suffix.lower() == ".gz")
    refuse_nul_bytes(path, raw)
    return raw


def _data_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of every line that is neither a comment nor blank."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("#") or not line.strip():
            continue
        yield number, line


def _field_count(raw: bytes, sep: str) -> int:
    """How many fields the lines of ``raw`` hold together: tab-separated, or whitespace-separated
    (every byte up to the space counts as a separator here, a superset of the tokenizer's)."""
    if sep == "\t":
        return raw.count(b"\t") + sum(1 for line in raw.split(b"\n") if line.strip())
    is_separator = np.frombuffer(raw, dtype=np.uint8) <= 32
    if not len(is_separator):
        return 0
    return int(np.count_nonzero(~is_separator[1:] & is_separator[:-1])) + int(not is_separator[0])


def _without_comments(raw: bytes) -> bytes:
    """``raw`` without its UTF-8 byte order mark and its comment lines."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if raw.startswith(b"#") or b"\n#" in raw:
        raw = _COMMENT_LINES.sub(b"", raw)
    return raw


def _fast_table(raw: bytes, n_columns: int, dtypes: dict[int, object], usecols: list[int] | None = None,
                sep: str = r"\s+") -> pd.DataFrame | None:
    """The file as a frame of exactly ``n_columns`` separated columns, or None when the fast
    tokenizer cannot vouch for it (the careful parser then decides what is wrong).

    The tokenizer leaves the last column of a short line empty (checked here) and silently drops
    the extra fields of a long line that is not the first, so the fields of the whole file are
    counted too: ``n_columns`` per line, or the careful parser looks.
    """
    import pandas as pd

    raw = _without_comments(raw)
    try:
        frame = pd.read_csv(
            io.BytesIO(raw), sep=sep, header=None, names=list(range(n_columns)), usecols=usecols,
            dtype=dtypes, na_filter=False, quoting=csv.QUOTE_NONE, engine="c", encoding="utf-8",
        )
    except (ValueError, IndexError, TypeError, OverflowError, pd.errors.ParserError, UnicodeDecodeError):
        return None  # whatever the fast path cannot read, the careful parser explains
    if len(frame.columns) != len(usecols or range(n_columns)) or (len(frame) and (frame[n_columns - 1] == "").any()):
        return None
    if _field_count(raw, sep) != n_columns * len(frame):
        return None
    return frame


# ----- runs -----------------------------------------------------------------------------------


def _field_count_error(path: Path, number: int, fields: list[str]) -> InputFileError:
    if len(fields) > 6:
        return InputFileError(
            path, f"expected 6 whitespace-separated fields `{_RUN_FIELDS}`, got {len(fields)} (a doc id or tag with "
                  "a space shifts the score column)", line=number,
            fix="write ids and tags without whitespace, or, if the fields after the tag are comments as "
                "trec_eval allows, pass `trailing_fields=\"ignore\"`")
    return InputFileError(path, f"expected 6 whitespace-separated fields `{_RUN_FIELDS}`, got {len(fields)}",
                          line=number, fix="write one result per line in TREC run format")


def _careful_run(path: Path, text: str, trailing_fields: TrailingFields
                 ) -> tuple[list[str], list[str], np.ndarray, str]:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    tag = ""
    seen: dict[tuple[str, str], int] = {}
    for number, line in _data_lines(text):
        fields = line.split()
        if len(fields) < 6 or (len(fields) > 6 and trailing_fields == "error"):
            raise _field_count_error(path, number, fields)
        qid, doc, tag = fields[0], fields[2], fields[5]
        score = parse_score(path, number, fields[4])
        first = seen.setdefault((qid, doc), number)
        if first != number:
            raise InputFileError(path, f"document {doc!r} is ranked twice for query {qid!r} (first at line {first})",
                                 line=number, fix="keep one line per (query, document)")
        qids.append(qid)
        docs.append(doc)
        scores.append(score)
    return qids, docs, np.asarray(scores, dtype=np.float64), tag


def _run_or_duplicate(qids: np.ndarray, docs: np.ndarray, scores: np.ndarray, order: RunOrder) -> Run | int:
    """The :class:`Run` of parallel columns, or the index of the first (query, doc) pair repeated."""
    ordered = order_columns(qids, docs, scores, order)
    return ordered if isinstance(ordered, int) else Run.from_ordered(docs, scores, ordered)


def run_from_arrays(query_ids: Iterable[str], doc_ids: Iterable[str], scores: Iterable[float],
                    order: RunOrder = "trec") -> Run:
    """A :class:`Run` from parallel columns (one row per result), ordered like :func:`read_run`.

    >>> run = run_from_arrays(["q1", "q1", "q1"], ["a", "c", "b"], [1.0, 2.0, 2.0])
    >>> run.ranking("q1")
    ['c', 'b', 'a']
    """
    return Run.from_columns(query_ids, doc_ids, scores, order)


def _fast_run(raw: bytes, trailing_fields: TrailingFields, order: RunOrder) -> RunFile | None:
    """The fast path of :func:`read_run_file`, or None when the careful parser must look."""
    if trailing_fields == "ignore":
        return None  # rare (trec_eval's own tests): the careful parser drops what follows the tag
    fields = split_fields(raw, 6, keep=(0, 2, 4, 5))
    if fields is None:  # comments or a byte order mark are rare: look for them only now
        stripped = _without_comments(raw)
        fields = None if stripped is raw else split_fields(stripped, 6, keep=(0, 2, 4, 5))
    if fields is not None and not fields.text_fits(0, 2):
        fields = None  # one very long id would make every row as wide: pandas' strings cost less
    if fields is not None:
        scores = fields.decimals(4)
        if scores is None:  # the grammar refuses NaN, so a NaN score is None here too
            return None
        run = _run_or_duplicate(fields.text(0), fields.text(2), scores, order)
        return None if isinstance(run, int) else RunFile(run, fields.last(5))
    frame = _fast_table(raw, 6, {0: object, 2: object, 4: object, 5: object}, usecols=[0, 2, 4, 5])
    scores = score_array(frame[4].to_numpy(dtype=object)) if frame is not None and len(frame) else None
    if frame is None or scores is None:
        return None
    run = _run_or_duplicate(frame[0].to_numpy(dtype=object), frame[2].to_numpy(dtype=object), scores, order)
    return None if isinstance(run, int) else RunFile(run, str(frame[5].iloc[-1]))


def run_from_bytes(raw: bytes, trailing_fields: TrailingFields = "error", order: RunOrder = "trec") -> RunFile | None:
    """The run of a TREC run file's bytes as :func:`read_run_file` reads them on its fast path, or None
    where only the careful reader can say what is wrong (or read the file): a piece of a file read a
    piece at a time (:mod:`corpora.run_pieces`) goes through here."""
    return _fast_run(raw, trailing_fields, order)


def read_run_file(path: str | Path, order: RunOrder = "trec", trailing_fields: TrailingFields = "error") -> RunFile:
    """Read a TREC run file: its :class:`~corpora.Run` (queries in order of first appearance) and
    trec_eval's ``runid``, the tag of its last line.

    ``order="trec"`` ranks each query like trec_eval 10 (score descending, ties by doc id descending,
    rank column ignored); ``"trec9"`` like trec_eval 9.x and pytrec_eval (scores compared as
    single-precision floats); ``order="file"`` keeps the order of the lines. A line without exactly six
    fields (``trailing_fields="ignore"``: fewer than six), a score that is not a number, a (query,
    document) pair ranked twice and a file without any result are :class:`~corpora.InputFileError`
    naming the file (and line).
    """
    path = Path(path)
    if order not in RUN_ORDERS:
        raise ValueError(f"order must be one of {RUN_ORDERS}, not {order!r}")
    if trailing_fields not in TRAILING_FIELDS:
        raise ValueError(f"trailing_fields must be one of {TRAILING_FIELDS}, not {trailing_fields!r}")
    raw = _read_bytes(path, "a run file")
    fast = _fast_run(raw, trailing_fields, order)
    if fast is not None:
        return fast
    qid_list, doc_list, scores, tag = _careful_run(path, decode_utf8(path, raw), trailing_fields)
    if not qid_list:
        raise InputFileError(path, "the run holds no results (the file is empty or only comments)",
                             fix=f"write one result per line as `{_RUN_FIELDS}`")
    run = _run_or_duplicate(np.asarray(qid_list, dtype=object), np.asarray(doc_list, dtype=object), scores, order)
    if isinstance(run, int):  # the careful parser names duplicates first; this cannot happen
        raise InputFileError(path, "a (query, document) pair is ranked twice")
    return RunFile(run, tag)


def read_run(path: str | Path, order: RunOrder = "trec", trailing_fields: TrailingFields = "error") -> Run:
    """Read a TREC run file into a :class:`~corpora.Run`; see :func:`read_run_file`."""
    return read_run_file(path, order, trailing_fields).run


# ----- writing runs ---------------------------------------------------------------------------

def _check_writable_ids(ids: Sequence[str], what: str, owner: str) -> None:
    """Ids a TREC file can hold (:func:`~corpora.readers.id_problem`, the loaders' rule): non-empty,
    no whitespace (it separates the fields) or control character; a query id must not start with
    ``#`` either (the line would read as a comment). Checked on the joined ids first: one regular
    expression over a million ids instead of a million."""
    starts_a_line = what == "query"
    if all(ids) and (not ids or id_problem("".join(ids)) is None) and \
            not (starts_a_line and any(i.startswith("#") for i in ids)):
        return
    for identifier in ids:
        problem = id_problem(identifier, starts_a_line=starts_a_line)
        if problem is not None:
            fix = "drop the leading '#'" if problem.startswith("starts with") else \
                f"give every {what} an id without whitespace or control characters"
            raise RetbenchError(f"{owner}: {what} id {identifier!r} cannot be written to a TREC file (it {problem}). "
                                f"Fix: {fix}")


#: Run entries (lines) formatted at a time by :func:`run_and_raw_score_pieces`: a writer holds the
#: lines of one block, never those of the whole run.
PIECE_ENTRIES = 1 << 15


def _check_run_ids(run: Run, owner: str) -> None:
    """The run's query ids and the doc ids it uses, checked for what a TREC line can hold."""
    used = np.zeros(len(run.doc_ids), dtype=bool)
    used[run.doc_index] = True
    _check_writable_ids([str(q) for q in run.query_ids], "query", owner)
    _check_writable_ids([str(d) for d in run.doc_ids[used]], "document", owner)


def _rank_texts(run: Run) -> np.ndarray:
    """``"1"``, ``"2"``, ... up to the run's longest ranking (an object array: index by rank - 1)."""
    lengths = run.lengths()
    longest = int(lengths.max()) if len(lengths) else 0
    return np.array([str(r) for r in range(1, longest + 1)], dtype=object)


def _block_columns(run: Run, start: int, stop: int, query_ids: np.ndarray,
                   rank_text: np.ndarray) -> tuple[list[str], list[str], list[str]]:
    """Query id, doc id and 1-based rank, as strings, of the run's entries ``start:stop`` in its
    order (``query_ids``: the run's as an object array; ``rank_text``: :func:`_rank_texts`)."""
    entries = np.arange(start, stop)
    owners = np.searchsorted(run.offsets, entries, side="right") - 1  # an empty query's offset repeats the next's
    return (query_ids[owners].tolist(), run.doc_ids[run.doc_index[start:stop]].tolist(),
            rank_text[entries - run.offsets[owners]].tolist())


def _run_columns(run: Run, owner: str) -> tuple[list[str], list[str], list[str]]:
    """Per entry, in the run's order: query id, doc id and 1-based rank, as strings (the ids
    checked for what a TREC line can hold)."""
    _check_run_ids(run, owner)
    return _block_columns(run, 0, len(run.doc_index), np.asarray(run.query_ids, dtype=object), _rank_texts(run))


def _join_lines(lines: list[str]) -> str:
    return "\n".join(lines) + ("\n" if lines else "")


def _check_tag(tag: str) -> None:
    if not tag or re.search(r"\s", tag):
        raise RetbenchError(f"run tag {tag!r} cannot be written to a TREC file. Fix: use a tag without spaces")


def format_run(run: Run, tag: str) -> str:
    """TREC run text: ``qid Q0 docid rank score tag``, ranks from 1 in the run's order.

    Scores are :func:`trec_scores` (strictly decreasing inside each query, so the order survives
    trec_eval's re-sort), written in full (``repr``) so that reading the file back gives the same
    doubles. Ids and the tag must hold no whitespace (a :class:`~corpora.RetbenchError` otherwise).
    """
    return _format_run(run, tag, with_raw_scores=False)[0]


def format_raw_scores(run: Run, owner: str = "run") -> str:
    """The scores as the retriever gave them, one line per run-file line, in the same order:
    ``query_id<TAB>doc_id<TAB>rank<TAB>score`` after a header line (``repr``, exact)."""
    queries, docs, ranks = _run_columns(run, owner)
    return _raw_scores_text(queries, docs, ranks, list(map(repr, np.asarray(run.scores, dtype=np.float64).tolist())))


def format_run_and_raw_scores(run: Run, tag: str) -> tuple[str, str]:
    """:func:`format_run` and :func:`format_raw_scores` at once, sharing their columns and the
    text of every score the writer kept (what a results folder writes per system)."""
    trec, raw = _format_run(run, tag, with_raw_scores=True)
    return trec, raw or ""


def run_and_raw_score_pieces(run: Run, tag: str, entries: int = PIECE_ENTRIES) -> Iterator[tuple[str, str]]:
    """:func:`format_run_and_raw_scores` in pieces, so a writer never holds a whole run's text (nor
    its written scores): pairs (run-file text, raw-scores text) of consecutive blocks of whole
    queries, at most ``entries`` lines each (a longer query alone), whose concatenations are those
    two texts, byte for byte, with the same errors. The tag, the ids and NaN scores are checked
    before the first piece."""
    for trec, raw in _run_pieces(run, tag, True, False, entries):
        yield trec, raw or ""


_RAW_SCORES_HEADER = "query_id\tdoc_id\trank\tscore"


def _raw_score_lines(queries: list[str], docs: list[str], ranks: list[str], scores: list[str]) -> list[str]:
    return [f"{q}\t{d}\t{r}\t{s}" for q, d, r, s in zip(queries, docs, ranks, scores)]


def _raw_scores_text(queries: list[str], docs: list[str], ranks: list[str], scores: list[str]) -> str:
    return _join_lines([_RAW_SCORES_HEADER, *_raw_score_lines(queries, docs, ranks, scores)])


def _format_run(run: Run, tag: str, with_raw_scores: bool, keep_ordered_scores: bool = False) -> tuple[str, str | None]:
    trec_pieces, raw_pieces = [], []
    for trec, raw in _run_pieces(run, tag, with_raw_scores, keep_ordered_scores, PIECE_ENTRIES):
        trec_pieces.append(trec)
        raw_pieces.append(raw)
    return "".join(trec_pieces), "".join(raw_pieces) if with_raw_scores else None  # type: ignore[arg-type]


def _run_pieces(run: Run, tag: str, with_raw_scores: bool, keep_ordered_scores: bool,
                entries: int) -> Iterator[tuple[str, str | None]]:
    """The run file's text (and the raw scores', else None) in blocks of whole queries, at most
    ``entries`` lines each (a longer query alone): the written scores (:func:`~corpora.run.trec_scores`
    of the block's queries, or with ``keep_ordered_scores`` :meth:`~corpora.Run.file_scores` of the
    whole run) and the raw scores' text, reusing that of every score the writer kept. A NaN score is
    an error before any text, as the whole run's check makes it; a ``-inf`` that no score can follow,
    at its block."""
    if entries < 1:
        raise ValueError(f"entries must be >= 1, not {entries!r}")
    _check_tag(tag)
    _check_run_ids(run, f"run {tag!r}")
    raw = np.asarray(run.scores, dtype=np.float64)
    whole = run.file_scores(tag) if keep_ordered_scores else None
    if whole is None and np.isnan(raw).any():
        trec_scores(run, tag)  # raises, naming the run's first NaN
    query_ids, rank_text = np.asarray(run.query_ids, dtype=object), _rank_texts(run)
    offsets = run.offsets
    header = [_RAW_SCORES_HEADER]  # before the raw scores' first line
    first = 0
    while first < len(query_ids):
        last = max(first + 1, int(np.searchsorted(offsets, offsets[first] + entries, side="right")) - 1)
        start, stop = int(offsets[first]), int(offsets[last])
        block = slice(first, last)
        first = last
        if start == stop:
            continue
        queries, docs, ranks = _block_columns(run, start, stop, query_ids, rank_text)
        kept = whole[start:stop] if whole is not None else trec_scores(run, tag, block)
        written_text = list(map(repr, kept.tolist()))
        trec = _join_lines([f"{q} Q0 {d} {r} {s} {tag}" for q, d, r, s in zip(queries, docs, ranks, written_text)])
        if not with_raw_scores:
            yield trec, None
            continue
        raw_text = written_text  # the writer keeps most scores: reuse their text
        for entry in np.flatnonzero(kept != raw[start:stop]).tolist():
            raw_text[entry] = repr(float(raw[start + entry]))
        lines = _raw_score_lines(queries, docs, ranks, raw_text)
        yield trec, _join_lines([*header, *lines])
        header = []
    if header and not len(run.doc_index):  # no line at all: an empty run file, the raw scores' header alone
        yield "", (_join_lines(header) if with_raw_scores else None)


def write_run(run: Run, target: str | Path | IO[str], tag: str) -> None:
    """Write ``run`` in TREC run format (:func:`format_run`) to a path (through
    :func:`corpora.output_files.write_output`) or an open text stream."""
    _write(format_run(run, tag), target, "run file")


def _write_run_file(run: Run, path: Path, tag: str) -> None:
    """:meth:`Run.write`'s TREC writer: the run's :meth:`~corpora.Run.file_scores` (exact wherever
    trec_eval's order rebuilds the run from them), gzipped for a ``.gz`` name; written by
    :func:`corpora.output_files.write_output` (atomically, never over a device or into a results
    folder)."""
    check_output(path, "run file")  # before the formatting: a wrong path costs nothing
    text = _format_run(run, tag, with_raw_scores=False, keep_ordered_scores=True)[0].encode("utf-8")
    write_output(path, gzip.compress(text, mtime=0) if path.suffix.lower() == ".gz" else text, "run file")


register_run_file_format(RunFileFormat(
    "trec", (".trec", ".txt", ".run", ".gz"), read_run_file, _write_run_file,
    "TREC run lines `qid Q0 docid rank score tag`, gzipped when the name ends in .gz"))


# ----- qrels ----------------------------------------------------------------------------------

QrelsLayout = Literal["auto", "trec", "beir", "any"]
Separator = Literal["whitespace", "tab", "comma"]


@dataclass(frozen=True)
class QrelsRules:
    """How strictly :func:`read_qrels_file` reads a qrels file. The defaults are trec_eval's.

    ``layout``
        ``"trec"``: ``qid iter docid grade``, 4 fields; ``"beir"``: ``query-id corpus-id score``,
        3 fields; ``"auto"``: the first judgment line decides which, and every later line must
        follow it (a first line that is neither is an error); ``"any"``: each line on its own, 4
        fields read as TREC and 3 as BEIR (what the collection loaders accept).
    ``separator``
        ``"whitespace"``: any run of whitespace; ``"tab"``: tabs when the line holds one, else
        whitespace, every field stripped (BEIR's TSV, whose ids may hold spaces); ``"comma"``:
        commas, every field stripped (a CSV export). ``None``: the layout's own (whitespace for
        TREC, tab for BEIR and ``"any"``).
    ``header``
        Which first judgment line is a header and skipped: ``"named"``, BEIR's three column names
        (``query-id``, ``query_id`` or ``qid`` first; never in the TREC layout); ``"non-numeric"``,
        any line whose grade field is not written as a number.
    ``normalise_query_ids``
        Strip the zero padding of all-digit query ids (:func:`~corpora.model.normalise_numeric_id`),
        for collections whose topic files pad numbers and whose qrels do not.

    Whatever the rules: ``#`` in column 0 starts a comment, blank lines are skipped, grades are
    :func:`~corpora.number_grammar.parse_grade`'s integers, a pair judged twice follows
    :class:`QrelsBuilder`'s one rule, empty ids and a file without judgments are errors, and every
    error names the file and line.
    """

    layout: QrelsLayout = "auto"
    separator: Separator | None = None
    header: Literal["named", "non-numeric"] = "named"
    normalise_query_ids: bool = False

    def __post_init__(self) -> None:
        for name, value, allowed in (("layout", self.layout, ("auto", "trec", "beir", "any")),
                                     ("separator", self.separator, (None, "whitespace", "tab", "comma")),
                                     ("header", self.header, ("named", "non-numeric"))):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, not {value!r}")

    def split(self, line: str, layout: str) -> list[str]:
        """The fields of one line, for ``layout`` (``"trec"``, ``"beir"`` or ``"any"``)."""
        separator = self.separator or ("whitespace" if layout == "trec" else "tab")
        if separator == "comma":
            return [field.strip() for field in line.split(",")]
        if separator == "tab" and "\t" in line:
            return [field.strip() for field in line.split("\t")]
        return line.split()


#: trec_eval's rules (``bench evaluate``): one layout per file, exact field counts.
TREC_EVAL_QRELS = QrelsRules()


@dataclass(frozen=True)
class QrelsFile:
    """Qrels as read, with the warnings reading gave (repeated lines merged)."""

    qrels: Qrels
    warnings: list[str]


class QrelsBuilder:
    """Collects judgments one at a time, remembering where each pair was first judged: the one rule
    for a (query, document) pair judged twice, used by every reader of judgments (qrels files under
    any :class:`QrelsRules`, so ``bench evaluate`` and ``bench agree``; every collection loader).

    The same grade again says nothing new: the pair counts once, and :meth:`warnings` gives one line
    saying how many lines repeated one. Another grade is an :class:`~corpora.InputFileError` at the
    second line naming the first (:meth:`add`). trec_eval 10 stops at either ("duplicate docs");
    refusing an identical repeat would refuse published collections for a line that changes no
    number, so retbench reads such a file as trec_eval reads it without the repeated line.
    """

    def __init__(self) -> None:
        self.judgments: dict[str, dict[str, int]] = {}
        self._first: dict[tuple[str, str], tuple[Path, int]] = {}
        self.repeated = 0

    def add(self, query_id: str, doc_id: str, grade: int, path: Path, line: int) -> None:
        """Add one judgment read at ``path:line``; a pair judged before with another grade is an error."""
        docs = self.judgments.setdefault(query_id, {})
        if doc_id not in docs:
            docs[doc_id] = grade
            self._first[(query_id, doc_id)] = (path, line)
            return
        if docs[doc_id] != grade:
            first_path, first_line = self._first[(query_id, doc_id)]
            first = f"line {first_line}" if first_path == path else f"{first_path}:{first_line}"
            raise InputFileError(
                path, f"query {query_id!r}, document {doc_id!r} is judged {grade} here but {docs[doc_id]} at {first}",
                line=line, fix="keep one grade per (query, document): delete the line with the wrong grade")
        self.repeated += 1

    def warnings(self, source: str) -> list[str]:
        """The warning about identical repeats (none when there were none)."""
        if not self.repeated:
            return []
        return [f"{source}: {self.repeated} judgment line(s) repeat an earlier (query, document) pair "
                "with the same grade; each pair counts once"]


def _is_named_header(fields: Sequence[str]) -> bool:
    return len(fields) == 3 and fields[0].lower() in _BEIR_HEADER_FIRST


def _detect_qrels_layout(path: Path, raw: bytes, rules: QrelsRules) -> tuple[str, int]:
    """("trec" | "beir", line number that decided it), from the first data line (read lazily:
    the rest of the file is the parsers' business)."""
    for number, line_bytes in enumerate(io.BytesIO(raw.removeprefix(b"\xef\xbb\xbf")), 1):
        try:
            line = line_bytes.decode("utf-8").rstrip("\n")
        except UnicodeDecodeError:
            decode_utf8(path, raw)  # names the line of the bad byte
            raise
        if line.startswith("#") or not line.strip():
            continue
        if rules.header == "named" and _is_named_header(rules.split(line, "beir")):
            return "beir", number
        if len(rules.split(line, "trec")) == 4:
            return "trec", number
        if len(rules.split(line, "beir")) == 3:
            return "beir", number
        raise InputFileError(
            path, f"line has {len(line.split())} fields: neither TREC qrels (`{_QRELS_FIELDS}`, 4 fields) nor BEIR "
                  f"qrels (`{_BEIR_FIELDS}`, 3 fields)", line=number,
            fix="write one judgment per line in one of these two layouts")
    raise _no_judgments(path)


def _no_judgments(path: Path | str) -> InputFileError:
    return InputFileError(path, "the qrels hold no judgments (the file is empty or only comments)",
                          fix=f"write one judgment per line as `{_QRELS_FIELDS}` or `{_BEIR_FIELDS}`")


def _field_count_problem(fields: list[str], layout: str, rules: QrelsRules, decided_at: int | None
                         ) -> tuple[str, str]:
    """(problem, fix) for a line with the wrong number of fields."""
    if layout == "any":
        separated = {"tab": " (tab-separated)", "comma": " (comma-separated)"}.get(rules.separator or "tab", "")
        return (f"expected 3 fields `query-id doc-id grade` or 4 `{_QRELS_FIELDS}`{separated}, got {len(fields)}",
                "write one judgment per line: query-id<TAB>doc-id<TAB>grade, or TREC's `qid 0 docid grade`")
    expected, shape = (4, _QRELS_FIELDS) if layout == "trec" else (3, _BEIR_FIELDS)
    why = f" (read as {'TREC' if layout == 'trec' else 'BEIR'} qrels from line {decided_at})" if decided_at else ""
    return (f"expected {expected} fields `{shape}`, got {len(fields)}{why}",
            f"write every judgment in one layout: TREC `{_QRELS_FIELDS}` or BEIR `{_BEIR_FIELDS}`")


def _careful_qrels(path: Path, text: str, layout: str, decided_at: int | None, rules: QrelsRules,
                   builder: QrelsBuilder) -> int:
    """Add every judgment of one file to ``builder``; returns how many lines were judgments."""
    header_possible = rules.header == "non-numeric" or layout != "trec"
    judgments = 0
    for number, line in _data_lines(text):
        fields = rules.split(line, layout)
        if header_possible and not judgments:
            header_possible = False
            if rules.header == "named" and _is_named_header(fields):
                continue
            if rules.header == "non-numeric" and len(fields) in (3, 4) and not looks_like_number(fields[-1]):
                continue
        if len(fields) == 4 and layout in ("trec", "any"):
            query_id, doc_id, grade_text = fields[0], fields[2], fields[3]
        elif len(fields) == 3 and layout in ("beir", "any"):
            query_id, doc_id, grade_text = fields
        else:
            problem, fix = _field_count_problem(fields, layout, rules, decided_at)
            raise InputFileError(path, problem, line=number, fix=fix)
        if not query_id or not doc_id:
            raise InputFileError(path, "empty query id or doc id", line=number,
                                 fix="give every judgment a query id and a doc id")
        if rules.normalise_query_ids:
            query_id = normalise_numeric_id(query_id)
        builder.add(query_id, doc_id, parse_grade(path, number, grade_text), path, number)
        judgments += 1
    return judgments


def _fast_qrels(raw: bytes, layout: str, source: str) -> Qrels | None:
    """trec_eval's rules on a well-formed file, vectorised; None when the careful parser must look."""
    if layout == "trec":
        frame = _fast_table(raw, 4, {0: object, 1: object, 2: object, 3: object})
        columns = (0, 2, 3)
    else:
        if b"\t" not in raw or _PADDED_FIELD.search(raw):
            return None  # space-separated or padded fields: the careful parser splits and strips them
        first_line = raw.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].decode("utf-8", "replace")
        if _is_named_header(TREC_EVAL_QRELS.split(first_line, "beir")):
            raw = raw.split(b"\n", 1)[1] if b"\n" in raw else b""
        frame = _fast_table(raw, 3, {0: object, 1: object, 2: object}, sep="\t")
        columns = (0, 1, 2)
    if frame is None or not len(frame):
        return None
    qids, docs = frame[columns[0]].to_numpy(dtype=object), frame[columns[1]].to_numpy(dtype=object)
    grades = grade_array(frame[columns[2]].to_numpy(dtype=object))
    if (qids == "").any() or (docs == "").any() or grades is None:
        return None
    try:
        return Qrels.from_arrays(qids, docs, grades, source=source)
    except ValueError:
        return None  # a pair judged twice: the careful parser names both lines


def read_qrels_file(paths: str | Path | Sequence[str | Path], rules: QrelsRules = TREC_EVAL_QRELS) -> QrelsFile:
    """Read one qrels file (or several, merged in order) under ``rules``: the :class:`~corpora.Qrels`
    and the warnings. Every problem is an :class:`~corpora.InputFileError` naming the file and line.

    Under trec_eval's rules (the default) a well-formed file is read by the fast path, and the
    qrels keep the arrays it built (:attr:`~corpora.Qrels.arrays`), which the evaluator joins on.
    """
    path_list = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not path_list:
        raise ValueError("no qrels file given")
    source = ", ".join(str(p) for p in path_list)
    builder = QrelsBuilder()
    judgments = 0
    for path in path_list:
        raw = _read_bytes(path, "a qrels file")
        layout, decided_at = _detect_qrels_layout(path, raw, rules) if rules.layout == "auto" else (rules.layout, None)
        if len(path_list) == 1 and rules == QrelsRules(layout=rules.layout):
            fast = _fast_qrels(raw, layout, source)
            if fast is not None:
                return QrelsFile(fast, [])
        judgments += _careful_qrels(path, decode_utf8(path, raw), layout, decided_at, rules, builder)
    if not judgments:
        raise _no_judgments(source)
    return QrelsFile(Qrels(builder.judgments, source=source), builder.warnings(source))


def read_qrels(path: str | Path, format: QrelsFormat = "auto") -> Qrels:
    """Read a TREC or BEIR qrels file under trec_eval's rules (:data:`TREC_EVAL_QRELS`).

    ``format="auto"`` tells the layout from the first judgment line: four whitespace-separated
    fields are TREC (``qid iter docid grade``), three (tab-separated, or a BEIR header line
    ``query-id corpus-id score``) are BEIR; a first line that is neither is an error, and so is any
    later line that does not follow the layout the first one set. ``"trec"``/``"beir"`` force one.
    Grades must be integers within 64 bits (:func:`~corpora.number_grammar.parse_grade`); a pair
    judged twice with another grade is an error, and the same grade again counts once
    (:func:`read_qrels_file` returns the warning); a file without judgments is an error.
    """
    if format not in QRELS_FORMATS:
        raise ValueError(f"format must be one of {QRELS_FORMATS}, not {format!r}")
    return read_qrels_file(path, QrelsRules(layout=format)).qrels


def format_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]]) -> str:
    """TREC qrels text: ``qid 0 docid grade``, queries and documents in the mapping's order.
    Ids must be writable to a TREC file (a :class:`~corpora.RetbenchError` otherwise)."""
    owner = f"qrels {getattr(qrels, 'source', '<memory>')}"
    _check_writable_ids(list(qrels.keys()), "query", owner)
    _check_writable_ids([d for docs in qrels.values() for d in docs], "document", owner)
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    return "\n".join(lines) + ("\n" if lines else "")


def write_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]], target: str | Path | IO[str]) -> None:
    """Write ``qrels`` in TREC qrels format to a path (through :func:`corpora.output_files.write_output`)
    or an open text stream."""
    _write(format_qrels(qrels), target, "qrels file")


def _write(text: str, target: str | Path | IO[str], what: str) -> None:
    if isinstance(target, (str, Path)):
        write_output(target, text, what)
    else:
        target.write(text)
