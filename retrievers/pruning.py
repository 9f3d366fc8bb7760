"""Safe dynamic pruning for BM25 top k: MaxScore over a :class:`~retrievers.index.BM25Index`, exact.

Exhaustive search adds up every posting of every query term. Most of that work is spent on the
frequent terms, whose postings are long and whose weights are small; MaxScore (Turtle & Flood 1995)
skips them where they cannot change the top k. For one query with distinct terms ``T``:

1. a lower bound ``theta`` of the k-th best score: the exact scores of a few documents of the terms
   with the highest maximum weight (any k exactly scored documents bound the k-th best from below);
2. the *non-essential* terms ``N``: the most terms, taken by ascending maximum weight, whose maximum
   weights add up (in ascending term id order, as scores are added) to less than ``theta``. A document
   holding only terms of ``N`` scores at most that sum: strictly below ``theta``, so it is not in the
   top k (not even as a tie). Only documents of the *essential* terms ``E = T - N`` are candidates;
3. their partial scores over ``E`` come from the exhaustive kernel (one sparse product per block),
   restricted to ``E``: the long postings of ``N`` are never walked;
4. a candidate whose partial score plus the maximum weights of the non-essential terms not yet looked
   up is below ``theta`` is dropped; the rest look up one non-essential term at a time (binary search
   in its postings), most promising first, dropping candidates as the bound tightens;
5. the survivors are scored exactly: every query term's weight, looked up, added in ascending term id
   order from 0.0, which is the order and the arithmetic of the exhaustive product (``x + 0.0 == x``
   for an absent term), so each score has the exhaustive path's bits; :func:`~retrievers.ranking.top_k`
   ranks them with the same tie rule.

Bounds are compared with a relative margin of ``4 (|T| + 2) eps``, more than the rounding of a sum of
``|T|`` positive terms can move it, so floating-point order never drops a document that belongs.
Where no ``theta`` can be had (fewer than k matches) or no term is non-essential, a query is scored
exhaustively, in the same product.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from retrievers.index import BM25Index

#: Documents exactly scored for the first lower bound, per k: the best by one term's weight.
_SEED_FACTOR = 2


def max_weights(index: BM25Index) -> np.ndarray:
    """Each term's largest weight over all documents (0.0 for a term with no posting)."""
    bounds = np.zeros(index.n_terms)
    for number, weights in enumerate(index.weights):
        indptr = index.indptr[number]
        held = np.flatnonzero(indptr[1:] > indptr[:-1])
        if len(held):
            bounds[held] = np.maximum(bounds[held], np.maximum.reduceat(weights, indptr[held]))
    return bounds


def lookup(index: BM25Index, term: int, docs: np.ndarray) -> np.ndarray:
    """The weight of ``term`` in each of ``docs`` (global indices, ascending), 0.0 where absent."""
    out = np.zeros(len(docs))
    width = index.block_docs
    n_blocks = len(index.indptr)
    cuts = [0] + np.searchsorted(docs, np.arange(1, n_blocks) * width).tolist() + [len(docs)] \
        if n_blocks > 1 else [0, len(docs)]
    for number in range(n_blocks):
        first, last = cuts[number], cuts[number + 1]
        start, stop = int(index.indptr[number, term]), int(index.indptr[number, term + 1])
        if first == last or start == stop:
            continue
        postings = index.docs[number][start:stop]
        wanted = docs[first:last]
        if number:
            wanted = wanted - number * width
        position = np.searchsorted(postings, wanted.astype(postings.dtype, copy=False))
        np.minimum(position, stop - start - 1, out=position)
        found = postings[position] == wanted
        out[first:last][found] = index.weights[number][start + position[found]]
    return out


