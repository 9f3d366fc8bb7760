"""BM25 from one to ten million documents: retbench against tantivy, and retbench's saved index loaded back.

    python benchmarks/scale_curve.py --sizes 1000000,2000000,5000000,10000000 --rounds 1
    python benchmarks/scale_curve.py --sizes 100000,200000 --rounds 1            # a quick look

The sizes run in the order given (the largest first, when time is short); the table is by size.

For each size, each system runs in its own child process (one thread, ``OMP_NUM_THREADS=1``) on the
same synthetic documents and queries, and reports: index seconds (raw text to a searchable index,
the engine's own tokenizer), q/s at top-10 and top-1000 (1,000 queries of 3 to 6 terms by default,
each cut after an untimed warm-up query), and the child's peak RSS (``VmHWM``: texts, index,
queries and results; every child holds the texts as a list of Python strings, as a program that read
them would). The cost per document is the index time and the peak RSS divided by the size: flat is
the goal.

``retbench-load`` is a third child, run after ``retbench`` has saved its fitted index
(:meth:`retrievers.bm25.BM25.save`): it reads the corpus, loads the index memory-mapped
(:meth:`~retrievers.bm25.BM25.load`: the corpus hash, every checksum and the structural check
included) and answers the same queries; its ``load s`` is what a second run on the same corpus pays
instead of the fit, and its rankings are checked against the fitted index's (identical, or the
script fails).

The corpus is streamed to a file once per size and seed (``--data``, default ``$RETBENCH_BENCH_DATA``
or the temp folder), never held whole by the parent: :func:`write_corpus` draws the law of
``synthetic.py`` (a Zipf-Mandelbrot law over 2^19 words whose most frequent are the article's stop
words, Poisson lengths around 60 tokens, capitalised first words, commas and full stops) in chunks of
documents, each from its own seeded generator. Each query is 3 to 6 distinct non-stop words of one
document drawn at random. The tantivy child is ``engines_speed.py``'s (its ``simple`` tokenizer,
lowercase, the article's stop words, one writer thread, ``--tantivy-heap-mb`` heap).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engines_speed import _Retbench, _version, open_engine, timed_searches  # noqa: E402
from common import (  # noqa: E402
    DEFAULT_DATA,
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
from synthetic import STOP_WORDS, _vocabulary  # noqa: E402

SYSTEMS = ("retbench", "tantivy")
CUTOFFS = (10, 1000)
QUERY_TERMS = (3, 6)
VOCABULARY = 1 << 19
MEAN_LENGTH = 60.0
#: Documents drawn per chunk when the corpus is written: bounds the generator's memory.
CHUNK_DOCS = 100_000


def corpus_files(n_docs: int, n_queries: int, seed: int, folder: Path) -> tuple[Path, Path]:
    """The documents (one a line) and queries (one a line) of this size and seed, written once."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = folder / f"scale-{n_docs}-{seed}.docs.txt"
    queries = folder / f"scale-{n_docs}-{seed}-{n_queries}.queries.txt"
    if not (docs.is_file() and queries.is_file()):
        write_corpus(n_docs, n_queries, seed, docs, queries)
    return docs, queries


