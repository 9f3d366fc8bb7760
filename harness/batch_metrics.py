"""The batch path of every measure: per-query values for all queries at once.

Each function reduces the judged entries of a :class:`~harness.evaluation.RankedGrades` with
``bincount`` (no Python loop over queries); its specification is the per-query function of the same
measure in :mod:`harness.metrics`, and the tests hold the two equal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from harness.metrics import Metric, exp_gain_overflow

if TYPE_CHECKING:
    from harness.evaluation import RankedGrades


def _per_row(data: RankedGrades, mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Sum over the judged entries selected by ``mask`` of ``weights`` (or 1), per row."""
    rows = data.rows[mask]
    w = None if weights is None else weights[mask]
    return np.bincount(rows, weights=w, minlength=data.n_queries).astype(np.float64)


def _divide(a: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), a.shape)
    out = np.zeros(len(a))
    np.divide(a, b, out=out, where=b > 0)
    return out


def _within(data: RankedGrades, mask: np.ndarray, k: int | None) -> np.ndarray:
    return mask if k is None else mask & (data.ranks <= k)


def _first_relevant(data: RankedGrades, k: int | None) -> np.ndarray:
    selected = _within(data, data.entry_relevant, k)
    first = np.full(data.n_queries, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, data.rows[selected], data.ranks[selected])
    return np.where(first == np.iinfo(np.int64).max, 0, first)


def _gains(grades: np.ndarray, exponential: bool) -> np.ndarray:
    positive = np.maximum(grades, 0).astype(np.float64)
    return np.exp2(positive) - 1.0 if exponential else positive


def _ndcg(data: RankedGrades, k: int | None, exponential: bool) -> np.ndarray:
    in_top = _within(data, np.ones(len(data.rows), dtype=bool), k)
    ideal_top = data.ideal_ranks <= k if k is not None else np.ones(len(data.ideal_ranks), dtype=bool)
    with np.errstate(over="ignore"):  # an overflow is found below and reported by name, not as a numpy warning
        dcg = _per_row(data, in_top, _gains(data.entry_grades, exponential) / np.log2(data.ranks + 1.0))
        ideal_weights = _gains(data.ideal_grades[ideal_top], exponential) / np.log2(data.ideal_ranks[ideal_top] + 1.0)
        ideal = np.bincount(data.ideal_rows[ideal_top], weights=ideal_weights, minlength=data.n_queries)
    overflowed = np.flatnonzero(~(np.isfinite(dcg) & np.isfinite(ideal)))
    if len(overflowed):  # only exponential gain can get here: linear gains are at most 2^63 each
        row = int(overflowed[0])
        grade = int(data.ideal_grades[data.ideal_rows == row].max())
        raise exp_gain_overflow(grade, data.query_ids[row])
    return _divide(dcg, ideal)


def _running_count(data: RankedGrades, mask: np.ndarray) -> np.ndarray:
    """Per judged entry: how many entries of its row up to and including it satisfy ``mask``.

    Judged entries of one row are contiguous and in rank order (the run's layout)."""
    if not len(mask):
        return np.empty(0, dtype=np.int64)
    total = np.cumsum(mask)
    starts = np.concatenate([[True], data.rows[1:] != data.rows[:-1]])
    start_index = np.maximum.accumulate(np.where(starts, np.arange(len(mask)), 0))
    before = total[start_index] - mask[start_index]
    return total - before


def _average_precision(data: RankedGrades, k: int | None) -> np.ndarray:
    relevant = data.entry_relevant
    found = _running_count(data, relevant)
    return _divide(_per_row(data, _within(data, relevant, k), found / data.ranks), data.n_relevant)


def _bpref(data: RankedGrades) -> np.ndarray:
    relevant = data.entry_relevant
    nonrelevant = (data.entry_grades >= 0) & ~relevant
    above = _running_count(data, nonrelevant)
    r = data.n_relevant[data.rows]
    cap = np.minimum(data.n_nonrelevant, data.n_relevant)[data.rows]
    penalty = _divide(np.minimum(above, r).astype(np.float64), cap)
    return _divide(_per_row(data, relevant, 1.0 - penalty), data.n_relevant)


def batch_metric(metric: Metric, data: RankedGrades) -> np.ndarray:
    """The per-query values of ``metric`` for every row of ``data`` (float64, one per query)."""
    k, base = metric.k, metric.base
    relevant = data.entry_relevant
    if base == "hit":
        return (_per_row(data, _within(data, relevant, k)) > 0).astype(np.float64)
    if base == "recall":
        return _divide(_per_row(data, _within(data, relevant, k)), data.n_relevant)
    if base == "precision":
        return _per_row(data, _within(data, relevant, k)) / k
    if base == "judged":
        return _per_row(data, _within(data, np.ones(len(data.rows), dtype=bool), k)) / k
    if base == "mrr":
        first = _first_relevant(data, k)
        return _divide(np.ones(data.n_queries), first.astype(np.float64))
    if base in ("ndcg", "ndcg_exp"):
        return _ndcg(data, k, base == "ndcg_exp")
    if base == "map":
        return _average_precision(data, k)
    if base == "rprec":
        return _divide(_per_row(data, relevant & (data.ranks <= data.n_relevant[data.rows])), data.n_relevant)
    if base == "bpref":
        return _bpref(data)
    raise KeyError(f"no batch path for metric {base!r}")  # the registry and this switch must agree


def first_relevant_ranks(data: RankedGrades) -> np.ndarray:
    """1-based rank of the first relevant document per row; 0 where there is none."""
    return _first_relevant(data, None)
