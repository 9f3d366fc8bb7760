"""One writer per file: an operating-system lock that a second writer of the same file finds, and
that dies with the process holding it.

``bench judge`` appends to a judgments file and its undo truncates it; two servers on one file
would interleave their grades and one's undo would cut the other's. :class:`WriterLock` is held on
a small lock file beside the file, named after the file's real path (symbolic links resolved, so
another path to the same file finds the same lock): ``judged.txt.lock``. It holds the holder's pid
and, once known, its address, which a refused second writer names. The file itself is locked too,
once it exists (:meth:`WriterLock.hold_target`): a second writer through another name of it (a hard
link, whose lock file is another), or after its lock file was removed by hand, finds that lock.

The lock is ``flock(2)``'s: the kernel drops it when the process ends, ``kill -9`` included, so a
lock file left behind by a killed server never blocks the next one (it is only read for its
text). A clean :meth:`WriterLock.close` removes the file, while still holding the lock; a writer
that opened the file before it was removed sees, once it holds the lock, that the path names
another file (or none) and opens it again.

Where the operating system has no ``flock`` (Windows), nothing is locked: one server per file is
then the user's care.
"""

from __future__ import annotations

import os
from pathlib import Path

from corpora import RetbenchError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, no lock (see the module docstring)
    fcntl = None  # type: ignore[assignment]

__all__ = ["WriterLock", "lock_path"]

_ATTEMPTS = 20  # opens of a lock file removed under us, before giving up (each needs another writer's exit)


def lock_path(target: Path) -> Path:
    """The lock file of ``target``: beside the file it really is, ``NAME.lock``."""
    real = Path(os.path.realpath(target))
    return real.with_name(real.name + ".lock")


class WriterLock:
    """The lock on ``target``, held from construction until :meth:`close` (or the process's end).

    A lock another process (or another :class:`WriterLock` of this one) holds is a
    :class:`~corpora.RetbenchError` naming ``target``, the holder's pid and address, and ``what``
    the holder is (e.g. ``"bench judge"``).
    """

    def __init__(self, target: Path, what: str) -> None:
        self.target = target
        self.path = lock_path(target)
        self.what = what
        self._descriptor: int | None = None
        self._target_descriptor: int | None = None
        if fcntl is None:  # pragma: no cover - Windows
            return
        for _ in range(_ATTEMPTS):
            descriptor = self._open()
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # held: EWOULDBLOCK (or EACCES on some systems)
                holder = _read_holder(descriptor)
                os.close(descriptor)
                raise RetbenchError(f"{target} is being written by another {what} ({holder}; its lock: {self.path}). "
                                    f"Fix: use that one, or stop it first: two writers of one file would mix their "
                                    "lines") from None
            if self._still_named(descriptor):
                self._descriptor = descriptor
                try:
                    self.hold_target()
                except BaseException:
                    self.close()
                    raise
                _rewrite(descriptor, f"pid {os.getpid()}\n")
                return
            os.close(descriptor)  # its holder removed it as we opened it: open the new one
        raise RetbenchError(f"{target}: cannot take its lock {self.path}: other writers keep replacing it. Fix: stop "
                            "the other writers of this file and try again")

    def _open(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise RetbenchError(f"{self.target}: cannot create its lock file {self.path} ({exc.strerror or exc}). "
                                "Fix: write the file in a folder you can write to") from None

    def _still_named(self, descriptor: int) -> bool:
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            return False
        opened = os.fstat(descriptor)
        return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)

    def hold_target(self) -> None:
        """Lock the file itself too, once it exists (call again after creating it; held: nothing).
        Another writer holding it came through another name (a hard link) or past a lock file that
        was removed by hand: :class:`~corpora.RetbenchError`."""
        if fcntl is None or self._descriptor is None or self._target_descriptor is not None:
            return
        try:
            descriptor = os.open(self.target, os.O_RDONLY)
        except OSError:
            return  # not there yet (or unreadable, which its reader says)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            raise RetbenchError(f"{self.target} is being written by another {self.what} through another name of "
                                "the same file (a hard link), or one whose lock file was removed by hand. Fix: use "
                                "that one, or stop it first: two writers of one file would mix their lines") from None
        self._target_descriptor = descriptor

    def record(self, address: str) -> None:
        """Add the address the holder serves at to the lock file, for a refused writer to name."""
        if self._descriptor is not None:
            _rewrite(self._descriptor, f"pid {os.getpid()}\naddress {address}\n")

    def close(self) -> None:
        """Remove the lock file and let the lock go (again: nothing)."""
        descriptor, self._descriptor = self._descriptor, None
        target, self._target_descriptor = self._target_descriptor, None
        if target is not None:
            os.close(target)
        if descriptor is None:
            return
        try:
            if self._still_named(descriptor):
                os.unlink(self.path)  # while still held: see the module docstring
        except OSError:
            pass  # left behind, it blocks nobody: the lock is the kernel's, not the file's
        finally:
            os.close(descriptor)


def _rewrite(descriptor: int, text: str) -> None:
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, text.encode("utf-8"), 0)


def _read_holder(descriptor: int) -> str:
    """The holder as its lock file describes it: ``pid 123, http://...``."""
    try:
        text = os.pread(descriptor, 4096, 0).decode("utf-8", "replace")
    except OSError:
        text = ""
    fields = dict(line.split(" ", 1) for line in text.splitlines() if " " in line)
    pid = fields.get("pid", "").strip()
    address = fields.get("address", "").strip()
    holder = f"pid {pid}" if pid.isdigit() else "pid unknown"
    return f"{holder}, {address}" if address else holder
