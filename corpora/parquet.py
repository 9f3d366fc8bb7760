"""Runs as Parquet files: columns ``qid, docno, score, rank`` (PyTerrier's), read and written.

A Parquet run holds one row per result. Reading takes PyTerrier's columns ``qid, docno, score`` or
``query_id, doc_id, score`` (:data:`~corpora.frames.RUN_COLUMNS`; ``rank`` and any other column are
ignored) and ranks each query like a TREC run file: score descending (as doubles; ``order="trec9"``:
as single-precision floats, as trec_eval 9.x does), ties by doc id descending, unless
``order="file"`` keeps the row order. A column of integer ids is read as their decimal text;
a missing id, a NaN score and a (query, doc) pair in two rows are errors naming the file and row.

Writing gives ``qid`` and ``docno`` (strings), ``score`` (float64: :meth:`~corpora.Run.file_scores`,
the same numbers a TREC file written by :meth:`~corpora.Run.write` holds) and ``rank`` (int64 from
0, as PyTerrier numbers ranks), rows in the run's order, and keeps the TREC tag in the file's
metadata (key ``retbench.run_id``), so a Parquet run and its TREC form read back to the same run and
the same run id. The file is written to a temporary name and renamed.

A name ending in ``.parquet.gz`` is a gzipped Parquet file: read whole into memory and gunzipped,
written gzipped. Needs pyarrow (``pip install "retbench[parquet]"``), imported on first use; its absence is an
error saying so. This module registers the ``.parquet`` suffix in
:data:`corpora.run.RUN_FILE_FORMATS`.
"""

from __future__ import annotations

import gzip
import io
import stat
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from corpora.errors import InputFileError, RetbenchError
from corpora.input_files import check_input_file
from corpora.output_files import check_output, write_output
from corpora.run import (DATAFRAME_FIRST_RANK, GZIP_SUFFIX, Run, RunFile, RunFileFormat, TrailingFields,
                         register_run_file_format, run_file_name, run_from_table)
from corpora.run_order import RunOrder

#: The file metadata key holding the run's tag (trec_eval's ``runid``).
RUN_ID_KEY = b"retbench.run_id"


def _pyarrow(path: Path, doing: str) -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise RetbenchError(f"{path}: {doing} a Parquet run needs pyarrow, which is not installed. "
                            'Fix: pip install "retbench[parquet]"') from None
    return pyarrow, pyarrow.parquet


def _as_numpy(column: Any, pa: Any) -> np.ndarray:
    """A pyarrow column as numpy: strings as an object array of str, numbers as they are; nulls
    become None (ids) or NaN (numbers), which the column checks report with their row."""
    column = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if pa.types.is_floating(column.type) or (pa.types.is_integer(column.type) and column.null_count == 0):
        return column.to_numpy(zero_copy_only=False)
    if pa.types.is_integer(column.type):  # integers with nulls: as objects, so a null stays a None
        return np.array(column.to_pylist(), dtype=object)
    return column.to_numpy(zero_copy_only=False)


def read_parquet_run(path: Path, order: RunOrder = "trec", trailing_fields: TrailingFields = "error") -> RunFile:
    """Read a Parquet run (see the module docstring). ``trailing_fields`` concerns TREC lines only
    and is accepted for the common reader signature."""
    pa, pq = _pyarrow(path, "reading")
    if stat.S_ISFIFO(check_input_file(path).st_mode):  # Parquet is read from its footer: a pipe cannot seek
        raise InputFileError(path, "is a pipe: a Parquet file is read from its end", fix="name the file itself")
    source: Path | io.BytesIO = path
    if path.suffix.lower() == GZIP_SUFFIX:  # run.parquet.gz: the whole file gunzipped in memory, then read
        try:
            with gzip.open(path, "rb") as handle:
                source = io.BytesIO(handle.read())
        except (OSError, EOFError, zlib.error) as exc:
            raise InputFileError(path, f"cannot read the file ({exc})",
                                 fix="name a readable file, gzipped as its .gz name says") from None
    try:
        parquet = pq.ParquetFile(source)
        names = parquet.schema_arrow.names
        metadata = parquet.schema_arrow.metadata or {}
    except (pa.ArrowException, OSError) as exc:
        raise InputFileError(path, f"cannot read the file as Parquet ({exc})",
                             fix="write the run with pandas' to_parquet or Run.write") from None
    owner = str(path)
    wanted = [name for name in ("qid", "docno", "query_id", "doc_id", "score") if name in names]
    try:
        table = parquet.read(columns=wanted)
    except (pa.ArrowException, OSError) as exc:
        raise InputFileError(path, f"cannot read the columns {', '.join(wanted)} ({exc})") from None
    if not table.num_rows:
        raise InputFileError(path, "the run holds no results (the table has no rows)",
                             fix="write one row per result with columns qid, docno, score")
    run = run_from_table(lambda name: _as_numpy(table.column(name), pa), names, owner, order)
    run_id = metadata.get(RUN_ID_KEY, b"").decode("utf-8") or run_file_name(path)
    return RunFile(run, run_id)


def write_parquet_run(run: Run, path: Path, tag: str = "run") -> None:
    """Write ``run`` as a Parquet run (see the module docstring), through
    :func:`corpora.output_files.write_output` (checked before the table is built)."""
    pa, pq = _pyarrow(path, "writing")
    check_output(path, "run file")
    queries, docs = run.entry_columns()
    ranks = np.arange(len(run.doc_index), dtype=np.int64) - np.repeat(run.offsets[:-1], run.lengths())
    table = pa.table({"qid": pa.array(queries.tolist(), type=pa.string()),
                      "docno": pa.array(docs.tolist(), type=pa.string()),
                      "score": pa.array(run.file_scores(tag), type=pa.float64()),
                      "rank": pa.array(ranks + DATAFRAME_FIRST_RANK, type=pa.int64())})
    table = table.replace_schema_metadata({RUN_ID_KEY: tag.encode("utf-8")})
    buffer = pa.BufferOutputStream()  # in memory, then one writer for every output file
    pq.write_table(table, buffer)
    data = buffer.getvalue().to_pybytes()
    write_output(path, gzip.compress(data, mtime=0) if path.suffix.lower() == GZIP_SUFFIX else data, "run file")


register_run_file_format(RunFileFormat("parquet", (".parquet",), read_parquet_run, write_parquet_run,
                                       "Parquet, columns qid, docno, score (or query_id, doc_id, score)"))
