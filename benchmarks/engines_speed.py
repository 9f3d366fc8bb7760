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


class Engine:
    """One system's index, built from raw text, and its two ways to answer: a whole batch of queries
    as the system answers a batch (``batch``), or one query on its own (``one``). ``prepare`` turns
    query texts into what ``batch`` takes (outside the timing); ``batch`` returns what the system
    answered, where it hands an answer back. Shared with ``engines_matrix.py`` and ``scale_curve.py``."""

    def prepare(self, queries: list[str]) -> object:
        return queries

    def batch(self, prepared: object, k: int) -> object:
        raise NotImplementedError

    def one(self, query: str, k: int) -> None:
        self.batch(self.prepare([query]), k)


class _Retbench(Engine):
    """retbench's BM25: fitted from the texts (:meth:`fit`), or one fitted or loaded elsewhere."""

    def __init__(self, retriever: object, memory: dict[str, float] | None = None):
        self.retriever = retriever
        #: What the memory goes to, measured (MB): the corpus's doc ids, the fitted arrays.
        self.memory = memory or {}

    @classmethod
    def fit(cls, texts: list[str]) -> _Retbench:
        from corpora import Corpus
        from retrievers.bm25 import BM25

        before = current_rss_mb()
        corpus = Corpus([f"d{j}" for j in range(len(texts))], texts)
        ids_mb = current_rss_mb() - before
        retriever = BM25().fit(corpus)
        return cls(retriever, {"ids_mb": ids_mb,
                               "index_mb": (retriever.index.nbytes + retriever._tie_rank.nbytes) / 2**20})

    def prepare(self, queries: list[str]) -> object:
        from corpora import Queries

        return Queries([f"q{i}" for i in range(len(queries))], queries)

    def batch(self, prepared: object, k: int) -> object:
        return self.retriever.search(prepared, k)  # type: ignore[attr-defined]

    def postings_per_query(self, queries: list[str]) -> float:
        """The postings of the queries' distinct known terms, averaged: what scoring every posting walks."""
        import numpy as np

        offsets, terms = self.retriever.encode_queries(self.prepare(queries))
        indptr = self.retriever.index.indptr
        total = 0
        for i in range(len(offsets) - 1):  # each query's terms' columns only: no blocks x vocabulary temporary,
            distinct = np.unique(terms[offsets[i]:offsets[i + 1]])  # which was the child's peak at 1M docs
            total += int((indptr[:, distinct + 1] - indptr[:, distinct]).sum())
        return total / max(1, len(offsets) - 1)


