"""Writing a large run as text: the results store's writer against the plain one it replaced.

A synthetic run of ``--queries`` x ``--depth`` results (default 1,000 x 1,000 = 1M lines) whose
scores have three decimals, so that most queries hold ties, as fusion runs do. Timed in one
process, alternating, medians of ``--rounds``:

* ``plain``: the scores written as they are, one f-string per line (the results store's writer
  before tied scores were separated, once ``Run.to_trec``; trec_eval then re-sorts the ties);
* ``format_run``: scores made strictly decreasing as floats (``corpora.trec_io.trec_scores``);
* ``format_run_and_raw_scores``: the run file and its raw scores, what a results folder now
  writes per system.

    python benchmarks/write_run_speed.py --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import load_note, markdown, record_results  # noqa: E402
from corpora import Run  # noqa: E402
from corpora.trec_io import format_run, format_run_and_raw_scores  # noqa: E402


def plain_trec(run: Run, tag: str) -> str:
    """The writer ``format_run`` replaced: every score as it is, ties left to trec_eval's re-sort."""
    lines = []
    for j, q in enumerate(run.query_ids):
        start, stop = int(run.offsets[j]), int(run.offsets[j + 1])
        docs = run.doc_ids[run.doc_index[start:stop]]
        for rank, (d, s) in enumerate(zip(docs, run.scores[start:stop]), 1):
            lines.append(f"{q} Q0 {d} {rank} {float(s)!r} {tag}")
    return "\n".join(lines) + ("\n" if lines else "")


def synthetic_run(n_queries: int, depth: int, n_docs: int, seed: int) -> Run:
    rng = np.random.default_rng(seed)
    doc_index = np.concatenate([rng.choice(n_docs, depth, replace=False) for _ in range(n_queries)])
    scores = np.concatenate([np.sort(np.round(rng.random(depth), 3))[::-1] for _ in range(n_queries)])
    return Run([f"q{i}" for i in range(n_queries)], np.array([f"doc{j}" for j in range(n_docs)], dtype=object),
               np.arange(0, n_queries * depth + 1, depth), doc_index, scores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    run = synthetic_run(args.queries, args.depth, args.docs, args.seed)
    writers: dict[str, Callable[[], object]] = {
        "plain": lambda: plain_trec(run, "tag"),
        "format_run": lambda: format_run(run, "tag"),
        "format_run_and_raw_scores": lambda: format_run_and_raw_scores(run, "tag"),
    }
    times: dict[str, list[float]] = {name: [] for name in writers}
    for round_ in range(args.rounds):
        names = list(writers)
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            start = time.perf_counter()
            writers[name]()
            times[name].append(time.perf_counter() - start)
    lines = args.queries * args.depth
    table = markdown(["writer", "median s"], [[name, statistics.median(seconds)] for name, seconds in times.items()])
    print(f"{lines:,} lines, {args.rounds} rounds, medians:\n{table}")
    record_results("write_run_speed", table, f"{lines:,} lines, medians of {args.rounds} alternating rounds; "
                   f"{load_note()}")


if __name__ == "__main__":
    main()
