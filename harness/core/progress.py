"""The renderer of the progress channel (:mod:`corpora.progress`): one line on stderr, for work
that takes more than a moment.

Nothing is written unless the stream is a terminal (so pipes, CI logs and results files never see
it), ``--quiet`` was not given, and the task shown has run for ``delay`` seconds. The line shows the
innermost open task (``fitting dense``, then, inside it, ``dense: encoding documents``) and is
redrawn in place at most ten times a second by one background thread, and erased when the last task
ends, so the report that follows starts on a clean line. A task with a known total shows a bar; one
without (a fit that gives no news) shows a spinner and the elapsed time.

    from corpora import progress

    with progress.rendering(Reporter()), progress.task("searching bm25", total=len(queries)) as task:
        for done in ...:
            task.update(done)

No dependency: tqdm would do, but a page of code keeps the install small.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from corpora.progress import Task

__all__ = ["Reporter", "render_line"]

_SPINNER = "|/-\\"
_BAR = 24


def render_line(task: Task, now: float, tick: int) -> str:
    """The line drawn for ``task`` at time ``now`` (``time.monotonic``); ``tick`` turns the spinner."""
    elapsed = f"{now - task.started:6.1f}s"
    if not task.total:
        return f"{task.label} {_SPINNER[tick % len(_SPINNER)]} {elapsed}"
    fraction = min(1.0, task.done / task.total)
    filled = int(round(fraction * _BAR))
    return (f"{task.label} [{'#' * filled}{'.' * (_BAR - filled)}] {fraction:4.0%} "
            f"{task.done:,}/{task.total:,} {elapsed}")


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
