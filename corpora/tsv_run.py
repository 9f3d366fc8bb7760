"""MS MARCO run files: ``qid<TAB>docid<TAB>rank``, one result per line, read and written.

The format of the MS MARCO passage and document leaderboards' runs (``run.dev.tsv``): three
tab-separated fields and no score. A run read from it gets the score ``-rank`` (a double, exact for
every rank below 2^53), so that score descending is rank ascending and everything downstream (the
order, trec_eval's reading, a weighted fusion's min-max) reads the file's ranks. ``order="trec"``
then ranks each query like trec_eval 10 would rank that score (two lines with the same rank are a
tie, broken by doc id descending); ``order="file"`` keeps the order of the lines; ``order="trec9"``
is ``"trec"`` (a rank is exact as a float below 2^24, and tied the same way beyond).

Lines: exactly three tab-separated fields; a rank is a whole number >= 1 (as
:func:`~corpora.number_grammar.grade_array` reads integers); a line starting with ``#`` is a comment
and a blank line is skipped; a (query, document) pair on two lines is refused, as trec_eval refuses
it. Each problem is an :class:`~corpora.InputFileError` naming the file and line. The file is read
within :func:`~corpora.input_files.read_input_bytes`' bounds, gunzipped when its name ends in
``.gz`` (``run.dev.tsv.gz``). The run id is the file's name without ``.tsv`` (and ``.gz``).

Writing gives ranks from 1 in the run's order (the scores are not kept: the format has none).
This module registers the ``.tsv`` suffix in :data:`corpora.run.RUN_FILE_FORMATS`.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from corpora.errors import InputFileError
from corpora.field_columns import split_fields
from corpora.input_files import MAX_JUDGMENT_LINE, decode_utf8, read_input_bytes, refuse_nul_bytes
from corpora.number_grammar import grade_array
from corpora.output_files import write_output
from corpora.run import (GZIP_SUFFIX, Run, RunFile, RunFileFormat, TrailingFields, register_run_file_format,
                         run_file_name)
from corpora.run_order import RUN_ORDERS, RunOrder, order_columns

__all__ = ["read_tsv_run", "write_tsv_run"]

_FIELDS = "qid<TAB>docid<TAB>rank"


#: Bytes whose presence sends a file to :func:`_lines`: :func:`~corpora.field_columns.split_fields`
#: splits on any whitespace, so the array path takes only single tabs between non-empty fields (no
#: space, carriage return or tab at a line's edge; it refuses a line starting with ``#`` itself).
_NOT_PLAIN = (b" ", b"\r", b"\t\t", b"\n\t", b"\t\n")


def _read(path: Path) -> bytes:
    raw = read_input_bytes(path, max_line=MAX_JUDGMENT_LINE, what="a run file",
                           gzipped=path.suffix.lower() == GZIP_SUFFIX)
    refuse_nul_bytes(path, raw)
    return raw


def _columns(raw: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Query ids, doc ids and rank texts of a plain file (see :data:`_NOT_PLAIN`) split with array
    operations, or None when :func:`_lines` must read it (and name the line of any problem)."""
    if raw.startswith(b"\t") or raw.endswith(b"\t") or any(odd in raw for odd in _NOT_PLAIN):
        return None
    fields = split_fields(raw, 3, keep=(0, 1, 2))
    if fields is None or not fields.text_fits(0, 1):  # one very long id: the lines' strings cost less
        return None
    return fields.text(0), fields.text(1), fields.text(2)


def _lines(path: Path, raw: bytes) -> tuple[list[int], list[str], list[str], list[str]]:
    """Line numbers, query ids, doc ids and rank texts of every result line."""
    numbers: list[int] = []
    qids: list[str] = []
    docs: list[str] = []
    ranks: list[str] = []
    for number, line in enumerate(decode_utf8(path, raw).split("\n"), 1):
        line = line.rstrip("\r")
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3 or any(not f or f != f.strip() for f in fields):
            raise InputFileError(path, f"expected 3 tab-separated fields `{_FIELDS}`, got {line!r}", line=number,
                                 fix="write one result per line as query id, doc id and rank (from 1), "
                                     "separated by single tabs")
        numbers.append(number)
        qids.append(fields[0])
        docs.append(fields[1])
        ranks.append(fields[2])
    return numbers, qids, docs, ranks


