"""LSA: TF-IDF reduced by truncated SVD, cosine similarity in the reduced space.

A deterministic stand-in for a dense retriever: it maps documents and queries to few dimensions,
but from the same words, so it is no semantic embedding.

Up to :attr:`LSA.randomized_above` documents: the article's scikit-learn pipeline,
``TfidfVectorizer`` (smooth idf, l2 rows) then ``TruncatedSVD`` (arpack, ``random_state`` = seed),
computed here with scipy's ``svds`` and the same start vector, equal to scikit-learn's bit for bit
when both run BLAS on one thread (a test holds it to that) without importing scikit-learn, which
alone costs more than the whole bundled run. Above it, the same TF-IDF built from
:func:`corpora.tokenize.tokenize` and scikit-learn's randomized truncated SVD (Halko et al.,
``random_state`` = seed, ten power iterations, 30 oversamples) computed in passes over blocks of
documents (:mod:`retrievers.blocked_svd`): the sparse matrix is held once, every dense matrix is
terms x (dims + 30) or one block, the document vectors are float32, and search ranks them block by
block (:func:`retrievers.dense_blocks.block_search`, products in float64). arpack's and the
per-document tokenizer's cost grow too fast for large corpora, and the randomized result agrees with
arpack's to a few decimals. The fitted state of a large corpus goes through the index cache.

Fitting and scoring run BLAS on one thread (:mod:`retrievers.blas`): with more, the last bits of the
scores would depend on the machine's core count and differ between a local run and a Dask worker.
So an engine may fit and search it whole on one of its workers (``whole_on_worker``), which reads
the corpus itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from corpora import DEFAULT_ANALYZER, Corpus, Queries, RetbenchError, Run, get_analyzer
from corpora.analyzers import analyzer_fingerprint
from corpora.wording import counted
from retrievers.base import ScoreRetriever
from retrievers.blas import one_blas_thread
from retrievers.blocked_svd import blocked_truncated_svd
from retrievers.cache import State
from retrievers.defaults import LSA_DIMS, choose, lsa_dims
from retrievers.dense_blocks import block_scores, block_search
from retrievers.strings import SortedStrings, check_strings, pack_strings
from retrievers.validation import check_int


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out = np.zeros_like(matrix)
    np.divide(matrix, norms, out=out, where=norms > 1e-12)
    return out


class LSA(ScoreRetriever):
    """TF-IDF -> truncated SVD (``dims`` dimensions; None: chosen for the collection) -> cosine similarity.

    ``dims`` not given: the corpus's own (the bundled article carries 6), else
    :func:`retrievers.defaults.lsa_dims`: 100, at most half the rank the collection allows
    (:mod:`retrievers.defaults`).
    """

    name = "lsa"
    #: Its bits do not depend on the process (one BLAS thread, retrievers.blas): an engine may fit it on a worker.
    whole_on_worker: ClassVar[bool] = True
    #: Corpora larger than this (documents) use the fast tokenizer and a randomized SVD.
    randomized_above: ClassVar[int] = 50_000
    #: Large corpora: documents per block and queries per chunk of a product while searching and scoring.
    block_docs: ClassVar[int] = 1 << 14
    query_rows: ClassVar[int] = 1 << 7
    #: 2: the blocked SVD, float32 document vectors.
    state_version: ClassVar[int] = 2

    def __init__(self, dims: int | None = None, seed: int = 0, analyzer: str = DEFAULT_ANALYZER):
        if dims is not None:  # None: chosen for the collection at fit (retrievers.defaults)
            check_int(dims, "dims", "lsa", low=1, default=LSA_DIMS)
        # RandomState, which draws arpack's start vector, takes seeds in [0, 2^32 - 1]
        check_int(seed, "seed", "lsa", low=0, high=2**32 - 1, default=0)
        get_analyzer(analyzer)
        self.dims = dims
        self.seed = seed
        self.analyzer = analyzer

    def fit(self, corpus: Corpus) -> LSA:
        super().fit(corpus)
        self._state: State | None = None
        with one_blas_thread():  # the SVD's bits must not depend on the machine's cores (retrievers.blas)
            if len(corpus) > self.randomized_above:
                return self._fit_large(corpus)
            return self._fit_small(corpus)

    def _fit_small(self, corpus: Corpus) -> LSA:
        analyzer = get_analyzer(self.analyzer)
        counts, self._vocabulary = _small_counts([analyzer(text) for text in corpus.full_texts])
        dims = self._dims_for(corpus, *counts.shape)
        self._check_dims(counts.shape, dims)
        self._idf = _smooth_idf(counts)
        reduced, self._components = _arpack_svd(_tfidf_rows(counts, self._idf), dims, self.seed)
        self._doc_vectors = _normalise_rows(reduced)
        return self

    def score(self, queries: Queries) -> np.ndarray:
        if self._state is not None:
            return block_scores(self._large_query_vectors(queries), self._doc_vectors, self.block_docs,
                                self.query_rows, np.float64)
        matrix = _tfidf_rows(self._small_query_counts(queries), self._idf)
        with one_blas_thread():  # nor the scores' (retrievers.blas)
            return _normalise_rows(matrix @ self._components.T) @ self._doc_vectors.T

    def search(self, queries: Queries, k: int) -> Run:
        if self._state is None:
            return super().search(queries, k)
        hits = block_search(self._large_query_vectors(queries), self._doc_vectors, self._tie_rank, k, self.min_score,
                            self.block_docs, self.query_rows, np.float64)
        return Run(queries.ids, self.corpus.id_array(), hits.offsets, hits.docs, hits.scores)

    def _small_query_counts(self, queries: Queries) -> sp.csr_matrix:
        """Query counts over the fitted vocabulary, unknown terms dropped, columns sorted (as
        ``TfidfVectorizer.transform`` stores them)."""
        analyzer, vocabulary = get_analyzer(self.analyzer), self._vocabulary
        rows = [[vocabulary[t] for t in analyzer(text) if t in vocabulary] for text in queries.texts]
        offsets = _offsets(len(row) for row in rows)
        terms = np.fromiter((t for row in rows for t in row), dtype=np.int64, count=int(offsets[-1]))
        return _counts(offsets, terms, len(vocabulary))

    def _dims_for(self, corpus: Corpus, documents: int, terms: int) -> int:
        """The dimensions of this fit: given, carried by the corpus, or :func:`~retrievers.defaults.lsa_dims`."""
        dims = choose(self, "dims", corpus, lambda: lsa_dims(documents, terms))
        check_int(dims, "dims", "lsa", low=1, default=LSA_DIMS)  # a corpus's carried value is checked too
        return dims

    def _check_dims(self, shape: tuple[int, int], dims: int) -> None:
        if shape[1] == 0:
            raise RetbenchError(
                f"lsa found no terms in the corpus: every one of its {counted(shape[0], 'document')} is empty after "
                "the "
                f"{self.analyzer!r} analyzer. Fix: check the corpus text, or pass lsa(analyzer=...) with another.")
        limit = min(shape) - 1
        if limit < 1:
            raise RetbenchError(
                f"lsa needs at least 2 documents and 2 distinct terms, the corpus has "
                f"{counted(shape[0], 'document')} x "
                f"{counted(shape[1], 'term')}. Fix: use a larger corpus, or leave lsa out of `systems`.")
        if dims > limit:
            raise RetbenchError(
                f"lsa(dims={dims}) needs more dimensions than the corpus has: {counted(shape[0], 'document')} "
                f"x {counted(shape[1], 'term')} allow at most {limit}. Fix: pass lsa(dims=N) with N <= {limit}."
            )

    # ----- large corpora ---------------------------------------------------------------------
    def _fit_large(self, corpus: Corpus) -> LSA:
        # the rule reads the documents only: the terms are counted after tokenizing, and the cache's
        # key needs the dimensions first (above randomized_above documents the rule gives 100 anyway)
        dims = self._dims = self._dims_for(corpus, len(corpus), len(corpus))
        params: dict[str, Any] = {"dims": dims, "seed": self.seed, "analyzer": self.analyzer,
                                  "analyzer_fingerprint": analyzer_fingerprint(self.analyzer),
                                  "version": self.state_version}
        state = self.fitted_state("lsa", params, corpus, lambda: self._build_large(corpus),
                             lambda s: _valid_state(s, len(corpus), dims))
        self._state = state
        self._doc_vectors = state["doc_vectors"]
        self._term_ids: SortedStrings | None = None
        return self

    def _build_large(self, corpus: Corpus) -> State:
        from corpora.tokenize import tokenize

        progress = self.run_context.progress
        tokens = tokenize(corpus.full_texts, self.analyzer, progress=progress.callback())
        counts = _counts(tokens.offsets, tokens.term_ids, len(tokens.vocabulary))
        blob, offsets = pack_strings(tokens.vocabulary)
        del tokens  # the sparse matrix is the only copy of the corpus from here on
        self._check_dims(counts.shape, self._dims)
        idf = _smooth_idf(counts)
        matrix = _tfidf_rows(counts, idf, in_place=True)
        with progress.task("lsa: truncated SVD, passes over the documents") as task:
            components, doc_vectors = blocked_truncated_svd(
                matrix, self._dims, self.seed, n_iter=10, n_oversamples=30,
                done=None if progress.silent else task.update)
        # ten power iterations: text spectra can be flat, and five left a third of the top 10 apart from
        # arpack's on synthetic text; ten agree on ~98% of it
        return {"idf": idf, "components": components, "doc_vectors": doc_vectors, "vocabulary": blob,
                "vocabulary_offsets": offsets}

    def _large_query_vectors(self, queries: Queries) -> np.ndarray:
        """The queries' unit vectors in the reduced space (float64)."""
        from corpora.tokenize import encode

        state = self._state or {}
        if self._term_ids is None:
            self._term_ids = SortedStrings(state["vocabulary"], state["vocabulary_offsets"])
        offsets, terms = encode(queries.texts, self._term_ids, self.analyzer)
        matrix = _tfidf_rows(_counts(offsets, terms, len(state["idf"])), state["idf"])
        with one_blas_thread():  # retrievers.blas
            return _normalise_rows(matrix @ state["components"].T)


