"""LSA's truncated SVD of a large TF-IDF matrix in passes over blocks of documents.

The large corpora's SVD of :mod:`retrievers.lsa` was scikit-learn's randomized SVD (Halko et al.,
``TruncatedSVD(algorithm="randomized", n_iter=10, n_oversamples=30)``), whose range finder holds
several documents x (dims + 30) float64 matrices at once (the products ``A @ Q``, their LU and QR
factors, ``U``): at a million short documents five times the sparse matrix itself. This computes the
same decomposition, in exact arithmetic, while holding only the sparse matrix, a few terms x
(dims + 30) matrices and one block of documents at a time:

* every product with the documents side is taken block by block and folded back at once
  (``A.T @ (A @ T)`` summed over blocks of :data:`BLOCK_ROWS` rows, in block order): the power
  iterations never form a documents x (dims + 30) matrix; each block is a view of the matrix over the
  terms it holds (its column indices rewritten in place once), so its products touch those rows of
  the terms side only;
* the normalisations between iterations (scikit-learn's LU and QR) only choose a basis of the same
  span, so they are done on the terms side alone (QR); the range is the very span scikit-learn's is:
  ``A (A^T A)^10 Omega`` with ``Omega`` its ``RandomState(seed).normal(size=(terms, dims + 30))``
  when the corpus has at least as many documents as terms, else (scikit-learn then works on
  ``A^T``) ``(A^T A)^10 A^T Omega`` with ``Omega`` drawn documents x (dims + 30), here in blocks of
  rows from the same stream (the same numbers);
* the small SVD scikit-learn takes of ``Q^T A`` (``Q`` an orthonormal basis of ``A T``) is taken of
  the same matrix written through the Gram matrix ``(A T)^T (A T)`` (dims + 30 square, one more
  pass); the sign of each component is scikit-learn's ``svd_flip(u_based_decision=False)`` rule and
  the documents' vectors are ``A @ components.T`` (scikit-learn 1.5's ``fit_transform``), computed
  block by block, l2-normalised in float64 and kept as float32.

So the scores differ from the former path's by rounding only: the order of the sums, the Gram
matrix, and float32 document vectors (a relative error of about 6e-8 on a cosine). Rankings are the
same except where two documents' scores lie within that rounding of each other (tests/test_lsa_blocks.py
holds it to that, against scikit-learn's own run). The block size is fixed, not chosen for the machine:
the order of the sums, hence the last bits, must not depend on where the fit ran.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg
import scipy.sparse as sp

__all__ = ["BLOCK_ROWS", "blocked_truncated_svd"]

#: Documents per block of every pass (fixed: the sums' order, hence the bits, must not vary).
BLOCK_ROWS = 1 << 16
#: Gram eigenvalues below this fraction of the largest are the span's rank deficit, not directions.
RELATIVE_FLOOR = 1e-12


def blocked_truncated_svd(matrix: sp.csr_matrix, dims: int, seed: int, n_iter: int = 10, n_oversamples: int = 30,
                          done: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(components, document vectors)`` of ``matrix`` (documents x terms, CSR, float64, its indices
    sorted in each row), which it uses up: its column indices are rewritten in place (no copy is made).

    ``components``: dims x terms, float64, as ``TruncatedSVD(dims, algorithm="randomized",
    n_iter=n_iter, n_oversamples=n_oversamples, random_state=seed).components_`` up to rounding;
    document vectors: documents x dims, float32, its ``fit_transform`` with rows l2-normalised (an
    all-zero row stays zero). ``done(pass, passes)`` hears each finished pass over the documents.
    Run it on one BLAS thread (:func:`retrievers.blas.one_blas_thread`) for the same bits everywhere.
    """
    n_docs, n_terms = matrix.shape
    blocks = _blocks(matrix)
    width = dims + n_oversamples
    passes = n_iter + 3
    finished = [0]

    def tick() -> None:
        finished[0] += 1
        if done is not None:
            done(finished[0], passes)

    random = np.random.RandomState(seed)
    if n_docs >= n_terms:  # scikit-learn's range finder on A itself: the random draw is terms x width
        basis = _orthonormal(random.normal(size=(n_terms, width)))
        tick()  # no pass needed: counted so that both shapes report the same number of passes
    else:  # on A^T (scikit-learn transposes when there are fewer documents than terms)
        basis = _orthonormal(_transpose_times_draw(blocks, n_terms, random, width))
        tick()
    for _ in range(n_iter):
        folded = _gram_times(blocks, basis)
        del basis  # at most two terms x width matrices at a time: a large vocabulary makes them large
        basis = _orthonormal(folded)
        del folded
        tick()
    folded = _gram_times(blocks, basis)  # A^T A T: terms x width
    tick()
    gram = basis.T @ folded  # (A T)^T (A T)
    values, vectors = np.linalg.eigh(gram)
    values, vectors = values[::-1], vectors[:, ::-1]  # largest first
    if n_docs >= n_terms:
        del basis
        # directions A T barely reaches (a rank below width) would be divided by almost nothing
        keep = values > values[0] * RELATIVE_FLOOR
        values, vectors = values[keep], vectors[:, keep]
        # Q = (A T) W / sqrt(values) is orthonormal; scikit-learn's B = Q^T A = values^-1/2 W^T (A^T A T)^T
        small = (vectors / np.sqrt(values)).T @ folded.T
        del folded
        components = scipy.linalg.svd(small, full_matrices=False, overwrite_a=True, check_finite=False,
                                      lapack_driver="gesdd")[2][:dims]
    else:
        # scikit-learn's U = T Uhat, with Uhat the eigenvectors of B B^T = T^T A^T A T
        components = (basis @ vectors[:, :dims]).T
    if len(components) < dims:  # the matrix's rank is below dims: the missing directions add nothing
        components = np.vstack([components, np.zeros((dims - len(components), n_terms))])
    components = np.ascontiguousarray(components * _flip_signs(components)[:, None])
    return components, _document_vectors(blocks, n_docs, components, tick)


