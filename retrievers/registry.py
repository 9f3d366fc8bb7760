"""The retriever registry: declared once, read by the CLI's choices, help and errors.

Built-ins are one table, :data:`BUILTINS` (name -> ``module:Class``), resolved like an installed
plugin: a class is imported the first time its name is asked for, so the registry imports no
retriever module and ``bench evaluate`` never pays for one. Installed packages join through the
entry-point group ``retbench.retrievers``; :func:`register` adds a class of the user's own
process; ``module:Class`` specs need no registration at all.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points

from corpora import RetbenchError, UnknownNameError
from retrievers.base import Retriever

ENTRY_POINT_GROUP = "retbench.retrievers"
#: The built-in retrievers: name (``--systems``) -> ``module:Class``. Each class's ``name`` is its key.
BUILTINS: dict[str, str] = {
    "bm25": "retrievers.bm25:BM25",
    "combmnz": "retrievers.fusion:CombMNZ",
    "combsum": "retrievers.fusion:CombSUM",
    "dense": "retrievers.dense:Dense",
    "lsa": "retrievers.lsa:LSA",
    "pyterrier": "retrievers.pyterrier:PyTerrierRetriever",
    "rrf": "retrievers.fusion:RRF",
    "run": "retrievers.run_file:RunSystem",
    "weighted": "retrievers.fusion:Weighted",
}
_REGISTRY: dict[str, type[Retriever]] = {}  # resolved built-ins, registered classes, loaded plugins
_BROKEN: dict[str, str] = {}  # plugin name -> why it failed to load
_entry_points_loaded = False


def register(cls: type[Retriever]) -> type[Retriever]:
    """Class decorator: make ``cls`` available to ``--systems`` under ``cls.name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} needs a non-empty class attribute 'name' to be registered")
    builtin = BUILTINS.get(cls.name)
    taken = builtin.replace(":", ".") if builtin is not None else None
    if builtin is None and cls.name in _REGISTRY:
        taken = _qualified(_REGISTRY[cls.name])
    if taken is not None and taken != _qualified(cls):
        raise ValueError(f"retriever name {cls.name!r} is taken by {taken}; give {_qualified(cls)} another name")
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


def _builtin(name: str) -> type[Retriever]:
    """The built-in class ``name``, imported on first use (its module only)."""
    cls = _REGISTRY.get(name)
    if cls is None:
        module_name, _, attr = BUILTINS[name].partition(":")
        cls = getattr(import_module(module_name), attr)
        _REGISTRY[name] = cls
    return cls


def is_registered(cls: type[Retriever]) -> bool:
    """True when ``cls`` is the class the registry holds under its ``name``."""
    if cls.name in BUILTINS:
        return _builtin(cls.name) is cls
    _load_entry_points()
    return _REGISTRY.get(cls.name) is cls


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
        if ep.name in BUILTINS or ep.name in _REGISTRY:  # a built-in or an earlier plugin keeps its name
            continue
        try:
            cls = ep.load()
        except (Exception, SystemExit) as exc:  # any error of third-party code at import time (sys.exit too)
            _BROKEN[ep.name] = f"retriever plugin {ep.name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
            continue
        if not (isinstance(cls, type) and issubclass(cls, Retriever)):
            _BROKEN[ep.name] = (f"retriever plugin {ep.name!r} ({ep.value}) is not a subclass of retrievers.Retriever. "
                                "Fix: point the entry point at the retriever class")
            continue
        if not cls.name:
            cls.name = ep.name
        _REGISTRY[ep.name] = cls


def names() -> list[str]:
    """Every name ``--systems`` accepts (built-ins, registered classes, installed plugins that load),
    sorted, without importing the built-ins."""
    _load_entry_points()
    return sorted({*BUILTINS, *_REGISTRY})


def available() -> dict[str, type[Retriever]]:
    """Every registered retriever, built-ins and installed plugins, by name (imports them all)."""
    for name in BUILTINS:
        _builtin(name)
    _load_entry_points()
    return dict(sorted(_REGISTRY.items()))


def broken_plugins() -> dict[str, str]:
    """Installed plugins that failed to load: name -> the error message."""
    _load_entry_points()
    return dict(sorted(_BROKEN.items()))


def get_class(name: str) -> type[Retriever]:
    """The class for a registered name or a ``module:Class`` path (imported, never registered)."""
    if ":" in name:
        return _class_at(name)
    if name in BUILTINS:
        return _builtin(name)
    _load_entry_points()
    if name in _BROKEN:
        raise RetbenchError(_BROKEN[name])
    if name not in _REGISTRY:
        raise UnknownNameError("retriever", name, names())
    return _REGISTRY[name]


def _class_at(name: str) -> type[Retriever]:
    """The class a ``module:Class`` spec names, imported (and never registered)."""
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
    except (Exception, SystemExit) as exc:  # the user's module raised (or called sys.exit) while being imported
        raise RetbenchError(
            f"retriever {name!r}: importing module {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, Retriever)):
        raise RetbenchError(
            f"retriever {name!r}: {module_name!r} has no Retriever subclass named {attr!r}. "
            "Fix: name a class that subclasses retrievers.Retriever."
        )
    # the class's own name, else its attribute's; a name this very line gave a parent class earlier
    # is not the subclass's (``Child(Parent)`` loaded after ``Parent`` would otherwise be labelled Parent)
    given_to_parent = "name" not in cls.__dict__ and cls.name == getattr(cls, "_name_from_path", None)
    if not cls.name or given_to_parent:
        cls.name = attr
        cls._name_from_path = attr
    return cls
