"""TREC qrels and run files, read and written with trec_eval's semantics.

Formats (whitespace separated, one judgment or result per line):

* qrels: ``qid iter docid grade`` — ``iter`` is ignored; ``grade`` is an integer, negative meaning
  judged but never relevant (trec_eval: "in pool, unjudged"). BEIR's ``query-id<TAB>corpus-id<TAB>score``
  (with or without its header line) is read too: :func:`read_qrels_table` tells the two apart by
  what the file holds and refuses a file that is neither.
* run: ``qid Q0 docid rank score tag`` — exactly six fields (a doc id with a space would silently
  shift the score column; trec_eval's habit of ignoring fields after ``tag`` is available with
  ``trailing_fields="ignore"``). ``Q0`` is ignored, and so is ``rank``: a ranking is ordered like
  trec_eval, by ``score`` descending with ties broken by doc id *descending* in byte order
  (``strcmp``), unless ``order="file"`` keeps the order of the lines. Like trec_eval (and
  pytrec_eval), scores are compared as single-precision floats: two scores equal in float are a
  tie, however they differ as doubles (the run keeps the doubles). trec_eval's ``runid`` is the
  ``tag`` of the last line.

Both: a line whose first character is ``#`` is a comment (a ``#`` anywhere else belongs to its
token: MS MARCO v2.1 ids contain one); blank lines are skipped; ids are strings, never numbers.

Writing (:func:`format_run`) makes the scores strictly decreasing inside each query, as floats, by
the smallest change that keeps the run's order (:func:`trec_scores`), so that trec_eval,
pytrec_eval and :func:`read_run` rank the written file exactly as the run was ranked;
:func:`format_raw_scores` keeps the scores as they were.

Reading is a fast path (pandas' C tokenizer plus numpy) for well-formed files; when it meets
anything unusual it hands over to a line-by-line parser whose only extra job is to name the file
and line of the first problem.
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import numpy as np
import pandas as pd

from corpora import InputFileError, Qrels, RetbenchError, Run
from harness.evaluation import QrelsTable
from harness.idcodes import duplicate_pairs, hash_ids, remember_hashes
from harness.metrics import Metric

RunOrder = Literal["trec", "file"]
RUN_ORDERS: tuple[str, ...] = ("trec", "file")
TrailingFields = Literal["error", "ignore"]
TRAILING_FIELDS: tuple[str, ...] = ("error", "ignore")
QrelsFormat = Literal["auto", "trec", "beir"]
QRELS_FORMATS: tuple[str, ...] = ("auto", "trec", "beir")

_COMMENT_LINES = re.compile(rb"(?m)^#[^\n]*(?:\n|\Z)")
_RUN_FIELDS = "qid Q0 docid rank score tag"
_QRELS_FIELDS = "qid iter docid grade"
_BEIR_FIELDS = "query-id<TAB>corpus-id<TAB>score"
_BEIR_HEADER_FIRST = ("query-id", "query_id", "qid")
_PADDED_FIELD = re.compile(rb"(?m)^[ ]|[ ]\r?$|[ ]\t|\t[ ]")
_GRADE_RANGE = (-(2**63), 2**63 - 1)  # grades are int64 in the evaluator (trec_eval: a C long)
_GRADE_FIX = ("use integer grades (0 irrelevant, 1 marginal, 2 relevant, 3 perfect; negative = judged, "
              "never relevant)")


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(path, "file not found", fix="check the path") from None
    except IsADirectoryError:
        raise InputFileError(path, "is a folder, not a file", fix="name the file itself") from None
    except OSError as exc:
        raise InputFileError(path, f"cannot read the file ({exc.strerror})") from None


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputFileError(path, f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", line=line,
                             fix="re-encode the file as UTF-8") from None


def _data_lines(text: str) -> Iterable[tuple[int, str]]:
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


def _fast_table(raw: bytes, n_columns: int, dtypes: dict[int, object], usecols: list[int] | None = None,
                sep: str = r"\s+") -> pd.DataFrame | None:
    """The file as a frame of exactly ``n_columns`` separated columns, or None when the fast
    tokenizer cannot vouch for it (the careful parser then decides what is wrong).

    The tokenizer leaves the last column of a short line empty (checked here) and silently drops
    the extra fields of a long line that is not the first, so the fields of the whole file are
    counted too: ``n_columns`` per line, or the careful parser looks.
    """
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if raw.startswith(b"#") or b"\n#" in raw:
        raw = _COMMENT_LINES.sub(b"", raw)
    try:
        # A grade such as 1e30 warns while pandas tries it as an int64, then fails: the careful
        # parser reports it, so the warning is noise here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
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


@dataclass(frozen=True)
class RunFile:
    """A run file as read: the :class:`~corpora.Run` and trec_eval's ``runid`` (the last line's tag)."""

    run: Run
    run_id: str


def _parse_score(path: Path, number: int, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputFileError(path, f"score {text!r} is not a number", line=number,
                             fix=f"write each line as `{_RUN_FIELDS}` with a numeric score") from None
    if math.isnan(value):
        raise InputFileError(path, "score is NaN, which cannot be ranked", line=number,
                             fix="give every result a real-valued score")
    return value


def _field_count_error(path: Path, number: int, fields: list[str]) -> InputFileError:
    if len(fields) > 6:
        return InputFileError(
            path, f"expected 6 whitespace-separated fields `{_RUN_FIELDS}`, got {len(fields)} (a doc id or tag with "
                  "a space shifts the score column)", line=number,
            fix="write ids and tags without whitespace, or, if the fields after the tag are comments as "
                "trec_eval allows, pass --trailing-fields ignore")
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
        score = _parse_score(path, number, fields[4])
        first = seen.setdefault((qid, doc), number)
        if first != number:
            raise InputFileError(path, f"document {doc!r} is ranked twice for query {qid!r} (first at line {first})",
                                 line=number, fix="keep one line per (query, document)")
        qids.append(qid)
        docs.append(doc)
        scores.append(score)
    return qids, docs, np.asarray(scores, dtype=np.float64), tag


def _factorize_blocks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize`` for arrays made of long runs of equal values (query ids in a run file):
    only the first value of each run is hashed."""
    if not len(values):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=object)
    change = np.empty(len(values), dtype=bool)
    change[0] = True
    np.not_equal(values[1:], values[:-1], out=change[1:])
    heads = np.flatnonzero(change)
    head_codes, uniques = pd.factorize(values[heads])
    return np.repeat(head_codes.astype(np.int64), np.diff(np.append(heads, len(values)))), np.asarray(uniques)


