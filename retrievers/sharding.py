"""The sharding protocol: a retriever fitted and searched in shards of documents, elsewhere.

An engine that spreads work over a cluster (``harness.engines``) cuts the corpus into contiguous
shards of documents, in corpus order (:func:`bounds_for`: at multiples of the retriever's optional
``shard_unit`` documents), and runs a retriever that implements :class:`~retrievers.protocols.ShardedRetriever` in five steps:

1. ``fit_shard(shard)`` on a worker, once per shard: a :class:`ShardFit` whose ``statistics`` go to
   where they are reduced and whose ``state`` stays on the worker;
2. ``reduce_statistics([statistics of shard 0, shard 1, ...])`` once, where the engine chooses (the
   Dask engine: on a worker, so a large vocabulary never reaches the client): one value per shard,
   in shard order, what that shard needs to know of the whole collection (BM25: N, the average
   length, the document frequency of each of its terms);
3. ``index_shard(state, its value)`` on the worker holding ``state``: the shard's index, which stays there;
4. ``search_shard(index, queries, k)`` on that worker: the shard's top ``k`` per query as
   :class:`ShardHits` (positions within the shard, ranked by the seam's rule with the shard's own
   tie ranks, scores at or below the retriever's ``min_score`` left out);
5. optionally ``score_shard(index, queries)``: the shard's (n_queries x shard documents) score matrix,
   sparse or a numpy array, for a fusion that normalises over every document (``weighted``).

Two optional members adapt the steps: ``shard_unit`` (an int attribute, default 1) makes every shard
but the last a multiple of that many documents (``dense`` encodes and scores in fixed blocks of
documents, :mod:`retrievers.dense_blocks`); ``prepare_queries(queries)``, run once where the harness
runs, gives what ``search_shard`` and ``score_shard`` receive in place of the queries (``dense``: the
query vectors, encoded once rather than on every shard).

The shards' hits are merged with the seam's rule (:func:`merge_hits`, :meth:`Shards.merged_hits`:
here, or where the engine chooses; the Dask engine merges on a worker): score descending, then doc
id ascending. The merged run is the run of ``fit(corpus)`` then ``search`` to the last bit
only when each shard computes every document's score with the same floating-point operations in the
same order as the whole index does: a retriever opts in by implementing the protocol, and proves it
with :func:`sharded_search` (the protocol run in this process), equal byte for byte to its own
``search``. A retriever without the protocol is fitted and searched where the harness runs, as
always, and so is a subclass that overrides ``fit``, ``search`` or ``score`` of the class implementing
the protocol (:func:`is_sharded`). The retriever is copied unfitted (:func:`unfitted_copy`) and pickled to the workers, so the
methods must not rely on anything ``fit`` would set.

A retriever without the protocol may still be fitted elsewhere, whole: one that declares
``whole_on_worker = True`` on its own class (:func:`retrievers.base.runs_whole_elsewhere`; ``lsa``) computes the same
bits in any process, so an engine may fit and search it on one worker, which reads the corpus itself
(:meth:`Placement.fit_whole`).

While an engine runs, the run context (:mod:`retrievers.context`) carries its :class:`Placement`; the
harness's calls (:func:`retrievers.base.fit_retriever` and its siblings) hand the ``fit`` of every
retriever with the protocol to it (and of every retriever fitted whole elsewhere), and that
retriever's later ``search`` and ``score`` to the :class:`FittedElsewhere` (:class:`Shards`) it returned.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries, RetbenchError, Run
from retrievers.protocols import ShardedRetriever, ShardFit, ShardHits
from retrievers.ranking import doc_id_order

__all__ = ["FittedElsewhere", "Placement", "ShardFit", "ShardHits", "ShardedRetriever", "Shards", "bounds_for",
           "is_sharded", "merge_hits", "shard_bounds", "shard_of", "sharded_search",
           "unfitted_copy"]

#: The attribute of a retriever fitted in shards that holds its :class:`Shards`.
SHARDS_ATTRIBUTE = "_retbench_shards"


def is_sharded(retriever: object) -> bool:
    """Whether ``retriever`` is fitted in shards while an engine places them: it implements
    :class:`ShardedRetriever`, and its class does not override ``fit``, ``search`` or ``score`` of the
    class that implements the protocol (a subclass's override would be skipped by the shards, so
    such a subclass runs where the harness runs)."""
    if not isinstance(retriever, ShardedRetriever):
        return False
    cls = type(retriever)
    provider = next(c for c in cls.__mro__ if "search_shard" in vars(c))
    owner = [c for c in cls.__mro__ if issubclass(c, provider) and c is not provider][-1:] or [provider]
    return all(getattr(cls, method, None) is getattr(owner[0], method, None) for method in ("fit", "search", "score"))


def require_fitted_here(retriever: Any, attribute: str, method: str) -> None:
    """Refuse ``method`` on a retriever whose fit left no ``attribute`` here: one fitted in shards on an
    engine (its shards answer through the harness's calls, :func:`retrievers.base.search_retriever`), or
    one never fitted."""
    if attribute in retriever.__dict__:
        return
    label = retriever.label
    if SHARDS_ATTRIBUTE in retriever.__dict__:
        raise RetbenchError(f"retriever {label!r} was fitted in shards on an engine, so its {method} runs there. "
                            "Fix: call it through retrievers.search_retriever or score_retriever, or fit it again "
                            "here (retriever.fit(corpus))")
    raise RetbenchError(f"retriever {label!r} is not fitted. Fix: call retriever.fit(corpus) before {method}")


def shard_bounds(n_docs: int, n_shards: int, unit: int = 1) -> list[tuple[int, int]]:
    """``n_shards`` contiguous ``(start, stop)`` ranges over ``n_docs`` documents, in order, made of
    whole units of ``unit`` documents (the last unit may be short), their numbers of units differing
    by at most one; never an empty shard (fewer shards when there are fewer units).

    >>> shard_bounds(10, 3)
    [(0, 3), (3, 6), (6, 10)]
    >>> shard_bounds(10, 3, unit=4)
    [(0, 4), (4, 8), (8, 10)]
    """
    units = -(-n_docs // unit)
    n_shards = max(1, min(n_shards, units))
    edges = [min(n_docs, unit * (units * s // n_shards)) for s in range(n_shards + 1)]
    return list(zip(edges[:-1], edges[1:]))


def bounds_for(retriever: Any, n_docs: int, n_shards: int) -> list[tuple[int, int]]:
    """The shards of ``n_docs`` documents for ``retriever``: :func:`shard_bounds` at multiples of its
    ``shard_unit`` (1 when it has none)."""
    unit = getattr(retriever, "shard_unit", 1)
    if isinstance(unit, bool) or not isinstance(unit, int) or unit < 1:
        raise RetbenchError(f"retriever {retriever.label!r}: shard_unit must be an int >= 1, got {unit!r}. "
                            "Fix: set shard_unit to the number of documents a shard's size must be a multiple of")
    return shard_bounds(n_docs, n_shards, unit)


def shard_of(corpus: Corpus, start: int, stop: int) -> Corpus:
    """Documents ``start:stop`` of ``corpus`` as a corpus of their own (ids, texts, titles, metadata)."""
    return Corpus(corpus.ids[start:stop], corpus.texts[start:stop],
                  corpus.titles[start:stop] if corpus.titles is not None else None,
                  corpus.metadata[start:stop] if corpus.metadata is not None else None,
                  name=corpus.name, source=corpus.source)


def merge_hits(parts: Sequence[ShardHits], starts: Sequence[int], k: int,
               tie_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The top ``k`` per query over every shard's hits: ``(offsets, doc positions, scores)``.

    Shard ``s``'s positions are offset by ``starts[s]`` into the corpus; the order is score
    descending, then ``tie_rank`` (the corpus's :func:`~retrievers.ranking.doc_id_order`) ascending,
    the seam's rule. Exact: each shard's top k holds every document of that shard that can reach the
    overall top k, ties at the k-th place included.
    """
    n_queries = len(parts[0].offsets) - 1 if parts else 0
    rows = np.concatenate([np.repeat(np.arange(n_queries), np.diff(p.offsets)) for p in parts]) if parts \
        else np.empty(0, dtype=np.int64)
    docs = np.concatenate([p.docs.astype(np.int64) + start for p, start in zip(parts, starts)]) if parts \
        else np.empty(0, dtype=np.int64)
    scores = np.concatenate([p.scores for p in parts]) if parts else np.empty(0)
    order = np.lexsort((tie_rank[docs], -scores, rows))
    rows, docs, scores = rows[order], docs[order], scores[order]
    counts = np.bincount(rows, minlength=n_queries)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    keep = np.arange(len(rows)) - np.repeat(first, counts) < k
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(np.minimum(counts, k), out=offsets[1:])
    return offsets, docs[keep], scores[keep]


class FittedElsewhere(ABC):
    """A retriever fitted where an engine placed it (its shards, or the whole of it on a worker):
    answers ``search`` and ``score`` as the retriever fitted here would."""

    label: str

    @abstractmethod
    def search(self, queries: Queries, k: int) -> Run | Any:
        """What the retriever's ``search(queries, k)`` returns (a :class:`~corpora.Run` over the corpus here)."""

    @abstractmethod
    def score(self, queries: Queries) -> sp.csr_matrix | np.ndarray:
        """What the retriever's ``score(queries)`` returns."""

    def close(self) -> None:
        """Let go of what the engine holds for it (the default holds nothing)."""

    def worker_seconds(self) -> dict[str, dict[str, float]]:
        """The seconds the engine's workers computed for it, by step (``fit``; ``search``: every
        search and score it answered) and worker: ``{"fit": {worker: seconds}, ...}``; empty when
        the engine does not say (the default)."""
        return {}


class Shards(FittedElsewhere):
    """A retriever's fitted shards, wherever they are: answers ``search`` and ``score`` as the
    retriever fitted on the whole corpus would. Subclasses say how to ask every shard."""

    def __init__(self, retriever: Any, corpus: Corpus, bounds: Sequence[tuple[int, int]]):
        self.retriever = retriever  # the unfitted copy whose methods the shards run
        self.label = str(retriever.label)
        self.corpus = corpus
        self.bounds = list(bounds)
        self._tie_rank: np.ndarray | None = None

    @abstractmethod
    def search_parts(self, queries: Any, k: int) -> list[ShardHits]:
        """Every shard's ``search_shard(index, queries, k)``, in shard order (``queries`` as
        :meth:`prepared` made them)."""

    @abstractmethod
    def score_parts(self, queries: Any) -> list[sp.csr_matrix | np.ndarray]:
        """Every shard's ``score_shard(index, queries)``, in shard order (``queries`` as :meth:`prepared`
        made them)."""

    def prepared(self, queries: Queries) -> Any:
        """What the shards receive for ``queries``: the retriever's ``prepare_queries(queries)``,
        computed here once, or the queries themselves."""
        prepare = getattr(self.retriever, "prepare_queries", None)
        return queries if prepare is None else prepare(queries)

    def tie_rank(self) -> np.ndarray:
        """The corpus's :func:`~retrievers.ranking.doc_id_order`, computed once: :func:`merge_hits`' tie-break."""
        if self._tie_rank is None:
            self._tie_rank = doc_id_order(self.corpus.ids)
        return self._tie_rank

    def merged_hits(self, queries: Any, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`merge_hits` of every shard's top ``k`` (``queries`` as :meth:`prepared` made them),
        merged here; an engine may merge them where the hits are, with the same function."""
        return merge_hits(self.search_parts(queries, k), [a for a, _ in self.bounds], k, self.tie_rank())

    def search(self, queries: Queries, k: int) -> Run:
        offsets, docs, scores = self.merged_hits(self.prepared(queries), k)
        return Run(queries.ids, self.corpus.id_array(), offsets, docs, scores)

    def score(self, queries: Queries) -> sp.csr_matrix | np.ndarray:
        """The shards' score matrices side by side: (n_queries x n_docs), documents in corpus order;
        a numpy array when every shard gave one (a dense retriever's zeros are scores)."""
        parts = self.score_parts(self.prepared(queries))
        if parts and all(isinstance(part, np.ndarray) for part in parts):
            return np.hstack(parts)
        matrix = sp.hstack([sp.csr_matrix(part) for part in parts], format="csr")
        matrix.sort_indices()
        return matrix


class Placement(ABC):
    """Where the retrievers with the protocol are fitted while an engine runs (the run context's
    ``placement``, :mod:`retrievers.context`)."""

    @abstractmethod
    def fit(self, retriever: Any, corpus: Corpus) -> Shards:
        """Fit ``retriever`` (a :class:`ShardedRetriever`, left unfitted) in shards of ``corpus``."""

    def fit_whole(self, retriever: Any, corpus: Corpus) -> FittedElsewhere | None:
        """Fit ``retriever`` (one that :func:`~retrievers.base.runs_whole_elsewhere`, left unfitted) whole on ``corpus``
        where the engine chooses, or None (the default): it is fitted where the harness runs."""
        return None

    def fitted_here(self, retriever: Any) -> None:
        """Hear that ``retriever``, fitted neither in shards nor whole elsewhere, is fitted where the
        harness runs."""


def unfitted_copy(retriever: Any) -> Any:
    """A new object of ``retriever``'s class made with the same ``__init__`` arguments (and label):
    what is sent to the workers, without whatever a previous ``fit`` left on the original."""
    cls = type(retriever)
    signature = inspect.signature(cls.__init__)
    given = dict(retriever.__dict__.get("_init_arguments", {}))
    given.pop(next(iter(signature.parameters)), None)  # self
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for name, value in given.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            keywords.update(value)
        elif kind is inspect.Parameter.POSITIONAL_ONLY:
            positional.append(value)
        else:
            keywords[name] = value
    copy = cls(*positional, **keywords)
    if "_given_label" in retriever.__dict__:
        copy.__dict__["_given_label"] = retriever.__dict__["_given_label"]
    return copy


class _InProcessShards(Shards):
    """Shards held in this process: the protocol run step by step, for tests and plugin authors."""

    def __init__(self, retriever: Any, corpus: Corpus, bounds: Sequence[tuple[int, int]], indexes: list[Any]):
        super().__init__(retriever, corpus, bounds)
        self.indexes = indexes

    def search_parts(self, queries: Any, k: int) -> list[ShardHits]:
        return [self.retriever.search_shard(index, queries, k) for index in self.indexes]

    def score_parts(self, queries: Any) -> list[sp.csr_matrix | np.ndarray]:
        if not hasattr(self.retriever, "score_shard"):
            raise RetbenchError(f"retriever {self.label!r} searches in shards but has no score_shard, which a "
                                "fusion that normalises scores needs. Fix: implement score_shard, or fuse it with rrf")
        return [_matrix(self.retriever.score_shard(index, queries)) for index in self.indexes]


def _matrix(part: Any) -> sp.csr_matrix | np.ndarray:
    """A shard's score matrix as a numpy array (kept whole) or a CSR matrix."""
    return part if isinstance(part, np.ndarray) else sp.csr_matrix(part)


def fit_in_process(retriever: Any, corpus: Corpus, n_shards: int) -> Shards:
    """Run the protocol's fitting steps here, shard after shard (what an engine does on its workers)."""
    copy = unfitted_copy(retriever)
    bounds = bounds_for(copy, len(corpus), n_shards)
    fits = [copy.fit_shard(shard_of(corpus, a, b)) for a, b in bounds]
    reduced = reduce_statistics(copy, [f.statistics for f in fits])
    indexes = [copy.index_shard(f.state, s) for f, s in zip(fits, reduced)]
    return _InProcessShards(copy, corpus, bounds, indexes)


def reduce_statistics(retriever: Any, statistics: list[Any]) -> list[Any]:
    """The protocol's step 2, wherever an engine runs it: every shard's statistics in, one value
    per shard out, checked (a short list would leave shards without statistics)."""
    parts = list(retriever.reduce_statistics(statistics))
    if len(parts) != len(statistics):
        raise RetbenchError(f"retriever {retriever.label!r}: reduce_statistics gave {len(parts)} value(s) for "
                            f"{len(statistics)} shard(s). Fix: return one value per shard, in shard order")
    return parts


def sharded_search(retriever: Any, corpus: Corpus, queries: Queries, k: int, n_shards: int) -> Run:
    """``retriever``'s run when fitted in ``n_shards`` shards and merged, computed in this process: a
    retriever that implements the protocol must return the same bytes as ``fit(corpus).search(queries, k)``.

    >>> from retrievers.bm25 import BM25
    >>> corpus = Corpus(["a", "b", "c"], ["red apple", "green apple pie", "blue sky"])
    >>> sharded_search(BM25(), corpus, Queries(["q"], ["apple pie"]), 2, n_shards=2).items("q")[0][0]
    'b'
    """
    if not is_sharded(retriever):
        raise RetbenchError(f"retriever {retriever.label!r} does not implement the sharding protocol "
                            "(retrievers.sharding.ShardedRetriever). Fix: implement fit_shard, reduce_statistics, "
                            "index_shard and search_shard")
    return fit_in_process(retriever, corpus, n_shards).search(queries, k)
