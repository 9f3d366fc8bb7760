"""TREC qrels and run files, read and written with trec_eval's semantics.

Formats (whitespace separated, one judgment or result per line):

* qrels: ``qid iter docid grade`` — ``iter`` is ignored; ``grade`` is an integer, negative meaning
  judged but never relevant (trec_eval: "in pool, unjudged").
* run: ``qid Q0 docid rank score tag`` — ``Q0`` and ``tag`` are ignored, fields after ``tag`` are
  ignored, and so is ``rank``: a ranking is ordered like trec_eval, by ``score`` descending with ties
  broken by doc id *descending* in byte order (``strcmp``), unless ``order="file"`` keeps the order
  of the lines.

Both: a line whose first character is ``#`` is a comment (a ``#`` anywhere else belongs to its
token: MS MARCO v2.1 ids contain one); blank lines are skipped; ids are strings, never numbers.

Reading is a fast path (pandas' C tokenizer plus numpy) for well-formed files; when it meets
anything unusual it hands over to a line-by-line parser whose only extra job is to accept trailing
fields and to name the file and line of the first problem.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Literal

import numpy as np
import pandas as pd

from corpora import InputFileError, Qrels, Run
from harness.evaluation import QrelsTable
from harness.idcodes import duplicate_pairs, hash_ids, remember_hashes

RunOrder = Literal["trec", "file"]
RUN_ORDERS: tuple[str, ...] = ("trec", "file")

_COMMENT_LINES = re.compile(rb"(?m)^#[^\n]*(?:\n|\Z)")
_RUN_FIELDS = "qid Q0 docid rank score tag"
_QRELS_FIELDS = "qid iter docid grade"


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


def _data_lines(text: str) -> Iterable[tuple[int, list[str]]]:
    """(1-based line number, fields) of every line that is neither a comment nor blank."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("#"):
            continue
        fields = line.split()
        if fields:
            yield number, fields


def _fast_table(raw: bytes, n_columns: int, dtypes: dict[int, object],
                usecols: list[int] | None = None) -> pd.DataFrame | None:
    """The file as a frame of exactly ``n_columns`` whitespace-separated columns, or None when the
    fast tokenizer cannot vouch for it (the careful parser then decides what is wrong)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if raw.startswith(b"#") or b"\n#" in raw:
        raw = _COMMENT_LINES.sub(b"", raw)
    try:
        frame = pd.read_csv(
            io.BytesIO(raw), sep=r"\s+", header=None, names=list(range(n_columns)), usecols=usecols,
            dtype=dtypes, na_filter=False, quoting=csv.QUOTE_NONE, engine="c", encoding="utf-8",
        )
    except (ValueError, IndexError, TypeError, OverflowError, pd.errors.ParserError, UnicodeDecodeError):
        return None  # whatever the fast path cannot read, the careful parser explains
    if len(frame.columns) != len(usecols or range(n_columns)) or (len(frame) and (frame[n_columns - 1] == "").any()):
        return None
    return frame


# ----- runs -----------------------------------------------------------------------------------


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


def _careful_run(path: Path, text: str) -> tuple[list[str], list[str], np.ndarray]:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    seen: dict[tuple[str, str], int] = {}
    for number, fields in _data_lines(text):
        if len(fields) < 6:
            raise InputFileError(path, f"expected 6 whitespace-separated fields `{_RUN_FIELDS}`, got {len(fields)}",
                                 line=number, fix="write one result per line in TREC run format")
        qid, doc = fields[0], fields[2]
        score = _parse_score(path, number, fields[4])
        first = seen.setdefault((qid, doc), number)
        if first != number:
            raise InputFileError(path, f"document {doc!r} is ranked twice for query {qid!r} (first at line {first})",
                                 line=number, fix="keep one line per (query, document)")
        qids.append(qid)
        docs.append(doc)
        scores.append(score)
    return qids, docs, np.asarray(scores, dtype=np.float64)


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
    id descending in code-point order (= ``strcmp`` on UTF-8 bytes, as trec_eval does)."""
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
        permutation = _trec_order(query_codes, docs, scores)
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


