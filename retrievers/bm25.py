"""BM25 with Lucene's idf and defaults, as a sparse matrix product.

score(q, d) = sum over distinct query terms t of
    idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl)),
    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

|d| is the number of analyzed tokens of d. A query term counts once however often it repeats
(the article's ``set(token(question))``). The weights are precomputed per (term, doc) once at fit
time, so a batch of queries is one sparse product.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from corpora import DEFAULT_ANALYZER, Corpus, ParameterError, Queries, get_analyzer
from retrievers.base import ScoreRetriever
from retrievers.registry import register


@register
class BM25(ScoreRetriever):
    """Okapi BM25 (Lucene idf, k1 = 1.2, b = 0.75 by default) over the chosen analyzer."""

    name = "bm25"

    def __init__(self, k1: float = 1.2, b: float = 0.75, analyzer: str = DEFAULT_ANALYZER):
        if not k1 >= 0:
            raise ParameterError("k1", "bm25", "a float >= 0", k1)
        if not 0 <= b <= 1:
            raise ParameterError("b", "bm25", "a float in [0, 1]", b)
        get_analyzer(analyzer)
        self.k1 = k1
        self.b = b
        self.analyzer = analyzer

    def fit(self, corpus: Corpus) -> BM25:
        super().fit(corpus)
        self._vectorizer = CountVectorizer(analyzer=get_analyzer(self.analyzer), dtype=np.float64)
        counts = self._vectorizer.fit_transform(corpus.full_texts).tocsr()  # docs x terms
        n_docs = counts.shape[0]
        doc_len = np.asarray(counts.sum(axis=1)).ravel()
        avgdl = doc_len.mean() if n_docs else 0.0
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        self.idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        norm = self.k1 * (1.0 - self.b + self.b * doc_len / avgdl) if avgdl > 0 else np.full(n_docs, self.k1)
        tf = counts.data
        rows = np.repeat(np.arange(n_docs), np.diff(counts.indptr))
        weights = self.idf[counts.indices] * tf * (self.k1 + 1.0) / (tf + norm[rows])
        self._weights = sp.csr_matrix((weights, counts.indices, counts.indptr), shape=counts.shape).T.tocsr()
        return self

    def query_matrix(self, queries: Queries) -> sp.csr_matrix:
        """Binary (n_queries x n_terms): each distinct known query term once."""
        q = self._vectorizer.transform(queries.texts).tocsr()
        q.data[:] = 1.0
        return q

    def score(self, queries: Queries) -> sp.csr_matrix:
        return (self.query_matrix(queries) @ self._weights).tocsr()
