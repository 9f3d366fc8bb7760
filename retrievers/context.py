"""The run context: what the harness hands a retriever for one run -- the index cache, the progress
channel and the engine's placement -- passed explicitly, never held in a context variable.

A retriever says what the user must know of its inputs through :meth:`RunContext.say`, which the
harness hands the comparison's warnings. The harness makes one :class:`RunContext` per run (``harness.compare``, ``harness.tune``) and calls
every retriever through :func:`retrievers.base.fit_retriever`, :func:`~retrievers.base.search_retriever`
and :func:`~retrievers.base.score_retriever`, which give the retriever the context as
``self.run_context`` for the length of the call (the base class's default, ``RunContext()``, holds no
cache, shows nothing and places nothing: a retriever fitted by hand, ``BM25().fit(corpus)``, runs
here, builds its state and is silent). A retriever that calls other retrievers (a fusion's children)
passes its own ``self.run_context`` on through those same functions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from corpora.progress import Progress

if TYPE_CHECKING:
    from retrievers.cache import IndexCache
    from retrievers.sharding import Placement

__all__ = ["RunContext"]


@dataclass(frozen=True)
class RunContext:
    """``cache``: the :class:`~retrievers.cache.IndexCache` fitted states come from (None: build them,
    keep nothing). ``progress``: the :class:`~corpora.progress.Progress` channel to report to (silent by
    default). ``placement``: where an engine fits the retrievers with the sharding protocol
    (:class:`~retrievers.sharding.Placement`; None: everything is fitted here). ``warn``: what hears
    a retriever's warnings about its inputs (:meth:`say`): the comparison's warnings; None: Python's
    :func:`warnings.warn`, so that a retriever run by hand is not silent either."""

    cache: IndexCache | None = None
    progress: Progress = field(default_factory=Progress)
    placement: Placement | None = None
    warn: Callable[[str], None] | None = None

    def say(self, message: str) -> None:
        """Warn about something the user must know of the inputs (e.g. a run's queries the
        collection lacks): to :attr:`warn`, else through :func:`warnings.warn`."""
        if self.warn is not None:
            self.warn(message)
        else:
            warnings.warn(message, UserWarning, stacklevel=2)
