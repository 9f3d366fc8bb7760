"""`bench compare --engine dask` on a LocalCluster of 2 worker processes: the same bytes as one machine.

Every results file equals the local engine's byte for byte (manifest times and engine record aside)
on the bundled corpus, Cranfield and a 50,000-document synthetic corpus, for bm25 (in shards), lsa
(whole on one worker), rrf and weighted, and for dense (encoded and searched on the workers, in shards
of whole blocks) where the ``dense`` extra is installed; a worker killed in the middle of the BM25
fit, or of the lsa fit, changes nothing. Skipped without the ``dask`` extra
(tests/test_sharding.py covers the same seams in the plain install).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed: pip install 'retbench[dask]'")

import cloudpickle  # noqa: E402  (comes with dask)

from corpora import Dataset, RetbenchError, load_dataset  # noqa: E402
from corpora.outline import CorpusOutline  # noqa: E402
from harness import compare  # noqa: E402
from harness.cli import main  # noqa: E402
from tests.conftest import without_cost  # noqa: E402
from harness.engines import DaskEngine  # noqa: E402
from harness.core.statistics import bootstrap_means, randomisation_p_values  # noqa: E402
from retrievers import BM25, LSA, RRF, Weighted, search_retriever  # noqa: E402
from retrievers.dense import Dense  # noqa: E402  (imports no torch until it is fitted)
from harness.core.options import Readings, RunOptions, Statistics

REPO = Path(__file__).resolve().parents[1]
SYSTEMS = "bm25,lsa,weighted,rrf"
ARTICLE_METRICS = ["hit@3", "recall@5", "mrr", "ndcg@5"]
CRANFIELD_METRICS = ["ndcg@10", "map", "recall@100", "mrr", "P_5", "bpref", "ndcg_exp@10"]

# the fault test's worker plugin is defined here: workers must unpickle it by value, not by module name
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def local_cluster() -> distributed.LocalCluster:
    return distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
                                    silence_logs=40)


@pytest.fixture(scope="module")
def client():
    with local_cluster() as cluster, distributed.Client(cluster) as connected:
        yield connected


def both(tmp_path: Path, client, systems, dataset, metrics, **options) -> tuple[Path, Path, dict]:
    """The results folders of the local and the Dask engine, and the Dask run's engine record."""
    here = compare(systems, dataset, metrics, **options)
    there = compare(systems, dataset, metrics, run=RunOptions(engine=DaskEngine(client=client)), **options)
    return here.write(tmp_path / "local"), there.write(tmp_path / "dask"), there.engine


def test_bundled_corpus_read_by_the_workers_gives_the_same_bytes(tmp_path, client, assert_same_results) -> None:
    local, dask, engine = both(tmp_path, client, SYSTEMS, "article", ARTICLE_METRICS)
    assert_same_results(local, dask)
    assert engine["name"] == "dask" and engine["workers"] == 2 and engine["shards"] == 2
    assert engine["sharded"] == ["bm25"] and engine["on_worker"] == ["lsa"]
    assert engine["on_client"] == ["rrf", "weighted"]
    assert engine["shards_used"] == {"bm25": 2}
    manifest = json.loads((dask / "manifest.json").read_text())
    assert manifest["engine"] == engine


def test_the_client_keeps_a_beir_corpus_as_its_ids_and_reads_the_diagnosis_texts_on_the_workers(client) -> None:
    seen = []
    systems, strict = "bm25,bm25(k1=0.5,b=0.3)", Readings(fail_rank=1)  # more failures, more texts read
    local = compare(systems, "article", ARTICLE_METRICS, readings=strict)
    there = compare(systems, "article", ARTICLE_METRICS, readings=strict,
                    run=RunOptions(engine=DaskEngine(client=client), on_loaded=seen.append))
    (data,) = seen
    assert isinstance(data.corpus, CorpusOutline)  # ids and fingerprints: no text was kept
    with pytest.raises(RetbenchError, match="texts are not held in this process"):
        data.corpus.texts[0]
    assert data.corpus.content_hash() == load_dataset("article").corpus.content_hash()
    # the diagnosis read its texts from the workers, and found what the local run found
    assert [(f.system, f.query_id, f.category, f.shared_words) for f in there.failures] == \
        [(f.system, f.query_id, f.category, f.shared_words) for f in local.failures]
    assert any(any(f.shared_words.values()) for f in local.failures)  # texts were read: terms shared with relevant documents


