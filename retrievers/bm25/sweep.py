"""BM25 at many (k1, b) settings over one corpus and one set of queries, sharing what k1 and b do
not change (:meth:`retrievers.bm25.BM25.sweep`, which ``bench tune`` uses for a BM25 grid).

The tokens, the vocabulary, the documents' lengths and every term's postings with their term
frequencies do not depend on k1 or b. They are one fitted state, ``bm25-postings``, asked of the
index cache (:func:`retrievers.cache.fitted_state`, keyed by corpus, analyzer and version): built
once per grid, and read back from disk by the next run on the same corpus when the cache is on.
Per setting only the weights change,

    w(t, d) = idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl)),

and only the postings of the terms the queries hold are weighted, since ranking the queries reads
nothing else. The queries'
candidates are laid out once, as (query, document) pairs with the postings that add to each
(:class:`BM25Sweep`); a setting weights the postings, sums them into the pairs in the order the
index's sparse product sums them, and ranks each query with the index's own
:func:`~retrievers.ranking.top_k`. The weights come from the index's own functions
(:func:`~retrievers.bm25.index.length_norms`, :func:`~retrievers.bm25.index.bm25_weights`), so
every setting's run equals ``BM25(k1=k1, b=b).fit(corpus).search(queries, k)`` bit for bit
(``tests/test_tune.py`` pins it).
``benchmarks/tune_speed.py`` times it against the other ways (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from corpora import Corpus, Queries, Run
from corpora.analyzers import analyzer_fingerprint
from retrievers.cache import State, fitted_state
from retrievers.context import RunContext
from retrievers.bm25.index import BLOCK_DOCS, _block_postings, bm25_idf, bm25_weights, length_norms
from retrievers.ranking import doc_id_order, top_k
from retrievers.strings import SortedStrings, check_strings, pack_strings

__all__ = ["POSTINGS_KIND", "BM25Sweep", "build_postings"]

#: The cache kind of the shared state; its version is part of the key.
POSTINGS_KIND = "bm25-postings"
POSTINGS_VERSION = 1


def build_postings(corpus: Corpus, analyzer: str, block_docs: int = BLOCK_DOCS,
                   progress: Callable[[int, int], None] | None = None) -> State:
    """Term frequencies by term and document, in blocks of documents as the BM25 index lays them out:
    ``indptr`` (blocks x terms + 1), ``docs_<b>`` (int32, within the block), ``tf_<b>`` (int32), and
    ``doc_lengths`` (tokens per document), ``tie_rank``, the vocabulary (packed). ``progress(done, total)``
    hears the tokenizing."""
    from corpora.tokenize import tokenize

    tokens = tokenize(corpus.full_texts, analyzer, progress=progress)
    offsets, term_ids, vocabulary = tokens.offsets, tokens.term_ids, tokens.vocabulary
    del tokens
    n_docs, n_terms = len(offsets) - 1, len(vocabulary)
    firsts = range(0, max(n_docs, 1), block_docs)
    indptr = np.zeros((len(firsts), n_terms + 1), dtype=np.int64)
    state: State = {}
    for number, first_doc in enumerate(firsts):
        last_doc = min(n_docs, first_doc + block_docs)
        start, stop = offsets[first_doc], offsets[last_doc]
        df, docs, tf = _block_postings(offsets[first_doc:last_doc + 1] - start, term_ids[start:stop], n_terms)
        np.cumsum(df, out=indptr[number, 1:])
        state[f"docs_{number}"] = docs.astype(np.int32, copy=False)
        state[f"tf_{number}"] = tf
    blob, vocabulary_offsets = pack_strings(vocabulary)
    state.update(indptr=indptr, block_docs=np.array([block_docs], dtype=np.int64),
                 doc_lengths=np.diff(offsets).astype(np.int64), tie_rank=doc_id_order(corpus.ids),
                 vocabulary=blob, vocabulary_offsets=vocabulary_offsets)
    return state


def valid_postings(state: State, n_docs: int) -> bool:
    """A cached postings state is used only when its arrays fit together (never trust a file): the
    term frequencies of each document add up to its length."""
    try:
        indptr, block, lengths, tie_rank = state["indptr"], state["block_docs"], state["doc_lengths"], state["tie_rank"]
        blob, offsets = state["vocabulary"], state["vocabulary_offsets"]
        if not (indptr.dtype == np.int64 and indptr.ndim == 2 and block.dtype == np.int64 and block.shape == (1,)):
            return False
        block_docs = int(block[0])
        if not 1 <= block_docs < 2**31 or len(indptr) != max(1, -(-n_docs // block_docs)):
            return False
        blocks = [(state[f"docs_{b}"], state[f"tf_{b}"]) for b in range(len(indptr))]
    except KeyError:
        return False
    if not (lengths.dtype == np.int64 and lengths.shape == (n_docs,) and tie_rank.dtype == np.int64
            and tie_rank.shape == (n_docs,) and offsets.dtype == np.int64 and indptr.shape[1] == len(offsets)):
        return False
    if (indptr[:, 0] != 0).any() or np.any(np.diff(indptr, axis=1) < 0):
        return False
    for number, (docs, tf) in enumerate(blocks):
        width = min(block_docs, n_docs - number * block_docs)
        if not (docs.dtype == np.int32 and tf.dtype == np.int32 and docs.shape == tf.shape == (indptr[number, -1],)):
            return False
        if len(docs) and (docs.min() < 0 or docs.max() >= width or tf.min() < 1):
            return False
        totals = np.bincount(docs, weights=tf, minlength=max(width, 0))
        if not np.array_equal(totals, lengths[number * block_docs:number * block_docs + width]):
            return False
    if n_docs and not (np.bincount(tie_rank.clip(0, n_docs - 1), minlength=n_docs) == 1).all():
        return False
    try:
        check_strings(blob, offsets)
    except ValueError:
        return False
    return True


def _concatenated_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lengths)])`` without the loop."""
    total = int(lengths.sum())
    if not total:
        return np.empty(0, dtype=np.int64)
    shift = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + shift


