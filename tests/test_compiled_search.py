"""The compiled search loop returns exactly what scipy's sparse products return: the same documents,
the same order (ties by doc id), the same score bits — on real collections, on a Zipfian corpus in
many blocks, at ties on the k-th place and with k larger than the matches."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import retrievers.bm25.index as index_module
from corpora import Corpus, load_dataset
from corpora.tokenize import encode, tokenize
from retrievers.bm25 import compiled
from retrievers.bm25 import BM25
from retrievers.bm25.index import BM25Index
from retrievers.ranking import doc_id_order

needs_numba = pytest.mark.skipif(not compiled.available(), reason="the compiled loop needs numba: pip install 'retbench[fast]'")
WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def _index(texts: list[str], block_docs: int = index_module.BLOCK_DOCS) -> tuple[BM25Index, dict[str, int]]:
    tokens = tokenize(texts)
    vocabulary = {t: i for i, t in enumerate(tokens.vocabulary)}
    return BM25Index.build(tokens.offsets, tokens.term_ids, len(tokens.vocabulary), block_docs=block_docs), vocabulary


def _distinct(offsets: np.ndarray, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each query's distinct term ids, ascending (what :func:`retrievers.bm25.compiled.top_k` takes)."""
    queries = sp.csr_matrix((np.ones(len(terms)), terms.copy(), offsets.copy()),
                            shape=(len(offsets) - 1, int(terms.max(initial=0)) + 1))
    queries.sum_duplicates()
    return queries.indptr.astype(np.int64), queries.indices.astype(np.int64)


def _assert_compiled_is_exhaustive(index: BM25Index, offsets: np.ndarray, terms: np.ndarray, k: int,
                                 tie_rank: np.ndarray, min_score: float = 0.0, threads: int = 1) -> None:
    expected = index.search(offsets, terms, k, tie_rank, min_score, compiled=False)
    got = index.search(offsets, terms, k, tie_rank, min_score, threads=threads, compiled=True)
    np.testing.assert_array_equal(got[0], expected[0])  # as many results per query
    np.testing.assert_array_equal(got[1], expected[1])  # the same documents in the same order
    np.testing.assert_array_equal(got[2].view(np.int64), expected[2].view(np.int64))  # the same bits
    assert got[1].dtype == expected[1].dtype and got[2].dtype == expected[2].dtype


@needs_numba
@pytest.mark.parametrize("name", ["vaswani", "cranfield", "cisi", "med", "cystic_fibrosis", "adi"])
@pytest.mark.parametrize("analyzer", ["article", "english"])
def test_compiled_search_is_the_product_search_on_real_collections(shared_data, name, analyzer):
    dataset = load_dataset(str(shared_data / name))
    bm25 = BM25(analyzer=analyzer).fit(dataset.corpus)
    offsets, terms = bm25.encode_queries(dataset.queries)
    for k in (1, 10, 100, 1000, len(dataset.corpus) + 1):  # the last: more than any query matches
        _assert_compiled_is_exhaustive(bm25.index, offsets, terms, k, bm25._tie_rank)


