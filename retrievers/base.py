"""The Retriever seam: the base classes :class:`Retriever` and :class:`ScoreRetriever`, and the guard
around their methods.

A retriever is fitted once on a :class:`~corpora.Corpus` and then answers batches of
:class:`~corpora.Queries`. Most retrievers only need to say how well every document matches every
query: subclass :class:`ScoreRetriever`, implement :meth:`ScoreRetriever.score`, and inherit a
vectorised :meth:`~ScoreRetriever.search` with the conventions of the article's ``rank_docs``:
scores at or below ``min_score`` are not results, ties break by doc id ascending (the kernels of
:mod:`retrievers.ranking` do the ranking).

The seam guards every subclass's ``fit``, ``search`` and ``score``: an exception raised inside one
(other than a :class:`~corpora.RetbenchError`, which already speaks to the user, and ``MemoryError``
and ``KeyboardInterrupt``, which are not the retriever's mistake) comes out as
:class:`RetrieverFailed`, naming the retriever, the method and the original exception, which stays
attached as ``__cause__`` for a traceback. ``SystemExit`` too: a retriever that calls
``sys.exit(0)`` must not end ``bench compare`` with exit code 0 and no results, a green CI job. What ``score`` returns is checked the moment
it returns (:func:`~retrievers.output.check_scores`), so a fusion that calls its children's ``score`` directly gets the
same check.

While an engine runs, the guard also decides where a method runs: a retriever that implements the
sharding protocol is fitted in shards on the engine's workers and answers ``search`` and ``score``
from them (:mod:`retrievers.sharding`); every other retriever runs here, as written.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries, RetbenchError, Run
from retrievers.output import check_scores
from retrievers.ranking import doc_id_order, top_k_rows
from retrievers.sharding import SHARDS_ATTRIBUTE, Placement, current_placement, is_sharded

#: The methods of a retriever whose exceptions are reported as :class:`RetrieverFailed`.
GUARDED_METHODS = ("fit", "search", "score")


class RetrieverFailed(RetbenchError):
    """An exception raised inside a retriever's ``fit``, ``search`` or ``score`` (or ``__init__``,
    ``confidence``), ``SystemExit`` included.

    The message names the retriever (its label), the method and the exception's type and text; the
    exception itself is ``__cause__`` (``bench --debug`` prints its traceback).

    >>> str(RetrieverFailed("mine", "fit", ZeroDivisionError("division by zero")))
    "retriever 'mine' failed in fit: ZeroDivisionError: division by zero. Fix: correct the retriever's fit"
    >>> str(RetrieverFailed("mine", "search", SystemExit(0)))
    "retriever 'mine' called sys.exit(0) in search, which would end the whole run. Fix: raise an exception in \
the retriever's search instead of exiting"
    """

    def __init__(self, owner: str, method: str, error: BaseException):
        self.owner = owner
        self.method = method
        self.error = error
        if isinstance(error, SystemExit):
            code = "" if error.code is None else repr(error.code)
            super().__init__(f"retriever {owner!r} called sys.exit({code}) in {method}, which would end the "
                             f"whole run. Fix: raise an exception in the retriever's {method} instead of exiting")
            return
        text = str(error).strip() or "(no message)"
        super().__init__(f"retriever {owner!r} failed in {method}: {type(error).__name__}: {text}. "
                         f"Fix: correct the retriever's {method}")


def _label_of(retriever: Retriever) -> str:
    """The retriever's label for a message; the class name when the label itself fails."""
    try:
        return str(retriever.label)
    except (Exception, SystemExit):  # a plugin whose label property raises must not hide the first error
        return type(retriever).__name__


def _guarded(function: Callable[..., Any], method: str) -> Callable[..., Any]:
    """``function`` (a retriever's ``method``) with its exceptions named, and ``score``'s result checked."""

    @functools.wraps(function)
    def guarded(self: Retriever, *args: Any, **kwargs: Any) -> Any:
        try:
            elsewhere = _placed_call(self, method)
            result = function(self, *args, **kwargs) if elsewhere is None else elsewhere(*args, **kwargs)
        except (RetbenchError, MemoryError):
            raise  # already a message for the user; out of memory is the machine's limit, not a bug
        except (Exception, SystemExit) as exc:  # sys.exit() inside a retriever is its failure, not the run's end
            raise RetrieverFailed(_label_of(self), method, exc) from exc
        if method == "score":
            queries = args[0] if args else kwargs.get("queries")
            check_scores(result, _label_of(self), queries, getattr(self, "corpus", None))
        return result

    guarded.__retbench_guarded__ = True  # type: ignore[attr-defined]
    return guarded


