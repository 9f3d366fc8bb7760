"""Engines and the sharding protocol without a cluster: everything here runs in the plain install.

The protocol is run in this process (:func:`retrievers.sharding.sharded_search`), and an engine made
here places the shards in this process and runs every chunk of the statistics and the evaluation
through a mapper that pickles them and runs them backwards: what a cluster does, minus the cluster.
tests/test_engine_dask.py runs the same on a Dask LocalCluster where the ``dask`` extra is installed.
"""

from __future__ import annotations

import contextlib
import json
import pickle
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpora import Corpus, Dataset, Qrels, Queries, RetbenchError, Run, load_dataset
from harness import compare
from harness.cli import main
from harness.engines import ENGINES, DatasetOrigin, Engine, EngineRecord, EngineRun, resolve_engine
from harness.core.evaluation import evaluate, evaluate_in_partitions
from harness.readings.leaderboard import leaderboards
from harness.core.metrics import parse_metrics
from harness.core.statistics import bootstrap_means, randomisation_p_values
from retrievers import BM25, LSA, RRF, Retriever, RunContext, Weighted, fit_retriever, search_retriever
from retrievers.dense import Dense
from retrievers.bm25.index import BM25Index, CollectionStatistics
from retrievers.base import runs_whole_elsewhere
from retrievers.defaults import adopt_chosen, chosen
from retrievers.sharding import (FittedElsewhere, Placement, ShardHits, Shards, bounds_for, fit_in_process, is_sharded,
                                 merge_hits, shard_bounds, sharded_search, unfitted_copy)
from harness.core.options import RunOptions


def same_run(a, b) -> bool:
    return (a.query_ids == b.query_ids and a.offsets.tobytes() == b.offsets.tobytes()
            and a.doc_index.tobytes() == b.doc_index.tobytes() and a.scores.tobytes() == b.scores.tobytes()
            and list(a.doc_ids) == list(b.doc_ids))


# ----- the protocol ---------------------------------------------------------------------------


@pytest.mark.parametrize("shards", [1, 2, 3, 7, 28])
def test_bm25_in_shards_is_the_whole_index_run_to_the_last_bit(shards) -> None:
    data = load_dataset("article")
    whole = BM25().fit(data.corpus).search(data.queries, 1000)
    assert same_run(sharded_search(BM25(), data.corpus, data.queries, 1000, shards), whole)


@pytest.mark.parametrize("shards", [2, 5])
def test_bm25_in_shards_on_cranfield_with_other_parameters_and_a_cut(shared_data, shards) -> None:
    data = load_dataset(str(shared_data / "cranfield"))
    for retriever, k in ((BM25(), 10), (BM25(k1=0.9, b=0.4, analyzer="english"), 100)):
        whole = unfitted_copy(retriever).fit(data.corpus).search(data.queries, k)
        assert same_run(sharded_search(retriever, data.corpus, data.queries, k, shards), whole)


def test_shard_score_matrices_side_by_side_are_the_whole_score_matrix() -> None:
    data = load_dataset("article")
    whole = BM25().fit(data.corpus).score(data.queries)
    merged = fit_in_process(BM25(), data.corpus, 3).score(data.queries)
    assert (merged != whole).nnz == 0 and merged.data.tobytes() == whole.data.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=300))
def test_the_collection_average_length_is_numpy_s_mean_bit_for_bit(lengths) -> None:
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    expected = np.diff(offsets).astype(np.float64).mean()
    assert CollectionStatistics(len(lengths), int(offsets[-1]), np.zeros(0)).average_length() == expected