def _zipfian(n_docs: int, n_queries: int) -> tuple[list[str], list[str]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import synthetic

    data = synthetic.make(n_docs, n_queries, seed=3, vocabulary=1 << 14, query_terms=(3, 6))
    return data.texts, data.queries


@needs_numba
@pytest.mark.parametrize("block_docs", [4096, index_module.BLOCK_DOCS])
def test_compiled_search_is_the_product_search_on_a_zipfian_corpus(block_docs):
    """The benchmark's generator (3 to 6 terms a query) in 5 blocks or one; doc ids in shuffled order."""
    texts, queries = _zipfian(20_000, 300)
    index, vocabulary = _index(texts, block_docs=block_docs)
    offsets, terms = encode(queries, vocabulary)
    tie_rank = np.random.default_rng(1).permutation(len(texts))
    for k in (1, 10, 100, 1000, 50_000):
        _assert_compiled_is_exhaustive(index, offsets, terms, k, tie_rank, threads=2 if k == 10 else 1)


@needs_numba
@pytest.mark.parametrize("zipf,lengths", [(1.0, "long"), (1.2, "short")])
def test_compiled_search_is_the_product_search_on_the_matrix_workloads(tmp_path, zipf, lengths):
    """The engine matrix's generator (``benchmarks/workloads.py``: a plain Zipf law, documents of
    100 to 1,000 tokens or of 20 to 40, queries of 1-2 and of 10-20 words drawn from the vocabulary)
    in 8 blocks, pruned where k allows it: the same documents, order and score bits as the product."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import workloads

    shape = workloads.Shape(zipf, 3000, lengths)
    n_docs = 1200 if lengths == "long" else 6000
    docs, query_files = workloads.workload_files(shape, n_docs, 60, 5, tmp_path)
    texts = docs.read_text(encoding="ascii").splitlines()
    index, vocabulary = _index(texts, block_docs=n_docs // 8)
    tie_rank = np.random.default_rng(4).permutation(len(texts))
    for name in ("1-2", "10-20"):
        offsets, terms = encode(query_files[name].read_text(encoding="ascii").splitlines(), vocabulary)
        sizes = np.diff(offsets)
        low, high = workloads.QUERY_SHAPES[name]
        assert sizes.min() >= low and sizes.max() <= high  # every query word is indexed (none is a stop word)
        for k in (1, 10, 100, 1000):
            _assert_compiled_is_exhaustive(index, offsets, terms, k, tie_rank)


@needs_numba
@pytest.mark.parametrize("block_docs", [4096, index_module.BLOCK_DOCS])
def test_pruning_skips_weights_and_returns_what_scoring_every_posting_returns(block_docs):
    """On the benchmark's generator, pruning (bounds given, at any k: with the heap up to
    HEAP_UP_TO_K, with candidates gathered in bulk above) computes fewer weights than scoring every
    posting (at k = 10, 49% of them in 5 blocks), and returns the same documents, order and score
    bits; in a single block nothing is pruned."""
    texts, queries = _zipfian(20_000, 300)
    index, vocabulary = _index(texts, block_docs=block_docs)
    offsets, terms = encode(queries, vocabulary)
    tie_rank = np.random.default_rng(2).permutation(len(texts))
    arguments = (index._postings(), index.block_docs, index.k1, *_distinct(offsets, terms))
    from retrievers.bm25.kernel import HEAP_UP_TO_K

    for k in (1, 10, HEAP_UP_TO_K, HEAP_UP_TO_K + 1, 1000):
        every, pruned = np.zeros(2, np.int64), np.zeros(2, np.int64)
        expected = compiled.top_k(*arguments, k, 0.0, tie_rank, work=every)
        got = compiled.top_k(*arguments, k, 0.0, tie_rank, bounds=index.term_bounds(), work=pruned)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a.view(np.int64) if a.dtype.kind == "f" else a,
                                          b.view(np.int64) if b.dtype.kind == "f" else b)
        assert every[1] == 0 and every[0] == sum(len(index.postings(t)[0]) for t in arguments[4])
        if compiled.prunes(k) and len(index.indptr) > 1:  # pruning starts once the first block filled the top k
            # many only read; at k = 1000 of 20,000 documents the k-th best is low, and a few are
            largest = 0.6 if k <= 10 else 0.9 if k <= HEAP_UP_TO_K + 1 else 1.0
            assert pruned[0] < every[0] * largest and pruned[1] > 0
        else:
            np.testing.assert_array_equal(pruned, every)


@needs_numba
@pytest.mark.parametrize("name", ["vaswani", "cranfield", "cisi", "med", "cystic_fibrosis", "adi"])
def test_pruned_search_is_the_exhaustive_search_on_real_collections(shared_data, name):
    """Real queries over real collections in 16 blocks or more (pruning starts once the first block
    has filled the top k): it skips weights (at k = 1 and 10), and the top k (1, 10, 100, 1000) is
    the product's, documents, order and score bits."""
    dataset = load_dataset(str(shared_data / name))
    tokens = tokenize(dataset.corpus.full_texts, "english")
    index = BM25Index.build(tokens.offsets, tokens.term_ids, len(tokens.vocabulary),
                            block_docs=max(4, len(dataset.corpus) // 16))
    offsets, terms = encode(dataset.queries.texts, {t: i for i, t in enumerate(tokens.vocabulary)}, "english")
    tie_rank = doc_id_order(dataset.corpus.ids)
    for k in (1, 10, 100, 1000):
        _assert_compiled_is_exhaustive(index, offsets, terms, k, tie_rank)
        every, pruned = np.zeros(2, np.int64), np.zeros(2, np.int64)
        arguments = (index._postings(), index.block_docs, index.k1, *_distinct(offsets, terms), k, 0.0, tie_rank)
        compiled.top_k(*arguments, work=every)
        compiled.top_k(*arguments, bounds=index.term_bounds(), work=pruned)
        assert pruned[0] <= every[0] and every[1] == 0
        if k <= 10:  # (adi's 82 documents never fill a top 100)
            assert pruned[0] < every[0] and pruned[1] > 0


@needs_numba
def test_term_bounds_are_each_terms_largest_weight():
    """The bound of a term is the largest of its weights as the index computes them, in every block."""
    texts, _ = _zipfian(3_000, 1)
    index, _ = _index(texts, block_docs=1000)
    expected = np.zeros(index.n_terms)
    for number in range(len(index.indptr)):
        indptr = index.block(number)[0].astype(np.int64)
        weights = index.block_weights(number)
        for term in np.flatnonzero(np.diff(indptr)):
            expected[term] = max(expected[term], weights[indptr[term]:indptr[term + 1]].max())
    np.testing.assert_array_equal(index.term_bounds(), expected)
    assert index.term_bounds() is index.term_bounds()  # computed once


@needs_numba
def test_ties_at_the_kth_place_are_broken_by_doc_id_as_by_the_product():
    """Ten identical documents tie exactly; k = 3 cuts through them, and only doc ids decide."""
    texts = ["apple pear"] * 10 + ["apple"] * 5 + ["pear plum fig"] * 4 + ["kiwi"] * 30
    ids = [f"doc{j:02d}" for j in range(len(texts))]
    rng = np.random.default_rng(0)
    rng.shuffle(ids)
    tie_rank = doc_id_order(ids)
    index, vocabulary = _index(texts, block_docs=7)
    offsets, terms = encode(["apple pear", "pear", "apple kiwi", "lime"], vocabulary)
    for k in (1, 3, 10, 11, 15, 100):
        _assert_compiled_is_exhaustive(index, offsets, terms, k, tie_rank)
    run_offsets, docs, _ = index.search(offsets, terms, 3, tie_rank, compiled=True)
    tied = sorted(range(10), key=lambda j: ids[j])
    assert docs[:3].tolist() == tied[:3]  # the three smallest ids of the ten tied documents


@needs_numba
@pytest.mark.parametrize("block_docs", [7, 64, index_module.BLOCK_DOCS])
@pytest.mark.parametrize("k", [301, 320, 500, 900])
def test_large_k_cut_back_by_quickselect_is_the_product_search_on_many_ties(block_docs, k):
    """Above the heap's k (HEAP_UP_TO_K) candidates gather and are cut back to the best k whenever
    2k have gathered; 4,000 documents of at most 4 of 6 words tie by the hundred."""
    from retrievers.bm25.kernel import HEAP_UP_TO_K

    assert k > HEAP_UP_TO_K
    rng = np.random.default_rng(k + block_docs)
    texts = [" ".join(rng.choice(WORDS, size=rng.integers(1, 5))) for _ in range(4000)]
    index, vocabulary = _index(texts, block_docs=block_docs)
    offsets, terms = encode(["apple", "apple pear", "fig kiwi lime", " ".join(WORDS), "plum absent"], vocabulary)
    for min_score in (0.0, 0.5):
        _assert_compiled_is_exhaustive(index, offsets, terms, k, rng.permutation(len(texts)), min_score)


DOCS = st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), min_size=1, max_size=40)
QUERIES = st.lists(st.lists(st.sampled_from(WORDS + ["absent"]), max_size=5).map(" ".join), min_size=1, max_size=6)


