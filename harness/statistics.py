"""Paired statistics over queries: bootstrap intervals, randomisation tests, Holm adjustment.

The query is the independent unit, so both procedures resample or flip whole per-query
differences. Every comparison of one ``bench compare`` uses the same resampled query sets (one
index matrix drawn from ``seed``), which keeps the intervals paired across systems and metrics
and makes the output a pure function of (inputs, seed). Vectorised in bounded chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_CHUNK_CELLS = 1 << 23  # resample x query cells drawn at once; bounds peak memory


def bootstrap_indices(n_queries: int, n_samples: int, seed: int):
    """Yield chunks of the (n_samples x n_queries) resampling index matrix.

    Drawn with ``numpy.random.default_rng(seed).integers(0, n_queries, ...)`` row by row, which
    is the same stream as the article's loop of ``rng.choice(d, size=len(d))``.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_CELLS // max(1, n_queries))
    for start in range(0, n_samples, rows):
        yield rng.integers(0, n_queries, size=(min(rows, n_samples - start), n_queries))


def bootstrap_means(differences: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """Resampled means of each column of ``differences`` (queries x comparisons), sorted per column.

    >>> d = np.array([[0.1], [0.3], [-0.2]])
    >>> bootstrap_means(d, 4, seed=0).shape
    (4, 1)
    """
    differences = np.asarray(differences, dtype=np.float64)
    if differences.ndim == 1:
        differences = differences[:, None]
    n_queries = differences.shape[0]
    chunks = []
    for idx in bootstrap_indices(n_queries, n_samples, seed):
        # mean over the resampled rows, for every comparison column at once
        chunks.append(differences[idx].mean(axis=1))
    means = np.concatenate(chunks, axis=0)
    means.sort(axis=0)
    return means


def percentile_interval(sorted_means: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval read off sorted resampled means.

    For B resamples the bounds are the sorted means at ``floor(B * (1 - c) / 2)`` and
    ``B - 1 -`` that index: 125 and 4874 for B = 5,000 and c = 0.95, as in the article.
    """
    n = sorted_means.shape[0]
    low = int(np.floor(n * (1.0 - confidence) / 2.0 + 1e-9))
    return sorted_means[low], sorted_means[n - 1 - low]


def randomisation_p_values(differences: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """Two-sided paired randomisation (sign-flip) p-value per column of ``differences``.

    p = (1 + #{flips with |mean| >= |observed mean|}) / (1 + n_samples); signs come from a stream
    independent of the bootstrap's (``SeedSequence(seed).spawn(1)``).

    >>> float(randomisation_p_values(np.zeros((5, 1)), 99, seed=0)[0])
    1.0
    """
    differences = np.asarray(differences, dtype=np.float64)
    if differences.ndim == 1:
        differences = differences[:, None]
    n_queries = differences.shape[0]
    observed = np.abs(differences.mean(axis=0))
    total = differences.sum(axis=0)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    rows = max(1, _CHUNK_CELLS // max(1, n_queries))
    extreme = np.zeros(differences.shape[1], dtype=np.int64)
    tolerance = 1e-12 * np.maximum(1.0, observed)
    for start in range(0, n_samples, rows):
        m = min(rows, n_samples - start)
        bits = np.unpackbits(rng.integers(0, 256, size=(m, (n_queries + 7) // 8), dtype=np.uint8), axis=1)
        positive = bits[:, :n_queries].astype(np.float64)
        # a flip keeps d where the bit is 1 and negates it elsewhere: mean = (2 * kept - total) / n
        flipped = np.abs((2.0 * (positive @ differences) - total) / n_queries)
        extreme += (flipped >= observed - tolerance).sum(axis=0)
    return (1.0 + extreme) / (1.0 + n_samples)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1).

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def too_few_queries(n_differing: int, alpha: float = 0.05) -> bool:
    """True when even the most lopsided sign pattern could not reach ``alpha``.

    With m non-zero paired differences the smallest exact two-sided sign-flip p-value is 2 / 2^m;
    below m = 6 no difference can be called real at 0.05, whatever the data.

    >>> too_few_queries(5), too_few_queries(6)
    (True, False)
    """
    return 2.0 / 2.0**n_differing > alpha


@dataclass(frozen=True)
class Comparison:
    system_a: str
    system_b: str
    metric: str
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    n_queries: int
    n_differing: int  # queries on which the two systems score differently

    @property
    def significant(self) -> bool:
        """The Holm-adjusted p is below 0.05 and the interval excludes zero."""
        return self.p_adjusted < 0.05 and not (self.ci_low <= 0.0 <= self.ci_high)

    @property
    def verdict(self) -> str:
        if self.n_differing == 0:
            return "identical on every query"
        if too_few_queries(self.n_differing):
            return f"too few differing queries to tell ({self.n_differing} of {self.n_queries})"
        if self.significant:
            return f"{self.system_a if self.mean_diff > 0 else self.system_b} is better"
        return "no clear difference"


def compare_systems(
    per_query: dict[str, dict[str, np.ndarray]],
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str],
    n_samples: int = 5000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Comparison]:
    """Every (pair, metric): mean difference a - b, bootstrap interval, randomisation and Holm p.

    ``per_query[system][metric]`` holds per-query values aligned on the same queries. Holm runs
    across the comparisons of one metric.
    """
    if not pairs or not metrics:
        return []
    columns = [(a, b, m) for m in metrics for a, b in pairs]
    differences = np.column_stack([per_query[a][m] - per_query[b][m] for a, b, m in columns])
    n_queries = differences.shape[0]
    sorted_means = bootstrap_means(differences, n_samples, seed)
    low, high = percentile_interval(sorted_means, confidence)
    p_values = randomisation_p_values(differences, n_samples, seed)
    adjusted = np.empty_like(p_values)
    for m in metrics:
        where = [i for i, c in enumerate(columns) if c[2] == m]
        adjusted[where] = holm(p_values[where])
    means = differences.mean(axis=0)
    return [
        Comparison(a, b, m, float(means[i]), float(low[i]), float(high[i]), float(p_values[i]),
                   float(adjusted[i]), n_queries, int(np.count_nonzero(differences[:, i])))
        for i, (a, b, m) in enumerate(columns)
    ]
