"""The order of a ranking outside retbench: how trec_eval ranks scored lines, and the scores to
write so that it ranks them as retbench did.

Array functions with no model type, below :mod:`corpora.run` (which builds and writes a
:class:`~corpora.Run` with them) and :mod:`corpora.trec_io` (which reads run files with them).

trec_eval (and pytrec_eval, ir_measures and PyTerrier's evaluation, which run its code) ignores the
rank column: it sorts each query by score descending and breaks ties by doc id *descending* in byte
order (``strcmp``). How it reads a score depends on its version: trec_eval 10 (the current release)
reads each into a C ``double``; trec_eval 9.x, and pytrec_eval, which runs 9.x's code, into a
``float`` (its ``TEXT_RESULTS`` held ``float sim`` until 2023), so two doubles that round to the
same single-precision value tie there. :data:`SCORE_READINGS` names the two; :func:`trec_order` is
the rule, given the scores as one of them compares them (:func:`comparison_keys`);
:func:`reading_dependent_queries` finds the queries whose ranking depends on the choice;
:func:`strictly_decreasing` is the smallest change of scores that makes every evaluator, whatever
its tie rule and reading, rank a list as it is ordered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from corpora.id_hashes import duplicate_pairs, factorize_blocks, hash_ids

#: How a reader orders each query's results: ``"trec"``, trec_eval 10's rule (score descending,
#: scores compared as doubles, ties by doc id descending, any rank column ignored); ``"trec9"``, the
#: same rule with scores compared as single-precision floats, as trec_eval 9.x and pytrec_eval do;
#: ``"file"``, the order of the lines or rows.
RunOrder = Literal["trec", "trec9", "file"]
RUN_ORDERS: tuple[str, ...] = ("trec", "trec9", "file")
#: How each trec_eval reading compares scores: the order -> the dtype of its comparison keys.
SCORE_READINGS: dict[str, type[np.floating]] = {"trec": np.float64, "trec9": np.float32}
#: What a results file records for each order (``bench evaluate --format json``'s settings).
SCORES_COMPARED_AS: dict[str, str | None] = {"trec": "float64", "trec9": "float32", "file": None}

_INT32_MIN = -(2**31)


def as_float32(scores: np.ndarray) -> np.ndarray:
    """The scores as trec_eval 9.x and pytrec_eval compare them: each read into a C ``float``, so two
    doubles that round to the same single-precision value are a tie there. Values beyond float range
    become infinite, as in C.

    >>> as_float32(np.array([1.0, 1.0 + 1e-12])).tolist()
    [1.0, 1.0]
    """
    with np.errstate(over="ignore"):
        return np.asarray(scores, dtype=np.float64).astype(np.float32)


def comparison_keys(scores: np.ndarray, order: str) -> np.ndarray:
    """The scores as the trec_eval reading ``order`` (a key of :data:`SCORE_READINGS`) compares
    them: the doubles themselves for ``"trec"`` (trec_eval 10), :func:`as_float32` for ``"trec9"``.

    >>> [comparison_keys(np.array([0.1000000001, 0.1]), o).tolist() for o in ("trec", "trec9")]
    [[0.1000000001, 0.1], [0.10000000149011612, 0.10000000149011612]]
    """
    values = np.asarray(scores, dtype=np.float64)
    return as_float32(values) if SCORE_READINGS[order] is np.float32 else values


def trec_order(query_codes: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Permutation grouping by query (first appearance), then score descending, ties broken by doc
    id descending in code-point order (= ``strcmp`` on UTF-8 bytes, as trec_eval does). ``scores``
    are the keys as a trec_eval reading compares them (:func:`comparison_keys`).

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


def reading_dependent_queries(offsets: np.ndarray, scores: np.ndarray, doc_ids: np.ndarray,
                              doc_index: np.ndarray) -> np.ndarray:
    """The queries (positions in ``offsets``) whose ranking differs between trec_eval 10's reading of
    the scores (doubles) and trec_eval 9.x's (single-precision floats): some of their scores collide
    as floats but not as doubles, and the doc-id tie break puts them in another order.

    The run's entries (query ``j`` is ``offsets[j]:offsets[j+1]``, doc id ``doc_ids[doc_index[i]]``)
    must be ordered by one of the two readings, as a run file read with ``order="trec"`` or
    ``"trec9"`` is: equal floats are then neighbours, so one pass over neighbouring scores finds the
    blocks of equal floats that hold different doubles. As floats, such a block is one tie, ranked
    by doc id descending; as doubles, by score first. The two agree exactly when the doubles do not
    increase along the block's doc-id-descending order (equal doubles fall back on the same rule).

    >>> reading_dependent_queries(np.array([0, 2]), np.array([0.1000000001, 0.1]), np.array(["a", "b"], dtype=object),
    ...                           np.array([0, 1])).tolist()
    [0]
    """
    raw = np.asarray(scores, dtype=np.float64)
    lengths = np.diff(offsets)
    query_of = np.repeat(np.arange(len(lengths)), lengths)
    floats = as_float32(raw)
    same_float = (query_of[1:] == query_of[:-1]) & (floats[1:] == floats[:-1])
    collide = same_float & (raw[1:] != raw[:-1])
    if not collide.any():
        return np.empty(0, dtype=np.int64)
    block = np.cumsum(np.concatenate([[True], ~same_float]))  # runs of equal floats within a query
    entries = np.flatnonzero(np.isin(block, block[1:][collide]))
    text_rank = np.argsort(np.argsort(doc_ids[doc_index[entries]].astype(np.str_), kind="stable"), kind="stable")
    entries = entries[np.lexsort((-text_rank, block[entries]))]  # each block by doc id descending
    same_block = block[entries][1:] == block[entries][:-1]
    rises = same_block & (raw[entries][1:] > raw[entries][:-1])
    return np.unique(query_of[entries[1:][rises]])


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
    if order in SCORE_READINGS:
        permutation = trec_order(query_codes, doc_ids, comparison_keys(scores, order))
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
    change that makes the scores strictly decreasing as trec_eval 9.x reads them, and so as doubles
    too (trec_eval 10's reading; rounding is monotone): both readings rank the list as it is.
    Vectorised: with ``o`` the position of a float on the line of floats,
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
    ordinals = _float32_ordinals(as_float32(raw))
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