@needs_numba
@settings(max_examples=150, deadline=None)
@given(DOCS, QUERIES, st.integers(1, 45), st.randoms(use_true_random=False), st.sampled_from([1, 3, 8, 1 << 17]),
       st.sampled_from([0.0, 1e-9, 0.5, -np.inf]))
def test_compiled_search_is_the_product_search_on_many_ties(texts, queries, k, random, block_docs, min_score):
    index, vocabulary = _index(texts, block_docs=block_docs)
    ids = [f"doc{j}" for j in range(len(texts))]
    random.shuffle(ids)
    offsets, terms = encode(queries, vocabulary)
    _assert_compiled_is_exhaustive(index, offsets, terms, k, doc_id_order(ids), min_score)


@needs_numba
def test_large_indexes_search_compiled_by_default(monkeypatch):
    index, vocabulary = _index(["apple pear", "pear plum", "fig"])
    offsets, terms = encode(["pear apple"], vocabulary)
    calls = []
    real = compiled.top_k
    monkeypatch.setattr(compiled, "top_k", lambda *args, **kwargs: calls.append(args[5]) or real(*args, **kwargs))
    index.search(offsets, terms, 2, np.arange(3))  # 5 postings: below COMPILED_FROM_POSTINGS
    assert calls == [] and len(index.docs) == 5
    monkeypatch.setattr(index_module, "COMPILED_FROM_POSTINGS", 6)
    index.search(offsets, terms, 2, np.arange(3))
    assert calls == []
    monkeypatch.setattr(index_module, "COMPILED_FROM_POSTINGS", 5)
    index.search(offsets, terms, 2, np.arange(3))
    index.search(offsets, terms, 1000, np.arange(3))  # any k: k is capped at the index's documents
    long_offsets, long_terms = encode([" ".join(["pear", "apple", "fig", "plum"] * 5)], vocabulary)
    index.search(long_offsets, long_terms, 2, np.arange(3))  # and any query length
    assert calls == [2, 3, 2]