def _placed_call(retriever: Retriever, method: str) -> Callable[..., Any] | None:
    """Where an engine runs this call (:mod:`retrievers.sharding`), or None: here, as written.

    A ``fit`` while an engine's placement is installed goes to it when the retriever implements the
    sharding protocol; a ``search`` or ``score`` of a retriever fitted so goes to its shards. A ``fit``
    here lets go of the shards of an earlier one.
    """
    if method == "fit":
        retriever.__dict__.pop(SHARDS_ATTRIBUTE, None)
        placement = current_placement()
        if placement is None:
            return None
        if not is_sharded(retriever):
            placement.fitted_here(retriever)
            return None
        return functools.partial(_fit_in_shards, retriever, placement)
    shards = retriever.__dict__.get(SHARDS_ATTRIBUTE)
    return None if shards is None else getattr(shards, method)


def _fit_in_shards(retriever: Retriever, placement: Placement, corpus: Corpus) -> Retriever:
    shards = placement.fit(retriever, corpus)
    Retriever.fit(retriever, corpus)
    retriever.__dict__[SHARDS_ATTRIBUTE] = shards
    return retriever


class Retriever(ABC):
    """Base class of every retriever.

    Subclasses set ``name`` (the key ``--systems`` uses) and implement :meth:`search`. Parameters
    are the keyword arguments of ``__init__``; their defaults and annotations are the single
    source for ``bench retrievers``, spec parsing and labels.
    """

    name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method in GUARDED_METHODS:
            function = cls.__dict__.get(method)
            if inspect.isfunction(function) and not getattr(function, "__retbench_guarded__", False):
                setattr(cls, method, _guarded(function, method))

    def __new__(cls, *args: Any, **kwargs: Any) -> Retriever:
        # Remember the arguments, so labels and manifests show parameters that __init__ did not store.
        instance = super().__new__(cls)
        try:
            bound = inspect.signature(cls.__init__).bind(instance, *args, **kwargs)
        except TypeError:  # __init__ will raise the same error with a better message
            bound = None
        instance._init_arguments = dict(bound.arguments) if bound is not None else {}
        return instance

    def fit(self, corpus: Corpus) -> Retriever:
        """Index ``corpus`` (``.ids``, ``.texts``, ``.titles``, ``.full_texts``); return ``self``.

        The default only remembers the corpus as ``self.corpus``; call it from an override.
        """
        placement = current_placement()
        if placement is not None and not is_sharded(self):
            placement.fitted_here(self)  # this base fit is not guarded: a plugin may inherit it as it is
        self.corpus = corpus
        return self

    @abstractmethod
    def search(self, queries: Queries, k: int) -> Run | Mapping[str, list[tuple[str, float]]]:
        """Return, for every query, at most ``k`` (doc id, score) pairs, best first.

        Either a :class:`~corpora.Run` or any mapping of query id (``queries.ids``) -> a list of
        ``(doc id, score)`` with doc ids of the fitted corpus. A query left out gets no results.
        The harness checks it with :func:`~retrievers.output.as_run`: unknown ids, a document twice
        in one ranking and a score that is not a finite number are errors that name this retriever;
        a ranking longer than ``k`` is cut to its first ``k`` pairs, in the order returned.
        """

    @classmethod
    def sweep(cls, settings: Sequence[Retriever], corpus: Corpus, queries: Queries,
              k: int) -> Iterator[Run] | None:
        """The runs of many settings of this class at once, or None (the default): no shortcut.

        ``settings``: unfitted instances of this very class (a grid's points, ``bench tune``). A
        class whose settings share costly work (BM25's tokens and term statistics across k1 and b)
        may return an iterator that yields, in order, what ``setting.fit(corpus).search(queries,
        k)`` would return for each, computing the shared part once; the grid then fits none of them
        one by one. It must give those very rankings: a subclass that changes the scoring must not
        inherit the shortcut (check ``cls``).
        """
        return None

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this retriever cannot run here (e.g. a missing optional dependency and how to
        install it), or None when it can. ``bench retrievers`` shows it; the default is None."""
        return None

    # ----- parameters and labels -------------------------------------------------------------
    @classmethod
    def parameters(cls) -> dict[str, inspect.Parameter]:
        """The keyword parameters of ``__init__`` (name -> inspect.Parameter), in order."""
        signature = inspect.signature(cls.__init__)
        return {
            n: p for n, p in signature.parameters.items()
            if n != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        }

    def _param_value(self, name: str) -> tuple[bool, Any]:
        """(known, value) of one parameter: the attribute of that name, else the argument given."""
        if hasattr(self, name):
            return True, getattr(self, name)
        given = self.__dict__.get("_init_arguments", {})
        return (True, given[name]) if name in given else (False, None)

    def get_params(self) -> dict[str, Any]:
        """Every parameter's value (name -> value), defaults included."""
        out = {}
        for n, p in self.parameters().items():
            known, value = self._param_value(n)
            if known:
                out[n] = value
            elif p.default is not inspect.Parameter.empty:
                out[n] = p.default
        return out

    def non_default_params(self) -> dict[str, Any]:
        """The parameters whose value differs from the ``__init__`` default (name -> value)."""
        out = {}
        for n, p in self.parameters().items():
            known, value = self._param_value(n)
            if known and (p.default is inspect.Parameter.empty or _differs(value, p.default)):
                out[n] = value
        return out

    @property
    def label(self) -> str:
        """The name the results use: the one given (``--systems mine=bm25(k1=0.9)``), else
        :meth:`default_label`."""
        given = self.__dict__.get("_given_label")
        return given if given is not None else self.default_label()

    @label.setter
    def label(self, value: str) -> None:
        self.__dict__["_given_label"] = value

    def default_label(self) -> str:
        """The name plus every non-default parameter, e.g. ``bm25(k1=0.9)``."""
        params = self.non_default_params()
        if not params:
            return self.name
        return f"{self.name}({','.join(f'{k}={_format_value(v)}' for k, v in params.items())})"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label}>"


