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
* stdout that cannot be written (closed before the run, ``>&-``; a full device, ``> /dev/full``):
  one ``error: ...`` line on stderr, exit 2, whatever the command (``--help`` too). Every write to
  stdout goes through :class:`CheckedStdout`, and stdout is flushed before the command returns, so
  a failure is never silent. ``bench compare`` and ``bench tune`` (:class:`ResultsFirstStdout`) go
  on to write their results folder and name it in that line;
* out of memory: one ``error: out of memory ...`` line, exit 1.
"""

from __future__ import annotations

import contextlib
import errno
import io
import logging
import os
import sys
import traceback
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness.cli.summaries import SummaryGroup
from harness.errors import RetbenchError

if TYPE_CHECKING:
    from corpora.progress import Reporter

#: sub-command name -> module of this package that defines it as ``command``
COMMANDS = {"agree": "agree", "compare": "compare", "corpora": "corpora", "evaluate": "evaluate", "gate": "gate",
            "judge": "judge", "pool": "pool", "report": "report", "retrievers": "retrievers", "serve": "serve",
            "tune": "tune"}

#: Exit status after Ctrl-C: 128 + SIGINT, as a shell reports a process that SIGINT ended.
EXIT_INTERRUPTED = 130
#: Exit status when stdout's reader went away: 128 + SIGPIPE, as for any Unix tool killed by it.
EXIT_BROKEN_PIPE = 141
#: ``ctx.meta`` key under which a command records the results folder it wrote (None: not yet).
RESULTS_KEY = "retbench.results_folder"
#: The help of every reader's ``--accept-edited`` (:func:`harness.store.read.open_results`).
ACCEPT_EDITED_HELP = ("Read a file of a results folder that was edited or truncated since retbench wrote it (its "
                      "SHA-256 differs from the one the manifest records) as it is, with a warning, instead of "
                      "refusing it (exit 2).")


def warn(message: str) -> None:
    """A command's warning: one ``warning: ...`` line on stderr."""
    click.echo(f"warning: {message}", err=True)


class StdoutError(RetbenchError):
    """stdout cannot be written: closed before the run, or its device failed (full, gone)."""

    def __init__(self, problem: str):
        self.problem = problem
        self.fix = "send stdout somewhere it can be written (a file with space, a pipe, the terminal)"
        super().__init__(f"{problem}. Fix: {self.fix}")


