"""Every speed path beside its plain path: does it pay, and does it give the same output?

    python benchmarks/speed_paths.py --repeats 5
    python benchmarks/speed_paths.py --only as_run,top_k --repeats 9
    python benchmarks/speed_paths.py --only compiled_sizes --repeats 2

A speed path is code that computes what a plainer path already computes, only faster: it stays only
where it pays at least 20% (issue 12); its docstring says what it does, and the number measured here
is in ``benchmarks/RESULTS.md`` (each case writes its own section, ``speed_paths.<case>``).
Each case builds its inputs once (synthetic, fixed seeds), then times the speed path and the plain
path alternately in this process (the order flips every round), reports medians, and checks that
both give the same output. The plain paths are the code's own fallbacks where it has them, else
written out here as the speed path would be without its shortcut.

``compiled_sizes`` is the one case that is not timed in this process: it decides
``COMPILED_FROM_POSTINGS`` (where BM25's compiled loop replaces scipy's sparse product), so it times a
process's first search too, which pays numba's start-up and loading (or compiling, with an empty
on-disk cache) the loop, against the product's first search, which pays materialising the weights.
Each size and path runs in its own child process (``--first-call``), alternating, ``--repeats``
rounds; the compiled loop with an empty cache (``NUMBA_CACHE_DIR`` a new folder) runs once per size.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import (  # noqa: E402
    DEFAULT_DATA,
    load_note,
    markdown,
    median,
    read_lines,
    record_results,
    report,
    run_child,
)


@dataclass
class Case:
    """One pair: where the speed path lives, the size it is timed at, and the two callables."""

    path: str
    size: str
    fast: Callable[[], Any]
    plain: Callable[[], Any]
    same: Callable[[Any, Any], bool]


def _arrays_equal(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_arrays_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(_arrays_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == np.asarray(b).dtype and np.array_equal(a, b)
    return a == b


def _runs_equal(a: Any, b: Any) -> bool:
    return (list(a.query_ids) == list(b.query_ids) and np.array_equal(a.offsets, b.offsets)
            and np.array_equal(a.doc_ids[a.doc_index], b.doc_ids[b.doc_index]) and np.array_equal(a.scores, b.scores))


def _synthetic(n_docs: int, n_queries: int):
    import synthetic

    return synthetic.make(n_docs, n_queries, seed=0, vocabulary=1 << 17)


# ----- the cases ---------------------------------------------------------------------------------

def case_as_run() -> Case:
    """retrievers.output: a Run re-indexed on the corpus in array operations, or pair by pair."""
    from corpora import Corpus, Queries, Run
    from retrievers import output

    rng = np.random.default_rng(0)
    n_docs, n_queries, depth = 100_000, 200, 1000
    corpus = Corpus([f"d{j}" for j in range(n_docs)], [""] * n_docs)
    queries = Queries([f"q{i}" for i in range(n_queries)], [""] * n_queries)
    docs = np.concatenate([rng.choice(n_docs, size=depth, replace=False) for _ in range(n_queries)])
    scores = np.repeat(np.linspace(1.0, 0.001, depth)[None, :], n_queries, axis=0).ravel()
    run = Run(queries.ids, np.asarray(corpus.ids, dtype=object), np.arange(0, n_queries * depth + 1, depth),
              docs.astype(np.int64), scores)

    def plain() -> Run:
        saved = output._run_on_corpus
        output._run_on_corpus = lambda *args: None  # the pair-by-pair path that names a bad pair
        try:
            return output.as_run(run, corpus, queries, "bench")
        finally:
            output._run_on_corpus = saved

    return Case("as_run: vectorised Run (_run_on_corpus)", f"{n_queries} x {depth} pairs, {n_docs:,} docs",
                lambda: output.as_run(run, corpus, queries, "bench"), plain, _runs_equal)


def case_top_k_sample() -> Case:
    """retrievers.ranking.top_k: a sampled lower bound of the k-th score before the partition."""
    from retrievers import ranking
    from retrievers.ranking import top_k_rows

    rng = np.random.default_rng(1)
    n_rows, n_docs, k = 64, 200_000, 10
    scores = np.round(rng.gamma(1.0, size=(n_rows, n_docs)), 3)  # rounded: ties at the cut
    tie_rank = rng.permutation(n_docs).astype(np.int64)

    def plain() -> tuple:
        saved = ranking.SAMPLE_ABOVE
        ranking.SAMPLE_ABOVE = 1 << 62  # never sample: partition the whole row
        try:
            return top_k_rows(scores, k, tie_rank, 1e-9)
        finally:
            ranking.SAMPLE_ABOVE = saved

    return Case("top_k: sampled lower bound (SAMPLE_ABOVE)", f"{n_rows} rows x {n_docs:,} docs, k = {k}",
                lambda: top_k_rows(scores, k, tie_rank, 1e-9), plain, _arrays_equal)


def case_bm25_index_search() -> Case:
    """retrievers.bm25: search over the index's postings, or the generic score matrix + top_k_rows."""
    from corpora import Corpus, Queries
    from retrievers.base import ScoreRetriever
    from retrievers.bm25 import BM25

    data = _synthetic(50_000, 500)
    corpus = Corpus(data.doc_ids, data.texts)
    queries = Queries(data.query_ids, data.queries)
    bm25 = BM25().fit(corpus)
    return Case("BM25.search: index postings (BM25Index.search)", f"{len(corpus):,} docs, {len(queries)} queries, k = 1000",
                lambda: bm25.search(queries, 1000), lambda: ScoreRetriever.search(bm25, queries, 1000), _runs_equal)