def test_lsa_is_fitted_on_a_worker_and_the_client_keeps_the_corpus_as_its_ids(tmp_path, client,
                                                                            assert_same_results) -> None:
    seen = []
    systems = "lsa,rrf(bm25,lsa),weighted(bm25,lsa,alpha=0.3)"
    local = compare(systems, "article", ARTICLE_METRICS).write(tmp_path / "local")
    there = compare(systems, "article", ARTICLE_METRICS,
                    run=RunOptions(engine=DaskEngine(client=client), on_loaded=seen.append))
    assert isinstance(seen[0].corpus, CorpusOutline)  # no text held on the client: lsa read them on a worker
    # the same bytes: the manifest's parameters too (dims=6, chosen on the worker from the article's own)
    assert_same_results(local, there.write(tmp_path / "dask"))
    assert there.engine["on_worker"] == ["lsa"] and there.engine["sharded"] == ["bm25"]


class Undeclared(LSA):
    """lsa's subclass without its own whole_on_worker: fitted on the client, which then holds the texts."""

    name = "undeclared-lsa-test"


def test_a_retriever_fitted_on_the_client_keeps_the_texts_there(client) -> None:
    seen = []
    result = compare([BM25(), RRF(BM25(), Undeclared())], "article", ["mrr"],
                     run=RunOptions(engine=DaskEngine(client=client), on_loaded=seen.append))
    assert not isinstance(seen[0].corpus, CorpusOutline)  # the subclass reads the texts on the client
    assert result.engine["on_client"] == ["rrf(bm25,undeclared-lsa-test)", "undeclared-lsa-test"]


def test_an_error_in_a_fit_on_a_worker_is_the_local_error(client) -> None:
    with pytest.raises(RetbenchError) as here:
        compare("lsa(dims=500)", "article", ["mrr"])
    with pytest.raises(RetbenchError) as there:
        compare("lsa(dims=500)", "article", ["mrr"], run=RunOptions(engine=DaskEngine(client=client)))
    assert "needs more dimensions than the corpus has" in str(here.value)
    assert str(there.value) == str(here.value)


def test_a_dataset_in_memory_ships_its_shards_and_gives_the_same_bytes(tmp_path, client, assert_same_results) -> None:
    data = load_dataset("article")
    mine = Dataset("mine", data.corpus, data.queries, data.qrels, source="<memory>")
    local, dask, _ = both(tmp_path, client, SYSTEMS, mine, ARTICLE_METRICS)
    assert_same_results(local, dask)


def test_cranfield_gives_the_same_bytes(tmp_path, client, shared_data, assert_same_results) -> None:
    local, dask, _ = both(tmp_path, client, SYSTEMS, str(shared_data / "cranfield"), CRANFIELD_METRICS)
    assert_same_results(local, dask)


@pytest.fixture(scope="module")
def synthetic_50k(tmp_path_factory) -> Path:
    """A BEIR folder of 50,000 synthetic documents (benchmarks/synthetic.py), 100 queries."""
    spec = importlib.util.spec_from_file_location("retbench_synthetic", REPO / "benchmarks" / "synthetic.py")
    synthetic = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = synthetic  # its dataclass looks its module up
    spec.loader.exec_module(synthetic)
    data = synthetic.make(50_000, n_queries=100, seed=0, vocabulary=1 << 16, mean_length=20.0)
    return synthetic.write_beir(data, tmp_path_factory.mktemp("synthetic") / "zipf-50k")


@pytest.mark.slow
def test_fifty_thousand_documents_give_the_same_bytes(tmp_path, client, synthetic_50k, assert_same_results) -> None:
    # the article's 6 dimensions, given: the 100 chosen for 50,000 documents cost ~30 s an LSA fit here,
    # and each of lsa, weighted and rrf fits its own, twice; bytes are compared, not settings
    systems = "bm25,lsa(dims=6),weighted(bm25,lsa(dims=6)),rrf(bm25,lsa(dims=6))"
    local, dask, _ = both(tmp_path, client, systems, str(synthetic_50k), ["ndcg@10", "recall@100", "mrr"],
                          statistics=Statistics(bootstrap_samples=1000))
    assert_same_results(local, dask)


