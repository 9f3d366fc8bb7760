"""The order of a ranking outside retbench: how trec_eval ranks scored lines, and the scores to
write so that it ranks them as retbench did.

Array functions with no model type, below :mod:`corpora.run` (which builds and writes a
:class:`~corpora.Run` with them) and :mod:`corpora.trec_io` (which reads run files with them).

trec_eval (and pytrec_eval, ir_measures and PyTerrier's evaluation, which run its code) ignores the
rank column: it sorts each query by score descending and breaks ties by doc id *descending* in byte
order (``strcmp``), comparing scores as single-precision floats (its ``TEXT_RESULTS`` holds ``float
sim``). :func:`trec_order` is that rule; :func:`strictly_decreasing` is the smallest change of
scores that makes every evaluator, whatever its tie rule, rank a list as it is ordered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from corpora.id_hashes import duplicate_pairs, factorize_blocks, hash_ids

#: How a reader orders each query's results: ``"trec"``, trec_eval's rule (score descending, ties by
#: doc id descending, any rank column ignored); ``"file"``, the order of the lines or rows.
RunOrder = Literal["trec", "file"]
RUN_ORDERS: tuple[str, ...] = ("trec", "file")

_INT32_MIN = -(2**31)


def as_trec_eval_float(scores: np.ndarray) -> np.ndarray:
    """The scores as trec_eval compares them: it reads each into a C ``float`` (its ``TEXT_RESULTS``
    holds ``float sim``; pytrec_eval shares that code), so two doubles that round to the same
    single-precision value are a tie there. Values beyond float range become infinite, as in C.

    >>> as_trec_eval_float(np.array([1.0, 1.0 + 1e-12])).tolist()
    [1.0, 1.0]
    """
    with np.errstate(over="ignore"):
        return np.asarray(scores, dtype=np.float64).astype(np.float32)


def trec_order(query_codes: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Permutation grouping by query (first appearance), then score descending, ties broken by doc
    id descending in code-point order (= ``strcmp`` on UTF-8 bytes, as trec_eval does). ``scores``
    are the keys as trec_eval compares them (:func:`as_trec_eval_float`).

    >>> trec_order(np.array([0, 0, 0]), np.array(["a", "c", "b"], dtype=object), np.array([1.0, 2.0, 2.0])).tolist()
    [1, 2, 0]
    """
    n = len(scores)
    same_query = query_codes[1:] == query_codes[:-1]
    if bool(np.all(query_codes[1:] >= query_codes[:-1])):
        # Queries already grouped, as in most run files: sort only the queries out of order.
        order = np.arange(n)
        unsorted = np.unique(query_codes[1:][same_query & (scores[1:] > scores[:-1])])
        if len(unsorted):
            entries = np.flatnonzero(np.isin(query_codes, unsorted))
            order[entries] = entries[np.lexsort((-scores[entries], query_codes[entries]))]
        sorted_scores, sorted_queries = (scores[order], query_codes) if len(unsorted) else (scores, query_codes)
    else:
        order = np.lexsort((-scores, query_codes))
        sorted_scores, sorted_queries = scores[order], query_codes[order]
    tied = (sorted_scores[1:] == sorted_scores[:-1]) & (sorted_queries[1:] == sorted_queries[:-1])
    if not tied.any():
        return order
    # Only entries inside a tie group need the (slower) string comparison.
    tied_to_previous = np.concatenate([[False], tied])
    in_group = tied_to_previous.copy()
    in_group[:-1] |= tied
    positions = np.flatnonzero(in_group)
    group_id = np.cumsum(~tied_to_previous[positions])
    members = order[positions]
    text_rank = np.argsort(np.argsort(docs[members].astype(np.str_), kind="stable"), kind="stable")
    within = np.lexsort((-text_rank, group_id))
    order = order.copy()
    order[positions] = members[within]
    return order


@dataclass(frozen=True)
class OrderedColumns:
    """Parallel result columns grouped and ordered: ``query_ids`` in order of first appearance,
    ``offsets`` into ``permutation`` (the row order, query by query) and the doc-id ``hashes``."""

    query_ids: list[str]
    offsets: np.ndarray
    permutation: np.ndarray
    hashes: np.ndarray


