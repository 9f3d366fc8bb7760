"""The ``bench`` command line. Each sub-command lives in its own module of this package and is
imported only when it runs, so ``bench evaluate`` does not pay for the retrievers' imports.

User mistakes (:class:`~harness.errors.RetbenchError`) are printed as one line on stderr without a
traceback, and the process exits 2.
"""

from __future__ import annotations

import sys
from importlib import import_module

import click

from harness.errors import RetbenchError

#: sub-command name -> module of this package that defines it as ``command``
COMMANDS = {"compare": "compare", "corpora": "corpora", "evaluate": "evaluate", "retrievers": "retrievers"}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return import_module(f"harness.cli.{COMMANDS[name]}").command

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except RetbenchError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="retbench")
def main() -> None:
    """retbench: benchmark retrievers on their own, with IR metrics, paired statistics and diagnosis."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
