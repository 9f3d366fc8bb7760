"""BM25 on Vaswani (default analyzer) returns, for every query, the top 10 of an independent BM25.

The reference below is written from the formula alone, in plain Python dictionaries:

    score(q, d) = sum over distinct analyzed query terms t of
        idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)),  k1 = 1.2, b = 0.75

with |d| the number of analyzed tokens of d, ties broken by doc id ascending (as strings), and a
zero score no result.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import pytest

from corpora import DEFAULT_ANALYZER, get_analyzer, load_dataset
from corpora.model import Corpus, Queries
from tests.conftest import real_data

K = 10


def reference_bm25(corpus: Corpus, queries: Queries, k: int, k1: float = 1.2, b: float = 0.75
                   ) -> dict[str, list[tuple[str, float]]]:
    analyze = get_analyzer(DEFAULT_ANALYZER)
    postings: dict[str, dict[str, int]] = defaultdict(dict)
    length: dict[str, int] = {}
    for doc_id, text in zip(corpus.ids, corpus.full_texts):
        tokens = analyze(text)
        length[doc_id] = len(tokens)
        for term, count in Counter(tokens).items():
            postings[term][doc_id] = count
    n_docs = len(corpus.ids)
    avgdl = sum(length.values()) / n_docs
    rankings: dict[str, list[tuple[str, float]]] = {}
    for query_id, text in zip(queries.ids, queries.texts):
        scores: dict[str, float] = defaultdict(float)
        for term in set(analyze(text)):
            docs = postings.get(term, {})
            idf = math.log(1 + (n_docs - len(docs) + 0.5) / (len(docs) + 0.5))
            for doc_id, tf in docs.items():
                scores[doc_id] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length[doc_id] / avgdl))
        ranked = sorted(((d, s) for d, s in scores.items() if s > 0), key=lambda pair: (-pair[1], pair[0]))
        rankings[query_id] = ranked[:k]
    return rankings


def test_bm25_top10_equals_an_independent_bm25_on_vaswani() -> None:
    vaswani = real_data("vaswani")
    from retrievers import build

    dataset = load_dataset(str(vaswani))
    run = build("bm25").fit(dataset.corpus).search(dataset.queries, K)
    expected = reference_bm25(dataset.corpus, dataset.queries, K)
    assert len(expected) == 93
    for query_id in dataset.queries.ids:
        assert run.ranking(query_id) == [d for d, _ in expected[query_id]], query_id
        got = [s for _, s in run.items(query_id)]
        assert got == pytest.approx([s for _, s in expected[query_id]], rel=1e-12)
