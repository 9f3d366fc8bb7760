"""Effect size and power of a paired comparison: how big is the difference, and how many queries would tell it.

For one comparison ``a - b`` on one metric, ``d_i`` is the difference on query i (n queries):

wins, ties, losses
    queries with ``d_i > 0`` (a scores higher), ``d_i = 0``, ``d_i < 0``.
effect_size
    the paired standardised mean difference ``d_z = mean(d) / sd(d)``, ``sd`` with ``ddof=1``. When
    every ``d_i`` is equal (``sd = 0``): 0 if they are all 0, else ``+-inf`` (a shift that no query
    contradicts). NaN with fewer than 2 queries (no ``sd``).
power of the paired t-test (:func:`paired_t_power`)
    two-sided, level alpha, n pairs, standardised effect ``d_z``: with ``df = n - 1``, noncentrality
    ``lambda = d_z * sqrt(n)`` and ``c = t_(1 - alpha/2, df)``, power = ``P(T > c) + P(T < -c)`` for T
    noncentral t with noncentrality lambda, the lower tail read as ``P(T' > c)`` for T' of noncentrality
    ``-lambda`` (the same number; see :func:`paired_t_power`). statsmodels' ``TTestPower`` computes the
    same (the tests check it). ``d_z = +-inf`` has power 1.
detectable_difference
    the smallest difference, in metric units, that the test detects with probability ``power``
    (0.8) with these n queries and this paired variance: ``delta* = d_z* * sd(d)``, where ``d_z* > 0``
    solves ``paired_t_power(d_z*, n, alpha) = power`` (bisection to 1e-14: power rises with d_z). 0 when
    ``sd = 0``; NaN with fewer than 2 queries.
queries_needed
    Sakai's (2016) topic set size design for the paired t-test, *Topic set size design*, Information
    Retrieval Journal 19(3): the smallest n >= 2 with ``paired_t_power(|mean(d)| / sd(d), n, alpha) >=
    power``, taking the observed difference and its observed ``sd`` as the truth, found by doubling
    then bisection on n (power rises with n). ``None`` when the observed difference is 0 (no number of
    queries detects it) or would need more than 2^53 queries; 2 when ``sd = 0`` and the difference is not.

effect_size_anova, effect_size_anova_low, effect_size_anova_high (:func:`anova_effect_sizes`)
    Sakai's (2014) standardised mean difference for several systems, "Statistical reform in
    information retrieval?", SIGIR Forum 48(1): the difference of the two systems' means over the
    square root of the residual variance ``V_E`` of the two-way ANOVA without replication (systems x
    queries) of *every* system of the run on that metric, ``ES_E = (mean_a - mean_b) / sqrt(V_E)``,
    ``V_E = sum_ij (x_ij - x_i. - x_.j + x..)^2 / ((n - 1)(k - 1))`` over n queries and k systems
    (0 when every residual is at rounding level, 1e-12 of the largest score).
    The query effect is taken out once for all systems, so every pair is measured in the same unit
    (d_z's unit changes from pair to pair). Its interval is the t interval of the difference with that
    pooled variance, ``(mean_a - mean_b) +- t_(1 - alpha/2, (n-1)(k-1)) * sqrt(2 V_E / n)``, divided by
    ``sqrt(V_E)``: ``ES_E +- t * sqrt(2 / n)`` (V_E taken as known: its own sampling error is left
    out, so the interval is too narrow for a large ES_E, the more so on few queries). With two
    systems ``V_E = var(d) / 2``, so ``ES_E = sqrt(2) d_z``. When ``V_E = 0``: 0 for no difference,
    else ``+-inf``, and no interval (NaN); NaN with fewer than 2 queries or 2 systems.

alpha is the comparison's (1 - ``confidence``; by default :data:`harness.core.options.ALPHA`, derived from the default
confidence); power defaults to :data:`POWER`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
# scipy.special's distribution functions, not scipy.stats: importing scipy.stats takes about a second,
# more than a whole comparison of the bundled corpus; scipy.stats.t reads its quantiles from stdtrit and
# scipy.stats.nct its cdf from nctdtr
from scipy.special import nctdtr, stdtrit

from harness.core.options import ALPHA
from harness.core.statistics import Comparison

__all__ = ["EFFECT_COLUMNS", "POWER", "POWER_COLUMNS", "PowerAnalysis", "anova_effect_sizes", "detectable_effect",
           "paired_power", "paired_t_power", "power_table", "queries_needed", "residual_variance"]

#: The power the detectable difference and the queries needed are computed for.
POWER = 0.8
#: Sakai's effect size over every system of the run and its interval (:func:`anova_effect_sizes`).
EFFECT_COLUMNS = ["effect_size_anova", "effect_size_anova_low", "effect_size_anova_high"]
#: The columns a comparison gains (``comparisons.csv``), in order.
POWER_COLUMNS = ["wins", "ties", "losses", "effect_size", "detectable_difference", "queries_needed", *EFFECT_COLUMNS]
_MOST_QUERIES = 2**53  # beyond, n is no longer an exact float and no collection is that large


def paired_t_power(effect_size: float, n: int, alpha: float = ALPHA) -> float:
    """Power of the two-sided paired t-test at level ``alpha`` with ``n`` pairs and standardised effect ``d_z``.

    >>> round(paired_t_power(0.5, 20), 4), round(paired_t_power(0.0, 20), 4)  # no effect: power = alpha
    (0.5645, 0.05)
    """
    if n < 2:
        raise ValueError("the paired t-test needs at least 2 pairs")
    if math.isinf(effect_size):
        return 1.0
    df = n - 1
    critical = -float(stdtrit(df, alpha / 2.0))  # t_(1 - alpha/2, df), by the symmetry of t
    noncentrality = effect_size * math.sqrt(n)
    # the lower tail P(T < -c) read as P(T' > c) for T' of noncentrality -lambda: the noncentral t's cdf gives
    # NaN far into that tail (df 3, lambda 8, c 3.18), while 1 - cdf at +c stays a number
    upper = 1.0 - float(nctdtr(df, noncentrality, critical))
    lower = 1.0 - float(nctdtr(df, -noncentrality, critical))
    return min(1.0, max(0.0, upper) + max(0.0, lower))


@lru_cache(maxsize=256)  # every comparison of a run shares n and alpha: solved once
def detectable_effect(n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The standardised effect ``d_z* > 0`` the paired t-test detects with probability ``power`` with ``n`` pairs.

    >>> round(detectable_effect(20), 4)
    0.6604
    """
    if n < 2:
        return math.nan
    low, high = 0.0, 1.0
    while paired_t_power(high, n, alpha) < power:
        low, high = high, high * 2.0
    # bisection: power rises with the effect, so power(low) < target <= power(high) throughout
    while high - low > 1e-14 * max(1.0, high):
        middle = (low + high) / 2.0
        if paired_t_power(middle, n, alpha) < power:
            low = middle
        else:
            high = middle
    return high


