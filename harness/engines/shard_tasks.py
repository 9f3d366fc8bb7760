"""What an engine's workers run: pure functions of their arguments, so that a task lost with its
worker is run again elsewhere with the same result. Imports nothing of the engine's library: a
worker unpickles these by name.

A shard's documents come either from the dataset's folder, read by the worker itself
(:class:`FolderShard`: for folders on a file system every worker sees, and the bundled corpora), or
with the task (:class:`ShippedShard`: a dataset that exists only in the client's memory). A
retriever fitted whole on one worker (``lsa``) reads the whole corpus the same two ways
(:class:`FolderCorpus`, or a :class:`ShippedShard` of every document).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from corpora import FORMATS, Corpus, Queries, RetbenchError, Run, load_dataset
from corpora.beir import read_corpus_jsonl
from corpora.loading import detect_format, resolve_corpus
from corpora.model import fingerprints_digest
from corpora.outline import read_jsonl_documents
from harness.engines.base import DatasetOrigin
from retrievers.sharding import ShardFit, ShardHits, shard_of

#: The corpus this worker process loaded last, by origin: the worker's shards of it are cut from one
#: load. One entry, so a worker never holds two corpora.
_LOADED: dict[DatasetOrigin, Corpus] = {}


@dataclass(frozen=True)
class FolderShard:
    """Documents ``start:stop`` of the dataset at ``origin``; ``digest``: the
    :func:`~corpora.model.fingerprints_digest` of those documents as the client read them."""

    origin: DatasetOrigin
    start: int
    stop: int
    digest: str

    def load(self) -> Corpus:
        shard = _beir_lines(self.origin, self.start, self.stop)
        if shard is None:
            shard = shard_of(_whole(self.origin), self.start, self.stop)
        _check_digest(shard, self.digest, self.origin, f"documents {self.start}..{self.stop - 1}")
        return shard


@dataclass(frozen=True)
class FolderCorpus:
    """The whole corpus of the dataset at ``origin``, loaded on the worker as the client's
    :func:`~corpora.load_dataset` loads it (the corpus's ``retriever_defaults`` included: a retriever
    chooses its parameters there as it would here); ``digest``: the
    :func:`~corpora.model.fingerprints_digest` of every document as the client read them."""

    origin: DatasetOrigin
    digest: str

    def load(self) -> Corpus:
        corpus = _whole(self.origin)
        _check_digest(corpus, self.digest, self.origin, "the documents")
        return corpus


def _check_digest(corpus: Corpus, digest: str, origin: DatasetOrigin, which: str) -> None:
    """Refuse documents that differ from those the client read (their fingerprints' digest)."""
    if fingerprints_digest(corpus.fingerprints()) != digest:
        raise RetbenchError(
            f"corpus {origin.location}: {which} as a worker read them differ from the client's (the files changed "
            "during the run, or the workers see another copy). Fix: give every worker the same copy of the folder, "
            "and leave it unchanged while bench compare runs")


@dataclass(frozen=True)
class ShippedShard:
    """Documents that travel with the task."""

    corpus: Corpus

    def load(self) -> Corpus:
        return self.corpus


def _whole(origin: DatasetOrigin) -> Corpus:
    """The corpus at ``origin``, loaded whole once per worker (:data:`_LOADED`)."""
    corpus = _LOADED.get(origin)
    if corpus is None:
        _LOADED.clear()
        corpus = load_dataset(origin.location, format=origin.format, split=origin.split,
                              allow_unmatched_judgments=origin.allow_unmatched_judgments).corpus
        _LOADED[origin] = corpus
    return corpus


def _beir_lines(origin: DatasetOrigin, start: int, stop: int) -> Corpus | None:
    """The shard read straight from the lines of a BEIR folder's ``corpus.jsonl`` (the other lines are
    not parsed), or None for another layout, which is loaded whole and cut."""
    folder = resolve_corpus(origin.location)
    layout = FORMATS[origin.format] if origin.format is not None else detect_format(folder)
    if layout.name != "beir":
        return None
    return read_corpus_jsonl(folder / "corpus.jsonl", folder.name, start, stop)


def read_documents(origin: DatasetOrigin, positions: Sequence[int]) -> tuple[list[str], list[str]]:
    """(titles, bodies) of the documents at ``positions`` of the dataset at ``origin`` (the client
    checks them against its fingerprints): a BEIR folder's lines are scanned and only theirs parsed."""
    folder = resolve_corpus(origin.location)
    layout = FORMATS[origin.format] if origin.format is not None else detect_format(folder)
    if layout.name == "beir":
        return read_jsonl_documents(folder / "corpus.jsonl", positions)
    corpus = _whole(origin)
    return ([corpus.titles[j] for j in positions] if corpus.titles is not None else [""] * len(positions),
            [corpus.texts[j] for j in positions])


def forget_loaded() -> None:
    """Let go of the corpus this worker loaded (once every shard of it is indexed)."""
    _LOADED.clear()


def fit_shard(retriever: Any, source: FolderShard | ShippedShard) -> ShardFit:
    return retriever.fit_shard(source.load())


def statistics_of(fit: ShardFit) -> Any:
    return fit.statistics


def part_of(values: list[Any], n: int) -> Any:
    """Item ``n`` of a task's list, taken on the worker that holds it (only that item travels on)."""
    return values[n]


def index_shard(retriever: Any, fit: ShardFit, statistics: Any) -> Any:
    return retriever.index_shard(fit.state, statistics)


def search_shard(retriever: Any, index: Any, queries: Queries, k: int) -> ShardHits:
    return retriever.search_shard(index, queries, k)


def score_shard(retriever: Any, index: Any, queries: Queries) -> Any:
    return retriever.score_shard(index, queries)


def fit_whole(retriever: Any, source: FolderCorpus | ShippedShard) -> Any:
    """``retriever.fit(corpus)`` on a worker (``retriever`` is an unfitted copy): the fitted retriever,
    which stays on the worker."""
    return retriever.fit(source.load())


def chosen_of(retriever: Any) -> dict[str, Any]:
    """The parameters the fitted ``retriever`` chose for the collection (:func:`retrievers.defaults.chosen`)."""
    from retrievers.defaults import chosen

    return chosen(retriever)


@dataclass(frozen=True)
class RunArrays:
    """A run over the corpus without its doc ids: the client, which holds the same ids (their
    fingerprints were checked), builds the :class:`~corpora.Run` over its own."""

    query_ids: list[str]
    offsets: Any
    doc_index: Any
    scores: Any


def search_whole(retriever: Any, queries: Queries, k: int) -> tuple[Any, dict[str, Any]]:
    """``retriever.search(queries, k)`` on the worker that fitted it, and what it has chosen for the
    collection (a search may choose too): a run over its corpus as :class:`RunArrays` (the corpus's
    ids stay here), any other answer (a plugin's mapping) as it is."""
    from retrievers.defaults import chosen

    found = retriever.search(queries, k)
    corpus = retriever.corpus
    if isinstance(found, Run) and (found.doc_ids is corpus.id_array() or (
            len(found.doc_ids) == len(corpus) and list(found.doc_ids) == list(corpus.ids))):
        found = RunArrays(found.query_ids, found.offsets, found.doc_index, found.scores)
    return found, chosen(retriever)


def score_whole(retriever: Any, queries: Queries) -> Any:
    """``retriever.score(queries)`` on the worker that fitted it."""
    return retriever.score(queries)


def apply_chunk(item: Any, function: Callable[[Any, Any], Any], shared: Any) -> Any:
    """One chunk of :func:`harness.engines.parallel.chunk_map`."""
    return function(shared, item)
