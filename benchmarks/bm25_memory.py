"""Where BM25's resident memory goes, fit and search, in two source trees side by side (before/after).

    python benchmarks/bm25_memory.py --docs 1000000 --shape z1.0-v1M-short --before 4c88d86 --rounds 2

Each tree (``--before``, the code before a change: a git revision of this repository, or a folder
holding a checkout, and this one) fits BM25 on a corpus
of ``workloads.py`` and answers every query shape at k = 10, 100 and 1000 in its own child process,
as ``engines_matrix.py``'s retbench child does (the same corpus, ids ``d0``, ``d1``, ... and query
files), alternating which tree goes first every round. A child reports its resident set (RSS) and
its high-water mark (``VmHWM``) after each step: the texts read, the corpus made, the fit (whose
high-water mark is the build's peak), the first search (numba loaded, the vocabulary's lookup table
made) and the last, and the q/s of each query shape and cutoff (the median of three searches of
every query; same-round ratios: the rounds of a pair run back to back under the same load). The
table goes to ``benchmarks/RESULTS.md``, section ``bm25_memory.<docs>`` (``bm25_memory.<docs>.<shape>``
for a shape other than z1.0-v1M-short): the before/after of the changes named in ``--note``
(``notes.memory`` points to the memory changes; the search loop's changes are measured so too).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    before_tree,
    DEFAULT_DATA,
    REPO,
    current_rss_mb,
    load_note,
    markdown,
    median,
    peak_rss_mb,
    read_lines,
    record_results,
    report,
    run_child,
)
from workloads import QUERY_SHAPES, SHAPES, shape_named, workload_files  # noqa: E402

CUTOFFS = (10, 100, 1000)
#: Timed searches of each query shape and cutoff in a child; their median is its q/s.
REPEATS = 3
DEFAULT_SHAPE = "z1.0-v1M-short"
STEPS = ("texts", "corpus", "fit", "first search", "searches")


def child(docs_path: Path, query_paths: dict[str, Path]) -> None:
    from corpora import Corpus, Queries
    from retrievers.bm25 import BM25

    out: dict[str, object] = {}

    def step(name: str) -> None:
        out[f"{name}:rss"], out[f"{name}:hwm"] = current_rss_mb(), peak_rss_mb()

    texts = read_lines(docs_path)
    step("texts")
    corpus = Corpus([f"d{j}" for j in range(len(texts))], texts)
    step("corpus")
    retriever = BM25().fit(corpus)
    step("fit")
    queries = {name: read_lines(path) for name, path in query_paths.items()}
    first = next(iter(queries.values()))
    retriever.search(Queries(["q0"], first[:1]), 10)
    step("first search")
    for name, texts_of_queries in queries.items():
        prepared = Queries([f"q{i}" for i in range(len(texts_of_queries))], texts_of_queries)
        for k in CUTOFFS:
            retriever.search(Queries(["q0"], texts_of_queries[:1]), k)
            times = []
            for _ in range(REPEATS):
                start = time.perf_counter()
                retriever.search(prepared, k)
                times.append(time.perf_counter() - start)
            out[f"{name}:qps_{k}"] = len(texts_of_queries) / median(times)
    step("searches")
    report(**out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=500, help="queries of each query shape")
    parser.add_argument("--shape", default=DEFAULT_SHAPE, help=f"corpus shape: {', '.join(SHAPES)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2, help="rounds; medians are reported")
    parser.add_argument("--before", required=False, help="the source tree (a checkout) before the change")
    parser.add_argument("--note", default="", help="what changed between the trees, for RESULTS.md")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    try:
        shape = shape_named(args.shape)
    except ValueError as error:
        parser.error(f"--shape: {error}")
    docs, queries = workload_files(shape, args.docs, args.queries, args.seed, DEFAULT_DATA)
    if args.child:
        child(docs, queries)
        return
    if not args.before:
        parser.error("--before: give the code before the change (a git revision, or a folder holding a checkout)")
    with tempfile.TemporaryDirectory(prefix="retbench-before-") as scratch:
        before = before_tree(parser, args.before, "retrievers/bm25", Path(scratch))
        compare({"before": str(before), "after": str(REPO)}, args, shape)


def section_name(docs: int, shape: str) -> str:
    """``bm25_memory.<docs>`` for the default corpus shape, ``bm25_memory.<docs>.<shape>`` for another."""
    return f"bm25_memory.{docs}" if shape == DEFAULT_SHAPE else f"bm25_memory.{docs}.{shape}"


def compare(trees: dict[str, str], args: argparse.Namespace, shape) -> None:  # type: ignore[no-untyped-def]
    """Run both trees' children, alternating, and record the table."""
    print(f"# BM25 memory at {args.docs:,} docs ({shape.name}); {load_note()}", flush=True)
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for round_number in range(args.rounds):
        order = list(trees) if round_number % 2 == 0 else list(reversed(trees))
        for name in order:
            result = run_child([sys.executable, __file__, "--docs", str(args.docs), "--queries", str(args.queries),
                                "--shape", shape.name, "--seed", str(args.seed), "--child"],
                               env={"PYTHONPATH": trees[name]})
            runs[name].append(result)
            print(f"round {round_number + 1} {name}: fit peak {result['fit:hwm']:,.0f} MB, peak "
                  f"{result['searches:hwm']:,.0f} MB", flush=True)
    value = {name: {key: median([run[key] for run in found]) for key in found[0] if key != "wall"}
             for name, found in runs.items()}
    rows = []
    for step_name in STEPS:
        for kind, label in (("rss", "RSS"), ("hwm", "high-water")):
            key = f"{step_name}:{kind}"
            before, after = value["before"][key], value["after"][key]
            rows.append([f"{step_name}: {label}", f"{before:,.0f}", f"{after:,.0f}", f"{after - before:+,.0f}"])
    for terms in QUERY_SHAPES:
        for k in CUTOFFS:
            key = f"{terms}:qps_{k}"
            ratios = [a[key] / b[key] for a, b in zip(runs["after"], runs["before"])]
            rows.append([f"q/s {terms} terms, k = {k}", f"{value['before'][key]:,.0f}", f"{value['after'][key]:,.0f}",
                         f"{median(ratios):.2f}x (rounds: {', '.join(f'{r:.2f}' for r in ratios)})"])
    table = markdown(["step (MB, or q/s)", "before", "after", "after - before (q/s: after / before)"], rows)
    record_results(section_name(args.docs, shape.name), table,
                   f"{args.docs:,} documents ({shape.name}), {args.queries:,} queries a query shape, one thread, "
                   f"medians of {args.rounds} rounds, each tree in its own process, alternating; {load_note()}"
                   + (f". {args.note}" if args.note else ""))
    print(table)


if __name__ == "__main__":
    main()
