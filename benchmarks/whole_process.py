"""Whole process, side by side: ``bench compare`` vs a bm25s + pytrec_eval script doing the same job.

    python benchmarks/whole_process.py --docs 200000 --queries 1000 --rounds 3

Both read the same synthetic BEIR folder (``synthetic.py``, fixed seed), index with BM25, retrieve
the top 1,000 for 1,000 queries, score nDCG@10 and write their results; each run is a fresh
process timed from start to exit (imports included), the two alternating round by round.
``bench compare`` runs with ``--no-cache`` here, so it indexes from scratch like its peer.

The cache rows: per round, ``bench compare`` twice on an empty cache folder; ``fit`` is the BM25
fit time the manifest records, first run (builds and writes the cache) then second (loads it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, beir_folder, load_note, markdown, median, record_results  # noqa: E402
from synthetic import workload_arguments  # noqa: E402

BENCH = [sys.executable, "-c", "import sys; from harness.cli import main; sys.argv[0] = 'bench'; main()"]


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB, from the kernel's accounting of the child) of one process."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a chatty child never blocks
        start = time.perf_counter()
        process = subprocess.Popen(argv, cwd=str(REPO), env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(argv)} failed:\n{errors.read().decode()[-3000:]}")
    return wall, usage.ru_maxrss / 1024


def fit_seconds(out: Path) -> float:
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    manifest = json.loads((run / "manifest.json").read_text())
    return float(manifest["systems"][0]["fit_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload_arguments(parser)
    args = parser.parse_args()
    # built in a child, so this parent stays small (a child's peak RSS starts from its parent's)
    subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                    f"import common; common.beir_folder({args.docs}, {args.queries}, {args.seed})"], check=True)
    corpus = beir_folder(args.docs, args.queries, args.seed)
    work = Path(tempfile.mkdtemp(prefix="retbench-whole-"))
    compare = ["compare", "--corpus", str(corpus), "--systems", "bm25", "--metrics", "ndcg@10", "--quiet"]
    times: dict[str, list[float]] = {"bench": [], "peer": [], "cold": [], "warm": []}
    peaks: dict[str, list[float]] = {"bench": [], "peer": []}
    fits: dict[str, list[float]] = {"cold": [], "warm": []}
    print(f"# whole process at {args.docs:,} docs, {args.queries:,} queries; {load_note()}", flush=True)
    try:
        for round_number in range(args.rounds):
            jobs = {
                "bench": BENCH + compare + ["--no-cache", "--out", str(work / f"bench-{round_number}")],
                "peer": [sys.executable, str(Path(__file__).parent / "bm25s_pytrec_eval.py"), str(corpus),
                         str(work / f"peer-{round_number}")],
            }
            for name in (["bench", "peer"] if round_number % 2 == 0 else ["peer", "bench"]):
                wall, peak = timed(jobs[name])
                times[name].append(wall)
                peaks[name].append(peak)
                print(f"round {round_number + 1} {name}: {wall:.2f} s, peak {peak:.0f} MB", flush=True)
            cache = work / f"cache-{round_number}"
            for name in ("cold", "warm"):
                out = work / f"{name}-{round_number}"
                wall, _ = timed(BENCH + compare + ["--cache-dir", str(cache), "--out", str(out)])
                times[name].append(wall)
                fits[name].append(fit_seconds(out))
                print(f"round {round_number + 1} cache {name}: {wall:.2f} s, fit {fits[name][-1]:.3f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"# done; {load_note()}")
    bench, peer = median(times["bench"]), median(times["peer"])
    table = markdown(["process", "median s", "ratio to bm25s + pytrec_eval", "peak RSS MB"], [
        ["bench compare (no cache)", bench, bench / peer, median(peaks["bench"])],
        ["bm25s + pytrec_eval script", peer, 1.0, median(peaks["peer"])],
    ])
    cold, warm = median(fits["cold"]), median(fits["warm"])
    table += "\n\n" + markdown(["bench compare with the cache", "bm25 fit s", "whole process s",
                                 "fit / first run's fit"], [
        ["first run (builds, writes the cache)", cold, median(times["cold"]), 1.0],
        ["second run (loads the cache)", warm, median(times["warm"]), warm / cold],
    ])
    print(table)
    record_results("whole_process", table, f"{args.docs:,} docs, {args.queries:,} queries, medians of {args.rounds} "
                   f"rounds; {load_note()}")


if __name__ == "__main__":
    main()
