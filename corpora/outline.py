"""A corpus held as its ids only: what a process that fits nothing itself keeps of a large corpus.

An engine that fits on workers which read the corpus folder themselves (``bench compare --engine
dask``, :mod:`harness.engines`) needs, where the comparison runs, the documents' ids (to name the
results), their number, the corpus's content hash (its identity in the manifest) and, for the
diagnosis, the texts of the few documents it reads. :func:`read_outline_jsonl` reads a BEIR
``corpus.jsonl`` once for all of that: it keeps the ids and one 64-bit fingerprint per document
(:func:`~corpora.model.document_fingerprints`), feeds the content hash as it goes, and lets every
text go; the texts are fed to the hash in a second reading of the file, because the hash takes
every id, then every title, then every body (:meth:`corpora.Corpus.content_hash`: the same digest,
byte for byte, as the whole corpus's). The file must not change between the two readings (its size
and modification time are compared).

A :class:`CorpusOutline` is a :class:`~corpora.Corpus` whose ``texts`` are not held: reading them
is an error that says so, and :meth:`~CorpusOutline.documents_at` reads the few documents asked for
with its ``reader`` (by default from the file again, :func:`read_jsonl_documents`; an engine may
lend one that asks its workers, :meth:`CorpusOutline.reading`). What a reader returns is checked
against the fingerprints, so a file changed during the run is an error, never a different number.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from corpora.errors import InputFileError, RetbenchError
from corpora.memory import release_freed_memory
from corpora.model import (CORPUS_HASH_PREFIX, HASH_CHUNK, Corpus, document_fingerprints, full_text, hash_chunk)
from corpora.readers import (UniqueIds, check_id, document_metadata, json_object, read_jsonl, require_id,
                             stream_text_lines, text_field)

__all__ = ["CorpusOutline", "UnreadableTexts", "not_held_texts", "read_jsonl_documents", "read_outline_jsonl"]

#: reader(positions) -> (titles, bodies) of the documents at those positions, in that order.
Reader = Callable[[Sequence[int]], tuple[list[str], list[str]]]


class UnreadableTexts(Sequence[str]):
    """The ``texts`` of a corpus that holds ids without their texts: as long as the corpus, and an
    error to read, which says why the texts are not there (``problem``) and what to do (``fix``)."""

    def __init__(self, length: int, source: str, problem: str, fix: str, shown: str):
        self._length = length
        self._message = f"corpus {source}: {problem}. Fix: {fix}"
        self._shown = shown

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:
        raise RetbenchError(self._message)

    def __iter__(self) -> Iterator[str]:
        return self.__getitem__(0)

    def __repr__(self) -> str:
        return f"<{self._length:,} texts {self._shown}>"


def not_held_texts(length: int, source: str) -> UnreadableTexts:
    """The ``texts`` of a :class:`CorpusOutline`: the workers of an engine read them from the folder."""
    return UnreadableTexts(length, source, "its texts are not held in this process (the engine's workers read them "
                           "from the corpus folder)", "read a few documents with corpus.documents_at(positions), or "
                           "load the dataset with keep_texts=True", "not held")


@dataclass(frozen=True)
class CorpusOutline(Corpus):
    """A corpus of ids without its texts (module docstring): ``fingerprint_array`` holds one
    fingerprint per document, ``reader`` reads a few documents, ``hash`` is the content hash of the
    whole corpus as it was read."""

    fingerprint_array: np.ndarray = field(default_factory=lambda: np.empty(0, dtype="<u8"), compare=False,
                                          repr=False)
    reader: Reader | None = field(default=None, compare=False, repr=False)
    hash: str = ""
    blank: tuple[str, ...] = ()  # the ids of the documents whose full text is blank, in corpus order

    def __post_init__(self) -> None:  # the reader checked the ids, once
        if len(self.ids) != len(self.texts) or len(self.fingerprint_array) != len(self.ids):
            raise ValueError("an outline needs one text placeholder and one fingerprint per id")
        object.__setattr__(self, "_content_hash", self.hash)

    def fingerprints(self) -> np.ndarray:
        return self.fingerprint_array

    def blank_documents(self) -> list[str]:
        return list(self.blank)

    @property
    def full_texts(self) -> list[str]:
        return self.texts  # type: ignore[return-value]  # UnreadableTexts: reading them says why not

    def documents_at(self, positions: Sequence[int]) -> tuple[list[str], list[str]]:
        wanted = [int(j) for j in positions]
        if not wanted:
            return [], []
        if self.reader is None:
            raise RetbenchError(f"corpus {self.source}: its texts are not held and it has no reader. Fix: load the "
                                "dataset with keep_texts=True")
        titles, bodies = self.reader(wanted)
        found = document_fingerprints([self.ids[j] for j in wanted], titles, bodies)
        if not np.array_equal(found, self.fingerprint_array[wanted]):
            raise InputFileError(self.source, "changed during the run: documents read again differ from those the "
                                 "corpus was hashed from", fix="leave the corpus folder unchanged while bench "
                                 "compare runs, and give every worker the same copy")
        return [full_text(t, x) for t, x in zip(titles, bodies)], bodies

    @contextlib.contextmanager
    def reading(self, reader: Reader) -> Iterator[None]:
        """Read documents with ``reader`` for the ``with`` block (an engine's workers), then as before."""
        before = self.reader
        object.__setattr__(self, "reader", reader)
        try:
            yield
        finally:
            object.__setattr__(self, "reader", before)


def _stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_size, status.st_mtime_ns


def read_outline_jsonl(path: Path, name: str) -> CorpusOutline:
    """The :class:`CorpusOutline` of a BEIR ``corpus.jsonl`` (module docstring), with the checks and
    errors of :func:`corpora.beir.read_corpus_jsonl`; its reader reads documents from ``path`` again."""
    stamp = _stamp(path)
    ids: list[str] = []
    seen: set[str] = set()
    fingerprints: list[np.ndarray] = []
    titles_chunks: list[list[str]] = []  # the titles, a hash chunk each, until the ids are hashed
    titles: list[str] = []
    texts: list[str] = []
    blank: list[str] = []
    for number, record in read_jsonl(path):
        doc_id = require_id(path, number, record)
        if doc_id in seen:  # named at both lines, as the whole reader names them
            _refuse_duplicate(path, doc_id, number)
        seen.add(doc_id)
        check_id(doc_id, "document id", path, number)
        ids.append(doc_id)
        texts.append(text_field(path, number, record, "text", "document"))
        titles.append(text_field(path, number, record, "title", "document"))
        document_metadata(path, number, record)
        if not full_text(titles[-1], texts[-1]).strip():
            blank.append(doc_id)
        if len(texts) == HASH_CHUNK:
            fingerprints.append(document_fingerprints(ids[-HASH_CHUNK:], titles, texts))
            titles_chunks.append(titles)
            titles, texts = [], []
    if texts:
        fingerprints.append(document_fingerprints(ids[-len(texts):], titles, texts))
        titles_chunks.append(titles)
    del seen, titles, texts
    if not ids:
        raise InputFileError(path, "the corpus holds no documents", fix="add one JSON object per document")
    digest = hashlib.sha256(CORPUS_HASH_PREFIX)
    for start in range(0, len(ids), HASH_CHUNK):
        hash_chunk(digest, ids[start:start + HASH_CHUNK])
    for chunk in titles_chunks:
        hash_chunk(digest, chunk)
    del titles_chunks
    chunk: list[str] = []
    for number, record in read_jsonl(path):  # the bodies come after every title in the hash
        chunk.append(text_field(path, number, record, "text", "document"))
        if len(chunk) == HASH_CHUNK:
            hash_chunk(digest, chunk)
            chunk = []
    if chunk:
        hash_chunk(digest, chunk)
    if _stamp(path) != stamp:
        raise InputFileError(path, "changed while it was read", fix="leave the corpus unchanged while it is read")
    release_freed_memory()  # the records read: the heap keeps their pages otherwise, and they are most of the peak
    return CorpusOutline(ids, not_held_texts(len(ids), str(path)), None, None, name=name,  # type: ignore[arg-type]
                         source=str(path), fingerprint_array=np.concatenate(fingerprints),
                         reader=lambda positions: read_jsonl_documents(path, positions), hash=digest.hexdigest(),
                         blank=tuple(blank))


def _refuse_duplicate(path: Path, doc_id: str, number: int) -> None:
    """Raise the whole reader's error for ``doc_id`` read again at line ``number`` (its first line found again)."""
    ids = UniqueIds("document id", fix="give every document a unique id")
    first = next(n for n, record in read_jsonl(path) if require_id(path, n, record) == doc_id)
    ids.add(doc_id, path, first)
    ids.add(doc_id, path, number)


def read_jsonl_documents(path: Path, positions: Sequence[int]) -> tuple[list[str], list[str]]:
    """(titles, bodies) of the documents at ``positions`` (record numbers over the non-blank lines of
    a BEIR ``corpus.jsonl``), in that order; only their lines are parsed."""
    wanted = sorted(set(int(j) for j in positions))
    found: dict[int, tuple[str, str]] = {}
    if wanted:
        last, index, record_number = wanted[-1], 0, -1
        for number, line in stream_text_lines(path):
            if not line.strip():
                continue
            record_number += 1
            if record_number != wanted[index]:
                continue
            record = json_object(path, line, number)
            found[record_number] = (text_field(path, number, record, "title", "document"),
                                    text_field(path, number, record, "text", "document"))
            index += 1
            if record_number == last:
                break
    missing = [j for j in wanted if j not in found]
    if missing:
        raise InputFileError(path, f"holds no document {missing[0]} any more (it changed during the run)",
                             fix="leave the corpus folder unchanged while bench compare runs")
    return [found[int(j)][0] for j in positions], [found[int(j)][1] for j in positions]