def write_corpus(n_docs: int, n_queries: int, seed: int, docs_path: Path, queries_path: Path) -> None:
    """Stream ``n_docs`` documents to ``docs_path`` chunk by chunk, and ``n_queries`` queries drawn
    from documents picked up front; both written to temporary names and renamed when complete."""
    rng = np.random.default_rng([seed, 0])
    words = _vocabulary(rng, VOCABULARY)
    weights = 1.0 / (np.arange(1, VOCABULARY + 1) + 2.7)
    cdf = np.cumsum(weights / weights.sum())
    capitalised = np.array([w.capitalize() for w in words], dtype=object)
    surfaces = np.stack([words, capitalised, words + ",", words + "."], axis=1).ravel()
    # each surface followed by a space, or by a newline when it ends its document
    spelled = np.stack([surfaces + " ", surfaces + "\n"], axis=1).ravel()
    picked = np.sort(rng.choice(n_docs, size=min(n_queries, n_docs), replace=False))
    order = rng.permutation(len(picked))  # queries in random order, not by document
    query_rng = np.random.default_rng([seed, 1])
    n_stop = len(STOP_WORDS)
    queries: list[str] = []
    docs_tmp, queries_tmp = (path.with_name(f".{path.name}.{os.getpid()}.tmp") for path in (docs_path, queries_path))
    with docs_tmp.open("w", encoding="utf-8") as out:
        for first in range(0, n_docs, CHUNK_DOCS):
            count = min(CHUNK_DOCS, n_docs - first)
            chunk = np.random.default_rng([seed, 2, first])
            lengths = np.maximum(1, chunk.poisson(MEAN_LENGTH, size=count))
            total = int(lengths.sum())
            tokens = np.minimum(np.searchsorted(cdf, chunk.random(total)), VOCABULARY - 1)
            variant = chunk.choice(4, size=total, p=[0.88, 0.02, 0.05, 0.05])
            ends = np.cumsum(lengths)
            starts = ends - lengths
            variant[starts] = 1
            last = np.zeros(total, dtype=np.int64)
            last[ends - 1] = 1
            out.write("".join(spelled[(tokens * 4 + variant) * 2 + last].tolist()))
            for j in picked[(picked >= first) & (picked < first + count)].tolist():
                content = np.unique(tokens[starts[j - first]:ends[j - first]])
                content = content[content >= n_stop]
                if len(content) == 0:
                    content = tokens[starts[j - first]:starts[j - first] + 1]
                size = min(len(content), int(query_rng.integers(QUERY_TERMS[0], QUERY_TERMS[1] + 1)))
                queries.append(" ".join(words[query_rng.choice(content, size=size, replace=False)]))
    with queries_tmp.open("w", encoding="utf-8") as out:
        out.write("".join(queries[i] + "\n" for i in order.tolist()))
    docs_tmp.replace(docs_path)
    queries_tmp.replace(queries_path)


# ----- the children ---------------------------------------------------------------------------
def _corpus(docs_path: Path):  # type: ignore[no-untyped-def]
    from corpora import Corpus

    texts = read_lines(docs_path)
    return Corpus([f"d{j}" for j in range(len(texts))], texts, name=docs_path.stem)


def _digest(run) -> str:  # type: ignore[no-untyped-def]
    """A run's rankings and score bits, for comparing two children's."""
    import hashlib

    digest = hashlib.sha256()
    for array in (run.offsets, run.doc_index, run.scores):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _retbench(docs_path: Path, queries: list[str], out: dict[str, object], saved: Path) -> None:
    from retrievers.bm25 import BM25

    corpus = _corpus(docs_path)
    out["loaded_rss_mb"] = current_rss_mb()
    start = time.perf_counter()
    retriever = BM25().fit(corpus)
    out["index_s"] = time.perf_counter() - start
    out["index_peak_rss_mb"] = peak_rss_mb()
    runs = timed_searches(_Retbench(retriever), queries, CUTOFFS, out)
    out["peak_rss_mb"] = peak_rss_mb()
    out["digest_1000"] = _digest(runs[CUTOFFS[-1]])
    shutil.rmtree(saved, ignore_errors=True)
    start = time.perf_counter()
    retriever.save(saved)
    out["save_s"] = time.perf_counter() - start
    out["saved_mb"] = sum(p.stat().st_size for p in saved.iterdir()) / 1e6


def _retbench_load(docs_path: Path, queries: list[str], out: dict[str, object], saved: Path) -> None:
    from retrievers.bm25 import BM25

    corpus = _corpus(docs_path)
    out["loaded_rss_mb"] = current_rss_mb()
    start = time.perf_counter()
    retriever = BM25.load(saved, corpus)
    out["index_s"] = out["load_s"] = time.perf_counter() - start
    out["index_peak_rss_mb"] = peak_rss_mb()
    runs = timed_searches(_Retbench(retriever), queries, CUTOFFS, out)
    out["peak_rss_mb"] = peak_rss_mb()
    out["digest_1000"] = _digest(runs[CUTOFFS[-1]])


def child(system: str, docs_path: Path, queries_path: Path, saved: Path, tantivy_heap_mb: int) -> None:
    import tempfile

    queries = read_lines(queries_path)
    out: dict[str, object] = {"system": system}
    if system == "retbench":
        _retbench(docs_path, queries, out, saved)
    elif system == "retbench-load":
        _retbench_load(docs_path, queries, out, saved)
    elif system == "tantivy":
        texts = read_lines(docs_path)
        out["loaded_rss_mb"] = current_rss_mb()
        with tempfile.TemporaryDirectory(prefix="retbench-scale-", dir=saved.parent) as folder:
            engine = open_engine("tantivy", texts, Path(folder), tantivy_heap_mb, out)
            timed_searches(engine, queries, CUTOFFS, out)
            out["peak_rss_mb"] = peak_rss_mb()
    else:
        raise SystemExit(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}, retbench-load")
    report(**out)