def test_a_shard_index_built_with_the_collection_s_statistics_has_the_whole_index_s_weights() -> None:
    # documents [t0 t1 t1], [t1], [t0 t2]; the shard is the last two, which hold all three terms:
    # N = 3, total length 6, document frequencies 2, 2, 1
    whole = BM25Index.build(np.array([0, 3, 4, 6]), np.array([0, 1, 1, 1, 0, 2]), 3)
    shard = BM25Index.build(np.array([0, 1, 3]), np.array([1, 0, 2]), 3,
                            collection=CollectionStatistics(3, 6, np.array([2, 2, 1])))
    alone = BM25Index.build(np.array([0, 1, 3]), np.array([1, 0, 2]), 3)
    for term in range(3):
        docs, weights = whole.postings(term)
        assert shard.postings(term)[0].tolist() == (docs[docs >= 1] - 1).tolist()
        assert shard.postings(term)[1].tobytes() == weights[docs >= 1].tobytes()
    assert alone.postings(1)[1].tobytes() != shard.postings(1)[1].tobytes()  # its own statistics would differ


def test_shard_bounds_cover_the_corpus_in_order_without_empty_shards() -> None:
    for n_docs in (1, 2, 5, 28, 1001):
        for n_shards in (1, 2, 3, 8, 50):
            bounds = shard_bounds(n_docs, n_shards)
            assert bounds[0][0] == 0 and bounds[-1][1] == n_docs
            assert all(a < b for a, b in bounds) and all(b == c for (_, b), (c, _) in zip(bounds, bounds[1:]))
            sizes = [b - a for a, b in bounds]
            assert max(sizes) - min(sizes) <= 1 and len(bounds) == min(n_docs, n_shards)


def test_shards_of_whole_units_start_at_multiples_of_the_unit_and_only_the_last_is_short() -> None:
    for n_docs in (1, 5, 28, 1001, 4097):
        for unit in (1, 4, 256, 4096):
            for n_shards in (1, 2, 3, 8):
                bounds = shard_bounds(n_docs, n_shards, unit)
                units = -(-n_docs // unit)
                assert bounds[0][0] == 0 and bounds[-1][1] == n_docs and len(bounds) == min(units, n_shards)
                assert all(b == c for (_, b), (c, _) in zip(bounds, bounds[1:]))
                assert all(a % unit == 0 and a < b for a, b in bounds)
                whole_units = [-(-(b - a) // unit) for a, b in bounds]
                assert max(whole_units) - min(whole_units) <= 1
    assert shard_bounds(10, 3, 4) == [(0, 4), (4, 8), (8, 10)]


def test_a_shard_unit_that_is_not_a_positive_int_is_a_clear_error() -> None:
    retriever = BM25()
    retriever.shard_unit = 0
    with pytest.raises(RetbenchError, match="shard_unit must be an int >= 1, got 0. Fix:"):
        bounds_for(retriever, 10, 2)


def test_merging_breaks_ties_across_shards_by_doc_id_and_cuts_at_k() -> None:
    # corpus ids: shard 0 = ["d", "b"], shard 1 = ["c", "a"]; ascending id order a, b, c, d
    tie_rank = np.array([3, 1, 2, 0])
    first = ShardHits(np.array([0, 2, 3]), np.array([1, 0, 0]), np.array([2.0, 1.0, 5.0]))
    second = ShardHits(np.array([0, 2, 2]), np.array([1, 0]), np.array([2.0, 1.0]))
    offsets, docs, scores = merge_hits([first, second], [0, 2], 3, tie_rank)
    assert offsets.tolist() == [0, 3, 4]
    assert docs.tolist() == [3, 1, 2, 0]  # q0: a (2.0) before b (2.0), then c before d (1.0), cut at 3
    assert scores.tolist() == [2.0, 2.0, 1.0, 5.0]


def test_the_copy_sent_to_workers_is_unfitted_and_keeps_parameters_and_label() -> None:
    original = BM25(k1=0.9, analyzer="english").fit(Corpus(["a"], ["some text"]))
    original.label = "mine"
    copy = unfitted_copy(original)
    assert copy.get_params() == original.get_params() and copy.label == "mine"
    assert not hasattr(copy, "index") and not hasattr(copy, "corpus")


def test_only_retrievers_with_the_protocol_are_sharded() -> None:
    assert is_sharded(BM25())
    assert not any(is_sharded(r) for r in (LSA(), RRF(), Weighted()))
    with pytest.raises(RetbenchError, match="does not implement the sharding protocol"):
        sharded_search(LSA(), Corpus(["a", "b"], ["x y", "y z"]), Queries(["q"], ["y"]), 2, 2)


# ----- chunks that run elsewhere --------------------------------------------------------------


class PicklingMapper:
    """Runs every chunk on pickled copies of its data, last chunk first: a cluster without the cluster."""

    def __init__(self, partitions: int = 3):
        self.partitions = partitions
        self.calls = 0

    def map(self, function: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any) -> list[Any]:
        self.calls += 1
        function, shared = pickle.loads(pickle.dumps((function, shared)))
        done = {i: function(shared, pickle.loads(pickle.dumps(item))) for i, item in reversed(list(enumerate(items)))}
        return [pickle.loads(pickle.dumps(done[i])) for i in range(len(items))]


@pytest.mark.parametrize("n_queries", [3, 250, 4099])
def test_resamples_drawn_again_from_recorded_states_are_the_same_bytes(n_queries) -> None:
    differences = np.random.default_rng(n_queries).standard_normal((n_queries, 4))
    here = bootstrap_means(differences, 3000, 7), randomisation_p_values(differences, 5000, 7)
    mapper = PicklingMapper()
    elsewhere = (bootstrap_means(differences, 3000, 7, mapper=mapper),
                 randomisation_p_values(differences, 5000, 7, mapper=mapper))
    assert mapper.calls == 2
    assert all(a.tobytes() == b.tobytes() for a, b in zip(here, elsewhere))


def test_leaderboards_resampled_elsewhere_are_the_same() -> None:
    rng = np.random.default_rng(3)
    import pandas as pd

    per_query = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 900), "query_id": np.tile(np.arange(900), 3),
                              "m": rng.random(2700)})
    from harness.core.statistics import compare_systems

    values = {s: {"m": per_query.loc[per_query.system == s, "m"].to_numpy()} for s in "abc"}
    comparisons = compare_systems(values, [("a", "b"), ("a", "c"), ("b", "c")], ["m"], 2000, 0)
    here = leaderboards(per_query, ["m"], comparisons, 2000, 0)
    elsewhere = leaderboards(per_query, ["m"], comparisons, 2000, 0, mapper=PicklingMapper())
    assert here.to_csv() == elsewhere.to_csv()


