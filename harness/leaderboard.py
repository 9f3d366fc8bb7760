"""A leaderboard that admits what the data cannot separate: bootstrap ranks and tie groups.

Ordering systems by their means alone overstates what a test collection shows. For one metric:

Ranks over the resamples (:func:`bootstrap_ranks`)
    The bootstrap resamples of the queries (the rows of :func:`harness.statistics.bootstrap_indices`,
    the same resamples the comparisons' intervals use for the same seed, drawn once for every metric
    of :func:`leaderboards`) are averaged per system;
    in each resample the systems are ranked by that mean, rank 1 the highest, systems whose means
    agree to 12 decimals sharing the average of their ranks (so float rounding of equal sums makes
    no order). ``mean_rank`` is a system's average rank over the resamples; ``rank_ci_low`` and
    ``rank_ci_high`` are its sorted ranks at the indices :func:`harness.statistics.percentile_interval`
    reads (125 and 4874 of 5,000 at 95%). ``mean`` is the exactly rounded mean over all the queries
    (``math.fsum / n``, as ``summary.csv``) and ``rank`` its rank.
Tie groups (:func:`tie_groups`)
    Systems are ordered by mean, highest first (ties by mean rank, then as given). The first system
    leads group 1, which every other system joins unless its comparison with the leader is
    significant (:attr:`harness.statistics.Comparison.significant`: Holm-adjusted p <= alpha *and*
    the bootstrap interval excludes 0, the rule behind the verdict "A is better"). The best system
    not yet in a group leads group 2, joined by every remaining system not significantly worse than
    it, and so on. Membership is decided against each group's leader only (significance is not
    transitive), so the comparisons given must include each leader against every system below it:
    all pairs, or, when only the best is compared with the rest, one group forms and every system
    outside it needs its own comparisons. The Holm family is the comparisons' own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from harness.statistics import Comparison, over_resamples, percentile_interval

__all__ = ["LEADERBOARD_COLUMNS", "bootstrap_ranks", "leaderboard", "leaderboards", "tie_groups"]

#: Columns of the leaderboard (``leaderboard.csv``), one row per (metric, system).
LEADERBOARD_COLUMNS = ["metric", "group", "system", "mean", "rank", "mean_rank", "rank_ci_low", "rank_ci_high"]
_DECIMALS = 12  # means compared to this many decimals when ranking


def _ranks(means: np.ndarray) -> np.ndarray:
    """Rank 1 = highest mean along the last axis; equal means (to 12 decimals) share their average rank.

    A system's rank is 1 + the systems above it + half the others level with it (scipy's ``rankdata``
    with ``method="average"`` on the negated means; a system count is small, so all pairs are compared).

    >>> _ranks(np.array([[0.2, 0.9, 0.2], [0.5, 0.1, 0.3]])).tolist()
    [[2.5, 1.0, 2.5], [1.0, 3.0, 2.0]]
    """
    rounded = np.round(np.asarray(means, dtype=np.float64), _DECIMALS)
    above = (rounded[..., None, :] > rounded[..., :, None]).sum(axis=-1)
    level = (rounded[..., None, :] == rounded[..., :, None]).sum(axis=-1)
    return 1.0 + above + (level - 1) / 2.0


def bootstrap_ranks(values: np.ndarray, index_chunks: Iterable[np.ndarray]) -> np.ndarray:
    """Each system's rank in each resample: (resamples x systems), from ``values`` (queries x systems).

    ``index_chunks`` yields row blocks of the resampling index matrix (:func:`bootstrap_indices`).

    >>> values = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])  # 3 queries, 2 systems
    >>> bootstrap_ranks(values, [np.array([[0, 0, 2], [1, 2, 2], [0, 1, 2]])]).tolist()
    [[1.0, 2.0], [2.0, 1.0], [1.5, 1.5]]
    """
    values = np.asarray(values, dtype=np.float64)
    blocks = [_ranks(values[rows].mean(axis=1)) for rows in index_chunks]
    return np.concatenate(blocks) if blocks else np.empty((0, values.shape[1]))


def _chunk_ranks(values: list[np.ndarray], rows: np.ndarray) -> list[np.ndarray]:
    """Each metric's (resamples x systems) ranks over one chunk of resampled query indices."""
    return [bootstrap_ranks(table, [rows]) for table in values]


