"""The engine seam: where :func:`harness.compare` runs its work. Engines change where work runs, never
what it computes: every engine writes the same results folder, byte for byte, but for the manifest's
times and its ``engine`` record (which the configuration hash leaves out, for that reason).

An engine is used for one comparison at a time through :meth:`Engine.running`, which yields an
:class:`EngineRun` for the ``with`` block: a placement for the retrievers that implement the sharding
protocol (:mod:`retrievers.sharding`) and, if it chooses, for those fitted whole elsewhere
(:func:`retrievers.base.runs_whole_elsewhere`), which the harness puts in the run context it hands every
retriever (:mod:`retrievers.context`); a chunk mapper for the statistics and the evaluation
(:mod:`harness.engines.parallel`), which the harness passes to them; and the :class:`EngineRecord`
that says what ran where. The engine touches no retriever itself: the harness's calls
(:func:`retrievers.base.fit_retriever`) send such a retriever to the placement.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from corpora import Corpus
from retrievers.base import runs_whole_elsewhere
from retrievers.fusion import Fusion
from retrievers.sharding import is_sharded

if TYPE_CHECKING:
    from harness.engines.parallel import ChunkMapper
    from retrievers.sharding import Placement

__all__ = ["DatasetOrigin", "Engine", "EngineRecord", "EngineRun", "needs_texts_here"]

#: Why the configuration hash leaves the engine out (the manifest's engine record says it).
HASH_NOTE = "not part of the configuration hash: an engine changes where work runs, never a result"


@dataclass(frozen=True)
class DatasetOrigin:
    """Where a worker can load a dataset's documents itself: ``location`` is an absolute folder or a
    bundled name, read with :func:`corpora.load_dataset` and these options."""

    location: str
    format: str | None
    split: str
    allow_unmatched_judgments: bool


@dataclass
class EngineRecord:
    """What one comparison ran where, for the manifest's ``engine`` entry."""

    name: str
    details: dict[str, Any] = field(default_factory=dict)
    sharded: set[str] = field(default_factory=set)  # labels of retrievers fitted in shards on the workers
    here: set[str] = field(default_factory=set)  # labels of retrievers fitted where the harness runs
    whole: set[str] = field(default_factory=set)  # labels of retrievers fitted whole on one worker
    # label -> the shards it was cut into: fewer than asked when a retriever shards in whole units
    # (dense's blocks) and the corpus holds fewer units, so the manifest must not claim the request
    shard_counts: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        record: dict[str, Any] = {"name": self.name, **self.details}
        if self.sharded or self.whole or self.name != "local":
            record["sharded"] = sorted(self.sharded)
            record["on_worker"] = sorted(self.whole - self.sharded)
            record["on_client"] = sorted(self.here - self.sharded - self.whole)
        if self.shard_counts:
            record["shards_used"] = dict(sorted(self.shard_counts.items()))
        record["configuration_hash"] = HASH_NOTE
        return record


@dataclass
class EngineRun:
    """One comparison on an engine: ``placement`` fits the retrievers with the sharding protocol, and
    may fit whole those that can run elsewhere (None: all here), ``mapper`` runs the chunks of the
    statistics and the evaluation (None: here), ``record`` says what ran where."""

    record: EngineRecord
    placement: Placement | None = None
    mapper: ChunkMapper | None = None


def needs_texts_here(retrievers: Sequence[Any]) -> bool:
    """Whether fitting ``retrievers`` while an engine places those with the sharding protocol (and those
    that :func:`~retrievers.base.runs_whole_elsewhere`) still needs the corpus's texts where the harness
    runs: one of them, or of their children, is fitted here from the texts (neither), or has children
    but is not a fusion (a :class:`~retrievers.fusion.Fusion` reads only its children's rankings and
    the corpus's ids)."""
    stack = list(retrievers)
    while stack:
        retriever = stack.pop()
        if retriever.children:
            if not isinstance(retriever, Fusion):
                return True
            stack.extend(retriever.children)
        elif not (is_sharded(retriever) or runs_whole_elsewhere(retriever)):
            return True
    return False


class Engine(ABC):
    """Where the work of :func:`harness.compare` runs. ``name`` is the key of ``--engine``."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: Whether the process that runs the comparison must hold the corpus's texts. False: a corpus its
    #: workers read themselves is loaded as its ids only (``load_dataset(..., keep_texts=False)``, a
    #: :class:`~corpora.outline.CorpusOutline`) when every retriever that reads texts is fitted on the
    #: workers (:func:`needs_texts_here`), and the engine reads the few texts the diagnosis needs. An
    #: engine that says False places both kinds :func:`needs_texts_here` counts on: the retrievers with
    #: the sharding protocol and those fitted whole (:meth:`~retrievers.sharding.Placement.fit_whole`).
    needs_texts: ClassVar[bool] = True

    @abstractmethod
    def running(self, corpus: Corpus, origin: DatasetOrigin | None) -> AbstractContextManager[EngineRun]:
        """Run one comparison on ``corpus`` inside the ``with`` block; ``origin`` says where workers
        can read its documents themselves (None: only here, so they are shipped)."""

    def close(self) -> None:
        """Let go of what the engine started (the default started nothing)."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
