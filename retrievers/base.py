"""The Retriever seam: the base classes :class:`Retriever` and :class:`ScoreRetriever`, and the calls
through which the harness fits, searches and scores them.

A retriever is fitted once on a :class:`~corpora.Corpus` and then answers batches of
:class:`~corpora.Queries`. Most retrievers only need to say how well every document matches every
query: subclass :class:`ScoreRetriever`, implement :meth:`ScoreRetriever.score`, and inherit a
vectorised :meth:`~ScoreRetriever.search` with the conventions of the article's ``rank_docs``:
scores at or below ``min_score`` are not results, ties break by doc id ascending (the kernels of
:mod:`retrievers.ranking` do the ranking).

The harness calls a retriever through :func:`fit_retriever`, :func:`search_retriever` and
:func:`score_retriever`; nothing wraps a subclass's methods. Those calls:

- give the retriever the run context (:class:`~retrievers.context.RunContext`: the index cache, the
  progress channel, the engine's placement) as ``self.run_context`` for the length of the call;
- decide where the call runs: while an engine places them, a retriever that implements the sharding
  protocol is fitted in shards on the engine's workers and answers ``search`` and ``score`` from them
  (:mod:`retrievers.sharding`), one that declares ``whole_on_worker`` (:func:`runs_whole_elsewhere`)
  may be fitted whole on one worker and answer from there; every other retriever runs here, as written;
- name its failures: an exception raised inside (other than a :class:`~corpora.RetbenchError`, which
  already speaks to the user, and ``MemoryError`` and ``KeyboardInterrupt``, which are not the
  retriever's mistake) comes out as :class:`RetrieverFailed`, naming the retriever, the method and the
  original exception, which stays attached as ``__cause__`` for a traceback. ``SystemExit`` too: a
  retriever that calls ``sys.exit(0)`` must not end ``bench compare`` with exit code 0 and no results,
  a green CI job;
- check what ``score`` returns the moment it returns (:func:`~retrievers.output.check_scores`).
  :meth:`ScoreRetriever.search` and the fusions call ``score`` through :func:`score_retriever` too, so a
  retriever searched by hand gets the same check.

The optional protocols a retriever may implement (``score``, ``confidence``, ``sweep``, the sharding
protocol, fitted-state caching, ``children``, ``unavailable_reason``) are declared in
:mod:`retrievers.protocols`; their defaults are here, on :class:`Retriever`.
"""

from __future__ import annotations

import contextlib
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries, RetbenchError, Run
from retrievers.output import check_scores
from retrievers.ranking import doc_id_order, top_k_rows
from retrievers.cache import State, fitted_state
from retrievers.context import RunContext
from retrievers.protocols import PROTOCOLS, ShardedRetriever
from retrievers.sharding import SHARDS_ATTRIBUTE, is_sharded


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


@contextlib.contextmanager
def _guard(retriever: Retriever, method: str) -> Iterator[None]:
    """Name an exception raised in the block as the retriever's failure in ``method``."""
    try:
        yield
    except (RetbenchError, MemoryError):
        raise  # already a message for the user; out of memory is the machine's limit, not a bug
    except (Exception, SystemExit) as exc:  # sys.exit() inside a retriever is its failure, not the run's end
        raise RetrieverFailed(_label_of(retriever), method, exc) from exc


@contextlib.contextmanager
def _given(retriever: Retriever, context: RunContext) -> Iterator[None]:
    """``retriever.run_context`` is ``context`` for the block, and what it was after."""
    attributes = retriever.__dict__
    had, before = "run_context" in attributes, attributes.get("run_context")
    attributes["run_context"] = context
    try:
        yield
    finally:
        if had:
            attributes["run_context"] = before
        else:
            attributes.pop("run_context", None)