def _differs(value: Any, default: Any) -> bool:
    try:
        return bool(value != default)
    except (TypeError, ValueError):  # e.g. an array, whose != has no single truth value
        return value is not default


def _format_value(value: Any) -> str:
    if isinstance(value, Retriever):
        return value.label
    if isinstance(value, float):
        return repr(value)
    return str(value)


class ScoreRetriever(Retriever):
    """A retriever defined by a query x document score matrix.

    Implement :meth:`score`; :meth:`search` ranks each row. Documents scoring ``<= min_score`` are
    not results (a zero score is not a match); ties break by doc id ascending.
    """

    min_score: ClassVar[float] = 1e-9
    batch_cells: ClassVar[int] = 1 << 24  # query x doc cells scored at once; bounds peak memory

    def fit(self, corpus: Corpus) -> ScoreRetriever:
        super().fit(corpus)
        self._tie_rank = doc_id_order(corpus.ids)
        return self

    @abstractmethod
    def score(self, queries: Queries) -> np.ndarray | sp.spmatrix:
        """An (n_queries x n_docs) matrix, dense or sparse; higher is better, documents in corpus order.

        Every score is a finite number or ``-inf`` (never a result; ``weighted`` marks a query that
        no child matched this way). A matrix of another shape, or holding NaN or ``+inf``, is an
        error naming the retriever, the expected and actual shape or the first bad query and
        document (:func:`~retrievers.output.check_scores`).
        """

    def search(self, queries: Queries, k: int) -> Run:
        corpus: Corpus = self.corpus
        batch = max(1, self.batch_cells // max(1, len(corpus)))
        offsets = [0]
        indices: list[np.ndarray] = []
        values: list[np.ndarray] = []
        for start in range(0, len(queries), batch):
            part = _slice_queries(queries, start, start + batch)
            matrix = self.score(part)
            dense = matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix, dtype=np.float64)
            idx, val = top_k_rows(dense, k, self._tie_rank, self.min_score)
            for i, v in zip(idx, val):
                indices.append(i)
                values.append(v)
                offsets.append(offsets[-1] + len(i))
        flat_idx = np.concatenate(indices) if indices else np.empty(0, dtype=np.int64)
        flat_val = np.concatenate(values) if values else np.empty(0)
        return Run(queries.ids, corpus.id_array(), np.array(offsets), flat_idx, flat_val)


def _slice_queries(queries: Queries, start: int, stop: int) -> Queries:
    if start == 0 and stop >= len(queries):
        return queries
    return Queries(queries.ids[start:stop], queries.texts[start:stop],
                   {k: v[start:stop] for k, v in queries.facets.items()}, source=queries.source)
