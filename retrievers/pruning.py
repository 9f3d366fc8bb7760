"""Safe dynamic pruning for BM25 top k: MaxScore over a :class:`~retrievers.index.BM25Index`, exact.

Exhaustive search adds up every posting of every query term; most of that work is on frequent
terms, whose postings are long and whose weights small. MaxScore (Turtle & Flood, 1995) walks the
documents of one query in order, keeping ``theta``, the k-th best score found so far. With the
query's terms sorted by their largest weight, the longest prefix whose largest weights add up to
less than ``theta`` are *non-essential*: a document holding only those terms cannot reach the top k,
so candidates come from the other (*essential*) terms' postings only, and a non-essential term is
looked up (galloping search in its postings) for a candidate only while the candidate's bound,
its weights so far plus the largest weights of the terms not yet looked up, can still reach
``theta``. A candidate that survives is scored exactly, then and there.

Exactness, the same contract as the exhaustive path:

- *same documents, same tie rule*: a document is skipped only when its bound is strictly below
  ``theta`` (the k-th best of k exactly scored documents, so never above the true k-th best) or
  at most ``min_score``; a document tied with the k-th best is scored. Every document that enters
  the running top k is returned, and :func:`~retrievers.ranking.top_k` ranks them (score
  descending, ties by ``tie_rank``), so ties at the k-th place break exactly as before;
- *same bits*: a returned score is the sum of the document's weights in ascending term id order,
  starting from 0.0, which is the order and the arithmetic of the sparse product (scipy adds
  ``1.0 * w``, which is ``w``), so it equals the exhaustive score bit for bit. Bounds are sums in
  another order: they are widened by ``4 (m + 2) eps`` for ``m`` query terms, more than rounding
  can move a sum of ``m`` positive numbers, before any comparison.

The loop is compiled with numba (the ``fast`` extra), cached on disk after its first compilation;
without numba the exhaustive path runs (:func:`available`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import numpy as np

from corpora import progress

#: What to install for the compiled loop.
INSTALL_HINT = "pip install 'retbench[fast]' (numba)"


def available() -> bool:
    """Whether the compiled loop can run (numba is installed)."""
    return importlib.util.find_spec("numba") is not None


def max_weights(indptr: np.ndarray, weights: Sequence[np.ndarray]) -> np.ndarray:
    """Each term's largest weight over all blocks (0.0 for a term with no posting).

    ``indptr[b]`` delimits block ``b``'s postings of each term in ``weights[b]`` (the layout of
    :class:`~retrievers.index.BM25Index`).
    """
    bounds = np.zeros(indptr.shape[1] - 1)
    for block_indptr, block_weights in zip(indptr, weights):
        held = np.flatnonzero(block_indptr[1:] > block_indptr[:-1])
        if len(held):
            bounds[held] = np.maximum(bounds[held], np.maximum.reduceat(block_weights, block_indptr[held]))
    return bounds


def candidates(docs: Sequence[np.ndarray], weights: Sequence[np.ndarray], indptr: np.ndarray, block_docs: int,
               bounds: np.ndarray, query_offsets: np.ndarray, query_terms: np.ndarray, k: int,
               min_score: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query, a superset of its top ``k`` with exact scores: ``(offsets, docs, scores)``, a CSR.

    The index is given as :class:`~retrievers.index.BM25Index` holds it (blocks of ``block_docs``
    documents; ``bounds`` from :func:`max_weights`); ``query_terms[query_offsets[i]:query_offsets[i + 1]]``
    are query ``i``'s distinct term ids, ascending. Every document of the top k is returned, and
    every document returned scores at least the k-th best score.
    """
    if not available():
        raise ImportError(f"safe pruning needs numba: {INSTALL_HINT}")
    from numba.typed import List

    from retrievers._maxscore_kernel import maxscore

    block_list, weight_list = List(), List()
    for block_docs_array, block_weights in zip(docs, weights):
        block_list.append(block_docs_array)
        weight_list.append(block_weights)
    arguments = (block_list, weight_list, indptr, block_docs, bounds, np.asarray(query_offsets, dtype=np.int64),
                 np.asarray(query_terms, dtype=np.int64), k, float(min_score))
    if maxscore.signatures:
        return maxscore(*arguments)
    # The first call in a process compiles the loop (~12 s, once per machine) or loads it from
    # numba's on-disk cache: say so, the wait is otherwise unexplained.
    with progress.task("safe pruning: compiling its loop (once; numba caches it) or loading it"):
        return maxscore(*arguments)
