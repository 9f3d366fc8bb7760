"""The progress channel: work says how far it got, whoever runs it decides whether to show it.

It lives in ``corpora``, the lowest layer, so loaders and retrievers can report without importing
``harness``. The channel is a :class:`Progress` object, handed to the work by whoever runs it (a
retriever finds it in its run context, ``self.run_context.progress``; a loader takes it as an
argument). Work opens a task for the block it spends time in and updates it::

    with tasks.task("encoding documents", total=len(texts)) as task:
        for start in range(0, len(texts), chunk):
            ...
            task.update(start + chunk)

A kernel that takes a ``progress(done, total)`` callback gets the innermost open task's
:meth:`Task.update` from :meth:`Progress.callback` (None when no task is open or nobody is shown
anything, so it can skip the work).

Nothing is shown by default (``Progress()``). The caller chooses a renderer when it makes the
channel: :class:`Reporter` (``harness.Reporter``) draws one line on a terminal (``bench compare`` passes it unless
``--quiet``), and a plain function ``(label, done, total)`` hears every update (a notebook's own
bar, a log, a test).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol, TextIO

from corpora.errors import RetbenchError

__all__ = ["Callback", "Progress", "Renderer", "Reporter", "Task", "as_progress", "render_line"]

#: A plain function that hears ``(label, done, total)`` when a task starts (done 0) and at every update.
Callback = Callable[[str, int, "int | None"], None]


class Task:
    """One piece of work being reported: its label, how much is done of how much (``total`` None:
    unknown), and when it started. :meth:`update` is cheap and may be called from any thread."""

    def __init__(self, label: str, total: int | None = None, on_update: Callable[[Task], None] | None = None):
        self.label = label
        self.total = total
        self.done = 0
        self.started = time.monotonic()
        self._on_update = on_update

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` units of work are finished (of ``total``, when it is known only now)."""
        self.done = done
        if total is not None:
            self.total = total
        if self._on_update is not None:
            self._on_update(self)


class Renderer(Protocol):
    """What shows tasks: a context manager per task that yields the :class:`Task` the work updates."""

    def task(self, label: str, total: int | None = None) -> contextlib.AbstractContextManager[Task]: ...


class _Silent:
    """The default renderer: tasks are counted by nobody."""

    @contextlib.contextmanager
    def task(self, label: str, total: int | None = None) -> Iterator[Task]:
        yield Task(label, total)


class _Calls:
    """A :data:`Callback` as a renderer: called when a task starts and at each of its updates."""

    def __init__(self, function: Callback):
        self.function = function

    @contextlib.contextmanager
    def task(self, label: str, total: int | None = None) -> Iterator[Task]:
        self.function(label, 0, total)
        yield Task(label, total, lambda task: self.function(task.label, task.done, task.total))


_SILENT = _Silent()


def _as_renderer(shown_by: Renderer | Callback | None) -> Renderer:
    if shown_by is None:
        return _SILENT
    if callable(getattr(shown_by, "task", None)):
        return shown_by  # type: ignore[return-value]
    if callable(shown_by):
        return _Calls(shown_by)  # type: ignore[arg-type]
    raise RetbenchError(f"progress must be a renderer, a function (label, done, total) or None, not "
                        f"{type(shown_by).__name__} {shown_by!r}. Fix: pass a renderer such as harness.Reporter(), "
                        "a function, or None for silence")


class Progress:
    """The progress channel of one run: the renderer that shows its tasks, and the tasks open now.

    Whoever runs the work makes one and hands it to the work (the harness hands it to a retriever in
    its :class:`~retrievers.context.RunContext`); nothing is held anywhere else, so two comparisons
    in one process never share one. ``Progress()`` is silent.
    """

    def __init__(self, shown_by: Renderer | Callback | None = None):
        self.renderer = _as_renderer(shown_by)
        self._open: list[Task] = []  # innermost last

    @property
    def silent(self) -> bool:
        """Whether nobody is shown anything (the tasks are still opened, cheaply)."""
        return self.renderer is _SILENT

    @contextlib.contextmanager
    def task(self, label: str, total: int | None = None) -> Iterator[Task]:
        """Report the block as ``label`` (``total`` units of work, None when unknown); inside it, the
        task is the one :meth:`callback` hands out."""
        with self.renderer.task(label, total) as opened:
            if self.silent:  # nobody hears it: a kernel may skip reporting (callback() stays None)
                yield opened
                return
            self._open.append(opened)
            try:
                yield opened
            finally:
                self._open.remove(opened)

    def callback(self) -> Callable[[int, int], None] | None:
        """The innermost open task's ``update(done, total)``, for a kernel that takes a progress
        callback; None when no task is open (or nobody is shown anything), so it can skip the work."""
        return self._open[-1].update if self._open else None


