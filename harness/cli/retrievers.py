"""``bench retrievers``: every available retriever with its parameters, read from the classes."""

from __future__ import annotations

import inspect

import click

from retrievers import available


def describe_parameters(cls) -> str:
    parts = []
    for name, p in cls.parameters().items():
        parts.append(name if p.default is inspect.Parameter.empty else f"{name}={p.default!r}")
    if any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(cls.__init__).parameters.values()):
        parts.insert(0, "*children")
    return ", ".join(parts)


@click.command("retrievers")
def command() -> None:
    """List every available retriever, its parameters and their defaults."""
    for name, cls in available().items():
        summary = (inspect.getdoc(cls) or "").splitlines()[0] if inspect.getdoc(cls) else ""
        click.echo(f"{name}({describe_parameters(cls)})")
        if summary:
            click.echo(f"    {summary}")
