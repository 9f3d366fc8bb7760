"""String ids to integer codes, vectorised and exact.

Doc and query ids are strings; the evaluator works on integer codes. Hashing millions of Python
strings one by one (a dict, or pandas' object hash table) dominates an evaluation, so ids are
hashed here as fixed-width code-point arrays with one integer matrix product, the 64-bit hashes
go through pandas' integer hash table, and every match is then checked against the strings
themselves: a hash collision can never merge two ids (when one is found, the exact, slower path
takes over).
"""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd, so x -> x * m is a bijection modulo 2**64
_PAIR_MULTIPLIER = np.uint64(0xBF58476D1CE4E5B9)

# id(array) -> (weak reference to the array, its hashes): hashes computed while reading a run are
# reused when the run is evaluated. The weak reference proves the array is the same object.
_REMEMBERED: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def hash_ids(ids: np.ndarray) -> np.ndarray:
    """A uint64 per id: a polynomial over its UTF-32 code units, taken 2 at a time, mod 2**64.

    >>> h = hash_ids(np.array(["d1", "d2", "d1"], dtype=object))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    if not len(ids):
        return np.empty(0, dtype=np.uint64)
    text = np.asarray(ids).astype(np.str_)
    width = text.dtype.itemsize // 4
    if width % 2:
        width += 1
        text = text.astype(f"<U{width}")
    units = text.view(np.uint64).reshape(len(text), width // 2)
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(width // 2, _MULTIPLIER, dtype=np.uint64))
        return units @ powers


def remember_hashes(ids: np.ndarray, hashes: np.ndarray) -> None:
    """Let :func:`hashes_of` return ``hashes`` for this very array (which must not change)."""
    key = id(ids)
    _REMEMBERED[key] = (weakref.ref(ids, lambda _: _REMEMBERED.pop(key, None)), hashes)


def hashes_of(ids: np.ndarray) -> np.ndarray:
    """:func:`hash_ids`, reusing the hashes remembered for this array if there are any."""
    entry = _REMEMBERED.get(id(ids))
    if entry is not None and entry[0]() is ids:
        return entry[1]
    return hash_ids(ids)


def duplicate_pairs(group_codes: np.ndarray, ids: np.ndarray, hashes: np.ndarray | None = None) -> np.ndarray:
    """Indices of the entries whose (group, id) pair occurred before (exact; hashes only narrow
    the search).

    >>> duplicate_pairs(np.array([0, 0, 1, 0]), np.array(["a", "b", "a", "a"], dtype=object)).tolist()
    [3]
    """
    if len(ids) < 2:
        return np.empty(0, dtype=np.int64)
    hashes = hashes_of(ids) if hashes is None else hashes
    with np.errstate(over="ignore"):
        pair = hashes ^ (group_codes.astype(np.uint64) * _PAIR_MULTIPLIER + np.uint64(1))
    ordered = np.sort(pair)
    clashing = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(clashing):
        return np.empty(0, dtype=np.int64)
    suspects = np.flatnonzero(np.isin(pair, clashing))
    seen: set[tuple[int, str]] = set()
    repeated = []
    for index, group, value in zip(suspects.tolist(), group_codes[suspects].tolist(), ids[suspects].tolist()):
        if (group, value) in seen:
            repeated.append(index)
        seen.add((group, value))
    return np.asarray(repeated, dtype=np.int64)


def factorize_ids(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, vocabulary)`` like ``pandas.factorize``: codes in order of first appearance.

    >>> codes, vocabulary = factorize_ids(np.array(["b", "a", "b"], dtype=object))
    >>> codes.tolist(), vocabulary.tolist()
    ([0, 1, 0], ['b', 'a'])
    """
    ids = np.asarray(ids, dtype=object)
    if not len(ids):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=object)
    codes, unique_hashes = pd.factorize(hashes_of(ids))
    first = np.full(len(unique_hashes), len(ids), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(ids)))
    vocabulary = ids[first]
    if not (vocabulary[codes] == ids).all():  # a collision: two ids share a hash
        codes, vocabulary = pd.factorize(ids)
        vocabulary = np.asarray(vocabulary, dtype=object)
    return codes.astype(np.int64), vocabulary


class IdLookup:
    """Position of ids in a vocabulary of unique string ids; -1 for ids it does not hold.

    >>> lookup = IdLookup(np.array(["a", "b", "c"], dtype=object))
    >>> lookup.codes(np.array(["c", "x", "a"], dtype=object)).tolist()
    [2, -1, 0]
    """

    def __init__(self, vocabulary: np.ndarray):
        self.vocabulary = np.asarray(vocabulary, dtype=object)
        self._index = pd.Index(hashes_of(self.vocabulary))
        self._exact: dict[str, int] | None = None
        if not self._index.is_unique:
            self._exact = {v: i for i, v in enumerate(self.vocabulary.tolist())}

    def __len__(self) -> int:
        return len(self.vocabulary)

    def codes(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=object)
        if self._exact is not None:
            get = self._exact.get
            return np.fromiter((get(i, -1) for i in ids.tolist()), dtype=np.int64, count=len(ids))
        if not len(ids) or not len(self.vocabulary):
            return np.full(len(ids), -1, dtype=np.int64)
        codes = self._index.get_indexer(hashes_of(ids)).astype(np.int64)
        found = np.flatnonzero(codes >= 0)
        # Vocabulary hashes are unique, so a found id has one candidate; if its text differs, the
        # hash collided and the id is not in the vocabulary.
        differs = self.vocabulary[codes[found]] != ids[found]
        codes[found[differs]] = -1
        return codes
