"""The paired bootstrap: retbench's plain numpy stream against the two speed paths it no longer has.

    python benchmarks/bootstrap_speed.py --repeats 7

Two sizes: 10,000 resamples over 10,000 queries (one comparison), and 5,000 resamples over 100
queries x 24 comparisons (a ``bench compare`` of four systems on four metrics, all pairs). In one
process, alternating, medians of ``--repeats``:

* ``retbench``: :func:`harness.core.statistics.bootstrap_means`, ``default_rng(seed).integers`` drawn a
  chunk of rows at a time, gathered and averaged in slices;
* ``pcg64-two-threads``: the implementation it replaced (kept below as the record): numpy's PCG64
  stream and Lemire's bounded draw re-implemented, blocks drawn side by side with
  ``PCG64.advance`` and averaged on two threads, plus a one-column ``np.take`` path;
* ``one-column-take``: retbench with that one-column ``np.take`` path alone.

Each must give the same bytes as ``retbench`` (checked), and 5,000 resamples over 14 queries must
equal the article's loop of ``rng.choice``. A speed path is kept only where it pays >= 20%.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import load_note, markdown, median, record_results  # noqa: E402

_CHUNK_CELLS = 1 << 20
_THREADS = 2
_THREADS_ABOVE = 1 << 22
_SLICE = 1 << 16
Progress = Callable[[int, int], None]


# ----- the removed implementation, as it was -----------------------------------------------------

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


def _run_now(function: Callable, *args: object) -> Future:
    done: Future = Future()
    done.set_result(function(*args))
    return done


def pcg64_two_threads(differences: np.ndarray, n_samples: int, seed: int,
                      progress: Progress | None = None) -> np.ndarray:
    """The removed ``bootstrap_means``: resampled means per column, sorted, on two threads."""
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


# ----- the one-column np.take path on its own ----------------------------------------------------

def one_column_take(differences: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """retbench's bootstrap, but a single column is gathered with ``np.take`` on the flat column."""
    from harness.core.statistics import bootstrap_indices

    n_queries = differences.shape[0]
    means = np.empty((n_samples, differences.shape[1]))
    single = differences[:, 0].copy() if differences.shape[1] == 1 else None
    group = max(1, _SLICE // max(1, n_queries))
    done = 0
    for rows in bootstrap_indices(n_queries, n_samples, seed):
        for at in range(0, len(rows), group):
            part = rows[at:at + group]
            gathered = differences[part] if single is None else np.take(single, part)[:, :, None]
            means[done + at:done + at + len(part)] = gathered.mean(axis=1)
        done += len(rows)
    means.sort(axis=0)
    return means


def article_loop(d: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sort([rng.choice(d, size=len(d)).mean() for _ in range(n_samples)])


SIZES = {  # label -> (queries, comparisons, resamples)
    "10,000 resamples x 10,000 queries x 1": (10_000, 1, 10_000),
    "5,000 resamples x 100 queries x 24": (100, 24, 5_000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    from harness.core.statistics import bootstrap_means

    systems = {"retbench": bootstrap_means, "pcg64-two-threads": pcg64_two_threads,
               "one-column-take": one_column_take}
    print(f"# bootstrap, medians of {args.repeats}; {load_note()}", flush=True)
    article = np.random.default_rng(14).normal(size=14)
    same_article = bootstrap_means(article[:, None], 5000, 0)[:, 0].tobytes() == article_loop(article, 5000, 0).tobytes()
    rows, same = [], {}
    for label, (n_queries, columns, n_samples) in SIZES.items():
        d = np.random.default_rng(1).normal(size=(n_queries, columns))
        times: dict[str, list[float]] = {name: [] for name in systems}
        outputs: dict[str, bytes] = {}
        names = list(systems)
        for repeat in range(args.repeats):
            for name in names[repeat % len(names):] + names[:repeat % len(names)]:  # rotate the order
                start = time.perf_counter()
                outputs[name] = systems[name](d, n_samples, 0).tobytes()
                times[name].append(time.perf_counter() - start)
        base = median(times["retbench"])
        for name in systems:
            rows.append([label, name, 1000 * median(times[name]), 1000 * min(times[name]), base / median(times[name])])
            same[f"{label}, {name}"] = outputs[name] == outputs["retbench"]
    print(f"# done; {load_note()}")
    table = markdown(["size", "bootstrap", "median ms", "best ms", "speed-up vs retbench"], rows)
    table += (f"\n\nsame bytes as retbench: {all(same.values())} ({sum(same.values())} of {len(same)}); "
              f"5,000 x 14 equal to the article's loop: {same_article}")
    print(table)
    record_results("bootstrap_speed", table, f"medians of {args.repeats}; {load_note()}")


if __name__ == "__main__":
    main()
