"""Engines: where :func:`harness.compare` runs its work (``bench compare --engine``).

Declared once in :data:`ENGINES` (name -> class); ``--engine`` choices, its help and the "unknown
engine" error read it. ``local`` runs everything in this process; ``dask`` on a Dask cluster
(:mod:`harness.engines.dask_engine`, the optional ``dask`` extra, imported only when used). Engines
change where work runs, never what it computes (:mod:`harness.engines.base`). Beside them, what a
step of work may take and what it took: its deadline (:mod:`harness.engines.deadline`), its wall
time (:mod:`harness.engines.steps`) and what each system costs where it is fitted and searched
(:mod:`harness.engines.cost`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.engines.base import DatasetOrigin, Engine, EngineRecord, EngineRun
    from harness.engines.dask_engine import DaskEngine
    from harness.engines.local import LocalEngine

__all__ = ["ENGINES", "DaskEngine", "DatasetOrigin", "Engine", "EngineRecord", "EngineRun", "LocalEngine", "resolve_engine"]

#: Public name -> the module of this package that defines it. Loaded on first use (PEP 562), so
#: that :mod:`harness.engines.parallel`, which the core's statistics and evaluation import, does not
#: bring the engines and, through them, the retrievers into ``bench evaluate``.
_DEFINED_IN = {"DatasetOrigin": "base", "Engine": "base", "EngineRecord": "base", "EngineRun": "base",
               "DaskEngine": "dask_engine", "LocalEngine": "local"}


def __getattr__(name: str) -> Any:
    if name == "ENGINES":
        #: ``--engine`` name -> engine class.
        engines = {cls.name: cls for cls in (__getattr__("LocalEngine"), __getattr__("DaskEngine"))}
        globals()["ENGINES"] = engines
        return engines
    if name in _DEFINED_IN:
        value = getattr(import_module(f"harness.engines.{_DEFINED_IN[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_engine(engine: str | Engine, scheduler: str | None = None,
                   workers: int | None = None) -> tuple[Engine, bool]:
    """The engine to run on, and whether the caller owns it (made here from a name: close it after).

    ``engine``: a name of :data:`ENGINES` or an :class:`Engine`. ``scheduler`` and ``workers`` are the
    Dask engine's; given with another engine, they are an error rather than ignored.
    """
    from corpora import RetbenchError, UnknownNameError
    from harness.engines.base import Engine
    from harness.engines.dask_engine import DaskEngine

    engines = __getattr__("ENGINES")
    if isinstance(engine, Engine):
        if scheduler is not None or workers is not None:
            raise RetbenchError("scheduler and workers are options of an engine named by a string; an engine object "
                                "carries its own. Fix: pass them to DaskEngine(...)")
        return engine, False
    if not isinstance(engine, str) or engine not in engines:
        raise UnknownNameError("engine", str(engine), list(engines))
    if engine != DaskEngine.name and (scheduler is not None or workers is not None):
        given = "`scheduler`" if scheduler is not None else "`workers`"
        raise RetbenchError(f"{given} is an option of the dask engine, and the engine is {engine!r}. "
                            "Fix: add `engine=dask`, or leave it out")
    if engine == DaskEngine.name:
        return DaskEngine(scheduler, workers), True
    return engines[engine](), True
