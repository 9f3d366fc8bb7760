"""The paired bootstrap at scale: 10,000 resamples over 10,000 queries, and that it kept its bytes.

    python benchmarks/bootstrap_speed.py --repeats 5

Times :func:`harness.statistics.bootstrap_means` (one comparison column, seed 0) in a fresh process,
next to the previous implementation (``rng.integers`` per chunk, then gather and mean), alternating;
checks both give the same bytes, and that 5,000 resamples over 14 queries still equal the article's
loop of ``rng.choice``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import load_note, markdown, median  # noqa: E402


def previous(differences: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """The implementation before this one, kept here to time against."""
    rng = np.random.default_rng(seed)
    n = differences.shape[0]
    rows = max(1, (1 << 23) // n)
    chunks = [differences[rng.integers(0, n, size=(min(rows, n_samples - s), n))].mean(axis=1)
              for s in range(0, n_samples, rows)]
    means = np.concatenate(chunks, axis=0)
    means.sort(axis=0)
    return means


def article_loop(d: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sort([rng.choice(d, size=len(d)).mean() for _ in range(n_samples)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from harness.statistics import bootstrap_means

    print(f"# bootstrap {args.samples:,} x {args.queries:,}; {load_note()}", flush=True)
    d = np.random.default_rng(1).normal(size=(args.queries, 1))
    article = np.random.default_rng(14).normal(size=14)
    same_article = bootstrap_means(article[:, None], 5000, 0)[:, 0].tobytes() == article_loop(article, 5000, 0).tobytes()
    times: dict[str, list[float]] = {"retbench": [], "previous": []}
    outputs: dict[str, bytes] = {}
    for repeat in range(args.repeats):
        for name, function in ([("retbench", bootstrap_means), ("previous", previous)] if repeat % 2 == 0
                               else [("previous", previous), ("retbench", bootstrap_means)]):
            start = time.perf_counter()
            outputs[name] = function(d, args.samples, 0).tobytes()
            times[name].append(time.perf_counter() - start)
    print(f"# done; {load_note()}")
    now, before = median(times["retbench"]), median(times["previous"])
    print(markdown(["bootstrap", "median s", "best s", "speed-up"], [
        ["retbench (blocks side by side, 2 threads)", now, min(times["retbench"]), before / now],
        ["previous (rng.integers per chunk)", before, min(times["previous"]), 1.0],
    ]))
    print(f"\nsame bytes as the previous implementation: {outputs['retbench'] == outputs['previous']}; "
          f"5,000 x 14 equal to the article's loop: {same_article}")


if __name__ == "__main__":
    main()
