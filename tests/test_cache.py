"""The index cache: a hit equals a fresh fit; a corrupt, truncated or foreign entry is rebuilt."""

from __future__ import annotations

import pickle

from pathlib import Path

import numpy as np
import pytest

from corpora import Corpus, Queries
from retrievers.bm25 import BM25
from retrievers.cache import (
    IndexCache,
    corpus_digest,
    entry_key,
    fitted_state,
    read_entry,
    write_entry,
)
from retrievers.base import fit_retriever
from retrievers.context import RunContext
from retrievers.strings import SortedStrings, pack_strings, unpack_strings

CORPUS = Corpus(["d1", "d2", "d3", "d4"], ["red apple pie", "green apple", "blue sky", "red sky at night"])
OTHER = Corpus(["d1", "d2"], ["totally different", "documents here"])
QUERIES = Queries(["q1", "q2"], ["red apple", "sky"])


def _fit(cache: IndexCache | None, corpus: Corpus = CORPUS) -> BM25:
    return fit_retriever(BM25(), corpus, RunContext(cache=cache))  # type: ignore[return-value]


def _fit_one(retriever: BM25, corpus: Corpus, cache: IndexCache) -> None:
    fit_retriever(retriever, corpus, RunContext(cache=cache))


def _entries(root: Path) -> list[Path]:
    return sorted((root / "indexes").glob("*")) if (root / "indexes").is_dir() else []


def test_without_an_active_cache_nothing_is_written(tmp_path):
    calls = []
    state = fitted_state(None, "x", {}, CORPUS, lambda: calls.append(1) or {"a": np.arange(3)}, lambda s: True)
    assert calls == [1] and state["a"].tolist() == [0, 1, 2]
    assert _entries(tmp_path) == []


def test_second_fit_loads_what_the_first_wrote(tmp_path):
    first = IndexCache(tmp_path)
    fresh = _fit(first)
    assert first.events == [("miss", "bm25")]
    assert [p.suffix for p in _entries(tmp_path)] == [".idx"]  # one entry, no temporary left behind
    second = IndexCache(tmp_path)
    cached = _fit(second)
    assert second.events == [("hit", "bm25")]
    np.testing.assert_array_equal(cached.index.indptr, fresh.index.indptr)
    for name in ("block_starts", "docs", "tfs", "idf", "length_class", "class_norm"):
        got, expected = getattr(cached.index, name), getattr(fresh.index, name)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    assert cached.search(QUERIES, 3).to_mapping() == _fit(None).search(QUERIES, 3).to_mapping()


def test_memory_only_cache_shares_within_the_process_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RETBENCH_CACHE_DIR", str(tmp_path))
    cache = IndexCache(None)
    a, b = _fit(cache), _fit(cache)
    assert cache.events == [("miss", "bm25"), ("memory", "bm25")]
    assert a.index.tfs is b.index.tfs
    assert list(tmp_path.iterdir()) == []


def test_parameters_and_corpus_are_part_of_the_key(tmp_path):
    cache = IndexCache(tmp_path)
    for retriever, corpus in ((BM25(), CORPUS), (BM25(k1=0.9), CORPUS), (BM25(analyzer="english"), CORPUS),
                              (BM25(), OTHER)):
        _fit_one(retriever, corpus, cache)
    assert [e for e, _ in cache.events] == ["miss"] * 4
    assert len(_entries(tmp_path)) == 4


def _only_entry(root: Path) -> Path:
    (entry,) = _entries(root)
    return entry


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "empty"])
def test_a_damaged_entry_is_ignored_and_rebuilt(tmp_path, capsys, damage):
    _fit(IndexCache(tmp_path))
    entry = _only_entry(tmp_path)
    data = bytearray(entry.read_bytes())
    if damage == "flip":
        data[_middle_of_largest_array(bytes(data))] ^= 0x01  # only the checksum can tell
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = bytearray(b"not an index at all" * 10)
    else:
        data = bytearray()
    entry.write_bytes(bytes(data))
    cache = IndexCache(tmp_path)
    refit = _fit(cache)
    assert cache.events == [("rejected", "bm25"), ("miss", "bm25")]
    assert "ignoring" in capsys.readouterr().err
    assert refit.search(QUERIES, 3).to_mapping() == _fit(None).search(QUERIES, 3).to_mapping()
    assert set(read_entry(entry, _key_for(CORPUS))) >= {"indptr", "docs", "tfs", "idf"}  # rewritten whole


