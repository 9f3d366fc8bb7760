"""Every optional protocol of a retriever, declared in one place; their defaults are on
:class:`~retrievers.base.Retriever` (or, for ``score``, :class:`~retrievers.base.ScoreRetriever`).

A retriever must implement ``search`` (and may override ``fit``); everything below is optional, and
a retriever that implements none of it works everywhere. Each protocol is a method or attribute with
a default on the base class that means "not offered", so the harness calls it without asking first:

``score`` (:class:`ScoresEveryDocument`)
    A query x document score matrix. Subclass :class:`~retrievers.base.ScoreRetriever` (which
    implements ``search`` from it); ``weighted`` fuses only such retrievers.
``confidence`` (:class:`ReportsConfidence`)
    One confidence per query for risk–coverage; the default ``None`` reads it off the run.
``sweep`` (:class:`SweepsSettings`)
    A classmethod giving the runs of many settings at once (``bench tune``); the default ``None``
    fits each setting.
the sharding protocol (:class:`ShardedRetriever`, with ``shard_unit``, ``prepare_queries`` and an
optional ``score_shard``)
    Fitted and searched in shards on an engine's workers (:mod:`retrievers.sharding`); the default
    ``shard_unit`` is 1 and ``prepare_queries`` hands the queries on as they are.
``whole_on_worker`` (a class attribute, declared on the class itself)
    True: the same bits in any process, so an engine may fit and search the retriever whole on one
    of its workers (:func:`~retrievers.base.runs_whole_elsewhere`); the default False keeps it where
    the harness runs.
fitted-state caching (:class:`CachesFittedState`)
    ``self.fitted_state(kind, params, corpus, build, validate)`` inside ``fit``: the state from the
    run context's cache (:mod:`retrievers.cache`), else built; without a cache it is built.
``children`` (:class:`HasChildren`)
    The retrievers this one calls (a fusion's); the default is ``()``.
``index_bytes`` (:class:`ReportsIndexSize`)
    The bytes the fitted index holds, for the cost reading (docs/cost.md); the default sizes
    retbench's own retrievers by the arrays they hold (:func:`retrievers.footprint.held_bytes`) and
    says None ("unknown") for any other class.
``unavailable_reason`` (:class:`MayBeUnavailable`)
    A classmethod saying why the retriever cannot run here (a missing dependency), or None.

Every retriever also has ``run_context`` (:class:`~retrievers.context.RunContext`): the cache,
progress channel and placement of the call in progress, given by the harness's calls
(:func:`~retrievers.base.fit_retriever` and its siblings); a retriever that calls another passes it on.

:func:`retrievers.base.offers` tells which of them a retriever implements beyond the defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries, Run
from retrievers.cache import State

__all__ = ["PROTOCOLS", "CachesFittedState", "HasChildren", "MayBeUnavailable", "ReportsConfidence", "ReportsIndexSize",
           "ScoresEveryDocument", "ShardFit", "ShardHits", "ShardedRetriever", "SweepsSettings"]


@runtime_checkable
class ScoresEveryDocument(Protocol):
    """An (n_queries x n_docs) matrix, dense or sparse, higher is better, documents in corpus order."""

    def score(self, queries: Queries) -> np.ndarray | sp.spmatrix: ...


@runtime_checkable
class ReportsConfidence(Protocol):
    """One float per query, in the order of ``queries.ids``; None: no confidence of its own."""

    def confidence(self, queries: Queries) -> np.ndarray | None: ...


@runtime_checkable
class SweepsSettings(Protocol):
    """The runs of ``settings`` (unfitted instances of this class), in order, or None: no shortcut."""

    @classmethod
    def sweep(cls, settings: Sequence[Any], corpus: Corpus, queries: Queries,
              k: int) -> Iterator[Run] | None: ...


@dataclass(frozen=True)
class ShardFit:
    """What ``fit_shard`` returns: ``statistics`` travel to the client (keep them small), ``state``
    stays on the worker for ``index_shard``."""

    statistics: Any
    state: Any


@dataclass(frozen=True)
class ShardHits:
    """A shard's top k per query, as a CSR over queries: query ``i``'s hits are
    ``docs[offsets[i]:offsets[i + 1]]`` (positions within the shard) with ``scores`` alongside,
    best first (score descending, then doc id ascending)."""

    offsets: np.ndarray  # int64, n_queries + 1
    docs: np.ndarray  # int64
    scores: np.ndarray  # float64


@runtime_checkable
class ShardedRetriever(Protocol):
    """The methods a retriever implements to be fitted and searched in shards (:mod:`retrievers.sharding`)."""

    def fit_shard(self, shard: Corpus) -> ShardFit: ...

    def reduce_statistics(self, statistics: Sequence[Any]) -> list[Any]: ...

    def index_shard(self, state: Any, statistics: Any) -> Any: ...

    def search_shard(self, index: Any, queries: Queries, k: int) -> ShardHits: ...


@runtime_checkable
class CachesFittedState(Protocol):
    """A fit that asks for its state by kind and parameters, so a cache can answer (``state_version``
    goes into the parameters: raise it when the state's layout changes)."""

    state_version: int

    def fitted_state(self, kind: str, params: Mapping[str, Any], corpus: Corpus, build: Callable[[], State],
                     validate: Callable[[State], bool]) -> State: ...


@runtime_checkable
class HasChildren(Protocol):
    """The retrievers this one fits and calls."""

    children: tuple[Any, ...]


@runtime_checkable
class ReportsIndexSize(Protocol):
    """Bytes the fitted index holds in memory, children left out; None: unknown."""

    def index_bytes(self) -> int | None: ...


@runtime_checkable
class MayBeUnavailable(Protocol):
    """Why this retriever cannot run here, or None."""

    @classmethod
    def unavailable_reason(cls) -> str | None: ...


#: Protocol name -> its declaration.
PROTOCOLS: dict[str, type] = {
    "score": ScoresEveryDocument, "confidence": ReportsConfidence, "sweep": SweepsSettings,
    "sharding": ShardedRetriever, "fitted-state caching": CachesFittedState, "children": HasChildren,
    "unavailable_reason": MayBeUnavailable, "index_bytes": ReportsIndexSize,
}
