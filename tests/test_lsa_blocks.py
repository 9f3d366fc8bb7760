"""LSA's large corpora path in blocks (retrievers/blocked_svd.py): the decomposition scikit-learn's
randomized TruncatedSVD computed before, the same rankings up to rounding, and no documents x
(dims + 30) matrix held while fitting."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD

from corpora import Corpus, Queries, load_dataset
from corpora.tokenize import encode, tokenize
from retrievers import blocked_svd
from retrievers.blas import one_blas_thread
from retrievers.blocked_svd import blocked_truncated_svd
from retrievers.lsa import LSA, _counts, _normalise_rows, _smooth_idf, _tfidf_rows
from retrievers.ranking import doc_id_order, top_k_rows
from retrievers.strings import SortedStrings, pack_strings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import synthetic  # noqa: E402

#: float32 document vectors: a cosine's relative rounding is about 6e-8.
SCORE_TOLERANCE = 2e-7


def _matrix(corpus: Corpus) -> tuple[sp.csr_matrix, np.ndarray, list[str]]:
    """The large path's TF-IDF matrix, its idf and its vocabulary."""
    tokens = tokenize(corpus.full_texts, "article")
    counts = _counts(tokens.offsets, tokens.term_ids, len(tokens.vocabulary))
    idf = _smooth_idf(counts)
    return _tfidf_rows(counts, idf), idf, tokens.vocabulary


def _former_scores(corpus: Corpus, queries: Queries, dims: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The large corpora's path before the blocks: scikit-learn's randomized TruncatedSVD on the
    whole matrix, float64 document vectors, every score from one product; (scores, components)."""
    with one_blas_thread():
        matrix, idf, vocabulary = _matrix(corpus)
        svd = TruncatedSVD(n_components=dims, random_state=seed, algorithm="randomized", n_iter=10, n_oversamples=30)
        docs = _normalise_rows(svd.fit_transform(matrix))
        offsets, terms = encode(queries.texts, SortedStrings(*pack_strings(vocabulary)), "article")
        vectors = _normalise_rows(_tfidf_rows(_counts(offsets, terms, len(idf)), idf) @ svd.components_.T)
        return vectors @ docs.T, svd.components_


def _large(**params) -> LSA:
    lsa = LSA(**params)
    lsa.randomized_above = 0  # the large corpora's path on small data
    return lsa


def _synthetic(docs: int, vocabulary: int) -> tuple[Corpus, Queries]:
    data = synthetic.make(docs, 150, seed=3, vocabulary=vocabulary)
    return Corpus(data.doc_ids, data.texts), Queries(data.query_ids, data.queries)


# fewer documents than terms (scikit-learn works on A^T) and more (on A itself)
SHAPES = {"more terms than documents": (1500, 20_000), "more documents than terms": (6000, 2_000)}


@pytest.fixture(scope="module", params=list(SHAPES))
def collection(request) -> tuple[Corpus, Queries]:
    return _synthetic(*SHAPES[request.param])


def test_components_are_scikit_learns_up_to_rounding(collection):
    corpus, queries = collection
    _, former = _former_scores(corpus, queries, dims=40)
    lsa = _large(dims=40).fit(corpus)
    np.testing.assert_allclose(lsa._state["components"], former, atol=1e-9)


def test_rankings_are_the_former_ones_up_to_ties_within_rounding(collection):
    """Rank by rank the same documents, except two whose former scores lie within float32's rounding
    of each other may trade places (one query of these 150 has such a pair in its top 100; every
    other ranking is the same list)."""
    corpus, queries = collection
    former, _ = _former_scores(corpus, queries, dims=40)
    former_idx, former_val = top_k_rows(former, 100, doc_id_order(corpus.ids), LSA.min_score)
    run = _large(dims=40).fit(corpus).search(queries, 100)
    identical = 0
    for q, (idx, val) in enumerate(zip(former_idx, former_val)):
        ours = run.doc_index[run.offsets[q]:run.offsets[q + 1]]
        assert len(ours) == len(idx)
        differ = np.flatnonzero(ours != idx)
        # a document in another place scores, by the former fit, what the former document there scored
        np.testing.assert_allclose(former[q, ours[differ]], val[differ], atol=SCORE_TOLERANCE, rtol=0)
        np.testing.assert_allclose(run.scores[run.offsets[q]:run.offsets[q + 1]], val, atol=SCORE_TOLERANCE, rtol=0)
        identical += len(differ) == 0
    assert identical >= len(queries) - 2


def test_the_bundled_corpus_forced_onto_the_large_path_ranks_as_scikit_learn_did():
    """The article's corpus has fewer documents than dims + 30: a rank below the range's width."""
    data = load_dataset("article")
    former, _ = _former_scores(data.corpus, data.queries, dims=6)
    run = _large(dims=6).fit(data.corpus).search(data.queries, 10)
    former_idx, former_val = top_k_rows(former, 10, doc_id_order(data.corpus.ids), LSA.min_score)
    for q, (idx, val) in enumerate(zip(former_idx, former_val)):
        np.testing.assert_array_equal(run.doc_index[run.offsets[q]:run.offsets[q + 1]], idx)
        np.testing.assert_allclose(run.scores[run.offsets[q]:run.offsets[q + 1]], val, atol=SCORE_TOLERANCE, rtol=0)


def test_search_gives_the_very_scores_of_score(collection):
    corpus, queries = collection
    lsa = _large(dims=40).fit(corpus)
    matrix = lsa.score(queries)
    run = lsa.search(queries, 50)
    rows = np.repeat(np.arange(len(queries)), np.diff(run.offsets))
    np.testing.assert_array_equal(run.scores, matrix[rows, run.doc_index])


def test_document_vectors_are_float32_and_unit():
    corpus, _ = _synthetic(*SHAPES["more documents than terms"])
    vectors = _large(dims=40).fit(corpus)._doc_vectors
    assert vectors.dtype == np.float32
    norms = np.linalg.norm(vectors.astype(np.float64), axis=1)
    np.testing.assert_allclose(norms[norms > 0], 1.0, atol=1e-6)


def test_the_fit_holds_no_documents_by_width_matrix(monkeypatch):
    """With blocks of 500 documents, what the SVD allocates stays under its output, a few terms x
    (dims + 30) matrices (the basis, its product, a block's rows of them) and a quarter of one
    documents x (dims + 30) float64 matrix, of which scikit-learn's range finder held several."""
    monkeypatch.setattr(blocked_svd, "BLOCK_ROWS", 500)
    data = synthetic.make(40_000, 1, seed=3, vocabulary=2_000)
    matrix = _matrix(Corpus(data.doc_ids, data.texts))[0]
    dims, width = 40, 70
    tracemalloc.start()
    try:
        components, vectors = blocked_truncated_svd(matrix, dims, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    one_wide = matrix.shape[0] * width * 8
    terms_side = 6 * matrix.shape[1] * width * 8
    assert peak < vectors.nbytes + components.nbytes + terms_side + one_wide / 4
    assert vectors.nbytes + components.nbytes + terms_side + one_wide / 4 < one_wide  # so no such matrix fits in it