class CheckedStdout:
    """``sys.stdout`` for a ``bench`` command: writes go to ``stream``; when they cannot (``stream``
    is None because stdout was closed before the run, or the device fails), :class:`StdoutError`
    is raised instead of the write being lost silently (click writes nothing to a None stdout) or
    a traceback. A reader that closed the pipe is a :class:`BrokenPipeError` still, handled apart
    (exit 141). Everything else is the stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _failed(self, exc: BaseException | None) -> StdoutError:
        if exc is None or isinstance(exc, ValueError) or getattr(exc, "errno", None) == errno.EBADF:
            return StdoutError("stdout is closed, so the output cannot be written")
        return StdoutError(f"writing to stdout failed ({getattr(exc, 'strerror', None) or exc})")

    def _closed_under_us(self, exc: BaseException) -> bool:
        """A ValueError is a write to a closed stream only when the stream says it is closed (a
        UnicodeEncodeError, say, is not)."""
        return not isinstance(exc, ValueError) or bool(getattr(self._stream, "closed", False))

    def write(self, text: str) -> int:
        if self._stream is None:
            raise self._failed(None)
        return self._guarded(self._stream.write, text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._stream is None:
            return  # nothing was written: a write would have raised
        self._guarded(self._stream.flush)

    def _guarded(self, call: Any, *args: Any) -> Any:
        """``call(*args)`` on the stream; a stdout that is closed or full becomes one error (a reader
        closing the pipe stays a BrokenPipeError, for the group's exit 141)."""
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            if not self._closed_under_us(exc):
                raise
            raise self._failed(exc) from exc

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def fileno(self) -> int:
        if self._stream is None:
            raise io.UnsupportedOperation("stdout is closed")
        return self._stream.fileno()

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def _occupy_closed_stdout() -> None:
    """When file descriptor 1 was closed before the run, put the null device there, so that no file
    the command opens (a results file) gets descriptor 1, where anything written to stdout outside
    Python's ``sys.stdout`` would land."""
    try:
        os.fstat(1)
        return
    except OSError:
        pass
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        if null != 1:
            os.dup2(null, 1)
            os.close(null)
    except OSError:
        pass


class ResultsFirstStdout:
    """Prints a command's output while it works towards a results folder: once stdout fails (its
    reader closed the pipe, ``| head``; or it cannot be written, :class:`StdoutError`), it prints
    nothing more, so the command goes on to write its results folder; :meth:`finish` then says how
    the printing ended."""

    def __init__(self) -> None:
        self.closed = False
        self.failure: StdoutError | None = None

    def echo(self, text: str = "") -> None:
        if self.closed:
            return
        try:
            click.echo(text)
        except BrokenPipeError:
            self.closed = True
            quiet_stdout()
        except StdoutError as exc:
            self.closed = True
            self.failure = exc
            quiet_stdout()

    def finish(self, ctx: click.Context, folder: Path) -> None:
        """Once the results folder is written (and in ``ctx.meta[RESULTS_KEY]``): a failed stdout is
        an error naming the folder (exit 2); a reader that left early gets the folder on stderr and
        exit 141."""
        if self.failure is not None:
            raise self.failure
        if self.closed:  # the reader left early: the results line goes where it will be seen
            click.echo(f"results: {folder}", err=True)
            ctx.exit(EXIT_BROKEN_PIPE)


class PathParameter(click.Path):
    """``click.Path`` that refuses an empty (or blank) value with one ``error:`` line.

    ``Path("")`` is ``Path(".")``, so ``--out ''`` (an unset shell variable, a blank key of an
    experiment file) would silently mean the current folder; every path option of the commands
    uses this type so that none does.
    """

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> object:
        if isinstance(value, str) and not value.strip():
            name = next((o for o in getattr(param, "opts", ()) if o.startswith("--")), None) if param else None
            name = name or (param.human_readable_name if param is not None else "the path")
            fix = "name the file" if not self.dir_okay else "give a path, '.' for the current folder"
            raise RetbenchError(f"{name} is empty ({value!r}), which would mean the current folder. Fix: {fix}")
        return super().convert(value, param, ctx)


class OutputPath(PathParameter):
    """A file a command writes (``--out``, ``--output``, ``--junit``): only the empty value is refused
    here; every other check is the writer's (:func:`corpora.output_files.check_output`, called
    before any work), so that a folder, a device or a FIFO is one ``error:`` line, as everything
    else about where an output lands, not click's usage error."""

    def __init__(self) -> None:
        super().__init__(path_type=Path, dir_okay=False)

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> object:
        if isinstance(value, str) and not value.strip():
            super().convert(value, param, ctx)  # the empty value's error
        return value if isinstance(value, Path) else Path(str(value))


@contextlib.contextmanager
def progress_shown(quiet: bool) -> Iterator[Reporter]:
    """The progress renderer of a command's work: a line on stderr when it is a terminal, nothing
    under ``--quiet``. ``--quiet`` also mutes other libraries' informational logs for as long:
    ir_datasets logs each file it opens at INFO through its own stderr handler, which ignores the
    root logger's level. Warnings and errors still show.
    """
    from corpora.progress import Reporter  # the renderer only where a command shows progress

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

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Every command's run, with stdout checked (:class:`CheckedStdout`) and flushed at the end:
        a stdout that cannot be written is one error line, exit 2, even for ``--help``."""
        original = sys.stdout
        if original is None:
            _occupy_closed_stdout()
        sys.stdout = CheckedStdout(original)
        try:
            try:
                return super().main(*args, **kwargs)
            finally:
                sys.stdout.flush()  # output a command left in the buffer fails here, not silently at exit
        except StdoutError as exc:  # outside a command (--help, --version) or at the last flush
            quiet_stdout()
            if not kwargs.get("standalone_mode", True):
                raise
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
        finally:
            sys.stdout = original

    def invoke(self, ctx: click.Context):
        debug = bool(ctx.params.get("debug"))
        try:
            try:
                result = super().invoke(ctx)
            except click.exceptions.Exit:
                sys.stdout.flush()
                raise
            sys.stdout.flush()  # inside the command's handling: its results folder is named
            return result
        except StdoutError as exc:
            quiet_stdout()
            click.echo(f"error: {exc.problem}{_results_note(ctx, 'the results are in')}. Fix: {exc.fix}", err=True)
            ctx.exit(exc.exit_code)
        except RetbenchError as exc:
            if debug:
                traceback.print_exception(exc, file=sys.stderr)
            # the library names its parameters; the terminal gets the command's flags
            from harness.cli.declared import as_flags, flags_of

            name = ctx.invoked_subcommand
            flags = flags_of(self.get_command(ctx, name) if name else None)
            click.echo(f"error: {as_flags(str(exc), flags)}{_debug_hint(ctx, exc)}", err=True)
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


def _results_note(ctx: click.Context, results: str = "results:") -> str:
    """What an interrupted ``bench compare`` or ``bench tune`` left: its results folder, or nothing."""
    if RESULTS_KEY not in ctx.meta:
        return ""
    folder = ctx.meta[RESULTS_KEY]
    return "; no results folder was written" if folder is None else f"; {results} {folder}"


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
