"""Children shared by the points of a grid: fitted once, each answer computed once.

In ``weighted(bm25,lsa,alpha=0:1:0.1)`` the eleven points differ only in alpha, yet fitting each
point as it stands would fit bm25 and lsa eleven times and score every query eleven times. A
:class:`SharedBuilder` builds the points' spec trees so that the same child spec is the same
object in every point: a :class:`Shared` wrapper around one retriever, which fits it once per
corpus and keeps what it answered -- ``search(queries, k)`` (what ``rrf`` reads) and, for a score
retriever, ``score(queries)`` (what ``weighted`` reads) -- keyed by the queries' ids and texts and
``k``, so that the next point reads it back. A child whose own parameters are swept is a different
spec at each of its values, so it is fitted once per value.

Kept answers are made read-only, so a fusion that would change one in place fails loudly instead
of handing the next point altered scores. They are kept up to :data:`KEEP_BYTES` per child (a dense
score child keeps queries x documents floats); past that an answer is computed again when asked,
which costs time, never a different number.

A comparison shares the same way (:func:`share_systems`): in ``bm25,lsa,rrf(bm25,lsa)`` the fusion's
children are the same systems as two of the comparison's, so each is fitted and searched once and
the fusion reads the rankings already computed. Two retrievers are the same system when they are of
the same class with the same parameters and the same children (:func:`system_key`), whatever their
labels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries, Run
from retrievers.base import Retriever, ScoreRetriever, fit_retriever, score_retriever, search_retriever
from retrievers.grid import spec_text
from retrievers.run_file import RunSystem
from retrievers.spec import Spec, build

__all__ = ["KEEP_BYTES", "Shared", "SharedBuilder", "SharedScores", "SharedSystems", "share_systems", "system_key"]

#: Bytes of answers one shared child keeps for the next grid point.
KEEP_BYTES = 1 << 30


def _frozen_size(value: Any) -> int | None:
    """Make ``value``'s arrays read-only and return their size in bytes (None: cannot be frozen)."""
    if isinstance(value, np.ndarray):
        arrays = [value]
    elif sp.issparse(value):
        arrays = [getattr(value, name) for name in ("data", "indices", "indptr", "row", "col", "offsets")
                  if isinstance(getattr(value, name, None), np.ndarray)]
    elif isinstance(value, Run):
        arrays = [value.offsets, value.doc_index, value.scores]  # doc_ids: the corpus's, shared by every run
    else:
        return None  # e.g. a plain mapping a plugin returned: not kept, asked again next time
    for array in arrays:
        array.flags.writeable = False
    return sum(array.nbytes for array in arrays)


class Shared(Retriever):
    """One retriever, fitted once per corpus, whose searches are kept for the next grid point.

    Its label and name are the wrapped retriever's, so a fusion labels it as before.
    """

    def __init__(self, inner: Retriever):
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]  # the wrapped class's, for the fusion's label
        self.label = inner.label
        self.fits = 0  # how often the wrapped retriever was fitted (once per corpus)
        self._fitted_on: Corpus | None = None
        self._kept: dict[tuple[Any, ...], Any] = {}
        self._kept_bytes = 0

    def fit(self, corpus: Corpus) -> Shared:
        if self._fitted_on is not corpus:
            fit_retriever(self.inner, corpus, self.run_context)
            self.fits += 1
            self._fitted_on = corpus
            self._kept.clear()
            self._kept_bytes = 0
        Retriever.fit(self, corpus)
        return self

    def _answer(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        if key in self._kept:
            return self._kept[key]
        value = compute()
        size = _frozen_size(value)
        if size is not None and self._kept_bytes + size <= KEEP_BYTES:
            self._kept[key] = value
            self._kept_bytes += size
        return value

    @staticmethod
    def _key(queries: Queries) -> tuple[Any, ...]:
        return (tuple(queries.ids), tuple(queries.texts))

    def index_bytes(self) -> int | None:
        """The wrapped retriever's (a fusion's index size counts its children's)."""
        return self.inner.index_bytes()

    def search(self, queries: Queries, k: int) -> Run | Mapping[str, list[tuple[str, float]]]:
        return self._answer(("search", k, *self._key(queries)), lambda: search_retriever(self.inner, queries, k, self.run_context))


class SharedScores(Shared, ScoreRetriever):
    """:class:`Shared` for a score retriever: its score matrices are kept too (``weighted`` reads them)."""

    def __init__(self, inner: ScoreRetriever):
        super().__init__(inner)
        self.min_score = inner.min_score  # type: ignore[misc]  # rank as the wrapped retriever does

    def fit(self, corpus: Corpus) -> SharedScores:
        Shared.fit(self, corpus)
        self._tie_rank = getattr(self.inner, "_tie_rank", None)
        return self

    def score(self, queries: Queries) -> np.ndarray | sp.spmatrix:
        inner: ScoreRetriever = self.inner  # type: ignore[assignment]
        return self._answer(("score", *self._key(queries)), lambda: score_retriever(inner, queries, self.run_context))


class SharedBuilder:
    """Builds grid points from specs so that equal child specs are one :class:`Shared` object.

    Points themselves are built fresh (each is fitted and searched once); every child, at any depth,
    is looked up by its spec text (:func:`retrievers.grid.spec_text`) first.
    """

    def __init__(self) -> None:
        self.children: dict[str, Shared] = {}

    def point(self, spec: Spec) -> Retriever:
        return build(spec, make_child=self._child)

    def _child(self, spec: Spec) -> Retriever:
        key = spec_text(spec)
        if key not in self.children:
            inner = build(spec, make_child=self._child)
            self.children[key] = SharedScores(inner) if isinstance(inner, ScoreRetriever) else Shared(inner)
        return self.children[key]


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool)) or (
        isinstance(value, (tuple, list)) and all(_plain(v) for v in value))


