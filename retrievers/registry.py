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
_entry_points_loaded = False


def register(cls: type[Retriever]) -> type[Retriever]:
    """Class decorator: make ``cls`` available to ``--systems`` under ``cls.name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} needs a non-empty class attribute 'name' to be registered")
    _REGISTRY[cls.name] = cls
    return cls


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
        except Exception as exc:  # a broken plugin must not take the built-ins down
            raise RetbenchError(f"retriever plugin {ep.name!r} ({ep.value}) failed to load: {exc}") from None
        if not getattr(cls, "name", ""):
            cls.name = ep.name
        _REGISTRY.setdefault(ep.name, cls)


def available() -> dict[str, type[Retriever]]:
    """Every registered retriever, built-ins and installed plugins, by name."""
    import retrievers.builtin  # noqa: F401  (registers the baselines)

    _load_entry_points()
    return dict(sorted(_REGISTRY.items()))


def get_class(name: str) -> type[Retriever]:
    """The class for a registered name or a ``module:Class`` path."""
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            module = import_module(module_name)
        except ImportError as exc:
            raise RetbenchError(
                f"retriever {name!r}: cannot import module {module_name!r} ({exc}). "
                "Fix: check the spelling and that the module is on PYTHONPATH."
            ) from None
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
    if name not in registry:
        raise UnknownNameError("retriever", name, list(registry))
    return registry[name]
