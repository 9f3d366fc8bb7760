"""A comparison computes each distinct system's rankings once, whichever systems use them
(issue 45): in ``bm25,lsa,rrf(bm25,lsa)`` the fusion reads the rankings of the ``bm25`` and ``lsa``
just searched instead of fitting and searching its children again (:func:`retrievers.shared.share_systems`),
and the results folder is the same bytes as when every system ran on its own.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path

import pytest

import harness.core.api as api
from corpora import Run, load_dataset
from harness import compare
from harness.core.options import RunOptions, Scoring
from retrievers import BM25, LSA, RRF, Weighted
from retrievers.fusion import CombSUM
from retrievers.run_file import RunSystem
from retrievers.shared import Shared, system_key

CALLS: Counter = Counter()
#: The cost reading's latency rounds search single queries again: left out where searches are counted.
NO_LATENCY = RunOptions(latency_queries=0)


class CountingBM25(BM25):
    """BM25 that counts its fits, searches and score calls (in :data:`CALLS`)."""

    name = "counting_bm25"

    def fit(self, corpus):
        CALLS["fit"] += 1
        return super().fit(corpus)

    def search(self, queries, k):
        CALLS["search"] += 1
        return super().search(queries, k)

    def score(self, queries):
        CALLS["score"] += 1
        return super().score(queries)


class NoSharing:
    """What a comparison did before: every system, and every fusion's child, fitted and searched."""

    def runner(self, retriever):
        return retriever

    def fitted(self, retriever):
        return retriever

    def restore(self) -> None:
        pass


@pytest.fixture
def unshared(monkeypatch):
    """Switch the sharing off (the comparison as before issue 45)."""
    monkeypatch.setattr(api, "share_systems", lambda retrievers: contextlib.nullcontext(NoSharing()))


@pytest.fixture(autouse=True)
def counted():
    CALLS.clear()
    yield CALLS


def test_a_system_that_is_also_a_fusions_child_is_fitted_and_searched_once() -> None:
    # depth=1000: the fusions read their children as deep as the comparison's runs, so one search serves all
    systems = [CountingBM25(), LSA(), RRF(CountingBM25(), LSA(), depth=1000),
               CombSUM(CountingBM25(), LSA(), depth=1000)]
    result = compare(systems, "article", ["mrr"], run=NO_LATENCY)
    assert (CALLS["fit"], CALLS["search"]) == (1, 1)
    assert [s.label for s in result.systems] == ["counting_bm25", "lsa", "rrf(counting_bm25,lsa,depth=1000)",
                                                  "combsum(counting_bm25,lsa,depth=1000)"]
    # the fusions' children are the fitted systems again after the comparison, not wrappers
    for fusion in result.systems[2:]:
        assert fusion.retriever.children == (result.systems[0].retriever, result.systems[1].retriever)
        assert not any(isinstance(child, Shared) for child in fusion.retriever.children)


def test_without_sharing_the_same_comparison_fits_and_searches_three_times(unshared) -> None:
    systems = [CountingBM25(), LSA(), RRF(CountingBM25(), LSA(), depth=1000),
               CombSUM(CountingBM25(), LSA(), depth=1000)]
    compare(systems, "article", ["mrr"], run=NO_LATENCY)
    assert (CALLS["fit"], CALLS["search"]) == (3, 3)  # what the test above saves


def test_a_child_of_several_fusions_is_scored_once() -> None:
    compare([Weighted(CountingBM25(), LSA(), alpha=0.3)], "article", ["mrr"], run=NO_LATENCY)
    one = CALLS["score"]
    CALLS.clear()
    compare([Weighted(CountingBM25(), LSA(), alpha=0.3), Weighted(CountingBM25(), LSA(), alpha=0.7)], "article",
            ["mrr"], run=NO_LATENCY)
    assert one >= 1 and CALLS["score"] == one and CALLS["fit"] == 1


def test_a_fusion_at_another_depth_searches_its_child_at_that_depth() -> None:
    # the article carries a fusion depth of 10; the comparison's runs are 1000 deep: two rankings, one fit
    compare([CountingBM25(), RRF(CountingBM25(), LSA())], "article", ["mrr"], run=NO_LATENCY)
    assert (CALLS["fit"], CALLS["search"]) == (1, 2)


