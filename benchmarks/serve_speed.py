"""How fast ``bench serve`` answers (issue 15): ``/metrics`` of a 10,000-query x 4-system run, and the
list of 1,000 runs. Not a test.

The big run is made by :func:`harness.compare` over a synthetic dataset (fixed seed): ``--queries``
queries with 1 to 4 graded judgments among 2,000 documents, a 4-valued facet, and ``--systems``
fixed rankings of 20 documents each, scored from a random level per query (so every query has
its own confidence and the risk–coverage curve has a point per query); ``--bootstrap-samples`` 1,000 to keep the setup short
(the API serves what was stored, so the count does not change what is timed). The 1,000 runs are
copies of the bundled corpus's manifest under distinct ids (listing reads manifests only).

``bench serve`` runs in a process of its own on a free loopback port; each request is a fresh HTTP
connection (``urllib``), timed from send to the last byte. Printed: the first request (the files
read and the answer built) and the median of ``--requests`` repeats (the cached answer)::

    python benchmarks/serve_speed.py --queries 10000 --systems 4 --runs 1000 --requests 30
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import load_note, markdown, record_results  # noqa: E402
from corpora import Corpus, Dataset, Qrels, Queries
from harness import Scoring, Statistics, compare  # noqa: E402
from retrievers import FixedRun  # noqa: E402


class Scored(FixedRun):
    """A fixed ranking whose scores start from a per-query level, so confidence differs by query."""

    def __init__(self, rankings: dict[str, list[str]], levels: dict[str, float]):
        super().__init__(rankings)
        self.levels = levels

    def search(self, queries: Queries, k: int) -> dict[str, list[tuple[str, float]]]:
        return {q: [(d, self.levels[q] - 0.001 * i) for i, (d, _) in enumerate(ranked)]
                for q, ranked in super().search(queries, k).items()}


def big_run(out: Path, n_queries: int, n_systems: int, samples: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    doc_ids = [f"d{i:05d}" for i in range(2000)]
    corpus = Corpus(doc_ids, [f"document {i} words" for i in range(2000)])
    query_ids = [f"q{i:05d}" for i in range(n_queries)]
    kinds = ["who", "what", "when", "why"]
    queries = Queries(query_ids, [f"query {i}" for i in range(n_queries)],
                      facets={"kind": [kinds[i % 4] for i in range(n_queries)]})
    qrels = Qrels({q: {doc_ids[d]: int(g) for d, g in zip(rng.choice(2000, 4, replace=False), rng.integers(1, 4, 4))
                       if g} for q in query_ids})
    systems = {}
    for s in range(n_systems):
        rankings = {q: [doc_ids[d] for d in rng.choice(2000, 20, replace=False)] for q in query_ids}
        for q in query_ids[::3]:  # a third of the queries get a relevant document first
            first = next(iter(qrels[q]))
            rankings[q] = [first, *[d for d in rankings[q] if d != first]][:20]
        systems[f"system{s}"] = Scored(rankings, {q: float(level) for q, level in zip(query_ids, rng.random(n_queries))})
    result = compare(systems, Dataset("synthetic", corpus, queries, qrels, "<memory>"), ["ndcg@10", "mrr"],
                     statistics=Statistics(bootstrap_samples=samples), scoring=Scoring(depth=20))
    return result.write(out)


def many_runs(out: Path, n_runs: int) -> None:
    from click.testing import CliRunner

    from harness.cli import main

    seed_folder = out / "seed"
    made = CliRunner().invoke(main, ["compare", "--no-cache", "-q", "--out", str(seed_folder),
                                     "--bootstrap-samples", "200"])
    assert made.exit_code == 0, made.output
    (source,) = seed_folder.iterdir()
    manifest = json.loads((source / "manifest.json").read_text())
    for i in range(n_runs):
        folder = out / "runs" / f"20250101-{i:06d}-article-{i:08x}"
        folder.mkdir(parents=True)
        (folder / "manifest.json").write_text(json.dumps({**manifest, "run_id": folder.name,
                                                          "time": f"2025-01-01T00:00:00+00:{i % 60:02d}"}))
    shutil.rmtree(seed_folder)


def timed(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as answer:  # noqa: S310 (loopback)
        answer.read()
    return time.perf_counter() - start


def serve(root: Path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-c", "from harness.cli import main; main()", "serve",
                                "--results", str(root), "--port", str(port)], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{base}/openapi.json", timeout=5).read()  # noqa: S310
            return process, base
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("bench serve did not start")


def measure(label: str, url: str, repeats: int) -> list[object]:
    """The request's first and median times (ms) and its size, as a row of the table."""
    first = timed(url)
    times = [timed(url) for _ in range(repeats)]
    size = len(urllib.request.urlopen(url, timeout=120).read())  # noqa: S310
    print(f"{label}: first {first * 1000:.1f} ms, median of {repeats} {statistics.median(times) * 1000:.1f} ms "
          f"({size:,} bytes)")
    return [label, first * 1000, statistics.median(times) * 1000, f"{size:,}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--bootstrap-samples", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        start = time.perf_counter()
        folder = big_run(root / "big", args.queries, args.systems, args.bootstrap_samples)
        print(f"setup: {args.queries} queries x {args.systems} systems written in {time.perf_counter() - start:.1f} s")
        many_runs(root / "many", args.runs)
        rows = []
        process, base = serve(root / "big")
        try:
            rows.append(measure(f"/metrics, {args.queries} queries x {args.systems} systems",
                    f"{base}/api/v1/evals/runs/{folder.name}/metrics", args.requests))
            rows.append(measure("/results, a page of 100", f"{base}/api/v1/evals/runs/{folder.name}/results?limit=100",
                                args.requests))
        finally:
            process.terminate()
            process.wait()
        process, base = serve(root / "many" / "runs")
        try:
            rows.append(measure(f"/runs, {args.runs} runs, a page of 50", f"{base}/api/v1/evals/runs", args.requests))
            rows.append(measure(f"/runs, {args.runs} runs, a page of 1000", f"{base}/api/v1/evals/runs?limit=1000",
                                args.requests))
        finally:
            process.terminate()
            process.wait()
    record_results("serve_speed", markdown(["request", "first ms", "median ms", "bytes"], rows),
                   f"medians of {args.requests} requests; {load_note()}")


if __name__ == "__main__":
    main()