def test_evaluation_in_query_partitions_is_the_same_frame(shared_data) -> None:
    data = load_dataset(str(shared_data / "cranfield"))
    run = BM25().fit(data.corpus).search(data.queries, 100)
    metrics = parse_metrics("ndcg@10,map,recall@100,mrr,P_5,bpref,ndcg_exp@10")
    query_ids = data.qrels.queries_with_relevant(1)
    whole = evaluate(run, data.qrels, metrics, query_ids, 1)
    mapper = PicklingMapper(partitions=4)
    parted = evaluate_in_partitions(run, data.qrels, metrics, query_ids, 1, mapper=mapper)
    assert mapper.calls == 1
    assert parted.to_csv() == whole.to_csv()
    assert parted.dtypes.tolist() == whole.dtypes.tolist()


def test_a_large_run_is_evaluated_in_more_partitions_than_workers_with_the_same_frame(shared_data,
                                                                                       monkeypatch) -> None:
    import harness.core.evaluation as evaluation

    data = load_dataset(str(shared_data / "cranfield"))
    run = BM25().fit(data.corpus).search(data.queries, 100)
    metrics = parse_metrics("ndcg@10,map,recall@100")
    query_ids = data.qrels.queries_with_relevant(1)
    monkeypatch.setattr(evaluation, "PARTITION_ENTRIES", 5000)  # 22,500 entries: 5 partitions, not 2

    class Counting(PicklingMapper):
        def map(self, function, items, shared):
            self.sizes = [len(item[2]) for item in items]
            return super().map(function, items, shared)

    mapper = Counting(partitions=2)
    parted = evaluate_in_partitions(run, data.qrels, metrics, query_ids, 1, mapper=mapper)
    assert len(mapper.sizes) == 5 and sum(mapper.sizes) == len(query_ids)
    assert parted.to_csv() == evaluate(run, data.qrels, metrics, query_ids, 1).to_csv()


