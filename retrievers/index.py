"""A term-major index of precomputed BM25 weights, and exact batched top-k search over it.

Layout (CSR over terms): the postings of term ``t`` are ``docs[indptr[t]:indptr[t + 1]]`` (doc
indices, int32, ascending) with their weights in ``weights`` (float64):

    w(t, d) = idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))            (Lucene)

A query's score is the sum of the weights of its distinct terms, added in ascending term id order.
Weights stay float64 although float32 would halve them: rounded weights move scores by ~1e-7 and
so reorder near-ties, and BM25 here must equal a plain float64 BM25 ranking for ranking.

Search conventions (those of :class:`~retrievers.base.ScoreRetriever`): a document is a result only
when its score is above ``min_score``; order is score descending, ties by ``tie_rank`` ascending (the
rank of the doc id in ascending string order); selection is exact, ties at the k-th place included.
Per query, only the postings of its terms are touched: each term's weights are added into a
per-thread float64 accumulator over the documents (``np.add.at``), read back at the candidates and
zeroed there again; a one-term query needs no accumulator at all. A strided sample of the longest
posting list (its docs are distinct) gives a lower bound of the k-th best score -- the k-th best of
a subset can only be lower -- which discards most candidates before they are deduplicated and
partitioned. No JIT: numpy releases the GIL in the gathers, scatters and partitions, so
``threads=2`` scores two halves of a batch side by side.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

#: Candidates above which a sampled lower bound filters before the exact partition.
SAMPLE_ABOVE = 4096
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
        query counts once. ``progress(done, total)`` hears about every 64 queries.
        """
        n_queries = len(query_offsets) - 1
        blocks = _split(n_queries, max(1, threads))
        tally = _Tally(n_queries, progress)

        def run(block: range) -> tuple[list[np.ndarray], list[np.ndarray]]:
            return self._search_block(query_offsets, query_terms, block, k, tie_rank, min_score, tally)

        if len(blocks) == 1:
            parts = [run(blocks[0])]
        else:
            with ThreadPoolExecutor(len(blocks)) as pool:
                parts = list(pool.map(run, blocks))
        docs = [d for part in parts for d in part[0]]
        scores = [s for part in parts for s in part[1]]
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=n_queries)
        offsets = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat_docs = np.concatenate(docs).astype(np.int64) if docs else np.empty(0, np.int64)
        flat_scores = np.concatenate(scores) if scores else np.empty(0)
        return offsets, flat_docs, flat_scores

    def score_matrix(self, query_offsets: np.ndarray, query_terms: np.ndarray) -> sp.csr_matrix:
        """Every query's score of every matching document: (n_queries x n_docs) float64 CSR."""
        n_queries = len(query_offsets) - 1
        accumulator = np.zeros(self.n_docs, dtype=np.float64)
        rows, values = [], []
        for i in range(n_queries):
            lists = self._postings(query_terms[query_offsets[i]:query_offsets[i + 1]])
            for docs, weights in lists:
                np.add.at(accumulator, docs, weights)
            candidates = np.unique(np.concatenate([docs for docs, _ in lists])) if lists else np.empty(0, np.int32)
            rows.append(candidates)
            values.append(accumulator[candidates])
            accumulator[candidates] = 0.0
        indptr = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=indptr[1:])
        indices = np.concatenate(rows) if rows else np.empty(0, np.int32)
        data = np.concatenate(values) if values else np.empty(0)
        return sp.csr_matrix((data, indices, indptr), shape=(n_queries, self.n_docs))

    # ----- internals -------------------------------------------------------------------------
    def _postings(self, terms: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """(docs, weights) of each distinct term of a query that has postings, in term id order."""
        lists = []
        for t in np.unique(terms).tolist():
            start, stop = self.indptr[t], self.indptr[t + 1]
            if start < stop:
                lists.append((self.docs[start:stop], self.weights[start:stop]))
        return lists

    def _top_k(self, accumulator: np.ndarray, terms: np.ndarray, k: int, tie_rank: np.ndarray,
               min_score: float) -> tuple[np.ndarray, np.ndarray]:
        """One query's top k; ``accumulator`` is all zeros before and after."""
        lists = self._postings(terms)
        if not lists:
            return np.empty(0, dtype=np.int32), np.empty(0)
        if len(lists) == 1:  # one term: its weights are the scores
            return top_k(lists[0][0], lists[0][1], k, tie_rank, min_score)
        for docs, weights in lists:  # in term order: every doc's sum is added in the same order
            np.add.at(accumulator, docs, weights)
        # the longest list's docs are distinct: the k-th best of a sample of them bounds the k-th
        # best overall from below, and discards most candidates before they are deduplicated
        longest = max(range(len(lists)), key=lambda j: len(lists[j][0]))
        longest_scores = accumulator[lists[longest][0]]
        bound = -np.inf
        sample = longest_scores[::max(1, len(longest_scores) // max(SAMPLE_ABOVE, 4 * k))]
        if len(sample) >= k:
            bound = np.partition(sample, len(sample) - k)[len(sample) - k]
        kept_docs, kept_scores = [], []
        for j, (docs, _) in enumerate(lists):
            scores = longest_scores if j == longest else accumulator[docs]
            keep = scores >= bound
            kept_docs.append(docs[keep])
            kept_scores.append(scores[keep])
            accumulator[docs] = 0.0
        candidates, first = np.unique(np.concatenate(kept_docs), return_index=True)
        return top_k(candidates, np.concatenate(kept_scores)[first], k, tie_rank, min_score)

    def _search_block(self, query_offsets: np.ndarray, query_terms: np.ndarray, block: range, k: int,
                      tie_rank: np.ndarray, min_score: float,
                      tally: _Tally) -> tuple[list[np.ndarray], list[np.ndarray]]:
        accumulator = np.zeros(self.n_docs, dtype=np.float64)
        out_docs: list[np.ndarray] = []
        out_scores: list[np.ndarray] = []
        for i in block:
            if (i - block.start) % 64 == 63:
                tally.add(64)
            docs, values = self._top_k(accumulator, query_terms[query_offsets[i]:query_offsets[i + 1]], k,
                                       tie_rank, min_score)
            out_docs.append(docs)
            out_scores.append(values)
        return out_docs, out_scores


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


def _split(n: int, parts: int) -> list[range]:
    """``parts`` contiguous ranges covering ``range(n)``, the empty ones left out."""
    bounds = np.linspace(0, n, min(parts, max(n, 1)) + 1).astype(int)
    return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a] or [range(0)]

