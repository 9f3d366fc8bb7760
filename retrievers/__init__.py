"""Retrievers: the seam (:class:`Retriever`, :class:`ScoreRetriever`), the baselines, the registry
and the spec strings ``--systems`` reads.

Never imports ``harness``. The names below are the public ones: build a retriever as an object
(``RRF(BM25(), LSA(dims=50))``) or from a spec string (``build("rrf(bm25,lsa(dims=50))")``); subclass
the seam for your own. Importing this package imports no heavy library: :class:`Dense` loads
sentence-transformers (and torch) only when it is fitted.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what static checkers and editors see; at run time, __getattr__ below
    from retrievers.base import Retriever, RetrieverFailed, ScoreRetriever, fit_retriever, score_retriever, search_retriever
    from retrievers.context import RunContext
    from retrievers.bm25 import BM25
    from retrievers.dense import Dense
    from retrievers.fixed import FixedRun
    from retrievers.fusion import RRF, CombMNZ, CombSUM, Fusion, Weighted
    from retrievers.lsa import LSA
    from retrievers.output import as_run
    from retrievers.pyterrier import PyTerrierRetriever
    from retrievers.registry import available, get_class, register
    from retrievers.run_file import RunSystem
    from retrievers.spec import build

#: public name -> the module that defines it. Imported on first use, so that importing the package
#: (or its registry) loads no retriever module: ``bm25`` is imported when it is asked for.
_HOMES = {
    "BM25": "retrievers.bm25",
    "LSA": "retrievers.lsa",
    "RRF": "retrievers.fusion",
    "Weighted": "retrievers.fusion",
    "CombSUM": "retrievers.fusion",
    "CombMNZ": "retrievers.fusion",
    "RunSystem": "retrievers.run_file",
    "Fusion": "retrievers.fusion",
    "Dense": "retrievers.dense",
    "FixedRun": "retrievers.fixed",
    "PyTerrierRetriever": "retrievers.pyterrier",
    "Retriever": "retrievers.base",
    "RetrieverFailed": "retrievers.base",
    "ScoreRetriever": "retrievers.base",
    "RunContext": "retrievers.context",
    "fit_retriever": "retrievers.base",
    "search_retriever": "retrievers.base",
    "score_retriever": "retrievers.base",
    "as_run": "retrievers.output",
    "available": "retrievers.registry",
    "get_class": "retrievers.registry",
    "register": "retrievers.registry",
    "build": "retrievers.spec",
}

__all__ = [
    "BM25",
    "LSA",
    "RRF",
    "CombMNZ",
    "CombSUM",
    "Dense",
    "FixedRun",
    "Fusion",
    "PyTerrierRetriever",
    "Retriever",
    "RetrieverFailed",
    "RunContext",
    "RunSystem",
    "ScoreRetriever",
    "Weighted",
    "as_run",
    "available",
    "build",
    "fit_retriever",
    "get_class",
    "register",
    "score_retriever",
    "search_retriever",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'retrievers' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