def case_blocks() -> Case:
    """retrievers.bm25.index: postings in blocks of BLOCK_DOCS documents, or one block over all of them."""
    from corpora.tokenize import encode, tokenize
    from retrievers.bm25.index import BLOCK_DOCS, BM25Index
    from retrievers.ranking import doc_id_order

    data = _synthetic(8 * BLOCK_DOCS, 1000)
    tokens = tokenize(data.texts)
    blocked = BM25Index.build(tokens.offsets, tokens.term_ids, len(tokens.vocabulary))
    whole = BM25Index.build(tokens.offsets, tokens.term_ids, len(tokens.vocabulary), block_docs=len(data.texts))
    offsets, terms = encode(data.queries, {t: i for i, t in enumerate(tokens.vocabulary)})
    tie_rank = doc_id_order(data.doc_ids)
    return Case("BM25Index: blocks of BLOCK_DOCS docs", f"{len(data.texts):,} docs, {len(data.queries)} queries, k = 1000",
                lambda: blocked.search(offsets, terms, 1000, tie_rank, 1e-9),
                lambda: whole.search(offsets, terms, 1000, tie_rank, 1e-9), _arrays_equal)


def _million_doc_index():
    """The engines benchmark's workload: 1M synthetic documents, 2,000 queries of 3-6 terms."""
    from corpora.tokenize import encode, tokenize
    from retrievers.bm25.index import BM25Index
    from retrievers.ranking import doc_id_order

    import synthetic

    data = synthetic.make(1_000_000, 2000, seed=0, query_terms=(3, 6))
    tokens = tokenize(data.texts)
    index = BM25Index.build(tokens.offsets, tokens.term_ids, len(tokens.vocabulary))
    offsets, terms = encode(data.queries, {t: i for i, t in enumerate(tokens.vocabulary)})
    return index, offsets, terms, doc_id_order([f"d{j}" for j in range(index.n_docs)])


def _case_compiled(k: int) -> Case:
    index, offsets, terms, tie_rank = _million_doc_index()
    index.search(offsets[:2], terms[:offsets[1]], k, tie_rank, compiled=True)  # compiles (or loads) the loop
    return Case(f"BM25Index.search: the compiled loop (COMPILED_FROM_POSTINGS), k = {k}",
                f"{index.n_docs:,} docs, {len(offsets) - 1} queries of 3-6 terms",
                lambda: index.search(offsets, terms, k, tie_rank, compiled=True),
                lambda: index.search(offsets, terms, k, tie_rank, compiled=False), _arrays_equal)


def case_compiled_10() -> Case:
    """retrievers.bm25.compiled: the compiled loop (numba), or scipy's sparse products, at 1M documents, k = 10."""
    return _case_compiled(10)


def case_compiled_1000() -> Case:
    """retrievers.bm25.compiled: the same at k = 1000."""
    return _case_compiled(1000)


