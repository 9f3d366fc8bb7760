"""A collection of judgments without document texts: comparing run files on a qrels file alone.

``bench compare --qrels FILE [--queries FILE] --systems run(a.trec),run(b.trec)`` compares runs
that another engine made, on a collection whose documents retbench never sees. A
:class:`TextlessCorpus` stands for the documents: their ids, and nothing else (``has_texts`` is
False; reading a text is an error that says so). Its ids are the judged documents, in the order of
the judgments, then any other documents given (the runs' documents, :func:`with_documents`), so no
document of a run is unknown to it. Its content hash is over the judged ids only, sorted (the
judgments' documents, whatever runs are compared, so that two comparisons of different runs on
the same judgments are of one collection, as ``bench gate`` asks); the manifest hashes the
judgments and the queries beside it.

The queries are read from a queries file (JSON Lines, or CSV with a header, as the table format
reads them: :func:`corpora.tabular.read_queries`; its other fields are facets) when one is given,
else they are the judged queries with their ids as texts (:data:`IDS_AS_TEXTS`, said in the
dataset's warnings).

What needs a document's text is not done on such a collection, and the layers above say so: the
diagnosis cannot tell a vocabulary gap, a surface homonymy or a miss apart, the near-duplicate
check and the judging page have nothing to show, and a retriever that reads texts cannot be fitted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from corpora.errors import InputFileError, RetbenchError
from corpora.model import HASH_CHUNK, Corpus, Dataset, Qrels, Queries, hash_chunk
from corpora.outline import UnreadableTexts
from corpora.wording import counted

__all__ = ["IDS_AS_TEXTS", "NO_TEXTS", "TextlessCorpus", "judgments_only", "load_judgments_only", "with_documents"]

#: Why a document's text cannot be read on a judgments-only collection (every "unavailable" says it).
NO_TEXTS = "no document texts"
#: The warning of a judgments-only collection read without a queries file.
IDS_AS_TEXTS = "no queries file: each query's text is its id (give a queries file for the texts)"
_HASH_PREFIX = b"retbench-textless-corpus-1"


def _unknown_texts(length: int, source: str) -> UnreadableTexts:
    """The ``texts`` of a :class:`TextlessCorpus`: as long as the corpus, and an error to read."""
    return UnreadableTexts(length, source, f"judgments only, {NO_TEXTS}", "compare on a corpus that holds the "
                           "documents' texts for what reads them", "unknown")


@dataclass(frozen=True)
class TextlessCorpus(Corpus):
    """The documents of a judgments-only collection: ids whose texts are unknown (module docstring)."""

    has_texts: ClassVar[bool] = False
    #: How many of the first ids are the judged documents (the rest: documents only a run ranks).
    judged: int = field(default=0, compare=False)

    @classmethod
    def of_ids(cls, judged: Iterable[str], others: Iterable[str], name: str, source: str) -> TextlessCorpus:
        """The ``judged`` ids, then the ``others`` not among them, each once, in the order given."""
        first = list(dict.fromkeys(str(d) for d in judged))
        known = set(first)
        unique = first + [d for d in dict.fromkeys(str(d) for d in others) if d not in known]
        return cls(unique, _unknown_texts(len(unique), source), name=name, source=source,  # type: ignore[arg-type]
                   judged=len(first))

    def __post_init__(self) -> None:  # of_ids made the ids unique
        if len(self.ids) != len(self.texts):
            raise ValueError("ids and texts must have the same length")

    @property
    def full_texts(self) -> list[str]:
        return self.texts  # type: ignore[return-value]  # reading them says why not

    def documents_at(self, positions: Sequence[int]) -> tuple[list[str], list[str]]:
        if len(positions):
            self.texts[0]  # raises: no texts
        return [], []

    def blank_documents(self) -> list[str]:
        return []  # no text is known, so none is known to be blank

    def fingerprints(self) -> np.ndarray:
        self.texts[0]  # raises: a fingerprint is over the texts
        raise AssertionError("unreachable")

    def content_hash(self) -> str:
        """SHA-256 of the judged ids, sorted (the texts are unknown, and the documents only a run
        ranks depend on the runs compared; the judgments and queries are hashed beside it)."""
        known = self.__dict__.get("_content_hash")
        if known is None:
            digest = hashlib.sha256(_HASH_PREFIX)
            ids = sorted(self.ids[:self.judged])
            for start in range(0, len(ids), HASH_CHUNK):
                hash_chunk(digest, ids[start:start + HASH_CHUNK])
            known = digest.hexdigest()
            object.__setattr__(self, "_content_hash", known)
        return known


def judgments_only(qrels: Qrels, queries: Queries | None = None, documents: Iterable[str] = (), *,
                   name: str = "judgments", source: str = "<memory>") -> Dataset:
    """A dataset of ``qrels`` (and ``queries``; without them, the judged queries with their ids as
    texts, warned) whose corpus is a :class:`TextlessCorpus` of the judged documents and ``documents``.

    >>> data = judgments_only(Qrels({"q1": {"d1": 1, "d2": 0}}), documents=["d3", "d1"])
    >>> data.corpus.ids, data.corpus.has_texts, data.queries.texts, data.warnings == [IDS_AS_TEXTS]
    (['d1', 'd2', 'd3'], False, ['q1'], True)
    """
    warnings: list[str] = []
    if queries is None:
        ids = [str(q) for q in qrels]
        queries = Queries(ids, list(ids), source=source)
        warnings.append(IDS_AS_TEXTS)
    else:
        known = set(queries.ids)
        unasked = [str(q) for q in qrels if q not in known]
        if unasked:
            shown = ", ".join(repr(q) for q in unasked[:5]) + (" ..." if len(unasked) > 5 else "")
            warnings.append(f"{counted(len(unasked), 'judged query', spec=',')} not in the queries file "
                            f"{queries.source}, not evaluated: {shown}")
    corpus = TextlessCorpus.of_ids(qrels.arrays.doc_ids.tolist(), documents, name=name, source=source)
    return Dataset(name, corpus, queries, qrels, source, warnings=warnings, format="judgments only")


def with_documents(dataset: Dataset, documents: Iterable[str]) -> Dataset:
    """The judgments-only ``dataset`` with ``documents`` added to its corpus (those it lacks, in the
    order given): what makes every document of the runs compared a document of the collection."""
    corpus = dataset.corpus
    if corpus.has_texts:
        raise RetbenchError(f"corpus {corpus.name!r} holds its documents' texts; only a judgments-only corpus "
                            "takes documents by id. Fix: leave its documents as loaded")
    judged = corpus.judged if isinstance(corpus, TextlessCorpus) else len(corpus)
    known = set(corpus.ids)
    extra = [d for d in dict.fromkeys(str(d) for d in documents) if d not in known]
    if not extra:
        return dataset
    grown = TextlessCorpus.of_ids(corpus.ids[:judged], [*corpus.ids[judged:], *extra], name=corpus.name,
                                  source=corpus.source)
    return replace(dataset, corpus=grown)


def load_judgments_only(qrels: str | Path, queries: str | Path | None = None) -> Dataset:
    """:func:`judgments_only` of a qrels file (TREC or a table, :func:`corpora.read_qrels`) and a
    queries file, named after the qrels file (``judged.qrels`` -> ``judged``)."""
    from corpora.trec_io import read_qrels

    qrels_path = Path(qrels)
    judged = read_qrels(qrels_path)
    if not len(judged):
        raise InputFileError(qrels_path, "holds no judgment", fix="give a qrels file with one judgment per line")
    from corpora.tabular import read_queries

    read, warnings = (None, []) if queries is None else read_queries(Path(queries))
    name = qrels_path.name.split(".")[0] or "judgments"
    dataset = judgments_only(judged, read, name=name, source=str(qrels_path))
    dataset.warnings[:0] = warnings
    return dataset
