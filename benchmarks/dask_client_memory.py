"""The Dask client's peak memory against one process, and the results folders' bytes.

    python benchmarks/dask_client_memory.py --docs 1000000 --queries 1000 --systems bm25

Runs ``compare(systems, folder, ["ndcg@10"], depth 1000, no cache)`` and writes the results folder,
as ``bench compare --systems ... --metrics ndcg@10 --no-cache`` does, on the same synthetic BEIR
folder (``synthetic.py``, fixed seed), once with the local engine and once with
``DaskEngine(workers=N)`` for each ``--workers`` (a LocalCluster the run starts: one thread per
worker process). Each run is a fresh child process; its peak resident set is read from its own
``VmHWM`` at the end, so a Dask run's number is the client's alone (its workers are other
processes, whose peaks are read the same way on each worker before the cluster stops and reported
beside it). ``wall`` is the child's whole life (imports and the cluster's start included); ``fit``
and ``search`` are what the manifest records for the first system. Then every Dask folder is
compared with the local one, byte for byte, but for the run id and the manifest's times and
engine record (``tests/conftest.py``'s rule): the table says ``same bytes`` or what differs.

The floors: a child that imports what ``compare`` runs and does nothing else, and, for each
``--workers``, one that also starts the same cluster and client (``a bare client``): what a
process costs before it holds any of the comparison.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import beir_folder, load_note, markdown, record_results, run_child  # noqa: E402
from synthetic import workload_arguments  # noqa: E402

#: The manifest's entries that differ between two runs of the same comparison (tests/conftest.py).
VOLATILE_MANIFEST = ("time", "run_id", "command_line", "engine", "files")
VOLATILE_SYSTEM = ("fit_seconds", "search_seconds")

CHILD = r"""
import json, sys
sys.path.insert(0, {here!r})
from common import peak_rss_mb
from harness import compare
from harness.core.options import RunOptions, Scoring

systems, folder, out, workers = {systems!r}, {folder!r}, {out!r}, {workers!r}
engine = "local"
worker_peaks = []
if workers:
    from harness.engines import DaskEngine
    engine = DaskEngine(workers=workers)
result = compare(systems, folder, ["ndcg@10"], scoring=Scoring(depth=1000), run=RunOptions(cache=False, engine=engine))
written = result.write(out)
if workers:
    def vmhwm():  # a worker's own peak, read in the worker (by value: workers cannot import this script)
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))
    worker_peaks = sorted(engine.client().run(vmhwm).values())
    engine.close()
print(json.dumps({{"peak_rss_mb": peak_rss_mb(), "folder": str(written), "worker_peaks_mb": worker_peaks}}))
"""

BARE = r"""
import json, sys
sys.path.insert(0, {here!r})
from common import peak_rss_mb
import harness.core.api  # what compare() runs, with its imports
workers = {workers!r}
if workers:
    from harness.engines import DaskEngine
    engine = DaskEngine(workers=workers)
    engine.client()
peak = peak_rss_mb()
if workers:
    engine.close()
print(json.dumps({{"peak_rss_mb": peak}}))
"""


def manifest_view(path: Path) -> dict:
    document = json.loads(path.read_text())
    for key in VOLATILE_MANIFEST:
        document.pop(key, None)
    for system in document.get("systems", []):
        for key in VOLATILE_SYSTEM:
            system.pop(key, None)
    return document


def differences(first: Path, second: Path) -> list[str]:
    """What differs between two results folders (empty: the same bytes), by the tests' rule."""
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    if names != sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file()):
        return ["the files"]
    found = []
    for name in names:
        if name.name == "manifest.json":
            if manifest_view(first / name) != manifest_view(second / name):
                found.append(str(name))
            continue
        a = (first / name).read_bytes().replace(first.name.encode(), b"RUN")
        b = (second / name).read_bytes().replace(second.name.encode(), b"RUN")
        if a != b:
            found.append(str(name))
    return found


def first_system_seconds(folder: Path) -> tuple[float, float]:
    system = json.loads((folder / "manifest.json").read_text())["systems"][0]
    return float(system["fit_seconds"]), float(system["search_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload_arguments(parser)
    parser.add_argument("--systems", default="bm25", help="the --systems of the comparison (default bm25)")
    parser.add_argument("--workers", default="2", help="comma-separated worker counts of the Dask runs (default 2)")
    args = parser.parse_args()
    worker_counts = [int(n) for n in args.workers.split(",") if n]
    # built in a child, so this parent stays small
    subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                    f"import common; common.beir_folder({args.docs}, {args.queries}, {args.seed})"], check=True)
    folder = beir_folder(args.docs, args.queries, args.seed)
    work = Path(tempfile.mkdtemp(prefix="retbench-dask-memory-"))
    here = str(Path(__file__).resolve().parent)
    print(f"# {args.systems} at {args.docs:,} docs, {args.queries:,} queries; {load_note()}", flush=True)
    rows = []
    try:
        runs = {}
        for workers in [0, *worker_counts]:
            name = "one process (local engine)" if not workers else f"dask, {workers} worker(s): the client"
            out = work / f"w{workers}"
            child = CHILD.format(here=here, systems=args.systems, folder=str(folder), out=str(out), workers=workers)
            result = run_child([sys.executable, "-c", child], timeout=7200)
            written = Path(result["folder"])
            written = written.parent if written.is_file() else written  # write() returns the manifest
            fit, search = first_system_seconds(written)
            runs[workers] = (name, result, written, fit, search)
            print(f"{name}: peak {result['peak_rss_mb']:.0f} MB, workers {result['worker_peaks_mb']}, "
                  f"{result['wall']:.1f} s (fit {fit:.1f} s, search {search:.1f} s)", flush=True)
        local_peak, local_wall = runs[0][1]["peak_rss_mb"], runs[0][1]["wall"]
        for workers, (name, result, written, fit, search) in runs.items():
            same = "—" if not workers else ("same bytes" if not differences(runs[0][2], written)
                                            else "differs: " + ", ".join(differences(runs[0][2], written)))
            peaks = result["worker_peaks_mb"]
            rows.append([name, result["peak_rss_mb"], f"{100 * result['peak_rss_mb'] / local_peak:.0f}%",
                         " / ".join(f"{p:,.0f}" for p in peaks) if peaks else "—", result["wall"],
                         result["wall"] / local_wall, fit, search, same])
        for workers in [0, *worker_counts]:  # the floors: imports (and the cluster), no work
            bare = run_child([sys.executable, "-c", BARE.format(here=here, workers=workers)], timeout=600)
            name = "one process: imports only, no work" if not workers else \
                f"dask, {workers} worker(s): a bare client (imports, cluster started, no work)"
            print(f"{name}: peak {bare['peak_rss_mb']:.0f} MB", flush=True)
            rows.append([name, bare["peak_rss_mb"], f"{100 * bare['peak_rss_mb'] / local_peak:.0f}%", "—",
                         bare["wall"], "—", "—", "—", "—"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = markdown(["run", "peak RSS MB (this process)", "of one process's", "each worker's peak MB", "wall s",
                      "ratio to one process", "fit s", "search s", "results folder vs one process"], rows)
    print(f"# done; {load_note()}")
    print(table)
    record_results("dask_client_memory", table, f"{args.systems} at {args.docs:,} docs, {args.queries:,} queries, "
                   f"depth 1000, one run each; {load_note()}")


if __name__ == "__main__":
    main()
