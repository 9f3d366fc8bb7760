"""Giving freed memory back to the operating system, between the phases of a large fit."""

from __future__ import annotations

import ctypes
import functools
import sys


def release_freed_memory() -> None:
    """Hand the heap's free pages back to the system.

    The chunks' temporaries are a few MB each, so the C allocator serves them from its heap and,
    once freed, keeps them: resident memory that nothing uses (``benchmarks/RESULTS.md``,
    ``notes.memory``).
    glibc's ``malloc_trim`` returns them; elsewhere this does nothing.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> object | None:
    """glibc's ``malloc_trim``, looked up once; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
