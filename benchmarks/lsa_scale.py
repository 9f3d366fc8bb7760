"""LSA on large corpora: fit and search time, peak memory and rankings, in two source trees (before/after).

    python benchmarks/lsa_scale.py --docs 1000000 --before 678884d

Each tree (``--before``, the code before a change: a git revision of this repository, or a folder
holding a checkout, and this one) fits ``lsa`` (its defaults: 100 dimensions, the large corpora's
path above 50,000 documents) on a corpus of ``workloads.py`` (default shape z1.0-v1M-short: 20 to
40 words a document) and searches ``--queries`` queries of 3 to 6 terms at k = 1000, in its own
child process. A child reports its fit and search times (s) and its high-water mark (``VmHWM``) after
the texts are read, after the fit and after the search. The rankings are compared: the share of
queries whose top 10 and top 1000 doc ids are the same list in both trees, and the largest
difference between the two trees' scores of a document both ranked. The table goes to
``benchmarks/RESULTS.md``, section ``lsa_scale.<docs>`` (``lsa_scale.<docs>.<shape>`` for a shape
other than z1.0-v1M-short).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    before_tree,
    DEFAULT_DATA,
    REPO,
    load_note,
    markdown,
    peak_rss_mb,
    read_lines,
    record_results,
    report,
    run_child,
)
from workloads import SHAPES, shape_named, workload_files  # noqa: E402

DEFAULT_SHAPE = "z1.0-v1M-short"
QUERY_SHAPE = "3-6"
DEPTH = 1000


def child(docs_path: Path, queries_path: Path, n_queries: int, save: Path) -> None:
    from corpora import Corpus, Queries
    from retrievers.lsa import LSA

    texts = read_lines(docs_path)
    corpus = Corpus([f"d{j}" for j in range(len(texts))], texts)
    del texts
    out: dict[str, float] = {"texts:hwm": peak_rss_mb()}
    start = time.perf_counter()
    retriever = LSA().fit(corpus)
    out["fit:s"], out["fit:hwm"] = time.perf_counter() - start, peak_rss_mb()
    lines = read_lines(queries_path)[:n_queries]
    queries = Queries([f"q{i}" for i in range(len(lines))], lines)
    start = time.perf_counter()
    run = retriever.search(queries, DEPTH)
    out["search:s"], out["search:hwm"] = time.perf_counter() - start, peak_rss_mb()
    np.savez(save, offsets=np.asarray(run.offsets), docs=np.asarray(run.doc_index), scores=np.asarray(run.scores))
    report(**out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--shape", default=DEFAULT_SHAPE, help=f"corpus shape: {', '.join(SHAPES)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--before", help="the source tree before the change (a git revision or a checkout)")
    parser.add_argument("--note", default="", help="what changed between the trees, for RESULTS.md")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    try:
        shape = shape_named(args.shape)
    except ValueError as error:
        parser.error(f"--shape: {error}")
    docs, queries = workload_files(shape, args.docs, args.queries, args.seed, DEFAULT_DATA)
    if args.child:
        child(docs, queries[QUERY_SHAPE], args.queries, args.child)
        return
    if not args.before:
        parser.error("--before: give the code before the change (a git revision, or a folder holding a checkout)")
    with tempfile.TemporaryDirectory(prefix="retbench-before-") as scratch:
        before = before_tree(parser, args.before, "retrievers/lsa.py", Path(scratch))
        compare({"before": str(before), "after": str(REPO)}, args, shape, Path(scratch))


def compare(trees: dict[str, str], args: argparse.Namespace, shape, scratch: Path) -> None:  # type: ignore[no-untyped-def]
    """Run each tree's child once (before first), compare the rankings, record the table."""
    print(f"# LSA at {args.docs:,} docs ({shape.name}); {load_note()}", flush=True)
    results, runs = {}, {}
    for name, tree in trees.items():
        save = scratch / f"{name}.npz"
        results[name] = run_child([sys.executable, __file__, "--docs", str(args.docs), "--queries", str(args.queries),
                                   "--shape", shape.name, "--seed", str(args.seed), "--child", str(save)],
                                  env={"PYTHONPATH": tree})
        runs[name] = np.load(save)
        print(f"{name}: {results[name]}", flush=True)
    same_10, same_all, largest = _agreement(runs["before"], runs["after"])
    rows = []
    for key, label in (("fit:s", "fit (s)"), ("search:s", f"search, {args.queries:,} queries, k = {DEPTH} (s)"),
                       ("texts:hwm", "high-water after the texts (MB)"), ("fit:hwm", "high-water after fit (MB)"),
                       ("search:hwm", "high-water after search (MB)")):
        before, after = results["before"][key], results["after"][key]
        rows.append([label, f"{before:,.1f}", f"{after:,.1f}", f"{after / before:.2f}x"])
    rows.append(["queries whose top 10 is the same list", "", f"{same_10:.2%}", ""])
    rows.append([f"queries whose top {DEPTH} is the same list", "", f"{same_all:.2%}", ""])
    rows.append(["largest score difference of a document both ranked", "", f"{largest:.1e}", ""])
    table = markdown(["", "before", "after", "after / before"], rows)
    section = f"lsa_scale.{args.docs}" + ("" if shape.name == DEFAULT_SHAPE else f".{shape.name}")
    record_results(section, table,
                   f"{args.docs:,} documents ({shape.name}), {args.queries:,} queries of {QUERY_SHAPE} terms, "
                   f"lsa's defaults, each tree in its own process; {load_note()}"
                   + (f". {args.note}" if args.note else ""))
    print(table)


def _agreement(before, after) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """Share of queries with the same top 10, the same whole ranking, and the largest score difference."""
    same_10 = same_all = 0
    largest = 0.0
    n = len(before["offsets"]) - 1
    for q in range(n):
        a = slice(before["offsets"][q], before["offsets"][q + 1])
        b = slice(after["offsets"][q], after["offsets"][q + 1])
        docs_a, docs_b = before["docs"][a], after["docs"][b]
        same_10 += np.array_equal(docs_a[:10], docs_b[:10])
        same_all += np.array_equal(docs_a, docs_b)
        common, in_a, in_b = np.intersect1d(docs_a, docs_b, return_indices=True)
        if len(common):
            largest = max(largest, float(np.abs(before["scores"][a][in_a] - after["scores"][b][in_b]).max()))
    return same_10 / max(n, 1), same_all / max(n, 1), largest


if __name__ == "__main__":
    main()