def _comparison(comparisons: Sequence[Comparison], metric: str, a: str, b: str) -> Comparison:
    for c in comparisons:
        if c.metric == metric and {c.system_a, c.system_b} == {a, b}:
            return c
    raise ValueError(f"no comparison of {a!r} and {b!r} on {metric!r}: the tie groups need each group's leader "
                     "compared with every system below it (compare all pairs)")


def tie_groups(systems: Sequence[str], means: Sequence[float], comparisons: Sequence[Comparison], metric: str,
               mean_ranks: Sequence[float] | None = None) -> dict[str, int]:
    """System -> tie group (1 = the best's), by the rule of the module docstring.

    >>> def c(a, b, significant):  # a fake comparison: Holm p and interval agree with ``significant``
    ...     return Comparison(a, b, "m", 0.1, 0.05 if significant else -0.05, 0.2, 0.01, 0.01 if significant else 0.5, 30, 30)
    >>> tie_groups(["A", "B", "C"], [0.9, 0.8, 0.5], [c("A", "B", False), c("A", "C", True), c("B", "C", True)], "m")
    {'A': 1, 'B': 1, 'C': 2}
    """
    tiebreak = list(mean_ranks) if mean_ranks is not None else [0.0] * len(systems)
    order = sorted(range(len(systems)), key=lambda i: (-round(float(means[i]), _DECIMALS), tiebreak[i], i))
    remaining = [systems[i] for i in order]
    groups: dict[str, int] = {}
    group = 0
    while remaining:
        group += 1
        leader, rest = remaining[0], remaining[1:]
        members = [leader, *[s for s in rest if not _comparison(comparisons, metric, leader, s).significant]]
        groups.update({s: group for s in members})
        remaining = [s for s in rest if s not in members]
    return {s: groups[s] for s in systems}


def leaderboard(per_query: pd.DataFrame, metric: str, comparisons: Sequence[Comparison], n_samples: int = 5000,
                seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """The leaderboard of one metric (:data:`LEADERBOARD_COLUMNS`), rows by group then mean, highest first.

    ``per_query``: ``system``, ``query_id`` and the ``metric`` column, every system on the same
    queries in the same order (``per_query.csv``). ``comparisons``: those of the run (see
    :func:`tie_groups`). The resamples are ``bootstrap_indices(n_queries, n_samples, seed)``.
    """
    return leaderboards(per_query, [metric], comparisons, n_samples, seed, confidence)


def leaderboards(per_query: pd.DataFrame, metrics: Sequence[str], comparisons: Sequence[Comparison],
                 n_samples: int = 5000, seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """:func:`leaderboard` of every metric, one after the other, the resamples drawn once for them all."""
    systems = list(dict.fromkeys(per_query["system"]))
    by_system = [per_query[per_query["system"] == s] for s in systems]
    if len({len(rows) for rows in by_system}) != 1:
        raise ValueError("per_query: every system must be evaluated on the same queries")
    # one contiguous (queries x systems) array per metric: the resampled rows are gathered from it
    values = [np.column_stack([rows[m].to_numpy(dtype=np.float64) for rows in by_system]) for m in metrics]
    n_queries = len(by_system[0]) if systems else 0
    chunks = over_resamples(_chunk_ranks, values, n_queries, n_samples, seed)  # here, or on an engine's workers
    blocks = [[chunk[k] for chunk in chunks] for k in range(len(metrics))]
    frames = []
    for k, metric in enumerate(metrics):
        ranks = np.concatenate(blocks[k])
        mean_rank = ranks.mean(axis=0)
        low, high = percentile_interval(np.sort(ranks, axis=0), confidence)
        means = np.array([math.fsum(column.tolist()) / len(column) for column in values[k].T])
        groups = tie_groups(systems, means.tolist(), comparisons, metric, mean_rank.tolist())
        frame = pd.DataFrame({"metric": metric, "group": [groups[s] for s in systems], "system": systems,
                              "mean": means, "rank": _ranks(means), "mean_rank": mean_rank, "rank_ci_low": low,
                              "rank_ci_high": high})
        frame["_order"] = [(-round(float(m), _DECIMALS), r, i) for i, (m, r) in enumerate(zip(means, mean_rank))]
        frames.append(frame.sort_values(["group", "_order"], kind="stable").drop(columns="_order"))
    if not frames:
        return pd.DataFrame(columns=LEADERBOARD_COLUMNS)
    return pd.concat(frames, ignore_index=True)[LEADERBOARD_COLUMNS]