@pytest.mark.parametrize("doc_ids", [["d1", "d2", "d3"], ["d1", "a\nb", "d3"]])
def test_a_partitions_run_travels_whole_whatever_its_doc_ids_hold(doc_ids: list[str]) -> None:
    from harness.core.evaluation import _PartitionRun

    run = Run(["q1", "q2"], doc_ids, np.array([0, 2, 3]), np.array([2, 0, 1]), np.array([3.0, 2.0, 1.0]))
    back = pickle.loads(pickle.dumps(_PartitionRun.of(run))).run()
    assert back.doc_ids.tolist() == doc_ids  # a separator inside an id: sent as the array instead
    assert [back.items(q) for q in back.query_ids] == [run.items(q) for q in run.query_ids]
    assert back.doc_hashes.tolist() == run.doc_hashes.tolist()


# ----- an engine without a cluster ------------------------------------------------------------


class WholeInProcess(FittedElsewhere):
    """A retriever fitted whole on a pickled copy, as on an engine's worker."""

    def __init__(self, fitted: Any):
        self.fitted = fitted
        self.label = fitted.label

    def search(self, queries: Queries, k: int) -> Any:
        return self.fitted.search(queries, k)

    def score(self, queries: Queries) -> Any:
        return self.fitted.score(queries)


class InProcessPlacement(Placement):
    def __init__(self, record: EngineRecord):
        self.record = record

    def fit(self, retriever: Any, corpus: Corpus) -> Shards:
        self.record.sharded.add(retriever.label)
        return fit_in_process(retriever, corpus, 3)

    def fit_whole(self, retriever: Any, corpus: Corpus) -> FittedElsewhere:
        self.record.whole.add(retriever.label)
        fitted = pickle.loads(pickle.dumps(unfitted_copy(retriever))).fit(corpus)
        adopt_chosen(retriever, chosen(fitted))  # the manifest's parameters: dims=6, chosen by the article
        return WholeInProcess(fitted)

    def fitted_here(self, retriever: Any) -> None:
        self.record.here.add(retriever.label)


class InProcessEngine(Engine):
    """Shards in this process, chunks through :class:`PicklingMapper`."""

    name = "in-process"
    description = "test double"

    def __init__(self) -> None:
        self.origins: list[DatasetOrigin | None] = []

    @contextlib.contextmanager
    def running(self, corpus: Corpus, origin: DatasetOrigin | None) -> Iterator[EngineRun]:
        self.origins.append(origin)
        record = EngineRecord(self.name)
        yield EngineRun(record, InProcessPlacement(record), PicklingMapper())


ARTICLE_METRICS = ["hit@3", "recall@5", "mrr", "ndcg@5"]


def test_an_engine_changes_where_work_runs_and_never_the_results_folder(tmp_path, assert_same_results) -> None:
    engine = InProcessEngine()
    systems = "bm25,lsa,weighted,rrf"
    local = compare(systems, "article", ARTICLE_METRICS)
    elsewhere = compare(systems, "article", ARTICLE_METRICS, run=RunOptions(engine=engine))
    assert_same_results(local.write(tmp_path / "local"), elsewhere.write(tmp_path / "elsewhere"))
    assert engine.origins == [DatasetOrigin("article", None, "test", False)]
    assert elsewhere.engine["sharded"] == ["bm25"] and elsewhere.engine["on_worker"] == ["lsa"]
    assert elsewhere.engine["on_client"] == ["rrf", "weighted"]
    assert local.engine["name"] == "local" and "sharded" not in local.engine


