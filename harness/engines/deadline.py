"""A deadline for one step of a retriever (its ``fit``, its ``search``): ``bench compare --timeout``.

A retriever that never returns would hang the run for ever; :func:`step_deadline` ends the step
after ``seconds`` with :class:`StepTimedOut`, naming the retriever and the step, so the run stops
with one line and exit code 2 and writes no results folder.

How the step is interrupted: in the main thread of a POSIX process, by ``SIGALRM``
(``signal.setitimer``), whose handler raises inside the step as soon as the interpreter runs
Python code again (``time.sleep`` and other calls that wait on the system are interrupted too);
the handler and timer that were there before (pytest-timeout's, say) are put back afterwards. In
another thread, or where there is no ``SIGALRM`` (Windows), a watchdog thread raises the same
exception in the step's thread (``PyThreadState_SetAsyncExc``), which only lands when that thread
runs Python code again. Until the step ends it is interrupted again every second, so an
interruption that lands where Python drops it (a ``__del__``, a weakref callback; not reported)
or that the retriever swallows is followed by another. Either way, a step stuck inside compiled code that never returns to
Python cannot be interrupted from inside the process: the deadline then ends it when that code
returns. The exception the step sees derives from ``BaseException``, so a retriever's ``except
Exception`` does not swallow it; a step that swallows it anyway and returns late still fails.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import signal
import sys
import threading
import time
from collections.abc import Iterator

from corpora import RetbenchError

__all__ = ["StepTimedOut", "check_timeout", "step_deadline"]

#: After the deadline, the step is interrupted again this often while it has not ended.
_REPEAT_SECONDS = 1.0


class StepTimedOut(RetbenchError):
    """A retriever's step ran past its deadline.

    >>> str(StepTimedOut("mine", "search", 2.5))
    "retriever 'mine' did not finish search within the timeout of 2.5 s; it was stopped and nothing was written. \
Fix: make the retriever's search return (or raise `timeout` if it needs longer)"
    """

    def __init__(self, owner: str, step: str, seconds: float):
        self.owner = owner
        self.step = step
        self.seconds = seconds
        super().__init__(f"retriever {owner!r} did not finish {step} within the timeout of {seconds:g} s; it was "
                         f"stopped and nothing was written. Fix: make the retriever's {step} return (or raise "
                         "`timeout` if it needs longer)")


class _Deadline(BaseException):
    """Raised inside the step at its deadline (not an ``Exception``: a retriever's handlers let it pass)."""


def check_timeout(timeout: object) -> float | None:
    """``timeout`` as seconds (None: no deadline); anything but a finite number > 0 is an error.

    >>> check_timeout(None), check_timeout(30)
    (None, 30.0)
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise RetbenchError(f"`timeout` must be a number of seconds > 0, or None for no deadline. Got {timeout!r} "
                            "instead. Fix: pass e.g. `timeout=600`")
    return float(timeout)


@contextlib.contextmanager
def step_deadline(seconds: float | None, owner: str, step: str) -> Iterator[None]:
    """Run the ``with`` body (retriever ``owner``'s ``step``) within ``seconds``, else raise
    :class:`StepTimedOut`. None: no deadline, the body runs as it is."""
    if seconds is None:
        yield
        return
    alarm = getattr(signal, "SIGALRM", None)
    in_main = threading.current_thread() is threading.main_thread()
    guard = _alarm_deadline if alarm is not None and hasattr(signal, "setitimer") and in_main else _watchdog_deadline
    fired = [False]
    try:
        with guard(seconds, fired), _quiet_when_ignored():
            yield
    except _Deadline:
        fired[0] = True
    if fired[0]:
        raise StepTimedOut(owner, step, seconds) from None


@contextlib.contextmanager
def _quiet_when_ignored() -> Iterator[None]:
    """No "Exception ignored in ..." on stderr when the interruption lands where Python cannot
    raise it (a ``__del__``, a weakref callback): it is dropped there, and the next one, a second
    later, lands in the step."""
    previous = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, _Deadline):
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


@contextlib.contextmanager
def _alarm_deadline(seconds: float, fired: list[bool]) -> Iterator[None]:
    armed = [True]

    def on_alarm(signum: int, frame: object) -> None:
        if armed[0]:
            fired[0] = True
            raise _Deadline

    started = time.monotonic()
    before, interval = signal.getitimer(signal.ITIMER_REAL)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        try:
            # inside the try: a deadline so short that it fires before setitimer returns still
            # stops the repeating timer and puts the previous handler back
            signal.setitimer(signal.ITIMER_REAL, seconds, _REPEAT_SECONDS)
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:  # also when the alarm fired while the timer was being stopped
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if before > 0:  # someone else's timer: re-armed for what was left of it
            signal.setitimer(signal.ITIMER_REAL, max(before - (time.monotonic() - started), 1e-3), interval)


def _set_async(thread_id: int, exception: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exception) if exception is not None else None)


@contextlib.contextmanager
def _watchdog_deadline(seconds: float, fired: list[bool]) -> Iterator[None]:
    target = threading.get_ident()
    lock = threading.Lock()
    done = threading.Event()

    def watch() -> None:
        if done.wait(seconds):
            return
        while True:
            with lock:
                if done.is_set():
                    return
                fired[0] = True
                _set_async(target, _Deadline)
            if done.wait(_REPEAT_SECONDS):
                return

    watchdog = threading.Thread(target=watch, name="retbench-deadline", daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        with lock:
            done.set()
            if fired[0]:
                _set_async(target, None)  # an interruption not delivered yet must not land after the step
        watchdog.join()
