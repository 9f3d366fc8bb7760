"""Retrievers: the seam (:class:`Retriever`, :class:`ScoreRetriever`), the baselines, the registry
and the spec strings ``--systems`` reads.

Never imports ``harness``. The names below are the public ones: build a retriever as an object
(``RRF(BM25(), LSA(dims=50))``) or from a spec string (``build("rrf(bm25,lsa(dims=50))")``); subclass
the seam for your own. Importing this package imports no heavy library: :class:`Dense` loads
sentence-transformers (and torch) only when it is fitted.
"""

from retrievers.base import Retriever, RetrieverFailed, ScoreRetriever, as_run
from retrievers.bm25 import BM25
from retrievers.dense import Dense
from retrievers.fixed import FixedRun
from retrievers.fusion import RRF, Fusion, Weighted
from retrievers.lsa import LSA
from retrievers.registry import available, get_class, register
from retrievers.spec import build

__all__ = [
    "BM25",
    "LSA",
    "RRF",
    "Dense",
    "FixedRun",
    "Fusion",
    "Retriever",
    "RetrieverFailed",
    "ScoreRetriever",
    "Weighted",
    "as_run",
    "available",
    "build",
    "get_class",
    "register",
]
