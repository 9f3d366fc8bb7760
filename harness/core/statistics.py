"""Paired statistics over queries: bootstrap intervals, randomisation tests, Holm adjustment.

The query is the independent unit, so both procedures resample or flip whole per-query
differences. Every comparison of one ``bench compare`` uses the same resampled query sets (one
index matrix drawn from ``seed``), which keeps the intervals paired across systems and metrics
and makes the output a pure function of (inputs, seed). Vectorised in bounded chunks.

The randomisation test is exact (every sign pattern) when at most :data:`EXACT_UP_TO` queries
differ, else Monte Carlo with its own number of flips and its own random stream, so the bootstrap's
size never moves a p-value. Holm adjusts within a declared family (:data:`FAMILIES`), or the
randomised Tukey HSD over the systems of each metric (``family="tukey"``, :mod:`harness.core.tukey`);
alpha is 1 - confidence; a comparison whose most extreme outcome could not reach alpha after Holm says
"too few ... to tell" (:func:`smallest_adjusted_p`).

One module (over 400 lines): the bootstrap, the two tests and Holm are the steps of one paired
comparison (:class:`Comparison`, :func:`compare_systems`) and share its resampling streams.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.engines.parallel import ChunkMapper
from harness.core.options import (ALPHA, BOOTSTRAP_SAMPLES, CONFIDENCE, FAMILIES, FAMILY, PERMUTATIONS, SEED, TUKEY,
                                  Statistics, alpha_of)
from harness.core.tukey import TUKEY_STREAM, tukey_hsd_p_values

_CHUNK_CELLS = 1 << 20  # resample x query cells drawn at once; bounds peak memory
_SLICE = 1 << 16  # resample x query cells averaged at once (the temporaries fit a core's cache)

Progress = Callable[[int, int], None]


def _rows_per_chunk(n_queries: int) -> int:
    return max(1, _CHUNK_CELLS // max(1, n_queries))


def _draw_indices(rng: np.random.Generator, rows: int, n_queries: int) -> np.ndarray:
    return rng.integers(0, n_queries, size=(rows, n_queries))


def _draw_sign_bytes(rng: np.random.Generator, rows: int, n_queries: int) -> np.ndarray:
    return rng.integers(0, 256, size=(rows, (n_queries + 7) // 8), dtype=np.uint8)


def bootstrap_indices(n_queries: int, n_samples: int, seed: int) -> Iterator[np.ndarray]:
    """Yield chunks of the (n_samples x n_queries) resampling index matrix, in row order.

    ``numpy.random.default_rng(seed).integers(0, n_queries, ...)`` drawn a chunk of rows at a time:
    PCG64 keeps the unused half of a 64-bit word between calls, so the chunking never changes a
    value, and the stream is the article's loop of ``rng.choice(d, size=len(d))``. A re-implemented
    stream (PCG64 blocks drawn side by side on two threads) was slower (``benchmarks/bootstrap_speed.py``;
    numbers in ``benchmarks/RESULTS.md``).
    """
    rng = np.random.default_rng(seed)
    rows = _rows_per_chunk(n_queries)
    for start in range(0, n_samples, rows):
        yield _draw_indices(rng, min(rows, n_samples - start), n_queries)


def over_stream(function: Callable[[Any, np.ndarray], Any], shared: Any, rng: np.random.Generator, n_rows: int,
                n_queries: int, draw: Callable[[np.random.Generator, int, int], np.ndarray],
                progress: Progress | None = None, mapper: ChunkMapper | None = None) -> list[Any]:
    """``function(shared, chunk)`` for each chunk of ``n_rows`` rows drawn from ``rng`` by ``draw``
    (``draw(rng, rows, n_queries)``, :data:`_CHUNK_CELLS` cells a chunk), in order.

    Here, chunk after chunk. With an engine's chunk ``mapper`` (:mod:`harness.engines.parallel`), the chunks run
    on its workers: the generator's whole state is recorded at the start of each chunk (PCG64's
    position and its buffered half word) and the chunk drawn past, and a worker draws the chunk again
    from that state, the same rows bit for bit. (Jumping ahead instead is not exact: ``integers``
    rejects a data-dependent number of words, so where chunk i starts is known only by drawing.)
    """
    rows = _rows_per_chunk(n_queries)
    sizes = [min(rows, n_rows - start) for start in range(0, n_rows, rows)]
    if mapper is None:
        out, done = [], 0
        for size in sizes:
            out.append(function(shared, draw(rng, size, n_queries)))
            done += size
            if progress is not None:
                progress(done, n_rows)
        return out
    starts = []
    for size in sizes:
        starts.append((rng.bit_generator.state, size))
        draw(rng, size, n_queries)
    out = mapper.map(_redrawn, starts, (function, shared, draw, n_queries))
    if progress is not None:
        progress(n_rows, n_rows)
    return out


def _redrawn(shared: tuple[Callable[[Any, np.ndarray], Any], Any, Callable[..., np.ndarray], int],
             start: tuple[dict[str, Any], int]) -> Any:
    """One chunk of :func:`over_stream`, drawn again from the generator state at its start."""
    function, payload, draw, n_queries = shared
    state, size = start
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = state
    return function(payload, draw(rng, size, n_queries))


def over_resamples(function: Callable[[Any, np.ndarray], Any], shared: Any, n_queries: int, n_samples: int, seed: int,
                   progress: Progress | None = None, mapper: ChunkMapper | None = None) -> list[Any]:
    """``function(shared, rows)`` for each chunk ``rows`` of :func:`bootstrap_indices`, in order,
    here or on an engine's workers (:func:`over_stream`)."""
    return over_stream(function, shared, np.random.default_rng(seed), n_samples, n_queries, _draw_indices, progress,
                       mapper)


