"""Fusions: retrievers built from other retrievers (any of them).

``weighted``: alpha-weighted sum of min-max normalised child scores. With two children the weights
are alpha and 1 - alpha (the article's ``alpha * minmax(bm25) + (1 - alpha) * minmax(lsa)``); with
more, alpha goes to the first child and the rest is shared equally. Min-max runs over every
document; a query for which no child has a positive score gets no results; otherwise the top
``depth`` documents are returned (zero fused scores included, as in the article).

``rrf``: Reciprocal Rank Fusion, sum over children of 1 / (k + rank) over each child's top
``depth`` (k = 60, Elasticsearch's ``rank_constant``). Ties break by doc id ascending.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, ParameterError, Queries, RetbenchError, Run
from retrievers.base import Retriever, ScoreRetriever, as_run, doc_id_order, rank_sparse_rows
from retrievers.registry import register

DEFAULT_CHILDREN = ("bm25", "lsa")


def _default_children(children: tuple[Retriever, ...], owner: str) -> tuple[Retriever, ...]:
    if children:
        for child in children:
            if not isinstance(child, Retriever):
                raise RetbenchError(f"{owner}: children must be retrievers, got {child!r}")
        return children
    from retrievers.spec import build

    return tuple(build(name) for name in DEFAULT_CHILDREN)


class Fusion(Retriever):
    """Common parts of fusions: children, fitting, labels that show the children."""

    def fit(self, corpus: Corpus) -> Fusion:
        super().fit(corpus)
        for child in self.children:
            child.fit(corpus)
        self._tie_rank = doc_id_order(corpus.ids)
        return self

    @property
    def label(self) -> str:
        params = self.non_default_params()
        children = [c.label for c in self.children]
        if [c.name for c in self.children] == list(DEFAULT_CHILDREN) and children == list(DEFAULT_CHILDREN):
            children = []
        parts = children + [f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()]
        return f"{self.name}({','.join(parts)})" if parts else self.name


@register
class Weighted(Fusion, ScoreRetriever):
    """alpha * minmax(first child) + (1 - alpha) * minmax(second child), top ``depth``."""

    name = "weighted"
    min_score = -np.inf
    batch_cells = 1 << 22  # query x doc cells per batch: two dense batches of 32 MB at most

    def __init__(self, *children: Retriever, alpha: float = 0.5, depth: int = 10):
        if not 0.0 <= alpha <= 1.0:
            raise ParameterError("alpha", "weighted", "a float in [0, 1]", alpha)
        if not (isinstance(depth, int) and depth >= 1):
            raise ParameterError("depth", "weighted", "an int >= 1", depth)
        self.children = _default_children(children, "weighted")
        for child in self.children:
            if not isinstance(child, ScoreRetriever):
                raise RetbenchError(
                    f"weighted: child {child.label!r} has no score matrix to normalise. "
                    "Fix: fuse it with rrf, which needs only rankings."
                )
        self.alpha = alpha
        self.depth = depth

    def fit(self, corpus: Corpus) -> Weighted:
        Fusion.fit(self, corpus)
        return self

    def weights(self) -> list[float]:
        n = len(self.children)
        if n == 1:
            return [1.0]
        return [self.alpha] + [(1.0 - self.alpha) / (n - 1)] * (n - 1)

    def score(self, queries: Queries) -> np.ndarray:
        # In place on one private copy per child: the same operations as the textbook form
        # (hence the same numbers), at two dense batches of memory instead of five.
        fused = None
        any_positive = np.zeros(len(queries), dtype=bool)
        for weight, child in zip(self.weights(), self.children):
            matrix = child.score(queries)
            dense = matrix.toarray() if sp.issparse(matrix) else np.array(matrix, dtype=np.float64)
            high = dense.max(axis=1, keepdims=True)
            low = dense.min(axis=1, keepdims=True)
            any_positive |= high[:, 0] > 0
            span = high - low
            dense -= low
            np.divide(dense, span, out=dense, where=span > 0)
            dense[~(span[:, 0] > 0)] = 0.0
            dense *= weight
            if fused is None:
                fused = dense
            else:
                fused += dense
        fused[~any_positive] = -np.inf
        return fused

    def search(self, queries: Queries, k: int) -> Run:
        return ScoreRetriever.search(self, queries, min(k, self.depth))


@register
class RRF(Fusion):
    """Reciprocal Rank Fusion: sum over children of 1 / (k + rank) over each child's top ``depth``."""

    name = "rrf"

    def __init__(self, *children: Retriever, k: int = 60, depth: int = 10):
        if not (isinstance(k, int) and k >= 0):
            raise ParameterError("k", "rrf", "an int >= 0", k)
        if not (isinstance(depth, int) and depth >= 1):
            raise ParameterError("depth", "rrf", "an int >= 1", depth)
        self.children = _default_children(children, "rrf")
        self.k = k
        self.depth = depth

    def search(self, queries: Queries, k: int) -> Run:
        corpus: Corpus = self.corpus
        n_queries = len(queries)
        fused = sp.csr_matrix((n_queries, len(corpus)))
        for child in self.children:
            run = as_run(child.search(queries, self.depth), corpus, queries, child.label)
            lengths = run.lengths()
            rows = np.repeat(np.arange(n_queries), lengths)
            ranks = np.arange(len(run.doc_index)) - np.repeat(run.offsets[:-1], lengths) + 1
            keep = ranks <= self.depth
            points = 1.0 / (self.k + ranks[keep])
            fused = fused + sp.csr_matrix((points, (rows[keep], run.doc_index[keep])), shape=fused.shape)
        return rank_sparse_rows(fused.tocsr(), k, self._tie_rank, queries.ids, corpus.ids)