def as_progress(shown_by: Progress | Renderer | Callback | None) -> Progress:
    """``shown_by`` as a :class:`Progress`: itself, or a new channel shown by it (None: silent)."""
    return shown_by if isinstance(shown_by, Progress) else Progress(shown_by)


# ----- the terminal renderer -----------------------------------------------------------------
# :class:`Reporter` draws one line on stderr, for work that takes more than a moment. Nothing is
# written unless the stream is a terminal (so pipes, CI logs and results files never see it),
# ``--quiet`` was not given, and the task shown has run for ``delay`` seconds. The line shows the
# innermost open task (``fitting dense``, then, inside it, ``dense: encoding documents``) and is
# redrawn in place at most ten times a second by one background thread, and erased when the last
# task ends, so the report that follows starts on a clean line. A task with a known total shows a
# bar, the rate so far (units a second: documents while a BM25 index is built, queries while they are
# searched) and the time left at that rate; one without (a fit that gives no news) shows a spinner and
# the elapsed time. No dependency:
# tqdm would do, but a page of code keeps the install small.

_SPINNER = "|/-\\"
_BAR = 24


def render_line(task: Task, now: float, tick: int) -> str:
    """The line drawn for ``task`` at time ``now`` (``time.monotonic``); ``tick`` turns the spinner."""
    elapsed = f"{now - task.started:6.1f}s"
    if not task.total:
        return f"{task.label} {_SPINNER[tick % len(_SPINNER)]} {elapsed}"
    fraction = min(1.0, task.done / task.total)
    filled = int(round(fraction * _BAR))
    line = (f"{task.label} [{'#' * filled}{'.' * (_BAR - filled)}] {fraction:4.0%} "
            f"{task.done:,}/{task.total:,} {elapsed}")
    seconds = now - task.started
    if 0 < task.done < task.total and seconds > 0:  # the rate so far, and the time left at that rate
        rate = task.done / seconds
        left = int(round((task.total - task.done) / rate))
        line += f" {rate:,.0f}/s ETA {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"
    return line


class Reporter:
    """Shows the innermost open task on ``stream`` (default: stderr) when that is a terminal.

    ``enabled=False`` (``--quiet``) silences it; ``enabled=True`` forces it (tests).
    """

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None, delay: float = 0.5,
                 interval: float = 0.1):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self.delay = delay
        self.interval = interval
        self._lock = threading.Lock()
        self._width = 0
        self._open: list[Task] = []  # innermost last
        self._stop: threading.Event | None = None
        self._painter: threading.Thread | None = None

    @contextlib.contextmanager
    def task(self, label: str, total: int | None = None) -> Iterator[Task]:
        """Report ``label`` while the block runs; the line is erased when the last open task ends."""
        task = Task(label, total)
        if not self.enabled:
            yield task
            return
        with self._lock:
            self._open.append(task)
            if self._painter is None:
                self._stop = threading.Event()
                self._painter = threading.Thread(target=self._paint, args=(self._stop,), daemon=True)
                self._painter.start()
        try:
            yield task
        finally:
            with self._lock:
                self._open.remove(task)
                last = not self._open
                painter, stop = (self._painter, self._stop) if last else (None, None)
                if last:
                    self._painter = self._stop = None
            if painter is not None and stop is not None:
                stop.set()
                painter.join()
                self._erase()

    def _paint(self, stop: threading.Event) -> None:
        tick = 0
        while not stop.wait(self.interval):
            with self._lock:
                task = self._open[-1] if self._open else None
            now = time.monotonic()
            if task is not None and now - task.started >= self.delay:
                self._write(render_line(task, now, tick))
                tick += 1

    def _write(self, line: str) -> None:
        with self._lock:
            padding = " " * max(0, self._width - len(line))
            self.stream.write("\r" + line + padding)
            self.stream.flush()
            self._width = len(line)

    def _erase(self) -> None:
        with self._lock:
            if self._width:
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
                self._width = 0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


@contextlib.contextmanager
def task(label: str, total: int | None = None) -> Iterator[Task]:
    """Kept for retrievers written before the run context, which opened ``corpora.progress.task``:
    their work runs and updates a task that nobody shows. Report to ``self.run_context.progress``
    (a :class:`Progress`) instead."""
    yield Task(label, total)


def callback() -> Callable[[int, int], None] | None:
    """Kept for retrievers written before the run context: None (nobody listens). Use
    ``self.run_context.progress.callback()`` instead."""
    return None
