"""The compiled search loop of :mod:`retrievers.bm25.compiled` (numba; imported only when it is installed).

Kept apart so that importing :mod:`retrievers.bm25.compiled` never imports numba, and so that numba's
on-disk cache (``cache=True``) holds this file's functions only. The loop is split into small
functions on purpose: passed as arguments, the accumulator and the postings are distinct arrays to
the compiler, which keeps the innermost loop tight (one function doing everything was slower when
this was written: ``benchmarks/RESULTS.md``, ``notes.compiled_loop``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Up to this k a min-heap keeps the running k-th best; above, candidates gather and a quickselect
#: cuts them back to the best k whenever 2k have gathered: each was the faster on its side of this k
#: (``benchmarks/RESULTS.md``, ``notes.compiled_loop``).
HEAP_UP_TO_K = 300


#: Pruning compares a bound summed in one order with a score summed in another: a bound times this
#: still above the exact sum whatever the order (a sum of n float64 terms is off by n * 1.1e-16 of
#: itself at most; this covers queries of up to ~10 million terms).
MARGIN = 1.0 + 1e-9


@njit(cache=True, nogil=True, inline="always")
def _weight(idf, tf, norm, factor):  # type: ignore[no-untyped-def]
    """One posting's weight: :func:`retrievers.bm25.index.bm25_weights`' expression, the same float64
    operations in the same order (``factor`` is ``k1 + 1``), so the same bits."""
    f = np.float64(tf)
    return idf * f * factor / (f + norm)


@njit(cache=True, nogil=True)
def _add(docs, tfs, start, stop, idf, k1, length_class, class_norm, scores):  # type: ignore[no-untyped-def]
    """Add the weights of one term's postings ``start:stop`` to the block's ``scores``
    (``length_class`` is the block's slice)."""
    factor = k1 + 1.0
    for p in range(start, stop):
        d = np.int64(docs[p])
        scores[d] += _weight(idf, tfs[p], class_norm[length_class[d]], factor)


@njit(cache=True, nogil=True)
def _mark(docs, start, stop, seen):  # type: ignore[no-untyped-def]
    """Set the bit in ``seen`` of each document of one term's postings ``start:stop``."""
    for p in range(start, stop):
        d = np.int64(docs[p])
        seen[d >> 6] |= np.uint64(1) << np.uint64(d & 63)


@njit(cache=True, nogil=True)
def _add_to_seen(docs, tfs, start, stop, idf, k1, length_class, class_norm, scores, seen):  # type: ignore[no-untyped-def]
    """Add the weights of one term's postings ``start:stop`` to the documents whose bit is set in
    ``seen`` (a bitmap: it stays in a core's fastest cache where ``scores`` does not); the others
    are only read, and their weights never computed."""
    factor = k1 + 1.0
    for p in range(start, stop):
        d = np.int64(docs[p])
        if seen[d >> 6] & (np.uint64(1) << np.uint64(d & 63)):
            scores[d] += _weight(idf, tfs[p], class_norm[length_class[d]], factor)


@njit(cache=True, nogil=True)
def term_bounds(docs, tfs, indptr, block_starts, block_docs, idf, length_class, class_norm, k1):  # type: ignore[no-untyped-def]
    """Each term's largest weight over its postings (0.0 for a term without any): a bound on what
    the term adds to any document's score."""
    factor = k1 + 1.0
    bounds = np.zeros(indptr.shape[1] - 1, np.float64)
    for block in range(indptr.shape[0]):
        base = block_starts[block]
        classes = length_class[block * block_docs:]
        for term in range(indptr.shape[1] - 1):
            largest = bounds[term]
            for p in range(base + indptr[block, term], base + indptr[block, term + 1]):
                w = _weight(idf[term], tfs[p], class_norm[classes[np.int64(docs[p])]], factor)
                if w > largest:
                    largest = w
            bounds[term] = largest
    return bounds


@njit(cache=True, nogil=True)
def _collect(docs, start, stop, scores, base, floor, inclusive, found_docs, found_scores, n):  # type: ignore[no-untyped-def]
    """Walk one term's postings ``start:stop`` again: a document not yet seen (its score is not 0.0:
    every weight is positive, as idf > 0, f >= 1, k1 >= 0 and 0 <= b <= 1) is kept in ``found_*``
    from place ``n`` (doc + ``base``) when its score is above ``floor`` (or equal, when
    ``inclusive``), and its score is reset to 0.0, so it is seen once. Returns the new count.
    Walking the postings twice is faster than flagging each touched document in a bitmap and
    reading the bitmap back (``benchmarks/RESULTS.md``, ``notes.compiled_loop``)."""
    for p in range(start, stop):
        d = np.int64(docs[p])
        score = scores[d]
        if score != 0.0:
            scores[d] = 0.0
            if score > floor or (inclusive and score == floor):
                found_docs[n] = base + d
                found_scores[n] = score
                n += 1
    return n


@njit(cache=True, nogil=True)
def _collect_marked(docs, start, stop, scores, seen, base, floor, inclusive, found_docs, found_scores, n):  # type: ignore[no-untyped-def]
    """:func:`_collect` that also clears ``seen``'s words on the way: when pruning, the marked
    documents are those of the terms walked here."""
    for p in range(start, stop):
        d = np.int64(docs[p])
        score = scores[d]
        if score != 0.0:
            scores[d] = 0.0
            seen[d >> 6] = np.uint64(0)
            if score > floor or (inclusive and score == floor):
                found_docs[n] = base + d
                found_scores[n] = score
                n += 1
    return n


@njit(cache=True, nogil=True)
def top_k(docs, tfs, indptr, block_starts, block_docs, idf, length_class, class_norm,  # type: ignore[no-untyped-def]
          k1, query_offsets, query_terms, k, min_score, tie_rank, bounds, work):
    """Per query, its top ``k`` documents above ``min_score``, ranked by score descending, ties by
    ``tie_rank`` ascending, with exact scores.

    The index is :class:`~retrievers.bm25.index.BM25Index`'s arrays.
    ``query_terms[query_offsets[i]:query_offsets[i + 1]]`` are query ``i``'s distinct term ids,
    ascending; ``k >= 1``. Block by block, each query term's postings' weights are added to a dense score
    array in ascending term id order from 0.0 — the sparse product's order and arithmetic, so every
    score has the product's bits. A running k-th best (see :data:`HEAP_UP_TO_K`), a lower bound of
    the final one, filters what is kept; what survives (every document scoring at least the final
    k-th best) is ranked and cut to ``k``. Returns ``(offsets, docs, scores)``, a CSR over queries
    (docs global, in rank order).

    Pruning (MaxScore, a block at a time), when ``bounds`` (each term's largest weight) are given:
    once the running k-th best is known (the heap holds k scores, or the first floor is set), the
    query's terms whose bounds, smallest first, sum below it (with :data:`MARGIN`) are *passive*:
    a document with none of the other (*active*) terms cannot reach the top k. In the following
    blocks the active terms' documents are marked in a bitmap first; then every term is added in
    ascending term id order, an active term's postings all, a passive term's for marked documents
    alone (the others are only read), so a candidate's sum is the product's, bits included; the
    marked documents are collected through the active terms' postings. Scoring a candidate again
    exactly afterwards, as an earlier loop did, lost above k = 100 (``benchmarks/RESULTS.md``,
    ``speed_paths.pruning_100``). A block where every term is passive is skipped. ``work`` gains
    the postings weighted (``[0]``) and those only read (``[1]``).
    """
    n_queries = len(query_offsets) - 1
    scores = np.zeros(block_docs, np.float64)
    seen = np.zeros((block_docs + 63) // 64, np.uint64)  # pruning's bitmap of the block's candidates
    found_docs = np.empty(block_docs, np.int64)
    found_scores = np.empty(block_docs, np.float64)
    heap = np.empty(max(k, 1), np.float64)
    scratch = np.empty(2 * k + block_docs, np.float64)
    sample = np.empty(8 * k + 2, np.float64)  # _floor_of's: at most 8k + 1 values
    last_block = indptr.shape[0] - 1
    out_docs = np.empty(1024, np.int64)
    out_scores = np.empty(1024, np.float64)
    out_offsets = np.zeros(n_queries + 1, np.int64)
    n_out = 0
    prune = len(bounds) > 0
    for query in range(n_queries):
        first, last = query_offsets[query], query_offsets[query + 1]
        terms = query_terms[first:last]
        # terms by their bound, ascending: the first `passive` of them cannot lift a document to theta
        # on their own, so only documents of the others are candidates
        by_bound = np.argsort(bounds[terms]) if prune else np.empty(0, np.int64)
        place = np.empty(len(by_bound), np.int64)  # each term's place in by_bound
        place[by_bound] = np.arange(len(by_bound))
        passive, passive_bound = 0, 0.0
        start = n_out
        size, theta, full = 0, -np.inf, False
        for block in range(indptr.shape[0]):
            base = block_starts[block]
            classes = length_class[block * block_docs:]
            while prune and full and passive < len(terms) and \
                    (passive_bound + bounds[terms[by_bound[passive]]]) * MARGIN < theta:
                passive_bound += bounds[terms[by_bound[passive]]]
                passive += 1
            if passive == len(terms) and passive > 0:
                continue  # no document of this block reaches theta
            # ties with the running k-th best may still be in the top k: keep them
            floor, inclusive = (theta, True) if full else (min_score, False)
            n = 0
            if passive == 0:  # every document is a candidate: sums in ascending term id order are exact
                for term in terms:
                    start_p, stop_p = base + indptr[block, term], base + indptr[block, term + 1]
                    _add(docs, tfs, start_p, stop_p, idf[term], k1, classes, class_norm, scores)
                    work[0] += stop_p - start_p
                for term in terms:
                    n = _collect(docs, base + indptr[block, term], base + indptr[block, term + 1], scores,
                                 block * block_docs, floor, inclusive, found_docs, found_scores, n)
            else:  # the active terms' documents are marked first, then every term is added in term id order
                for j in range(passive, len(terms)):
                    term = terms[by_bound[j]]
                    _mark(docs, base + indptr[block, term], base + indptr[block, term + 1], seen)
                for j in range(len(terms)):
                    term = terms[j]
                    start_p, stop_p = base + indptr[block, term], base + indptr[block, term + 1]
                    if place[j] >= passive:
                        _add(docs, tfs, start_p, stop_p, idf[term], k1, classes, class_norm, scores)
                        work[0] += stop_p - start_p
                    else:
                        _add_to_seen(docs, tfs, start_p, stop_p, idf[term], k1, classes, class_norm, scores, seen)
                        work[1] += stop_p - start_p
                for j in range(passive, len(terms)):
                    term = terms[by_bound[j]]
                    n = _collect_marked(docs, base + indptr[block, term], base + indptr[block, term + 1], scores, seen,
                                        block * block_docs, floor, inclusive, found_docs, found_scores, n)
            if n_out + n > len(out_docs):
                capacity = max(n_out + n, 2 * len(out_docs))
                grown_docs = np.empty(capacity, np.int64)
                grown_docs[:n_out] = out_docs[:n_out]
                out_docs = grown_docs
                grown_scores = np.empty(capacity, np.float64)
                grown_scores[:n_out] = out_scores[:n_out]
                out_scores = grown_scores
            if k > HEAP_UP_TO_K and not full and n_out == start and n >= k:
                # The first block with k candidates sets the floor without gathering them all first.
                theta = _floor_of(found_scores[:n], k, sample, scratch)
                full = True
                for i in range(n):
                    if found_scores[i] >= theta:
                        out_docs[n_out] = found_docs[i]
                        out_scores[n_out] = found_scores[i]
                        n_out += 1
                continue
            if k > HEAP_UP_TO_K:  # bulk: keep all, and cut back to the best k when 2k have gathered
                out_docs[n_out:n_out + n] = found_docs[:n]
                out_scores[n_out:n_out + n] = found_scores[:n]
                n_out += n
                if n_out - start >= 2 * k or (block == last_block and n_out - start > k):
                    if n_out - start > len(scratch):  # ties with the k-th best kept more than 2k
                        scratch = np.empty(2 * (n_out - start), np.float64)
                    theta = _kth_largest(out_scores[start:n_out], k, scratch)
                    full = True
                    n_out = start + _keep_from(out_docs[start:n_out], out_scores[start:n_out], theta)
                continue
            for i in range(n):
                score = found_scores[i]
                if full and score < theta:
                    continue
                out_docs[n_out] = found_docs[i]
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
        if full:  # what fell below the final k-th best score is no longer a candidate
            n_out = start + _keep_from(out_docs[start:n_out], out_scores[start:n_out], theta)
        n_out = start + _rank(out_docs[start:n_out], out_scores[start:n_out], k, tie_rank)
        out_offsets[query + 1] = n_out
    return out_offsets, out_docs[:n_out].copy(), out_scores[:n_out].copy()


@njit(cache=True, nogil=True)
def _floor_of(values, k, sample, scratch):  # type: ignore[no-untyped-def]
    """A value that at least ``k`` of ``values`` reach (1 <= k <= len(values)), so a floor under
    the final k-th best: near the 1.5k-th largest, the matching order statistic of an evenly spaced
    sample of about 4k values, checked by counting; the exact k-th largest (a quickselect over all
    of them) when there are under 8k values or the sample misleads."""
    n = len(values)
    step = n // (4 * k)
    if step >= 2:
        m = 0
        for i in range(0, n - step + 1, step):
            sample[m] = values[i]
            m += 1
        t = _kth_largest(sample[:m], min(m, (3 * k) // (2 * step) + 1), scratch)
        reaching = 0
        for i in range(n):
            reaching += values[i] >= t
        if reaching >= k:
            return t
    return _kth_largest(values, k, scratch)


@njit(cache=True, nogil=True)
def _kth_largest(values, k, scratch):  # type: ignore[no-untyped-def]
    """The k-th largest of ``values`` (1 <= k <= len(values)): a quickselect on a copy in ``scratch``."""
    n = len(values)
    work = scratch[:n]
    work[:] = values
    target = n - k  # its place in ascending order
    low, high = 0, n - 1
    while low < high:
        a, b, c = work[low], work[(low + high) >> 1], work[high]
        pivot = max(min(a, b), min(max(a, b), c))  # the median of three
        i, j = low, high
        while i <= j:
            while work[i] < pivot:
                i += 1
            while work[j] > pivot:
                j -= 1
            if i <= j:
                work[i], work[j] = work[j], work[i]
                i += 1
                j -= 1
        if target <= j:
            high = j
        elif target >= i:
            low = i
        else:
            break
    return work[target]


@njit(cache=True, nogil=True)
def _keep_from(docs, scores, theta):  # type: ignore[no-untyped-def]
    """Move the entries scoring at least ``theta`` to the front, in order; return how many."""
    kept = 0
    for i in range(len(scores)):
        if scores[i] >= theta:
            docs[kept] = docs[i]
            scores[kept] = scores[i]
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def _rank(docs, scores, k, tie_rank):  # type: ignore[no-untyped-def]
    """Sort ``docs``/``scores`` in place by score descending, ties by ``tie_rank`` ascending; return
    how many of them make the top ``k``.

    Two stable radix sorts: by tie rank, then by score descending (a float's bits mapped to an
    unsigned key of the same order). Scores tie heavily in a top 1,000, so a comparison sort, then
    an insertion sort of each tie run reading ``tie_rank`` on every comparison, took longer
    (``benchmarks/RESULTS.md``, ``notes.compiled_loop``)."""
    n = len(scores)
    if n < 2:
        return min(k, n)
    keys = np.empty(n, np.uint64)
    for i in range(n):
        keys[i] = np.uint64(tie_rank[docs[i]])
    positions = _radix_sort(keys, np.arange(n))
    sign, ones = np.uint64(1) << np.uint64(63), ~np.uint64(0)
    score_bits = scores.view(np.uint64)
    for i in range(n):
        bits = score_bits[positions[i]]
        if bits == sign:  # -0.0 ties with 0.0
            bits = np.uint64(0)
        keys[i] = ~((bits ^ ones) if bits & sign else (bits | sign))  # ascending key = descending score
    positions = _radix_sort(keys, positions)
    docs[:] = docs[positions]
    scores[:] = scores[positions]
    return min(k, n)


@njit(cache=True, nogil=True)
def _radix_sort(keys, positions):  # type: ignore[no-untyped-def]
    """``positions`` stably sorted by ``keys`` (parallel to it) ascending, a byte a pass; returns the
    sorted positions (``keys`` is reordered too). One read of the keys counts every pass's bytes,
    and a pass whose byte is the same in every key is skipped."""
    n = len(keys)
    counts = np.zeros((8, 256), np.int64)
    byte = np.uint64(255)
    for i in range(n):
        key = keys[i]
        for b in range(8):
            counts[b, (key >> np.uint64(8 * b)) & byte] += 1
    other_keys = np.empty(n, np.uint64)
    other_positions = np.empty(n, positions.dtype)
    for b in range(8):
        shift = np.uint64(8 * b)
        if counts[b, (keys[0] >> shift) & byte] == n:
            continue
        total = 0
        for j in range(256):
            count = counts[b, j]
            counts[b, j] = total
            total += count
        for i in range(n):
            bucket = (keys[i] >> shift) & byte
            place = counts[b, bucket]
            counts[b, bucket] = place + 1
            other_keys[place] = keys[i]
            other_positions[place] = positions[i]
        keys, other_keys = other_keys, keys
        positions, other_positions = other_positions, positions
    return positions


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
