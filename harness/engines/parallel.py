"""Where the chunks of a computation run: here, or on the workers of an engine (:mod:`harness.engines`).

The statistics resample in chunks (:mod:`harness.core.statistics`, :mod:`harness.readings.leaderboard`) and the
evaluation can go query partition by partition (:func:`harness.core.evaluation.evaluate_in_partitions`);
each chunk is a pure function ``function(shared, item)`` of data shared by every chunk and of its
own item. Those functions take a ``mapper`` argument: None runs the chunks here, in order; an
engine's :class:`ChunkMapper` (``EngineRun.mapper``, passed on by :func:`harness.compare`) may run them
anywhere. The results come back in the order of the items either way, so where they ran never
changes a number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol


class ChunkMapper(Protocol):
    """Runs ``function(shared, item)`` for every item, wherever it likes; results in item order."""

    #: how many parts a partitioned computation should be cut into (e.g. the number of workers)
    partitions: int

    def map(self, function: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any) -> list[Any]: ...


def chunk_map(function: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any,
              mapper: ChunkMapper | None = None) -> list[Any]:
    """``[function(shared, item) for item in items]``, through ``mapper`` when there is one."""
    if mapper is None:
        return [function(shared, item) for item in items]
    return mapper.map(function, items, shared)