def fit_retriever(retriever: Retriever, corpus: Corpus, context: RunContext | None = None) -> Retriever:
    """Fit ``retriever`` on ``corpus`` in ``context`` (default: the retriever's own ``run_context``), as
    the harness does: a retriever with the sharding protocol goes to the context's placement when an
    engine set one (:mod:`retrievers.sharding`), and so does one that :func:`runs_whole_elsewhere` (the
    placement may fit it whole on a worker, or decline); every other retriever runs ``fit`` here, with the
    context as ``self.run_context``. An exception other than a :class:`~corpora.RetbenchError` comes
    out as :class:`RetrieverFailed`. Returns ``retriever``."""
    context = context if context is not None else retriever.run_context
    retriever.__dict__.pop(SHARDS_ATTRIBUTE, None)
    placement = context.placement
    with _guard(retriever, "fit"), _given(retriever, context):
        elsewhere = None
        if placement is not None and is_sharded(retriever):
            elsewhere = placement.fit(retriever, corpus)
        elif placement is not None and runs_whole_elsewhere(retriever):
            elsewhere = placement.fit_whole(retriever, corpus)
        if elsewhere is not None:
            Retriever.fit(retriever, corpus)
            retriever.__dict__[SHARDS_ATTRIBUTE] = elsewhere
            return retriever
        if placement is not None:
            placement.fitted_here(retriever)
        retriever.fit(corpus)
    return retriever


def runs_whole_elsewhere(retriever: Retriever) -> bool:
    """Whether an engine may fit ``retriever`` whole on one of its workers
    (:meth:`~retrievers.sharding.Placement.fit_whole`): it has no sharding protocol and no children,
    its own class declares ``whole_on_worker = True`` (a subclass inherits nothing: its overrides
    might compute other bits, and the workers might not import it), and it has no ``confidence`` of
    its own (the harness asks that of the object here, which holds no fit)."""
    cls = type(retriever)
    return (not is_sharded(retriever) and not retriever.children and vars(cls).get("whole_on_worker") is True
            and cls.confidence is Retriever.confidence)


def search_retriever(retriever: Retriever, queries: Queries, k: int,
                     context: RunContext | None = None) -> Run | Mapping[str, list[tuple[str, float]]]:
    """``retriever.search(queries, k)`` as the harness calls it: from its shards (or its worker) when
    :func:`fit_retriever` placed it elsewhere, else here with ``context`` (default: its own); failures
    named as in :func:`fit_retriever`. What it returns is checked by the caller
    (:func:`~retrievers.output.as_run`)."""
    shards = retriever.__dict__.get(SHARDS_ATTRIBUTE)
    with _guard(retriever, "search"), _given(retriever, context if context is not None else retriever.run_context):
        return retriever.search(queries, k) if shards is None else shards.search(queries, k)


def score_retriever(retriever: Retriever, queries: Queries,
                    context: RunContext | None = None) -> np.ndarray | sp.spmatrix:
    """``retriever.score(queries)`` as the harness calls it (from its shards when it has them),
    checked the moment it returns (:func:`~retrievers.output.check_scores`); failures named as in
    :func:`fit_retriever`."""
    shards = retriever.__dict__.get(SHARDS_ATTRIBUTE)
    with _guard(retriever, "score"), _given(retriever, context if context is not None else retriever.run_context):
        result = retriever.score(queries) if shards is None else shards.score(queries)  # type: ignore[attr-defined]
    check_scores(result, _label_of(retriever), queries, getattr(retriever, "corpus", None))
    return result


