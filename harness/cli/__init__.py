"""The ``bench`` command line. Each sub-command lives in its own module of this package.

User mistakes (:class:`~harness.errors.RetbenchError`) are printed as one line on stderr without a
traceback, and the process exits 2.
"""

from __future__ import annotations

import sys

import click

from harness.errors import RetbenchError


class _Group(click.Group):
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


def _register_commands() -> None:
    from harness.cli import compare, corpora, evaluate, retrievers

    for module in (compare, corpora, evaluate, retrievers):
        main.add_command(module.command)


_register_commands()

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
