"""A term-major index of precomputed BM25 weights, and exact batched top-k search over it.

Layout (CSR over terms): the postings of term ``t`` are ``docs[indptr[t]:indptr[t + 1]]`` (doc
indices, int32, ascending) with their weights in ``weights`` (float64):

    w(t, d) = idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))            (Lucene)

A query's score is the sum of the weights of its distinct terms, added in ascending term id order.
Weights stay float64 although float32 would halve them: rounding moves scores by ~1e-7, enough to
reorder near-ties, and this BM25 must rank exactly as a plain float64 BM25 does (a test on Vaswani
pins it to an independent implementation).

Search conventions (those of :class:`~retrievers.base.ScoreRetriever`): a document is a result only
when its score is above ``min_score``; order is score descending, ties by ``tie_rank`` ascending (the
rank of the doc id in ascending string order); selection is exact, ties at the k-th place included.
A batch of queries is one sparse product, (queries x terms, binary) @ (terms x docs, weights):
scipy walks only the postings of the batch's terms and adds each document's weights in ascending
term order, in C++ and without the GIL, leaving each query's distinct candidates with their
scores. Per query, a strided sample of the candidates gives a lower bound of the k-th best score
(the k-th best of a subset can only be lower), which discards most of them before
``np.partition``. No JIT; ``threads=2`` scores two batches side by side.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

#: Candidates above which a sampled lower bound filters before the exact partition.
SAMPLE_ABOVE = 4096
#: Queries scored by one sparse product: amortises scipy's per-call work over the documents.
QUERY_BATCH = 32
#: Postings weighted per step at build time: bounds the float64 temporaries.
_BUILD_STEP = 1 << 20


def bm25_idf(n_docs: int, df: np.ndarray) -> np.ndarray:
    """Lucene's idf: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, always > 0."""
    return np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def _term_major(offsets: np.ndarray, term_ids: np.ndarray, n_terms: int) -> tuple[np.ndarray, np.ndarray]:
    """Doc of every token, grouped by term (docs ascending, repeats adjacent), and the term bounds."""
    n_docs = len(offsets) - 1
    by_doc = sp.csr_matrix((np.ones(len(term_ids), dtype=bool), term_ids, offsets), shape=(n_docs, n_terms))
    by_term = by_doc.tocsc()  # a counting sort in C; bool payload keeps it small
    return by_term.indices, by_term.indptr.astype(np.int64)