def system_key(retriever: Retriever) -> tuple[Any, ...]:
    """What makes two retrievers the same system: their class, their parameters (a number, a string
    or a tuple of them by value, any other object -- a run given in Python, a model -- only as
    itself, never its equal) and their children's keys. A parameter is read as the retriever holds it
    (the attribute of its name, where there is one): a parameter described by a string but held as an
    object (a PyTerrier pipeline, whose description two different pipelines can share) is that
    object, never its description. A :class:`Shared` wrapper, and a run given in Python (a
    :class:`~retrievers.run_file.RunSystem` without a path), are only ever themselves."""
    cls = type(retriever)
    if isinstance(retriever, Shared) or (isinstance(retriever, RunSystem) and retriever.path is None):
        return (cls.__module__, cls.__qualname__, id(retriever))
    params = []
    for name, value in sorted(retriever.get_params().items()):
        held = getattr(retriever, name, value)
        if _plain(value) and _plain(held):
            params.append((name, repr(value)))
        else:
            params.append((name, "object", id(held if not _plain(held) else value)))
    return (cls.__module__, cls.__qualname__, tuple(params), tuple(system_key(c) for c in retriever.children))


class SharedSystems:
    """A comparison's systems with each distinct one fitted and searched once (:func:`share_systems`)."""

    def __init__(self, retrievers: Sequence[Retriever]):
        first: dict[tuple[Any, ...], Retriever] = {}
        counts: dict[tuple[Any, ...], int] = {}
        keys: dict[int, tuple[Any, ...]] = {}

        def canonical(node: Retriever) -> Retriever:
            key = system_key(node)
            counts[key] = counts.get(key, 0) + 1
            if key in first:
                return first[key]
            first[key] = node
            keys[id(node)] = key
            if node.children and not isinstance(node, Shared):
                node.children = tuple(canonical(child) for child in node.children)  # type: ignore[misc]
            return node

        self._first = {id(retriever): canonical(retriever) for retriever in retrievers}
        self._wrappers: dict[tuple[Any, ...], Shared] = {}
        self._keys, self._counts = keys, counts
        self._rewritten: list[tuple[Retriever, tuple[Retriever, ...]]] = []
        for node in first.values():
            if node.children and not isinstance(node, Shared):
                wrapped = tuple(self._shared(child) for child in node.children)
                if wrapped != node.children:
                    self._rewritten.append((node, node.children))
                    node.children = wrapped  # type: ignore[misc]

    def _shared(self, node: Retriever) -> Retriever:
        key = self._keys[id(node)]
        # a run file is read as it is (a fusion of runs asks it things a wrapper does not pass on)
        if self._counts[key] < 2 or isinstance(node, (Shared, RunSystem)):
            return node
        if key not in self._wrappers:
            self._wrappers[key] = SharedScores(node) if isinstance(node, ScoreRetriever) else Shared(node)
        return self._wrappers[key]

    def fitted(self, retriever: Retriever) -> Retriever:
        """The retriever that stands for ``retriever`` (one of the systems given): itself, or the first
        of its system met, which is the one fitted (its parameters and confidence are read there)."""
        return self._first[id(retriever)]

    def runner(self, retriever: Retriever) -> Retriever:
        """The retriever to fit and search for ``retriever``: :meth:`fitted`, or its :class:`Shared`
        wrapper when its system occurs more than once."""
        return self._shared(self.fitted(retriever))

    def restore(self) -> None:
        """Put the fusions' own children back (the fitted retrievers, not their wrappers): once every
        system is searched, so that what runs next (a latency's repeated searches) computes anew."""
        for node, children in self._rewritten:
            node.children = children  # type: ignore[misc]
        self._rewritten = []


@contextmanager
def share_systems(retrievers: Sequence[Retriever]) -> Iterator[SharedSystems]:
    """Fit and search each distinct system of a comparison once (:func:`system_key`), whichever
    systems use it: inside the ``with`` block, a system or fusion child that occurs more than once in
    ``retrievers``' trees is one :class:`Shared` object (fitted once, its rankings and scores kept for
    the next reader): fit and search :meth:`SharedSystems.runner` of each system, record
    :meth:`SharedSystems.fitted`.

    A fusion's children are rewritten to the first retriever of each system met (the objects the
    comparison fits: after :meth:`SharedSystems.restore`, which the block's end calls too, a
    fusion's child is that fitted retriever, not a wrapper, so its label, parameters and the
    parameters it chose for the corpus read as before); a system that occurs once is untouched, so a
    comparison without repeats runs as it always did. A run file (``run(PATH)``) is never wrapped: it
    is one object, read at each fit."""
    shared = SharedSystems(retrievers)
    try:
        yield shared
    finally:
        shared.restore()
