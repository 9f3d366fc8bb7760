"""LSA: TF-IDF reduced by truncated SVD, cosine similarity in the reduced space.

A deterministic stand-in for a dense retriever: it maps documents and queries to few dimensions,
but from the same words, so it is no semantic embedding. scikit-learn's ``TfidfVectorizer``
(smooth idf, l2 rows) and ``TruncatedSVD`` (arpack, ``random_state`` = seed) as in the article.
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer

from corpora import DEFAULT_ANALYZER, Corpus, ParameterError, Queries, RetbenchError, get_analyzer
from retrievers.base import ScoreRetriever
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

    def __init__(self, dims: int = 6, seed: int = 0, analyzer: str = DEFAULT_ANALYZER):
        if not (isinstance(dims, int) and dims >= 1):
            raise ParameterError("dims", "lsa", "an int >= 1", dims)
        get_analyzer(analyzer)
        self.dims = dims
        self.seed = seed
        self.analyzer = analyzer

    def fit(self, corpus: Corpus) -> LSA:
        super().fit(corpus)
        self._tfidf = TfidfVectorizer(tokenizer=get_analyzer(self.analyzer), lowercase=False, token_pattern=None)
        matrix = self._tfidf.fit_transform(corpus.full_texts)
        limit = min(matrix.shape) - 1
        if self.dims > limit:
            raise RetbenchError(
                f"lsa(dims={self.dims}) needs more dimensions than the corpus has: {matrix.shape[0]} documents "
                f"x {matrix.shape[1]} terms allow at most {limit}. Fix: pass lsa(dims=N) with N <= {limit}."
            )
        self._svd = TruncatedSVD(n_components=self.dims, random_state=self.seed, algorithm="arpack")
        self._doc_vectors = _normalise_rows(self._svd.fit_transform(matrix))
        return self

    def score(self, queries: Queries) -> np.ndarray:
        reduced = self._svd.transform(self._tfidf.transform(queries.texts))
        return _normalise_rows(reduced) @ self._doc_vectors.T