def _flip_signs(components: np.ndarray) -> np.ndarray:
    """scikit-learn's ``svd_flip(u_based_decision=False)``: each row's largest absolute entry positive."""
    return np.sign(components[np.arange(len(components)), np.argmax(np.abs(components), axis=1)])


def _orthonormal(matrix: np.ndarray) -> np.ndarray:
    return scipy.linalg.qr(matrix, mode="economic", overwrite_a=True, check_finite=False)[0]


class _Block:
    """Rows ``first:first + len`` of the matrix over only the terms they hold (``terms``, ascending):
    its products need rows of the terms side for those terms alone, and a product with its transpose
    is a temporary of those rows only, not of the whole vocabulary. A block holding most of the
    vocabulary keeps its columns (``terms`` None): the same sums, without gathering and scattering rows."""

    def __init__(self, first: int, narrow: sp.csr_matrix, terms: np.ndarray | None):
        self.first, self.narrow, self.terms = first, narrow, terms

    def times(self, terms_side: np.ndarray) -> np.ndarray:
        """``block @ terms_side``: the same sums, in the same order, as with the whole row."""
        return self.narrow @ (terms_side if self.terms is None else terms_side[self.terms])

    def add_transpose_times(self, out: np.ndarray, dense: np.ndarray) -> None:
        """``out += block.T @ dense``."""
        if self.terms is None:
            out += self.narrow.T @ dense
        else:
            out[self.terms] += self.narrow.T @ dense


def _blocks(matrix: sp.csr_matrix) -> list[_Block]:
    """The matrix's blocks of :data:`BLOCK_ROWS` rows, each a view of its data whose column indices are
    rewritten in place to positions in the block's terms where it holds under half of the vocabulary
    (the matrix is not usable afterwards; no copy of it is made)."""
    blocks = []
    indptr, indices = matrix.indptr, matrix.indices
    for first in range(0, matrix.shape[0], BLOCK_ROWS):
        stop = min(first + BLOCK_ROWS, matrix.shape[0])
        low, high = int(indptr[first]), int(indptr[stop])
        terms: np.ndarray | None = np.unique(indices[low:high])
        if 2 * len(terms) > matrix.shape[1]:  # most of the vocabulary: gathering its rows costs more than it saves
            terms = None
        else:
            indices[low:high] = np.searchsorted(terms, indices[low:high])
        narrow = sp.csr_matrix((matrix.data[low:high], indices[low:high], (indptr[first:stop + 1] - low).astype(
            indices.dtype)), shape=(stop - first, matrix.shape[1] if terms is None else len(terms)), copy=False)
        # scipy copies a view of a much larger array when it builds a matrix (``_prune_array``): point
        # the block back at the matrix's own arrays, so that the blocks hold no second copy of it
        narrow.data, narrow.indices = matrix.data[low:high], indices[low:high]
        blocks.append(_Block(first, narrow, terms))
    return blocks


def _transpose_times_draw(blocks: list[_Block], n_terms: int, random: np.random.RandomState,
                          width: int) -> np.ndarray:
    """``A^T @ Omega`` for ``Omega = random.normal(size=(documents, width))``, drawn a block of rows at
    a time from the same stream (row-major, so the same numbers as one draw)."""
    out = np.zeros((n_terms, width))
    for block in blocks:
        block.add_transpose_times(out, random.normal(size=(block.narrow.shape[0], width)))
    return out


def _gram_times(blocks: list[_Block], basis: np.ndarray) -> np.ndarray:
    """``A^T (A basis)``, the documents side one block at a time, summed in block order."""
    out = np.zeros_like(basis)
    for block in blocks:
        block.add_transpose_times(out, block.times(basis))
    return out


def _document_vectors(blocks: list[_Block], n_docs: int, components: np.ndarray,
                      tick: Callable[[], None]) -> np.ndarray:
    vectors = np.empty((n_docs, len(components)), dtype=np.float32)
    transposed = components.T
    for block in blocks:
        rows = block.times(transposed)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        np.divide(rows, norms, out=rows, where=norms > 1e-12)
        rows[(norms <= 1e-12)[:, 0]] = 0.0
        vectors[block.first:block.first + len(rows)] = rows
    tick()
    return vectors