def _case_pruning(k: int) -> Case:
    from retrievers.bm25 import compiled

    index, offsets, terms, tie_rank = _million_doc_index()
    arguments = (index._postings(), index.block_docs, index.k1, offsets, terms, k, 0.0, tie_rank)
    bounds = index.term_bounds()
    compiled.top_k(*arguments, bounds=bounds)  # compiles (or loads) the loop
    return Case(f"retrievers.bm25.compiled.top_k: pruning (compiled.prunes), k = {k}",
                f"{index.n_docs:,} docs, {len(offsets) - 1} queries of 3-6 terms",
                lambda: compiled.top_k(*arguments, bounds=bounds), lambda: compiled.top_k(*arguments), _arrays_equal)


def case_pruning_10() -> Case:
    """retrievers.bm25.compiled: the compiled loop with pruning, or scoring every posting, at 1M documents, k = 10."""
    return _case_pruning(10)


def case_pruning_100() -> Case:
    """retrievers.bm25.compiled: the same at k = 100."""
    return _case_pruning(100)


def case_pruning_1000() -> Case:
    """retrievers.bm25.compiled: the same at k = 1000, where candidates gather in bulk."""
    return _case_pruning(1000)


def _sorted_strings():
    """A table of ~1M random words, and 6,600 lookups in it (100 of a word not in it)."""
    from retrievers.strings import SortedStrings, pack_strings

    rng = np.random.default_rng(5)
    lengths = rng.integers(3, 12, size=1_000_000)
    letters = (rng.integers(0, 26, size=int(lengths.sum()), dtype=np.uint8) + ord("a")).tobytes().decode()
    ends = np.cumsum(lengths).tolist()
    words = sorted({letters[e - n:e] for e, n in zip(ends, lengths.tolist())})
    table = SortedStrings(*pack_strings(words))
    asked = [words[j] for j in rng.integers(0, len(words), size=6500)] + ["absent"] * 100
    return words, table, asked


def case_sorted_strings_batch() -> Case:
    """retrievers.strings.SortedStrings.positions: every term's head searched at once, or one lookup a term."""
    words, table, asked = _sorted_strings()
    return Case("SortedStrings.positions: a batch of lookups", f"{len(asked):,} lookups in {len(words):,} terms",
                lambda: table.positions(asked), lambda: np.array([table.get(t, -1) for t in asked]), _arrays_equal)


def case_sorted_strings() -> Case:
    """retrievers.strings.SortedStrings: lookups narrowed by 8-byte heads, or a binary search over all."""
    words, table, asked = _sorted_strings()

    def plain() -> list:  # the same binary search over the whole table, without the heads
        return [table._search(term.encode("utf-8", "surrogatepass"), 0, len(table)) for term in asked]

    return Case("SortedStrings: lookups narrowed by 8-byte heads", f"{len(asked):,} lookups in {len(words):,} terms",
                lambda: [table.get(term) for term in asked], plain, _arrays_equal)


def case_single_block_rows() -> Case:
    """retrievers.bm25.index.BM25Index._rows: one block's rows as slices, or concatenated like many blocks."""
    from corpora.tokenize import encode, tokenize
    from retrievers.bm25.index import BM25Index

    data = _synthetic(50_000, 2000)
    tokens = tokenize(data.texts)
    index = BM25Index.build(tokens.offsets, tokens.term_ids, len(tokens.vocabulary))
    offsets, terms = encode(data.queries, {t: i for i, t in enumerate(tokens.vocabulary)})
    products = index._products(offsets, terms, range(len(offsets) - 1))

    def generic() -> list:
        bounds = [indptr.tolist() for indptr, _, _ in products]
        return [(np.concatenate([docs[b[row]:b[row + 1]] for b, (_, docs, _) in zip(bounds, products)]),
                 np.concatenate([scores[b[row]:b[row + 1]] for b, (_, _, scores) in zip(bounds, products)]))
                for row in range(len(bounds[0]) - 1)]

    return Case("BM25Index._rows: one-block shortcut", f"{len(offsets) - 1:,} queries, one block",
                lambda: list(BM25Index._rows(products)), generic, _arrays_equal)