def test_a_system_given_twice_under_two_labels_is_fitted_once_and_shown_twice() -> None:
    result = compare({"a": CountingBM25(), "b": CountingBM25()}, "article", ["mrr", "ndcg@5"], run=NO_LATENCY)
    assert (CALLS["fit"], CALLS["search"]) == (1, 1)
    assert [s.label for s in result.systems] == ["a", "b"]
    first, second = (result.per_query[result.per_query["system"] == label].drop(columns="system")
                     .reset_index(drop=True) for label in ("a", "b"))
    assert first.equals(second)


def test_system_key_tells_parameters_and_children_apart() -> None:
    assert system_key(BM25()) == system_key(BM25())
    assert system_key(BM25(k1=0.9)) != system_key(BM25())
    assert system_key(RRF(BM25(), LSA())) == system_key(RRF(BM25(), LSA()))
    assert system_key(RRF(BM25(), LSA())) != system_key(RRF(LSA(), BM25()))
    assert system_key(CountingBM25()) != system_key(BM25())


def test_two_runs_given_in_python_are_two_systems_even_when_they_look_alike() -> None:
    first = Run.from_mapping({"q1": [("d1", 2.0), ("d2", 1.0)]})
    second = Run.from_mapping({"q1": [("d2", 2.0), ("d1", 1.0)]})
    assert system_key(RunSystem.of(first)) != system_key(RunSystem.of(second))
    one = RunSystem.of(first)
    assert system_key(one) == system_key(one)


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_the_results_folder_is_the_same_bytes_as_without_sharing(tmp_path: Path, monkeypatch, cache: bool,
                                                                   assert_same_results) -> None:
    systems = "bm25,lsa,rrf(bm25,lsa),weighted(bm25,lsa)"
    scoring = Scoring(depth=20)  # the article's fusion depth is 10: children at 20 would be a second search
    run = RunOptions(cache=str(tmp_path / "cache") if cache else False)
    metrics = ["mrr", "recall@20", "ndcg@10"]
    shared = compare(systems, "article", metrics, scoring=scoring, run=run).write(tmp_path / "shared")
    with monkeypatch.context() as patch:
        patch.setattr(api, "share_systems", lambda retrievers: contextlib.nullcontext(NoSharing()))
        alone = compare(systems, "article", metrics, scoring=scoring, run=run).write(tmp_path / "alone")
    assert_same_results(shared, alone)


def test_cranfield_folder_is_the_same_bytes_as_without_sharing(tmp_path: Path, monkeypatch, shared_data,
                                                                assert_same_results) -> None:
    data = load_dataset(str(shared_data / "cranfield"))
    systems, metrics = "bm25,lsa,rrf(bm25,lsa)", ["mrr@10", "recall@1000", "ndcg@10"]
    shared = compare(systems, data, metrics).write(tmp_path / "shared")
    with monkeypatch.context() as patch:
        patch.setattr(api, "share_systems", lambda retrievers: contextlib.nullcontext(NoSharing()))
        alone = compare(systems, data, metrics).write(tmp_path / "alone")
    assert_same_results(shared, alone)


def test_on_the_dask_engine_the_shared_rankings_give_the_same_bytes(tmp_path: Path, assert_same_results) -> None:
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    from harness.engines import DaskEngine

    systems, metrics = "bm25,lsa,rrf(bm25,lsa)", ["mrr", "ndcg@5"]
    here = compare(systems, "article", metrics, scoring=Scoring(depth=10)).write(tmp_path / "local")
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        there = compare(systems, "article", metrics, scoring=Scoring(depth=10),
                        run=RunOptions(engine=DaskEngine(client=client)))
    assert sorted(there.engine["sharded"] + there.engine["on_worker"] + there.engine["on_client"]) == [
        "bm25", "lsa", "rrf"]
    assert_same_results(here, there.write(tmp_path / "dask"))


def test_two_pipelines_with_the_same_description_are_two_systems() -> None:
    """A parameter held as an object is that object, not the string get_params describes it by: two
    different PyTerrier pipelines describe themselves alike, and the second must not reuse the first's
    rankings (it did: the rescored pipeline was scored with the first one's results)."""
    from retrievers import PyTerrierRetriever

    class Fixed:
        def __init__(self, docs):
            self.docs = docs

        def transform(self, topics):
            import pandas as pd

            return pd.DataFrame([{"qid": q, "docno": d, "score": float(len(self.docs) - i)}
                                 for q in topics.qid for i, d in enumerate(self.docs)])

    one, two = PyTerrierRetriever(Fixed(["a", "b"])), PyTerrierRetriever(Fixed(["b", "a"]))
    assert one.get_params() == two.get_params()  # the same description ...
    assert system_key(one) != system_key(two)  # ... of two systems