def test_statistics_resampled_on_the_workers_are_the_same_bytes(client) -> None:
    differences = np.random.default_rng(0).standard_normal((3001, 3))  # several chunks of resamples
    here = bootstrap_means(differences, 2000, 5), randomisation_p_values(differences, 4000, 5)
    data = load_dataset("article")
    with DaskEngine(client=client).running(data.corpus, None):
        there = bootstrap_means(differences, 2000, 5), randomisation_p_values(differences, 4000, 5)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(here, there))


def test_the_cli_joins_a_running_scheduler(tmp_path, runner, client, assert_same_results) -> None:
    address = client.scheduler.address
    options = ["compare", "--systems", "bm25,rrf", "--metrics", "mrr,ndcg@5", "--no-cache", "-q"]
    there = runner.invoke(main, [*options, "--engine", "dask", "--scheduler", address, "--out", str(tmp_path / "d")])
    assert there.exit_code == 0, there.output
    here = runner.invoke(main, [*options, "--out", str(tmp_path / "l")])
    (dask,), (local,) = list((tmp_path / "d").iterdir()), list((tmp_path / "l").iterdir())
    assert_same_results(local, dask)
    assert json.loads((dask / "manifest.json").read_text())["engine"]["scheduler"] == address
    def report(output: str) -> list[str]:  # the report, but the lines naming the results folder and the times
        return [line for line in without_cost(output).splitlines() if not line.startswith("results:")]

    assert report(here.output) == report(there.output)


def test_a_retriever_fitted_on_the_cluster_cannot_search_after_the_comparison(client) -> None:
    data = load_dataset("article")
    retriever = BM25()
    compare([retriever], data, ["mrr"], run=RunOptions(engine=DaskEngine(client=client)))
    with pytest.raises(RetbenchError, match="was fitted on a Dask engine whose comparison has ended. Fix: fit it"):
        search_retriever(retriever, data.queries, 10)  # the harness's call: to the shards, which are gone
    with pytest.raises(RetbenchError, match="was fitted in shards on an engine, so its search runs there. Fix:"):
        retriever.search(data.queries, 10)  # its own search: it holds no index here
    assert retriever.fit(data.corpus).search(data.queries, 10).query_ids == data.queries.ids


class KillFirstTask(distributed.WorkerPlugin):
    """Kills its worker process (SIGKILL) when a task whose key holds ``part`` starts on it, once per
    marker file."""

    def __init__(self, marker: str, part: str):
        self.marker = marker
        self.part = part

    def transition(self, key, start, finish, **kwargs) -> None:
        if finish == "executing" and self.part in str(key):
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("part", ["index-shard", "fit-whole"])
def test_a_worker_killed_in_the_middle_of_a_fit_changes_nothing(tmp_path, assert_same_results, part) -> None:
    marker = tmp_path / "killed"
    local = compare("bm25,rrf", "article", ARTICLE_METRICS).write(tmp_path / "local")
    with local_cluster() as cluster, distributed.Client(cluster) as fresh:
        before = set(fresh.run(os.getpid).values())
        fresh.register_plugin(KillFirstTask(str(marker), part), name="kill-first-task")
        # the shards' tokens (or lsa's fit) of the killed worker are lost with it: Dask runs the tasks again
        # elsewhere (rrf is bm25 and lsa)
        result = compare("bm25,rrf", "article", ARTICLE_METRICS, run=RunOptions(engine=DaskEngine(client=fresh)))
        fresh.wait_for_workers(2, timeout=60)
        after = set(fresh.run(os.getpid).values())
    assert marker.exists()
    assert len(before - after) == 1  # one of the two worker processes died and was replaced
    assert_same_results(local, result.write(tmp_path / "dask"))


