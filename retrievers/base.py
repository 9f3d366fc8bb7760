"""The Retriever seam: one small base class, and a score-matrix helper that does the ranking.

A retriever is fitted once on a :class:`~corpora.Corpus` and then answers batches of
:class:`~corpora.Queries`. Most retrievers only need to say how well every document matches every
query: subclass :class:`ScoreRetriever`, implement :meth:`ScoreRetriever.score`, and inherit a
vectorised :meth:`~ScoreRetriever.search` with the conventions of the article's ``rank_docs``:
scores at or below ``min_score`` are not results, ties break by doc id ascending.

The seam guards every subclass's ``fit``, ``search`` and ``score``: an exception raised inside one
(other than a :class:`~corpora.RetbenchError`, which already speaks to the user, and
``MemoryError``, ``KeyboardInterrupt`` and ``SystemExit``, which are not the retriever's mistake)
comes out as :class:`RetrieverFailed`, naming the retriever, the method and the original exception,
which stays attached as ``__cause__`` for a traceback. What ``score`` returns is checked the moment
it returns (:func:`check_scores`), so a fusion that calls its children's ``score`` directly gets the
same check.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries, RetbenchError, Run


#: The methods of a retriever whose exceptions are reported as :class:`RetrieverFailed`.
GUARDED_METHODS = ("fit", "search", "score")


class RetrieverFailed(RetbenchError):
    """An exception raised inside a retriever's ``fit``, ``search`` or ``score``.

    The message names the retriever (its label), the method and the exception's type and text; the
    exception itself is ``__cause__`` (``bench --debug`` prints its traceback).

    >>> str(RetrieverFailed("mine", "fit", ZeroDivisionError("division by zero")))
    "retriever 'mine' failed in fit: ZeroDivisionError: division by zero. Fix: correct the retriever's fit"
    """

    def __init__(self, owner: str, method: str, error: Exception):
        self.owner = owner
        self.method = method
        self.error = error
        text = str(error).strip() or "(no message)"
        super().__init__(f"retriever {owner!r} failed in {method}: {type(error).__name__}: {text}. "
                         f"Fix: correct the retriever's {method}")


def _label_of(retriever: Retriever) -> str:
    """The retriever's label for a message; the class name when the label itself fails."""
    try:
        return str(retriever.label)
    except Exception:  # a plugin whose label property raises must not hide the first error
        return type(retriever).__name__


def _guarded(function: Callable[..., Any], method: str) -> Callable[..., Any]:
    """``function`` (a retriever's ``method``) with its exceptions named, and ``score``'s result checked."""

    @functools.wraps(function)
    def guarded(self: Retriever, *args: Any, **kwargs: Any) -> Any:
        try:
            result = function(self, *args, **kwargs)
        except (RetbenchError, MemoryError):
            raise  # already a message for the user; out of memory is the machine's limit, not a bug
        except Exception as exc:
            raise RetrieverFailed(_label_of(self), method, exc) from exc
        if method == "score":
            queries = args[0] if args else kwargs.get("queries")
            check_scores(result, _label_of(self), queries, getattr(self, "corpus", None))
        return result

    guarded.__retbench_guarded__ = True  # type: ignore[attr-defined]
    return guarded


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
        self.corpus = corpus
        return self

    @abstractmethod
    def search(self, queries: Queries, k: int) -> Run | Mapping[str, list[tuple[str, float]]]:
        """Return, for every query, at most ``k`` (doc id, score) pairs, best first.

        Either a :class:`~corpora.Run` or any mapping of query id (``queries.ids``) -> a list of
        ``(doc id, score)`` with doc ids of the fitted corpus. A query left out gets no results.
        The harness checks it with :func:`as_run`: unknown ids, a document twice in one ranking
        and NaN scores are errors that name this retriever.
        """

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


def doc_id_order(ids: list[str]) -> np.ndarray:
    """Rank of each doc id in ascending string order: the tie-break key."""
    order = np.argsort(np.asarray(ids, dtype=str), kind="stable")
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[order] = np.arange(len(ids))
    return ranks


