"""k-fold cross-validation of a parameter choice over queries, from per-query values of every grid point.

Every grid point is evaluated once on every query (``values``: points x queries); a fold is then
only a selection of columns, so cross-validating costs nothing next to the retrieval.

Folds (:func:`assign_folds`)
    The queries are shuffled by a permutation drawn from numpy PCG64 seeded with
    ``SeedSequence(seed).spawn(2)[1]`` (a stream of its own: the bootstrap keeps the article's
    ``default_rng(seed)``), then dealt to folds 1, 2, ..., k, 1, 2, ... so fold sizes differ by at
    most one. Stratified by a facet, the queries of each cell (in the order of the cells' labels)
    are shuffled and dealt in turn, the dealing carrying on from cell to cell, so every fold gets
    its share of each cell (within one query) and fold sizes still differ by at most one.
Choice (:func:`cross_validate`)
    For fold f, the *training* queries are those of the other folds: the point with the highest
    mean over them is fold f's choice, ties going to the first point in grid order; its values on
    fold f's queries are their *held-out* values. Every query is held out exactly once.
Numbers
    The cross-validated estimate is the mean over all queries of the held-out values: the score of
    the procedure "pick the best point on other queries", which never sees the queries it is scored
    on. The *in-sample best* is the highest mean of one point over all queries, the point chosen
    on the very queries it is then scored on: optimistic, since the maximum of many noisy means
    is biased upwards. Its point is the parameters finally chosen (all queries are the best data to
    choose with; the cross-validated estimate is what to expect of them on new queries). Means are
    exactly rounded (``math.fsum / n``, :func:`harness.core.evaluation.mean_over_queries`), so a tie is a
    tie whatever the order of the queries.
Intervals (:func:`intervals`)
    Paired percentile bootstrap over queries (:func:`harness.core.statistics.bootstrap_means`, the
    query is the unit): the estimate's interval resamples the held-out values; the differences
    estimate - default and in-sample best - estimate resample each query's differences, every
    column on the same resampled queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.errors import RetbenchError
from harness.core.evaluation import mean_over_queries
from harness.core.statistics import bootstrap_means, percentile_interval

__all__ = ["FOLD_STREAM", "CrossValidation", "assign_folds", "cross_validate", "intervals"]

#: Where the fold permutation comes from (recorded in the manifest).
FOLD_STREAM = ("numpy PCG64 seeded with SeedSequence(seed).spawn(2)[1]: one permutation per stratum (all queries "
               "when not stratified), in stratum order, dealt to folds round robin")


def assign_folds(n_queries: int, folds: int, seed: int, strata: Sequence[str] | None = None,
                 stratum_order: Sequence[str] | None = None) -> np.ndarray:
    """The fold (0-based) of each query; see the module docstring.

    ``strata``: each query's cell, or None; ``stratum_order``: the order cells are dealt in
    (default: sorted).

    >>> assign_folds(7, 3, seed=0).tolist()
    [1, 2, 0, 1, 2, 0, 0]
    >>> folds = assign_folds(8, 2, seed=0, strata=["a", "a", "a", "a", "b", "b", "b", "b"])
    >>> [int((folds[:4] == 0).sum()), int((folds[4:] == 0).sum())]  # each fold gets half of each cell
    [2, 2]
    """
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise RetbenchError(f"`folds` must be an int >= 2 (one fold to choose on, one to score on). Got {folds!r} "
                            "instead. Fix: pass e.g. `folds=5`")
    if n_queries < 2:
        raise RetbenchError(f"cross-validation needs at least 2 queries with a relevant judgment; there are "
                            f"{n_queries}. Fix: use a corpus with more judged queries, or check `rel_threshold`")
    if folds > n_queries:
        raise RetbenchError(f"{folds} folds need at least {folds} queries with a relevant judgment; there are "
                            f"{n_queries}. Fix: pass `folds={n_queries}` or fewer")
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])
    if strata is None:
        groups = [np.arange(n_queries)]
    else:
        if len(strata) != n_queries:
            raise ValueError("strata must give one cell per query")
        labels = np.asarray(list(strata), dtype=object)
        order = list(stratum_order) if stratum_order is not None else sorted(set(labels.tolist()))
        groups = [np.flatnonzero(labels == cell) for cell in order]
    fold_of = np.full(n_queries, -1, dtype=np.int64)
    dealt = 0
    for members in groups:
        shuffled = members[rng.permutation(len(members))]
        fold_of[shuffled] = (dealt + np.arange(len(members))) % folds
        dealt += len(members)
    if (fold_of < 0).any():
        raise ValueError("stratum_order leaves out a cell of strata")
    return fold_of


@dataclass(frozen=True)
class CrossValidation:
    """The choice of each fold and what it scores; every array is indexed as documented."""

    fold_of: np.ndarray  # per query: its fold (0-based)
    means: np.ndarray  # per point: mean over all queries
    train_means: np.ndarray  # points x folds: mean over the fold's training queries
    test_means: np.ndarray  # points x folds: mean over the fold's own (held-out) queries
    choices: np.ndarray  # per fold: the point chosen on its training queries
    held_out: np.ndarray  # per query: the value of its fold's choice
    best: int  # the point with the highest mean over all queries (the final choice)

    @property
    def estimate(self) -> float:
        """The cross-validated estimate: mean of the held-out values over all queries."""
        return mean_over_queries(self.held_out)

    @property
    def in_sample_best(self) -> float:
        """The best point's mean on all queries, where it was chosen (optimistic)."""
        return float(self.means[self.best])


def _first_best(means: np.ndarray) -> int:
    """The index of the highest mean, the first in grid order among equals."""
    return int(np.flatnonzero(means == means.max())[0])


def cross_validate(values: np.ndarray, fold_of: np.ndarray) -> CrossValidation:
    """Cross-validate a choice among the rows of ``values`` (points x queries) over ``fold_of``'s folds."""
    values = np.asarray(values, dtype=np.float64)
    n_points, n_queries = values.shape
    folds = int(fold_of.max()) + 1
    members = [np.flatnonzero(fold_of == f) for f in range(folds)]
    rest = [np.flatnonzero(fold_of != f) for f in range(folds)]
    means = np.array([mean_over_queries(row) for row in values])
    train = np.array([[mean_over_queries(row[rest[f]]) for f in range(folds)] for row in values])
    test = np.array([[mean_over_queries(row[members[f]]) for f in range(folds)] for row in values])
    train, test = train.reshape(n_points, folds), test.reshape(n_points, folds)
    choices = np.array([_first_best(train[:, f]) for f in range(folds)], dtype=np.int64)
    held_out = values[choices[fold_of], np.arange(n_queries)]
    return CrossValidation(fold_of, means, train, test, choices, held_out, _first_best(means))


def intervals(columns: np.ndarray, n_samples: int, seed: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap bounds of the mean of each column of ``columns`` (queries x columns), all
    columns on the same resampled queries."""
    low, high = percentile_interval(bootstrap_means(columns, n_samples, seed), confidence)
    return np.atleast_1d(low), np.atleast_1d(high)
