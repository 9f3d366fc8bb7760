"""The randomised Tukey HSD: every pair of several systems tested at once, over the largest range of means.

Carterette (2012), "Multiple testing in statistical analysis of systems-based information retrieval
experiments", ACM TOIS 30(1), section 4 (and Sakai's topic-set design after it). With k systems
scored on n queries (``scores``, queries x systems), the null hypothesis is that on every query the
k scores are exchangeable: which system produced which score does not matter. One permutation
shuffles each query's row of scores across the systems (each query on its own) and records the
largest difference of the systems' sums over the queries (the range, ``max - min``: the largest
difference of means times n). A pair's adjusted p is the share of permutations whose range is at
least the pair's observed absolute difference::

    p(a, b) = (1 + #{permutations with range >= |sum_a - sum_b|}) / (1 + permutations)

(the paper divides the count by the permutations alone; adding the observed labelling, as every
Monte Carlo p of :mod:`harness.core.statistics` does, keeps p above 0). Because every pair is read
against the same maximum, the family-wise error over all the pairs is controlled at once, without
Holm's step-down; with many systems it is less conservative than Holm over all pairs, because the
pairs' statistics are strongly dependent (:file:`benchmarks/tukey_power.py`). Ties within a tiny
relative tolerance count as "as extreme" (a permutation that mathematically equals the observed
difference must not lose to rounding).

The permutations come from their own stream (:data:`TUKEY_STREAM`), independent of the bootstrap's
and of the sign flips', so the number of resamples or flips never moves a Tukey p. They are drawn a
chunk of permutations at a time with ``Generator.permuted`` along the systems, which shuffles each
query's row in turn exactly as a loop of ``Generator.shuffle`` over the permutations and the
queries would (the paper's loop; the tests hold the two equal), so the chunking never changes a value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["TUKEY_STREAM", "tukey_generator", "tukey_hsd_p_values"]

#: Where the permutations come from (recorded in the manifest).
TUKEY_STREAM = ("numpy PCG64 seeded with SeedSequence(seed, spawn_key=(0, 0)) (independent of the bootstrap's and "
                "the sign flips' streams); each permutation shuffles every query's scores across the systems, query "
                "after query (Generator.permuted along the systems)")
_CHUNK_CELLS = 1 << 20  # permutation x query x system cells drawn at once; bounds peak memory


def tukey_generator(seed: int) -> np.random.Generator:
    """The generator of the Tukey HSD's permutations for ``seed`` (:data:`TUKEY_STREAM`)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, 0)))


def tukey_hsd_p_values(scores: np.ndarray, pairs: Sequence[tuple[int, int]], permutations: int,
                       seed: int) -> np.ndarray:
    """The randomised Tukey HSD's adjusted p of each pair (columns ``a``, ``b`` of ``scores``).

    ``scores``: (queries x systems), every system on the same queries (a weighted score, such as a
    suite's ``x / (K n_c)``, works alike: the statistic is the range of the columns' sums). The range
    is taken over every column of ``scores``, so pass the systems of the family and only them.

    >>> scores = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3]])
    >>> tukey_hsd_p_values(scores, [(0, 1)], 99, seed=0).tolist()  # 2 of the 2^3 labellings are as extreme
    [0.3]
    >>> float(tukey_hsd_p_values(np.ones((4, 3)), [(0, 2)], 9, seed=0)[0])  # identical systems
    1.0
    """
    scores = np.asarray(scores, dtype=np.float64)
    n_queries, n_systems = scores.shape
    totals = scores.sum(axis=0)
    observed = np.array([abs(totals[a] - totals[b]) for a, b in pairs], dtype=np.float64)
    threshold = observed - 1e-12 * max(1.0, float(np.abs(scores).sum()))
    extreme = np.zeros(len(pairs), dtype=np.int64)
    rng = tukey_generator(seed)
    rows = max(1, _CHUNK_CELLS // max(1, n_queries * n_systems))
    labels = np.arange(n_systems)
    for start in range(0, permutations, rows):
        size = min(rows, permutations - start)
        # permuting the labels consumes the stream exactly as permuting the scores would
        order = rng.permuted(np.broadcast_to(labels, (size, n_queries, n_systems)), axis=2)
        sums = np.take_along_axis(np.broadcast_to(scores, order.shape), order, axis=2).sum(axis=1)
        ranges = sums.max(axis=1) - sums.min(axis=1)
        extreme += (ranges[:, None] >= threshold[None, :]).sum(axis=0)
    return (1.0 + extreme) / (1.0 + permutations)
