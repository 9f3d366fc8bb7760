"""The compiled MaxScore loop of :mod:`retrievers.pruning` (numba; imported only when it is installed).

Kept apart so that importing :mod:`retrievers.pruning` never imports numba, and so that numba's
on-disk cache (``cache=True``) holds this file's functions only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_EPS = float(np.finfo(np.float64).eps)
_NO_DOC = np.iinfo(np.int64).max


@njit(cache=True, nogil=True)
def _advance(docs, cursor, end, target):  # type: ignore[no-untyped-def]
    """First position in ``[cursor, end)`` whose doc is ``>= target`` (``end`` if none): galloping."""
    if cursor >= end or docs[cursor] >= target:
        return cursor
    low, step = cursor, 1  # docs[low] < target throughout
    while low + step < end and docs[low + step] < target:
        low += step
        step *= 2
    lo, hi = low + 1, min(low + step, end)
    while lo < hi:
        middle = (lo + hi) >> 1
        if docs[middle] < target:
            lo = middle + 1
        else:
            hi = middle
    return lo


@njit(cache=True, nogil=True)
def _skip(bound, margin, full, theta, min_score):  # type: ignore[no-untyped-def]
    """True when a document whose score is at most ``bound`` (up to rounding) cannot be a result."""
    widened = bound * margin
    return widened <= min_score or (full and widened < theta)


@njit(cache=True, nogil=True)
def maxscore(docs_list, weights_list, indptr, block_docs, bounds, query_offsets, query_terms,  # type: ignore[no-untyped-def]
             k, min_score):
    """Per query, every document that was in its running top k when scored, with its exact score.

    ``query_terms[query_offsets[i]:query_offsets[i + 1]]`` are query ``i``'s distinct term ids,
    ascending. Returns ``(offsets, docs, scores)``, a CSR over queries (docs global, ascending).
    """
    n_queries = len(query_offsets) - 1
    n_blocks = indptr.shape[0]
    capacity = 1024
    out_docs = np.empty(capacity, np.int64)
    out_scores = np.empty(capacity, np.float64)
    out_offsets = np.zeros(n_queries + 1, np.int64)
    n_out = 0
    heap = np.empty(max(k, 1), np.float64)
    for query in range(n_queries):
        terms = query_terms[query_offsets[query]:query_offsets[query + 1]]
        m = len(terms)
        term_bounds = np.empty(m, np.float64)
        for j in range(m):
            term_bounds[j] = bounds[terms[j]]
        by_bound = np.argsort(term_bounds, kind="mergesort")  # ascending: the non-essential end first
        prefix = np.empty(m, np.float64)
        total = 0.0
        for i in range(m):
            total += term_bounds[by_bound[i]]
            prefix[i] = total
        margin = 1.0 + 4.0 * (m + 2) * _EPS
        size, theta, full = 0, -np.inf, False
        essential = 0  # by_bound[essential:] are the essential terms
        while essential < m and _skip(prefix[essential], margin, full, theta, min_score):
            essential += 1
        cursor = np.empty(m, np.int64)
        end = np.empty(m, np.int64)
        for block in range(n_blocks):
            docs, weights, base = docs_list[block], weights_list[block], block * block_docs
            for j in range(m):
                cursor[j] = indptr[block, terms[j]]
                end[j] = indptr[block, terms[j] + 1]
            while essential < m:
                doc = _NO_DOC
                for i in range(essential, m):
                    j = by_bound[i]
                    if cursor[j] < end[j] and docs[cursor[j]] < doc:
                        doc = docs[cursor[j]]
                if doc == _NO_DOC:
                    break
                bound = 0.0
                for i in range(essential, m):
                    j = by_bound[i]
                    if cursor[j] < end[j] and docs[cursor[j]] == doc:
                        bound += weights[cursor[j]]
                keep = True
                for i in range(essential - 1, -1, -1):  # non-essential terms, highest bound first
                    if _skip(bound + prefix[i], margin, full, theta, min_score):
                        keep = False
                        break
                    j = by_bound[i]
                    cursor[j] = _advance(docs, cursor[j], end[j], doc)
                    if cursor[j] < end[j] and docs[cursor[j]] == doc:
                        bound += weights[cursor[j]]
                if keep and not _skip(bound, margin, full, theta, min_score):
                    score = 0.0  # ascending term id from 0.0: the exhaustive product's sum, bit for bit
                    for j in range(m):
                        if cursor[j] < end[j] and docs[cursor[j]] == doc:
                            score += weights[cursor[j]]
                    if score > min_score and (not full or score >= theta):
                        if n_out == capacity:
                            capacity *= 2
                            grown_docs = np.empty(capacity, np.int64)
                            grown_docs[:n_out] = out_docs[:n_out]
                            out_docs = grown_docs
                            grown_scores = np.empty(capacity, np.float64)
                            grown_scores[:n_out] = out_scores[:n_out]
                            out_scores = grown_scores
                        out_docs[n_out] = base + doc
                        out_scores[n_out] = score
                        n_out += 1
                        if not full:
                            _heap_push(heap, size, score)
                            size += 1
                            full = size == k
                        elif score > theta:
                            _heap_replace_min(heap, size, score)
                        if full:
                            theta = heap[0]
                            while essential < m and _skip(prefix[essential], margin, full, theta, min_score):
                                essential += 1
                for i in range(essential, m):
                    j = by_bound[i]
                    if cursor[j] < end[j] and docs[cursor[j]] == doc:
                        cursor[j] += 1
        if full:  # what fell below the final k-th best score is no longer a candidate
            kept = out_offsets[query]
            for i in range(out_offsets[query], n_out):
                if out_scores[i] >= theta:
                    out_docs[kept] = out_docs[i]
                    out_scores[kept] = out_scores[i]
                    kept += 1
            n_out = kept
        out_offsets[query + 1] = n_out
    return out_offsets, out_docs[:n_out].copy(), out_scores[:n_out].copy()


@njit(cache=True, nogil=True)
def _heap_push(heap, size, value):  # type: ignore[no-untyped-def]
    """Add ``value`` to the min-heap ``heap[:size]``."""
    position = size
    heap[position] = value
    while position > 0:
        parent = (position - 1) >> 1
        if heap[parent] <= heap[position]:
            break
        heap[parent], heap[position] = heap[position], heap[parent]
        position = parent


@njit(cache=True, nogil=True)
def _heap_replace_min(heap, size, value):  # type: ignore[no-untyped-def]
    """Replace the smallest value of the min-heap ``heap[:size]`` by ``value``."""
    heap[0] = value
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[position] <= heap[child]:
            break
        heap[position], heap[child] = heap[child], heap[position]
        position = child

