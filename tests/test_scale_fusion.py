"""Fusions at scale: memory per batch is bounded by cells, never queries x documents."""

from __future__ import annotations

import numpy as np

from corpora import Corpus, Queries
from retrievers.bm25 import BM25
from retrievers.fusion import RRF, Weighted

WORDS = "apple pear plum fig kiwi lime lemon melon grape peach".split()


def _data(n_docs: int, n_queries: int) -> tuple[Corpus, Queries]:
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS, size=6)) for _ in range(n_docs)]
    queries = [" ".join(rng.choice(WORDS, size=2)) for _ in range(n_queries)]
    return Corpus([f"d{j}" for j in range(n_docs)], texts), Queries([f"q{i}" for i in range(n_queries)], queries)


class Recording(BM25):
    """bm25 that remembers how many queries each score call received."""

    name = "recording"
    calls: list[int] = []

    def score(self, queries: Queries):
        Recording.calls.append(len(queries))
        return super().score(queries)


def test_weighted_scores_in_batches_bounded_by_cells(monkeypatch):
    corpus, queries = _data(2000, 50)
    monkeypatch.setattr(Weighted, "batch_cells", 20_000)  # 10 queries x 2,000 docs per batch
    Recording.calls = []
    fused = Weighted(Recording(), BM25(k1=0.9)).fit(corpus)
    run = fused.search(queries, 10)
    assert max(Recording.calls) * len(corpus) <= 20_000
    assert sum(Recording.calls) == len(queries)
    whole = Weighted(BM25(), BM25(k1=0.9)).fit(corpus).search(queries, 10)  # default batch: all at once
    assert run.to_mapping() == whole.to_mapping()


def test_rrf_fuses_bounded_lists():
    corpus, queries = _data(500, 20)
    seen: list[int] = []

    class Depth(BM25):
        name = "depth"

        def search(self, queries, k):
            seen.append(k)
            return super().search(queries, k)

    RRF(Depth(), BM25(k1=0.9), depth=7).fit(corpus).search(queries, 5)
    assert seen == [7]