# ----- the parent -----------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,2000000,5000000,10000000",
                        help="documents, comma-separated (each its own corpus)")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1, help="rounds per size; medians are reported")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--no-load", action="store_true", help="skip the retbench-load child")
    parser.add_argument("--tantivy-heap-mb", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="where the corpora are written once")
    parser.add_argument("--no-record", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--docs", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        docs_path, queries_path = corpus_files(args.docs, args.queries, args.seed, args.data)
        child(args.child, docs_path, queries_path, args.data / f"scale-{args.docs}-{args.seed}.bm25",
              args.tantivy_heap_mb)
        return

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if "retbench" in systems and not args.no_load:
        systems.append("retbench-load")
    print(f"# BM25 scale curve, {args.queries:,} queries of {QUERY_TERMS[0]}-{QUERY_TERMS[1]} terms, one thread, "
          f"{args.rounds} round(s); {load_note()}", flush=True)
    rows = []
    load_at = None
    for n_docs in sizes:
        start = time.perf_counter()
        corpus_files(n_docs, args.queries, args.seed, args.data)
        print(f"# {n_docs:,} docs: corpus ready ({time.perf_counter() - start:.0f} s)", flush=True)
        results: dict[str, list[dict]] = {s: [] for s in systems}
        for round_number in range(args.rounds):
            for system in systems:  # retbench-load needs retbench's saved index: the order stays
                result = run_child([sys.executable, __file__, "--docs", str(n_docs), "--queries", str(args.queries),
                                    "--seed", str(args.seed), "--data", str(args.data), "--tantivy-heap-mb",
                                    str(args.tantivy_heap_mb), "--child", system],
                                   timeout=6 * 3600, env={"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"})
                results[system].append(result)
                print(f"{n_docs:,} round {round_number + 1} {system}: {json.dumps(result)}", flush=True)
        if "retbench-load" in results:
            fitted = [r["digest_1000"] for r in results["retbench"]]
            loaded = [r["digest_1000"] for r in results["retbench-load"]]
            if fitted != loaded:
                raise SystemExit(f"{n_docs:,} docs: the loaded index ranks differently from the fitted one")
        shutil.rmtree(args.data / f"scale-{n_docs}-{args.seed}.bm25", ignore_errors=True)
        for system in systems:
            runs = results[system]
            index_s, peak = median([r.get("index_s") for r in runs]), median([r.get("peak_rss_mb") for r in runs])
            rows.append([f"{n_docs:,}", _version(system), index_s, median([r.get("qps_10") for r in runs]),
                         median([r.get("qps_1000") for r in runs]), peak,
                         median([r.get("index_peak_rss_mb") for r in runs]),
                         1e6 * index_s / n_docs, 1e3 * peak / n_docs])
            if system == "retbench-load" and (load_at is None or n_docs > load_at[0]):  # the largest size's
                load_at = (n_docs, index_s)
        # recorded after every size, so that a curve cut short keeps the sizes it reached; by size,
        # whatever the order they ran in (the largest first, when time is short)
        rows.sort(key=lambda row: int(row[0].replace(",", "")))
        table = markdown(["docs", "system", "index s (load s)", "q/s top-10", "q/s top-1000", "peak RSS MB",
                          "peak RSS to indexed MB", "µs a doc", "KB a doc"], rows)
        print(table, flush=True)
        note = (f"{args.queries:,} queries of {QUERY_TERMS[0]}-{QUERY_TERMS[1]} terms, one thread, each system in "
                f"its own process, {args.rounds} round(s) per size (medians); retbench-load's index s is the load "
                f"of retbench's saved index (memory-mapped, corpus hash and checksums checked), and its rankings "
                f"were checked identical to the fitted index's")
        if load_at is not None:
            note += f"; load at {load_at[0]:,} docs: {load_at[1]:.1f} s"
        note += f"; {load_note()}"
        if not args.no_record:
            record_results("scale_curve", table, note)


if __name__ == "__main__":
    main()