def case_tokenize() -> Case:
    """corpora.tokenize: the byte-level batch tokenizer, or the analyzer called text by text."""
    import corpora.tokenize as tokenize_module
    from corpora.tokenize import tokenize

    texts = _synthetic(50_000, 1).texts

    def plain() -> tuple:
        saved = tokenize_module._declared
        tokenize_module._declared = lambda analyzer: None  # the per-text fallback
        try:
            result = tokenize(texts, "article")
        finally:
            tokenize_module._declared = saved
        return result.offsets, result.term_ids, result.vocabulary

    def fast() -> tuple:
        result = tokenize(texts, "article")
        return result.offsets, result.term_ids, result.vocabulary

    return Case("tokenize: batch byte scan (article analyzer)", f"{len(texts):,} texts", fast, plain, _arrays_equal)


def case_sorted_vocabulary() -> Case:
    """corpora.tokenize._sorted_vocabulary: an ASCII vocabulary sorted as bytes by numpy, or by sorted()."""
    from corpora.tokenize import _sorted_vocabulary

    rng = np.random.default_rng(2)
    lengths = rng.integers(2, 12, size=300_000)
    letters = (rng.integers(0, 26, size=int(lengths.sum()), dtype=np.uint8) + ord("a")).tobytes().decode()
    ends = np.cumsum(lengths).tolist()
    words = np.array(list(dict.fromkeys(letters[e - n:e] for e, n in zip(ends, lengths.tolist()))), dtype=object)

    def plain() -> tuple:
        listed = words.tolist()
        order = np.array(sorted(range(len(listed)), key=listed.__getitem__), dtype=np.int64)
        return order, [listed[i] for i in order.tolist()]

    return Case("_sorted_vocabulary: ASCII words as bytes", f"{len(words):,} distinct words",
                lambda: _sorted_vocabulary(words), plain, _arrays_equal)


def case_pack_strings() -> Case:
    """retrievers.strings: ASCII tables packed and unpacked in one piece, or word by word."""
    from retrievers.strings import check_strings, pack_strings, unpack_strings

    rng = np.random.default_rng(3)
    lengths = rng.integers(2, 12, size=500_000)
    letters = (rng.integers(0, 26, size=int(lengths.sum()), dtype=np.uint8) + ord("a")).tobytes().decode()
    ends = np.cumsum(lengths).tolist()
    words = [letters[e - n:e] for e, n in zip(ends, lengths.tolist())]

    def plain() -> tuple:
        pieces = [w.encode("utf-8", "surrogatepass") for w in words]
        offsets = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(words)), out=offsets[1:])
        blob = np.frombuffer(b"".join(pieces), dtype=np.uint8).copy()
        check_strings(blob, offsets)
        data = blob.tobytes()
        bounds = offsets.tolist()
        back = [data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(bounds[:-1], bounds[1:])]
        return blob, offsets, back

    def fast() -> tuple:
        blob, offsets = pack_strings(words)
        return blob, offsets, unpack_strings(blob, offsets)

    return Case("pack_strings + unpack_strings: ASCII in one piece", f"{len(words):,} words", fast, plain,
                _arrays_equal)


def case_batch_metrics() -> Case:
    """harness.core.batch_metrics: every query at once, or the per-query specification query by query."""
    from corpora import Qrels, Run
    from harness.core.evaluation import evaluate
    from harness.core.metrics import parse_metrics

    rng = np.random.default_rng(4)
    n_queries, depth, n_docs = 2000, 100, 20_000
    doc_ids = np.array([f"d{j}" for j in range(n_docs)], dtype=object)
    docs = np.concatenate([rng.choice(n_docs, size=depth, replace=False) for _ in range(n_queries)]).astype(np.int64)
    query_ids = [f"q{i}" for i in range(n_queries)]
    run = Run(query_ids, doc_ids, np.arange(0, n_queries * depth + 1, depth), docs,
              np.tile(np.linspace(1.0, 0.01, depth), n_queries))
    judged = {q: {str(doc_ids[j]): int(rng.integers(0, 4))
                  for j in np.concatenate([docs[i * depth:i * depth + 30:3], rng.choice(n_docs, size=20)]).tolist()}
              for i, q in enumerate(query_ids)}
    qrels = Qrels(judged)
    metrics = parse_metrics("ndcg@10,map,recall@100,mrr,precision@10,bpref")
    ids = [q for q in query_ids if any(g >= 1 for g in judged[q].values())]

    def fast() -> np.ndarray:
        return evaluate(run, qrels, metrics, ids)[[m.name for m in metrics]].to_numpy()

    def plain() -> np.ndarray:
        rankings = {q: run.ranking(q) for q in ids}
        return np.array([[m.per_query(rankings[q], judged[q]) for m in metrics] for q in ids])

    return Case("batch metrics: every query at once (evaluate)", f"{len(ids):,} queries x {depth}, 6 metrics",
                fast, plain, lambda a, b: bool(np.allclose(a, b, rtol=0, atol=1e-12)))