def read_run(path: str | Path, order: RunOrder = "trec") -> Run:
    """Read a TREC run file into a :class:`~corpora.Run`, queries in order of first appearance.

    ``order="trec"`` ranks each query like trec_eval (score descending, ties by doc id descending,
    rank column ignored); ``order="file"`` keeps the order of the lines. A line with fewer than six
    fields, a score that is not a number, a (query, document) pair ranked twice and a file without
    any result are :class:`~corpora.InputFileError` naming the file (and line).
    """
    path = Path(path)
    if order not in RUN_ORDERS:
        raise ValueError(f"order must be one of {RUN_ORDERS}, not {order!r}")
    raw = _read_bytes(path)
    frame = _fast_table(raw, 6, {0: object, 2: object, 4: np.float64, 5: object}, usecols=[0, 2, 4, 5])
    if frame is not None and len(frame) and not np.isnan(frame[4].to_numpy()).any():
        run = _run_or_duplicate(frame[0].to_numpy(dtype=object), frame[2].to_numpy(dtype=object),
                                frame[4].to_numpy(dtype=np.float64), order)
        if not isinstance(run, int):
            return run
    text = _decode(path, raw)
    qid_list, doc_list, scores = _careful_run(path, text)
    if not qid_list:
        raise InputFileError(path, "the run holds no results (the file is empty or only comments)",
                             fix=f"write one result per line as `{_RUN_FIELDS}`")
    run = _run_or_duplicate(np.asarray(qid_list, dtype=object), np.asarray(doc_list, dtype=object), scores, order)
    if isinstance(run, int):  # the careful parser names duplicates first; this cannot happen
        raise InputFileError(path, "a (query, document) pair is ranked twice")
    return run


def format_run(run: Run, tag: str) -> str:
    """TREC run text: ``qid Q0 docid rank score tag``, ranks from 1 in the run's order, scores
    written in full (``repr``) so that reading the file back gives the same floats and ties."""
    lines = []
    for q in run.query_ids:
        lines.extend(f"{q} Q0 {d} {rank} {score!r} {tag}" for rank, (d, score) in enumerate(run.items(q), 1))
    return "\n".join(lines) + ("\n" if lines else "")


def write_run(run: Run, target: str | Path | IO[str], tag: str) -> None:
    """Write ``run`` in TREC run format to a path or an open text stream."""
    _write(format_run(run, tag), target)


# ----- qrels ----------------------------------------------------------------------------------


def _parse_grade(path: Path, number: int, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value):
        raise InputFileError(path, f"grade {text!r} is not an integer", line=number,
                             fix="use integer grades (0 irrelevant, 1 marginal, 2 relevant, 3 perfect; "
                                 "negative = judged, never relevant)")
    return int(value)


def _careful_qrels(path: Path, text: str) -> tuple[list[str], list[str], list[int]]:
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    for number, fields in _data_lines(text):
        if len(fields) != 4:
            raise InputFileError(path, f"expected 4 whitespace-separated fields `{_QRELS_FIELDS}`, got {len(fields)}",
                                 line=number, fix="write one judgment per line in TREC qrels format")
        qid, doc = fields[0], fields[2]
        grade = _parse_grade(path, number, fields[3])
        first = seen.setdefault((qid, doc), number)
        if first != number:
            raise InputFileError(path, f"document {doc!r} is judged twice for query {qid!r} (first at line {first})",
                                 line=number, fix="keep one judgment per (query, document)")
        qids.append(qid)
        docs.append(doc)
        grades.append(grade)
    return qids, docs, grades


def read_qrels_table(path: str | Path) -> QrelsTable:
    """Read a TREC qrels file as flat arrays (the evaluator's fast input), in file order.

    Exactly four fields per line; the grade must be an integer; a (query, document) pair judged
    twice is an error (trec_eval refuses it too); a file without judgments is an error.
    """
    path = Path(path)
    raw = _read_bytes(path)
    frame = _fast_table(raw, 4, {0: object, 1: object, 2: object, 3: np.int64})
    if frame is not None and len(frame):
        qids = frame[0].to_numpy(dtype=object)
        docs = frame[2].to_numpy(dtype=object)
        if not len(duplicate_pairs(_factorize_blocks(qids)[0], docs)):
            return QrelsTable(qids, docs, frame[3].to_numpy(dtype=np.int64), source=str(path))
    qid_list, doc_list, grades = _careful_qrels(path, _decode(path, raw))
    if not qid_list:
        raise InputFileError(path, "the qrels hold no judgments (the file is empty or only comments)",
                             fix=f"write one judgment per line as `{_QRELS_FIELDS}`")
    return QrelsTable(np.asarray(qid_list, dtype=object), np.asarray(doc_list, dtype=object),
                      np.asarray(grades, dtype=np.int64), source=str(path))


def read_qrels(path: str | Path) -> Qrels:
    """Read a TREC qrels file into a :class:`~corpora.Qrels` (query id -> {doc id: grade})."""
    return read_qrels_table(path).to_qrels()


def format_qrels(qrels: Qrels) -> str:
    """TREC qrels text: ``qid 0 docid grade``, queries and documents in the mapping's order."""
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