def test_the_engine_is_recorded_in_the_manifest_outside_the_configuration_hash(tmp_path) -> None:
    local = json.loads((compare(["bm25"], "article", ["mrr"]).write(tmp_path / "a") / "manifest.json").read_text())
    other = compare(["bm25"], "article", ["mrr"], run=RunOptions(engine=InProcessEngine())).write(tmp_path / "b")
    placed_run = json.loads((other / "manifest.json").read_text())
    assert local["engine"]["name"] == "local" and placed_run["engine"]["name"] == "in-process"
    assert "not part of the configuration hash" in placed_run["engine"]["configuration_hash"]
    assert local["hashes"] == placed_run["hashes"]


def test_a_dataset_in_memory_has_no_origin_and_a_folder_an_absolute_one(shared_data, monkeypatch) -> None:
    data = load_dataset("article")
    engine = InProcessEngine()
    compare(["bm25"], Dataset("mine", data.corpus, data.queries, data.qrels, source="<memory>"), ["mrr"],
            run=RunOptions(engine=engine))
    monkeypatch.chdir(shared_data)
    compare(["bm25"], "cranfield", ["mrr"], run=RunOptions(engine=engine))
    assert engine.origins == [None, DatasetOrigin(str((shared_data / "cranfield").resolve()), None, "test", False)]


def test_a_retriever_fitted_in_shards_searches_them_and_a_fit_here_lets_them_go() -> None:
    data = load_dataset("article")
    retriever = BM25()
    fit_retriever(retriever, data.corpus, RunContext(placement=InProcessPlacement(EngineRecord("test"))))
    assert not hasattr(retriever, "index")  # the index is in the shards
    assert same_run(search_retriever(retriever, data.queries, 10), BM25().fit(data.corpus).search(data.queries, 10))
    retriever.fit(data.corpus)
    assert hasattr(retriever, "index")


# ----- choosing an engine ---------------------------------------------------------------------


def test_engines_are_declared_once_and_the_cli_offers_them(runner) -> None:
    assert list(ENGINES) == ["local", "dask"]
    result = runner.invoke(main, ["compare", "--help"])
    assert "--engine [local|dask]" in result.output and "--scheduler" in result.output


