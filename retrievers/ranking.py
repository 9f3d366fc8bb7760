"""Ranking kernels: the exact top k of scored documents, with the seam's conventions.

Every ranking retbench makes goes through here: score descending, ties by doc id ascending (a
document's ``tie_rank`` is the rank of its id in ascending string order, :func:`doc_id_order`),
scores at or below ``min_score`` are not results, and selection is exact, ties at the k-th place
included. :func:`top_k` ranks one row (a full score row, or a query's candidates from the BM25
index); :func:`top_k_rows` a dense matrix; :func:`rank_sparse_rows` the stored entries of a CSR
matrix (the fusions').
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from corpora import Run

#: Candidates above which a sampled lower bound filters before the exact partition.
SAMPLE_ABOVE = 4096

def doc_id_order(ids: list[str]) -> np.ndarray:
    """Rank of each doc id in ascending string order: the tie-break key.

    ASCII ids are sorted as bytes (the same order: a byte is its code point), a quarter of the
    memory of numpy's 4-byte characters, which at ten million ids sat on the peak of a BM25 fit."""
    try:
        keys = np.array(ids, dtype="S")
    except UnicodeEncodeError:
        keys = np.asarray(ids, dtype=str)
    order = np.argsort(keys, kind="stable")
    del keys
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[order] = np.arange(len(ids))
    return ranks


def top_k(candidates: np.ndarray | None, scores: np.ndarray, k: int, tie_rank: np.ndarray,
          min_score: float) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` of distinct ``candidates`` by score descending, ties by ``tie_rank`` ascending.

    ``candidates`` None means every position of ``scores`` (a full row of a score matrix). Scores at
    or below ``min_score`` are dropped. Exact, ties at the k-th place included: every candidate
    scoring at least the k-th best value reaches the final sort. Above :data:`SAMPLE_ABOVE`
    candidates a strided sample's k-th best bounds the k-th best from below and discards most of
    them first (``benchmarks/speed_paths.py`` ``top_k``).
    """
    n = len(scores)
    if n > SAMPLE_ABOVE and n > 4 * k:
        step = n // (4 * max(k, SAMPLE_ABOVE // 4))
        sample = scores[::step]
        if len(sample) >= k:
            bound = np.partition(sample, len(sample) - k)[len(sample) - k]
            if bound == bound:  # a NaN bound would keep nothing
                keep = np.flatnonzero(scores >= bound)
                candidates = keep if candidates is None else candidates[keep]
                scores = scores[keep]
    if candidates is None:
        candidates = np.arange(n)
    keep = scores > min_score
    if not keep.all():
        candidates, scores = candidates[keep], scores[keep]
    if len(candidates) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = np.flatnonzero(scores >= kth)
        candidates, scores = candidates[keep], scores[keep]
    order = np.lexsort((tie_rank[candidates], -scores))[:k]
    return candidates[order], scores[order]


def top_k_rows(
    scores: np.ndarray, k: int, tie_rank: np.ndarray, min_score: float
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per row: the column indices of the top ``k`` scores above ``min_score``, and their scores.

    Order is score descending, ties by ``tie_rank`` ascending. Exact: every column tied with the
    k-th score is a candidate before the final sort, so ties at the boundary break correctly. A
    sampled lower bound of the k-th score discards most columns of a long row first
    (:func:`top_k`).
    """
    out_idx: list[np.ndarray] = []
    out_scores: list[np.ndarray] = []
    for row in scores:
        idx, values = top_k(None, row, k, tie_rank, min_score)
        out_idx.append(idx)
        out_scores.append(values)
    return out_idx, out_scores


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
