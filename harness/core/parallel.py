"""Where the chunks of a computation run: here, or on the workers of an engine (:mod:`harness.engines`).

The statistics resample in chunks (:mod:`harness.core.statistics`, :mod:`harness.core.leaderboard`) and the
evaluation can go query partition by partition (:func:`harness.core.evaluation.evaluate_in_partitions`);
each chunk is a pure function ``function(shared, item)`` of data shared by every chunk and of its
own item. :func:`chunk_map` runs the chunks here, in order, unless an engine installed a
:class:`ChunkMapper` (:func:`mapping`), which may run them anywhere; the results come back in the
order of the items either way, so where they ran never changes a number.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, Protocol


class ChunkMapper(Protocol):
    """Runs ``function(shared, item)`` for every item, wherever it likes; results in item order."""

    #: how many parts a partitioned computation should be cut into (e.g. the number of workers)
    partitions: int

    def map(self, function: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any) -> list[Any]: ...


_MAPPER: ContextVar[ChunkMapper | None] = ContextVar("retbench_chunk_mapper", default=None)


def current_mapper() -> ChunkMapper | None:
    """The mapper an engine installed, or None: every chunk runs here."""
    return _MAPPER.get()


@contextlib.contextmanager
def mapping(mapper: ChunkMapper | None) -> Iterator[None]:
    """Run the chunks of the computations inside the ``with`` block through ``mapper``."""
    token = _MAPPER.set(mapper)
    try:
        yield
    finally:
        _MAPPER.reset(token)


def chunk_map(function: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any) -> list[Any]:
    """``[function(shared, item) for item in items]``, through the installed mapper if there is one."""
    mapper = current_mapper()
    if mapper is None:
        return [function(shared, item) for item in items]
    return mapper.map(function, items, shared)