def test_without_numba_search_is_the_product_and_the_loop_says_how_to_install(monkeypatch):
    monkeypatch.setattr(compiled, "available", lambda: False)
    monkeypatch.setattr(index_module, "COMPILED_FROM_POSTINGS", 0)
    index, vocabulary = _index(["apple pear", "pear plum", "fig"])
    offsets, terms = encode(["pear apple", "fig"], vocabulary)
    run_offsets, docs, scores = index.search(offsets, terms, 2, np.arange(3))
    assert run_offsets.tolist() == [0, 2, 3] and docs.tolist() == [0, 1, 2]
    with pytest.raises(ImportError, match=r"retbench\[fast\]"):
        index.search(offsets, terms, 2, np.arange(3), compiled=True)


def test_bm25_search_through_the_retriever_is_unchanged_by_the_compiled_loop(monkeypatch):
    corpus = Corpus([f"d{j}" for j in range(6)], ["red apple pie", "green apple", "apple apple tart", "blue sky",
                                                  "red sky at night", "apple"])
    from corpora import Queries

    queries = Queries(["q1", "q2", "q3"], ["red apple", "sky apple", "absent"])
    expected = BM25().fit(corpus).search(queries, 3)
    if not compiled.available():
        pytest.skip("the compiled loop needs numba: pip install 'retbench[fast]'")
    monkeypatch.setattr(index_module, "COMPILED_FROM_POSTINGS", 0)
    got = BM25().fit(corpus).search(queries, 3)
    for query in ("q1", "q2", "q3"):
        assert got.ranking(query) == expected.ranking(query)
    np.testing.assert_array_equal(got.scores.view(np.int64), expected.scores.view(np.int64))


@needs_numba
@pytest.mark.parametrize("case", ["random", "sampled_high", "ties", "few"])
def test_the_first_blocks_floor_is_reached_by_at_least_k_values(case):
    """``_floor_of`` may return less than the k-th best (a floor is all the loop needs) but never
    more: at least k values reach it, also when the evenly spaced sample misleads (every sampled
    value high, the rest low), where the exact quickselect takes over."""
    from retrievers.bm25.kernel import _floor_of, _kth_largest

    rng = np.random.default_rng(11)
    k, n = 400, 20_000
    values = {"random": rng.random(n), "ties": rng.integers(0, 5, n).astype(float), "few": rng.random(3 * k),
              "sampled_high": np.where(np.arange(n) % (n // (4 * k)) == 0, 10.0 + rng.random(n), rng.random(n))}[case]
    floor = _floor_of(values, k, np.empty(8 * k + 2), np.empty(2 * k + n))
    exact = _kth_largest(values, k, np.empty(n))
    assert np.count_nonzero(values >= floor) >= k and floor <= exact
    if case in ("few", "sampled_high"):
        assert floor == exact  # too few values to sample / a misleading sample: the exact k-th best
    elif case == "random":
        assert np.count_nonzero(values >= floor) <= 4 * k  # near the 1.5k-th best, not far below


@needs_numba
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, -0.0, 1.5, 2.0, 2.0 + 2**-51, -3.0, np.inf, -np.inf, 1e-300, 7.25]),
                          st.integers(0, 10**6)), max_size=300, unique_by=lambda pair: pair[1]),
       st.integers(1, 400))
def test_the_ranking_sorts_by_score_then_tie_rank(pairs, k):
    """The radix sorts give the order of a comparison sort: score descending (-0.0 ties with 0.0),
    ties by tie rank ascending."""
    from retrievers.bm25.kernel import _rank

    tie_rank = np.random.default_rng(len(pairs)).permutation(10**6 + 1)
    docs = np.array([doc for _, doc in pairs], dtype=np.int64)
    scores = np.array([score for score, _ in pairs], dtype=np.float64)
    expected = sorted(range(len(pairs)), key=lambda i: (-scores[i], tie_rank[docs[i]]))
    kept = _rank(docs, scores, k, tie_rank)
    assert kept == min(k, len(pairs))
    assert docs.tolist() == [pairs[i][1] for i in expected]
    assert [float(s) for s in scores] == [float(pairs[i][0]) for i in expected]
