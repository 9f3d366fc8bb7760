"""The retriever registry: declared once, read by the CLI's choices, help and errors.

Built-ins register with :func:`register`; installed packages through the entry-point group
``retbench.retrievers``; ``module:Class`` specs need no registration at all.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points

from corpora import RetbenchError, UnknownNameError
from retrievers.base import Retriever

ENTRY_POINT_GROUP = "retbench.retrievers"
_REGISTRY: dict[str, type[Retriever]] = {}
_BROKEN: dict[str, str] = {}  # plugin name -> why it failed to load
_entry_points_loaded = False


def register(cls: type[Retriever]) -> type[Retriever]:
    """Class decorator: make ``cls`` available to ``--systems`` under ``cls.name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} needs a non-empty class attribute 'name' to be registered")
    taken = _REGISTRY.get(cls.name)
    if taken is not None and _qualified(taken) != _qualified(cls):
        raise ValueError(f"retriever name {cls.name!r} is taken by {_qualified(taken)}; give {_qualified(cls)} "
                         "another name")
    _REGISTRY[cls.name] = cls
    return cls


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def spec_name(cls: type[Retriever]) -> str:
    """The ``module:Class`` spelling of ``cls`` that :func:`get_class` reads back.

    >>> from retrievers.bm25 import BM25
    >>> spec_name(BM25)
    'retrievers.bm25:BM25'
    """
    return f"{cls.__module__}:{cls.__qualname__}"


def is_registered(cls: type[Retriever]) -> bool:
    """True when ``cls`` is the class the registry holds under its ``name``."""
    return available().get(cls.name) is cls


def _load_entry_points() -> None:
    """Register the classes of the ``retbench.retrievers`` entry points, once per process.

    A plugin that fails to load does not take the others down: it is remembered in ``_BROKEN``,
    shown by ``bench retrievers``, and its error is raised only when it is asked for by name.
    """
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _REGISTRY:  # a built-in or an earlier plugin keeps its name
            continue
        try:
            cls = ep.load()
        except Exception as exc:  # any error of third-party code at import time
            _BROKEN[ep.name] = f"retriever plugin {ep.name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
            continue
        if not (isinstance(cls, type) and issubclass(cls, Retriever)):
            _BROKEN[ep.name] = (f"retriever plugin {ep.name!r} ({ep.value}) is not a subclass of retrievers.Retriever. "
                                "Fix: point the entry point at the retriever class")
            continue
        if not cls.name:
            cls.name = ep.name
        _REGISTRY[ep.name] = cls


def available() -> dict[str, type[Retriever]]:
    """Every registered retriever, built-ins and installed plugins, by name."""
    import retrievers.builtin  # noqa: F401  (registers the baselines)

    _load_entry_points()
    return dict(sorted(_REGISTRY.items()))


def broken_plugins() -> dict[str, str]:
    """Installed plugins that failed to load: name -> the error message."""
    available()
    return dict(sorted(_BROKEN.items()))


def get_class(name: str) -> type[Retriever]:
    """The class for a registered name or a ``module:Class`` path (imported, never registered)."""
    if ":" in name:
        module_name, _, attr = name.partition(":")
        if not module_name or not attr:
            raise RetbenchError(f"retriever {name!r}: expected module:Class, e.g. my_module:MyRetriever")
        try:
            module = import_module(module_name)
        except ImportError as exc:
            raise RetbenchError(
                f"retriever {name!r}: cannot import module {module_name!r} ({exc}). "
                "Fix: check the spelling and that the module is on PYTHONPATH."
            ) from None
        except Exception as exc:  # the user's module raised while being imported
            raise RetbenchError(
                f"retriever {name!r}: importing module {module_name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        cls = getattr(module, attr, None)
        if not (isinstance(cls, type) and issubclass(cls, Retriever)):
            raise RetbenchError(
                f"retriever {name!r}: {module_name!r} has no Retriever subclass named {attr!r}. "
                "Fix: name a class that subclasses retrievers.Retriever."
            )
        if not cls.name:
            cls.name = attr
        return cls
    registry = available()
    if name in _BROKEN:
        raise RetbenchError(_BROKEN[name])
    if name not in registry:
        raise UnknownNameError("retriever", name, list(registry))
    return registry[name]
