"""BM25 against the engines used when speed matters: retbench vs tantivy vs PISA vs bm25s (numba).

    python benchmarks/engines_speed.py --docs 1000000 --queries 2000 --rounds 3
    python benchmarks/engines_speed.py --docs 100000 --rounds 1 --systems retbench,tantivy

Each system runs in its own child process per round (the order rotates every round) on the same
synthetic Zipfian corpus (``synthetic.py``, fixed seed, ~60 tokens a document) with queries of 3 to 6
distinct words, one thread throughout, and reports:

- index: from raw text (one line per document) to a searchable index, the engine's own tokenizer;
- q/s at top-10 and at top-1000: every query, query parsing and result lists included, each after an
  untimed warm-up call (for bm25s-numba ``compile`` is the JIT time its warm-ups pay; for retbench
  ``first search`` is its top-10 warm-up, which starts numba and loads the compiled loop, compiling
  it when numba's on-disk cache is empty);
- peak RSS of the child (texts + index + queries + results), and the peak up to the end of indexing.

What is and is not comparable (BM25 k1 = 1.2, b = 0.75 everywhere):

- retbench: lowercase, ``[a-z0-9]+`` tokens (a non-ASCII letter splits a word), the article's stop
  words removed before counting |d|; Lucene idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``, float64; exact
  top k (ties by doc id), every posting scored, in the compiled loop where numba is installed (the
  ``fast`` extra), else scipy's sparse products. Its index is built in memory (``BM25().fit``, no cache).
- tantivy: its ``simple`` tokenizer (unicode alphanumeric runs) + lowercase + the same stop words, so
  |d| counts the same tokens except around accented words; Lucene idf, float32 scores, document
  lengths stored in one byte (lossy above 40 tokens). On-disk index in a temporary folder, one
  writer thread, 1 GB heap (``--tantivy-heap-mb``; tantivy's default, 128, leaves more segments and
  a smaller peak); queries through ``index.parse_query`` (OR of the terms).
- PISA (pyterrier-pisa): its English tokenizer, no stemmer; stop words are a query-time filter in
  PISA, so the index keeps them and |d| counts them (avgdl is ~1.7x retbench's); Robertson idf
  ``ln((N - df + 0.5) / (df + 0.5))`` floored at 1e-6, float32; block-max WAND, unquantised scores.
- bm25s (numba backend): its own tokenizer and English stop words, Lucene idf, float32.

The queries hold no stop word, so the differences are |d| and floating-point precision, not which
terms are matched. rank_bm25 and bm25s's numpy backend are left to ``bm25_speed.py``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
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

SYSTEMS = ("retbench", "tantivy", "pisa", "bm25s-numba")
QUERY_TERMS = (3, 6)
CUTOFFS = (10, 1000)


def _retbench(texts: list[str], queries: list[str], out: dict[str, object]) -> None:
    from corpora import Corpus, Queries
    from retrievers.bm25 import BM25

    corpus = Corpus([f"d{j}" for j in range(len(texts))], texts)
    batch = Queries([f"q{i}" for i in range(len(queries))], queries)
    start = time.perf_counter()
    retriever = BM25().fit(corpus)
    out["index_s"] = time.perf_counter() - start
    out["index_peak_rss_mb"] = peak_rss_mb()
    for k in CUTOFFS:
        start = time.perf_counter()  # the first search starts numba and loads the compiled loop
        retriever.search(Queries(["warm"], [queries[0]]), k)
        out[f"first_search_s_{k}"] = time.perf_counter() - start
        start = time.perf_counter()
        retriever.search(batch, k)
        out[f"qps_{k}"] = len(queries) / (time.perf_counter() - start)


def _tantivy(texts: list[str], queries: list[str], out: dict[str, object], folder: Path, heap_mb: int) -> None:
    import tantivy

    from corpora.analyzers import ARTICLE_STOP_WORDS

    start = time.perf_counter()
    analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.lowercase())
                .filter(tantivy.Filter.custom_stopword(sorted(ARTICLE_STOP_WORDS))).build())
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False, tokenizer_name="retbench", index_option="freq")
    index = tantivy.Index(builder.build(), path=str(folder))
    index.register_tokenizer("retbench", analyzer)
    writer = index.writer(heap_size=heap_mb * 1_000_000, num_threads=1)
    for text in texts:
        writer.add_document(tantivy.Document(body=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    out["index_s"] = time.perf_counter() - start
    out["index_peak_rss_mb"] = peak_rss_mb()
    out["segments"] = searcher.num_segments
    for k in CUTOFFS:
        searcher.search(index.parse_query(queries[0], ["body"]), limit=k)
        start = time.perf_counter()
        for query in queries:
            searcher.search(index.parse_query(query, ["body"]), limit=k).hits
        out[f"qps_{k}"] = len(queries) / (time.perf_counter() - start)


def _pisa(texts: list[str], queries: list[str], out: dict[str, object], folder: Path) -> None:
    import pandas as pd
    from pyterrier_pisa import PisaIndex

    start = time.perf_counter()
    index = PisaIndex(str(folder / "pisa"), stemmer="none", stops="none", threads=1, overwrite=True)
    index.index({"docno": f"d{j}", "text": text} for j, text in enumerate(texts))
    out["index_s"] = time.perf_counter() - start
    out["index_peak_rss_mb"] = peak_rss_mb()
    frame = pd.DataFrame({"qid": [f"q{i}" for i in range(len(queries))], "query": queries})
    for k in CUTOFFS:
        retrieve = index.bm25(k1=1.2, b=0.75, num_results=k, threads=1)
        retrieve.transform(frame.iloc[:1])  # loads the index (and builds PISA's block-max data once)
        start = time.perf_counter()
        retrieve.transform(frame)
        out[f"qps_{k}"] = len(queries) / (time.perf_counter() - start)


def _bm25s(texts: list[str], queries: list[str], out: dict[str, object]) -> None:
    import bm25s

    start = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    retriever = bm25s.BM25(backend="numba", k1=1.2, b=0.75)
    retriever.index(tokens, show_progress=False)
    out["index_s"] = time.perf_counter() - start
    out["index_peak_rss_mb"] = peak_rss_mb()
    del tokens
    out["compile_s"] = 0.0
    warm = bm25s.tokenize(queries[:2], stopwords="en", show_progress=False)
    for k in CUTOFFS:
        start = time.perf_counter()
        retriever.retrieve(warm, k=k, show_progress=False, n_threads=1)
        out["compile_s"] += time.perf_counter() - start
        start = time.perf_counter()
        tokens = bm25s.tokenize(queries, stopwords="en", show_progress=False)
        retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        out[f"qps_{k}"] = len(queries) / (time.perf_counter() - start)


def child(system: str, docs_path: Path, queries_path: Path, tantivy_heap_mb: int) -> None:
    texts = read_lines(docs_path)
    queries = read_lines(queries_path)
    out: dict[str, object] = {"system": system, "loaded_rss_mb": current_rss_mb(), "n_docs": len(texts)}
    with tempfile.TemporaryDirectory(prefix="retbench-engines-") as folder:
        if system == "retbench":
            _retbench(texts, queries, out)
        elif system == "tantivy":
            _tantivy(texts, queries, out, Path(folder), tantivy_heap_mb)
        elif system == "pisa":
            _pisa(texts, queries, out, Path(folder))
        elif system == "bm25s-numba":
            _bm25s(texts, queries, out)
        else:
            raise SystemExit(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
        out["peak_rss_mb"] = peak_rss_mb()
    report(**out)


def _version(system: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    package = {"retbench": "retbench", "tantivy": "tantivy", "pisa": "pyterrier-pisa", "bm25s-numba": "bm25s"}[system]
    try:
        return f"{system} {version(package)}"
    except PackageNotFoundError:
        return system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload_arguments(parser, docs=1_000_000, queries=2000)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--tantivy-heap-mb", type=int, default=1000,
                        help="tantivy's indexing heap (its default is 128: more segments, less memory)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    docs_path, queries_path = texts_file(args.docs, args.queries, args.seed, query_terms=QUERY_TERMS)
    if args.child:
        child(args.child, docs_path, queries_path, args.tantivy_heap_mb)
        return

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    results: dict[str, list[dict]] = {s: [] for s in systems}
    print(f"# BM25 at {args.docs:,} docs, {args.queries:,} queries of {QUERY_TERMS[0]}-{QUERY_TERMS[1]} terms, "
          f"one thread; {load_note()}", flush=True)
    for round_number in range(args.rounds):
        order = systems[round_number % len(systems):] + systems[:round_number % len(systems)]
        for system in order:
            result = run_child([sys.executable, __file__, "--docs", str(args.docs), "--queries", str(args.queries),
                                "--seed", str(args.seed), "--tantivy-heap-mb", str(args.tantivy_heap_mb),
                                "--child", system], env={"OMP_NUM_THREADS": "1",
                                                                                   "NUMBA_NUM_THREADS": "1"})
            results[system].append(result)
            print(f"round {round_number + 1} {system}: {result}", flush=True)
    print(f"# done; {load_note()}")
    rows = []
    for system in systems:
        runs = results[system]
        rows.append([_version(system)] + [median([r.get(key) for r in runs]) for key in
                                          ("index_s", "qps_10", "qps_1000", "peak_rss_mb", "index_peak_rss_mb",
                                           "compile_s", "first_search_s_10")])
    table = markdown(["system", "index from raw text s", "q/s top-10", "q/s top-1000", "peak RSS MB",
                      "peak RSS to indexed MB", "compile s", "first search s"], rows)
    print(table)
    record_results("engines_speed", table, f"{args.docs:,} docs, {args.queries:,} queries of {QUERY_TERMS[0]}-"
                   f"{QUERY_TERMS[1]} terms, one thread, medians of {args.rounds} rounds; {load_note()}")


if __name__ == "__main__":
    main()