def exact_scores(index: BM25Index, terms: Sequence[int], docs: np.ndarray,
                 known: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """BM25 of ``docs`` for distinct ascending ``terms``, bit for bit the exhaustive product's sum.

    ``known[t]`` gives term ``t``'s weights for ``docs`` where they were looked up already.
    """
    scores = np.zeros(len(docs))
    for term in terms:
        scores += known[term] if known and term in known else lookup(index, term, docs)
    return scores


def ordered_sum(values: Sequence[float]) -> float:
    """``values`` added left to right from 0.0, as the product adds a document's weights."""
    total = 0.0
    for value in values:
        total += value
    return total


class QueryPlan:
    """One query's split into essential and non-essential terms, with its lower bound ``theta``."""

    def __init__(self, terms: list[int], essential: list[int], theta: float | None):
        self.terms = terms
        self.essential = essential
        self.theta = theta

    @property
    def exhaustive(self) -> bool:
        return len(self.essential) == len(self.terms)


def plan(index: BM25Index, bounds: np.ndarray, df: np.ndarray, terms: list[int], k: int,
         min_score: float) -> QueryPlan:
    """Choose the essential terms of one query (distinct, ascending ``terms``), see the module docstring."""
    if len(terms) < 2:
        return QueryPlan(terms, terms, None)
    by_bound = sorted(terms, key=lambda t: (-bounds[t], t))
    seeds, total = [], 0
    for term in by_bound[:-1]:  # the seed terms: enough postings for k documents
        seeds.append(term)
        total += int(df[term])
        if total >= _SEED_FACTOR * k:
            break
    if total < k:
        return QueryPlan(terms, terms, None)
    docs = np.concatenate([index.postings(t)[0] for t in seeds])
    weights = np.concatenate([index.postings(t)[1] for t in seeds])
    wanted = min(len(weights), _SEED_FACTOR * k)
    best = np.argpartition(weights, len(weights) - wanted)[len(weights) - wanted:]
    docs = np.unique(docs[best])
    scores = exact_scores(index, terms, docs)
    scores = scores[scores > min_score]
    if len(scores) < k:
        return QueryPlan(terms, terms, None)
    theta = float(np.partition(scores, len(scores) - k)[len(scores) - k])
    margin = 1.0 + 4.0 * (len(terms) + 2) * np.finfo(np.float64).eps
    non_essential: list[int] = []
    for term in reversed(by_bound):  # smallest maximum weight first
        trial = sorted(non_essential + [term])
        if ordered_sum([bounds[t] for t in trial]) * margin >= theta:
            break
        non_essential = trial
    essential = [t for t in terms if t not in set(non_essential)]
    return QueryPlan(terms, essential, theta)


def finish(index: BM25Index, bounds: np.ndarray, query: QueryPlan, candidates: np.ndarray,
           partial: np.ndarray, k: int, min_score: float) -> tuple[np.ndarray, np.ndarray]:
    """The pruned query's candidates and their exact scores, from partial scores over its essential terms.

    ``candidates`` are distinct global doc indices; only those that may reach ``theta`` are returned.
    """
    theta = query.theta if query.theta is not None else -np.inf
    if len(candidates) >= k:  # the best k by partial score, scored exactly: a bound at least as high
        best = np.sort(candidates[np.argpartition(partial, len(partial) - k)[len(partial) - k:]])
        scores = exact_scores(index, query.terms, best)
        scores = scores[scores > min_score]
        if len(scores) >= k:
            theta = max(theta, float(np.partition(scores, len(scores) - k)[len(scores) - k]))
    margin = 1.0 + 4.0 * (len(query.terms) + 2) * np.finfo(np.float64).eps
    essential = set(query.essential)
    pending = sorted((t for t in query.terms if t not in essential), key=lambda t: (-bounds[t], t))
    order = np.argsort(candidates, kind="stable")
    docs, running = candidates[order], partial[order]
    known: dict[int, np.ndarray] = {}
    while True:
        rest = ordered_sum([bounds[t] for t in pending])
        keep = (running + rest) * margin >= theta
        if not keep.all():
            docs, running = docs[keep], running[keep]
            known = {t: w[keep] for t, w in known.items()}
        if not pending or not len(docs):
            break
        term = pending.pop(0)
        known[term] = lookup(index, term, docs)
        running = running + known[term]
    return docs, exact_scores(index, query.terms, docs, known)