class Retriever(ABC):
    """Base class of every retriever.

    Subclasses set ``name`` (the key ``--systems`` uses) and implement :meth:`search`. Parameters
    are the keyword arguments of ``__init__``; their defaults and annotations are the single
    source for ``bench retrievers``, spec parsing and labels.
    """

    name: ClassVar[str] = ""

    # ----- the optional protocols' defaults (retrievers.protocols declares them all) ------------
    #: The run context of the call in progress (cache, progress, placement), given by the harness's
    #: calls (fit_retriever, search_retriever, score_retriever); the default caches, shows and places nothing.
    run_context: RunContext = RunContext()
    #: The retrievers this one calls (a fusion's); labels, specs and defaults walk them.
    children: tuple[Retriever, ...] = ()
    #: Every shard but the last is a multiple of this many documents (the sharding protocol).
    shard_unit: ClassVar[int] = 1
    #: True, declared on the class itself: fit, search and score compute the same bits in any process
    #: (any BLAS thread count) and the class is importable there, so an engine may fit it whole on one
    #: of its workers (:func:`runs_whole_elsewhere`); False (the default): it runs where the harness runs.
    whole_on_worker: ClassVar[bool] = False

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

        The default only remembers the corpus as ``self.corpus`` (and lets go of the shards of an
        earlier fit on an engine); call it from an override.
        """
        self.__dict__.pop(SHARDS_ATTRIBUTE, None)
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

    def confidence(self, queries: Queries) -> np.ndarray | None:
        """One confidence per query (higher: surer), in the order of ``queries.ids``, for
        risk–coverage; None (the default): read it off the run (``compare(confidence_from=...)``)."""
        return None

    def index_bytes(self) -> int | None:
        """Bytes the fitted index holds in memory (the cost reading's index size), its children's
        left out (the harness adds them); None: unknown. The default sizes retbench's own retrievers
        by what their attributes hold after fit (:func:`retrievers.footprint.held_bytes`: numpy arrays,
        sparse matrices, vocabularies) and says None for any other class, whose state it cannot see
        whole: a plugin declares its own by overriding this (``return self.vectors.nbytes``)."""
        if type(self).__module__.split(".")[0] != "retrievers":
            return None
        from retrievers.footprint import held_bytes

        return held_bytes(self)

    def fitted_state(self, kind: str, params: Mapping[str, Any], corpus: Corpus, build: Callable[[], State],
                     validate: Callable[[State], bool]) -> State:
        """The fitted state (named numpy arrays) of ``kind`` with ``params`` on ``corpus``: from the
        cache of the run context when it holds one that passes ``validate``, else ``build()`` (stored
        in that cache, when there is one). :mod:`retrievers.cache` says how entries are keyed and trusted."""
        return fitted_state(self.run_context.cache, kind, params, corpus, build, validate)

    def prepare_queries(self, queries: Queries) -> Any:
        """What ``search_shard`` and ``score_shard`` receive for ``queries`` (the sharding protocol),
        computed once where the harness runs; the default: the queries themselves."""
        return queries

    @classmethod
    def sweep(cls, settings: Sequence[Retriever], corpus: Corpus, queries: Queries,
              k: int) -> Iterator[Run] | None:
        """The runs of many settings of this class at once, or None (the default): no shortcut.

        ``settings``: unfitted instances of this very class (a grid's points, ``bench tune``). A
        class whose settings share costly work (BM25's tokens and term statistics across k1 and b)
        may return an iterator that yields, in order, what ``setting.fit(corpus).search(queries,
        k)`` would return for each, computing the shared part once; the grid then fits none of them
        one by one. It must give those very rankings: a subclass that changes the scoring must not
        inherit the shortcut (check ``cls``). Each setting carries the run context
        (``setting.run_context``) whose cache and progress the shared work may use.
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
            matrix = score_retriever(self, part, self.run_context)
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


#: The protocols offered by overriding a method of the base class, whose default offers nothing.
_OVERRIDDEN = {"confidence": "confidence", "sweep": "sweep", "unavailable_reason": "unavailable_reason",
               "index_bytes": "index_bytes"}


def offers(retriever: Retriever, protocol: str) -> bool:
    """Whether ``retriever`` implements ``protocol`` (a key of :data:`retrievers.protocols.PROTOCOLS`)
    beyond the base class's default -- for listings and tests; the harness itself just calls the method.

    >>> from retrievers.bm25 import BM25
    >>> [name for name in PROTOCOLS if offers(BM25(), name)]
    ['score', 'sweep', 'sharding', 'fitted-state caching']
    """
    cls = type(retriever)
    if protocol == "score":
        return isinstance(retriever, ScoreRetriever)
    if protocol == "sharding":
        return isinstance(retriever, ShardedRetriever)
    if protocol == "fitted-state caching":
        return isinstance(getattr(cls, "state_version", None), int)
    if protocol == "children":
        return bool(retriever.children)
    if protocol in _OVERRIDDEN:
        return next(c for c in cls.__mro__ if _OVERRIDDEN[protocol] in vars(c)) is not Retriever
    raise KeyError(protocol)
