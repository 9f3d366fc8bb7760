"""The one progress channel: work says how far it got, whoever runs it decides whether to show it.

It lives in ``corpora``, the lowest layer, so loaders and retrievers can report without importing
``harness``. Work opens a task for the block it spends time in and updates it::

    from corpora import progress

    with progress.task("encoding documents", total=len(texts)) as task:
        for start in range(0, len(texts), chunk):
            ...
            task.update(start + chunk)

A kernel that takes a ``progress(done, total)`` callback gets the innermost open task's
:meth:`Task.update` from :func:`callback` (None when no task is open, so it can skip the work).

Nothing is shown by default. The caller chooses a renderer for a block with :func:`rendering`:
``harness.core.progress.Reporter`` draws one line on a terminal (``bench compare`` installs it unless
``--quiet``), and a plain function ``(label, done, total)`` hears every update (a notebook's own
bar, a log, a test). The choice is held in a ``ContextVar``: it holds for the code that runs
inside the block and ends with it, so two comparisons in one process never share a renderer.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Protocol

from corpora.errors import RetbenchError

__all__ = ["Callback", "Renderer", "Task", "callback", "rendering", "task"]

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
_RENDERER: ContextVar[Renderer] = ContextVar("retbench_progress_renderer", default=_SILENT)
_CURRENT: ContextVar[Task | None] = ContextVar("retbench_progress_task", default=None)


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


@contextlib.contextmanager
def rendering(shown_by: Renderer | Callback | None) -> Iterator[Renderer]:
    """Inside the block, tasks are shown by ``shown_by``: a :class:`Renderer`, a :data:`Callback`,
    or None (silent)."""
    token = _RENDERER.set(_as_renderer(shown_by))
    try:
        yield _RENDERER.get()
    finally:
        _RENDERER.reset(token)


@contextlib.contextmanager
def task(label: str, total: int | None = None) -> Iterator[Task]:
    """Report the block as ``label`` (``total`` units of work, None when unknown) to the renderer
    of the context; inside it, the task is the one :func:`callback` hands out."""
    with _RENDERER.get().task(label, total) as opened:
        token = _CURRENT.set(opened)
        try:
            yield opened
        finally:
            _CURRENT.reset(token)


def callback() -> Callable[[int, int], None] | None:
    """The innermost open task's ``update(done, total)``, for a kernel that takes a progress
    callback; None when no task is open."""
    current = _CURRENT.get()
    return current.update if current is not None else None
