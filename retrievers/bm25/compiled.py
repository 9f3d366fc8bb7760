"""BM25 top k over a :class:`~retrievers.bm25.index.BM25Index` in a compiled loop (numba), exact.

The exhaustive path is one scipy sparse product per block of documents, then a ranking per query
in numpy. The compiled loop does the same arithmetic with less around it: per query and block, each
term's postings are weighted as they are read (:func:`~retrievers.bm25.index.bm25_weights`' operations)
and added to a dense array of the block's scores; the same postings are walked a second time to
collect each touched document once (its score is not 0.0 until it is collected and reset), and the
running k-th best score discards most of them on the spot (a min-heap for k up to 300; above, a
floor from a sample of the first block's candidates, then a quickselect whenever 2k candidates have
gathered); the survivors are ranked by two stable radix sorts. ``benchmarks/speed_paths.py``
``compiled`` and ``compiled_1000`` time it against the product (numbers in ``benchmarks/RESULTS.md``).

Exactness, the contract of the exhaustive path:

- *same bits*: a score is the sum of the document's weights in ascending term id order, starting
  from 0.0, which is the sparse product's order and arithmetic (scipy adds ``1.0 * w``, which is
  ``w``);
- *same documents, same tie rule*: every document scoring at least the k-th best score survives
  (a document tied with the running k-th best is kept), and they are ranked as
  :func:`~retrievers.ranking.top_k` ranks (score descending, ties by ``tie_rank`` ascending), so
  ties at the k-th place break exactly as before.

At every k (:func:`prunes`) the loop also prunes, safely (MaxScore, a block at a time; see
:func:`retrievers.bm25.kernel.top_k`): once the running k-th best is known, the query terms
whose largest weights (:func:`term_bounds`) sum below it cannot bring a document into the top k on
their own, so their postings are only read, and weighted just for documents that the other terms
bring in; those documents are marked first, and every term is then added in term id order, so
scores keep their bits (``benchmarks/speed_paths.py`` ``pruning``, ``pruning_100``,
``pruning_1000``).
An earlier loop pruned document at a time (MaxScore with cursors over the postings) and lost to
scoring every posting block by block: pruning pays here because it keeps this loop's sequential
walks.

The loop is cached on disk by numba after its first compilation (seconds, once per machine and per
combination of the index's integer types); the first call in a process still pays numba's
start-up and loading the loop. Without numba the product runs (:func:`available`).
"""

from __future__ import annotations

import importlib.util

import numpy as np

#: What to install for the compiled loop.
INSTALL_HINT = "pip install 'retbench[fast]' (numba)"


def available() -> bool:
    """Whether the compiled loop can run (numba is installed)."""
    return importlib.util.find_spec("numba") is not None


def term_bounds(postings: tuple[np.ndarray, ...], block_docs: int, k1: float) -> np.ndarray:
    """Each term's largest weight over its postings (float64, by term id; 0.0 for a term without
    postings): what pruning bounds a term's part of any score by. ``postings`` as for :func:`top_k`.
    One pass over every posting."""
    if not available():
        raise ImportError(f"the compiled search loop needs numba: {INSTALL_HINT}")
    from retrievers.bm25.kernel import term_bounds as kernel

    docs, tfs, indptr, block_starts, idf, length_class, class_norm = postings
    return kernel(docs, tfs, indptr, block_starts, block_docs, idf, length_class, class_norm, float(k1))


def prunes(k: int) -> bool:
    """Whether :func:`top_k` prunes at this ``k`` when given bounds: at every k where numba is
    installed (no loop to prune without it). Pruning pays at k = 10 and 100
    (``benchmarks/RESULTS.md``, ``speed_paths.pruning``, ``pruning_100``); at k = 1000 it pays on
    long documents (``bm25_memory.1000000.z1.0-v100k-long``) and costs nothing measurable on short
    ones (``speed_paths.pruning_1000``, ``bm25_memory.1000000.z1.2-v100k-short``), so no k is set
    apart."""
    return k >= 1 and available()


def top_k(postings: tuple[np.ndarray, ...], block_docs: int, k1: float, query_offsets: np.ndarray,
          query_terms: np.ndarray, k: int, min_score: float, tie_rank: np.ndarray,
          bounds: np.ndarray | None = None, work: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query, its top ``k`` documents (global indices) with exact scores: ``(offsets, docs,
    scores)``, a CSR over queries in rank order (:func:`retrievers.ranking.top_k`'s conventions).

    ``postings`` are a :class:`~retrievers.bm25.index.BM25Index`'s arrays ``(docs, tfs, indptr,
    block_starts, idf, length_class, class_norm)``, with its ``block_docs`` and ``k1``;
    ``query_terms[query_offsets[i]:query_offsets[i + 1]]`` are query ``i``'s distinct term ids,
    ascending; ``tie_rank`` ranks every document's id. With ``bounds`` (:func:`term_bounds`) and
    ``k`` where :func:`prunes`, the loop prunes; the results are the same either way.
    ``work``, an int64 array of 2, gains the postings whose weights were computed and those only
    read (pruned).
    """
    if not available():
        raise ImportError(f"the compiled search loop needs numba: {INSTALL_HINT}")
    from retrievers.bm25.kernel import top_k as kernel

    docs, tfs, indptr, block_starts, idf, length_class, class_norm = postings
    if bounds is None or not prunes(k):
        bounds = np.empty(0)
    if work is None:
        work = np.zeros(2, np.int64)
    arguments = (docs, tfs, indptr, block_starts, block_docs, idf, length_class, class_norm, float(k1),
                 np.asarray(query_offsets, dtype=np.int64),
                 np.asarray(query_terms, dtype=np.int64), k, float(min_score),
                 np.asarray(tie_rank, dtype=np.int64), np.asarray(bounds, dtype=np.float64), work)
    if k < 1:
        empty = np.empty(0, np.int64)
        return np.zeros(len(query_offsets), np.int64), empty, np.empty(0)
    return kernel(*arguments)


#: The task shown while the first call in a process compiles the loop (seconds, once per machine) or
#: loads it from numba's on-disk cache: the wait is otherwise unexplained.
COMPILING = "compiled search: compiling its loop (once; numba caches it) or loading it"


def compiles_on_first_call() -> bool:
    """Whether the next :func:`top_k` compiles (or loads) the loop first: numba is installed and this
    process has not run the loop yet."""
    if not available():
        return False
    from retrievers.bm25.kernel import top_k as kernel

    return not kernel.signatures
