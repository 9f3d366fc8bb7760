"""``bench retrievers``: every available retriever with its parameters, read from the classes.

Names come from the registry (built-ins and installed plugins); parameters, their types and their
defaults from each class's ``__init__``; the summary is the first sentence of its docstring, whole
and wrapped (:mod:`harness.cli.summaries`). Nothing here is typed twice.
"""

from __future__ import annotations

import inspect
import typing

import click

from harness.cli.summaries import first_sentence, wrapped
from retrievers import Retriever, available
from retrievers.registry import broken_plugins


def _type_name(annotation: object) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def describe_parameters(cls: type[Retriever]) -> str:
    """``k1: float = 1.2, b: float = 0.75`` for the ``__init__`` of ``cls`` (``*children`` first for fusions)."""
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # an annotation that does not resolve: show the parameters without types
        hints = {}
    parts = []
    for name, p in cls.parameters().items():
        kind = _type_name(hints.get(name, p.annotation))
        text = f"{name}: {kind}" if kind else name
        if p.default is not inspect.Parameter.empty:
            text += f" = {p.default!r}" if kind else f"={p.default!r}"
        parts.append(text)
    if any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(cls.__init__).parameters.values()):
        parts.insert(0, "*children")
    return ", ".join(parts)


def summary(cls: type[Retriever]) -> str:
    """The first sentence of the class docstring, or an empty string."""
    return first_sentence(inspect.getdoc(cls))


@click.command("retrievers")
def command() -> None:
    """List every available retriever, its parameters and their defaults.

    Use a name with --systems, with parameters as NAME(param=value,...), e.g. bm25(k1=0.9,b=0.4);
    fusions take other retrievers first, e.g. rrf(bm25,dense,k=60). A class of your own needs no
    registration: --systems my_module:MyRetriever. Name a system with NAME=SPEC at the top level,
    e.g. --systems "mine=my_module:MyRetriever,bm25"; the name is its label in every result.

    Fusions look only `depth` deep (10 by default, the article's): rrf fuses each child's top depth
    (so at most depth x children documents), weighted returns its top depth fused documents
    (fused score 0 is not a result) and takes exactly two children (nest it for more). A metric
    that cuts deeper than a fusion's depth gets a warning; raise it, e.g. rrf(bm25,lsa,depth=1000).
    """
    for name, cls in available().items():
        click.echo(f"{name}({describe_parameters(cls)})")
        for line in wrapped(summary(cls)):
            click.echo(line)
        origin = cls.__module__.split(".")[0]
        if origin != "retrievers":
            click.echo(f"    from {cls.__module__}:{cls.__qualname__}")
        reason = cls.unavailable_reason()
        if reason:
            click.echo(f"    not available here: {reason}")
    for name, message in broken_plugins().items():
        click.echo(f"{name}  (broken plugin)")
        click.echo(f"    {message}")
