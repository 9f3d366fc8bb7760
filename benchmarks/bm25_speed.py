"""BM25 side by side: retbench vs bm25s (numpy and numba backends) vs rank_bm25, index and query.

    python benchmarks/bm25_speed.py --docs 1000000 --rounds 3
    python benchmarks/bm25_speed.py --docs 100000 --rounds 3 --systems retbench,bm25s-numpy,bm25s-numba,rank-bm25

Each system runs in its own child process per round (the order rotates every round) on the same
synthetic Zipfian corpus (``synthetic.py``, fixed seed) and reports:

- index: from raw text to a searchable index, the library's own tokenizer included;
- q/s 1 thread and 2 threads: top-10 for every query (query tokenisation included), each after an
  untimed warm-up call; for bm25s-numba ``compile`` is the JIT time those warm-ups pay;
- peak RSS of the child (texts + index + queries) and RSS right after loading the texts.

rank_bm25 has no index to speak of (it scores in pure Python): it runs on at most 100 queries.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    current_rss_mb,
    load_note,
    markdown,
    median,
    peak_rss_mb,
    read_lines,
    report,
    run_child,
    record_results,
    texts_file,
)
from synthetic import workload_arguments  # noqa: E402

SYSTEMS = ("retbench", "bm25s-numpy", "bm25s-numba", "rank-bm25")


def child(system: str, docs_path: Path, queries_path: Path, k: int, max_queries: int) -> None:
    texts = read_lines(docs_path)
    queries = read_lines(queries_path)[:max_queries]
    loaded_rss = current_rss_mb()
    out: dict[str, object] = {"system": system, "loaded_rss_mb": loaded_rss, "n_docs": len(texts)}
    if system == "retbench":
        from corpora import Corpus, Queries
        from retrievers.bm25 import BM25

        corpus = Corpus([f"d{j}" for j in range(len(texts))], texts)
        batch = Queries([f"q{i}" for i in range(len(queries))], queries)
        start = time.perf_counter()
        retriever = BM25().fit(corpus)
        out["index_s"] = time.perf_counter() - start
        retriever.search(Queries(["warm"], [queries[0]]), k)
        for threads in (1, 2):
            retriever.threads = threads
            start = time.perf_counter()
            retriever.search(batch, k)
            out[f"qps_{threads}"] = len(queries) / (time.perf_counter() - start)
    elif system.startswith("bm25s"):
        import bm25s

        backend = "numba" if system == "bm25s-numba" else "numpy"
        start = time.perf_counter()
        tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
        out["tokenize_s"] = time.perf_counter() - start
        retriever = bm25s.BM25(backend=backend)
        retriever.index(tokens, show_progress=False)
        out["index_s"] = time.perf_counter() - start
        del tokens
        warm = bm25s.tokenize(queries[:2], stopwords="en", show_progress=False)
        out["compile_s"] = 0.0
        for threads in (1, 2):
            start = time.perf_counter()  # numba compiles on first use, for each thread count
            retriever.retrieve(warm, k=k, show_progress=False, n_threads=threads)
            if backend == "numba":
                out["compile_s"] += time.perf_counter() - start
            start = time.perf_counter()
            tokens = bm25s.tokenize(queries, stopwords="en", show_progress=False)
            retriever.retrieve(tokens, k=k, show_progress=False, n_threads=threads)
            out[f"qps_{threads}"] = len(queries) / (time.perf_counter() - start)
    elif system == "rank-bm25":
        import numpy as np
        from rank_bm25 import BM25Okapi

        from corpora.analyzers import article_analyzer

        start = time.perf_counter()
        retriever = BM25Okapi([article_analyzer(t) for t in texts])
        out["index_s"] = time.perf_counter() - start
        subset = queries[:100]
        start = time.perf_counter()
        for query in subset:
            scores = retriever.get_scores(article_analyzer(query))
            np.argpartition(-scores, k)[:k]
        out["qps_1"] = len(subset) / (time.perf_counter() - start)
    else:
        raise SystemExit(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
    out["peak_rss_mb"] = peak_rss_mb()
    report(**out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload_arguments(parser, docs=1_000_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--systems", default="retbench,bm25s-numpy,bm25s-numba")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--max-queries", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    docs_path, queries_path = texts_file(args.docs, args.queries, args.seed)
    if args.child:
        child(args.child, docs_path, queries_path, args.k, args.max_queries or args.queries)
        return

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    results: dict[str, list[dict]] = {s: [] for s in systems}
    print(f"# BM25 at {args.docs:,} docs, {args.queries:,} queries, top-{args.k}; {load_note()}", flush=True)
    for round_number in range(args.rounds):
        order = systems[round_number % len(systems):] + systems[:round_number % len(systems)]
        for system in order:
            result = run_child([sys.executable, __file__, "--docs", str(args.docs), "--queries", str(args.queries),
                                "--seed", str(args.seed), "--k", str(args.k), "--child", system])
            results[system].append(result)
            print(f"round {round_number + 1} {system}: {result}", flush=True)
    print(f"# done; {load_note()}")
    base = {key: median([r.get(key) for r in results.get("retbench", [])]) for key in ("index_s", "qps_1", "qps_2")}
    rows = []
    for system in systems:
        runs = results[system]
        index_s = median([r.get("index_s") for r in runs])
        qps = [median([r.get(f"qps_{t}") for r in runs]) for t in (1, 2)]
        rows.append([system, index_s, base["index_s"] and index_s / base["index_s"],
                     median([r.get("tokenize_s") for r in runs]), qps[0], qps[1],
                     base["qps_1"] / qps[0] if qps[0] == qps[0] else float("nan"),
                     base["qps_2"] / qps[1] if qps[1] == qps[1] else float("nan"),
                     median([r.get("compile_s") for r in runs]), median([r.get("peak_rss_mb") for r in runs]),
                     median([r.get("loaded_rss_mb") for r in runs])])
    table = markdown(["system", "index s", "index time / retbench's", "of which tokenize s", "q/s 1 thread",
                      "q/s 2 threads", "retbench q/s / this, 1 thread", "same, 2 threads", "compile s",
                      "peak RSS MB", "RSS after loading texts MB"], rows)
    print(table)
    record_results(f"bm25_speed.{args.docs}", table, f"{args.docs:,} docs, {args.queries:,} queries, "
                   f"top-{args.k}, medians of {args.rounds} rounds; {load_note()}")


if __name__ == "__main__":
    main()
