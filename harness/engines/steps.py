"""The wall time of each step of a comparison, for the manifest's ``steps``.

A comparison's steps are timed where they run (:func:`harness.core.api.compute_comparison`: loading,
each system's fit, search and evaluation, the bootstrap, the power table, each registered reading's
compute step, the diagnosis) and recorded in order, so that someone who ran a large collection can
see where its time went without a profiler. Times change from run to run: like ``fit_seconds``,
they are left out of the configuration hash and of any comparison of two results folders.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

__all__ = ["StepClock"]


class StepClock:
    """The steps timed so far: ``steps`` holds ``{"step": name, "seconds": wall time}`` in the order
    they ended (a step inside another ends first)."""

    def __init__(self) -> None:
        self.steps: list[dict[str, object]] = []

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Time the block as step ``name`` (recorded when it ends, also when it raises)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        """Record step ``name`` as having taken ``seconds``."""
        self.steps.append({"step": name, "seconds": round(seconds, 6)})
