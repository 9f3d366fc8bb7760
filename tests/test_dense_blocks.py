"""`dense` in fixed blocks and in shards of whole blocks, without a real model: the same bits either way.

Random unit vectors stand in for the encoder's output where only the products matter, and a fake
encoder whose vectors depend on the batch they are encoded in (as a real model's last bits do)
where the encoding matters; tests/test_dense.py runs the real model where the extra is installed.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from corpora import load_dataset
from retrievers import dense, dense_blocks
from retrievers.dense import Dense
from retrievers.dense_blocks import block_scores, block_search, encode_in_blocks
from retrievers.ranking import doc_id_order
from retrievers.sharding import fit_in_process, is_sharded, merge_hits, shard_bounds, sharded_search


def unit_rows(rng: np.random.Generator, n: int, dimension: int = 48) -> np.ndarray:
    rows = rng.standard_normal((n, dimension)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def batch_sensitive(texts: list[str]) -> np.ndarray:
    """Hashed bags of words, nudged by the longest text of the batch: like a real encoder, a text's
    vector depends on the texts it is encoded with."""
    out = np.zeros((len(texts), 32), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            out[row, zlib.crc32(word.encode()) % 32] += 1.0
    out += np.float32(1e-3) * max(len(t) for t in texts)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


class BatchSensitiveEncoder:
    max_seq_length = 128

    def get_embedding_dimension(self) -> int:
        return 32

    def encode(self, texts: list[str], batch_size: int, normalize_embeddings: bool, convert_to_numpy: bool,
               show_progress_bar: bool) -> np.ndarray:
        return np.vstack([batch_sensitive(texts[i:i + batch_size]) for i in range(0, len(texts), batch_size)])


class SmallBlocks(Dense):
    """dense in blocks of 4 documents, so that the 28 documents of the bundled corpus make 7 blocks."""

    block_docs = 4
    query_rows = 3


@pytest.fixture
def fake(monkeypatch, tmp_path) -> None:
    encoder = BatchSensitiveEncoder()
    monkeypatch.setattr(dense, "load_encoder", lambda model, device: encoder)
    monkeypatch.setattr(dense, "missing_dependency", lambda model=dense.DEFAULT_MODEL: None)


@pytest.mark.parametrize("n_shards", [2, 3, 5])
def test_scores_of_whole_block_shards_side_by_side_are_the_unsplit_scores(n_shards) -> None:
    rng = np.random.default_rng(7)
    queries, docs = unit_rows(rng, 70), unit_rows(rng, 1000)
    whole = block_scores(queries, docs, 64, 16)
    shards = [block_scores(queries, docs[a:b], 64, 16) for a, b in shard_bounds(len(docs), n_shards, 64)]
    assert_array_equal(np.hstack(shards), whole)
    assert whole.dtype == np.float64


@pytest.mark.parametrize("n_shards", [1, 2, 4])
def test_the_top_k_of_whole_block_shards_merged_is_the_unsplit_top_k(n_shards, monkeypatch) -> None:
    rng = np.random.default_rng(8)
    queries, docs = unit_rows(rng, 40), unit_rows(rng, 900)
    docs[5] = docs[700]  # a tie across shards: broken by doc id, whichever shard holds it
    ids = [f"d{i:04d}" for i in rng.permutation(len(docs))]
    tie_rank = doc_id_order(ids)
    whole = block_search(queries, docs, tie_rank, 25, -np.inf, 64, 16)
    monkeypatch.setattr(dense_blocks, "RANK_CELLS", 16 * 64 * 3)  # rank in groups of 3 blocks, then merge
    grouped = block_search(queries, docs, tie_rank, 25, -np.inf, 64, 16)
    bounds = shard_bounds(len(docs), n_shards, 64)
    parts = [block_search(queries, docs[a:b], doc_id_order(ids[a:b]), 25, -np.inf, 64, 16) for a, b in bounds]
    merged = merge_hits(parts, [a for a, _ in bounds], 25, tie_rank)
    scores = block_scores(queries, docs, 64, 16)
    for offsets, found, values in ((grouped.offsets, grouped.docs, grouped.scores), merged):
        assert_array_equal(offsets, whole.offsets)
        assert_array_equal(found, whole.docs)
        assert_array_equal(values, whole.scores)
    best = whole.docs[:25]
    assert_array_equal(whole.scores[:25], scores[0, best])  # the scores are block_scores' cells
    assert np.all(np.diff(whole.scores[:25]) <= 0)


def test_a_text_s_vector_depends_on_its_block_only() -> None:
    texts = [" ".join(["word"] * (1 + (7 * i) % 13) + [f"t{i}"]) for i in range(50)]
    whole = encode_in_blocks(batch_sensitive, texts, 32, 8, 4)
    for a, b in shard_bounds(len(texts), 3, 8):
        assert_array_equal(encode_in_blocks(batch_sensitive, texts[a:b], 32, 8, 4), whole[a:b])
    # the fake has teeth: a cut inside a block changes vectors
    assert not np.array_equal(encode_in_blocks(batch_sensitive, texts[3:19], 32, 8, 4), whole[3:19])


@pytest.mark.parametrize("n_shards", [1, 2, 3, 7])
def test_dense_in_shards_of_whole_blocks_is_the_whole_corpus_run_to_the_last_bit(fake, n_shards) -> None:
    data = load_dataset("article")
    retriever = SmallBlocks(model="fake-model", cache=False)
    assert is_sharded(retriever)
    whole = SmallBlocks(model="fake-model", cache=False).fit(data.corpus)
    for k in (1, 5, 1000):
        run = whole.search(data.queries, k)
        sharded = sharded_search(retriever, data.corpus, data.queries, k, n_shards)
        assert sharded.query_ids == run.query_ids and list(sharded.doc_ids) == list(run.doc_ids)
        assert_array_equal(sharded.offsets, run.offsets)
        assert_array_equal(sharded.doc_index, run.doc_index)
        assert_array_equal(sharded.scores, run.scores)
    in_shards = fit_in_process(retriever, data.corpus, n_shards)
    assert [a % 4 for a, _ in in_shards.bounds] == [0] * len(in_shards.bounds)
    scores = in_shards.score(data.queries)
    assert isinstance(scores, np.ndarray)  # a cosine of 0 is a score: the matrix is not made sparse
    assert_array_equal(scores, whole.score(data.queries))
    assert_array_equal(np.vstack([index.vectors for index in in_shards.indexes]), whole._doc_vectors)


def test_the_shard_s_queries_are_vectors_encoded_once_on_the_client(fake) -> None:
    data = load_dataset("article")
    retriever = SmallBlocks(model="fake-model", cache=False)
    in_shards = fit_in_process(retriever, data.corpus, 2)
    prepared = in_shards.prepared(data.queries)
    assert prepared.dtype == np.float32 and prepared.shape == (len(data.queries), 32)
    assert "_encoder" not in vars(in_shards.retriever)  # the copy pickled to workers carries no model


def test_the_embedding_cache_key_names_the_block_size(fake) -> None:
    data = load_dataset("article")
    key = Dense(model="fake-model", cache=False).fit(data.corpus).cache_key()
    assert key["block_docs"] == Dense.block_docs and key["format"] == dense.CACHE_FORMAT == 3
    assert SmallBlocks(model="fake-model", cache=False).fit(data.corpus).cache_key()["block_docs"] == 4
