"""BM25 at scale: the index built a block of documents at a time is the one built from every token at
once; a saved index loads back (memory-mapped) to the same rankings, and a damaged or foreign one is
refused; fitting and searching report progress with a rate and the time left."""

from __future__ import annotations

import json
import tracemalloc
import weakref

import numpy as np
import pytest

from corpora import Corpus, Queries, RetbenchError
from corpora.progress import Progress, Task, render_line
from corpora.tokenize import BlockTokenizer, tokenize
from retrievers.base import fit_retriever, search_retriever
from retrievers.bm25 import SAVED_INDEX, SAVED_PARAMETERS, BM25
from retrievers.bm25 import index as index_module
from retrievers.bm25.index import _COUNT_CAP, BM25Index
from retrievers.context import RunContext
from retrievers.strings import pack_strings

ARRAYS = ("indptr", "block_starts", "docs", "tfs", "idf", "length_class", "class_norm")


def _texts(n_docs: int, seed: int = 0, vocabulary: int = 400, longest: int = 30) -> list[str]:
    """Zipfian random words; later documents bring words the earlier ones never had."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}x" for i in range(vocabulary)]
    texts = []
    for j in range(n_docs):
        seen = min(vocabulary, 20 + j * vocabulary // max(n_docs, 1))  # the vocabulary grows with the corpus
        ranks = np.minimum(rng.zipf(1.3, size=int(rng.integers(0, longest))), seen) - 1
        texts.append(" ".join(words[r] for r in ranks) + (" The, of." if j % 7 == 0 else ""))
    return texts


@pytest.fixture(scope="module")
def fitted() -> tuple[BM25, Corpus, Queries]:
    texts = _texts(3000, seed=1)
    corpus = Corpus([f"d{j:05d}" for j in range(len(texts))][::-1], texts)  # ids not in doc order: ties matter
    queries = Queries([f"q{i}" for i in range(60)], [texts[i * 37][:40] or "w1x" for i in range(60)])
    return BM25().fit(corpus), corpus, queries


@pytest.mark.parametrize("block_docs, step", [(64, None), (500, None), (1 << 16, None), (500, 7)])
def test_the_index_built_block_by_block_is_the_one_built_from_every_token(monkeypatch, block_docs, step):
    if step is not None:  # the postings are put in term order a few at a time: steps cut terms everywhere
        monkeypatch.setattr(index_module, "_BUILD_STEP", step)
    texts = _texts(1500, seed=2)
    texts[3] = "w1x " * 300 + "w2x"  # a term frequency above 255 widens the type of every block's
    texts[700] = ""
    streamed, streamed_vocabulary = BM25Index._streamed(texts, "article", 1.2, 0.75, block_docs, None)
    tokens = tokenize(texts, "article")
    whole = BM25Index.build(tokens.offsets, tokens.term_ids, len(tokens.vocabulary), 1.2, 0.75, block_docs)
    # a term's postings in a block past the byte the streamed build counts them in (kept aside)
    assert (np.diff(whole.indptr, axis=1).max() > _COUNT_CAP) == (block_docs > _COUNT_CAP)
    for name in ARRAYS:
        a, b = getattr(streamed, name), getattr(whole, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert all(np.array_equal(a, b) for a, b in zip(streamed_vocabulary, pack_strings(tokens.vocabulary)))


def test_block_tokenizer_gives_tokenize_s_tokens():
    texts = _texts(400, seed=3)
    tokenizer = BlockTokenizer(texts, "article", chunk_texts=16)
    blocks = list(tokenizer.blocks(50))
    rank, vocabulary = tokenizer.vocabulary()
    whole = tokenize(texts, "article")
    assert vocabulary == whole.vocabulary
    ids = np.concatenate([rank[codes] for _, codes in blocks])
    lengths = np.concatenate([np.diff(offsets) for offsets, _ in blocks])
    assert np.array_equal(ids, whole.term_ids) and np.array_equal(lengths, np.diff(whole.offsets))
    with pytest.raises(ValueError, match="not tokenized a block at a time"):
        BlockTokenizer(texts, "english")  # stemmed


def test_a_block_s_tokens_go_as_soon_as_the_caller_lets_them_go():
    """The streamed build drops a block's tokens once its postings exist: the tokenizer must not
    hold them too (they were the generator's locals until the next block, at the build's peak)."""
    tokenizer = BlockTokenizer(_texts(400, seed=3), "article", chunk_texts=16)
    blocks = 0
    for offsets, codes in tokenizer.blocks(50):
        held = weakref.ref(offsets), weakref.ref(codes)
        del offsets, codes
        assert [ref() for ref in held] == [None, None]
        blocks += 1
    assert blocks == 8


@pytest.mark.parametrize("mmap", [True, False])
def test_a_saved_index_loads_back_to_the_same_rankings(fitted, tmp_path, mmap):
    retriever, corpus, queries = fitted
    retriever.save(tmp_path / "saved")
    loaded = BM25.load(tmp_path / "saved", corpus, mmap=mmap)
    assert loaded.k1 == retriever.k1 and loaded.b == retriever.b and loaded.vocabulary == retriever.vocabulary
    for k in (10, 1000):
        a, b = retriever.search(queries, k), loaded.search(queries, k)
        assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.doc_index, b.doc_index)
        assert np.array_equal(a.scores, b.scores)  # bit for bit
        assert len(b.scores) > 0


def test_a_memory_mapped_load_reads_nothing_into_memory_up_front(tmp_path):
    texts = _texts(4000, seed=5, vocabulary=5000, longest=400)
    corpus = Corpus([f"d{j}" for j in range(len(texts))], texts)
    BM25().fit(corpus).save(tmp_path)
    size = (tmp_path / SAVED_INDEX).stat().st_size
    corpus.content_hash()  # memoised: the corpus's hash is not the load's memory
    peaks = {}
    for mmap in (True, False):
        tracemalloc.start()
        loaded = BM25.load(tmp_path, corpus, mmap=mmap, verify=False)
        peaks[mmap] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert loaded.index.docs.flags.writeable is False
    assert peaks[False] >= loaded.index.docs.nbytes + loaded.index.tfs.nbytes  # read in: the postings at least
    assert peaks[True] < size / 4  # mapped: the structural check's small temporaries only


def test_a_damaged_or_foreign_index_is_refused_never_used(fitted, tmp_path):
    retriever, corpus, _ = fitted
    folder = retriever.save(tmp_path / "saved")
    data = (folder / SAVED_INDEX).read_bytes()

    (folder / SAVED_INDEX).write_bytes(data[:len(data) // 2])
    with pytest.raises(RetbenchError, match="damaged .*truncated.* Fix: save the index again"):
        BM25.load(folder, corpus)

    length = int.from_bytes(data[16:24], "little")  # after the magic: the header's length, then the header
    header = json.loads(data[24:24 + length])
    (docs,) = [spec for spec in header["arrays"] if spec["name"] == "docs"]
    flipped = bytearray(data)
    flipped[-(-(24 + length) // 64) * 64 + docs["offset"] + docs["nbytes"] // 2] ^= 0x01  # one posting's doc
    (folder / SAVED_INDEX).write_bytes(bytes(flipped))
    with pytest.raises(RetbenchError, match="fails its checksum"):
        BM25.load(folder, corpus)

    (folder / SAVED_INDEX).write_bytes(data)
    other = Corpus(corpus.ids, corpus.texts[:-1] + ["something else"])
    with pytest.raises(RetbenchError, match="fitted on another corpus"):
        BM25.load(folder, other)
    with pytest.raises(RetbenchError, match="a corpus of 3000 documents, given one of 2"):
        BM25.load(folder, Corpus(["a", "b"], ["x", "y"]))

    saved = json.loads((folder / SAVED_PARAMETERS).read_text())
    saved["params"]["version"] = -1
    (folder / SAVED_PARAMETERS).write_text(json.dumps(saved))
    with pytest.raises(RetbenchError, match="another version of bm25"):
        BM25.load(folder, corpus)
    with pytest.raises(RetbenchError, match="no saved BM25 index"):
        BM25.load(tmp_path / "nowhere", corpus)
    with pytest.raises(RetbenchError, match="is not fitted"):
        BM25().save(tmp_path / "unfitted")


def test_fitting_and_searching_report_documents_and_queries_done():
    texts = _texts(9000, seed=4)
    corpus = Corpus([f"d{j}" for j in range(len(texts))], texts)
    queries = Queries([f"q{i}" for i in range(300)], [texts[i][:30] or "w1x" for i in range(300)])
    heard: list[tuple[str, int, int | None]] = []
    context = RunContext(progress=Progress(lambda label, done, total: heard.append((label, done, total))))
    retriever = BM25()
    with context.progress.task("fitting bm25"):
        fit_retriever(retriever, corpus, context)
    with context.progress.task("searching bm25", len(queries)):
        search_retriever(retriever, queries, 10, context)
    fit = [(done, total) for label, done, total in heard if label == "fitting bm25" and done]
    search = [(done, total) for label, done, total in heard if label == "searching bm25" and done]
    assert len(fit) >= 2 and fit[-1] == (9000, 9000) and all(a[0] < b[0] for a, b in zip(fit, fit[1:]))
    assert len(search) >= 2 and search[-1] == (300, 300)


def test_the_line_shows_the_rate_and_the_time_left():
    task = Task("fitting bm25", 1_000_000)
    task.update(250_000)
    line = render_line(task, task.started + 10.0, 0)
    assert "25,000/s ETA 0:00:30" in line
    task.update(1_000_000)
    assert "ETA" not in render_line(task, task.started + 40.0, 0)  # done: nothing left to estimate


def test_length_classes_counted_are_those_sorted():
    from retrievers.bm25.index import length_classes

    lengths = np.random.default_rng(6).poisson(40, size=5000).astype(np.int32)
    lengths[:3] = (0, 900, 0)
    classes, length_class = length_classes(lengths)
    expected, inverse = np.unique(lengths, return_inverse=True)
    assert np.array_equal(classes, expected.astype(np.float64)) and np.array_equal(length_class, inverse)
    assert length_class.dtype == np.uint8
    huge = np.array([5, 1 << 30, 5], dtype=np.int64)  # sorted, not counted
    assert np.array_equal(length_classes(huge)[1], [0, 1, 0])
