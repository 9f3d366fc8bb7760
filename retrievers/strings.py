"""Packed string tables: a list of strings as two numpy arrays, for cache entries without pickle.

:func:`pack_strings` stores strings as their UTF-8 bytes (one ``uint8`` array) and ``int64``
offsets; :func:`unpack_strings` reads them back after :func:`check_strings` has made sure the two
arrays cut valid UTF-8 into whole characters (a cache file is never trusted);
:class:`SortedStrings` looks terms up in a sorted table by binary search, without a dict.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np


def pack_strings(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as (UTF-8 bytes, int64 offsets) arrays, for storing a vocabulary without pickle.

    ASCII words are encoded in one piece (and read back so by :func:`unpack_strings`) rather than
    word by word (``benchmarks/speed_paths.py`` ``pack_strings``).
    """
    joined = "".join(words)
    data = joined.encode("utf-8", "surrogatepass")
    # ASCII: one byte per character, so the character lengths are the byte lengths
    pieces = words if len(data) == len(joined) else [w.encode("utf-8", "surrogatepass") for w in words]
    if pieces is not words:
        data = b"".join(pieces)
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(words)), out=offsets[1:])
    return np.frombuffer(data, dtype=np.uint8).copy(), offsets


def unpack_strings(blob: np.ndarray, offsets: np.ndarray) -> list[str]:
    """Inverse of :func:`pack_strings`; ValueError when the arrays do not describe strings."""
    check_strings(blob, offsets)
    text = blob.tobytes().decode("utf-8", "surrogatepass")
    bounds = offsets.tolist()
    if len(text) == len(blob):  # ASCII: byte offsets are character offsets
        return [text[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    data = blob.tobytes()
    return [data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(bounds[:-1], bounds[1:])]


class SortedStrings(Mapping[str, int]):
    """A packed, ascending string table read as ``term -> position`` by binary search.

    For looking up a few query terms in a vocabulary of a million without building a dict of it.
    UTF-8 byte order is code point order, so comparing bytes follows the table's ``sorted`` order.
    Each string's first 8 bytes, as a big-endian integer padded with zero bytes, keep that order
    (a proper prefix sorts first either way), so ``np.searchsorted`` over those integers narrows a
    lookup to the few strings sharing them before any string is compared
    (``benchmarks/speed_paths.py`` ``sorted_strings``), for 8 bytes a term.
    """

    def __init__(self, blob: np.ndarray, offsets: np.ndarray):
        self._data = blob.tobytes()
        # A memoryview reads each offset as a Python int on demand. A list of them (``tolist``)
        # held far more memory and looked up no faster (benchmarks/RESULTS.md, notes.memory).
        self._offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self._bounds = memoryview(self._offsets)
        self._heads = _heads(blob, offsets)

    def __reduce__(self) -> tuple[type, tuple[np.ndarray, np.ndarray]]:
        """Pickled as its two arrays (a memoryview cannot be pickled): a fitted retriever still can."""
        return SortedStrings, (np.frombuffer(self._data, dtype=np.uint8), self._offsets)

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def __iter__(self) -> Iterator[str]:
        data, bounds = self._data, self._bounds
        return (data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(bounds[:-1], bounds[1:]))

    def __getitem__(self, term: str) -> int:
        key = term.encode("utf-8", "surrogatepass")
        heads = self._heads
        head = np.uint64(_head(key))
        low = high = int(heads.searchsorted(head))  # the method: np.searchsorted's dispatch costs 3 us more
        while high < len(heads) and heads[high] == head:  # the strings sharing those 8 bytes: few
            high += 1
        position = self._search(key, low, high)
        if position is None:
            raise KeyError(term)
        return position

    def positions(self, terms: Sequence[str]) -> np.ndarray:
        """Each term's position (int64), -1 where it is not in the table: the heads of every term
        found by one ``searchsorted``, then the strings sharing a term's head compared as in
        :meth:`__getitem__` (usually one), rather than a lookup per term
        (``benchmarks/speed_paths.py`` ``sorted_strings_batch``)."""
        keys = [term.encode("utf-8", "surrogatepass") for term in terms]
        heads = np.fromiter(map(_head, keys), dtype=np.uint64, count=len(keys))
        lows = self._heads.searchsorted(heads, "left").tolist()
        highs = self._heads.searchsorted(heads, "right").tolist()
        found = np.full(len(keys), -1, dtype=np.int64)
        for i, (key, low, high) in enumerate(zip(keys, lows, highs)):
            if low < high:
                position = self._search(key, low, high)
                if position is not None:
                    found[i] = position
        return found

    def _search(self, key: bytes, low: int, high: int) -> int | None:
        """The position of ``key`` among the strings ``low:high`` (a binary search), or None."""
        data, bounds = self._data, self._bounds
        while low < high:
            middle = (low + high) // 2
            if data[bounds[middle]:bounds[middle + 1]] < key:
                low = middle + 1
            else:
                high = middle
        if low < len(bounds) - 1 and data[bounds[low]:bounds[low + 1]] == key:
            return low
        return None


def _head(key: bytes) -> int:
    """A string's first 8 bytes (UTF-8) as a big-endian integer, zero-padded: the order of :func:`_heads`."""
    return int.from_bytes(key[:8].ljust(8, b"\0"), "big")


#: Strings whose heads :func:`_heads` computes at a time: its temporaries stay a few MB, where
#: whole-table ones (five arrays of 8 bytes a string) stayed in the search's resident memory.
_HEADS_STEP = 1 << 16


def _heads(blob: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each string's first 8 bytes as a big-endian ``uint64``, zero-padded (ascending with the strings)."""
    heads = np.zeros(len(offsets) - 1, dtype=np.uint64)
    for first in range(0, len(heads), _HEADS_STEP):
        bounds = offsets[first:first + _HEADS_STEP + 1]
        starts, lengths = bounds[:-1], np.diff(bounds)
        part = heads[first:first + len(starts)]
        for byte in range(8):
            present = lengths > byte
            values = np.zeros(len(starts), dtype=np.uint64)
            values[present] = blob[starts[present] + byte]
            part |= values << np.uint64(8 * (7 - byte))
    return heads


def check_strings(blob: np.ndarray, offsets: np.ndarray) -> None:
    """ValueError unless ``offsets`` cut ``blob`` (valid UTF-8) into whole characters."""
    if blob.ndim != 1 or offsets.ndim != 1 or len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(blob) \
            or (len(offsets) > 1 and np.any(np.diff(offsets) < 0)):
        raise ValueError("damaged string table")
    try:
        blob.tobytes().decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise ValueError("damaged string table") from None
    cuts = offsets[:-1][offsets[:-1] < len(blob)]
    if np.any((blob[cuts] & 0xC0) == 0x80):  # a cut inside a multi-byte character
        raise ValueError("damaged string table")