class _Tantivy(Engine):
    def __init__(self, texts: list[str], folder: Path, heap_mb: int):
        import tantivy

        from corpora.analyzers import ARTICLE_STOP_WORDS

        analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.lowercase())
                    .filter(tantivy.Filter.custom_stopword(sorted(ARTICLE_STOP_WORDS))).build())
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="retbench", index_option="freq")
        self.index = tantivy.Index(builder.build(), path=str(folder))
        self.index.register_tokenizer("retbench", analyzer)
        writer = self.index.writer(heap_size=heap_mb * 1_000_000, num_threads=1)
        for text in texts:
            writer.add_document(tantivy.Document(body=text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def batch(self, prepared: object, k: int) -> None:
        for query in prepared:  # type: ignore[attr-defined]
            self.one(query, k)

    def one(self, query: str, k: int) -> None:
        self.searcher.search(self.index.parse_query(query, ["body"]), limit=k).hits


class _Pisa(Engine):
    def __init__(self, texts: list[str], folder: Path):
        from pyterrier_pisa import PisaIndex

        self.index = PisaIndex(str(folder / "pisa"), stemmer="none", stops="none", threads=1, overwrite=True)
        self.index.index({"docno": f"d{j}", "text": text} for j, text in enumerate(texts))
        self.retrievers: dict[int, object] = {}

    def _retriever(self, k: int):  # type: ignore[no-untyped-def]
        if k not in self.retrievers:  # the first call loads the index (and builds block-max data once)
            self.retrievers[k] = self.index.bm25(k1=1.2, b=0.75, num_results=k, threads=1)
        return self.retrievers[k]

    def prepare(self, queries: list[str]) -> object:
        import pandas as pd

        return pd.DataFrame({"qid": [f"q{i}" for i in range(len(queries))], "query": queries})

    def batch(self, prepared: object, k: int) -> None:
        self._retriever(k).transform(prepared)

    def one(self, query: str, k: int) -> None:
        """PISA's own call for one query, without pyterrier's data frames around it."""
        import numpy as np
        from pyterrier_pisa import _pisathon

        retriever = self._retriever(k)
        retriever.reset_retrieval_context()
        _pisathon.retrieve(retriever._ctxt, retriever.query_algorithm.value, [(0, query)], k=k, threads=1,
                           query_weighted=1 if retriever.query_weighted else 0, pretokenised=False,
                           result_qidxs=np.empty(k, np.int32), result_docnos=np.empty(k, dtype=object),
                           result_ranks=np.empty(k, np.int32), result_scores=np.empty(k, np.float32))


class _Bm25s(Engine):
    def __init__(self, texts: list[str]):
        import bm25s

        self.bm25s = bm25s
        tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
        self.retriever = bm25s.BM25(backend="numba", k1=1.2, b=0.75)
        self.retriever.index(tokens, show_progress=False)

    def batch(self, prepared: object, k: int) -> None:  # tokenizing the queries is part of answering them
        tokens = self.bm25s.tokenize(prepared, stopwords="en", show_progress=False)
        self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)


def open_engine(system: str, texts: list[str], folder: Path, tantivy_heap_mb: int, out: dict[str, object]) -> Engine:
    """Build ``system``'s index over ``texts`` (scratch files under ``folder``); ``out`` gains
    ``index_s`` and ``index_peak_rss_mb`` (and tantivy's ``segments``)."""
    start = time.perf_counter()
    if system == "retbench":
        engine: Engine = _Retbench.fit(texts)
    elif system == "tantivy":
        engine = _Tantivy(texts, folder, tantivy_heap_mb)
    elif system == "pisa":
        engine = _Pisa(texts, folder)
    elif system == "bm25s-numba":
        engine = _Bm25s(texts)
    else:
        raise SystemExit(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
    out["index_s"] = time.perf_counter() - start
    out["index_peak_rss_mb"] = peak_rss_mb()
    out["indexed_rss_mb"] = current_rss_mb()
    if isinstance(engine, _Retbench):
        out.update(engine.memory)
    if isinstance(engine, _Tantivy):
        out["segments"] = engine.searcher.num_segments
    return engine


def timed_searches(engine: Engine, queries: list[str], cutoffs: tuple[int, ...], out: dict[str, object],
                   warm_up: int = 1, prefix: str = "") -> dict[int, object]:
    """At each k: the first ``warm_up`` queries searched untimed (``first_search_s_<k>``: retbench's
    first search starts numba and loads the compiled loop, bm25s compiles its own, PISA loads its
    index), then the whole batch timed (``qps_<k>``); ``out``'s keys start with ``prefix``. Returns
    each k's answer to the whole batch."""
    prepared = engine.prepare(queries)
    answers = {}
    for k in cutoffs:
        start = time.perf_counter()
        engine.batch(engine.prepare(queries[:warm_up]), k)
        out[f"{prefix}first_search_s_{k}"] = time.perf_counter() - start
        start = time.perf_counter()
        answers[k] = engine.batch(prepared, k)
        out[f"{prefix}qps_{k}"] = len(queries) / (time.perf_counter() - start)
    return answers


def child(system: str, docs_path: Path, queries_path: Path, tantivy_heap_mb: int) -> None:
    texts = read_lines(docs_path)
    queries = read_lines(queries_path)
    out: dict[str, object] = {"system": system, "loaded_rss_mb": current_rss_mb(), "n_docs": len(texts)}
    with tempfile.TemporaryDirectory(prefix="retbench-engines-") as folder:
        engine = open_engine(system, texts, Path(folder), tantivy_heap_mb, out)
        timed_searches(engine, queries, CUTOFFS, out, warm_up=2 if system == "bm25s-numba" else 1)
        if system == "bm25s-numba":
            out["compile_s"] = sum(out[f"first_search_s_{k}"] for k in CUTOFFS)  # type: ignore[misc]
        out["peak_rss_mb"] = peak_rss_mb()
    report(**out)


def _version(system: str) -> str:
    """``system`` and its package's version; a ``-load`` child (``scale_curve.py``) is its system's."""
    from importlib.metadata import PackageNotFoundError, version

    packages = {"retbench": "retbench", "tantivy": "tantivy", "pisa": "pyterrier-pisa", "bm25s-numba": "bm25s"}
    package = packages[system.removesuffix("-load")]
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