def top_k_rows(
    scores: np.ndarray, k: int, tie_rank: np.ndarray, min_score: float
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per row: the column indices of the top ``k`` scores above ``min_score``, and their scores.

    Order is score descending, ties by ``tie_rank`` ascending. Exact: every column tied with the
    k-th score is a candidate before the final sort, so ties at the boundary break correctly. A
    sampled lower bound of the k-th score discards most columns of a long row first
    (:func:`retrievers.index.top_k`).
    """
    from retrievers.index import top_k

    out_idx: list[np.ndarray] = []
    out_scores: list[np.ndarray] = []
    for row in scores:
        idx, values = top_k(None, row, k, tie_rank, min_score)
        out_idx.append(idx)
        out_scores.append(values)
    return out_idx, out_scores


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
        document (:func:`check_scores`).
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
        return Run(queries.ids, np.asarray(corpus.ids, dtype=object), np.array(offsets), flat_idx, flat_val)


def check_scores(matrix: object, owner: str, queries: Queries | None, corpus: Corpus | None) -> None:
    """Check a score matrix: shape (queries x corpus documents), values finite or ``-inf``.

    One vectorised pass (``value < inf`` is False exactly for NaN and ``+inf``); a sparse matrix
    checks only its stored values. Raises :class:`~corpora.RetbenchError` naming ``owner``.
    """
    shape = getattr(matrix, "shape", None)
    if shape is None:  # a list of rows, say: read as numpy would
        try:
            converted = np.asarray(matrix, dtype=np.float64)
        except (TypeError, ValueError):
            converted = None
        if converted is None or converted.ndim == 0:
            raise RetbenchError(f"retriever {owner!r}: score returned {type(matrix).__name__}, not a matrix of "
                                "numbers. Fix: return an (n_queries x n_docs) numpy array or scipy sparse matrix")
        matrix, shape = converted, converted.shape
    expected = (len(queries) if queries is not None else None, len(corpus) if corpus is not None else None)
    if len(shape) != 2 or any(want is not None and got != want for got, want in zip(shape, expected)):
        wanted = "(" + ", ".join("?" if n is None else str(n) for n in expected) + ")"
        raise RetbenchError(f"retriever {owner!r}: score returned a matrix of shape {tuple(shape)}, expected "
                            f"{wanted} (one row per query, one column per document of the corpus, in corpus "
                            "order). Fix: score every document for every query")
    if sp.issparse(matrix) and matrix.format not in ("csr", "csc", "coo"):
        matrix = matrix.tocsr()  # formats whose .data lines up with .tocoo()'s
    values = matrix.data if sp.issparse(matrix) else np.asarray(matrix)
    if values.dtype.kind not in "biuf":
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            raise RetbenchError(f"retriever {owner!r}: score returned values of type {values.dtype}, not numbers. "
                                "Fix: return float scores") from None
    bad = ~(values < np.inf)
    if not bad.any():
        return
    if sp.issparse(matrix):  # only now pay for the coordinates, to name the first bad cell
        coo = sp.coo_matrix(matrix)
        rows, cols, cells = coo.row[bad], coo.col[bad], coo.data[bad]
        first = np.lexsort((cols, rows))[0]
        row, col, value = rows[first], cols[first], cells[first]
    else:
        row, col = np.unravel_index(int(np.argmax(bad)), values.shape)
        value = values[row, col]
    query = repr(queries.ids[row]) if queries is not None else f"row {row}"
    doc = repr(corpus.ids[col]) if corpus is not None else f"column {col}"
    raise RetbenchError(f"retriever {owner!r}: score of doc {doc} for query {query} is {float(value)!r}; "
                        "scores must be finite numbers, or -inf for never a result. Fix: replace NaN and "
                        "infinite scores in score()")


def rank_sparse_rows(
    matrix: sp.csr_matrix, k: int, tie_rank: np.ndarray, query_ids: list[str], doc_ids: list[str]
) -> Run:
    """Rank the stored entries of each CSR row: score descending, ties by ``tie_rank``, top ``k``."""
    matrix = matrix.tocsr()
    matrix.sum_duplicates()
    lengths = np.diff(matrix.indptr)
    rows = np.repeat(np.arange(matrix.shape[0]), lengths)
    order = np.lexsort((tie_rank[matrix.indices], -matrix.data, rows))
    rows, cols, vals = rows[order], matrix.indices[order], matrix.data[order]
    position = np.arange(len(rows)) - np.repeat(matrix.indptr[:-1], lengths)
    keep = position < k
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=matrix.shape[0]))])
    return Run(query_ids, np.asarray(doc_ids, dtype=object), offsets, cols.astype(np.int64), vals)


def as_run(result: Run | Mapping, corpus: Corpus, queries: Queries, owner: str) -> Run:
    """Validate what a retriever's ``search`` returned and re-index it on the corpus.

    Accepts a :class:`Run` or any mapping of query id -> ranked (doc id, score) pairs. Unknown doc
    ids, a document twice in one ranking, NaN scores and unknown query ids are errors naming the
    retriever. Queries the result does not mention get an empty ranking.
    """
    if isinstance(result, Run):
        fast = _run_on_corpus(result, corpus, queries)
        if fast is not None:
            return fast
        mapping_ids = result.query_ids
        get = result.items
    elif isinstance(result, Mapping):
        mapping_ids = [str(q) for q in result]
        get = lambda q: result[q] if q in result else result.get(type(next(iter(result)))(q), [])  # noqa: E731
    else:
        raise RetbenchError(
            f"retriever {owner!r}: search returned {type(result).__name__}; expected a Run or a mapping "
            "of query id -> [(doc id, score), ...]"
        )
    known_queries = set(queries.ids)
    unknown = [q for q in mapping_ids if q not in known_queries]
    if unknown:
        raise RetbenchError(f"retriever {owner!r}: search returned unknown query id(s) {unknown[:5]}")
    position = corpus.index_of()
    offsets = [0]
    doc_index: list[int] = []
    scores: list[float] = []
    present = set(mapping_ids)
    for q in queries.ids:
        try:
            pairs = list(get(q)) if q in present else []
        except TypeError:
            raise RetbenchError(f"retriever {owner!r}: query {q!r}: expected a list of (doc id, score) pairs, "
                                f"got {type(get(q)).__name__}") from None
        seen: set[int] = set()
        for pair in pairs:
            try:
                if isinstance(pair, (str, bytes)):  # a bare doc id would unpack letter by letter
                    raise TypeError
                doc, score = pair
            except (TypeError, ValueError):
                raise RetbenchError(f"retriever {owner!r}: query {q!r}: expected (doc id, score) pairs, got {pair!r}") from None
            j = position.get(str(doc))
            if j is None:
                raise RetbenchError(f"retriever {owner!r}: query {q!r}: doc id {doc!r} is not in the corpus")
            if j in seen:
                raise RetbenchError(f"retriever {owner!r}: query {q!r}: doc id {doc!r} is ranked twice")
            try:
                score = float(score)
            except (TypeError, ValueError):
                raise RetbenchError(f"retriever {owner!r}: query {q!r}: doc id {doc!r} has a score that is not "
                                    f"a number: {score!r}") from None
            if score != score:
                raise RetbenchError(f"retriever {owner!r}: query {q!r}: doc id {doc!r} has a NaN score")
            seen.add(j)
            doc_index.append(j)
            scores.append(score)
        offsets.append(len(doc_index))
    return Run(queries.ids, np.asarray(corpus.ids, dtype=object), np.array(offsets),
               np.array(doc_index, dtype=np.int64), np.array(scores, dtype=np.float64))


def _run_on_corpus(run: Run, corpus: Corpus, queries: Queries) -> Run | None:
    """:func:`as_run` for a :class:`Run`, vectorised (a million pairs in milliseconds, not seconds).

    None when the run has anything :func:`as_run` must reject (an unknown query or doc id, a NaN
    score, a document twice in one ranking): the item-by-item path then names it precisely.
    """
    corpus_ids = np.asarray(corpus.ids, dtype=object)
    if len(run.doc_ids) == len(corpus_ids) and np.array_equal(run.doc_ids, corpus_ids):
        positions = run.doc_index
    else:
        used = np.unique(run.doc_index)
        index = corpus.index_of()
        mapped = np.fromiter((index.get(str(d), -1) for d in run.doc_ids[used]), dtype=np.int64, count=len(used))
        if (mapped < 0).any():
            return None
        lookup = np.zeros(len(run.doc_ids), dtype=np.int64)
        lookup[used] = mapped
        positions = lookup[run.doc_index]
    if np.isnan(run.scores).any():
        return None
    row_of = {q: j for j, q in enumerate(run.query_ids)}
    if len(row_of) != len(run.query_ids) or not set(row_of) <= set(queries.ids):
        return None
    rows = np.array([row_of.get(q, -1) for q in queries.ids], dtype=np.int64)
    present = rows >= 0
    rows = np.where(present, rows, 0)  # a query the run does not hold gets an empty ranking
    bounds = np.append(run.offsets, run.offsets[-1])  # row 0 exists even in a run of no query
    lengths = np.where(present, bounds[rows + 1] - bounds[rows], 0)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    take = np.arange(offsets[-1]) + np.repeat(bounds[rows] - offsets[:-1], lengths)
    docs, scores = positions[take], run.scores[take]
    keys = np.sort(np.repeat(np.arange(len(rows), dtype=np.int64), lengths) * max(1, len(corpus_ids)) + docs)
    if len(keys) > 1 and not (keys[1:] != keys[:-1]).all():  # a document twice in one ranking
        return None
    return Run(queries.ids, corpus_ids, offsets, docs, scores)


def _slice_queries(queries: Queries, start: int, stop: int) -> Queries:
    if start == 0 and stop >= len(queries):
        return queries
    return Queries(queries.ids[start:stop], queries.texts[start:stop],
                   {k: v[start:stop] for k, v in queries.facets.items()}, source=queries.source)
