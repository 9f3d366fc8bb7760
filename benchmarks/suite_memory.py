"""Peak memory of a suite against its largest collection alone.

A suite (``bench compare --corpus A --corpus B ...``, :func:`harness.compare_suite`) loads its
collections one at a time and releases each (dataset, runs, fitted indexes) once its results folder
is written, so its peak should be that of its largest collection, not of all of them. Each run is a
child process (``bench compare``'s work: compare, write the folder) whose own peak resident set
(``VmHWM``) is reported: each collection alone, then the suite of all of them.

    python benchmarks/suite_memory.py                      # cranfield, cisi, med of ../shared/data
                                                           # (or of $RETBENCH_DATA, as the tests read it)
    python benchmarks/suite_memory.py --collections cranfield,cisi,med --systems bm25,lsa,weighted,rrf
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, load_note, markdown, peak_rss_mb, record_results, report, run_child  # noqa: E402

DATA = Path(os.environ.get("RETBENCH_DATA") or REPO.parent / "shared" / "data")


def child(names: list[str], systems: str, metrics: str) -> None:
    from harness import compare

    with tempfile.TemporaryDirectory() as out:
        dataset = names[0] if len(names) == 1 else names
        compare(systems, dataset, metrics).write(out, command_line=["benchmark"])
    report(peak_rss_mb=peak_rss_mb())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the collections")
    parser.add_argument("--collections", default="cranfield,cisi,med")
    parser.add_argument("--systems", default="bm25,lsa,weighted,rrf")
    parser.add_argument("--metrics", default="ndcg@10,recall@10,mrr,hit@10")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.systems, args.metrics)
        return
    paths = [str(args.data / name) for name in args.collections.split(",")]
    me = [sys.executable, str(Path(__file__).resolve()), "--systems", args.systems, "--metrics", args.metrics]
    rows, alone = [], []
    for path in paths:
        peak = run_child([*me, "--child", path])["peak_rss_mb"]
        alone.append(peak)
        rows.append([Path(path).name + " alone", peak, ""])
    suite = run_child([*me, "--child", *paths])["peak_rss_mb"]
    ratio = suite / max(alone)
    rows.append([f"suite of {len(paths)}", suite, f"{ratio:.3f} x the largest alone"])
    table = markdown(["run", "peak RSS MB", "ratio"], rows)
    print(table)
    record_results("suite_memory", table, f"systems {args.systems}; metrics {args.metrics}; each run a child "
                   f"process (compare + write), its own VmHWM; {load_note()}")


if __name__ == "__main__":
    main()
