"""The batch path of every measure: per-query values for all queries at once.

Each public function reduces the judged entries of a :class:`~harness.core.ranked_grades.RankedGrades`
with ``bincount`` (no Python loop over queries) and returns one float64 per row. Its specification
is the per-query function of the same name in :mod:`harness.core.metrics`, whose registry
(:data:`~harness.core.metrics.METRICS`) pairs the two; the tests hold them equal. This module imports
neither the registry nor the evaluator. Joined and reduced so, the run is scored faster than by
the per-query functions (``benchmarks/speed_paths.py`` ``batch_metrics``; numbers in
``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import numpy as np

from harness.core.gains import GAINS, exp_gain_overflow
from harness.core.ranked_grades import RankedGrades


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


def hit(data: RankedGrades, k: int) -> np.ndarray:
    """hit@k: 1 where a relevant document is in the top k."""
    return (_per_row(data, _within(data, data.entry_relevant, k)) > 0).astype(np.float64)


def recall(data: RankedGrades, k: int) -> np.ndarray:
    """recall@k."""
    return _divide(_per_row(data, _within(data, data.entry_relevant, k)), data.n_relevant)


def precision(data: RankedGrades, k: int) -> np.ndarray:
    """precision@k (divided by k)."""
    return _per_row(data, _within(data, data.entry_relevant, k)) / k


def judged(data: RankedGrades, k: int) -> np.ndarray:
    """judged@k."""
    return _per_row(data, _within(data, np.ones(len(data.rows), dtype=bool), k)) / k


def reciprocal_rank(data: RankedGrades, k: int | None) -> np.ndarray:
    """1 / rank of the first relevant document within k (0 when none)."""
    return _divide(np.ones(data.n_queries), _first_relevant(data, k).astype(np.float64))


def ndcg(data: RankedGrades, k: int | None, gain: str) -> np.ndarray:
    """nDCG@k with the gain named ``gain`` (a key of :data:`~harness.core.gains.GAINS`)."""
    gains = GAINS[gain].array
    in_top = _within(data, np.ones(len(data.rows), dtype=bool), k)
    ideal_top = data.ideal_ranks <= k if k is not None else np.ones(len(data.ideal_ranks), dtype=bool)
    with np.errstate(over="ignore"):  # an overflow is found below and reported by name, not as a numpy warning
        dcg = _per_row(data, in_top, gains(data.entry_grades) / np.log2(data.ranks + 1.0))
        ideal_weights = gains(data.ideal_grades[ideal_top]) / np.log2(data.ideal_ranks[ideal_top] + 1.0)
        ideal = np.bincount(data.ideal_rows[ideal_top], weights=ideal_weights, minlength=data.n_queries)
    overflowed = np.flatnonzero(~(np.isfinite(dcg) & np.isfinite(ideal)))
    if len(overflowed):  # only exponential gain can get here: linear gains are at most 2^63 each
        row = int(overflowed[0])
        grade = int(data.ideal_grades[data.ideal_rows == row].max())
        raise exp_gain_overflow(grade, data.query_ids[row])
    return _divide(dcg, ideal)


def average_precision(data: RankedGrades, k: int | None) -> np.ndarray:
    """AP@k."""
    relevant = data.entry_relevant
    found = _running_count(data, relevant)
    return _divide(_per_row(data, _within(data, relevant, k), found / data.ranks), data.n_relevant)


def r_precision(data: RankedGrades) -> np.ndarray:
    """R-precision."""
    relevant = data.entry_relevant
    return _divide(_per_row(data, relevant & (data.ranks <= data.n_relevant[data.rows])), data.n_relevant)


def bpref(data: RankedGrades) -> np.ndarray:
    """bpref (trec_eval's)."""
    relevant = data.entry_relevant
    nonrelevant = (data.entry_grades >= 0) & ~relevant
    above = _running_count(data, nonrelevant)
    r = data.n_relevant[data.rows]
    cap = np.minimum(data.n_nonrelevant, data.n_relevant)[data.rows]
    penalty = _divide(np.minimum(above, r).astype(np.float64), cap)
    return _divide(_per_row(data, relevant, 1.0 - penalty), data.n_relevant)


def first_relevant_ranks(data: RankedGrades) -> np.ndarray:
    """1-based rank of the first relevant document per row; 0 where there is none."""
    return _first_relevant(data, None)