def read_tsv_run(path: Path, order: RunOrder = "trec", trailing_fields: TrailingFields = "error") -> RunFile:
    """Read an MS MARCO run file (see the module docstring). ``trailing_fields`` concerns TREC lines
    only and is accepted for the common reader signature."""
    path = Path(path)
    if order not in RUN_ORDERS:
        raise ValueError(f"order must be one of {RUN_ORDERS}, not {order!r}")
    raw = _read(path)
    columns = _columns(raw)
    if columns is not None:  # a well-formed file; anything odd is read again, line by line, to be named
        qids, docs, rank_texts = columns
        ranks = grade_array(rank_texts)
        if ranks is not None and (ranks >= 1).all():
            scores = -ranks.astype(np.float64)
            ordered = order_columns(qids, docs, scores, order)
            if not isinstance(ordered, int):
                return RunFile(Run.from_ordered(docs, scores, ordered), run_file_name(path))
    numbers, qid_list, doc_list, rank_list = _lines(path, raw)
    if not numbers:
        raise InputFileError(path, "the run holds no results (the file is empty or only comments)",
                             fix=f"write one result per line as `{_FIELDS}`")
    ranks = grade_array(np.asarray(rank_list, dtype=object))
    bad = None if ranks is None else np.flatnonzero(ranks < 1)
    if ranks is None or len(bad):
        row = int(bad[0]) if ranks is not None else next(
            i for i, text in enumerate(rank_list) if grade_array([text]) is None or grade_array([text])[0] < 1)
        raise InputFileError(path, f"rank {rank_list[row]!r} is not a whole number >= 1", line=numbers[row],
                             fix="number each query's results 1, 2, 3, ... best first")
    qids = np.asarray(qid_list, dtype=object)
    docs = np.asarray(doc_list, dtype=object)
    scores = -ranks.astype(np.float64)
    ordered = order_columns(qids, docs, scores, order)
    if isinstance(ordered, int):
        first = int(np.flatnonzero((qids == qids[ordered]) & (docs == docs[ordered]))[0])
        raise InputFileError(path, f"document {docs[ordered]!r} is ranked twice for query {qids[ordered]!r} "
                             f"(first at line {numbers[first]})", line=numbers[ordered],
                             fix="keep one line per (query, document)")
    return RunFile(Run.from_ordered(docs, scores, ordered), run_file_name(path))


def write_tsv_run(run: Run, path: Path, tag: str = "run") -> None:
    """Write ``run`` as MS MARCO lines (ranks from 1 in the run's order; ``tag`` is not kept: the
    format has no place for it), gzipped for a ``.gz`` name, through
    :func:`corpora.output_files.write_output`."""
    from corpora.trec_io import _check_run_ids  # the ids a line of whitespace-separated fields can hold

    _check_run_ids(run, str(path))
    queries, docs = run.entry_columns()
    ranks = np.arange(len(run.doc_index), dtype=np.int64) - np.repeat(run.offsets[:-1], run.lengths()) + 1
    text = "".join(f"{q}\t{d}\t{r}\n" for q, d, r in zip(queries.tolist(), docs.tolist(), ranks.tolist()))
    data = gzip.compress(text.encode("utf-8"), mtime=0) if path.suffix.lower() == GZIP_SUFFIX else text
    write_output(path, data, "run file")


register_run_file_format(RunFileFormat("tsv", (".tsv",), read_tsv_run, write_tsv_run,
                                       f"MS MARCO run lines `{_FIELDS}`, the score read as -rank"))
