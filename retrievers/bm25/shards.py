"""BM25 in shards of documents: the sharding protocol (:mod:`retrievers.sharding`) for :class:`~retrievers.BM25`.

1. ``fit_shard``: tokenise the shard (:func:`corpora.tokenize.tokenize`, as ``fit`` does) and count
   its statistics: documents, tokens, and each term's document frequency;
2. ``reduce_statistics``: N and the total length are sums; the vocabularies are merged and each
   term's document frequencies added, then every shard gets the collection's frequency of each of
   *its* terms;
3. ``index_shard``: build the shard's :class:`~retrievers.bm25.index.BM25Index` with the collection's N,
   average length and document frequencies (:class:`~retrievers.bm25.index.CollectionStatistics`), so
   each posting's weight is the whole index's, bit for bit;
4. ``search_shard``: the shard's top k per query, by the same search as ``BM25.search``.

Why the bytes match: a document's score is the sum of its postings' weights in ascending term
order (the index's sparse product), and term ids follow the sorted vocabulary in a shard as in the
whole index, so each document adds the same weights in the same order. The shard's ranking breaks
ties by its own doc id order, which agrees with the corpus's on the shard's documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from corpora import Corpus, Queries
from retrievers.bm25.index import BM25Index, CollectionStatistics
from retrievers.ranking import doc_id_order
from retrievers.sharding import ShardFit, ShardHits
from retrievers.strings import SortedStrings, pack_strings, unpack_strings


@dataclass(frozen=True)
class ShardStatistics:
    """One shard's counts: documents, tokens, its vocabulary (packed, ascending) and each term's
    document frequency in the shard."""

    n_docs: int
    total_length: int
    vocabulary: tuple[np.ndarray, np.ndarray]  # (UTF-8 bytes, offsets): retrievers.strings.pack_strings
    df: np.ndarray  # int64, by the shard's term id


@dataclass(frozen=True)
class ShardTokens:
    """What a worker keeps between ``fit_shard`` and ``index_shard``: the shard's token runs."""

    offsets: np.ndarray
    term_ids: np.ndarray
    vocabulary: tuple[np.ndarray, np.ndarray]
    tie_rank: np.ndarray


@dataclass(frozen=True)
class ShardIndex:
    """A shard's BM25 index, its vocabulary and its doc id order."""

    index: BM25Index
    vocabulary: tuple[np.ndarray, np.ndarray]
    tie_rank: np.ndarray


def _document_frequencies(offsets: np.ndarray, term_ids: np.ndarray, n_terms: int) -> np.ndarray:
    """Documents holding each term: the tokens grouped by term (a counting sort in C, documents
    ascending within a term), counting where the document changes."""
    by_doc = sp.csr_matrix((np.ones(len(term_ids), dtype=bool), term_ids, offsets), shape=(len(offsets) - 1, n_terms))
    by_term = by_doc.tocsc()
    docs, bounds = by_term.indices, by_term.indptr.astype(np.int64)
    new = np.ones(len(docs), dtype=bool)
    np.not_equal(docs[1:], docs[:-1], out=new[1:])
    new[bounds[:-1][bounds[:-1] < len(docs)]] = True  # each term's first token
    counted = np.concatenate([[0], np.cumsum(new, dtype=np.int64)])
    return counted[bounds[1:]] - counted[bounds[:-1]]


#: Vocabularies are merged as fixed-width bytes (C sorting) when no term is longer than this; as
#: Python strings otherwise, so one very long term cannot make every row that wide.
_BYTES_UP_TO = 64


def _merged_vocabulary(vocabularies: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """For the shards' vocabularies concatenated, each term's position in their sorted union."""
    lengths = np.concatenate([np.diff(offsets) for _, offsets in vocabularies])
    if len(lengths) and lengths.max() <= _BYTES_UP_TO:
        words = [blob.tobytes() for blob, _ in vocabularies]
        bounds = [offsets.tolist() for _, offsets in vocabularies]
        rows = [data[a:b] for data, cut in zip(words, bounds) for a, b in zip(cut[:-1], cut[1:])]
        if not any(row.endswith(b"\0") for row in rows):  # numpy's bytes drop trailing NULs
            # UTF-8 byte order is code point order: the vocabularies' own order
            return np.unique(np.array(rows, dtype=f"S{max(1, int(lengths.max()))}"), return_inverse=True)[1]
    terms = np.array([w for blob, offsets in vocabularies for w in unpack_strings(blob, offsets)], dtype=object)
    return np.unique(terms, return_inverse=True)[1]


class BM25Sharding:
    """The sharding protocol for BM25 (module docstring); mixed into :class:`~retrievers.BM25`, whose
    ``k1``, ``b``, ``analyzer`` and ``min_score`` it reads."""

    k1: float
    b: float
    analyzer: str
    min_score: float

    def fit_shard(self, shard: Corpus) -> ShardFit:
        from corpora.tokenize import tokenize

        tokens = tokenize(shard.full_texts, self.analyzer)
        vocabulary = pack_strings(tokens.vocabulary)
        statistics = ShardStatistics(len(shard), int(tokens.offsets[-1]) if len(tokens.offsets) else 0, vocabulary,
                                     _document_frequencies(tokens.offsets, tokens.term_ids, len(tokens.vocabulary)))
        return ShardFit(statistics, ShardTokens(tokens.offsets, tokens.term_ids, vocabulary, doc_id_order(shard.ids)))

    def reduce_statistics(self, statistics: Sequence[Any]) -> list[CollectionStatistics]:
        """The collection's N and total length, and per shard the collection's df of its terms."""
        n_docs = sum(s.n_docs for s in statistics)
        total_length = sum(s.total_length for s in statistics)
        sizes = [len(s.vocabulary[1]) - 1 for s in statistics]
        if not sum(sizes):
            return [CollectionStatistics(n_docs, total_length, np.zeros(0, dtype=np.int64)) for _ in statistics]
        term = _merged_vocabulary([s.vocabulary for s in statistics]).reshape(-1)
        df = np.zeros(int(term.max()) + 1, dtype=np.int64)
        np.add.at(df, term, np.concatenate([s.df for s in statistics]))
        bounds = np.cumsum([0, *sizes])
        return [CollectionStatistics(n_docs, total_length, df[term[a:b]]) for a, b in zip(bounds[:-1], bounds[1:])]

    def index_shard(self, state: ShardTokens, statistics: CollectionStatistics) -> ShardIndex:
        index = BM25Index.build(state.offsets, state.term_ids, len(state.vocabulary[1]) - 1, self.k1, self.b,
                                collection=statistics)
        return ShardIndex(index, state.vocabulary, state.tie_rank)

    def _encode(self, shard: ShardIndex, queries: Queries) -> tuple[np.ndarray, np.ndarray]:
        from corpora.tokenize import encode

        return encode(queries.texts, SortedStrings(*shard.vocabulary), self.analyzer)

    def search_shard(self, index: ShardIndex, queries: Queries, k: int) -> ShardHits:
        offsets, docs, scores = index.index.search(*self._encode(index, queries), k, index.tie_rank, self.min_score)
        return ShardHits(offsets, docs, scores)

    def score_shard(self, index: ShardIndex, queries: Queries) -> sp.csr_matrix:
        return index.index.score_matrix(*self._encode(index, queries))
