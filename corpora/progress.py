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
channel: ``harness.Reporter`` draws one line on a terminal (``bench compare`` passes it unless
``--quiet``), and a plain function ``(label, done, total)`` hears every update (a notebook's own
bar, a log, a test).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from corpora.errors import RetbenchError

__all__ = ["Callback", "Progress", "Renderer", "Task", "as_progress"]

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
