"""Paired statistics over queries: bootstrap intervals, randomisation tests, Holm adjustment.

The query is the independent unit, so both procedures resample or flip whole per-query
differences. Every comparison of one ``bench compare`` uses the same resampled query sets (one
index matrix drawn from ``seed``), which keeps the intervals paired across systems and metrics
and makes the output a pure function of (inputs, seed). Vectorised in bounded chunks; the bootstrap
draws and averages its chunks on two threads, which changes its speed and never its bytes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

_CHUNK_CELLS = 1 << 20  # resample x query cells drawn at once; bounds peak memory
_THREADS = 2  # draw and average resamples on two cores; the result never depends on it
_THREADS_ABOVE = 1 << 22  # cells below which threads cost more than they save
_SLICE = 1 << 16  # draws worked on at once inside a chunk (fits a core's cache)

Progress = Callable[[int, int], None]


def _draw_block(state: dict, start: int, count: int, n_queries: int, threshold: int) -> np.ndarray:
    """Draws ``start .. start + count`` (32-bit units) of the stream :func:`_index_stream` explains.

    Worked in slices of ``_SLICE`` words, so the temporaries stay in the CPU cache.
    """
    bitgen = np.random.PCG64()
    bitgen.state = state
    bitgen.advance(start // 2)
    values = np.empty(count, dtype=np.int64)
    kept = 0
    multiplier, shift = np.uint64(n_queries), np.uint64(32)
    for first in range(0, count, _SLICE):
        raw = bitgen.random_raw((min(_SLICE, count - first) + 1) // 2)
        draws = raw.view("<u4") if np.little_endian else np.column_stack([raw, raw >> 32]).astype("<u4").ravel()
        scaled = np.multiply(draws, multiplier, dtype=np.uint64)
        low = scaled.view("<u4")[0::2] if np.little_endian else scaled.astype("<u4")
        rejected = threshold and low.min(initial=threshold) < threshold
        keep = low >= threshold if rejected else None
        np.right_shift(scaled, shift, out=scaled)
        accepted = scaled.view(np.int64)[keep] if rejected else scaled.view(np.int64)
        values[kept:kept + len(accepted)] = accepted
        kept += len(accepted)
    return values[:kept]


def _index_stream(n_queries: int, seed: int, block: int, submit: Callable) -> Iterator[np.ndarray]:
    """The values ``default_rng(seed).integers(0, n_queries)`` draws one by one, in blocks.

    numpy draws an integer below n < 2**32 from 32-bit words of PCG64 (low half of each 64-bit output
    first) by Lemire's method: ``w * n >> 32``, skipping ``w`` when ``(w * n) mod 2**32`` falls below
    ``(2**32 - n) mod n``. The words are a pure function of their position, so blocks are drawn side
    by side (``PCG64.advance``) and the rare skips are dropped per block; concatenated, the blocks
    are the exact stream. :func:`_check_stream` guards this against a numpy that draws otherwise.
    """
    state = np.random.default_rng(seed).bit_generator.state
    threshold = (2**32 - n_queries) % n_queries
    ahead: list = []
    position = 0
    while True:
        while len(ahead) < 3:
            ahead.append(submit(_draw_block, state, position, block, n_queries, threshold))
            position += block
        yield ahead.pop(0).result()


def _check_stream(n_queries: int, seed: int) -> bool:
    expected = np.random.default_rng(seed).integers(0, n_queries, size=4096)
    state = np.random.default_rng(seed).bit_generator.state
    got = _draw_block(state, 0, 8192, n_queries, (2**32 - n_queries) % n_queries)[:4096]
    return len(got) == 4096 and bool(np.array_equal(got, expected))


def _resample_rows(n_queries: int, n_samples: int, seed: int, submit: Callable) -> Iterator[np.ndarray]:
    """Consecutive row blocks of the (n_samples x n_queries) index matrix, in order."""
    rows = max(1, _CHUNK_CELLS // max(1, n_queries))
    if n_queries == 1:  # numpy draws nothing for a range of one
        for start in range(0, n_samples, rows):
            yield np.zeros((min(rows, n_samples - start), 1), dtype=np.int64)
        return
    if n_queries >= 1 << 31 or not _check_stream(n_queries, seed):
        rng = np.random.default_rng(seed)
        for start in range(0, n_samples, rows):
            yield rng.integers(0, n_queries, size=(min(rows, n_samples - start), n_queries))
        return
    block = rows * n_queries * (1 + (rows * n_queries) % 2)  # whole 64-bit words
    carry = np.empty(0, dtype=np.int64)  # the start of a row a block boundary cut
    left = n_samples
    for values in _index_stream(n_queries, seed, block, submit):
        at = 0
        if len(carry):
            at = min(len(values), n_queries - len(carry))
            carry = np.concatenate([carry, values[:at]])
            if len(carry) < n_queries:
                continue
            yield carry[None, :]
            left -= 1
            carry = np.empty(0, dtype=np.int64)
        whole = min((len(values) - at) // n_queries, left)
        if whole:
            yield values[at:at + whole * n_queries].reshape(whole, n_queries)
            left -= whole
        if left <= 0:
            return
        carry = values[at + whole * n_queries:].copy()


def bootstrap_indices(n_queries: int, n_samples: int, seed: int) -> Iterator[np.ndarray]:
    """Yield chunks of the (n_samples x n_queries) resampling index matrix.

    The same values as ``numpy.random.default_rng(seed).integers(0, n_queries, ...)`` drawn row by
    row, which is the same stream as the article's loop of ``rng.choice(d, size=len(d))``.
    """
    yield from _resample_rows(n_queries, n_samples, seed, _run_now)


def _run_now(function: Callable, *args: object) -> Future:
    done: Future = Future()
    done.set_result(function(*args))
    return done


def bootstrap_means(differences: np.ndarray, n_samples: int, seed: int,
                    progress: Progress | None = None) -> np.ndarray:
    """Resampled means of each column of ``differences`` (queries x comparisons), sorted per column.

    ``progress(done, total)`` is called as resamples complete.

    >>> d = np.array([[0.1], [0.3], [-0.2]])
    >>> bootstrap_means(d, 4, seed=0).shape
    (4, 1)
    """
    differences = np.asarray(differences, dtype=np.float64)
    if differences.ndim == 1:
        differences = differences[:, None]
    n_queries = differences.shape[0]
    means = np.empty((n_samples, differences.shape[1]))

    single = differences[:, 0].copy() if differences.shape[1] == 1 else None
    group = max(1, _SLICE // max(1, n_queries))  # rows averaged at once: temporaries stay in cache

    def average(rows: np.ndarray, start: int) -> int:
        for at in range(0, len(rows), group):
            part = rows[at:at + group]
            # mean over the resampled rows, for every comparison column at once; with one column,
            # take on the flat column: the same values in the same order, hence the same sums
            gathered = differences[part] if single is None else np.take(single, part)[:, :, None]
            means[start + at:start + at + len(part)] = gathered.mean(axis=1)
        return len(rows)

    threaded = n_samples * n_queries >= _THREADS_ABOVE
    with ThreadPoolExecutor(_THREADS) if threaded else contextlib.nullcontext() as pool:
        submit = pool.submit if pool is not None else _run_now
        pending: list[Future] = []
        done = start = 0
        for rows in _resample_rows(n_queries, n_samples, seed, submit):
            pending.append(submit(average, rows, start))
            start += len(rows)
            while pending and (pending[0].done() or len(pending) > 4):
                done += pending.pop(0).result()
                if progress is not None:
                    progress(done, n_samples)
        for future in pending:
            done += future.result()
        if progress is not None:
            progress(done, n_samples)
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
    progress: Progress | None = None,
) -> list[Comparison]:
    """Every (pair, metric): mean difference a - b, bootstrap interval, randomisation and Holm p.

    ``per_query[system][metric]`` holds per-query values aligned on the same queries. Holm runs
    across the comparisons of one metric. ``progress(done, total)`` follows the bootstrap.
    """
    if not pairs or not metrics:
        return []
    columns = [(a, b, m) for m in metrics for a, b in pairs]
    differences = np.column_stack([per_query[a][m] - per_query[b][m] for a, b, m in columns])
    n_queries = differences.shape[0]
    sorted_means = bootstrap_means(differences, n_samples, seed, progress)
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