def queries_needed(effect_size: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """The smallest n >= 2 whose paired t-test has at least ``power`` for ``|effect_size|``; see the module docstring.

    >>> queries_needed(0.5), queries_needed(0.0), queries_needed(float("inf"))
    (34, None, 2)
    """
    effect = abs(effect_size)
    if effect == 0.0 or math.isnan(effect):
        return None
    if paired_t_power(effect, 2, alpha) >= power:
        return 2
    low, high = 2, 4  # power(low) < target <= power(high) once the doubling stops
    while paired_t_power(effect, high, alpha) < power:
        low, high = high, high * 2
        if high > _MOST_QUERIES:
            return None
    while high - low > 1:
        middle = (low + high) // 2
        if paired_t_power(effect, middle, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


@dataclass(frozen=True)
class PowerAnalysis:
    """The numbers :data:`POWER_COLUMNS` names, for one comparison (the ANOVA effect size NaN where
    it was not computed: :func:`paired_power` sees one pair only)."""

    wins: int
    ties: int
    losses: int
    effect_size: float
    detectable_difference: float
    queries_needed: int | None
    effect_size_anova: float = math.nan
    effect_size_anova_low: float = math.nan
    effect_size_anova_high: float = math.nan


def paired_power(differences: np.ndarray, alpha: float = ALPHA, power: float = POWER) -> PowerAnalysis:
    """Wins/ties/losses, ``d_z``, the detectable difference and the queries needed for per-query ``a - b``.

    >>> r = paired_power(np.array([0.5, 0.25, 0.0, 0.25]))  # mean 0.25, sd sqrt(0.125 / 3)
    >>> r.wins, r.ties, r.losses, round(r.effect_size, 4), round(r.detectable_difference, 4), r.queries_needed
    (3, 1, 0, 1.2247, 0.4344, 8)
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    n = len(d)
    wins, ties, losses = int(np.sum(d > 0)), int(np.sum(d == 0)), int(np.sum(d < 0))
    if n < 2:
        return PowerAnalysis(wins, ties, losses, math.nan, math.nan, None)
    mean = math.fsum(d.tolist()) / n
    # every d_i equal: sd is 0, which np.std misses by a rounding of the mean (six times -0.1)
    sd = 0.0 if d.min() == d.max() else float(np.std(d, ddof=1))
    if sd == 0.0:
        effect = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
        return PowerAnalysis(wins, ties, losses, effect, 0.0, None if mean == 0.0 else 2)
    effect = mean / sd
    return PowerAnalysis(wins, ties, losses, effect, detectable_effect(n, alpha, power) * sd,
                         queries_needed(effect, alpha, power))


def residual_variance(scores: np.ndarray) -> float:
    """The residual mean square of the two-way ANOVA without replication of ``scores`` (queries x
    systems): ``sum (x_ij - x_i. - x_.j + x..)^2 / ((n - 1)(k - 1))``; NaN under 2 queries or 2 systems.

    >>> round(residual_variance(np.array([[0.2, 0.4], [0.6, 0.6], [0.1, 0.5]])), 12)  # var(d) / 2 = 0.04 / 2
    0.02
    """
    scores = np.asarray(scores, dtype=np.float64)
    n, k = scores.shape
    if n < 2 or k < 2:
        return math.nan
    residuals = scores - scores.mean(axis=1, keepdims=True) - scores.mean(axis=0, keepdims=True) + scores.mean()
    # residuals at rounding level (each system a constant shift of another) are none: V_E = 0, as d_z's sd = 0
    if np.abs(residuals).max() <= 1e-12 * max(1.0, float(np.abs(scores).max())):
        return 0.0
    return math.fsum((residuals * residuals).ravel().tolist()) / ((n - 1) * (k - 1))


def anova_effect_sizes(scores: np.ndarray, pairs: Sequence[tuple[int, int]],
                       alpha: float = ALPHA) -> list[tuple[float, float, float]]:
    """Sakai's ES_E of each pair (columns a, b of ``scores``, queries x systems) and its interval
    (module docstring).

    >>> scores = np.array([[0.2, 0.4], [0.6, 0.6], [0.1, 0.5]])  # d = (-0.2, 0, -0.4): d_z = -1.0
    >>> [round(v, 4) for v in anova_effect_sizes(scores, [(0, 1)])[0]]  # sqrt(2) d_z; +- t(0.975, 2) sqrt(2/3)
    [-1.4142, -4.9273, 2.0989]
    """
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[0]
    variance = residual_variance(scores)
    means = [math.fsum(column.tolist()) / n if n else math.nan for column in scores.T]
    if math.isnan(variance):
        return [(math.nan, math.nan, math.nan) for _ in pairs]
    half = -float(stdtrit((n - 1) * (scores.shape[1] - 1), alpha / 2.0)) * math.sqrt(2.0 / n)
    out = []
    for a, b in pairs:
        difference = means[a] - means[b]
        if variance == 0.0:
            effect = 0.0 if difference == 0.0 else math.copysign(math.inf, difference)
            out.append((effect, math.nan, math.nan))
            continue
        effect = difference / math.sqrt(variance)
        out.append((effect, effect - half, effect + half))
    return out


def power_table(per_query: pd.DataFrame, comparisons: Sequence[Comparison], power: float = POWER) -> pd.DataFrame:
    """``system_a``, ``system_b``, ``metric`` and :data:`POWER_COLUMNS` for each comparison, in order.

    ``per_query``: ``system``, ``query_id`` and a column per metric, every system on the same queries
    in the same order (``per_query.csv``); each comparison's own ``alpha`` is used. The ANOVA effect
    size's residual variance is over every system of ``per_query`` on the comparison's metric.
    """
    rows = []
    # each system's rows once (a filter per comparison and side costs more than all the power figures)
    by_system = {system: frame for system, frame in per_query.groupby("system", sort=False)}
    # the ANOVA effect sizes of each metric at once: V_E is one per metric, not one per comparison
    position = {system: k for k, system in enumerate(by_system)}
    wanted: dict[tuple[str, float], list[tuple[int, int]]] = {}
    for c in comparisons:
        wanted.setdefault((c.metric, c.alpha), []).append((position[c.system_a], position[c.system_b]))
    effects = {(metric, alpha): iter(anova_effect_sizes(
                   np.column_stack([frame[metric].to_numpy(dtype=np.float64) for frame in by_system.values()]),
                   pairs, alpha))
               for (metric, alpha), pairs in wanted.items()}
    for c in comparisons:
        a = by_system[c.system_a][c.metric].to_numpy(dtype=np.float64)
        b = by_system[c.system_b][c.metric].to_numpy(dtype=np.float64)
        if len(a) != len(b) or len(a) != c.n_queries:
            raise ValueError(f"per_query does not hold {c.n_queries} queries for both {c.system_a!r} and {c.system_b!r}")
        rows.append({"system_a": c.system_a, "system_b": c.system_b, "metric": c.metric,
                     **asdict(paired_power(a - b, c.alpha, power)),
                     **dict(zip(EFFECT_COLUMNS, next(effects[(c.metric, c.alpha)])))})
    frame = pd.DataFrame(rows, columns=["system_a", "system_b", "metric", *POWER_COLUMNS])
    frame["queries_needed"] = frame["queries_needed"].astype("Int64")  # whole numbers, empty when None
    return frame
