"""Columns of other tools' tables (pandas DataFrames, Parquet files) read into checked arrays.

The column conventions retbench reads are declared once here: PyTerrier's (``qid, docno, score``
for results, ``qid, docno, label`` for judgments, the ones it writes) and ir_measures' (``query_id,
doc_id, score`` and ``query_id, doc_id, relevance``). Ids are strings, as everywhere in retbench: a
column of integers is read as their decimal text (what a TREC file would hold), anything else that
is not a string (a float, a missing value, an empty string) is an error naming the row, counted
from 0 as ``df.iloc`` counts. Nothing here imports pandas: it reads what the caller's table hands
over as numpy arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from corpora.errors import RetbenchError

#: Column names of a ranking, one convention a row: (query id, doc id, score). PyTerrier's first.
RUN_COLUMNS: tuple[tuple[str, str, str], ...] = (("qid", "docno", "score"), ("query_id", "doc_id", "score"))
#: Column names of judgments: (query id, doc id, grade). PyTerrier's first.
QRELS_COLUMNS: tuple[tuple[str, str, str], ...] = (("qid", "docno", "label"), ("query_id", "doc_id", "relevance"))


def pick_columns(columns: Sequence[object], conventions: tuple[tuple[str, str, str], ...], owner: str,
                 what: str) -> tuple[str, str, str]:
    """The one convention whose three columns ``columns`` holds; an error naming what is there when
    none or more than one is complete (two would leave the choice to a guess)."""
    present = {str(c) for c in columns}
    complete = [names for names in conventions if set(names) <= present]
    if len(complete) == 1:
        return complete[0]
    expected = " or ".join(", ".join(names) for names in conventions)
    if complete:
        raise RetbenchError(f"{owner}: the columns hold {what} twice ({expected}). Fix: keep one set of columns")
    shown = ", ".join(str(c) for c in columns) or "none"
    raise RetbenchError(f"{owner}: {what} need the columns {expected}; found {shown}. Fix: rename the columns "
                        f"(e.g. df.rename(columns={{...}}))")


def _is_missing(value: object) -> bool:
    """None, NaN or pandas' NA: how a table marks a missing cell."""
    return value is None or (isinstance(value, float) and value != value) or type(value).__name__ == "NAType"


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def id_column(values: np.ndarray, column: str, owner: str) -> np.ndarray:
    """The column as an object array of non-empty strings; integers become their decimal text."""
    from pandas.api.types import infer_dtype

    values = np.asarray(values)
    if values.dtype.kind in "iu":
        return values.astype(str).astype(object)
    values = values.astype(object)
    kind = infer_dtype(values, skipna=False)
    if kind == "integer":
        return np.array([str(v) for v in values], dtype=object)
    if kind not in ("string", "empty"):
        is_string = np.fromiter((isinstance(v, str) for v in values), dtype=bool, count=len(values))
        is_integer = np.fromiter((isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values),
                                 dtype=bool, count=len(values))
        row = _first(~(is_string | is_integer))
        value = values[row]
        problem = "the id is missing" if _is_missing(value) else f"{value!r} is not an id (ids are strings)"
        raise RetbenchError(f"{owner}: column {column!r}, row {row}: {problem}. Fix: give every row a {column}")
    empty = values == ""
    if empty.any():
        raise RetbenchError(f"{owner}: column {column!r}, row {_first(empty)}: the id is empty. "
                            f"Fix: give every row a {column}")
    return values


def score_column(values: np.ndarray, column: str, owner: str) -> np.ndarray:
    """The column as float64; a non-numeric column or a NaN (which cannot be ranked) is an error."""
    values = np.asarray(values)
    if values.dtype.kind not in "iuf":
        raise RetbenchError(f"{owner}: column {column!r} holds {values.dtype} values, not numbers. "
                            "Fix: give every result a numeric score")
    scores = values.astype(np.float64)
    nan = np.isnan(scores)
    if nan.any():
        raise RetbenchError(f"{owner}: column {column!r}, row {_first(nan)}: the score is NaN (or missing), which "
                            "cannot be ranked. Fix: give every result a real-valued score")
    return scores


def grade_column(values: np.ndarray, column: str, owner: str) -> np.ndarray:
    """The column as int64 grades: integers, or floats that are all whole numbers (a column that
    pandas made float because of a merge); anything else is an error naming the row."""
    values = np.asarray(values)
    if values.dtype.kind in "iu":
        if values.dtype.kind == "u" and len(values) and values.max() > np.iinfo(np.int64).max:
            raise RetbenchError(f"{owner}: column {column!r}, row {_first(values > np.iinfo(np.int64).max)}: the "
                                "grade does not fit in 64 bits. Fix: use TREC grades (0, 1, 2, 3; negative: judged "
                                "but never relevant)")
        return values.astype(np.int64)
    if values.dtype.kind != "f":
        raise RetbenchError(f"{owner}: column {column!r} holds {values.dtype} values, not integer grades. "
                            "Fix: give every judgment an integer grade")
    whole = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**63)
    if not whole.all():
        row = _first(~whole)
        raise RetbenchError(f"{owner}: column {column!r}, row {row}: {float(values[row])!r} is not an integer grade. "
                            "Fix: give every judgment an integer grade (TREC: 0 irrelevant, 1, 2, 3)")
    return values.astype(np.int64)
