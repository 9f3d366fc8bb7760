"""Where an output lands: the one writer of every single-file output, and its checks.

Every file a command or the library writes whole (a pool, a report, a JUnit file, a run or qrels
file) goes through :func:`write_output`; :func:`check_output` runs the same checks before any work
(and alone for a file that is appended to, ``bench judge``'s judgments). The rules, each a
:class:`~corpora.RetbenchError` (one ``error:`` line, exit 2) naming the path, what it is and the fix:

* a regular file is replaced atomically: the text goes to a temporary file beside it, fsynced (a
  full disk shows here), then renamed over it, so a reader never sees half a file and a failure
  leaves the old file as it was. A replaced file keeps its mode; a new one gets the umask's
  (``0666 & ~umask``, as any tool's output);
* a symbolic link is followed: the file it points to is written (the temporary file beside that
  target, renamed over it; the link is kept), and every other rule applies to the target. A
  dangling link or a loop of links is refused: which file the user means is not clear;
* anything else that is not a regular file is never replaced: a folder, a FIFO, a socket, a
  device, and ``/dev/null`` (it would discard the output, which is the point of the command);
* a stream the user means is written through, never renamed over: ``-`` (stdout, where the
  option accepts it: ``dash=True``), ``/dev/stdout``, ``/dev/stderr`` and ``/dev/fd/N``
  (``streams=True``);
* an input of the same command is never an output: ``inputs`` names the files the command reads
  (``bench gate``'s run files and qrels, ``bench judge``'s pool), and a path that is one of them (by
  its name, a symbolic link or a hard link: the same file) is refused before anything is read, so
  ``--junit CANDIDATE.trec`` cannot replace the run it gates;
* nothing is written inside a results folder (:func:`results_folder_holding`: a folder whose
  :data:`MANIFEST_FILE` is a retbench manifest, or a run's staging folder): replacing one of its
  files breaks it (every reader refuses a file whose hash the manifest does not record), and a new
  file is such an unrecorded file, refused by the reader that asks for it;
* a missing folder, a folder that cannot be written to, a full disk: one error, nothing written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from corpora.errors import RetbenchError

__all__ = ["MANIFEST_FILE", "OutputTarget", "check_output", "is_staging_name", "results_folder_holding",
           "write_output"]

#: The manifest of a results folder (:mod:`harness.store.folder` writes it): a folder holding one
#: that names a ``run_id`` is a results folder, which no single-file output may write into.
MANIFEST_FILE = "manifest.json"
#: The name of a run's staging folder, ``.staging-<host>-<pid>-…``: a results folder being written.
STAGING_NAME = re.compile(r"^\.staging-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-")
#: How much of a ``manifest.json`` is read to tell a retbench manifest (its ``run_id`` comes first).
_MANIFEST_HEAD = 1 << 16
_RUN_ID_KEY = b'"run_id"'
#: Names of the streams a user means by a path (``/dev/fd/N`` and ``/proc/self/fd/N`` too).
_STREAM_NAMES = {"/dev/stdout": 1, "/dev/stderr": 2, "/dev/stdin": 0}
_FD_PATH = re.compile(r"^/(?:dev|proc/self)/fd/(\d+)$")


@dataclass(frozen=True)
class OutputTarget:
    """Where :func:`write_output` writes ``path``: the regular file ``file`` (the link's target for a
    symbolic link; it may not exist yet), or the open file descriptor ``stream``."""

    path: Path
    file: Path | None = None
    stream: int | None = None


def is_staging_name(name: str) -> bool:
    """Whether ``name`` is a staging folder's (``.staging-<host>-<pid>-…``)."""
    return STAGING_NAME.match(name) is not None


