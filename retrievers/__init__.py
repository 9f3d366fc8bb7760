"""Retrievers: the seam (:class:`Retriever`, :class:`ScoreRetriever`), the registry and the baselines.

Never imports ``harness``.
"""

from retrievers.base import Retriever, ScoreRetriever
from retrievers.fixed import FixedRun
from retrievers.output import as_run
from retrievers.registry import available, get_class, register
from retrievers.spec import build, parse, split_systems

__all__ = [
    "FixedRun",
    "Retriever",
    "ScoreRetriever",
    "as_run",
    "available",
    "build",
    "get_class",
    "parse",
    "register",
    "split_systems",
]
