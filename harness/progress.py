"""A one-line progress report on stderr, for work that takes more than a moment.

Nothing is written unless the stream is a terminal (so pipes, CI logs and results files never see
it), ``--quiet`` was not given, and the task has run for ``delay`` seconds. The line is redrawn in
place at most ten times a second by one background thread and erased when the task ends, so the
report that follows starts on a clean line. A task with a known total shows a bar; one without
(a fit that gives no news) shows a spinner and the elapsed time.

    reporter = Reporter()
    with reporter.task("searching bm25", total=len(queries)) as task:
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

_SPINNER = "|/-\\"
_BAR = 24


class Task:
    """One piece of work being reported; :meth:`update` is cheap and thread-safe."""

    def __init__(self, label: str, total: int | None):
        self.label = label
        self.total = total
        self.done = 0
        self.started = time.monotonic()

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total

    def render(self, now: float, tick: int) -> str:
        elapsed = f"{now - self.started:6.1f}s"
        if not self.total:
            return f"{self.label} {_SPINNER[tick % len(_SPINNER)]} {elapsed}"
        fraction = min(1.0, self.done / self.total)
        filled = int(round(fraction * _BAR))
        return (f"{self.label} [{'#' * filled}{'.' * (_BAR - filled)}] {fraction:4.0%} "
                f"{self.done:,}/{self.total:,} {elapsed}")


class Reporter:
    """Shows the running :class:`Task` on ``stream`` (default: stderr) when that is a terminal.

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

    @contextlib.contextmanager
    def task(self, label: str, total: int | None = None) -> Iterator[Task]:
        """Report ``label`` while the block runs; the line is erased when it ends."""
        task = Task(label, total)
        if not self.enabled:
            yield task
            return
        stop = threading.Event()
        painter = threading.Thread(target=self._paint, args=(task, stop), daemon=True)
        painter.start()
        try:
            yield task
        finally:
            stop.set()
            painter.join()
            self._erase()

    def _paint(self, task: Task, stop: threading.Event) -> None:
        tick = 0
        while not stop.wait(self.interval):
            now = time.monotonic()
            if now - task.started >= self.delay:
                self._write(task.render(now, tick))
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


SILENT = Reporter(enabled=False)
