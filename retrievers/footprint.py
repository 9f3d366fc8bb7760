"""The bytes a fitted retriever holds: what the cost reading reports as its index size.

:func:`held_bytes` walks an object's attributes and counts what is in memory because of the fit:
numpy arrays (``nbytes``, each buffer once however many views share it, a memory-mapped cache entry
included), scipy sparse matrices (their arrays), torch tensors (``numel * element_size``) and the
Python containers, strings and numbers around them (``sys.getsizeof``). It does not count the
corpus (the collection's, not the index's), the run context, the arguments remembered for labels,
nor the children of a fusion (the harness adds their own sizes and says so). It descends into
objects of retbench's own packages only: an object of another library is counted when it is one
of the kinds above, and otherwise makes the size unknown (None) rather than a guess.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from functools import partial
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import Any

import numpy as np
import scipy.sparse as sp

from corpora import Corpus

__all__ = ["held_bytes"]

#: Attributes that are not the index: the collection, the run's context, the remembered arguments, children.
NOT_THE_INDEX = frozenset({"corpus", "run_context", "_init_arguments", "children"})
_OWN_PACKAGES = ("retrievers", "corpora")


class _Unknown(Exception):
    """An object the walk cannot size honestly."""


def held_bytes(obj: object, skip: Iterable[str] = ()) -> int | None:
    """Bytes held by ``obj``'s attributes (less :data:`NOT_THE_INDEX` and ``skip``), or None when
    one of them is of a kind this walk cannot size (an object of another library).

    >>> class Index:
    ...     pass
    >>> index = Index(); index.vectors = np.zeros((10, 4)); index.view = index.vectors[:5]
    >>> held_bytes(index) == 320  # the view shares the array's buffer: counted once
    True
    """
    seen: set[int] = set()
    skipped = NOT_THE_INDEX | set(skip)
    try:
        return sum(_size(value, seen) for name, value in vars(obj).items() if name not in skipped)
    except _Unknown:
        return None


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _size(value: Any, seen: set[int]) -> int:
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return sys.getsizeof(value)
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        root = _root(value)
        if id(root) in seen and root is not value:
            return 0
        seen.add(id(root))
        return int(root.nbytes)
    if isinstance(value, memoryview):  # a view of an array or bytes held elsewhere counts that once
        return _size(value.obj, seen) if value.obj is not None else value.nbytes
    if isinstance(value, np.generic):
        return int(value.nbytes)
    if sp.issparse(value):
        return sum(_size(getattr(value, part), seen) for part in ("data", "indices", "indptr", "row", "col", "offsets")
                   if isinstance(getattr(value, part, None), np.ndarray))
    if type(value).__module__.split(".")[0] == "torch" and hasattr(value, "element_size"):
        return int(value.numel() * value.element_size())
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(_size(k, seen) + _size(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + sum(_size(item, seen) for item in value)
    if isinstance(value, Corpus):
        return 0  # the collection's, not the index's
    if type(value).__module__.split(".")[0] in _OWN_PACKAGES:
        if hasattr(value, "__dict__"):
            return sys.getsizeof(value) + sum(_size(v, seen) for n, v in vars(value).items() if n not in NOT_THE_INDEX)
        if hasattr(value, "__slots__"):
            return sys.getsizeof(value) + sum(_size(getattr(value, n, None), seen) for n in value.__slots__)
    if isinstance(value, (FunctionType, BuiltinFunctionType, MethodType, partial)):
        return 0  # a function kept for searching (an analyzer): code, not the index
    raise _Unknown(type(value).__qualname__)
