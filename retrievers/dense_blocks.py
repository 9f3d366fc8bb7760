"""dense in fixed blocks of documents, and in shards of whole blocks: the same bits wherever it runs.

A float32 matrix product's last bits depend on the shapes it is computed in, and numpy's BLAS's on
its thread count too: cutting the documents into blocks, a different number of query rows per
product and one BLAS thread instead of two each change some scores. The encoder is the same kind
of computation: encoding documents in batches made of other documents changes some of the vectors'
components (how often is in ``benchmarks/RESULTS.md``, ``notes.dense_bits``), and so does torch's
thread count, which that note had not seen change one (``dense`` encodes on one torch thread:
:func:`retrievers.blas.one_torch_thread`). So :class:`~retrievers.dense.Dense` computes
everything in fixed pieces, and the pieces are the same whether the corpus is whole or cut in
shards:

* **encoding**: documents in blocks of ``block_docs`` consecutive documents in corpus order; inside
  a block, longest first, in chunks of ``4 * batch_size`` texts (less padding per batch). A
  document's vector depends only on its block (:func:`encode_in_blocks`);
* **scoring**: a score is a cell of ``Q[c] @ D[b].T`` for a chunk ``c`` of ``query_rows``
  consecutive query vectors and a block ``b`` of documents, computed by BLAS on one thread and
  widened to float64 (:func:`block_scores`);
* **ranking**: the top k per query, exact, score descending then doc id ascending (the seam's rule),
  however the scores are grouped (:func:`block_search`).

A shard made of whole blocks (the sharding protocol's ``shard_unit``: only the corpus's last block
may be short, and it ends the last shard) therefore encodes every document and computes every score
with the very operations of the whole corpus; the client encodes the queries once and sends the
vectors (``prepare_queries``); each shard returns its exact top k and the client merges them with
the same rule (:func:`retrievers.sharding.merge_hits`): the run of ``fit(corpus)`` then ``search``.
:class:`DenseSharding` is that protocol, mixed into ``Dense``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from corpora import Corpus, Queries
from retrievers.blas import one_blas_thread
from retrievers.ranking import doc_id_order, top_k
from retrievers.sharding import ShardFit, ShardHits

#: Query x document cells held at once while ranking (as :attr:`ScoreRetriever.batch_cells`).
RANK_CELLS = 1 << 24


def encode_in_blocks(encode: Callable[[list[str]], np.ndarray], texts: Sequence[str], dimension: int,
                     block_docs: int, chunk: int, done: Callable[[int], None] | None = None) -> np.ndarray:
    """Unit float32 vectors of ``texts``, rows in input order, encoded block by block.

    Texts ``[i * block_docs, (i + 1) * block_docs)`` form block ``i``; each block is sorted longest
    first (stable) and handed to ``encode`` ``chunk`` texts at a time, so a text's vector depends on
    its own block only. ``done(n)`` hears the number of texts encoded so far.
    """
    vectors = np.zeros((len(texts), dimension), dtype=np.float32)
    encoded = 0
    for first in range(0, len(texts), block_docs):
        block = texts[first:first + block_docs]
        order = np.argsort([-len(t) for t in block], kind="stable")
        for start in range(0, len(block), chunk):
            rows = order[start:start + chunk]
            vectors[first + rows] = np.asarray(encode([block[i] for i in rows]), dtype=np.float32)
            encoded += len(rows)
            if done is not None:
                done(encoded)
    return vectors


def block_scores(query_vectors: np.ndarray, doc_vectors: np.ndarray, block_docs: int,
                 query_rows: int, dtype: Any = np.float32) -> np.ndarray:
    """Cosines (the vectors are unit), (n_queries x n_docs) float64, each cell from the product in
    ``dtype`` (float32: dense's; float64: lsa's, whose document vectors are kept as float32) of its
    chunk of ``query_rows`` query vectors (counted from the first) and its block of ``block_docs``
    documents, on one BLAS thread."""
    with one_blas_thread():
        return _products(query_vectors, doc_vectors, block_docs, query_rows, dtype)


def _products(query_vectors: np.ndarray, doc_vectors: np.ndarray, block_docs: int, query_rows: int,
              dtype: Any) -> np.ndarray:
    queries = np.ascontiguousarray(query_vectors, dtype=dtype)
    out = np.empty((len(queries), len(doc_vectors)), dtype=np.float64)
    for d in range(0, len(doc_vectors), block_docs):
        block = np.ascontiguousarray(doc_vectors[d:d + block_docs], dtype=dtype)  # one block widened at a time
        for q in range(0, len(queries), query_rows):
            out[q:q + query_rows, d:d + block_docs] = queries[q:q + query_rows] @ block.T
    return out


def block_search(query_vectors: np.ndarray, doc_vectors: np.ndarray, tie_rank: np.ndarray, k: int,
                 min_score: float, block_docs: int, query_rows: int, dtype: Any = np.float32) -> ShardHits:
    """The top ``k`` documents per query by :func:`block_scores` (score descending, ``tie_rank``
    ascending, scores at or below ``min_score`` left out), holding at most about
    :data:`RANK_CELLS` scores at a time (products in ``dtype``, as :func:`block_scores`).

    The documents are taken in groups of whole blocks (about ``RANK_CELLS / query_rows`` documents),
    each widened to ``dtype`` once for every chunk of queries (one group's copy held at a time); a query keeps the candidates that can still reach its top k: a group's top k
    while it has fewer than k, then only the documents scoring at least its k-th best so far (ties
    included, so the tie-break still decides). That is exact (a document below k others is below
    them in the end too), and a query's last sort orders about k candidates, not k per group."""
    group = block_docs * max(1, RANK_CELLS // (query_rows * block_docs))
    n_groups = max(-(-len(doc_vectors) // group), 1)
    pools = [_Pool() for _ in range(len(query_vectors))]
    with one_blas_thread():
        for first in range(0, max(len(doc_vectors), 1), group):
            vectors = np.ascontiguousarray(doc_vectors[first:first + group], dtype=dtype)  # widened once
            ranks = tie_rank[first:first + group]
            for q in range(0, len(query_vectors), query_rows):
                matrix = _products(query_vectors[q:q + query_rows], vectors, block_docs, query_rows, dtype)
                for pool, row in zip(pools[q:q + query_rows], matrix):
                    pool.add(row, first, ranks, k, min_score)
                del matrix
    if n_groups > 1:  # one group's top k is already ordered
        for pool in pools:
            pool.docs, pool.scores = top_k(pool.docs, pool.scores, k, tie_rank, min_score)
    offsets = np.zeros(len(query_vectors) + 1, dtype=np.int64)
    np.cumsum([len(pool.docs) for pool in pools], out=offsets[1:])
    return ShardHits(offsets, _joined([pool.docs for pool in pools], np.int64),
                     _joined([pool.scores for pool in pools], np.float64))


class _Pool:
    """One query's candidates so far (corpus positions and scores): every document that can still
    reach its top k, and ``floor``, its k-th best score (-inf while it has fewer than k)."""

    __slots__ = ("docs", "scores", "floor")

    def __init__(self) -> None:
        self.docs = np.empty(0, dtype=np.int64)
        self.scores = np.empty(0, dtype=np.float64)
        self.floor = -np.inf

    def add(self, row: np.ndarray, first: int, ranks: np.ndarray, k: int, min_score: float) -> None:
        """Take in a group's scores ``row`` (documents ``first`` on, tie ranks ``ranks``)."""
        if self.floor == -np.inf:  # fewer than k so far: the group's own top k
            idx, values = top_k(None, row, k, ranks, min_score)
        else:  # the floor is above min_score: it was one of the candidates' scores
            idx = np.flatnonzero(row >= self.floor)
            values = row[idx]
        if not len(idx):
            return
        if len(self.docs):
            docs, scores = np.concatenate([self.docs, idx + first]), np.concatenate([self.scores, values])
        else:
            docs, scores = idx + first, values
        if len(scores) >= k and k > 0:
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            if len(scores) > k:
                keep = scores >= kth
                docs, scores = docs[keep], scores[keep]
            self.floor = kth
        self.docs, self.scores = docs.astype(np.int64, copy=False), scores.astype(np.float64, copy=False)


def _joined(arrays: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.empty(0, dtype=dtype)


@dataclass(frozen=True)
class DenseShard:
    """A shard's document vectors (float32, unit rows, shard order) and its doc id order; they stay
    on the worker that encoded them."""

    vectors: np.ndarray
    tie_rank: np.ndarray


class DenseSharding:
    """The sharding protocol (:mod:`retrievers.sharding`) for :class:`~retrievers.dense.Dense`, which
    it is mixed into; it reads ``block_docs``, ``query_rows``, ``min_score`` and ``encode``.

    1. ``fit_shard``: encode the shard's documents in blocks (the encoder is loaded once per worker
       process, :func:`retrievers.dense.load_encoder`); no statistics: a cosine needs none;
    2. ``reduce_statistics`` / ``index_shard``: nothing to reduce; the vectors are the index;
    3. ``prepare_queries`` (on the client): the query vectors, encoded once for every shard;
    4. ``search_shard`` / ``score_shard``: :func:`block_search` / :func:`block_scores` on the shard.
    """

    block_docs: ClassVar[int]
    query_rows: ClassVar[int]
    min_score: float
    encode: Callable[[list[str], str], np.ndarray]

    @property
    def shard_unit(self) -> int:
        """Shards are cut at multiples of this many documents: whole blocks."""
        return self.block_docs

    def fit_shard(self, shard: Corpus) -> ShardFit:
        return ShardFit(None, DenseShard(self.encode(shard.full_texts, "documents"), doc_id_order(shard.ids)))

    def reduce_statistics(self, statistics: Sequence[Any]) -> list[None]:
        return [None for _ in statistics]

    def index_shard(self, state: DenseShard, statistics: None) -> DenseShard:
        return state

    def prepare_queries(self, queries: Queries) -> np.ndarray:
        return self.encode(queries.texts, "queries")

    def search_shard(self, index: DenseShard, queries: np.ndarray, k: int) -> ShardHits:
        return block_search(queries, index.vectors, index.tie_rank, k, self.min_score, self.block_docs,
                            self.query_rows)

    def score_shard(self, index: DenseShard, queries: np.ndarray) -> np.ndarray:
        return block_scores(queries, index.vectors, self.block_docs, self.query_rows)
