"""The paired statistics of ``bench compare`` on MS MARCO's full dev set size: time and peak memory.

    python benchmarks/statistics_scale.py --queries 101093 --systems 10

Per-query values of ``--systems`` systems on ``--metrics`` metrics over ``--queries`` queries
(seeded: a system's values are a shared query difficulty plus its own noise, clipped to [0, 1]) go
through :func:`harness.core.statistics.compare_systems` with the defaults (5,000 bootstrap
resamples, 10,000 sign flips, Holm per metric), each system against the first, then through
:func:`harness.core.power.power_table` and :func:`harness.readings.leaderboard.leaderboards` (the
same 5,000 resamples, every system's rank in each), in a child process that reports its wall time per step and
its high-water mark (``VmHWM``) before and after. The bootstrap and the randomisation test draw their
resamples a chunk of about a million query cells at a time, so what they hold beyond the per-query
values is the resampled means or ranks (resamples x comparisons, or x systems) and one chunk (its
rows x queries x comparisons, or x systems, gathered at once). The table goes to
``benchmarks/RESULTS.md``, section ``statistics_scale.<queries>``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import load_note, markdown, peak_rss_mb, record_results, report, run_child  # noqa: E402


def child(n_queries: int, n_systems: int, metrics: list[str]) -> None:
    import pandas as pd

    from harness.core.power import power_table
    from harness.core.statistics import compare_systems
    from harness.readings.leaderboard import leaderboards

    rng = np.random.default_rng(0)
    difficulty = rng.random((n_queries, len(metrics)))
    per_query = {f"s{j}": {m: np.clip(difficulty[:, i] + rng.normal(0.01 * j, 0.2, n_queries), 0, 1)
                           for i, m in enumerate(metrics)} for j in range(n_systems)}
    pairs = [(f"s{j}", "s0") for j in range(1, n_systems)]
    out: dict[str, float] = {"values:hwm": peak_rss_mb()}
    start = time.perf_counter()
    comparisons = compare_systems(per_query, pairs, metrics)
    out["compare:s"], out["compare:hwm"] = time.perf_counter() - start, peak_rss_mb()
    frame = pd.concat([pd.DataFrame({"system": system, "query_id": np.arange(n_queries), **by_metric})
                       for system, by_metric in per_query.items()], ignore_index=True)
    start = time.perf_counter()
    power_table(frame, comparisons)
    out["power:s"] = time.perf_counter() - start
    out["power:hwm"] = peak_rss_mb()
    start = time.perf_counter()
    leaderboards(frame, metrics, comparisons)
    out["leaderboard:s"], out["leaderboard:hwm"] = time.perf_counter() - start, peak_rss_mb()
    out["comparisons"] = len(comparisons)
    report(**out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=101_093)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--metrics", default="mrr@10,ndcg@10,recall@1000")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    metrics = args.metrics.split(",")
    if args.child:
        child(args.queries, args.systems, metrics)
        return
    print(f"# statistics over {args.queries:,} queries x {args.systems} systems; {load_note()}", flush=True)
    result = run_child([sys.executable, __file__, "--queries", str(args.queries), "--systems", str(args.systems),
                        "--metrics", args.metrics, "--child"])
    rows = [["per-query values made: high-water (MB)", f"{result['values:hwm']:,.0f}"],
            [f"compare_systems, {result['comparisons']} comparisons (s)", f"{result['compare:s']:,.1f}"],
            ["after compare_systems: high-water (MB)", f"{result['compare:hwm']:,.0f}"],
            ["power_table (s)", f"{result['power:s']:,.1f}"],
            ["after power_table: high-water (MB)", f"{result['power:hwm']:,.0f}"],
            ["leaderboards, every metric (s)", f"{result['leaderboard:s']:,.1f}"],
            ["after leaderboards: high-water (MB)", f"{result['leaderboard:hwm']:,.0f}"]]
    table = markdown(["step", "value"], rows)
    record_results(f"statistics_scale.{args.queries}", table,
                   f"{args.queries:,} queries x {args.systems} systems x {len(metrics)} metrics, each system against "
                   f"the first, the defaults (5,000 resamples, 10,000 flips, Holm per metric), one child process; "
                   f"{load_note()}")
    print(table)


if __name__ == "__main__":
    main()