# ----- where the compiled loop pays, its start-up included (COMPILED_FROM_POSTINGS) -------------------
#: Sizes, corpus shape and query shape of ``compiled_sizes`` (``workloads.py``: short documents, the
#: query shape of 3 to 6 terms), and its queries: one search of this many is a "run".
THRESHOLD_SIZES = (50_000, 100_000, 200_000, 500_000, 1_000_000)
THRESHOLD_SHAPE, THRESHOLD_TERMS, THRESHOLD_QUERIES = "z1.0-v1M-short", "3-6", 1000
THRESHOLD_CUTOFFS = (10, 1000)


def first_call(n_docs: int, path: str) -> None:
    """Child of ``compiled_sizes``: build the index over the workload, then time this process's
    first search (k = 10, every query: start-up included) and steady searches at each cutoff;
    report the seconds and a digest of each cutoff's results (the paths must agree)."""
    from corpora.tokenize import encode
    from retrievers.bm25.index import BM25Index
    from retrievers.ranking import doc_id_order
    from retrievers.strings import SortedStrings
    from workloads import shape_named, workload_files

    docs_path, query_paths = workload_files(shape_named(THRESHOLD_SHAPE), n_docs, THRESHOLD_QUERIES, 0, DEFAULT_DATA)
    texts = read_lines(docs_path)
    index, vocabulary = BM25Index.from_texts(texts, "article")
    del texts
    offsets, terms = encode(read_lines(query_paths[THRESHOLD_TERMS]), SortedStrings(*vocabulary))
    tie_rank = doc_id_order([f"d{j}" for j in range(n_docs)])
    compiled = path == "compiled"
    out: dict[str, object] = {"postings": len(index.docs)}
    start = time.perf_counter()
    index.search(offsets, terms, THRESHOLD_CUTOFFS[0], tie_rank, compiled=compiled)
    out["first_s"] = time.perf_counter() - start
    for k in THRESHOLD_CUTOFFS:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            found = index.search(offsets, terms, k, tie_rank, compiled=compiled)
            times.append(time.perf_counter() - start)
        out[f"steady_{k}_s"] = median(times)
        out[f"digest_{k}"] = hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in found)).hexdigest()
    report(**out)