def _is_results_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a retbench manifest: a regular ``manifest.json`` that names a
    ``run_id`` near its start (a web app's manifest.json does not; a cut one still does)."""
    manifest = folder / MANIFEST_FILE
    try:
        if not stat.S_ISREG(manifest.stat().st_mode):
            return False
        with open(manifest, "rb") as handle:
            return _RUN_ID_KEY in handle.read(_MANIFEST_HEAD)
    except OSError:
        return False


def results_folder_holding(path: str | os.PathLike[str]) -> Path | None:
    """The outermost results folder (or staging folder) that is ``path`` or holds it, after
    symbolic links are resolved; None when there is none. A suite's collection folders lie inside
    the suite's folder, so the outermost is the one to step out of."""
    found = None
    real = Path(os.path.realpath(path))
    for folder in (real, *real.parents):
        if is_staging_name(folder.name) or _is_results_folder(folder):
            found = folder
    return found


def _stream_of(path: Path, dash: bool) -> int | None:
    """The file descriptor a path names as a stream (``-`` where ``dash``), or None."""
    text = str(path)
    if text == "-" and dash:
        return 1
    if text in _STREAM_NAMES:
        return _STREAM_NAMES[text]
    match = _FD_PATH.match(text)
    return int(match[1]) if match else None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def check_output(path: str | os.PathLike[str], option: str, *, dash: bool = False, streams: bool = True,
                 appends: bool = False,
                 inputs: Mapping[str, str | os.PathLike[str] | None] | None = None) -> OutputTarget:
    """Prove, before any work and without writing anything, that ``path`` can take the output
    (the rules of the module docstring), and say where it lands.

    ``option`` names the output in a message (``--out``, ``the run file``); ``dash``: ``-`` means
    stdout; ``streams``: ``/dev/stdout``, ``/dev/stderr`` and ``/dev/fd/N`` are written through;
    ``appends``: the file is appended to and read back (no stream then, and an existing file is
    kept as it is); ``inputs``: what each input file of the command is (``"the candidate run"``)
    -> its path (None: not given), none of which the output may be.
    """
    path = Path(path)
    name = f"{option} {path}"
    fix_file = "name a regular file" + (", or - for stdout" if dash else "")
    if str(path) == "-" and not dash:
        where = "a stream, which cannot be read back" if appends else "stdout, which this option does not write"
        raise RetbenchError(f"{name}: - would mean {where}. Fix: name a file (./- for a file called -)")
    fd = _stream_of(path, dash)
    if fd is not None:
        return _check_stream(path, name, fd, streams and not appends, appends)
    try:
        link = path.is_symlink()
        target = Path(os.path.realpath(path, strict=True)) if link else path
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RetbenchError(f"{name}: is a loop of symbolic links. Fix: {fix_file}") from None
        if isinstance(exc, FileNotFoundError):
            raise RetbenchError(f"{name}: is a symbolic link to {os.readlink(path)}, which does not exist (a dangling "
                                f"link is not written through). Fix: create the file it points to, or {fix_file}") \
                from None
        raise RetbenchError(f"{name}: cannot be examined ({exc.strerror or exc}). Fix: {fix_file}") from None
    shown = f"{name}{f' (a link to {target})' if link else ''}"
    try:
        mode: int | None = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise RetbenchError(f"{shown}: cannot be examined ({exc.strerror or exc}). Fix: {fix_file}") from None
    if mode is not None and not stat.S_ISREG(mode):
        if os.path.realpath(target) == os.devnull:
            raise RetbenchError(f"{shown}: is the null device, which would discard the output. Fix: {fix_file}")
        kind = _kind(mode)
        fix = f"name a file in it, e.g. {target / 'FILE'}" if stat.S_ISDIR(mode) else fix_file
        raise RetbenchError(f"{shown}: is {kind}, which is never replaced by a file. Fix: {fix}")
    if mode is not None:
        _refuse_an_input(target, shown, inputs or {})
    folder = target.parent
    holder = results_folder_holding(folder) if folder.is_dir() else None
    if holder is not None:
        what = "a run's staging folder" if is_staging_name(holder.name) else "the results folder"
        raise RetbenchError(f"{shown}: lies inside {what} {holder}, which holds only the files its {MANIFEST_FILE} "
                            "records (its readers refuse any other, and a replaced one loses the results). Fix: name a "
                            f"file outside it, e.g. {holder.parent / path.name}")
    if not folder.is_dir():
        problem = f"its folder {folder} does not exist" if not folder.exists() else f"{folder} is not a folder"
        raise RetbenchError(f"{shown}: {problem}. Fix: create the folder, or name a file in an existing one")
    if appends and mode is not None:
        if not os.access(target, os.R_OK | os.W_OK):
            raise RetbenchError(f"{shown}: cannot be read and appended to. Fix: {fix_file} you can write to")
    elif not _can_create_in(folder):
        raise RetbenchError(f"{shown}: its folder {folder} cannot be written to. Fix: name a file in a folder you "
                            "can write to")
    return OutputTarget(path, file=target)


def _refuse_an_input(target: Path, shown: str, inputs: Mapping[str, str | os.PathLike[str] | None]) -> None:
    """Refuse an output that is one of the command's input files (the same file: same device and
    inode, whatever path, link or hard link names it): writing it would destroy what is read."""
    mine = target.stat()
    for what, given in inputs.items():
        if given is None:
            continue
        try:
            theirs = os.stat(given)
        except (OSError, ValueError):
            continue  # a missing input is its reader's error
        if (theirs.st_dev, theirs.st_ino) == (mine.st_dev, mine.st_ino):
            raise RetbenchError(f"{shown}: is {what} {given}, which this command reads; writing it would destroy "
                                "it. Fix: name another file for the output")


def _check_stream(path: Path, name: str, fd: int, allowed: bool, appends: bool) -> OutputTarget:
    if not allowed:
        why = "a stream cannot be read back to resume" if appends else "this output is not written to a stream"
        raise RetbenchError(f"{name}: is a stream ({why}). Fix: name a regular file")
    if fd == 0:
        raise RetbenchError(f"{name}: is standard input, which is read, not written. Fix: name a regular file, or "
                            "/dev/stdout")
    try:
        os.fstat(fd)
    except OSError:
        raise RetbenchError(f"{name}: file descriptor {fd} is not open. Fix: open it (e.g. {fd}>FILE), or name a "
                            "regular file") from None
    return OutputTarget(path, stream=fd)


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder``: a real probe (``os.access`` is wrong for root on
    a read-only mount), removed at once."""
    try:
        probe = _new_temporary(folder, "write-test")
    except OSError:
        return False
    os.close(probe[0])
    with contextlib.suppress(OSError):
        os.unlink(probe[1])
    return True


def _new_temporary(folder: Path, name: str) -> tuple[int, Path]:
    """A new hidden file in ``folder``, opened for writing, created with mode ``0666`` so that the
    umask decides (``mkstemp`` would make it 0600)."""
    for _ in range(100):
        candidate = folder / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), candidate
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def write_output(path: str | os.PathLike[str], data: str | bytes, option: str, *, dash: bool = False,
                 streams: bool = True,
                 inputs: Mapping[str, str | os.PathLike[str] | None] | None = None) -> OutputTarget:
    """Write ``data`` (text is written as UTF-8, with the line ends it holds) to ``path`` by the rules
    of the module docstring, checked again now (:func:`check_output`, ``inputs`` as there). Returns
    where it landed."""
    where = check_output(path, option, dash=dash, streams=streams, inputs=inputs)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if where.stream is not None:
        _write_stream(where.stream, raw, f"{option} {where.path}")
        return where
    _replace(where.file or where.path, raw, f"{option} {where.path}")
    return where


def _write_stream(fd: int, raw: bytes, name: str) -> None:
    """``raw`` through a stream: stdout and stderr through Python's own (their buffered text stays in
    order, and a test runner's capture sees it), any other descriptor directly."""
    python_stream = {1: sys.stdout, 2: sys.stderr}.get(fd)
    if python_stream is not None:
        python_stream.flush()
        buffer = getattr(python_stream, "buffer", None)
        if buffer is not None:
            buffer.write(raw)
            buffer.flush()
        else:
            python_stream.write(raw.decode("utf-8"))
            python_stream.flush()
        return
    try:
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise RetbenchError(f"{name}: writing failed ({exc.strerror or exc}). Fix: name a regular file") from None


def _replace(target: Path, raw: bytes, name: str) -> None:
    """``raw`` into a temporary file beside ``target``, fsynced, given ``target``'s mode when it
    exists, renamed over it."""
    temporary: Path | None = None
    try:
        previous = target.stat() if target.exists() else None
        handle, temporary = _new_temporary(target.parent, target.name)
        with os.fdopen(handle, "wb") as out:
            if previous is not None:
                _keep_mode_and_owner(handle, previous)
            out.write(raw)
            out.flush()
            os.fsync(handle)  # a full disk shows here, not after the rename
        os.replace(temporary, target)
        temporary = None
        _sync_folder(target.parent)
    except OSError as exc:
        raise RetbenchError(f"{name}: cannot be written ({exc.strerror or exc}). Fix: free space, or name a "
                            "file in a folder you can write to") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _keep_mode_and_owner(handle: int, previous: os.stat_result) -> None:
    """The replaced file's mode, and its owner where we may set it (root replacing a user's file)."""
    if not hasattr(os, "fchmod"):  # Windows: no POSIX mode to keep
        return
    os.fchmod(handle, stat.S_IMODE(previous.st_mode))
    if (previous.st_uid, previous.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):
            os.fchown(handle, previous.st_uid, previous.st_gid)


def _sync_folder(folder: Path) -> None:
    """Make the rename durable where the platform allows (a folder cannot be opened on Windows)."""
    with contextlib.suppress(OSError, AttributeError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
