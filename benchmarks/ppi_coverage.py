"""Coverage and width of PPI++'s 95% interval by simulation, against plain PPI and the humans alone.

A population of queries whose true metric Y is known in law: Y ~ Beta(2, 3), so theta = E[Y] = 0.4.
Each draw takes N queries from it, of which the first n (a random subset, since the draw is) carry a
human judgment (Y); a machine judge gives f on all N. Two judges:

* biased: f = clip(Y + 0.1 + N(0, 0.05)) -- tracks Y closely but reads 0.1 high;
* noisy: f = clip(0.3 Y + 0.35 + N(0, 0.25)) -- barely related to Y.

(clip to [0, 1]). For each draw and estimator the 95% interval either covers theta or not;
reported per judge and estimator: the share of draws covered and the mean width. The estimators are
those of ``harness.judgments.ppi``: PPI++ (lambda from the data), plain PPI (lambda = 1), and the
human-only interval.

    python benchmarks/ppi_coverage.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import markdown, record_results  # noqa: E402
from harness.judgments.ppi import ppi  # noqa: E402

THETA = 2.0 / 5.0  # the mean of Beta(2, 3)
JUDGES = {
    "biased": lambda y, rng: np.clip(y + 0.1 + rng.normal(0.0, 0.05, len(y)), 0.0, 1.0),
    "noisy": lambda y, rng: np.clip(0.3 * y + 0.35 + rng.normal(0.0, 0.25, len(y)), 0.0, 1.0),
}


def simulate(judge: str, draws: int, big_n: int, n: int, seed: int) -> dict[str, tuple[float, float]]:
    """Estimator -> (share of draws whose interval covers theta, mean width)."""
    rng = np.random.default_rng(seed)
    covered = {"PPI++": 0, "plain PPI": 0, "human only": 0}
    width = {name: 0.0 for name in covered}
    for _ in range(draws):
        truth = rng.beta(2.0, 3.0, big_n)
        machine = JUDGES[judge](truth, rng)
        plus = ppi(machine, truth[:n], machine[:n])
        plain = ppi(machine, truth[:n], machine[:n], method="ppi")
        for name, estimate in (("PPI++", plus.ppi), ("plain PPI", plain.ppi), ("human only", plus.human)):
            covered[name] += estimate.low <= THETA <= estimate.high
            width[name] += estimate.high - estimate.low
    return {name: (covered[name] / draws, width[name] / draws) for name in covered}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=1000, help="N, the queries the machine judges")
    parser.add_argument("--human", type=int, default=100, help="n, of them the humans judge")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-record", action="store_true", help="print only; leave RESULTS.md as it is")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    for position, judge in enumerate(JUDGES):
        for name, (coverage, width) in simulate(judge, args.draws, args.queries, args.human,
                                                args.seed + position).items():
            rows.append([judge, name, f"{coverage:.3f}", f"{width:.4f}"])
    table = markdown(["judge", "estimator", "coverage of theta", "mean width"], rows)
    note = (f"{args.draws} draws per judge of N = {args.queries} queries, n = {args.human} of them judged by humans; "
            f"Y ~ Beta(2, 3), theta = {THETA}; nominal 95%; {time.perf_counter() - started:.0f} s in all")
    print(table)
    print(note)
    if not args.no_record:
        record_results("ppi_coverage", table, note)


if __name__ == "__main__":
    main()
