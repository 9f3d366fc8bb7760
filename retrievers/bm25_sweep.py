"""BM25 at many (k1, b) settings over one corpus and one set of queries, sharing what k1 and b do
not change (:meth:`retrievers.bm25.BM25.sweep`, which ``bench tune`` uses for a BM25 grid).

The tokens, the vocabulary, the documents' lengths and every term's postings with their term
frequencies do not depend on k1 or b. They are one fitted state, ``bm25-postings``, asked of the
index cache (:func:`retrievers.cache.fitted_state`, keyed by corpus, analyzer and version): built
once per grid, and read back from disk by the next run on the same corpus when the cache is on.
Per setting only the weights change,

    w(t, d) = idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl)),

and only the postings of the terms the queries hold are weighted, since ranking the queries reads
nothing else (at 200,000 synthetic documents and 1,000 queries, 29% of the postings). They form a
:class:`~retrievers.index.BM25Index` over those terms alone, searched by the index's own exact
kernel: the weights come from the same expression as :meth:`BM25Index.build
<retrievers.index.BM25Index.build>`'s and each document's are added in the same (ascending term)
order, so every setting's run equals ``BM25(k1=k1, b=b).fit(corpus).search(queries, k)`` bit for
bit (``tests/test_tune.py`` pins it). Weighting every posting for each setting instead (an index
per setting from the shared tokens) costs 0.28-0.39 s more per setting at 200,000 documents.
"""

from __future__ import annotations

import numpy as np

from corpora import Corpus, Queries, Run, progress
from corpora.analyzers import analyzer_fingerprint
from retrievers.cache import State, fitted_state
from retrievers.index import BLOCK_DOCS, BM25Index, _block_postings, bm25_idf
from retrievers.ranking import doc_id_order
from retrievers.strings import SortedStrings, check_strings, pack_strings

__all__ = ["POSTINGS_KIND", "BM25Sweep", "build_postings"]

#: The cache kind of the shared state; its version is part of the key.
POSTINGS_KIND = "bm25-postings"
POSTINGS_VERSION = 1


def build_postings(corpus: Corpus, analyzer: str, block_docs: int = BLOCK_DOCS) -> State:
    """Term frequencies by term and document, in blocks of documents as the BM25 index lays them out:
    ``indptr`` (blocks x terms + 1), ``docs_<b>`` (int32, within the block), ``tf_<b>`` (int32), and
    ``doc_lengths`` (tokens per document), ``tie_rank``, the vocabulary (packed)."""
    from corpora.tokenize import tokenize

    tokens = tokenize(corpus.full_texts, analyzer, progress=progress.callback())
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
    """One corpus's shared postings, restricted to the terms of one set of queries; :meth:`run`
    ranks the queries at one (k1, b) setting."""

    def __init__(self, corpus: Corpus, queries: Queries, analyzer: str, label: str = "bm25"):
        params = {"analyzer": analyzer, "analyzer_fingerprint": analyzer_fingerprint(analyzer),
                  "version": POSTINGS_VERSION}
        with progress.task(f"indexing {label} (shared by every grid point)"):
            state = fitted_state(POSTINGS_KIND, params, corpus, lambda: build_postings(corpus, analyzer),
                                 lambda s: valid_postings(s, len(corpus)))
        from corpora.tokenize import encode

        self.queries = queries
        self.n_docs = len(corpus)
        self.doc_ids = np.asarray(corpus.ids, dtype=object)
        self.tie_rank = state["tie_rank"]
        indptr = state["indptr"]
        self.block_docs = int(state["block_docs"][0])
        idf = bm25_idf(self.n_docs, np.diff(indptr, axis=1).sum(axis=0))
        # as the index computes them: the float lengths and their mean, over every document
        self.doc_lengths = state["doc_lengths"].astype(np.float64)
        self.avgdl = self.doc_lengths.mean() if self.n_docs else 0.0

        offsets, terms = encode(queries.texts, SortedStrings(state["vocabulary"], state["vocabulary_offsets"]),
                                analyzer)
        kept = np.unique(terms)  # ascending, so renumbering keeps every query's terms in order
        self.query_offsets = offsets
        self.query_terms = np.searchsorted(kept, terms).astype(np.int32)
        self.indptr = np.zeros((len(indptr), len(kept) + 1), dtype=np.int64)
        self.docs: list[np.ndarray] = []
        self.global_docs: list[np.ndarray] = []
        self.frequencies: list[np.ndarray] = []
        self.idf: list[np.ndarray] = []
        for number in range(len(indptr)):
            starts, lengths = indptr[number, kept], indptr[number, kept + 1] - indptr[number, kept]
            np.cumsum(lengths, out=self.indptr[number, 1:])
            take = _concatenated_ranges(starts, lengths)
            docs = np.ascontiguousarray(state[f"docs_{number}"][take])
            self.docs.append(docs)
            self.global_docs.append(docs.astype(np.int64) + number * self.block_docs)
            self.frequencies.append(state[f"tf_{number}"][take].astype(np.float64))
            self.idf.append(np.repeat(idf[kept], lengths))
        self.postings_weighted = int(self.indptr[:, -1].sum())
        self.postings_total = int(indptr[:, -1].sum())

    def run(self, k1: float, b: float, k: int, min_score: float, threads: int = 1) -> Run:
        """The top ``k`` of every query at (k1, b), as BM25 with those parameters ranks them."""
        if self.avgdl > 0:  # the expressions of BM25Index's build, term for term
            norm = k1 * (1.0 - b + b * self.doc_lengths / self.avgdl)
        else:
            norm = np.full(self.n_docs, k1)
        weights = [idf * f * (k1 + 1.0) / (f + norm[docs])
                   for idf, f, docs in zip(self.idf, self.frequencies, self.global_docs)]
        index = BM25Index(self.indptr, self.docs, weights, self.n_docs, self.block_docs)
        offsets, docs, scores = index.search(self.query_offsets, self.query_terms, k, self.tie_rank, min_score,
                                             threads=threads)
        return Run(self.queries.ids, self.doc_ids, offsets, docs, scores)
