"""A BEIR corpus kept as its ids only (corpora/outline.py): the same identity as the whole corpus,
its texts read again on demand and checked, and the line reader that streams it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from corpora import InputFileError, RetbenchError, load_dataset
from corpora.beir import read_corpus_jsonl
from corpora.outline import CorpusOutline, read_outline_jsonl
from corpora.readers import read_text_lines, stream_text_lines


def beir(folder: Path, documents: list[dict]) -> Path:
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "red apple"}) + "\n", encoding="utf-8")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    return folder


DOCUMENTS = [{"_id": "d1", "title": "Apples", "text": "red apple pie"},
             {"_id": "d2", "title": "", "text": "   "},
             {"_id": "d3", "text": "naïve café \u2603 snow"},
             {"_id": "d4", "title": "Only a title", "text": ""}]


def test_the_bundled_corpus_as_ids_only_has_the_whole_corpus_identity() -> None:
    whole, outline = load_dataset("article"), load_dataset("article", keep_texts=False)
    assert isinstance(outline.corpus, CorpusOutline) and not isinstance(whole.corpus, CorpusOutline)
    assert outline.corpus.content_hash() == whole.corpus.content_hash()
    assert outline.corpus.ids == whole.corpus.ids
    assert np.array_equal(outline.corpus.fingerprints(), whole.corpus.fingerprints())
    assert outline.corpus.retriever_defaults == whole.corpus.retriever_defaults  # the article's own experiment
    assert outline.corpus.blank_documents() == whole.corpus.blank_documents()


def test_an_outline_reads_the_documents_asked_for_as_the_whole_corpus_holds_them(tmp_path) -> None:
    folder = beir(tmp_path / "c", DOCUMENTS)
    whole = read_corpus_jsonl(folder / "corpus.jsonl", "c")
    outline = read_outline_jsonl(folder / "corpus.jsonl", "c")
    assert outline.content_hash() == whole.content_hash()
    assert outline.blank_documents() == ["d2"] == whole.blank_documents()
    positions = [3, 0, 2, 0]
    assert outline.documents_at(positions) == whole.documents_at(positions)
    assert outline.documents_at(positions)[0][0] == "Only a title\n"  # title and body joined, as full_texts
    with pytest.raises(RetbenchError, match="its texts are not held in this process"):
        outline.texts[0]
    with pytest.raises(RetbenchError, match="its texts are not held in this process"):
        list(outline.full_texts)


def test_a_corpus_changed_after_it_was_read_is_an_error_not_another_text(tmp_path) -> None:
    folder = beir(tmp_path / "c", DOCUMENTS)
    outline = read_outline_jsonl(folder / "corpus.jsonl", "c")
    changed = [dict(d) for d in DOCUMENTS]
    changed[2]["text"] = "another text"
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in changed), encoding="utf-8")
    assert outline.documents_at([0])[1] == ["red apple pie"]  # an unchanged document reads as before
    with pytest.raises(InputFileError, match="changed during the run"):
        outline.documents_at([2])


def test_the_outline_refuses_what_the_whole_reader_refuses_with_its_message(tmp_path) -> None:
    folder = beir(tmp_path / "c", [*DOCUMENTS, {"_id": "d1", "text": "again"}])
    with pytest.raises(InputFileError) as whole:
        read_corpus_jsonl(folder / "corpus.jsonl", "c")
    with pytest.raises(InputFileError) as outline:
        read_outline_jsonl(folder / "corpus.jsonl", "c")
    assert str(outline.value) == str(whole.value) and "duplicate document id 'd1'" in str(whole.value)
    bad = beir(tmp_path / "bad", [{"_id": "d1", "text": ["a", "list"]}])
    with pytest.raises(InputFileError, match=r"corpus.jsonl:1: .*text"):
        read_outline_jsonl(bad / "corpus.jsonl", "bad")


def test_streamed_lines_are_the_lines_read_whole(tmp_path) -> None:
    path = tmp_path / "lines.txt"
    path.write_bytes("\ufeffone\r\ntwo\n\nthr\u00e9e\r\n".encode("utf-8") + b"last")
    assert list(stream_text_lines(path)) == [(n, line) for n, line in read_text_lines(path)]
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"fine\nbad \xff byte\n")
    with pytest.raises(InputFileError) as whole:
        list(read_text_lines(broken))
    with pytest.raises(InputFileError) as streamed:
        list(stream_text_lines(broken))
    assert str(streamed.value) == str(whole.value) and ":2:" in str(whole.value)