def compiled_sizes(repeats: int) -> str:
    """The table of ``compiled_sizes``: per size, each path's first search (k = 10) and steady q/s,
    the compiled loop's start-up net of the product's, and the queries that earn it back."""
    script = str(Path(__file__).resolve())
    rows = []
    for n_docs in THRESHOLD_SIZES:
        runs: dict[str, list[dict]] = {"plain": [], "compiled": [], "cold": []}
        for repeat in range(repeats):
            for path in (("compiled", "plain") if repeat % 2 == 0 else ("plain", "compiled")):
                runs[path].append(run_child([sys.executable, script, "--first-call", str(n_docs), path]))
        with tempfile.TemporaryDirectory(prefix="retbench-numba-cache-") as empty:
            runs["cold"].append(run_child([sys.executable, script, "--first-call", str(n_docs), "compiled"],
                                          env={"NUMBA_CACHE_DIR": empty}))
        get = {path: {key: median([run[key] for run in found]) for key in found[0] if not key.startswith("digest")}
               for path, found in runs.items()}
        same = all(run[f"digest_{k}"] == runs["plain"][0][f"digest_{k}"] for found in runs.values() for run in found
                   for k in THRESHOLD_CUTOFFS)
        plain, fast = get["plain"], get["compiled"]
        # start-up: the first search's time above a steady one, the compiled loop's net of the product's
        startup = (fast["first_s"] - fast["steady_10_s"]) - (plain["first_s"] - plain["steady_10_s"])
        cold = (get["cold"]["first_s"] - get["cold"]["steady_10_s"]) - (plain["first_s"] - plain["steady_10_s"])
        row = [f"{n_docs:,}", f"{plain['postings']:,.0f}", f"{plain['first_s']:.2f} / {fast['first_s']:.2f} / "
               f"{get['cold']['first_s']:.2f}", f"{startup:.2f}", f"{cold:.2f}"]
        for k in THRESHOLD_CUTOFFS:
            plain_qps, fast_qps = THRESHOLD_QUERIES / plain[f"steady_{k}_s"], THRESHOLD_QUERIES / fast[f"steady_{k}_s"]
            saved = 1 / plain_qps - 1 / fast_qps  # seconds a query
            earned = ("never" if saved <= 0 else "0 (first search)" if startup <= 0
                      else f"{startup / saved:,.0f}")
            row += [f"{plain_qps:,.0f} / {fast_qps:,.0f}", f"{fast_qps / plain_qps:.2f}x", earned]
        rows.append(row + [same])
        print(f"# compiled_sizes {n_docs:,}: {rows[-1]}", flush=True)
    return markdown(["docs", "postings", "first search s, k = 10 (product / loop / loop, empty cache)",
                     "loop's start-up s (net)", "same, empty cache", "q/s k = 10 (product / loop)", "speed-up",
                     "queries to earn the start-up back", "q/s k = 1000", "speed-up", "queries to earn it back",
                     "same results"], rows)


CASES: dict[str, Callable[[], Case]] = {
    "as_run": case_as_run,
    "top_k": case_top_k_sample,
    "bm25_search": case_bm25_index_search,
    "blocks": case_blocks,
    "compiled": case_compiled_10,
    "compiled_1000": case_compiled_1000,
    "pruning": case_pruning_10,
    "pruning_100": case_pruning_100,
    "pruning_1000": case_pruning_1000,
    "single_block": case_single_block_rows,
    "tokenize": case_tokenize,
    "sorted_vocabulary": case_sorted_vocabulary,
    "pack_strings": case_pack_strings,
    "sorted_strings": case_sorted_strings,
    "sorted_strings_batch": case_sorted_strings_batch,
    "batch_metrics": case_batch_metrics,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default=",".join(CASES),
                        help="comma-separated cases: " + ", ".join([*CASES, "compiled_sizes"]))
    parser.add_argument("--first-call", nargs=2, metavar=("DOCS", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_call:
        first_call(int(args.first_call[0]), args.first_call[1])
        return
    print(f"# speed paths, medians of {args.repeats}; {load_note()}", flush=True)
    header = ["speed path", "size", "fast ms (median)", "plain ms (median)", "speed-up", "same output", ">= 20%?"]
    rows = []
    for name in args.only.split(","):
        if name.strip() == "compiled_sizes":
            record_results("speed_paths.compiled_sizes", compiled_sizes(args.repeats),
                           f"{THRESHOLD_QUERIES:,} queries of {THRESHOLD_TERMS} terms over {THRESHOLD_SHAPE} "
                           f"(workloads.py), each path in its own process, medians of {args.repeats} rounds; "
                           f"{load_note()}")
            continue
        case = CASES[name.strip()]()
        times: dict[str, list[float]] = {"fast": [], "plain": []}
        outputs: dict[str, Any] = {}
        for repeat in range(args.repeats):
            for side in (("fast", "plain") if repeat % 2 == 0 else ("plain", "fast")):
                start = time.perf_counter()
                outputs[side] = getattr(case, side)()
                times[side].append(time.perf_counter() - start)
        fast, plain = median(times["fast"]), median(times["plain"])
        speed_up = plain / fast
        rows.append([case.path, case.size, 1000 * fast, 1000 * plain, f"{speed_up:.2f}x",
                     case.same(outputs["fast"], outputs["plain"]), "pays" if speed_up >= 1.2 else "does not pay"])
        print(f"# {name}: {speed_up:.2f}x", flush=True)
        record_results(f"speed_paths.{name.strip()}", markdown(header, rows[-1:]),
                       f"medians of {args.repeats}, alternating; {load_note()}")
    print(f"# done; {load_note()}")
    print(markdown(header, rows))


if __name__ == "__main__":
    main()
