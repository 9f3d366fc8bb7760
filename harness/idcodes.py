"""String ids hashed to integers, vectorised, for joins that stay exact.

Doc ids are strings; the evaluator joins a run with its judgments on (query, doc). Hashing millions
of Python strings one by one (a dict, or pandas' object hash table) would dominate an evaluation, so
ids are hashed here as fixed-width code-point arrays with one integer matrix product. Hashes only
ever *narrow* a search: every match they suggest is confirmed on the strings themselves, so a
collision can never merge two ids.
"""

from __future__ import annotations

import weakref

import numpy as np

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd, so x -> x * m is a bijection modulo 2**64
_PAIR_MULTIPLIER = np.uint64(0xBF58476D1CE4E5B9)
_HASH_SLICE = 1 << 17  # ids hashed at a time

# id(array) -> (weak reference to the array, its hashes): hashes computed while reading a run are
# reused when the run is evaluated. The weak reference proves the array is the same object.
_REMEMBERED: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def hash_ids(ids: np.ndarray) -> np.ndarray:
    """A uint64 per id: a polynomial over its UTF-32 code units, taken 2 at a time, mod 2**64,
    then mixed so that every bit depends on every unit. Zero padding adds nothing, so an id hashes
    the same whatever the width of the array it sits in (ids are hashed a slice at a time, which
    keeps the fixed-width copy small).

    >>> h = hash_ids(np.array(["d1", "d2", "d1"], dtype=object))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    ids = np.asarray(ids)
    hashed = np.empty(len(ids), dtype=np.uint64)
    for start in range(0, len(ids), _HASH_SLICE):
        hashed[start:start + _HASH_SLICE] = _hash_slice(ids[start:start + _HASH_SLICE])
    return hashed


def _hash_slice(ids: np.ndarray) -> np.ndarray:
    text = ids.astype(np.str_)
    width = text.dtype.itemsize // 4
    if width % 2:
        width += 1
        text = text.astype(f"<U{width}")
    units = text.view(np.uint64).reshape(len(text), width // 2)
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(width // 2, _MULTIPLIER, dtype=np.uint64))
        hashed = units @ powers
        # splitmix64's finaliser: the product's low bits ignore the high bits of every unit
        hashed ^= hashed >> np.uint64(31)
        hashed *= _PAIR_MULTIPLIER
        hashed ^= hashed >> np.uint64(29)
    return hashed


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


def group_salts(groups: np.ndarray) -> np.ndarray:
    """The value :func:`pair_hashes` XORs into an id hash for each group code."""
    with np.errstate(over="ignore"):
        return (groups.astype(np.uint64) + np.uint64(1)) * _PAIR_MULTIPLIER


def pair_hashes(groups: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """One uint64 per (group code, id hash) pair, e.g. (query row, doc): equal pairs hash equal."""
    return hashes ^ group_salts(groups)


def duplicate_pairs(group_codes: np.ndarray, ids: np.ndarray, hashes: np.ndarray | None = None) -> np.ndarray:
    """Indices of the entries whose (group, id) pair occurred before (exact; hashes only narrow
    the search).

    >>> duplicate_pairs(np.array([0, 0, 1, 0]), np.array(["a", "b", "a", "a"], dtype=object)).tolist()
    [3]
    """
    if len(ids) < 2:
        return np.empty(0, dtype=np.int64)
    pair = pair_hashes(group_codes, hashes_of(ids) if hashes is None else hashes)
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
