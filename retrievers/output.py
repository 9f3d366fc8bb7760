"""What a retriever returns, checked: :func:`as_run` for ``search``, :func:`check_scores` for ``score``.

The seam (:mod:`retrievers.base`) checks every ``score`` the moment it returns; the harness and the
fusions pass every ``search`` result through :func:`as_run`, which also cuts every ranking to the
``k`` that was asked for (in the order returned), so that no retriever is scored deeper than another.
Mistakes (an unknown doc id, a document twice in one ranking, a query that was not asked, a score
that is not a number or not finite, a matrix of the wrong shape) raise :class:`~corpora.RetbenchError`,
naming the retriever.

One rule for a score, whichever method gave it (:func:`score_problem`, :func:`bad_scores`): a real
number (an int, a float, a bool, numpy's too; never a string, even one that reads as a number) that
is finite. ``score`` may also give ``-inf``, which means "never a result" there; a ranking that
``search`` returns holds results only, so ``-inf`` is refused in it like ``+inf`` and NaN.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries, RetbenchError, Run
from corpora.wording import counted


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
    if values.dtype.kind not in _NUMBER_KINDS:
        values = _as_numbers(values, owner, "score")
    bad = bad_scores(values, allow_negative_infinity=True)
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
                        f"{SCORE_RULE}, or -inf for never a result. Fix: replace NaN and +inf in score()")


#: What every score a retriever gives must be (the messages of both checks say it).
SCORE_RULE = "scores must be finite numbers"
#: numpy kinds of the arrays whose values are numbers: bool, signed and unsigned int, float.
_NUMBER_KINDS = "biuf"


def score_problem(value: object, allow_negative_infinity: bool = False) -> str | None:
    """What is wrong with one score, or None: not a real number (a string is not one, even "1.0"),
    NaN, ``+inf``, or ``-inf`` unless allowed.

    >>> score_problem(0.5), score_problem("1.0"), score_problem(float("inf"))
    (None, "is not a number: '1.0' (str)", 'is inf')
    """
    if not isinstance(value, (numbers.Real, np.bool_)):
        return f"is not a number: {value!r} ({type(value).__name__})"
    number = float(value)
    if number != number:
        return "is nan"
    if number == np.inf or (number == -np.inf and not allow_negative_infinity):
        return f"is {number!r}"
    return None


def bad_scores(values: np.ndarray, allow_negative_infinity: bool = False) -> np.ndarray:
    """:func:`score_problem`'s rule over an array of numbers at once: True where a score is NaN,
    ``+inf``, or ``-inf`` unless allowed."""
    values = np.asarray(values, dtype=np.float64)
    return ~(values < np.inf) if allow_negative_infinity else ~np.isfinite(values)


def _as_numbers(values: np.ndarray, owner: str, method: str) -> np.ndarray:
    """An array of another kind (objects, strings) as floats when every value is a number, else the
    error naming the first that is not."""
    flat = values.ravel()
    for value in flat:
        if not isinstance(value, (numbers.Real, np.bool_)):
            raise RetbenchError(f"retriever {owner!r}: {method} returned a value that is not a number: "
                                f"{value!r} ({type(value).__name__}); {SCORE_RULE}. Fix: return float scores")
    return flat.astype(np.float64).reshape(values.shape)


def as_run(result: Run | Mapping, corpus: Corpus, queries: Queries, owner: str, k: int | None = None,
           note: Callable[[str], None] | None = None) -> Run:
    """Validate what a retriever's ``search`` returned, cut it to ``k`` and re-index it on the corpus.

    Accepts a :class:`Run` or any mapping of query id -> ranked (doc id, score) pairs. Unknown doc
    ids, a document twice in one ranking, a score that breaks :data:`SCORE_RULE` (a string, NaN,
    an infinity) and query ids that were not asked (or one given twice) are errors naming the
    retriever; every pair returned is checked, cut or not. Queries the result does not mention get
    an empty ranking. ``k``: the results asked for per query; a longer ranking keeps its first ``k``
    pairs in the order returned (the order the harness evaluates, never re-sorted), and ``note``
    hears how many queries were cut.
    """
    if isinstance(result, Run):
        fast = _run_on_corpus(result, corpus, queries)
        if fast is not None:
            return _cut(fast, k, owner, note)
        mapping_ids = result.query_ids
        get = result.items
    elif isinstance(result, Mapping):
        mapping_ids = [str(q) for q in result]
        get = lambda q: result[q] if q in result else result.get(type(next(iter(result)))(q), [])  # noqa: E731
    else:
        raise RetbenchError(
            f"retriever {owner!r}: search returned {type(result).__name__}; expected a Run or a mapping "
            "of query id -> [(doc id, score), ...]. Fix: return {query id: [(doc id, score), ...]}"
        )
    known_queries = set(queries.ids)
    unknown = [q for q in mapping_ids if q not in known_queries]
    if unknown:
        raise RetbenchError(f"retriever {owner!r}: search returned unknown query id(s) {unknown[:5]}, which were "
                            "not among the queries asked. Fix: answer only the ids of queries.ids")
    if len(set(mapping_ids)) != len(mapping_ids):
        twice = sorted({q for q in mapping_ids if mapping_ids.count(q) > 1})
        raise RetbenchError(f"retriever {owner!r}: search returned query id(s) {twice[:5]} twice. Fix: return one "
                            "ranking per query")
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
            problem = score_problem(score)
            if problem is not None:
                raise RetbenchError(f"retriever {owner!r}: query {q!r}: the score of doc id {doc!r} {problem}; "
                                    f"{SCORE_RULE}. Fix: return a finite float score for every result of search()")
            seen.add(j)
            doc_index.append(j)
            scores.append(float(score))
        offsets.append(len(doc_index))
    run = Run(queries.ids, corpus.id_array(), np.array(offsets),
              np.array(doc_index, dtype=np.int64), np.array(scores, dtype=np.float64))
    return _cut(run, k, owner, note)


def _cut(run: Run, k: int | None, owner: str, note: Callable[[str], None] | None) -> Run:
    """``run`` with every ranking cut to its first ``k`` entries (the run itself when none is longer)."""
    if k is None:
        return run
    lengths = run.lengths()
    longer = lengths > k
    if not longer.any():
        return run
    kept = np.minimum(lengths, k)
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(kept, out=offsets[1:])
    take = np.arange(offsets[-1]) + np.repeat(run.offsets[:-1] - offsets[:-1], kept)
    if note is not None:
        note(f"retriever {owner!r} returned more than the {k} results asked for in {int(longer.sum())} of "
             f"{counted(len(lengths), 'query')} (up to {int(lengths.max())}); each ranking was cut to its first {k}, "
             "in the "
             "order returned, as every retriever's is")
    return Run(run.query_ids, run.doc_ids, offsets, run.doc_index[take], run.scores[take])


def _run_on_corpus(run: Run, corpus: Corpus, queries: Queries) -> Run | None:
    """:func:`as_run` for a :class:`Run`, vectorised rather than pair by pair
    (``benchmarks/speed_paths.py`` ``as_run``).

    None when the run has anything :func:`as_run` must reject (an unknown query or doc id, a score
    that is not finite, a document twice in one ranking): the item-by-item path then names it precisely.
    """
    corpus_ids = corpus.id_array()
    if run.doc_ids is corpus_ids or (len(run.doc_ids) == len(corpus_ids) and np.array_equal(run.doc_ids, corpus_ids)):
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
    if bad_scores(run.scores).any():
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
