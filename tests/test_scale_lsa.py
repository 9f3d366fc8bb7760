"""LSA above its size threshold: the same TF-IDF from the fast tokenizer, a randomized SVD close to
arpack's, and a fitted state that goes through the index cache."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from corpora import Corpus, Queries, load_dataset
from retrievers.base import fit_retriever
from retrievers.cache import IndexCache
from retrievers.context import RunContext
from retrievers.lsa import LSA

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import synthetic  # noqa: E402


@pytest.fixture(scope="module")
def small_synthetic() -> tuple[Corpus, Queries]:
    data = synthetic.make(2000, 100, seed=1, vocabulary=20_000)
    return Corpus(data.doc_ids, data.texts), Queries(data.query_ids, data.queries)


def _large(**params) -> LSA:
    lsa = LSA(**params)
    lsa.randomized_above = 0  # take the large-corpus path on small data
    return lsa


def test_the_article_corpus_stays_on_arpack():
    assert len(load_dataset("article").corpus) <= LSA.randomized_above


def test_randomized_agrees_with_arpack_on_most_of_the_top_10(small_synthetic):
    corpus, queries = small_synthetic
    exact = LSA(dims=6).fit(corpus).score(queries)
    fast = _large(dims=6).fit(corpus).score(queries)
    assert fast.shape == exact.shape
    overlap = np.mean([len(set(np.argsort(-a)[:10]) & set(np.argsort(-b)[:10])) / 10 for a, b in zip(exact, fast)])
    assert overlap > 0.9


def test_large_state_is_cached_and_gives_the_same_scores(tmp_path, small_synthetic):
    corpus, queries = small_synthetic
    first = fit_retriever(_large(), corpus, RunContext(cache=IndexCache(tmp_path))).score(queries)
    cache = IndexCache(tmp_path)
    second = fit_retriever(_large(), corpus, RunContext(cache=cache)).score(queries)
    assert cache.events == [("hit", "lsa")]
    np.testing.assert_array_equal(first, second)


def test_too_many_dimensions_is_a_clear_error():
    corpus = Corpus(["a", "b", "c"], ["red apple", "green pear", "blue plum"])
    with pytest.raises(Exception, match="lsa\\(dims=6\\) needs more dimensions"):
        _large(dims=6).fit(corpus)
