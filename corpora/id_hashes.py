"""String ids turned into integers, vectorised: hashes for joins that stay exact, and codes.

Doc ids are strings; the evaluator joins a run with its judgments on (query, doc). Hashing millions
of Python strings one by one (a dict, or pandas' object hash table) would dominate an evaluation, so
ids are hashed here as fixed-width code-point arrays with one integer matrix product. Hashes only
ever *narrow* a search: every match they suggest is confirmed on the strings themselves, so a
collision can never merge two ids. :class:`~corpora.Run` and :class:`~corpora.Qrels` keep the
hashes of their doc ids (computed once, by the file reader when there is one), so the join never
hashes the same ids twice.
"""

from __future__ import annotations

import numpy as np

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd, so x -> x * m is a bijection modulo 2**64
_PAIR_MULTIPLIER = np.uint64(0xBF58476D1CE4E5B9)
_HASH_SLICE = 1 << 17  # ids hashed at a time

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
    pair = pair_hashes(group_codes, hash_ids(ids) if hashes is None else hashes)
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


def factorize_blocks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize`` (codes in order of first appearance, and the distinct values) for arrays
    made of long runs of equal values, such as the query ids of a run or qrels file: only the first
    value of each run is hashed. Any order is accepted; the codes equal ``pd.factorize``'s.

    >>> codes, uniques = factorize_blocks(np.array(["q2", "q2", "q1", "q2"], dtype=object))
    >>> codes.tolist(), uniques.tolist()
    ([0, 0, 1, 0], ['q2', 'q1'])
    """
    import pandas as pd  # deferred: ``import corpora`` stays free of pandas

    if not len(values):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=object)
    change = np.empty(len(values), dtype=bool)
    change[0] = True
    np.not_equal(values[1:], values[:-1], out=change[1:])
    heads = np.flatnonzero(change)
    head_codes, uniques = pd.factorize(values[heads])
    return (np.repeat(head_codes.astype(np.int64), np.diff(np.append(heads, len(values)))),
            np.asarray(uniques, dtype=object))
