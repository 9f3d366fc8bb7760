"""``bench corpora``: list the bundled corpora."""

from __future__ import annotations

import click

from corpora import DEFAULT_CORPUS, bundled_names
from corpora.bundled import bundled_description


@click.group("corpora", invoke_without_command=True)
@click.pass_context
def command(ctx: click.Context) -> None:
    """List the bundled corpora (usable by name with --corpus)."""
    if ctx.invoked_subcommand is None:
        for name in bundled_names():
            default = " (default)" if name == DEFAULT_CORPUS else ""
            click.echo(f"{name}{default}  {bundled_description(name)}")
