"""What an engine's workers run: pure functions of their arguments, so that a task lost with its
worker is run again elsewhere with the same result. Imports nothing of the engine's library: a
worker unpickles these by name.

A shard's documents come either from the dataset's folder, read by the worker itself
(:class:`FolderShard`: for folders on a file system every worker sees, and the bundled corpora), or
with the task (:class:`ShippedShard`: a dataset that exists only in the client's memory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from corpora import FORMATS, Corpus, Queries, RetbenchError, load_dataset
from corpora.beir import read_corpus_jsonl
from corpora.loading import detect_format, resolve_corpus
from corpora.model import fingerprints_digest
from corpora.outline import read_jsonl_documents
from harness.engines.base import DatasetOrigin
from retrievers.sharding import ShardFit, ShardHits, merge_hits, shard_of

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
        if fingerprints_digest(shard.fingerprints()) != self.digest:
            raise RetbenchError(
                f"corpus {self.origin.location}: documents {self.start}..{self.stop - 1} as a worker read them differ "
                "from the client's (the files changed during the run, or the workers see another copy). Fix: give "
                "every worker the same copy of the folder, and leave it unchanged while bench compare runs")
        return shard


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


def reduce_statistics(retriever: Any, statistics: list[Any]) -> list[Any]:
    """The protocol's step 2, on a worker: every shard's statistics in, one value per shard out."""
    parts = list(retriever.reduce_statistics(statistics))
    if len(parts) != len(statistics):
        raise RetbenchError(f"retriever {retriever.label!r}: reduce_statistics gave {len(parts)} value(s) for "
                            f"{len(statistics)} shard(s). Fix: return one value per shard, in shard order")
    return parts


def part_of(values: list[Any], n: int) -> Any:
    """Item ``n`` of a task's list, taken on the worker that holds it (only that item travels on)."""
    return values[n]


def merge_shard_hits(parts: list[ShardHits], starts: list[int], k: int, tie_rank: Any) -> tuple[Any, Any, Any]:
    """:func:`~retrievers.sharding.merge_hits` on a worker: only the merged top ``k`` goes to the client."""
    return merge_hits(parts, starts, k, tie_rank)


def index_shard(retriever: Any, fit: ShardFit, statistics: Any) -> Any:
    return retriever.index_shard(fit.state, statistics)


def search_shard(retriever: Any, index: Any, queries: Queries, k: int) -> ShardHits:
    return retriever.search_shard(index, queries, k)


def score_shard(retriever: Any, index: Any, queries: Queries) -> Any:
    return retriever.score_shard(index, queries)


def apply_chunk(item: Any, function: Callable[[Any, Any], Any], shared: Any) -> Any:
    """One chunk of :func:`harness.core.parallel.chunk_map`."""
    return function(shared, item)