def _first_of_runs(docs: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """True where a new (term, doc) pair starts: the doc changes, or a new term begins."""
    new = np.empty(len(docs), dtype=bool)
    if len(docs):
        new[0] = True
        np.not_equal(docs[1:], docs[:-1], out=new[1:])
        starts = bounds[:-1]
        new[starts[starts < len(docs)]] = True
    return new


def _next_true(flags: np.ndarray, start: int) -> int:
    """Index of the first True at or after ``start``; ``len(flags)`` when there is none."""
    window = 64
    while start < len(flags):
        part = flags[start:start + window]
        if part.any():
            return start + int(np.argmax(part))
        start += window
        window *= 4
    return len(flags)


def _term_of_tokens(bounds: np.ndarray, start: int, stop: int) -> tuple[int, np.ndarray]:
    """The first term overlapping token positions ``start:stop``, and each position's term minus it."""
    first = int(np.searchsorted(bounds, start, side="right")) - 1
    last = int(np.searchsorted(bounds, stop - 1, side="right")) - 1
    lengths = np.diff(np.clip(bounds[first:last + 2], start, stop))
    return first, np.repeat(np.arange(last - first + 1, dtype=np.int32), lengths)


def _blocks(new: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(start, stop, run starts)`` over the term-major tokens in steps of ``_BUILD_STEP``."""
    for start in range(0, len(new), _BUILD_STEP):
        stop = min(len(new), start + _BUILD_STEP)
        yield start, stop, np.flatnonzero(new[start:stop]) + start


@dataclass
class BM25Index:
    """Postings of precomputed BM25 weights: see the module docstring for layout and conventions."""

    indptr: np.ndarray  # int64, n_terms + 1
    docs: np.ndarray  # int32
    weights: np.ndarray  # float64, > 0
    n_docs: int
    _matrix: sp.csr_matrix | None = field(default=None, repr=False, compare=False)

    @classmethod
    def build(cls, offsets: np.ndarray, term_ids: np.ndarray, n_terms: int, k1: float = 1.2,
              b: float = 0.75) -> BM25Index:
        """Index documents given as token runs: doc ``d`` is ``term_ids[offsets[d]:offsets[d + 1]]``."""
        offsets = np.asarray(offsets, dtype=np.int64)
        handed_over = [_term_major(offsets, np.asarray(term_ids, dtype=np.int32), n_terms)]
        return cls._weigh(handed_over, np.diff(offsets), k1, b)

    @classmethod
    def from_texts(cls, texts: Sequence[str], analyzer: str, k1: float = 1.2, b: float = 0.75,
                   progress: Callable[[int, int], None] | None = None) -> tuple[BM25Index, list[str]]:
        """Tokenise (:func:`corpora.tokenize.tokenize`) and index; also return the vocabulary.

        The token stream is let go as soon as it is regrouped by term, before the weights exist:
        at a million documents that keeps a few hundred MB off the peak.
        """
        from corpora.tokenize import tokenize

        tokens = tokenize(texts, analyzer, progress=progress)
        vocabulary = tokens.vocabulary
        doc_len = np.diff(tokens.offsets)
        handed_over = [_term_major(tokens.offsets, tokens.term_ids, len(vocabulary))]
        del tokens
        return cls._weigh(handed_over, doc_len, k1, b), vocabulary

    @classmethod
    def _weigh(cls, handed_over: list[tuple[np.ndarray, np.ndarray]], doc_len: np.ndarray, k1: float,
               b: float) -> BM25Index:
        """Postings and weights from term-major tokens; ``handed_over`` holds the only reference to
        them and is emptied, so the token array is freed once the postings are out."""
        token_docs, bounds = handed_over.pop()
        n_docs = len(doc_len)
        n_terms = len(bounds) - 1
        doc_len = doc_len.astype(np.float64)
        avgdl = doc_len.mean() if n_docs else 0.0
        norm = k1 * (1.0 - b + b * doc_len / avgdl) if avgdl > 0 else np.full(n_docs, k1)
        del doc_len
        new = _first_of_runs(token_docs, bounds)
        docs = token_docs[new]
        del token_docs
        runs_per_term = np.zeros(n_terms, dtype=np.int64)
        for start, stop, firsts in _blocks(new):
            first, term_of = _term_of_tokens(bounds, start, stop)
            counted = np.bincount(term_of[firsts - start])
            runs_per_term[first:first + len(counted)] += counted
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(runs_per_term, out=indptr[1:])
        idf = bm25_idf(n_docs, runs_per_term)
        weights = np.empty(len(docs), dtype=np.float64)
        run = 0
        for start, stop, firsts in _blocks(new):  # term frequency = length of a run
            first, term_of = _term_of_tokens(bounds, start, stop)
            tf = np.diff(firsts, append=_next_true(new, stop)).astype(np.float64)
            part = slice(run, run + len(firsts))
            weights[part] = idf[first + term_of[firsts - start]] * tf * (k1 + 1.0) / (tf + norm[docs[part]])
            run += len(firsts)
        return cls(indptr, docs, weights, n_docs)

    @property
    def n_terms(self) -> int:
        return len(self.indptr) - 1

    def search(self, query_offsets: np.ndarray, query_terms: np.ndarray, k: int, tie_rank: np.ndarray,
               min_score: float = 0.0, threads: int = 1,
               progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Top ``k`` documents of each query: ``(offsets, doc indices, scores)``, a CSR over queries.

        Query ``i`` is ``query_terms[query_offsets[i]:query_offsets[i + 1]]``; a term repeated in a
        query counts once. ``progress(done, total)`` hears about every batch of queries.
        """
        n_queries = len(query_offsets) - 1
        batches = [range(a, min(n_queries, a + QUERY_BATCH)) for a in range(0, n_queries, QUERY_BATCH)]
        tally = _Tally(n_queries, progress)

        def run(batch: range) -> tuple[list[np.ndarray], list[np.ndarray]]:
            scores = self._scores(query_offsets, query_terms, batch)
            found = [top_k(scores.indices[a:b], scores.data[a:b], k, tie_rank, min_score)
                     for a, b in zip(scores.indptr[:-1], scores.indptr[1:])]
            tally.add(len(batch))
            return [d for d, _ in found], [v for _, v in found]

        if threads <= 1 or len(batches) < 2:
            parts = [run(batch) for batch in batches]
        else:
            with ThreadPoolExecutor(threads) as pool:
                parts = list(pool.map(run, batches))
        docs = [d for part in parts for d in part[0]]
        scores = [v for part in parts for v in part[1]]
        offsets = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, docs), dtype=np.int64, count=n_queries), out=offsets[1:])
        flat_docs = np.concatenate(docs).astype(np.int64) if docs else np.empty(0, np.int64)
        flat_scores = np.concatenate(scores) if scores else np.empty(0)
        return offsets, flat_docs, flat_scores

    def score_matrix(self, query_offsets: np.ndarray, query_terms: np.ndarray) -> sp.csr_matrix:
        """Every query's score of every matching document: (n_queries x n_docs) float64 CSR."""
        matrix = self._scores(query_offsets, query_terms, range(len(query_offsets) - 1))
        matrix.sort_indices()
        return matrix

    # ----- internals -------------------------------------------------------------------------
    def _scores(self, query_offsets: np.ndarray, query_terms: np.ndarray, batch: range) -> sp.csr_matrix:
        """The batch's queries (binary, one column per distinct term) times the postings: scipy adds
        each document's weights in ascending term order, in C++, without the GIL."""
        start, stop = int(query_offsets[batch.start]), int(query_offsets[batch.stop])
        terms = np.array(query_terms[start:stop], dtype=np.int32)  # a copy: sum_duplicates sorts in place
        queries = sp.csr_matrix((np.ones(len(terms)), terms, query_offsets[batch.start:batch.stop + 1] - start),
                                shape=(len(batch), self.n_terms))
        queries.sum_duplicates()
        queries.data[:] = 1.0
        return (queries @ self.matrix).tocsr()

    @property
    def matrix(self) -> sp.csr_matrix:
        """The postings as a scipy CSR matrix (terms x docs) over the same arrays, no copy."""
        if self._matrix is None:
            self._matrix = sp.csr_matrix((self.weights, self.docs, self.indptr), shape=(self.n_terms, self.n_docs))
        return self._matrix


def top_k(candidates: np.ndarray | None, scores: np.ndarray, k: int, tie_rank: np.ndarray,
          min_score: float) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` of distinct ``candidates`` by score descending, ties by ``tie_rank`` ascending.

    ``candidates`` None means every position of ``scores`` (a full row of a score matrix). Scores at
    or below ``min_score`` are dropped. Exact, ties at the k-th place included: every candidate
    scoring at least the k-th best value reaches the final sort.
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


class _Tally:
    """Queries done across threads, passed on to a ``progress(done, total)`` callback."""

    def __init__(self, total: int, progress: Callable[[int, int], None] | None):
        self.total, self.progress, self.done = total, progress, 0
        self._lock = threading.Lock()

    def add(self, count: int) -> None:
        if self.progress is None:
            return
        with self._lock:
            self.done += count
            self.progress(min(self.done, self.total), self.total)
