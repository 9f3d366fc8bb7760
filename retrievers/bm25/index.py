"""A term-major index of BM25 postings, and exact batched top-k search over it.

Layout: documents in blocks of ``BLOCK_DOCS``; within a block, a CSR over terms whose postings are
doc indices (relative to the block, ascending; ``uint16`` when a block holds at most 65,536
documents) with their term frequencies (``uint8`` when none exceeds 255). A document's length
enters BM25 only through its norm, so each document holds the number of its length class (the
distinct lengths, ascending) and the index one norm per class. A posting's weight is computed when
it is read:

    w(t, d) = idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))            (Lucene)

always by :func:`bm25_weights`' float64 operations in that order, so a weight has the same bits
wherever it is computed. A query's score is the sum of the weights of its distinct terms, added in
ascending term id order. The postings take 3 bytes each instead of the 12 of precomputed float64
weights, and the compiled loop reads them faster than it read the weights (a block's length classes
fit a core's cache beside its scores; sizes in ``benchmarks/RESULTS.md``, ``notes.memory``).
Weights stay float64 although float32 would halve a materialised block: rounding moves scores by
~1e-7, enough to reorder near-ties, and this BM25 must rank exactly as a plain float64 BM25 does (a
test on Vaswani pins it to an independent implementation).

Search conventions (those of :mod:`retrievers.ranking`, whose :func:`~retrievers.ranking.top_k` ranks
each query's candidates): a document is a result only
when its score is above ``min_score``; order is score descending, ties by ``tie_rank`` ascending (the
rank of the doc id in ascending string order); selection is exact, ties at the k-th place included.
A batch of queries is one sparse product per block, (queries x terms, binary) @ (terms x block
docs, weights): scipy walks only the postings of the batch's terms and adds each document's weights
in ascending term order, in C++ and without the GIL, leaving each query's distinct candidates with
their scores; blocks keep scipy's per-document work arrays in a core's cache (timed against one
product over all documents by ``benchmarks/speed_paths.py`` ``blocks``; numbers in
``benchmarks/RESULTS.md``). The product needs each block's weights as an array: they are computed
on its first search and kept. Per query, a strided sample of the candidates gives a lower bound of
the k-th best score (the k-th best of a subset can only be lower), which discards most of them
before ``np.partition``. This path needs no JIT; on
either path ``threads=2`` scores two batches side by side.

Where numba is installed (the ``fast`` extra), a large index is searched by a compiled loop instead
(:mod:`retrievers.bm25.compiled`): the same weights, added in the same order into a dense array of a
block's scores, and a running k-th best that discards most candidates on the spot and lets the
loop skip the weights of terms that cannot bring a document into the top k on their own (safe
pruning); it returns exactly what the product returns, scores bit for bit, and
never materialises the weights.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from corpora.memory import release_freed_memory
from corpora.run import doc_index_dtype
from retrievers.ranking import top_k

#: Queries scored by one sparse product: amortises scipy's per-call work over the documents.
QUERY_BATCH = 32
#: Documents per block: a block's doc indices fit ``uint16``, and its scores (float64) fill, with
#: scipy's work arrays or the compiled loop's, a core's cache.
BLOCK_DOCS = 1 << 16
#: The compiled loop is the default from this many postings, where numba is installed
#: (``benchmarks/speed_paths.py`` ``compiled_sizes`` and ``engines_matrix.py``; numbers in
#: ``benchmarks/RESULTS.md``). It is faster on smaller indexes too, but a process's first search
#: with it pays numba's start-up and loading the loop, a fixed cost, where the product's first search
#: pays materialising the weights, which grows with the postings. From about twice this many the
#: loop's first search is no slower; from this many (about half a million short documents, fifty
#: thousand long ones) it costs a few tenths of a second more, earned back within about a thousand
#: queries, and every corpus of a million documents, short ones with a steep Zipf law included, is
#: past it (at 2^24 such corpora kept the product and answered at half the best peer's speed).
#: Below, the loop earns its start-up back only after thousands of queries. Past it the product's
#: weights (12 bytes a posting) also outweigh numba's own memory.
COMPILED_FROM_POSTINGS = 1 << 23
#: Queries per call of the compiled loop (a progress step; threads share batches), fewer when k is
#: large: a call's results, kept while it gathers them, stay under :data:`COMPILED_BATCH_RESULTS`,
#: which lowers the search's peak at no cost in speed (``benchmarks/RESULTS.md``, ``notes.memory``).
COMPILED_BATCH = 256
COMPILED_BATCH_RESULTS = 1 << 16
#: Up to this size (12 bytes a result: an int32 doc number and a float64 score; 16 past 2^31
#: documents), a search's results are written in place (:class:`_Results`).
_RESULTS_IN_PLACE_BYTES = 1 << 30
#: Postings weighted per step when a block's weights are materialised: bounds the float64 temporaries.
_BUILD_STEP = 1 << 20
#: A streamed build keeps each block's postings per term in a byte up to this count; larger ones aside.
_COUNT_CAP = 255
#: Document lengths below this are counted (``np.bincount``) into length classes rather than sorted.
_COUNTED_LENGTHS = 1 << 22


def bm25_idf(n_docs: int, df: np.ndarray) -> np.ndarray:
    """Lucene's idf: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, always > 0."""
    return np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def length_norms(lengths: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    """BM25's length normalisation ``k1 * (1 - b + b * |d| / avgdl)`` of float64 ``lengths``; ``k1``
    for every document when ``avgdl`` is 0 (no document has a token)."""
    if avgdl > 0:
        return k1 * (1.0 - b + b * lengths / avgdl)
    return np.full(len(lengths), k1)


def bm25_weights(idf: np.ndarray, f: np.ndarray, norm: np.ndarray, k1: float) -> np.ndarray:
    """Postings' weights from their term's idf, their float64 term frequency and their document's
    norm: ``idf * f * (k1 + 1) / (f + norm)``, in this order (the compiled loop repeats it)."""
    return idf * f * (k1 + 1.0) / (f + norm)


def _smallest_unsigned(largest: int) -> type[np.integer]:
    """The narrowest of uint8, uint16 and int32 that holds ``0..largest``."""
    if largest < 1 << 8:
        return np.uint8
    if largest < 1 << 16:
        return np.uint16
    return np.int32


def doc_dtype(block_docs: int) -> type[np.integer]:
    """The type of a posting's document number within a block of ``block_docs`` documents."""
    return np.uint16 if block_docs <= 1 << 16 else np.int32


def length_classes(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, length_class)``: the distinct document lengths ascending (float64, what
    :func:`length_norms` takes) and each document's class, in the narrowest type that holds it."""
    largest = int(lengths.max(initial=0))
    if len(lengths) and lengths.min() >= 0 and largest < _COUNTED_LENGTHS:
        # counted rather than sorted, and mapped a step at a time into the narrow type: no temporary
        # of a sort's size (at ten million documents they sat on the fit's peak)
        present = np.bincount(lengths, minlength=largest + 1) > 0
        classes = np.flatnonzero(present)
        number = np.cumsum(present) - 1
        length_class = np.empty(len(lengths), dtype=_smallest_unsigned(max(len(classes) - 1, 0)))
        for start in range(0, len(lengths), _BUILD_STEP):
            length_class[start:start + _BUILD_STEP] = number[lengths[start:start + _BUILD_STEP]]
        return classes.astype(np.float64), length_class
    classes, inverse = np.unique(lengths, return_inverse=True)
    return classes.astype(np.float64), inverse.reshape(-1).astype(_smallest_unsigned(max(len(classes) - 1, 0)))


def _shrunk(values: np.ndarray, size: int) -> np.ndarray:
    """``values[:size]``, giving the tail back in place when nothing else refers to ``values``."""
    try:
        values.resize(size, refcheck=True)
        return values
    except ValueError:
        return values[:size].copy()


def _packed(handed_over: list[np.ndarray], sources: np.ndarray, block_starts: np.ndarray) -> np.ndarray:
    """The blocks of ``handed_over[0]`` (emptied here), block ``b``'s values written from ``sources[b]``,
    copied into one array of their exact size in order, last block first.

    Each copied block's source is given back at once (the array shrinks to where it starts), so the
    peak is the packed size plus one block. Moving the blocks down in place instead left the moved
    blocks' old pages above the packed size in use until the end, at the peak of the whole build
    (``benchmarks/RESULTS.md``, ``notes.memory``).
    """
    values = handed_over.pop()
    packed = np.empty(int(block_starts[-1]), dtype=values.dtype)
    for number in reversed(range(len(sources))):
        source, start, stop = int(sources[number]), int(block_starts[number]), int(block_starts[number + 1])
        packed[start:stop] = values[source:source + stop - start]
        try:
            values.resize(source, refcheck=True)
        except ValueError:  # someone else holds it: it is let go whole at the end
            pass
    return packed


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
    """The first term overlapping positions ``start:stop`` of a term-major layout whose term ``t`` takes
    ``bounds[t]:bounds[t + 1]`` (tokens, or a block's postings), and each position's term minus it."""
    first = int(np.searchsorted(bounds, start, side="right")) - 1
    last = int(np.searchsorted(bounds, stop - 1, side="right")) - 1
    lengths = np.diff(np.clip(bounds[first:last + 2], start, stop))
    return first, np.repeat(np.arange(last - first + 1, dtype=np.int32), lengths)


def _blocks(new: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(start, stop, run starts)`` over the term-major tokens in steps of ``_BUILD_STEP``."""
    for start in range(0, len(new), _BUILD_STEP):
        stop = min(len(new), start + _BUILD_STEP)
        yield start, stop, np.flatnonzero(new[start:stop]) + start


def _block_postings(offsets: np.ndarray, term_ids: np.ndarray,
                    n_terms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One block's postings: ``(df per term, docs, term frequencies)``, term-major, docs local."""
    token_docs, bounds = _term_major(offsets, term_ids, n_terms)
    new = _first_of_runs(token_docs, bounds)
    docs = token_docs[new]
    del token_docs
    df = np.zeros(n_terms, dtype=np.int64)
    tf = np.empty(len(docs), dtype=np.int32)
    run = 0
    for start, stop, firsts in _blocks(new):  # a term frequency is the length of a run
        first, term_of = _term_of_tokens(bounds, start, stop)
        counted = np.bincount(term_of[firsts - start])
        df[first:first + len(counted)] += counted
        tf[run:run + len(firsts)] = np.diff(firsts, append=_next_true(new, stop))
        run += len(firsts)
    return df, docs, tf


def _into_term_order(docs: np.ndarray, tfs: np.ndarray, at: int, bounds: np.ndarray, sources: np.ndarray) -> None:
    """Put one block's postings, at ``docs[at:]`` and ``tfs[at:]`` in provisional term order, in
    sorted term order where they lie: sorted term ``t`` takes ``bounds[t]:bounds[t + 1]`` (from
    ``at``), its postings now starting at ``sources[t]``.

    Moved ``_BUILD_STEP`` postings at a time from a copy of the block. Computing where every posting
    comes from at once held three int64 arrays of the block's postings (a repeat, an arange, their
    sum) on top of the postings, the peak of a build over long documents (``benchmarks/RESULTS.md``,
    ``bm25_memory``).
    """
    size = int(bounds[-1])
    block = slice(at, at + size)
    docs_before, tfs_before = docs[block].copy(), tfs[block].copy()
    shift = sources - bounds[:-1]  # a sorted term's postings' distance back to where they lie now
    for start in range(0, size, _BUILD_STEP):
        stop = min(size, start + _BUILD_STEP)
        first, term_of = _term_of_tokens(bounds, start, stop)
        gather = shift[first + term_of]
        gather += np.arange(start, stop)
        docs[at + start:at + stop] = docs_before[gather]
        tfs[at + start:at + stop] = tfs_before[gather]


@dataclass(frozen=True)
class CollectionStatistics:
    """What BM25 needs of the whole collection when an index holds a shard of it: ``n_docs`` (N),
    ``total_length`` (tokens of every document) and ``df``, the document frequency in the whole
    collection of each term of the shard's vocabulary, by the shard's term id."""

    n_docs: int
    total_length: int
    df: np.ndarray

    def average_length(self) -> float:
        """``total_length / n_docs``: bit for bit the mean of every document's length as one index
        takes it (a sum of integers is exact in float64 below 2^53 tokens, and one division rounds)."""
        return float(self.total_length) / self.n_docs if self.n_docs else 0.0


@dataclass
class BM25Index:
    """BM25 postings in blocks of documents (see the module docstring).

    Block ``b`` holds documents ``b * block_docs ..``; its postings are ``docs[block_starts[b]:
    block_starts[b + 1]]`` (doc index minus the block's first) with their term frequencies at the
    same places of ``tfs``, and within the block those of term ``t`` are at ``indptr[b, t]:indptr[b,
    t + 1]``, docs ascending. Document ``d``'s norm is ``class_norm[length_class[d]]``. One array per
    kind, not one per block, so the compiled loop takes them as they are.
    """

    indptr: np.ndarray  # int32 (int64 past 2**31 postings a block), (n_blocks, n_terms + 1), from 0 in every block
    block_starts: np.ndarray  # int64, n_blocks + 1
    docs: np.ndarray  # uint16 (int32 for blocks of over 65,536 docs), within the block
    tfs: np.ndarray  # uint8, uint16 or int32: the narrowest that holds every term frequency
    idf: np.ndarray  # float64, by term id
    length_class: np.ndarray  # uint8, uint16 or int32, by doc
    class_norm: np.ndarray  # float64, by length class
    k1: float
    n_docs: int
    block_docs: int = BLOCK_DOCS
    _matrices: list[tuple[int, sp.csr_matrix]] | None = field(default=None, repr=False, compare=False)
    _bounds: np.ndarray | None = field(default=None, repr=False, compare=False)

    @classmethod
    def build(cls, offsets: np.ndarray, term_ids: np.ndarray, n_terms: int, k1: float = 1.2, b: float = 0.75,
              block_docs: int = BLOCK_DOCS, collection: CollectionStatistics | None = None) -> BM25Index:
        """Index documents given as token runs: doc ``d`` is ``term_ids[offsets[d]:offsets[d + 1]]``.

        ``collection``: when these documents are a shard of a larger collection, its statistics, used
        for idf and length normalisation instead of the shard's own (the weights are then the whole
        index's, bit for bit).
        """
        handed_over = [np.asarray(offsets, dtype=np.int64), np.asarray(term_ids, dtype=np.int32)]
        return cls._index(handed_over, n_terms, k1, b, block_docs, collection)

    @classmethod
    def from_texts(cls, texts: Sequence[str], analyzer: str, k1: float = 1.2, b: float = 0.75,
                   progress: Callable[[int, int], None] | None = None
                   ) -> tuple[BM25Index, tuple[np.ndarray, np.ndarray]]:
        """Tokenise (:func:`corpora.tokenize.tokenize`) and index; also return the vocabulary,
        packed (:func:`~retrievers.strings.pack_strings`: UTF-8 bytes and offsets).

        The token stream is let go as soon as every block's postings exist, which keeps it off the
        peak. The vocabulary is packed before the postings are built: as Python strings it would be
        held through them (``benchmarks/RESULTS.md``, ``notes.memory``).
        """
        from corpora.tokenize import streams, tokenize
        from retrievers.strings import pack_strings

        if len(texts) and streams(analyzer):
            return cls._streamed(texts, analyzer, k1, b, BLOCK_DOCS, progress)
        tokens = tokenize(texts, analyzer, progress=progress)
        packed = pack_strings(tokens.vocabulary)
        handed_over = [tokens.offsets, tokens.term_ids]
        del tokens
        return cls._index(handed_over, len(packed[1]) - 1, k1, b, BLOCK_DOCS), packed

    @classmethod
    def _streamed(cls, texts: Sequence[str], analyzer: str, k1: float, b: float, block_docs: int,
                  progress: Callable[[int, int], None] | None) -> tuple[BM25Index, tuple[np.ndarray, np.ndarray]]:
        """:meth:`from_texts` a block of documents at a time, never holding every token.

        Each block is tokenized (:class:`corpora.tokenize.BlockTokenizer`) and its postings built at
        once, under provisional term ids (first seen, first numbered), written after the blocks
        before it, and its tokens let go. Once the vocabulary is known, each block's postings are put
        in sorted term order where they lie, and its term counts become its row of ``indptr``, the
        last block first while the counts shrink. The arrays are those of indexing every token at
        once (a test compares them); the peak is about the index, not the token stream
        (``benchmarks/RESULTS.md``, ``scale_curve``).
        """
        from corpora.tokenize import BlockTokenizer
        from retrievers.strings import pack_strings

        tokenizer = BlockTokenizer(texts, analyzer)
        n_docs = len(texts)
        lengths = np.empty(n_docs, dtype=np.int32)  # a document of 2^31 tokens would not fit in memory
        df = np.zeros(1 << 16, dtype=np.int64)  # by provisional id, grown as terms appear
        # Room for every posting (at most a token each; a token takes a character and a separator):
        # address space, of which only the pages written become memory. Shrunk to size at the end.
        room = (sum(map(len, texts)) + n_docs) // 2 + 16
        docs_out, tfs_out = np.empty(room, dtype=doc_dtype(block_docs)), np.empty(room, dtype=np.uint8)
        # each block's postings per provisional term, one after another, capped at _COUNT_CAP (a byte
        # each: most are 0 or 1, and int32 ones held 4 bytes x terms x blocks through the tokenizing);
        # the terms at the cap and their counts are kept aside, per block
        counts = np.empty(1 << 20, dtype=np.uint8)
        capped: list[tuple[np.ndarray, np.ndarray]] = []
        block_starts, count_starts = [0], [0]
        # not enumerate(): its reused result tuple would keep the block's tokens until the next block
        for offsets, term_ids in tokenizer.blocks(block_docs, progress):
            first = (len(block_starts) - 1) * block_docs
            lengths[first:first + len(offsets) - 1] = np.diff(offsets)
            n_terms = tokenizer.n_terms
            block_df, docs, tf = _block_postings(offsets, term_ids, n_terms)
            del offsets, term_ids
            if n_terms > len(df):
                df = np.concatenate([df, np.zeros(max(n_terms, 2 * len(df)) - len(df), dtype=np.int64)])
            df[:n_terms] += block_df
            at, until = count_starts[-1], count_starts[-1] + n_terms
            if until > len(counts):
                counts.resize(max(until, 2 * len(counts)), refcheck=False)  # realloc: no view of it exists
            np.minimum(block_df, _COUNT_CAP, out=counts[at:until], casting="unsafe")
            at_cap = np.flatnonzero(block_df >= _COUNT_CAP)
            capped.append((at_cap, block_df[at_cap]))
            count_starts.append(until)
            if tf.max(initial=0) > np.iinfo(tfs_out.dtype).max:  # rare: widen what is written so far
                wider = np.empty(room, dtype=_smallest_unsigned(int(tf.max())))
                wider[:block_starts[-1]] = tfs_out[:block_starts[-1]]
                tfs_out = wider
            start = block_starts[-1]
            docs_out[start:start + len(docs)] = docs
            tfs_out[start:start + len(tf)] = tf
            block_starts.append(start + len(docs))
            del block_df, docs, tf
            release_freed_memory()  # the block's tokens and temporaries
        rank, vocabulary = tokenizer.vocabulary()
        del tokenizer
        packed = pack_strings(vocabulary)
        del vocabulary
        n_terms = len(rank)
        order = np.empty(n_terms, dtype=np.int64)  # sorted id -> provisional id
        order[rank] = np.arange(n_terms)
        del rank
        starts = np.array(block_starts, dtype=np.int64)
        widest = int(np.diff(starts).max(initial=0))
        indptr = np.zeros((len(starts) - 1, n_terms + 1), dtype=np.int32 if widest < 2**31 else np.int64)
        full = np.zeros(n_terms, dtype=np.int64)
        provisional = np.zeros(n_terms + 1, dtype=np.int64)
        for number in reversed(range(len(starts) - 1)):  # last first: the counts shrink as indptr fills
            at, until = count_starts[number], count_starts[number + 1]
            full[:] = 0
            full[:until - at] = counts[at:until]
            at_cap, capped_counts = capped.pop()
            full[at_cap] = capped_counts
            counts.resize(at, refcheck=False)  # no view of it is left
            np.cumsum(full, out=provisional[1:])
            np.cumsum(full[order], out=indptr[number, 1:])
            _into_term_order(docs_out, tfs_out, int(starts[number]), indptr[number], provisional[order])
        del counts
        docs_out.resize(int(starts[-1]), refcheck=False)  # the room's tail: never written, given back
        tfs_out.resize(int(starts[-1]), refcheck=False)
        classes, length_class = length_classes(lengths)
        # the exact sum, rounded once by the division: the bits of a float64 mean of the lengths
        # (exact partial sums below 2^53 tokens), without a float64 copy of them
        avgdl = float(int(lengths.sum(dtype=np.int64))) / n_docs
        del lengths
        class_norm = length_norms(classes, avgdl, k1, b)
        idf = bm25_idf(n_docs, df[order])
        release_freed_memory()
        return cls(indptr, starts, docs_out, tfs_out, idf, length_class, class_norm, float(k1), n_docs,
                   block_docs), packed

    @classmethod
    def _index(cls, handed_over: list[np.ndarray], n_terms: int, k1: float, b: float, block_docs: int,
               collection: CollectionStatistics | None = None) -> BM25Index:
        """``handed_over`` = [offsets, term ids], emptied here: it may hold the only references."""
        offsets, term_ids = handed_over
        handed_over.clear()
        n_docs = len(offsets) - 1
        lengths = np.diff(offsets)
        if collection is None:
            avgdl = lengths.astype(np.float64).mean() if n_docs else 0.0
        else:
            avgdl = collection.average_length()
        classes, length_class = length_classes(lengths)
        class_norm = length_norms(classes, avgdl, k1, b)
        del lengths
        doc_type = doc_dtype(block_docs)
        firsts = range(0, max(n_docs, 1), block_docs)
        # A block has at most as many postings as tokens: each block's postings are written where
        # its tokens start (pages are taken as they are written), then moved down into place.
        docs_out, tfs_out = np.empty(len(term_ids), doc_type), np.empty(len(term_ids), np.uint8)
        widest = max((int(offsets[min(n_docs, f + block_docs)] - offsets[f]) for f in firsts), default=0)
        indptr = np.zeros((len(firsts), n_terms + 1), dtype=np.int32 if widest < 2**31 else np.int64)
        df = np.zeros(n_terms, dtype=np.int64)
        for number in reversed(range(len(firsts))):  # last block first: the tokens shrink as the postings grow
            first_doc, last_doc = firsts[number], min(n_docs, firsts[number] + block_docs)
            start, stop = int(offsets[first_doc]), int(offsets[last_doc])
            block_df, docs, tf = _block_postings(offsets[first_doc:last_doc + 1] - start, term_ids[start:stop], n_terms)
            df += block_df
            np.cumsum(block_df, out=indptr[number, 1:])
            del block_df
            if tf.max(initial=0) > np.iinfo(tfs_out.dtype).max:  # rare: widen what is written so far
                tfs_out = tfs_out.astype(_smallest_unsigned(int(tf.max())))
            docs_out[start:start + len(docs)] = docs
            tfs_out[start:start + len(tf)] = tf
            del docs, tf
            try:  # the tokens from here on are indexed: give them back, unless someone else holds them
                term_ids.resize(start, refcheck=True)  # (numpy checks: no view, no other reference)
            except ValueError:
                pass
            release_freed_memory()  # the block's temporaries and tokens: give them back as we go
        del term_ids
        sizes = indptr[:, -1].astype(np.int64)
        block_starts = np.zeros(len(firsts) + 1, dtype=np.int64)
        np.cumsum(sizes, out=block_starts[1:])
        if len(firsts) == 1:  # already in place
            docs_out, tfs_out = _shrunk(docs_out, int(block_starts[-1])), _shrunk(tfs_out, int(block_starts[-1]))
        else:
            sources, docs_in, tfs_in = offsets[np.asarray(firsts)], [docs_out], [tfs_out]
            del docs_out, tfs_out  # the lists hold the only references, so each can shrink as it is copied
            docs_out, tfs_out = _packed(docs_in, sources, block_starts), _packed(tfs_in, sources, block_starts)
        idf = bm25_idf(n_docs, df) if collection is None else bm25_idf(collection.n_docs, collection.df)
        release_freed_memory()
        return cls(indptr, block_starts, docs_out, tfs_out, idf, length_class, class_norm, float(k1), n_docs,
                   block_docs)

    @property
    def n_terms(self) -> int:
        return self.indptr.shape[1] - 1

    @property
    def nbytes(self) -> int:
        """Bytes of the index's arrays (the weights a product search materialises aside)."""
        arrays = [self.indptr, self.block_starts, self.docs, self.tfs, self.idf, self.length_class, self.class_norm]
        return sum(a.nbytes for a in arrays)

    def block(self, number: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Block ``number``'s ``(indptr, docs, term frequencies)``: a CSR over terms (views)."""
        start, stop = self.block_starts[number], self.block_starts[number + 1]
        return self.indptr[number], self.docs[start:stop], self.tfs[start:stop]

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """``(doc indices, weights)`` of one term over all blocks, docs ascending."""
        docs, weights = [], []
        for number in range(len(self.indptr)):
            indptr, block_docs, tfs = self.block(number)
            start, stop = indptr[term], indptr[term + 1]
            block_docs = block_docs[start:stop].astype(np.int64) + number * self.block_docs
            f = tfs[start:stop].astype(np.float64)
            docs.append(block_docs)
            weights.append(bm25_weights(self.idf[term], f, self.class_norm[self.length_class[block_docs]], self.k1))
        return np.concatenate(docs), np.concatenate(weights)

    def block_weights(self, number: int) -> np.ndarray:
        """Every posting's weight in block ``number`` (float64, the postings' order), computed in
        steps of ``_BUILD_STEP`` postings to bound the temporaries."""
        indptr, docs, tfs = self.block(number)
        weights = np.empty(len(docs), dtype=np.float64)
        base = number * self.block_docs
        for start in range(0, len(docs), _BUILD_STEP):
            stop = min(len(docs), start + _BUILD_STEP)
            first, term_of = _term_of_tokens(indptr, start, stop)
            f = tfs[start:stop].astype(np.float64)
            norm = self.class_norm[self.length_class[docs[start:stop].astype(np.int64) + base]]
            weights[start:stop] = bm25_weights(self.idf[first + term_of], f, norm, self.k1)
        return weights

    def search(self, query_offsets: np.ndarray, query_terms: np.ndarray, k: int, tie_rank: np.ndarray,
               min_score: float = 0.0, threads: int = 1, progress: Callable[[int, int], None] | None = None,
               compiled: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Top ``k`` documents of each query: ``(offsets, doc indices, scores)``, a CSR over queries
        (doc indices: :func:`corpora.run.doc_index_dtype`).

        Query ``i`` is ``query_terms[query_offsets[i]:query_offsets[i + 1]]``; a term repeated in a
        query counts once. ``progress(done, total)`` hears about every batch of queries.
        ``compiled=True`` searches with the compiled loop (:mod:`retrievers.bm25.compiled`; needs numba),
        ``False`` with scipy's sparse products; both return the same documents, scores (bit for bit)
        and order. The default (None) compiles where it pays (:meth:`compiles_by_default`).
        """
        if compiled is None:
            compiled = self.compiles_by_default()
        n_queries = len(query_offsets) - 1
        if compiled:  # its bounds, if it prunes, are computed here, before the threads
            run_batch = self._compiled_batch(query_offsets, query_terms, k, tie_rank, min_score)
            size = max(1, min(COMPILED_BATCH, COMPILED_BATCH_RESULTS // max(k, 1)))
        else:
            self.block_matrices()  # before the threads: each would compute the weights
            run_batch, size = self._exhaustive_batch(query_offsets, query_terms, k, tie_rank, min_score), QUERY_BATCH
        batches = [range(a, min(n_queries, a + size)) for a in range(0, n_queries, size)]
        tally = _Tally(n_queries, progress)

        width = max(0, min(k, self.n_docs))  # results a query at most
        doc_type = doc_index_dtype(self.n_docs)  # what a Run keeps: no copy
        room = n_queries * width * (np.dtype(doc_type).itemsize + 8)
        results = _Results(n_queries, width, doc_type) if room <= _RESULTS_IN_PLACE_BYTES else None

        def run(batch: range) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
            found = run_batch(batch)
            tally.add(len(batch))
            if results is None:
                return found
            results.put(batch, *found)
            return None

        if threads <= 1 or len(batches) < 2:
            parts = [run(batch) for batch in batches]
        else:
            with ThreadPoolExecutor(threads) as pool:
                parts = list(pool.map(run, batches))
        if results is not None:
            return results.joined(batches)
        return _joined(parts, n_queries, doc_type)  # type: ignore[arg-type]

    def compiles_by_default(self) -> bool:
        """Whether :meth:`search` takes the compiled loop unless told: numba installed and at least
        :data:`COMPILED_FROM_POSTINGS` postings."""
        from retrievers.bm25 import compiled

        return len(self.docs) >= COMPILED_FROM_POSTINGS and compiled.available()

    def score_matrix(self, query_offsets: np.ndarray, query_terms: np.ndarray) -> sp.csr_matrix:
        """Every query's score of every matching document: (n_queries x n_docs) float64 CSR."""
        n_queries = len(query_offsets) - 1
        rows = list(self._rows(self._products(query_offsets, query_terms, range(n_queries))))
        indptr = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum([len(docs) for docs, _ in rows], out=indptr[1:])
        docs = np.concatenate([d for d, _ in rows]) if rows else np.empty(0, np.int64)
        scores = np.concatenate([v for _, v in rows]) if rows else np.empty(0)
        matrix = sp.csr_matrix((scores, docs, indptr), shape=(n_queries, self.n_docs))
        matrix.sort_indices()
        return matrix

    # ----- internals -------------------------------------------------------------------------
    def _exhaustive_batch(self, query_offsets: np.ndarray, query_terms: np.ndarray, k: int, tie_rank: np.ndarray,
                          min_score: float) -> Callable[[range], tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """A batch of queries' top k from one sparse product per block (every posting), as
        ``(results per query, docs, scores)``."""
        def run(batch: range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            found = [top_k(docs, scores, k, tie_rank, min_score)
                     for docs, scores in self._rows(self._products(query_offsets, query_terms, batch))]
            counts = np.fromiter((len(docs) for docs, _ in found), dtype=np.int64, count=len(found))
            if not found:
                return counts, np.empty(0, np.int64), np.empty(0)
            return counts, np.concatenate([docs for docs, _ in found]), np.concatenate([scores for _, scores in found])

        return run

    def _compiled_batch(self, query_offsets: np.ndarray, query_terms: np.ndarray, k: int, tie_rank: np.ndarray,
                        min_score: float) -> Callable[[range], tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """A batch of queries' top k through the compiled loop (:func:`retrievers.bm25.compiled.top_k`), as
        ``(results per query, docs, scores)``."""
        from retrievers.bm25 import compiled

        # copies: sum_duplicates sorts and compacts the arrays in place
        distinct = sp.csr_matrix((np.ones(len(query_terms)), np.array(query_terms, dtype=np.int32),
                                  np.array(query_offsets, dtype=np.int64)),
                                 shape=(len(query_offsets) - 1, self.n_terms))
        distinct.sum_duplicates()  # each query's distinct terms, ascending
        postings = self._postings()
        k = min(k, max(self.n_docs, 1))
        bounds = self.term_bounds() if compiled.prunes(k) else None

        def run(batch: range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            first, last = distinct.indptr[batch.start], distinct.indptr[batch.stop]
            offsets, docs, scores = compiled.top_k(
                postings, self.block_docs, self.k1, distinct.indptr[batch.start:batch.stop + 1] - first,
                distinct.indices[first:last], k, min_score, tie_rank, bounds=bounds)
            return np.diff(offsets), docs, scores

        return run

    def _products(self, query_offsets: np.ndarray, query_terms: np.ndarray,
                  batch: range) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per block, the batch's matching docs (global indices) and scores as CSR parts
        ``(indptr, docs, scores)``.

        One sparse product per block, (queries x terms, binary) @ (terms x block docs): scipy adds
        each document's weights in ascending term order, in C++, without the GIL, and its work
        arrays, one slot per document of the block, stay in a core's cache.
        """
        start, stop = int(query_offsets[batch.start]), int(query_offsets[batch.stop])
        terms = np.array(query_terms[start:stop], dtype=np.int32)  # a copy: sum_duplicates sorts in place
        queries = sp.csr_matrix((np.ones(len(terms)), terms, query_offsets[batch.start:batch.stop + 1] - start),
                                shape=(len(batch), self.n_terms))
        queries.sum_duplicates()
        queries.data[:] = 1.0
        products = []
        for base, matrix in self.block_matrices():
            product = (queries @ matrix).tocsr()
            products.append((product.indptr, product.indices.astype(np.int64) + base, product.data))
        return products

    @staticmethod
    def _rows(products: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Each query's candidates over all blocks: ``(docs, scores)``, docs distinct.

        One block's rows are slices, not concatenations (``benchmarks/speed_paths.py`` ``single_block``).
        """
        if len(products) == 1:
            indptr, docs, scores = products[0]
            for a, b in zip(indptr[:-1].tolist(), indptr[1:].tolist()):
                yield docs[a:b], scores[a:b]
            return
        bounds = [indptr.tolist() for indptr, _, _ in products]
        for row in range(len(bounds[0]) - 1):
            yield (np.concatenate([docs[b[row]:b[row + 1]] for b, (_, docs, _) in zip(bounds, products)]),
                   np.concatenate([scores[b[row]:b[row + 1]] for b, (_, _, scores) in zip(bounds, products)]))

    def _postings(self) -> tuple[np.ndarray, ...]:
        """The arrays the compiled loop reads (:func:`retrievers.bm25.compiled.top_k`'s ``postings``)."""
        return self.docs, self.tfs, self.indptr, self.block_starts, self.idf, self.length_class, self.class_norm

    def term_bounds(self) -> np.ndarray:
        """Each term's largest weight (:func:`retrievers.bm25.compiled.term_bounds`; needs numba): computed
        on first use and kept."""
        if self._bounds is None:
            from retrievers.bm25 import compiled

            self._bounds = compiled.term_bounds(self._postings(), self.block_docs, self.k1)
        return self._bounds

    def block_matrices(self) -> list[tuple[int, sp.csr_matrix]]:
        """Each block as ``(first doc, terms x block docs CSR of weights)``: computed on first use
        (:meth:`block_weights`) and kept."""
        if self._matrices is None:
            matrices = []
            for number in range(len(self.indptr)):
                width = max(0, min(self.block_docs, self.n_docs - number * self.block_docs))
                matrices.append((number * self.block_docs, sp.csr_matrix(
                    (self.block_weights(number), self.block(number)[1].astype(np.int32),
                     self.indptr[number].astype(np.int64)), shape=(self.n_terms, width))))
            self._matrices = matrices
        return self._matrices


def _joined(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_queries: int,
            doc_type: type[np.integer]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batches of ``(results per query, docs, scores)`` as one CSR over queries."""
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    if not parts:
        return offsets, np.empty(0, doc_type), np.empty(0)
    np.cumsum(np.concatenate([counts for counts, _, _ in parts]), out=offsets[1:])
    return (offsets, np.concatenate([docs for _, docs, _ in parts]).astype(doc_type, copy=False),
            np.concatenate([scores for _, _, scores in parts]))


class _Results:
    """A search's results written where they stay: room for ``width`` results a query (its pages
    only become memory once written), each batch copied in as it finishes and let go, the whole
    moved together at the end. The results are never held twice, as they were when the batches
    were joined at the end (``benchmarks/RESULTS.md``, ``notes.memory``)."""

    def __init__(self, n_queries: int, width: int, doc_type: type[np.integer]):
        self.width = width
        self.counts = np.zeros(n_queries, dtype=np.int64)
        self.docs = np.empty(n_queries * width, dtype=doc_type)
        self.scores = np.empty(n_queries * width)

    def put(self, batch: range, counts: np.ndarray, docs: np.ndarray, scores: np.ndarray) -> None:
        """A batch's results (each query's at most ``width``), at the batch's own place."""
        place = batch.start * self.width
        self.counts[batch.start:batch.stop] = counts
        self.docs[place:place + len(docs)] = docs
        self.scores[place:place + len(docs)] = scores

    def joined(self, batches: list[range]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(offsets, docs, scores)``, a CSR over queries: every batch moved down to follow the one
        before (in place), and the room left over given back."""
        offsets = np.zeros(len(self.counts) + 1, dtype=np.int64)
        np.cumsum(self.counts, out=offsets[1:])
        docs, scores = self.docs, self.scores
        self.docs = self.scores = np.empty(0)
        for batch in batches:
            source, target = batch.start * self.width, offsets[batch.start]
            size = offsets[batch.stop] - target
            if size and source != target:  # target < source: numpy copies overlapping ranges correctly
                docs[target:target + size] = docs[source:source + size]
                scores[target:target + size] = scores[source:source + size]
        docs.resize(offsets[-1], refcheck=False)  # no view of them exists: they were only written through
        scores.resize(offsets[-1], refcheck=False)
        return offsets, docs, scores


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
