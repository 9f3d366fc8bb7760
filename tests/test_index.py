"""The BM25 index: its weights are the formula, its top k is the brute-force ranking, ties included."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import retrievers.bm25.index as index_module
import retrievers.ranking as ranking_module
from corpora import Corpus, Queries
from corpora.analyzers import article_analyzer
from corpora.tokenize import encode, tokenize
from retrievers.bm25 import BM25
from retrievers.bm25.index import BM25Index
from retrievers.ranking import doc_id_order, top_k, top_k_rows
from retrievers.strings import unpack_strings

WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def _index(texts: list[str], k1: float = 1.2, b: float = 0.75,
           block_docs: int = index_module.BLOCK_DOCS) -> tuple[BM25Index, dict[str, int]]:
    tokens = tokenize(texts)
    vocabulary = {t: i for i, t in enumerate(tokens.vocabulary)}
    return BM25Index.build(tokens.offsets, tokens.term_ids, len(tokens.vocabulary), k1, b, block_docs), vocabulary


def _postings_matrix(index: BM25Index) -> sp.csr_matrix:
    """terms x docs, rebuilt from the blocks (global doc indices)."""
    rows, docs, weights = [np.empty(0, np.int64)], [np.empty(0, np.int64)], [np.empty(0)]
    for t in range(index.n_terms):
        d, w = index.postings(t)
        rows.append(np.full(len(d), t))
        docs.append(d)
        weights.append(w)
    return sp.csr_matrix((np.concatenate(weights), (np.concatenate(rows), np.concatenate(docs))),
                         shape=(index.n_terms, index.n_docs))


def _dense_scores(index: BM25Index, offsets: np.ndarray, terms: np.ndarray) -> np.ndarray:
    weights = _postings_matrix(index)
    queries = sp.csr_matrix((np.ones(len(terms)), terms.copy(), offsets), shape=(len(offsets) - 1, index.n_terms))
    queries.sum_duplicates()
    queries.data[:] = 1.0
    return (queries @ weights).toarray()


def test_weights_are_the_formula():
    texts = ["apple pear apple", "pear plum", "apple apple apple fig", "kiwi"]
    index, vocabulary = _index(texts, k1=0.9, b=0.4)
    lengths = [len(article_analyzer(t)) for t in texts]
    avgdl = sum(lengths) / len(lengths)
    for term, t in vocabulary.items():
        postings = {d: c[term] for d, c in enumerate(Counter(article_analyzer(x)) for x in texts) if term in c}
        idf = math.log(1 + (len(texts) - len(postings) + 0.5) / (len(postings) + 0.5))
        docs, weights = index.postings(t)
        got = dict(zip(docs.tolist(), weights.tolist()))
        assert list(got) == sorted(postings)  # docs ascending within a term
        for d, tf in postings.items():
            expected = idf * tf * 1.9 / (tf + 0.9 * (1 - 0.4 + 0.4 * lengths[d] / avgdl))
            assert got[d] == pytest.approx(expected, rel=1e-15)


DOCS = st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), min_size=1, max_size=25)
QUERIES = st.lists(st.lists(st.sampled_from(WORDS + ["absent"]), max_size=4).map(" ".join), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(DOCS, QUERIES, st.integers(1, 30), st.randoms(use_true_random=False), st.sampled_from([1, 2]),
       st.booleans(), st.sampled_from([1, 3, 8, index_module.BLOCK_DOCS]))
def test_top_k_is_the_brute_force_ranking(texts, queries, k, random, threads, sample, block_docs):
    """Few words and short docs make many exact ties; doc ids in a shuffled order break them."""
    index, vocabulary = _index(texts, block_docs=block_docs)
    ids = [f"doc{j}" for j in range(len(texts))]
    random.shuffle(ids)
    tie_rank = doc_id_order(ids)
    offsets, terms = encode(queries, vocabulary)
    old = ranking_module.SAMPLE_ABOVE
    ranking_module.SAMPLE_ABOVE = 2 if sample else old  # exercise the sampled lower bound on tiny data
    try:
        run_offsets, docs, scores = index.search(offsets, terms, k, tie_rank, 1e-9, threads=threads)
    finally:
        ranking_module.SAMPLE_ABOVE = old
    expected_docs, expected_scores = top_k_rows(_dense_scores(index, offsets, terms), k, tie_rank, 1e-9)
    for i in range(len(queries)):
        assert docs[run_offsets[i]:run_offsets[i + 1]].tolist() == expected_docs[i].tolist()
        assert scores[run_offsets[i]:run_offsets[i + 1]].tolist() == expected_scores[i].tolist()


@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("compiled", [False, True])
def test_many_batches_of_results_join_in_query_order(monkeypatch, in_place, threads, compiled):
    """150 queries in batches of 16 (finished in any order with two threads), some without a match,
    k beyond the matches: written in place or joined at the end, each query's results are its
    brute-force ranking."""
    from retrievers.bm25 import compiled as compiled_module

    if compiled and not compiled_module.available():
        pytest.skip("the compiled loop needs numba: pip install 'retbench[fast]'")
    monkeypatch.setattr(index_module, "QUERY_BATCH", 16)
    monkeypatch.setattr(index_module, "COMPILED_BATCH", 16)
    if not in_place:
        monkeypatch.setattr(index_module, "_RESULTS_IN_PLACE_BYTES", 0)
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(WORDS, size=rng.integers(1, 5))) for _ in range(40)]
    index, vocabulary = _index(texts, block_docs=8)
    queries = [" ".join(rng.choice(WORDS + ["absent"], size=rng.integers(1, 3))) for _ in range(150)]
    offsets, terms = encode(queries, vocabulary)
    tie_rank = rng.permutation(len(texts))
    for k in (1, 7, 60):
        run_offsets, docs, scores = index.search(offsets, terms, k, tie_rank, threads=threads, compiled=compiled)
        expected_docs, expected_scores = top_k_rows(_dense_scores(index, offsets, terms), k, tie_rank, 0.0)
        assert len(run_offsets) == len(queries) + 1 and run_offsets[-1] == len(docs) == len(scores)
        assert any(len(row) == 0 for row in expected_docs) and any(len(row) < k for row in expected_docs)
        for i in range(len(queries)):
            assert docs[run_offsets[i]:run_offsets[i + 1]].tolist() == expected_docs[i].tolist()
            assert scores[run_offsets[i]:run_offsets[i + 1]].tolist() == expected_scores[i].tolist()


@pytest.mark.parametrize("block_docs", [1, 3, 1 << 17])
def test_score_matrix_is_the_sparse_product(block_docs):
    index, vocabulary = _index(["apple pear", "pear pear plum", "fig", "apple fig fig"], block_docs=block_docs)
    offsets, terms = encode(["apple pear pear", "fig", "nothing known"], vocabulary)
    matrix = index.score_matrix(offsets, terms)
    assert matrix.has_sorted_indices
    np.testing.assert_array_equal(matrix.toarray(), _dense_scores(index, offsets, terms))


def test_top_k_keeps_every_tie_at_the_cut_and_orders_them_by_tie_rank():
    candidates = np.arange(10_000, dtype=np.int32)
    scores = np.where(candidates % 7 == 0, 2.0, 1.0)
    tie_rank = np.arange(10_000)[::-1].copy()  # a higher doc index sorts first
    docs, values = top_k(candidates, scores, 5, tie_rank, 0.0)
    assert docs.tolist() == [9996, 9989, 9982, 9975, 9968]
    assert values.tolist() == [2.0] * 5


def test_scores_at_or_below_min_score_are_not_results():
    docs, values = top_k(np.array([3, 1, 2]), np.array([0.5, 0.0, 1e-12]), 3, np.arange(4), 1e-9)
    assert docs.tolist() == [3] and values.tolist() == [0.5]


def test_bm25_retriever_ranks_like_an_independent_bm25():
    texts = ["red apple pie", "green apple", "apple apple tart", "blue sky", "red sky at night"]
    corpus = Corpus([f"d{j}" for j in range(len(texts))], texts)
    queries = Queries(["q1", "q2", "q3"], ["red apple", "sky", "unknown words"])
    run = BM25().fit(corpus).search(queries, 3)
    assert run.ranking("q1") == ["d0", "d4", "d2"]  # red (df 2) outweighs a second apple (df 3)
    assert run.ranking("q2") == ["d3", "d4"]
    assert run.ranking("q3") == []
    scores = BM25().fit(corpus).score(queries).toarray()
    assert scores.shape == (3, 5) and scores[2].sum() == 0.0


@pytest.mark.parametrize("min_score", [1e-9, -np.inf])
def test_top_k_rows_on_long_rows_equals_a_full_sort(min_score):
    """Rows longer than the sampling threshold, coarse values (many ties), some at or below zero."""
    rng = np.random.default_rng(0)
    scores = rng.integers(-3, 40, size=(5, 30_000)).astype(np.float64) / 4
    tie_rank = rng.permutation(30_000)
    docs, values = top_k_rows(scores, 25, tie_rank, min_score)
    for row, got, got_values in zip(scores, docs, values):
        eligible = np.flatnonzero(row > min_score)
        expected = eligible[np.lexsort((tie_rank[eligible], -row[eligible]))][:25]
        assert got.tolist() == expected.tolist()
        assert got_values.tolist() == row[expected].tolist()


def test_building_in_small_steps_or_blocks_gives_the_same_postings(monkeypatch):
    texts = ["apple pear apple", "pear plum", "", "apple apple apple fig", "kiwi kiwi", "plum fig pear"] * 7
    whole, _ = _index(texts)
    monkeypatch.setattr(index_module, "_BUILD_STEP", 3)  # steps cut runs and terms everywhere
    for block_docs in (1, 4, 5, 1 << 17):
        blocked, _ = _index(texts, block_docs=block_docs)
        assert len(blocked.indptr) == -(-len(texts) // block_docs)
        for t in range(whole.n_terms):
            for got, expected in zip(blocked.postings(t), whole.postings(t)):
                np.testing.assert_array_equal(got, expected)


def test_indexing_its_own_tokens_gives_them_back_and_the_same_postings(monkeypatch):
    """from_texts owns its tokens and shrinks them block by block while the postings are written
    where the tokens were; build() is handed tokens its caller keeps, which stay whole."""
    texts = ["apple pear apple", "pear plum", "", "apple apple apple fig", "kiwi kiwi", "plum fig pear"] * 7
    monkeypatch.setattr(index_module, "BLOCK_DOCS", 4)
    owned, packed = BM25Index.from_texts(texts, "article")
    tokens = tokenize(texts)
    assert unpack_strings(*packed) == tokens.vocabulary
    kept = tokens.term_ids.copy()
    handed, _ = _index(texts, block_docs=4)
    np.testing.assert_array_equal(tokens.term_ids, kept)  # the caller's tokens are untouched
    assert len(owned.indptr) == len(handed.indptr) == -(-len(texts) // 4)
    assert len(owned.docs) == len(owned.tfs) == owned.block_starts[-1] == handed.block_starts[-1]
    for name in ("indptr", "block_starts", "docs", "tfs", "idf", "length_class", "class_norm"):
        np.testing.assert_array_equal(getattr(owned, name), getattr(handed, name))
    for t in range(owned.n_terms):
        for got, expected in zip(owned.postings(t), handed.postings(t)):
            np.testing.assert_array_equal(got, expected)


def test_term_frequencies_over_255_widen_the_postings():
    texts = ["apple pear", " ".join(["kiwi"] * 300 + ["apple"]), "pear plum", "kiwi fig " * 3]
    index, vocabulary = _index(texts, block_docs=2)  # the wide block is indexed after a narrow one
    assert index.tfs.dtype == np.uint16 and index.docs.dtype == np.uint16
    docs, weights = index.postings(vocabulary["kiwi"])
    lengths = [len(article_analyzer(t)) for t in texts]
    idf = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))
    norm = [1.2 * (1 - 0.75 + 0.75 * n / (sum(lengths) / 4)) for n in lengths]
    assert docs.tolist() == [1, 3]
    assert weights.tolist() == pytest.approx([idf * f * 2.2 / (f + norm[d]) for d, f in ((1, 300), (3, 3))],
                                             rel=1e-15)
    offsets, terms = encode(["kiwi apple", "fig kiwi"], vocabulary)
    found, got_docs, got_scores = index.search(offsets, terms, 3, np.arange(4), 0.0, compiled=False)
    dense = _dense_scores(index, offsets, terms)
    for q in range(2):
        row = dense[q]
        expected = sorted(np.flatnonzero(row > 0).tolist(), key=lambda d: (-row[d], d))[:3]
        assert got_docs[found[q]:found[q + 1]].tolist() == expected
    from retrievers.bm25 import compiled

    if compiled.available():  # the compiled loop reads the wider term frequencies the same way
        for got, want in zip(index.search(offsets, terms, 3, np.arange(4), 0.0, compiled=True),
                             (found, got_docs, got_scores)):
            np.testing.assert_array_equal(got, want)


def test_search_leaves_its_inputs_alone():
    """Also the compiled loop's, which finds each query's distinct terms (a repeated term counts once)."""
    from retrievers.bm25 import compiled

    index, vocabulary = _index(["apple pear", "pear plum", "fig"])
    offsets, terms = encode(["pear apple pear", "fig plum"], vocabulary)
    before = offsets.copy(), terms.copy()
    index.search(offsets, terms, 2, np.arange(3), 0.0)
    index.score_matrix(offsets, terms)
    if compiled.available():
        index.search(offsets, terms, 2, np.arange(3), 0.0, compiled=True)
    np.testing.assert_array_equal(offsets, before[0])
    np.testing.assert_array_equal(terms, before[1])


def test_blocks_written_apart_are_packed_in_order_into_an_array_of_their_size():
    """The build writes each block's postings where its tokens started, gaps between them; _packed
    copies them together, last block first, shrinking what it was handed as it goes."""
    values = np.arange(40, dtype=np.uint16)
    sources, starts = np.array([0, 10, 25]), np.array([0, 4, 11, 14])  # blocks of 4, 7 and 3 values
    handed = [values.copy()]
    packed = index_module._packed(handed, sources, starts)
    assert handed == [] and packed.dtype == np.uint16
    assert packed.tolist() == [0, 1, 2, 3] + list(range(10, 17)) + [25, 26, 27]