def order_columns(query_ids: np.ndarray, doc_ids: np.ndarray, scores: np.ndarray,
                  order: RunOrder) -> OrderedColumns | int:
    """Group parallel columns (one row per result) by query and order each query by ``order``; or
    the index of the first row whose (query, doc) pair repeats an earlier row.

    The hashes that found the repeats are kept for the run (``Run.doc_hashes``), so the evaluator's
    join does not hash the ids again.
    """
    query_codes, query_vocabulary = factorize_blocks(query_ids)
    hashes = hash_ids(doc_ids)
    repeated = duplicate_pairs(query_codes, doc_ids, hashes)
    if len(repeated):
        return int(repeated.min())
    if order == "trec":
        permutation = trec_order(query_codes, doc_ids, as_trec_eval_float(scores))
    else:
        permutation = np.argsort(query_codes, kind="stable")
    counts = np.bincount(query_codes, minlength=len(query_vocabulary))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return OrderedColumns([str(q) for q in query_vocabulary], offsets, permutation, hashes)


def _float32_ordinals(values: np.ndarray) -> np.ndarray:
    """float32 -> int64, increasing with the value, consecutive floats one apart (+0 and -0 both
    0): the value's position on the line of representable single-precision floats."""
    bits = values.view(np.int32).astype(np.int64)
    return np.where(bits < 0, _INT32_MIN - bits, bits)


def _from_float32_ordinals(ordinals: np.ndarray) -> np.ndarray:
    return np.where(ordinals < 0, _INT32_MIN - ordinals, ordinals).astype(np.int32).view(np.float32)


@dataclass(frozen=True)
class ScoreProblem:
    """An entry whose score cannot be written so that its ranking survives: ``entry`` (its index in
    the flat score array) and what is wrong with it."""

    entry: int
    problem: str
    fix: str


def strictly_decreasing(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray | ScoreProblem:
    """The scores to write so that every evaluator ranks each query (a slice ``offsets[j]:offsets[j+1]``
    of ``scores``) exactly as it is ordered; or the first entry for which none exists.

    Inside each query, walking down the ranking with ``f`` the float a score reads as: a score whose
    ``f`` is below the previous written one's is kept as it is; any other is replaced by the float
    just below, ``f(written_i) = min(f(raw_i), nextafter(f(written_(i-1)), -inf))``: the smallest
    change that makes the scores strictly decreasing where trec_eval looks (and so as doubles too,
    rounding being monotone). Vectorised: with ``o`` the position of a float on the line of floats,
    ``o(f(written_i)) = min_(j <= i)(o(f(raw_j)) + j) - i`` within the query. A NaN score, or a
    ``-inf`` that would need a step below ``-inf``, has no such score.

    >>> written = strictly_decreasing(np.array([2.0, 2.0, 1.0]), np.array([0, 3]))
    >>> written.tolist() == [2.0, float(np.nextafter(np.float32(2), np.float32(0))), 1.0]
    True
    """
    raw = np.asarray(scores, dtype=np.float64)
    n = len(raw)
    if not n:
        return raw.copy()
    nan = np.flatnonzero(np.isnan(raw))
    if len(nan):
        return ScoreProblem(int(nan[0]), "the score is NaN, which cannot be ranked", "give every result a real-valued score")
    lengths = np.diff(offsets)
    ordinals = _float32_ordinals(as_trec_eval_float(raw))
    follows = np.ones(n, dtype=bool)
    follows[offsets[:-1][lengths > 0]] = False  # an entry that has a predecessor in its own query
    if not (follows[1:] & (ordinals[1:] >= ordinals[:-1])).any():
        return raw.copy()  # already strictly decreasing inside every query, as floats
    import pandas as pd

    position = np.arange(n, dtype=np.int64)
    query_of = np.repeat(np.arange(len(lengths)), lengths)
    written = pd.Series(ordinals + position).groupby(query_of, sort=False).cummin().to_numpy() - position
    below = np.flatnonzero(written < _float32_ordinals(np.array([-np.inf], dtype=np.float32))[0])
    if len(below):
        return ScoreProblem(int(below[0]), "tied at -inf, which no score can follow",
                            "give results finite scores (or leave them out of the ranking)")
    moved = written != ordinals
    return np.where(moved, _from_float32_ordinals(written).astype(np.float64), raw)