def _trec_order(query_codes: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Permutation grouping by query (first appearance), then score descending, ties broken by doc
    id descending in code-point order (= ``strcmp`` on UTF-8 bytes, as trec_eval does). ``scores``
    are the keys as trec_eval compares them (:func:`as_trec_eval_float`)."""
    n = len(scores)
    same_query = query_codes[1:] == query_codes[:-1]
    if bool(np.all(query_codes[1:] >= query_codes[:-1]) and np.all(~same_query | (scores[1:] <= scores[:-1]))):
        order = np.arange(n)  # already in order, as most run files are: skip the sort
        tied = same_query & (scores[1:] == scores[:-1])
    else:
        order = np.lexsort((-scores, query_codes))
        sorted_scores, sorted_queries = scores[order], query_codes[order]
        tied = (sorted_scores[1:] == sorted_scores[:-1]) & (sorted_queries[1:] == sorted_queries[:-1])
    if not tied.any():
        return order
    # Only entries inside a tie group need the (slower) string comparison.
    tied_to_previous = np.concatenate([[False], tied])
    in_group = tied_to_previous.copy()
    in_group[:-1] |= tied
    positions = np.flatnonzero(in_group)
    group_id = np.cumsum(~tied_to_previous[positions])
    members = order[positions]
    text_rank = np.argsort(np.argsort(docs[members].astype(np.str_), kind="stable"), kind="stable")
    within = np.lexsort((-text_rank, group_id))
    order = order.copy()
    order[positions] = members[within]
    return order


def _run_or_duplicate(qids: np.ndarray, docs: np.ndarray, scores: np.ndarray, order: RunOrder) -> Run | int:
    """The :class:`Run` of parallel columns, or the index of the first (query, doc) pair repeated.

    The doc ids are kept one per entry (the run's vocabulary may list a doc once per query that
    retrieves it); their hashes are remembered for the evaluator's join.
    """
    query_codes, query_vocabulary = _factorize_blocks(qids)
    hashes = hash_ids(docs)
    repeated = duplicate_pairs(query_codes, docs, hashes)
    if len(repeated):
        return int(repeated.min())
    if order == "trec":
        permutation = _trec_order(query_codes, docs, as_trec_eval_float(scores))
    else:
        permutation = np.argsort(query_codes, kind="stable")
    counts = np.bincount(query_codes, minlength=len(query_vocabulary))
    offsets = np.concatenate([[0], np.cumsum(counts)])
    remember_hashes(docs, hashes)
    return Run([str(q) for q in query_vocabulary], docs, offsets, permutation, scores[permutation])


def run_from_arrays(query_ids: Iterable[str], doc_ids: Iterable[str], scores: Iterable[float],
                    order: RunOrder = "trec") -> Run:
    """A :class:`Run` from parallel columns (one row per result), ordered like :func:`read_run`.

    >>> run = run_from_arrays(["q1", "q1", "q1"], ["a", "c", "b"], [1.0, 2.0, 2.0])
    >>> run.ranking("q1")
    ['c', 'b', 'a']
    """
    qids = np.asarray(list(query_ids) if not isinstance(query_ids, np.ndarray) else query_ids, dtype=object)
    docs = np.asarray(list(doc_ids) if not isinstance(doc_ids, np.ndarray) else doc_ids, dtype=object)
    values = np.asarray(scores if isinstance(scores, np.ndarray) else list(scores), dtype=np.float64)
    if not len(qids) == len(docs) == len(values):
        raise ValueError("query_ids, doc_ids and scores must have the same length")
    run = _run_or_duplicate(qids, docs, values, order)
    if isinstance(run, int):
        raise ValueError(f"document {docs[run]!r} is ranked twice for query {qids[run]!r}")
    return run


def _fast_run(raw: bytes, trailing_fields: TrailingFields, order: RunOrder) -> RunFile | None:
    """The fast path of :func:`read_run_file`, or None when the careful parser must look."""
    if trailing_fields == "ignore":
        return None  # rare (trec_eval's own tests): the careful parser drops what follows the tag
    frame = _fast_table(raw, 6, {0: object, 2: object, 4: np.float64, 5: object}, usecols=[0, 2, 4, 5])
    if frame is None or not len(frame) or np.isnan(frame[4].to_numpy()).any():
        return None
    run = _run_or_duplicate(frame[0].to_numpy(dtype=object), frame[2].to_numpy(dtype=object),
                            frame[4].to_numpy(dtype=np.float64), order)
    return None if isinstance(run, int) else RunFile(run, str(frame[5].iloc[-1]))


def read_run_file(path: str | Path, order: RunOrder = "trec", trailing_fields: TrailingFields = "error") -> RunFile:
    """Read a TREC run file: its :class:`~corpora.Run` (queries in order of first appearance) and
    trec_eval's ``runid``, the tag of its last line.

    ``order="trec"`` ranks each query like trec_eval (score descending, ties by doc id descending,
    rank column ignored); ``order="file"`` keeps the order of the lines. A line without exactly six
    fields (``trailing_fields="ignore"``: fewer than six), a score that is not a number, a (query,
    document) pair ranked twice and a file without any result are :class:`~corpora.InputFileError`
    naming the file (and line).
    """
    path = Path(path)
    if order not in RUN_ORDERS:
        raise ValueError(f"order must be one of {RUN_ORDERS}, not {order!r}")
    if trailing_fields not in TRAILING_FIELDS:
        raise ValueError(f"trailing_fields must be one of {TRAILING_FIELDS}, not {trailing_fields!r}")
    raw = _read_bytes(path)
    fast = _fast_run(raw, trailing_fields, order)
    if fast is not None:
        return fast
    qid_list, doc_list, scores, tag = _careful_run(path, _decode(path, raw), trailing_fields)
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

_INT32_MIN = -(2**31)


def as_trec_eval_float(scores: np.ndarray) -> np.ndarray:
    """The scores as trec_eval compares them: it reads each into a C ``float`` (its ``TEXT_RESULTS``
    holds ``float sim``; pytrec_eval shares that code), so two doubles that round to the same
    single-precision value are a tie there. Values beyond float range become infinite, as in C."""
    with np.errstate(over="ignore"):
        return np.asarray(scores, dtype=np.float64).astype(np.float32)


def _float32_ordinals(values: np.ndarray) -> np.ndarray:
    """float32 -> int64, increasing with the value, consecutive floats one apart (+0 and -0 both
    0): the value's position on the line of representable single-precision floats."""
    bits = values.view(np.int32).astype(np.int64)
    return np.where(bits < 0, _INT32_MIN - bits, bits)


def _from_float32_ordinals(ordinals: np.ndarray) -> np.ndarray:
    return np.where(ordinals < 0, _INT32_MIN - ordinals, ordinals).astype(np.int32).view(np.float32)


def _run_error(tag: str, run: Run, entry: int, problem: str, fix: str) -> RetbenchError:
    block = int(np.searchsorted(run.offsets, entry, side="right") - 1)
    return RetbenchError(f"run {tag!r}: query {run.query_ids[block]!r}, document "
                         f"{run.doc_ids[run.doc_index[entry]]!r}: {problem}. Fix: {fix}")


def trec_scores(run: Run, tag: str = "run") -> np.ndarray:
    """The scores to write so that every evaluator ranks the file exactly as ``run`` is ordered.

    trec_eval re-sorts a run by score descending and breaks ties by doc id *descending*, comparing
    the scores as single-precision floats (:func:`as_trec_eval_float`), while a retriever's ranking
    breaks ties by doc id ascending (or any order it likes). Inside each query, walking down the
    ranking with ``f`` the float a score reads as: a score whose ``f`` is below the previous written
    one's is kept as it is; any other is replaced by the float just below, ``f(written_i) =
    min(f(raw_i), nextafter(f(written_(i-1)), -inf))``: the smallest change that makes the scores
    strictly decreasing where trec_eval looks (and so as doubles too, rounding being monotone).
    Vectorised: with ``o`` the position of a float on the line of floats, ``o(f(written_i)) =
    min_(j <= i)(o(f(raw_j)) + j) - i`` within the query. A NaN score, or a ``-inf`` that would
    need a step below ``-inf``, is an error naming ``tag``, the query and the document.

    >>> run = Run.from_mapping({"q": [("a", 2.0), ("b", 2.0), ("c", 1.0)]})
    >>> [float(x) for x in trec_scores(run)] == [2.0, float(np.nextafter(np.float32(2), np.float32(0))), 1.0]
    True
    """
    raw = np.asarray(run.scores, dtype=np.float64)
    n = len(raw)
    if not n:
        return raw.copy()
    nan = np.flatnonzero(np.isnan(raw))
    if len(nan):
        raise _run_error(tag, run, int(nan[0]), "the score is NaN, which cannot be ranked",
                         "give every result a real-valued score")
    ordinals = _float32_ordinals(as_trec_eval_float(raw))
    starts = run.offsets[:-1][run.lengths() > 0]
    follows = np.ones(n, dtype=bool)
    follows[starts] = False  # an entry that has a predecessor in its own query
    if not (follows[1:] & (ordinals[1:] >= ordinals[:-1])).any():
        return raw.copy()  # already strictly decreasing inside every query, as floats
    position = np.arange(n, dtype=np.int64)
    query_of = np.repeat(np.arange(len(run.query_ids)), run.lengths())
    written = pd.Series(ordinals + position).groupby(query_of, sort=False).cummin().to_numpy() - position
    below = np.flatnonzero(written < _float32_ordinals(np.array([-np.inf], dtype=np.float32))[0])
    if len(below):
        raise _run_error(tag, run, int(below[0]), "tied at -inf, which no score can follow",
                         "give results finite scores (or leave them out of the ranking)")
    moved = written != ordinals
    return np.where(moved, _from_float32_ordinals(written).astype(np.float64), raw)


def _check_writable_ids(ids: Sequence[str], what: str, owner: str) -> None:
    """Ids a TREC file can hold: non-empty, no whitespace (it separates the fields). Query ids must
    not start with ``#`` either (the line would read as a comment)."""
    joined = "\x00".join(ids)
    if ids and (re.search(r"\s", joined) or "\x00\x00" in f"\x00{joined}\x00"):
        bad = next(i for i in ids if not i or re.search(r"\s", i))
        raise RetbenchError(f"{owner}: {what} id {bad!r} cannot be written to a TREC file (fields are separated "
                            f"by whitespace). Fix: give every {what} an id without spaces")
    if what == "query":
        comment = next((i for i in ids if i.startswith("#")), None)
        if comment is not None:
            raise RetbenchError(f"{owner}: query id {comment!r} starts with '#', which TREC files read as a comment. "
                                "Fix: rename the query")


def _run_columns(run: Run, owner: str) -> tuple[list[str], list[str], list[str]]:
    """Per entry, in the run's order: query id, doc id and 1-based rank, as strings (the ids
    checked for what a TREC line can hold)."""
    lengths = run.lengths()
    used = np.zeros(len(run.doc_ids), dtype=bool)
    used[run.doc_index] = True
    _check_writable_ids([str(q) for q in run.query_ids], "query", owner)
    _check_writable_ids([str(d) for d in run.doc_ids[used]], "document", owner)
    queries = np.repeat(np.asarray(run.query_ids, dtype=object), lengths).tolist()
    docs = run.doc_ids[run.doc_index].tolist()
    longest = int(lengths.max()) if len(lengths) else 0
    rank_text = np.array([str(r) for r in range(1, longest + 1)], dtype=object)
    ranks = np.arange(len(run.doc_index)) - np.repeat(run.offsets[:-1], lengths)
    return queries, docs, rank_text[ranks].tolist()


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


def _raw_scores_text(queries: list[str], docs: list[str], ranks: list[str], scores: list[str]) -> str:
    return _join_lines(["query_id\tdoc_id\trank\tscore",
                        *(f"{q}\t{d}\t{r}\t{s}" for q, d, r, s in zip(queries, docs, ranks, scores))])


def _format_run(run: Run, tag: str, with_raw_scores: bool) -> tuple[str, str | None]:
    _check_tag(tag)
    queries, docs, ranks = _run_columns(run, f"run {tag!r}")
    written = trec_scores(run, tag)
    written_text = list(map(repr, written.tolist()))
    trec = _join_lines([f"{q} Q0 {d} {r} {s} {tag}" for q, d, r, s in zip(queries, docs, ranks, written_text)])
    if not with_raw_scores:
        return trec, None
    raw = np.asarray(run.scores, dtype=np.float64)
    raw_text = written_text  # the writer keeps most scores: reuse their text
    for entry in np.flatnonzero(written != raw).tolist():
        raw_text[entry] = repr(float(raw[entry]))
    return trec, _raw_scores_text(queries, docs, ranks, raw_text)


def write_run(run: Run, target: str | Path | IO[str], tag: str) -> None:
    """Write ``run`` in TREC run format (:func:`format_run`) to a path or an open text stream."""
    _write(format_run(run, tag), target)


# ----- qrels ----------------------------------------------------------------------------------


def _parse_grade(path: Path, number: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        try:
            as_float = float(text)
        except ValueError:
            as_float = math.nan
        if not math.isfinite(as_float) or as_float != int(as_float):
            raise InputFileError(path, f"grade {text!r} is not an integer", line=number, fix=_GRADE_FIX) from None
        value = int(as_float)
    if not _GRADE_RANGE[0] <= value <= _GRADE_RANGE[1]:
        raise InputFileError(path, f"grade {text!r} is outside the 64-bit integer range", line=number,
                             fix=_GRADE_FIX)
    return value


def _qrels_fields(line: str, layout: str) -> list[str]:
    if layout == "beir":
        return [f.strip() for f in line.split("\t")] if "\t" in line else line.split()
    return line.split()


def _is_beir_header(fields: Sequence[str]) -> bool:
    return len(fields) == 3 and fields[0].lower() in _BEIR_HEADER_FIRST


def _detect_qrels_layout(path: Path, raw: bytes) -> tuple[str, int]:
    """("trec" | "beir", line number that decided it), from the first data line (read lazily:
    the rest of the file is the parsers' business)."""
    for number, line_bytes in enumerate(io.BytesIO(raw.removeprefix(b"\xef\xbb\xbf")), 1):
        try:
            line = line_bytes.decode("utf-8").rstrip("\n")
        except UnicodeDecodeError:
            _decode(path, raw)  # names the line of the bad byte
            raise
        if line.startswith("#") or not line.strip():
            continue
        if _is_beir_header(_qrels_fields(line, "beir")):
            return "beir", number
        if len(line.split()) == 4:
            return "trec", number
        if len(_qrels_fields(line, "beir")) == 3:
            return "beir", number
        raise InputFileError(
            path, f"line has {len(line.split())} fields: neither TREC qrels (`{_QRELS_FIELDS}`, 4 fields) nor BEIR "
                  f"qrels (`{_BEIR_FIELDS}`, 3 fields)", line=number,
            fix="write one judgment per line in one of these two layouts (--qrels-format names one)")
    raise InputFileError(path, "the qrels hold no judgments (the file is empty or only comments)",
                         fix=f"write one judgment per line as `{_QRELS_FIELDS}` or `{_BEIR_FIELDS}`")


def _careful_qrels(path: Path, text: str, layout: str, decided_at: int | None
                   ) -> tuple[list[str], list[str], list[int]]:
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    expected = 4 if layout == "trec" else 3
    shape = _QRELS_FIELDS if layout == "trec" else _BEIR_FIELDS
    why = f" (read as {'TREC' if layout == 'trec' else 'BEIR'} qrels from line {decided_at})" if decided_at else ""
    header_allowed = layout == "beir"
    for number, line in _data_lines(text):
        fields = _qrels_fields(line, layout)
        if header_allowed and not qids and _is_beir_header(fields):
            continue
        if len(fields) != expected:
            raise InputFileError(path, f"expected {expected} fields `{shape}`, got {len(fields)}{why}", line=number,
                                 fix="write every judgment in one layout: TREC `qid iter docid grade` or BEIR "
                                     "`query-id<TAB>corpus-id<TAB>score`")
        qid, doc, grade_text = (fields[0], fields[2], fields[3]) if layout == "trec" else fields
        grade = _parse_grade(path, number, grade_text)
        first = seen.setdefault((qid, doc), number)
        if first != number:
            raise InputFileError(path, f"document {doc!r} is judged twice for query {qid!r} (first at line {first})",
                                 line=number, fix="keep one judgment per (query, document)")
        qids.append(qid)
        docs.append(doc)
        grades.append(grade)
    return qids, docs, grades


def _fast_qrels(raw: bytes, layout: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    if layout == "trec":
        frame = _fast_table(raw, 4, {0: object, 1: object, 2: object, 3: np.int64})
        columns = (0, 2, 3)
    else:
        if b"\t" not in raw or _PADDED_FIELD.search(raw):
            return None  # space-separated or padded fields: the careful parser splits and strips them
        first_line = raw.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].decode("utf-8", "replace")
        if _is_beir_header(_qrels_fields(first_line, "beir")):
            raw = raw.split(b"\n", 1)[1] if b"\n" in raw else b""
        frame = _fast_table(raw, 3, {0: object, 1: object, 2: np.int64}, sep="\t")
        columns = (0, 1, 2)
    if frame is None or not len(frame):
        return None
    qids, docs = frame[columns[0]].to_numpy(dtype=object), frame[columns[1]].to_numpy(dtype=object)
    if len(duplicate_pairs(_factorize_blocks(qids)[0], docs)):
        return None
    return qids, docs, frame[columns[2]].to_numpy(dtype=np.int64)


def read_qrels_table(path: str | Path, format: QrelsFormat = "auto") -> QrelsTable:
    """Read a qrels file as flat arrays (the evaluator's fast input), in file order.

    ``format="auto"`` tells the layout from the first judgment line: four whitespace-separated
    fields are TREC (``qid iter docid grade``), three (tab-separated, or a BEIR header line
    ``query-id corpus-id score``) are BEIR; a first line that is neither is an error, and so is any
    later line that does not follow the layout the first one set. ``"trec"``/``"beir"`` force one.
    Grades must be integers within 64 bits; a (query, document) pair judged twice is an error
    (trec_eval refuses it too); a file without judgments is an error.
    """
    path = Path(path)
    if format not in QRELS_FORMATS:
        raise ValueError(f"format must be one of {QRELS_FORMATS}, not {format!r}")
    raw = _read_bytes(path)
    layout, decided_at = _detect_qrels_layout(path, raw) if format == "auto" else (format, None)
    fast = _fast_qrels(raw, layout)
    if fast is not None:
        return QrelsTable(*fast, source=str(path))
    qid_list, doc_list, grades = _careful_qrels(path, _decode(path, raw), layout, decided_at)
    if not qid_list:
        raise InputFileError(path, "the qrels hold no judgments (the file is empty or only comments)",
                             fix=f"write one judgment per line as `{_QRELS_FIELDS}` or `{_BEIR_FIELDS}`")
    return QrelsTable(np.asarray(qid_list, dtype=object), np.asarray(doc_list, dtype=object),
                      np.asarray(grades, dtype=np.int64), source=str(path))


def read_qrels(path: str | Path, format: QrelsFormat = "auto") -> Qrels:
    """Read a TREC or BEIR qrels file into a :class:`~corpora.Qrels` (query id -> {doc id: grade})."""
    return read_qrels_table(path, format).to_qrels()


def format_qrels(qrels: Qrels | dict[str, dict[str, int]]) -> str:
    """TREC qrels text: ``qid 0 docid grade``, queries and documents in the mapping's order.
    Ids must hold no whitespace (a :class:`~corpora.RetbenchError` otherwise)."""
    owner = f"qrels {getattr(qrels, 'source', '<memory>')}"
    _check_writable_ids(list(qrels.keys()), "query", owner)
    _check_writable_ids([d for docs in qrels.values() for d in docs], "document", owner)
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    return "\n".join(lines) + ("\n" if lines else "")


def write_qrels(qrels: Qrels, target: str | Path | IO[str]) -> None:
    """Write ``qrels`` in TREC qrels format to a path or an open text stream."""
    _write(format_qrels(qrels), target)


def _write(text: str, target: str | Path | IO[str]) -> None:
    if isinstance(target, (str, Path)):
        Path(target).write_text(text, encoding="utf-8")
    else:
        target.write(text)


# ----- trec_eval's measure names --------------------------------------------------------------

#: trec_eval's measure families in the order it prints them (``te_trec_measures`` in its
#: ``measures.c``), from ``runid`` to ``success``; measures without a retbench metric are listed
#: too, so that the relative order of those with one is trec_eval's.
TREC_EVAL_PRINT_ORDER: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
)


def trec_eval_name(metric: Metric) -> str | None:
    """trec_eval's name for ``metric`` (``ndcg@10`` -> ``ndcg_cut_10``, ``hit@5`` -> ``success_5``,
    ``mrr`` -> ``recip_rank``), read from the metric registry; None when trec_eval has no such
    measure (``mrr@10``, ``ndcg_exp@10``, ``judged@10``).

    >>> from harness.metrics import parse_metric
    >>> [trec_eval_name(parse_metric(n)) for n in ("ndcg@10", "precision@5", "map", "mrr@10")]
    ['ndcg_cut_10', 'P_5', 'map', None]
    """
    definition = metric.definition
    if metric.k is None:
        return definition.trec_eval
    return f"{definition.trec_eval_cut}_{metric.k}" if definition.trec_eval_cut else None


def trec_eval_sort_key(name: str) -> tuple[int, int]:
    """Where trec_eval prints measure ``name``: its family's place, then the cutoff ascending."""
    family, _, cutoff = name.rpartition("_")
    if family in TREC_EVAL_PRINT_ORDER and cutoff.isdigit():
        return TREC_EVAL_PRINT_ORDER.index(family), int(cutoff)
    return TREC_EVAL_PRINT_ORDER.index(name), 0
