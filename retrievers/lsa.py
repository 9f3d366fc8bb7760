"""LSA: TF-IDF reduced by truncated SVD, cosine similarity in the reduced space.

A deterministic stand-in for a dense retriever: it maps documents and queries to few dimensions,
but from the same words, so it is no semantic embedding.

Up to :attr:`LSA.randomized_above` documents: scikit-learn's ``TfidfVectorizer`` (smooth idf, l2
rows) and ``TruncatedSVD`` (arpack, ``random_state`` = seed), as in the article. Above it, the same
TF-IDF built from :func:`corpora.tokenize.tokenize` and a randomized truncated SVD (Halko et al.,
``random_state`` = seed): arpack's and the per-document tokenizer's cost grow too fast, and the
randomized result agrees with arpack's to a few decimals. The fitted state of a large corpus goes
through the index cache. scikit-learn is imported only when a fit needs it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from corpora import DEFAULT_ANALYZER, Corpus, ParameterError, Queries, RetbenchError, get_analyzer
from retrievers.base import ScoreRetriever
from retrievers.cache import SortedStrings, State, check_strings, fitted_state, pack_strings, progress_callback
from retrievers.registry import register


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out = np.zeros_like(matrix)
    np.divide(matrix, norms, out=out, where=norms > 1e-12)
    return out


@register
class LSA(ScoreRetriever):
    """TF-IDF -> truncated SVD (``dims`` dimensions) -> cosine similarity."""

    name = "lsa"
    #: Corpora larger than this (documents) use the fast tokenizer and a randomized SVD.
    randomized_above: ClassVar[int] = 50_000
    state_version: ClassVar[int] = 1

    def __init__(self, dims: int = 6, seed: int = 0, analyzer: str = DEFAULT_ANALYZER):
        if not (isinstance(dims, int) and dims >= 1):
            raise ParameterError("dims", "lsa", "an int >= 1", dims)
        get_analyzer(analyzer)
        self.dims = dims
        self.seed = seed
        self.analyzer = analyzer

    def fit(self, corpus: Corpus) -> LSA:
        super().fit(corpus)
        self._state: State | None = None
        if len(corpus) > self.randomized_above:
            return self._fit_large(corpus)
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._tfidf = TfidfVectorizer(tokenizer=get_analyzer(self.analyzer), lowercase=False, token_pattern=None)
        matrix = self._tfidf.fit_transform(corpus.full_texts)
        self._check_dims(matrix.shape)
        self._svd = TruncatedSVD(n_components=self.dims, random_state=self.seed, algorithm="arpack")
        self._doc_vectors = _normalise_rows(self._svd.fit_transform(matrix))
        return self

    def score(self, queries: Queries) -> np.ndarray:
        if self._state is not None:
            reduced = self._large_query_matrix(queries) @ self._state["components"].T
        else:
            reduced = self._svd.transform(self._tfidf.transform(queries.texts))
        return _normalise_rows(reduced) @ self._doc_vectors.T

    def _check_dims(self, shape: tuple[int, int]) -> None:
        limit = min(shape) - 1
        if self.dims > limit:
            raise RetbenchError(
                f"lsa(dims={self.dims}) needs more dimensions than the corpus has: {shape[0]} documents "
                f"x {shape[1]} terms allow at most {limit}. Fix: pass lsa(dims=N) with N <= {limit}."
            )

    # ----- large corpora ---------------------------------------------------------------------
    def _fit_large(self, corpus: Corpus) -> LSA:
        from corpora.tokenize import analyzer_fingerprint

        params: dict[str, Any] = {"dims": self.dims, "seed": self.seed, "analyzer": self.analyzer,
                                  "analyzer_fingerprint": analyzer_fingerprint(self.analyzer),
                                  "version": self.state_version}
        state = fitted_state("lsa", params, corpus, lambda: self._build_large(corpus),
                             lambda s: _valid_state(s, len(corpus), self.dims))
        self._state = state
        self._doc_vectors = state["doc_vectors"]
        self._term_ids: SortedStrings | None = None
        return self

    def _build_large(self, corpus: Corpus) -> State:
        from sklearn.decomposition import TruncatedSVD

        from corpora.tokenize import tokenize

        tokens = tokenize(corpus.full_texts, self.analyzer, progress=progress_callback())
        counts = _counts(tokens.offsets, tokens.term_ids, len(tokens.vocabulary))
        self._check_dims(counts.shape)
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        idf = np.log((1.0 + counts.shape[0]) / (1.0 + df)) + 1.0  # scikit-learn's smooth idf
        matrix = _tfidf_rows(counts, idf)
        # ten power iterations: text spectra can be flat, and five left a third of the top 10 apart from
        # arpack's on synthetic text; ten agree on ~98% of it
        svd = TruncatedSVD(n_components=self.dims, random_state=self.seed, algorithm="randomized",
                           n_iter=10, n_oversamples=30)
        doc_vectors = _normalise_rows(svd.fit_transform(matrix))
        blob, offsets = pack_strings(tokens.vocabulary)
        return {"idf": idf, "components": np.ascontiguousarray(svd.components_, dtype=np.float64),
                "doc_vectors": doc_vectors, "vocabulary": blob, "vocabulary_offsets": offsets}

    def _large_query_matrix(self, queries: Queries) -> sp.csr_matrix:
        from corpora.tokenize import encode

        state = self._state or {}
        if self._term_ids is None:
            self._term_ids = SortedStrings(state["vocabulary"], state["vocabulary_offsets"])
        offsets, terms = encode(queries.texts, self._term_ids, self.analyzer)
        return _tfidf_rows(_counts(offsets, terms, len(state["idf"])), state["idf"])


def _counts(offsets: np.ndarray, term_ids: np.ndarray, n_terms: int) -> sp.csr_matrix:
    """Documents x terms occurrence counts, duplicates summed, indices sorted."""
    matrix = sp.csr_matrix((np.ones(len(term_ids)), term_ids, offsets), shape=(len(offsets) - 1, n_terms))
    matrix.sum_duplicates()
    return matrix


def _tfidf_rows(counts: sp.csr_matrix, idf: np.ndarray) -> sp.csr_matrix:
    """``tf * idf`` with l2-normalised rows (empty rows stay zero), as ``TfidfVectorizer`` does."""
    matrix = counts.copy()
    matrix.data *= idf[matrix.indices]
    squares = np.bincount(np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr)),
                          weights=matrix.data ** 2, minlength=matrix.shape[0])
    norms = np.sqrt(squares)
    norms[norms == 0.0] = 1.0
    matrix.data /= np.repeat(norms, np.diff(matrix.indptr))
    return matrix


def _valid_state(state: State, n_docs: int, dims: int) -> bool:
    """A cached LSA state is used only when its arrays fit together and hold finite numbers."""
    try:
        idf, components, vectors = state["idf"], state["components"], state["doc_vectors"]
        check_strings(state["vocabulary"], state["vocabulary_offsets"])
    except (KeyError, ValueError):
        return False
    n_terms = len(idf)
    return (idf.ndim == 1 and components.shape == (dims, n_terms) and vectors.shape == (n_docs, dims)
            and len(state["vocabulary_offsets"]) == n_terms + 1
            and all(np.isfinite(a).all() for a in (idf, components, vectors)))