def test_an_unknown_engine_and_dask_options_without_dask_are_errors(runner, tmp_path) -> None:
    with pytest.raises(RetbenchError, match="unknown engine 'spark'. Valid: local, dask"):
        compare(["bm25"], "article", ["mrr"], run=RunOptions(engine="spark"))
    result = runner.invoke(main, ["compare", "--workers", "2", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "error: --workers is an option of the dask engine, and the engine is 'local'. Fix: add --engine dask" \
        in result.stderr
    with pytest.raises(RetbenchError, match="`workers` is an option of the dask engine.*Fix: add `engine=dask`"):
        resolve_engine("local", workers=2)  # the library names its parameters
    assert not any(tmp_path.iterdir())  # nothing written
    with pytest.raises(RetbenchError, match="an engine object carries its own"):
        resolve_engine(InProcessEngine(), workers=2)


@pytest.fixture
def without_dask(monkeypatch) -> None:
    """As on an install without retbench[dask]: the packages are unfindable and unimportable."""
    for name in ("dask", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)


def test_without_the_extra_the_dask_engine_says_how_to_install_it(runner, without_dask, tmp_path) -> None:
    result = runner.invoke(main, ["compare", "--engine", "dask", "--workers", "2", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.count("error:") == 1
    assert ("the dask engine (--engine dask) needs dask.distributed, which is not installed. Fix: pip install "
            "'retbench[dask]'" in result.stderr)
    assert not any(tmp_path.iterdir())


class Plain(Retriever):
    """A retriever without the protocol: fitted here even while an engine places others."""

    name = "plain-test"

    def search(self, queries: Queries, k: int) -> dict[str, list[tuple[str, float]]]:
        return {q: [(self.corpus.ids[0], 1.0)] for q in queries.ids}


def test_a_plugin_without_the_protocol_runs_on_the_client_with_a_note() -> None:
    data = load_dataset("article")
    result = compare([Plain(), RRF(BM25(), Plain())], data, ["mrr"], run=RunOptions(engine=InProcessEngine()))
    assert result.engine["on_client"] == ["plain-test", "rrf(bm25,plain-test)"]
    assert result.engine["sharded"] == ["bm25"]


def test_qrels_of_a_partition_keep_the_order_of_the_whole() -> None:
    from harness.core.evaluation import _qrels_of

    qrels = Qrels({"q2": {"b": 1, "a": 2}, "q1": {"c": 0}, "q3": {"d": 1}})
    part = _qrels_of(qrels, ["q3", "q2"])
    assert part.to_dict() == {"q2": {"b": 1, "a": 2}, "q3": {"d": 1}}


def test_a_worker_reading_other_documents_than_the_client_stops_with_a_fix() -> None:
    from corpora.model import fingerprints_digest
    from harness.engines.shard_tasks import FolderShard, forget_loaded

    corpus = load_dataset("article").corpus
    origin = DatasetOrigin("article", None, "test", False)
    try:
        assert FolderShard(origin, 3, 9, fingerprints_digest(corpus.fingerprints()[3:9])).load().ids == corpus.ids[3:9]
        with pytest.raises(RetbenchError, match=r"corpus article: documents 3\.\.8 as a worker read them differ from "
                                                r"the client's .* Fix: give every worker the same copy"):
            FolderShard(origin, 3, 9, fingerprints_digest(corpus.fingerprints()[3:10])).load()
    finally:
        forget_loaded()


def test_a_worker_reads_its_shard_of_a_beir_folder_from_the_lines_of_corpus_jsonl(tmp_path) -> None:
    from corpora.model import fingerprints_digest
    from harness.engines.shard_tasks import FolderShard, forget_loaded

    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    lines = [json.dumps({"_id": f"d{n}", "title": "T" if n % 2 else "", "text": f"text {n}"}) for n in range(7)]
    (folder / "corpus.jsonl").write_text("\n".join(lines[:3]) + "\n\n  \n" + "\n".join(lines[3:]) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": "text"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\td4\t1\n")
    corpus = load_dataset(str(folder)).corpus
    origin = DatasetOrigin(str(folder), None, "test", False)
    for start, stop in ((0, 3), (2, 5), (5, 7)):  # blank lines between records 2 and 3 are not documents
        shard = FolderShard(origin, start, stop, fingerprints_digest(corpus.fingerprints()[start:stop])).load()
        assert (shard.ids, shard.texts, shard.titles) == (corpus.ids[start:stop], corpus.texts[start:stop],
                                                          corpus.titles[start:stop])
    forget_loaded()


def test_the_scale_out_guide_names_the_protocol_and_the_options_as_they_are(runner) -> None:
    import re
    from pathlib import Path

    from retrievers.sharding import ShardedRetriever

    repo = Path(__file__).resolve().parents[1]
    guide = (repo / "docs" / "scale-out.md").read_text(encoding="utf-8")
    block = re.search(r"### Your own retriever.*?```python\n(.*?)```", guide, re.S).group(1)
    protocol = [name for name, value in vars(ShardedRetriever).items() if callable(value) and not name.startswith("_")]
    optional = ["score_shard", "prepare_queries"]
    assert re.findall(r"def (\w+)\(", block) == [*protocol, *optional]
    assert all(hasattr(BM25, name) for name in (*protocol, "score_shard"))
    assert all(hasattr(Dense, name) for name in (*protocol, *optional, "shard_unit"))
    assert re.findall(r"^(\w+): int = 1 ", block, re.M) == ["shard_unit"]
    assert getattr(BM25(), "shard_unit", 1) == 1  # the default the engines take
    help_text = runner.invoke(main, ["compare", "--help"]).output
    for option in sorted(set(re.findall(r"bench compare [^\n`]*", guide))):
        for flag in re.findall(r"--[a-z-]+", option):
            assert flag in help_text, flag
    assert "(docs/scale-out.md)" in (repo / "README.md").read_text(encoding="utf-8")


class CutBM25(BM25):
    """A subclass whose own search the shards would skip: it must run on the client."""

    name = "cut-bm25-test"

    def search(self, queries: Queries, k: int):
        return super().search(queries, 1)


class PlainBM25(BM25):
    name = "plain-bm25-test"


def test_a_subclass_that_overrides_search_runs_on_the_client_and_one_that_does_not_is_sharded(tmp_path) -> None:
    assert is_sharded(PlainBM25()) and not is_sharded(CutBM25())
    data = load_dataset("article")
    here = compare([CutBM25(), PlainBM25()], data, ["mrr", "recall@5"])
    placed_run = compare([CutBM25(), PlainBM25()], data, ["mrr", "recall@5"], run=RunOptions(engine=InProcessEngine()))
    assert placed_run.engine["on_client"] == ["cut-bm25-test"] and placed_run.engine["sharded"] == ["plain-bm25-test"]
    assert here.summary.to_csv() == placed_run.summary.to_csv()
    assert placed_run.systems[0].run.lengths().max() == 1  # its own search ran


def test_importing_the_engines_imports_no_dask() -> None:
    import subprocess

    code = "import sys, harness.engines, harness.cli.compare\nprint(sorted({'dask', 'distributed'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_texts_are_needed_where_the_harness_runs_only_for_a_retriever_fitted_there() -> None:
    from harness.engines.base import needs_texts_here

    assert not needs_texts_here([BM25(), RRF(BM25(), BM25(k1=0.5))])  # sharded, and a fusion of sharded ones
    assert not needs_texts_here([BM25(), LSA(), RRF(BM25(), LSA())])  # lsa is fitted whole on a worker
    assert needs_texts_here([BM25(), UndeclaredLSA()])
    assert needs_texts_here([RRF(BM25(), Plain())])  # a fusion's child fitted here reads them


class UndeclaredLSA(LSA):
    """A subclass that does not declare whole_on_worker itself: fitted where the harness runs."""

    name = "undeclared-lsa-test"


class DeclaredLSA(LSA):
    name = "declared-lsa-test"
    whole_on_worker = True


class SureLSA(LSA):
    """Declares whole_on_worker but has a confidence of its own, which the harness asks of the object here."""

    name = "sure-lsa-test"
    whole_on_worker = True

    def confidence(self, queries: Queries) -> np.ndarray:
        return np.ones(len(queries))


def test_a_retriever_is_fitted_whole_elsewhere_only_when_its_own_class_declares_it() -> None:
    assert runs_whole_elsewhere(LSA()) and runs_whole_elsewhere(DeclaredLSA())
    assert not any(runs_whole_elsewhere(r) for r in (UndeclaredLSA(), SureLSA(), BM25(), RRF(), Weighted(), Plain()))
    data = load_dataset("article")
    result = compare([UndeclaredLSA(), DeclaredLSA(), SureLSA()], data, ["mrr"],
                     run=RunOptions(engine=InProcessEngine()))
    assert result.engine["on_worker"] == ["declared-lsa-test"]
    assert result.engine["on_client"] == ["sure-lsa-test", "undeclared-lsa-test"]


class ShortReduceBM25(BM25):
    """A sharded retriever whose reduce_statistics drops the last shard's value."""

    def reduce_statistics(self, statistics):  # type: ignore[no-untyped-def]
        return list(super().reduce_statistics(statistics))[:-1]


def test_a_reduce_that_gives_a_value_short_is_an_error_wherever_the_shards_run():
    data = load_dataset("article")
    with pytest.raises(RetbenchError, match=r"reduce_statistics gave 2 value\(s\) for 3 shard\(s\)"):
        fit_in_process(ShortReduceBM25(), data.corpus, 3)