def _resampled_means(differences: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The mean of each column of ``differences`` over each row of resampled query indices."""
    group = max(1, _SLICE // max(1, differences.shape[0]))  # rows averaged at once
    means = np.empty((len(rows), differences.shape[1]))
    for at in range(0, len(rows), group):
        part = rows[at:at + group]
        means[at:at + len(part)] = differences[part].mean(axis=1)
    return means


def bootstrap_means(differences: np.ndarray, n_samples: int, seed: int,
                    progress: Progress | None = None, mapper: ChunkMapper | None = None) -> np.ndarray:
    """Resampled means of each column of ``differences`` (queries x comparisons), sorted per column.

    Resample r's mean of column c is the mean of ``differences[indices[r], c]`` over the n_queries
    drawn rows (:func:`bootstrap_indices`). ``progress(done, total)`` is called as resamples complete;
    ``mapper``: where the chunks run (:mod:`harness.engines.parallel`; None: here).

    >>> d = np.array([[0.1], [0.3], [-0.2]])
    >>> bootstrap_means(d, 4, seed=0).shape
    (4, 1)
    """
    differences = np.asarray(differences, dtype=np.float64)
    if differences.ndim == 1:
        differences = differences[:, None]
    chunks = over_resamples(_resampled_means, differences, differences.shape[0], n_samples, seed, progress, mapper)
    means = np.concatenate(chunks) if chunks else np.empty((0, differences.shape[1]))
    means.sort(axis=0)
    return means


#: Bytes of working memory besides the resampled means: a chunk of indices and its temporaries.
_WORKING_BYTES = 8 * _CHUNK_CELLS * 4


def bootstrap_memory(n_samples: int, columns: int) -> int:
    """Peak bytes of :func:`bootstrap_means` over ``columns`` columns: every chunk's resampled
    means (float64) are kept, then joined into one (n_samples x columns) array, so twice that
    matrix at the join, plus one chunk's working memory. Chunking bounds the index matrix, not the
    means: the memory grows with ``n_samples`` whatever the number of queries.

    >>> bootstrap_memory(BOOTSTRAP_SAMPLES, 6) // 1000  # 480 kB of means, 32 MB of working memory
    34034
    """
    return 16 * n_samples * max(1, columns) + _WORKING_BYTES


def largest_bootstrap(columns: int, available: int) -> int:
    """The largest ``n_samples`` whose :func:`bootstrap_memory` fits in ``available`` bytes (0: none does).

    >>> largest_bootstrap(6, bootstrap_memory(BOOTSTRAP_SAMPLES, 6)) == BOOTSTRAP_SAMPLES
    True
    """
    return max(0, (available - _WORKING_BYTES) // (16 * max(1, columns)))


def available_memory() -> int | None:
    """Bytes this process may still allocate, as far as it can tell: the smallest of the system's
    available memory (``MemAvailable`` of ``/proc/meminfo``, else ``os.sysconf``), what is left under
    its cgroup's limit (v2 ``memory.max``) and under its address-space limit (``RLIMIT_AS``); None
    when none of them can be read (then nothing is refused)."""
    import os

    limits: list[int] = []
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    limits.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    if not limits:
        try:
            limits.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, OSError, ValueError):
            pass
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as handle:
            ceiling = handle.read().strip()
        if ceiling != "max":
            with open("/sys/fs/cgroup/memory.current", encoding="ascii") as handle:
                limits.append(max(0, int(ceiling) - int(handle.read().strip())))
    except (OSError, ValueError):
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm", encoding="ascii") as handle:
                used = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            limits.append(max(0, soft - used))
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return min(limits) if limits else None


def percentile_interval(sorted_means: np.ndarray, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval read off sorted resampled means.

    For B resamples the bounds are the sorted means at ``floor(B * (1 - c) / 2)`` and
    ``B - 1 -`` that index: 125 and 4874 for B = 5,000 and c = 0.95, as in the article.
    """
    n = sorted_means.shape[0]
    low = int(np.floor(n * (1.0 - confidence) / 2.0 + 1e-9))
    return sorted_means[low], sorted_means[n - 1 - low]


#: Up to this many queries with a non-zero difference, the sign-flip test enumerates every pattern.
EXACT_UP_TO = 20
#: Kinds of randomisation test, as ``Comparison.test`` and ``comparisons.csv`` name them.
TESTS = {
    "exact": "all 2^m sign patterns of the m non-zero differences",
    "monte-carlo": "random sign flips of every query's difference",
}
#: Where the Monte Carlo signs come from (recorded in the manifest).
PERMUTATION_STREAM = ("numpy PCG64 seeded with SeedSequence(seed).spawn(1)[0] (independent of the bootstrap's "
                      "stream), 8 signs per random byte, most significant bit first")


def _tolerance(differences: np.ndarray) -> np.ndarray:
    """Ties within a tiny relative tolerance count as "as extreme": a flip that mathematically equals
    the observed sum must not lose to rounding (sums of the same numbers in another order)."""
    return 1e-12 * np.maximum(1.0, np.abs(differences).sum(axis=0))


def randomisation_p_values(differences: np.ndarray, n_samples: int, seed: int,
                           mapper: ChunkMapper | None = None) -> np.ndarray:
    """Monte Carlo two-sided paired randomisation (sign-flip) p-value per column of ``differences``.

    p = (1 + #{flips with |sum| >= |observed sum|}) / (1 + n_samples), so never below
    1 / (1 + n_samples); signs come from :data:`PERMUTATION_STREAM`, independent of the bootstrap's.
    Each flip applies to every query, so all columns see the same flips.

    >>> float(randomisation_p_values(np.zeros((5, 1)), 99, seed=0)[0])
    1.0
    """
    differences = np.asarray(differences, dtype=np.float64)
    if differences.ndim == 1:
        differences = differences[:, None]
    n_queries = differences.shape[0]
    total = differences.sum(axis=0)
    observed = np.abs(total)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    counts = over_stream(_extreme_flips, (differences, total, observed - _tolerance(differences)), rng, n_samples,
                         n_queries, _draw_sign_bytes, mapper=mapper)
    extreme = np.sum(counts, axis=0, dtype=np.int64) if counts else np.zeros(differences.shape[1], dtype=np.int64)
    return (1.0 + extreme) / (1.0 + n_samples)


def _extreme_flips(shared: tuple[np.ndarray, np.ndarray, np.ndarray], sign_bytes: np.ndarray) -> np.ndarray:
    """Per column, how many of a chunk's sign flips give a |sum| at least the threshold."""
    differences, total, threshold = shared
    positive = np.unpackbits(sign_bytes, axis=1)[:, :differences.shape[0]].astype(np.float64)
    # a flip keeps d where the bit is 1 and negates it elsewhere: sum = 2 * kept - total
    flipped = np.abs(2.0 * (positive @ differences) - total)
    return (flipped >= threshold).sum(axis=0)


def _signed_sums(values: np.ndarray) -> np.ndarray:
    """The 2^len(values) sums of +-values (every sign pattern)."""
    sums = np.zeros(1)
    for value in values:
        sums = np.concatenate([sums + value, sums - value])
    return sums


def exact_p_value(differences: np.ndarray) -> float:
    """Exact two-sided paired randomisation p-value of one column of differences.

    With m non-zero differences (zeros are unchanged by a flip), p is the share of the 2^m sign
    patterns whose |sum| (equivalently |mean|) is at least the observed one; a pattern and its
    mirror are equally extreme, so p >= 2 / 2^m unless every difference is 0 (p = 1). The sums are
    built from two halves (2^(m/2) each) and compared in blocks of ``_CHUNK_CELLS``: at m = 20,
    one block of a million sums, 8 MB.

    >>> exact_p_value(np.array([0.5, 0.25, 0.0, 0.25]))  # 8 patterns; sums 1, -1 reach |1|
    0.25
    """
    column = np.asarray(differences, dtype=np.float64).ravel()
    nonzero = column[column != 0.0]
    m = len(nonzero)
    if m == 0:
        return 1.0
    observed = abs(column.sum())
    threshold = observed - float(_tolerance(column[:, None])[0])
    first, second = _signed_sums(nonzero[: m // 2]), _signed_sums(nonzero[m // 2:])
    rows = max(1, _CHUNK_CELLS // len(second))
    extreme = 0
    for start in range(0, len(first), rows):
        block = np.abs(first[start:start + rows, None] + second[None, :])
        extreme += int(np.count_nonzero(block >= threshold))
    return extreme / 2.0**m


def sign_flip_tests(differences: np.ndarray, permutations: int, seed: int,
                    exact_up_to: int = EXACT_UP_TO, mapper: ChunkMapper | None = None) -> tuple[np.ndarray, list[str]]:
    """Per column: the randomisation p-value and the test that gave it (a key of :data:`TESTS`).

    Exact (:func:`exact_p_value`) when at most ``exact_up_to`` queries differ, else Monte Carlo
    (:func:`randomisation_p_values`, ``permutations`` flips). The Monte Carlo flips are drawn for
    every column, so a column's p does not depend on which other columns were exact.
    """
    differences = np.asarray(differences, dtype=np.float64)
    if differences.ndim == 1:
        differences = differences[:, None]
    differing = np.count_nonzero(differences, axis=0)
    exact = differing <= exact_up_to
    p_values = np.empty(differences.shape[1])
    for i in np.flatnonzero(exact):
        p_values[i] = exact_p_value(differences[:, i])
    if not exact.all():
        sampled = np.flatnonzero(~exact)
        p_values[sampled] = randomisation_p_values(differences[:, sampled], permutations, seed, mapper)
    return p_values, ["exact" if e else "monte-carlo" for e in exact]


def smallest_p_value(test: str, n_differing: int, permutations: int) -> float:
    """The smallest p a test can give: 2 / 2^m exact (the observed pattern and its mirror),
    1 / (1 + permutations) Monte Carlo, 1 when nothing differs.

    >>> smallest_p_value("exact", 4, 10_000), smallest_p_value("monte-carlo", 30, 99)
    (0.125, 0.01)
    """
    if n_differing == 0:
        return 1.0
    if test == "exact":
        return min(1.0, 2.0 / 2.0**n_differing)
    return 1.0 / (1.0 + permutations)


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


def smallest_adjusted_p(p_values: Sequence[float], smallest: Sequence[float]) -> np.ndarray:
    """Per comparison of one Holm family: the smallest Holm-adjusted p it could have reached.

    Comparison i's p is replaced by ``smallest[i]`` (its most extreme sign pattern, see
    :func:`smallest_p_value`) while the family's other p-values stay as observed, and Holm runs on
    that family; Holm's adjusted p only grows with the raw one, so no data of these queries could do
    better. Above alpha, the comparison cannot tell a difference, whatever the data.

    >>> smallest_adjusted_p([0.5, 0.5, 0.5], [0.03125, 0.25, 0.25]).tolist()  # 3 * 2/64
    [0.09375, 0.75, 0.75]
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.empty(len(p))
    for i, best in enumerate(smallest):
        trial = p.copy()
        trial[i] = min(p[i], best)
        out[i] = holm(trial)[i]
    return out


@dataclass(frozen=True)
class Comparison:
    """One paired comparison ``system_a - system_b`` on one metric over the same queries.

    ``p_value`` comes from the randomisation test named by ``test`` (a key of :data:`TESTS`);
    ``p_adjusted`` is Holm's over the comparison's family, or the randomised Tukey HSD's when
    ``correction`` is ``"tukey"``; ``smallest_p_adjusted`` is the adjusted p its most extreme sign
    pattern would have reached (:func:`smallest_adjusted_p`; for the Tukey HSD, 1 / (1 +
    permutations)); ``alpha`` is 1 - the interval's confidence.
    """

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
    test: str = "exact"
    alpha: float = ALPHA
    smallest_p_adjusted: float = 0.0
    permutations: int = PERMUTATIONS
    correction: str = "holm"

    @property
    def adjusted_name(self) -> str:
        """How the verdicts name the adjusted p: ``Holm`` or ``Tukey HSD``."""
        return CORRECTION_NAMES[self.correction]

    @property
    def interval_excludes_zero(self) -> bool:
        return not (self.ci_low <= 0.0 <= self.ci_high)

    @property
    def significant(self) -> bool:
        """The adjusted p (Holm's or the Tukey HSD's) is at most alpha and the interval excludes zero."""
        return self.p_adjusted <= self.alpha and self.interval_excludes_zero

    @property
    def verdict(self) -> str:
        """What the numbers allow one to say, in this order:

        * ``identical on every query``: no query differs;
        * ``too few differing queries to tell (m of n)``: even the most extreme sign pattern of the m
          differing queries would not bring the Holm-adjusted p to alpha in this family (with the
          Monte Carlo test or the Tukey HSD, ``too few permutations`` when 1 / (1 + permutations) is what
          stops it);
          ``too few queries to tell (all n differ)`` when every query differs, so what is short is
          the collection itself;
        * ``A is better``: Holm p (or Tukey HSD p) <= alpha and the interval excludes 0;
        * ``no clear difference``, saying which of the two disagrees when only one of them would
          call the difference real.
        """
        if self.n_differing == 0:
            return "identical on every query"
        if self.smallest_p_adjusted > self.alpha:
            if self.test == "monte-carlo" or self.correction == TUKEY:
                return f"too few permutations to tell (p >= 1/{self.permutations + 1})"
            if self.n_differing == self.n_queries:  # more queries, not other systems, would tell
                return f"too few queries to tell (all {self.n_queries} differ)"
            return f"too few differing queries to tell ({self.n_differing} of {self.n_queries})"
        if self.significant:
            return f"{self.system_a if self.mean_diff > 0 else self.system_b} is better"
        if self.interval_excludes_zero:
            rejecting = "the Tukey HSD" if self.correction == TUKEY else f"the {self.test} test"
            return (f"no clear difference: the interval excludes 0 but {rejecting} does not reject "
                    f"({self.adjusted_name} p {format_p(self.p_adjusted, self.alpha)} > {self.alpha:g})")
        if self.p_adjusted <= self.alpha:
            return (f"no clear difference: {self.adjusted_name} p {format_p(self.p_adjusted, self.alpha)} <= "
                    f"{self.alpha:g} but the "
                    "interval includes 0")
        return "no clear difference"


#: Decimals of a printed p-value, unless more are needed to show its side of alpha (:func:`format_p`).
P_DIGITS = 3


def format_p(p: float, alpha: float | None = None) -> str:
    """A p-value as every table, verdict and report prints it.

    :data:`P_DIGITS` decimals, more where those would blur which side of ``alpha`` it lies on (a
    Holm p of 0.0502 prints ``0.0502``, never ``0.050`` beside ``> 0.05``); below 0.001, ``< 0.001``
    (a Monte Carlo p is at least 1 / (permutations + 1), an exact one 2 / 2^m: neither is 0), unless
    ``alpha`` itself is below 0.001, where the digits grow until the side shows. ``--`` for none.

    >>> format_p(0.0502, 0.05), format_p(0.04996, 0.05), format_p(0.05, 0.05), format_p(0.8437)
    ('0.0502', '0.04996', '0.050', '0.844')
    >>> format_p(1 / 10_001, 0.05), format_p(0.0003, 0.0005), format_p(0.0007, 0.0005)
    ('< 0.001', '0.0003', '0.001')
    >>> format_p(0.04996, 1 - 0.95)  # the side of alpha as printed (0.05), not of 0.050000000000000044
    '0.04996'
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "--"
    if alpha is not None:  # alpha as it is printed: 1 - 0.95 is 0.050000000000000044, shown 0.05
        alpha = round(alpha, 12)
    floor = 10.0 ** -P_DIGITS
    if 0.0 < p < floor and (alpha is None or alpha >= floor):
        return f"< {floor:.{P_DIGITS}f}"
    for digits in range(P_DIGITS, 18):
        text = f"{p:.{digits}f}"
        shown = float(text)
        if p > 0.0 and shown == 0.0:
            continue
        if alpha is None or ((shown <= alpha) == (p <= alpha) and (shown == alpha) == (p == alpha)):
            return text
    return repr(p)


#: A comparison's correction -> how the reports name it.
CORRECTION_NAMES = {"holm": "Holm", TUKEY: "Tukey HSD"}


def correction_of(family: str | None) -> str:
    """The correction a run made with ``family`` adjusts its p-values by: ``tukey``, else ``holm``."""
    return TUKEY if family == TUKEY else "holm"


def adjusted_label(family: str | None) -> str:
    """The name of a run's adjusted p in the reports' tables: ``Holm p``, or ``Tukey HSD p``.

    >>> adjusted_label("metric"), adjusted_label("tukey")
    ('Holm p', 'Tukey HSD p')
    """
    return CORRECTION_NAMES[correction_of(family)] + " p"


def correction_words(family: str | None) -> str:
    """How the reports say what adjusted the p-values of a run made with ``family``.

    >>> correction_words("all")
    'Holm over every comparison of the run'
    >>> correction_words("tukey")
    'the randomised Tukey HSD over the systems of each metric (Carterette 2012)'
    """
    if family == TUKEY:
        return "the randomised Tukey HSD over the systems of each metric (Carterette 2012)"
    return f"Holm over {FAMILIES.get(str(family), FAMILIES[FAMILY])}"


#: The columns of ``comparisons.csv``: each is an attribute of :class:`Comparison`.
COMPARISON_COLUMNS = ["system_a", "system_b", "metric", "mean_diff", "ci_low", "ci_high", "p_value",
                      "p_adjusted", "n_queries", "n_differing", "test", "verdict"]


def holm_in_families(p_values: np.ndarray, tests: Sequence[str], differing: np.ndarray, permutations: int,
                     columns: Sequence[tuple[str, str, str]], metrics: Sequence[str],
                     family: str) -> tuple[np.ndarray, np.ndarray]:
    """Holm's adjusted p of each (a, b, metric) column within its family (one per metric, or
    ``family="all"``: one), and the smallest adjusted p each test could reach with this many
    differing queries (:func:`smallest_adjusted_p`)."""
    smallest = np.array([smallest_p_value(t, int(m), permutations) for t, m in zip(tests, differing)])
    adjusted = np.empty_like(p_values)
    best_adjusted = np.empty_like(p_values)
    groups = [list(range(len(columns)))] if family == "all" else \
        [[i for i, c in enumerate(columns) if c[2] == m] for m in metrics]
    for where in groups:
        adjusted[where] = holm(p_values[where])
        best_adjusted[where] = smallest_adjusted_p(p_values[where], smallest[where])
    return adjusted, best_adjusted


def tukey_in_metrics(levels: dict[str, dict[str, np.ndarray]], differing: np.ndarray, permutations: int,
                     columns: Sequence[tuple[str, str, str]], metrics: Sequence[str],
                     seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The randomised Tukey HSD's adjusted p of each (a, b, metric) column, one family per metric over
    the systems its columns name (:func:`harness.core.tukey.tukey_hsd_p_values` on
    ``levels[system][metric]``, the per-query scores), and the smallest p each could reach:
    1 / (1 + permutations), or 1 when no query differs."""
    adjusted = np.ones(len(columns))
    for metric in metrics:
        where = [i for i, c in enumerate(columns) if c[2] == metric]
        systems = list(dict.fromkeys(s for i in where for s in columns[i][:2]))
        position = {s: k for k, s in enumerate(systems)}
        scores = np.column_stack([levels[s][metric] for s in systems])
        pairs = [(position[columns[i][0]], position[columns[i][1]]) for i in where]
        adjusted[where] = tukey_hsd_p_values(scores, pairs, permutations, seed)
    best = np.where(np.asarray(differing) > 0, 1.0 / (1.0 + permutations), 1.0)
    return adjusted, best


def adjust_in_families(p_values: np.ndarray, tests: Sequence[str], differing: np.ndarray, permutations: int,
                       columns: Sequence[tuple[str, str, str]], metrics: Sequence[str], family: str,
                       levels: dict[str, dict[str, np.ndarray]], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The adjusted p of each column and the smallest it could reach, as ``family`` says: Holm's
    (:func:`holm_in_families`) or, for ``"tukey"``, the randomised Tukey HSD's (:func:`tukey_in_metrics`,
    which reads the systems' per-query ``levels``)."""
    if family == TUKEY:
        return tukey_in_metrics(levels, differing, permutations, columns, metrics, seed)
    return holm_in_families(p_values, tests, differing, permutations, columns, metrics, family)


def compare_systems(
    per_query: dict[str, dict[str, np.ndarray]],
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str],
    n_samples: int = BOOTSTRAP_SAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
    progress: Progress | None = None,
    permutations: int = PERMUTATIONS,
    family: str = FAMILY,
    mapper: ChunkMapper | None = None,
) -> list[Comparison]:
    """Every (pair, metric): mean difference a - b, bootstrap interval, randomisation and Holm p.

    ``per_query[system][metric]`` holds per-query values aligned on the same queries. The bootstrap
    draws ``n_samples`` resamples; the randomisation test is exact up to :data:`EXACT_UP_TO`
    differing queries, else ``permutations`` Monte Carlo flips (a stream of its own). Holm runs
    across each ``family`` (a key of :data:`FAMILIES`), or for ``"tukey"`` the randomised Tukey HSD
    over each metric's systems (``permutations`` permutations, a stream of their own); alpha = 1 - ``confidence``.
    ``progress(done, total)`` follows the bootstrap; ``mapper``: where its chunks run
    (:mod:`harness.engines.parallel`; None: here).
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    if not pairs or not metrics:
        return []
    columns = [(a, b, m) for m in metrics for a, b in pairs]
    differences = np.column_stack([per_query[a][m] - per_query[b][m] for a, b, m in columns])
    n_queries = differences.shape[0]
    sorted_means = bootstrap_means(differences, n_samples, seed, progress, mapper)
    low, high = percentile_interval(sorted_means, confidence)
    p_values, tests = sign_flip_tests(differences, permutations, seed, mapper=mapper)
    differing = np.count_nonzero(differences, axis=0)
    adjusted, best_adjusted = adjust_in_families(p_values, tests, differing, permutations, columns, metrics, family,
                                                 per_query, seed)
    correction = correction_of(family)
    means = differences.mean(axis=0)
    alpha = alpha_of(confidence)
    return [
        Comparison(a, b, m, float(means[i]), float(low[i]), float(high[i]), float(p_values[i]),
                   float(adjusted[i]), n_queries, int(differing[i]), tests[i], alpha, float(best_adjusted[i]),
                   permutations, correction)
        for i, (a, b, m) in enumerate(columns)
    ]


def describe_settings(statistics: Statistics, comparisons: Sequence[Comparison]) -> dict[str, object]:
    """What a results manifest records about the statistics of one run, made with ``statistics``
    (JSON-ready)."""
    used = {name: sum(c.test == name for c in comparisons) for name in TESTS}
    return {
        "bootstrap_samples": statistics.bootstrap_samples, "seed": statistics.seed,
        "confidence": statistics.confidence,
        "interval": "percentile of sorted resampled means",
        "bootstrap_stream": "numpy default_rng(seed).integers(0, n_queries), row by row",
        "alpha": round(statistics.alpha, 12),
        "randomisation_test": {
            "exact_up_to": EXACT_UP_TO, "exact": TESTS["exact"], "monte-carlo": TESTS["monte-carlo"],
            "permutations": statistics.permutations, "permutation_stream": PERMUTATION_STREAM,
            "comparisons_by_test": used,
        },
        "holm_family": statistics.family, "holm_family_means": FAMILIES[statistics.family],
        **({"tukey_hsd": {"permutations": statistics.permutations, "permutation_stream": TUKEY_STREAM,
                          "reference": "Carterette (2012), ACM TOIS 30(1): randomised Tukey HSD over the range "
                                       "of the systems' means"}} if statistics.family == TUKEY else {}),
    }