class BM25Sweep:
    """One corpus's shared postings, restricted to the terms of one set of queries, laid out once as
    every query's candidate documents; :meth:`run` ranks the queries at one (k1, b) setting.

    Layout, built once: the *restricted postings* (the queries' terms' postings, term by term,
    documents ascending) with each posting's idf, term frequency and document; the *pairs* (query,
    candidate document), sorted by query then document; and, level by level, which posting adds to
    which pair: level 0 holds every pair's first term (in ascending term order), level 1 the second
    of the pairs that have one, and so on. A setting then weights the restricted postings and adds
    them to the pairs level by level, which is the order of the index's sparse product (each
    document's weights summed from zero in ascending term order), so the scores are the same bits;
    and ranks each query's pairs with :func:`~retrievers.ranking.top_k`, as the index's search does.
    """

    def __init__(self, corpus: Corpus, queries: Queries, analyzer: str, label: str = "bm25",
                 context: RunContext | None = None):
        params = {"analyzer": analyzer, "analyzer_fingerprint": analyzer_fingerprint(analyzer),
                  "version": POSTINGS_VERSION}
        context = context if context is not None else RunContext()
        tasks = context.progress
        with tasks.task(f"indexing {label} (shared by every grid point)"):
            state = fitted_state(context.cache, POSTINGS_KIND, params, corpus,
                                 lambda: build_postings(corpus, analyzer, progress=tasks.callback()),
                                 lambda s: valid_postings(s, len(corpus)))
        from corpora.tokenize import encode

        self.queries = queries
        self.n_docs = len(corpus)
        self.doc_ids = corpus.id_array()
        self.tie_rank = state["tie_rank"]
        indptr = state["indptr"]
        block_docs = int(state["block_docs"][0])
        idf = bm25_idf(self.n_docs, np.diff(indptr, axis=1).sum(axis=0))
        # as the index computes them: the float lengths and their mean, over every document
        self.doc_lengths = state["doc_lengths"].astype(np.float64)
        self.avgdl = self.doc_lengths.mean() if self.n_docs else 0.0

        offsets, terms = encode(queries.texts, SortedStrings(state["vocabulary"], state["vocabulary_offsets"]),
                                analyzer)
        kept = np.unique(terms)
        # the restricted postings, term by term (blocks in order, so documents ascend within a term)
        per_block = []
        for number in range(len(indptr)):
            starts, lengths = indptr[number, kept], indptr[number, kept + 1] - indptr[number, kept]
            take = _concatenated_ranges(starts, lengths)
            term_of = np.repeat(np.arange(len(kept)), lengths)
            docs = state[f"docs_{number}"][take].astype(np.int64) + number * block_docs
            per_block.append((term_of, docs, state[f"tf_{number}"][take]))
        term_of = np.concatenate([t for t, _, _ in per_block])
        order = np.argsort(term_of, kind="stable")
        self.docs = np.concatenate([d for _, d, _ in per_block])[order]
        self.frequencies = np.concatenate([f for _, _, f in per_block])[order].astype(np.float64)
        self.idf = idf[kept][term_of[order]]
        bounds = np.searchsorted(term_of[order], np.arange(len(kept) + 1))
        self.postings_weighted, self.postings_total = len(self.docs), int(indptr[:, -1].sum())
        del per_block, term_of, order
        self._pairs(offsets, np.searchsorted(kept, terms), bounds)

    def _pairs(self, offsets: np.ndarray, terms: np.ndarray, bounds: np.ndarray) -> None:
        """Every (query, candidate) pair and, level by level, the postings that add to it."""
        n_queries, n_terms, n_docs = len(offsets) - 1, max(1, len(bounds) - 1), max(1, self.n_docs)
        # each query's distinct terms, ascending (a repeated query term counts once)
        query_of_term = np.repeat(np.arange(n_queries, dtype=np.int64), np.diff(offsets))
        query_of_term, terms = np.divmod(np.unique(query_of_term * n_terms + terms), n_terms)
        lengths = bounds[terms + 1] - bounds[terms]
        postings = _concatenated_ranges(bounds[terms], lengths)
        key = np.repeat(query_of_term, lengths) * n_docs + self.docs[postings]
        order = np.argsort(key, kind="stable")  # stable: a pair's postings stay in ascending term order
        key, postings = key[order], postings[order]
        del order, query_of_term, terms
        first = np.ones(len(key), dtype=bool)
        np.not_equal(key[1:], key[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        small = np.int32 if max(len(starts), len(self.docs)) < 2**31 else np.int64  # halves the gathers' memory
        self.pair_docs = self.docs[postings[starts]]
        self.pair_bounds = np.searchsorted(key[starts] // n_docs, np.arange(n_queries + 1))
        self.first_postings = postings[starts].astype(small)  # level 0: every pair's first term
        rest = np.flatnonzero(~first)
        del key, first
        pair_of_rest = np.searchsorted(starts, rest, side="right") - 1
        level = rest - starts[pair_of_rest]
        by_level = np.argsort(level, kind="stable")
        self.levels = [(pair_of_rest[part].astype(small), postings[rest[part]].astype(small))
                       for part in np.split(by_level, np.cumsum(np.bincount(level))[1:-1]) if len(part)]

    def run(self, k1: float, b: float, k: int, min_score: float) -> Run:
        """The top ``k`` of every query at (k1, b), as BM25 with those parameters ranks them."""
        norm = length_norms(self.doc_lengths, self.avgdl, k1, b)  # the index's expressions
        weights = bm25_weights(self.idf, self.frequencies, norm[self.docs], k1)
        scores = weights[self.first_postings]  # the product's sums start at 0.0, and 0.0 + w is w
        for pairs, postings in self.levels:
            scores[pairs] += weights[postings]
        found = [top_k(self.pair_docs[a:z], scores[a:z], k, self.tie_rank, min_score)
                 for a, z in zip(self.pair_bounds[:-1].tolist(), self.pair_bounds[1:].tolist())]
        run_offsets = np.zeros(len(found) + 1, dtype=np.int64)
        np.cumsum([len(docs) for docs, _ in found], out=run_offsets[1:])
        docs = np.concatenate([d for d, _ in found]) if found else np.empty(0, dtype=np.int64)
        values = np.concatenate([v for _, v in found]) if found else np.empty(0)
        return Run(self.queries.ids, self.doc_ids, run_offsets, docs.astype(np.int64), values)
