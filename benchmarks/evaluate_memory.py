"""``bench evaluate`` against trec_eval 10 on one large run file: wall time and peak memory (VmHWM).

    python benchmarks/evaluate_memory.py --trec-eval trec_eval --queries 10000 --depth 1000

(``--trec-eval``: a path, or a name looked up on ``PATH``.)

writes a run of ``--queries`` x ``--depth`` lines (``evaluate_speed.py``'s synthetic workload: graded
qrels, ~50 judgments a query) grouped by query, as every retrieval tool writes them, and a copy with
its lines shuffled (a query's lines scattered through the file); then times, in alternating rounds,
``bench evaluate -m ndcg@10,precision@10,recall@100,mrr --format trec`` on each and ``trec_eval -c -q``
with the same measures on the grouped one: wall time, CPU time (user + system) and peak memory. Each command's peak resident memory is its own ``VmHWM``,
read from ``/proc/PID/status`` every few milliseconds while it runs (the high-water mark only grows,
so the last reading before it exits is its peak; ``ru_maxrss`` would count the parent's size from
before ``exec``). The outputs are checked to hold the same numbers (retbench's ``--format trec``
prints trec_eval's lines). The table goes to ``benchmarks/RESULTS.md``, section
``evaluate_memory.<lines>``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, load_note, markdown, record_results  # noqa: E402
from evaluate_speed import MEASURES, write_trec_files  # noqa: E402

#: Seconds between two readings of a running command's /proc status.
POLL = 0.003


def measured(argv: list[str], output: Path) -> tuple[float, float, float]:
    """Run ``argv`` with stdout to ``output``: (wall s, CPU s, peak VmHWM MB). CPU time (user + system,
    from ``wait4``) is the fairer of the two times on a shared machine, where the wall time is as much
    the other processes' as the command's."""
    start = time.perf_counter()
    with output.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, cwd=str(REPO), env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        peak = 0.0
        status = Path(f"/proc/{process.pid}/status")
        while True:
            pid, code, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) / 1024)
            except (OSError, ValueError):
                pass
            time.sleep(POLL)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(code)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({process.returncode})")
    return wall, usage.ru_utime + usage.ru_stime, peak


def trec_lines(path: Path) -> dict[tuple[str, str], str]:
    """(measure, query) -> value of trec_eval's ``-q`` output (retbench's ``--format trec``), runid left out."""
    values = {}
    for line in path.read_text().splitlines():
        name, query, value = line.split("\t")
        if name.strip() != "runid":
            values[(name.strip(), query)] = value
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", metavar="PATH", required=True, help="a trec_eval 10 binary")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--judged", type=int, default=50)
    parser.add_argument("--collection", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    trec_eval = shutil.which(args.trec_eval)
    if trec_eval is None:
        parser.error(f"--trec-eval: {args.trec_eval!r} is not an executable file, nor a command on PATH")
    lines = args.queries * args.depth
    with tempfile.TemporaryDirectory(prefix="retbench-evaluate-") as scratch:
        folder = Path(scratch)
        run_path, qrels_path = write_trec_files(folder, args.queries, args.depth, args.judged, args.collection)
        shuffled = folder / "shuffled.trec"
        with run_path.open("rb") as handle:
            rows = handle.readlines()
        order = np.random.default_rng(0).permutation(len(rows))
        with shuffled.open("wb") as out:
            out.writelines(rows[i] for i in order)
        del rows, order
        retbench = [sys.executable, "-c", "from harness.cli import main; main()", "evaluate", "--qrels",
                    str(qrels_path), "--metrics", ",".join(m["retbench"] for m in MEASURES.values()), "--format", "trec"]
        measures = [part for m in MEASURES.values() for part in ("-m", m["trec_eval"])]
        commands = {"trec_eval 10 (C), grouped file": [trec_eval, "-c", "-q", *measures, str(qrels_path),
                                                       str(run_path)],
                    "bench evaluate, grouped file": [*retbench, str(run_path)],
                    "bench evaluate, shuffled file": [*retbench, str(shuffled)]}
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        outputs = {name: folder / f"out{i}.txt" for i, name in enumerate(commands)}
        print(f"# a {lines:,}-line run; {load_note()}", flush=True)
        for round_number in range(args.rounds):
            names = list(commands) if round_number % 2 == 0 else list(commands)[::-1]
            for name in names:
                results[name].append(measured(commands[name], outputs[name]))
                print(f"round {round_number + 1} {name}: {results[name][-1]}", flush=True)
        reference = trec_lines(outputs["trec_eval 10 (C), grouped file"])
        for name in list(commands)[1:]:
            ours = trec_lines(outputs[name])  # it prints trec_eval's counts too, which -m leaves out
            if any(ours.get(key) != value for key, value in reference.items()):
                differ = [key for key in reference if ours.get(key) != reference[key]][:5]
                raise SystemExit(f"{name}: numbers differ from trec_eval's, e.g. {differ}")
        base = {k: statistics.median(r[k] for r in results["trec_eval 10 (C), grouped file"]) for k in range(3)}
        rows = []
        for name, found in results.items():
            wall, cpu, peak = (statistics.median(r[k] for r in found) for k in range(3))
            rows.append([name, f"{wall:.2f}", f"{wall / base[0]:.2f}x", f"{cpu:.2f}", f"{cpu / base[1]:.2f}x",
                         f"{peak:,.0f}", f"{peak / base[2]:.2f}x"])
        table = markdown(["command", "wall s (median)", "/ trec_eval's", "CPU s (median)", "/ trec_eval's",
                          "VmHWM MB (median)", "/ trec_eval's"], rows)
        print(table)
        record_results(f"evaluate_memory.{lines}", table,
                       f"a {lines:,}-line run ({args.queries:,} queries x {args.depth:,}), ~{args.judged} judgments a "
                       f"query, measures {', '.join(MEASURES)}, {args.rounds} alternating rounds, every output the "
                       f"same numbers as trec_eval's; {load_note()}")


if __name__ == "__main__":
    main()
