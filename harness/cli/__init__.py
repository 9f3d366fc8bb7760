"""The ``bench`` command line. Each sub-command lives in its own module of this package and is
imported only when it runs, so ``bench evaluate`` does not pay for the retrievers' imports.

How a run ends, whatever the command:

* a user mistake (:class:`~harness.errors.RetbenchError`, including an exception raised inside a
  retriever's ``fit``/``search``/``score``, which the seam names): one ``error: ...`` line on stderr,
  exit 2. ``bench --debug ...`` prints the traceback first (of the original exception too);
* Ctrl-C: one ``interrupted ...`` line on stderr, exit 130 (128 + SIGINT, as a shell reports it);
* stdout closed by its reader (``bench compare | head -3``): no more output and no message on
  stdout, exit 141 (128 + SIGPIPE, what any Unix tool reports there); ``bench compare`` still writes
  its results folder and names it on stderr;
* out of memory: one ``error: out of memory ...`` line, exit 1.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import traceback
from collections.abc import Iterator
from importlib import import_module
from typing import TYPE_CHECKING

import click

from harness.cli.summaries import SummaryGroup
from harness.errors import RetbenchError

if TYPE_CHECKING:
    from harness.progress import Reporter

#: sub-command name -> module of this package that defines it as ``command``
COMMANDS = {"compare": "compare", "corpora": "corpora", "evaluate": "evaluate", "gate": "gate", "report": "report",
            "retrievers": "retrievers", "serve": "serve", "tune": "tune"}

#: Exit status after Ctrl-C: 128 + SIGINT, as a shell reports a process that SIGINT ended.
EXIT_INTERRUPTED = 130
#: Exit status when stdout's reader went away: 128 + SIGPIPE, as for any Unix tool killed by it.
EXIT_BROKEN_PIPE = 141
#: ``ctx.meta`` key under which a command records the results folder it wrote (None: not yet).
RESULTS_KEY = "retbench.results_folder"


@contextlib.contextmanager
def progress_shown(quiet: bool) -> Iterator[Reporter]:
    """The progress renderer of a command's work: a line on stderr when it is a terminal, nothing
    under ``--quiet``. ``--quiet`` also mutes other libraries' informational logs for as long:
    ir_datasets logs each file it opens at INFO through its own stderr handler, which ignores the
    root logger's level. Warnings and errors still show.
    """
    from harness.progress import Reporter  # the renderer only where a command shows progress

    if not quiet:
        yield Reporter()
        return
    previous = logging.root.manager.disable
    logging.disable(logging.INFO)
    try:
        yield Reporter(enabled=False)
    finally:
        logging.disable(previous)


def quiet_stdout() -> None:
    """Point stdout at the null device after its reader closed the pipe.

    Python's advice for SIGPIPE: without it, the text still buffered for stdout fails again when
    the interpreter flushes at exit and prints ``Exception ignored ... BrokenPipeError``.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (a test runner)
        pass


def _debug_hint(ctx: click.Context, exc: BaseException) -> str:
    """A pointer to ``--debug`` when the error wraps an exception whose traceback says more."""
    if exc.__cause__ is None or ctx.params.get("debug"):
        return ""
    command = ctx.invoked_subcommand or "..."
    return f" (rerun as `bench --debug {command} ...` for the traceback)"


class _Group(SummaryGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return import_module(f"harness.cli.{COMMANDS[name]}").command

    def invoke(self, ctx: click.Context):
        debug = bool(ctx.params.get("debug"))
        try:
            return super().invoke(ctx)
        except RetbenchError as exc:
            if debug:
                traceback.print_exception(exc, file=sys.stderr)
            click.echo(f"error: {exc}{_debug_hint(ctx, exc)}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            if debug:
                traceback.print_exc(file=sys.stderr)
            click.echo(f"interrupted (Ctrl-C){_results_note(ctx)}", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            quiet_stdout()
            ctx.exit(EXIT_BROKEN_PIPE)
        except MemoryError as exc:
            if debug:
                traceback.print_exc(file=sys.stderr)
            detail = f": {exc}" if str(exc) else ""
            click.echo(f"error: out of memory ({type(exc).__name__}{detail}){_results_note(ctx)}. Fix: a smaller "
                       "corpus or --depth, fewer systems per run, or a machine with more memory", err=True)
            ctx.exit(1)


def _results_note(ctx: click.Context) -> str:
    """What an interrupted ``bench compare`` left: its results folder, or nothing."""
    if RESULTS_KEY not in ctx.meta:
        return ""
    folder = ctx.meta[RESULTS_KEY]
    return "; no results folder was written" if folder is None else f"; results: {folder}"


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True,
              help="On an error, print the traceback (of the retriever's own exception too) before the message.")
@click.version_option(package_name="retbench")
def main(debug: bool) -> None:
    """retbench: benchmark retrievers on their own, with IR metrics, paired statistics and diagnosis.

    Errors are one line and exit 2 (--debug adds the traceback); Ctrl-C exits 130.
    """


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