def _middle_of_largest_array(raw: bytes) -> int:
    import json

    length = int.from_bytes(raw[16:24], "little")
    header = json.loads(raw[24:24 + length])
    start = -(-(24 + length) // 64) * 64
    largest = max(header["arrays"], key=lambda spec: spec["nbytes"])
    return start + largest["offset"] + largest["nbytes"] // 2


def test_a_foreign_entry_is_never_trusted(tmp_path):
    """An entry of another corpus renamed to this corpus's file name: its header names another key."""
    cache = IndexCache(tmp_path)
    _fit(cache, OTHER)
    foreign = _only_entry(tmp_path)
    wanted = cache.path(_key_for(CORPUS), "bm25")
    foreign.rename(wanted)
    second = IndexCache(tmp_path)
    fitted = _fit(second)
    assert second.events == [("rejected", "bm25"), ("miss", "bm25")]
    assert fitted.index.n_docs == len(CORPUS)


def _key_for(corpus: Corpus) -> str:
    from corpora.analyzers import analyzer_fingerprint

    params = {"k1": 1.2, "b": 0.75, "analyzer": "article", "analyzer_fingerprint": analyzer_fingerprint("article"),
              "version": BM25.state_version}
    return entry_key("bm25", params, corpus_digest(corpus))


def test_a_well_formed_entry_with_impossible_content_is_rejected(tmp_path):
    """Right key, right checksums, but a posting points past the last document."""
    fresh = _fit(None)
    blob, offsets = pack_strings(fresh.vocabulary)
    docs = fresh.index.docs.copy()
    docs[0] = 99
    state = {"indptr": fresh.index.indptr, "block_starts": fresh.index.block_starts, "docs": docs,
             "tfs": fresh.index.tfs, "idf": fresh.index.idf,
             "length_class": fresh.index.length_class, "class_norm": fresh.index.class_norm,
             "block_docs": np.array([fresh.index.block_docs], dtype=np.int64),
             "tie_rank": fresh._tie_rank, "vocabulary": blob, "vocabulary_offsets": offsets}
    from retrievers.bm25 import _valid_state

    assert not _valid_state(state, len(CORPUS))
    docs[0] = 0
    assert _valid_state(state, len(CORPUS))  # the same state with the posting put right is fine
    docs[0] = 99
    cache = IndexCache(tmp_path)
    path = cache.path(_key_for(CORPUS), "bm25")
    path.parent.mkdir(parents=True)
    write_entry(path, _key_for(CORPUS), state)
    fitted = _fit(cache)
    assert cache.events == [("rejected", "bm25"), ("miss", "bm25")]
    assert fitted.index.docs.max() < len(CORPUS)


def test_corpus_digest_sees_every_change():
    base = corpus_digest(CORPUS)
    assert base == corpus_digest(Corpus(list(CORPUS.ids), list(CORPUS.texts)))
    assert base != corpus_digest(Corpus(["d1", "d2", "d3", "d4"], ["red apple pie", "green apple", "blue sky", "red"]))
    assert base != corpus_digest(Corpus(["d2", "d1", "d3", "d4"], list(CORPUS.texts)))
    assert base != corpus_digest(Corpus(list(CORPUS.ids), list(CORPUS.texts), titles=["t", "", "", ""]))
    # moving a character across a boundary changes the lengths, hence the digest
    assert corpus_digest(Corpus(["a", "b"], ["xy", "z"])) != corpus_digest(Corpus(["a", "b"], ["x", "yz"]))


def test_strings_round_trip_without_pickle():
    words = ["", "abc", "caf\u00e9", "\U0001f600", "x" * 100]
    assert unpack_strings(*pack_strings(words)) == words
    blob, offsets = pack_strings(["caf\u00e9"])
    offsets[1] -= 1  # cut inside the two-byte é
    with pytest.raises(ValueError):
        unpack_strings(blob, offsets)


def test_entries_round_trip_and_are_read_only(tmp_path):
    state = {"a": np.arange(5, dtype=np.int64), "b": np.linspace(0, 1, 3), "c": np.zeros(0, dtype=np.int32)}
    write_entry(tmp_path / "e.idx", "k", state)
    back = read_entry(tmp_path / "e.idx", "k")
    assert set(back) == {"a", "b", "c"}
    for name in state:
        np.testing.assert_array_equal(back[name], state[name])
        assert not back[name].flags.writeable
    with pytest.raises(ValueError):
        read_entry(tmp_path / "e.idx", "another key")


def test_sorted_strings_find_every_term_and_only_those():
    words = sorted(["", "a", "ab", "abc", "b", "caf\u00e9", "zz", "\U0001f600", "\u00e9t\u00e9"])
    table = SortedStrings(*pack_strings(words))
    assert len(table) == len(words) and list(table) == words
    assert [table[w] for w in words] == list(range(len(words)))
    for absent in ("aa", "abcd", "c", "zzz", "\U0001f601"):
        assert table.get(absent) is None
    assert table.positions(words + ["aa", "\U0001f601"]).tolist() == list(range(len(words))) + [-1, -1]
    copy = pickle.loads(pickle.dumps(table))  # a fitted retriever holding a table can still be pickled
    assert list(copy) == words and [copy[w] for w in words] == list(range(len(words))) and copy.get("aa") is None


def test_sorted_strings_find_terms_sharing_their_first_eight_bytes():
    """Lookups narrow by each term's first 8 bytes; terms alike in those are told apart by the rest."""
    rng = np.random.default_rng(0)
    words = {"abcdefgh", "abcdefg", "abcdefghi", "abcdefghij", "abcdefgi", "abcdefgh\u00e9", "\u00e9t\u00e9s\u00e9t\u00e9s",
             "\u00e9t\u00e9s\u00e9t\u00e9s\u00e9"}
    words |= {"".join(rng.choice(list("ab\u00e9"), size=rng.integers(1, 12))) for _ in range(2000)}
    words = sorted(words)
    table = SortedStrings(*pack_strings(words))
    assert [table[w] for w in words] == list(range(len(words)))
    absent = ["abcdef", "abcdefghh", "abcdefghijk", "abcdefgh\u00e8", "\u00e9t\u00e9s\u00e9t\u00e9", "c"]
    for term in absent:
        assert term not in words and table.get(term) is None
    asked = words[::-1] + absent + words[:5]  # the batch lookup: every term at once
    assert table.positions(asked).tolist() == [table.get(t, -1) for t in asked]
    assert table.positions(asked).dtype == np.int64 and table.positions([]).tolist() == []