class SmallBlocksDense(Dense):
    """dense in blocks small enough that a small corpus makes several shards (the default's 4096
    documents make one shard of the bundled corpus and of Cranfield); pickled to the workers by value."""

    block_docs = 4


def encoders_loaded() -> int:
    """On a worker: the models its process has loaded."""
    from retrievers import dense

    return len(dense._ENCODERS)


def dense_systems(block_docs: int) -> list:
    small = type("SmallBlocksDense", (SmallBlocksDense,), {"block_docs": block_docs})
    return [BM25(), small(), RRF(BM25(), small()), Weighted(BM25(), small(), alpha=0.3)]


def test_dense_is_encoded_and_searched_on_the_workers_with_the_same_bytes(tmp_path, client,
                                                                           assert_same_results) -> None:
    pytest.importorskip("sentence_transformers", reason="the dense extra is not installed")
    local, dask, engine = both(tmp_path, client, "bm25,dense,rrf(bm25,dense),weighted(bm25,dense,alpha=0.3)",
                               "article", ARTICLE_METRICS)
    assert_same_results(local, dask)
    assert engine["sharded"] == ["bm25", "dense"]
    assert engine["on_client"] == ["rrf(bm25,dense)", "weighted(bm25,dense,alpha=0.3)"]
    # 28 documents are one block of dense's 4,096: one shard, whatever the workers; the record says so
    assert engine["shards"] == 2 and engine["shards_used"] == {"bm25": 2, "dense": 1}


def test_dense_in_shards_of_whole_blocks_on_two_workers_gives_the_same_bytes(tmp_path, client,
                                                                              assert_same_results) -> None:
    pytest.importorskip("sentence_transformers", reason="the dense extra is not installed")
    local = compare(dense_systems(4), "article", ARTICLE_METRICS).write(tmp_path / "local")
    there = compare(dense_systems(4), "article", ARTICLE_METRICS, run=RunOptions(engine=DaskEngine(client=client)))
    assert_same_results(local, there.write(tmp_path / "dask"))
    assert there.engine["sharded"] == ["bm25", "dense"] and there.engine["shards_used"] == {"bm25": 2, "dense": 2}
    # the model is loaded once per worker process, whatever the number of tasks it ran there
    assert max(client.run(encoders_loaded).values()) == 1


@pytest.mark.slow
def test_dense_on_cranfield_in_shards_of_whole_blocks_gives_the_same_bytes(tmp_path, client, shared_data,
                                                                           assert_same_results) -> None:
    pytest.importorskip("sentence_transformers", reason="the dense extra is not installed")
    cranfield = str(shared_data / "cranfield")
    # 1,400 documents: 6 blocks of 256, 2 shards of 3 blocks; bm25, dense, rrf(bm25,dense)
    # no latency rounds: systems on the workers have none, and the cost files are not compared
    local = compare(dense_systems(256)[:3], cranfield, CRANFIELD_METRICS,
                    run=RunOptions(latency_queries=0)).write(tmp_path / "local")
    there = compare(dense_systems(256)[:3], cranfield, CRANFIELD_METRICS,
                    run=RunOptions(engine=DaskEngine(client=client)))
    assert_same_results(local, there.write(tmp_path / "dask"))
    assert there.engine["sharded"] == ["bm25", "dense"] and there.engine["on_client"] == ["rrf(bm25,dense)"]


def test_an_engine_named_by_a_string_starts_a_local_cluster_and_stops_it(tmp_path, assert_same_results) -> None:
    import gc

    def running() -> set[int]:
        gc.collect()
        return {id(c) for c in gc.get_objects() if isinstance(c, distributed.LocalCluster) and c.status.name == "running"}

    already = running()  # the module's cluster, when another test started it
    local = compare(["bm25"], "article", ["mrr"]).write(tmp_path / "local")
    with DaskEngine(workers=2) as engine:  # a scheduler's address or workers: the engine object's (as bench compare does)
        result = compare(["bm25"], "article", ["mrr"], run=RunOptions(engine=engine))
    assert result.engine["scheduler"] == "a local cluster of worker processes started for this run"
    assert result.engine["workers"] == 2
    assert_same_results(local, result.write(tmp_path / "dask"))
    assert running() <= already