def _small_counts(token_lists: list[list[str]]) -> tuple[sp.csr_matrix, dict[str, int]]:
    """Documents x terms counts over the sorted vocabulary, exactly as ``CountVectorizer.fit`` stores them.

    Its columns are the sorted terms, but within a row they stay in the order the terms first appear
    in the corpus; keeping that order keeps every floating-point sum (row norms, the SVD's products)
    in its order, so the scores equal scikit-learn's bit for bit.
    """
    offsets = _offsets(len(tokens) for tokens in token_lists)
    first_seen: dict[str, int] = {}  # term -> rank of its first appearance in the corpus
    ids = [first_seen.setdefault(t, len(first_seen)) for tokens in token_lists for t in tokens]
    terms = list(first_seen)
    by_appearance = np.array(sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int64)
    sorted_id = np.empty_like(by_appearance)  # appearance rank -> column (the sorted vocabulary)
    sorted_id[by_appearance] = np.arange(len(terms))
    counts = _counts(offsets, np.array(ids, dtype=np.int64), len(terms))
    counts.indices = sorted_id[counts.indices].astype(counts.indices.dtype)
    counts.has_sorted_indices = False
    return counts, {terms[a]: i for i, a in enumerate(by_appearance.tolist())}


def _offsets(lengths: Iterable[int]) -> np.ndarray:
    lengths = np.fromiter(lengths, dtype=np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _smooth_idf(counts: sp.csr_matrix) -> np.ndarray:
    """scikit-learn's smooth idf: ``ln((1 + n) / (1 + df)) + 1``."""
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    return np.log((1.0 + counts.shape[0]) / (1.0 + df)) + 1.0


def _arpack_svd(matrix: sp.csr_matrix, dims: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``TruncatedSVD(algorithm="arpack", random_state=seed).fit_transform`` and its ``components_``.

    The same start vector (``RandomState(seed)`` uniform on [-1, 1]), the same ``svds`` call, largest
    first, each component's sign set so that its largest absolute entry is positive, documents as
    ``U * Sigma``; scikit-learn itself is not imported (it costs more than the whole bundled run).
    """
    from scipy.sparse.linalg import svds

    start = np.random.RandomState(seed).uniform(-1, 1, min(matrix.shape))
    u, sigma, vt = svds(matrix, k=dims, tol=0.0, v0=start)
    u, sigma, vt = u[:, ::-1], sigma[::-1], vt[::-1]
    signs = np.sign(vt[np.arange(dims), np.argmax(np.abs(vt), axis=1)])
    return u * signs * sigma, np.ascontiguousarray(vt * signs[:, None])


def _counts(offsets: np.ndarray, term_ids: np.ndarray, n_terms: int) -> sp.csr_matrix:
    """Documents x terms occurrence counts, duplicates summed, indices sorted."""
    matrix = sp.csr_matrix((np.ones(len(term_ids)), term_ids, offsets), shape=(len(offsets) - 1, n_terms))
    matrix.sum_duplicates()
    return matrix


def _tfidf_rows(counts: sp.csr_matrix, idf: np.ndarray, in_place: bool = False) -> sp.csr_matrix:
    """``tf * idf`` with l2-normalised rows (empty rows stay zero), as ``TfidfVectorizer`` does;
    ``in_place``: in ``counts`` itself (a large corpus's matrix is held once)."""
    matrix = counts if in_place else counts.copy()
    matrix.data *= idf[matrix.indices]
    squares = np.bincount(np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr)),
                          weights=matrix.data ** 2, minlength=matrix.shape[0])
    norms = np.sqrt(squares)
    norms[norms == 0.0] = 1.0
    matrix.data /= np.repeat(norms, np.diff(matrix.indptr))
    return matrix


def _valid_state(state: State, n_docs: int, dims: int) -> bool:
    """A cached LSA state is used only when its arrays fit together and hold finite numbers."""
    try:
        idf, components, vectors = state["idf"], state["components"], state["doc_vectors"]
        check_strings(state["vocabulary"], state["vocabulary_offsets"])
    except (KeyError, ValueError):
        return False
    n_terms = len(idf)
    return (idf.ndim == 1 and components.shape == (dims, n_terms) and vectors.shape == (n_docs, dims)
            and vectors.dtype == np.float32
            and len(state["vocabulary_offsets"]) == n_terms + 1
            and all(np.isfinite(a).all() for a in (idf, components, vectors)))
