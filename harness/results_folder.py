"""The life of a results folder on disk, shared by every writer of one (``bench compare``'s
:mod:`harness.results`, ``bench tune``'s :mod:`harness.tune_results`).

A writer checks ``--out`` before any work (:func:`check_out`) and hands its files to
:func:`write_folder`, which writes them into a hidden staging folder ``.staging-<host>-<pid>-…``
inside it, then renames the staging folder to ``<out>/<run id>``: the rename is atomic, so a killed run leaves no
half-written result, and it fails when another run holds the name, so two runs that chose the same
id in the same second both land (the later one under ``<id>-2``). A staging folder whose process is
gone is removed by the next run into the same folder.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from corpora import RetbenchError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Derived", "Say", "check_out", "csv_text", "host_tag", "out_folder", "package_version", "safe_file_name",
           "warn_on_stderr", "write_folder"]

_STAGING = re.compile(r"^\.staging-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-")
_TAKEN = {errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR}  # rename targets another run (or a file) holds
_CLAIM_ATTEMPTS = 1000

#: Where a writer says what it did besides writing (a stale staging folder removed).
Say = Callable[[str], None]
#: Makes files from a results folder already written (its path): file name -> text.
Derived = Callable[[Path], Mapping[str, str]]


def warn_on_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def package_version(package: str) -> str:
    """The installed version of ``package`` for a manifest, ``unknown`` when it is not installed."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def csv_text(frame: pd.DataFrame) -> str:
    """A table as a results folder holds it: no index column, ``\n`` line ends on every platform."""
    return frame.to_csv(index=False, lineterminator="\n")


def safe_file_name(label: str) -> str:
    """A file name for a system label: ``rrf(bm25,lsa)`` -> ``rrf_bm25_lsa_``.

    >>> safe_file_name("bm25(k1=0.9,b=0.4)")
    'bm25_k1=0.9_b=0.4_'
    """
    return re.sub(r"[^A-Za-z0-9._=-]", "_", label)


def _new_staging(out: Path) -> Path:
    """A fresh staging folder inside ``out``, named so that :func:`check_out` can tell whether its
    process is still alive."""
    return Path(tempfile.mkdtemp(prefix=f".staging-{host_tag()}-{os.getpid()}-", dir=out))


def host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode("utf-8")).hexdigest()[:8]


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` may still run (True when it cannot be told)."""
    if os.name != "posix":
        return True  # os.kill(pid, 0) would end the process on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # e.g. another user's process
    return True


def _remove_stale_staging(out: Path, say: Say = warn_on_stderr) -> list[Path]:
    """Remove the staging folders in ``out`` left by runs of this machine that were killed while
    writing (their process is gone), saying so. Returns the removed folders."""
    removed = []
    try:
        entries = sorted(out.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _STAGING.match(entry.name)
        if match and entry.is_dir():
            if match["host"] != host_tag() or _process_alive(int(match["pid"])):
                continue
            shutil.rmtree(entry, ignore_errors=True)
            if not entry.exists():
                removed.append(entry)
                say(f"removed {entry}: the staging folder of a run (process {match['pid']}) killed while writing")
    return removed


def out_folder(out: Path | str) -> Path:
    """``out`` as a path; an empty (or blank) string is an error, since ``Path("")`` is the current
    folder, which nobody means by leaving the value empty."""
    if isinstance(out, str) and not out.strip():
        raise RetbenchError(f"the results folder (out) is empty ({out!r}), which would mean the current folder. "
                            "Fix: name a folder, '.' for the current one")
    return Path(out)


def check_out(out: Path, say: Say = warn_on_stderr) -> Path:
    """Prove, before any work and without creating anything, that results can be written into
    ``out``: it is a folder we can write into, or its nearest existing parent is. Stale staging
    folders in it are removed. An unusable folder is a :class:`~corpora.RetbenchError`."""
    out = Path(out)
    fix = "choose a folder you can write to with --out"
    existing = out
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        where = "exists and" if existing == out else f"cannot be created: {existing}"
        raise RetbenchError(f"results folder {out}: {where} is not a folder. Fix: {fix}")
    try:
        handle, probe = tempfile.mkstemp(prefix=".write-test-", dir=existing)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        what = "cannot be written to" if existing == out else f"cannot be created in {existing}"
        raise RetbenchError(f"results folder {out}: {what} ({exc.strerror}). Fix: {fix}") from None
    if existing == out:
        _remove_stale_staging(out, say)
    return out


def _prepare_out(out: Path, say: Say = warn_on_stderr) -> Path:
    """:func:`check_out`, then create the folder."""
    out = check_out(out, say)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RetbenchError(f"results folder {out}: cannot be created ({exc.strerror}). "
                            "Fix: choose a folder you can write to with --out") from None
    return out


def _claim(staging: Path, out: Path, base_id: str, write_manifest: Callable[[str], None]) -> Path:
    """Rename ``staging`` to ``out/<run id>``, trying ``base_id``, ``base_id-2``, … until a rename
    succeeds: a rename fails when the target holds another run, so two runs can never share one."""
    candidates = (base_id if n == 1 else f"{base_id}-{n}" for n in range(1, _CLAIM_ATTEMPTS + 1))
    for run_id in candidates:
        if (out / run_id).exists():
            continue
        write_manifest(run_id)
        try:
            os.rename(staging, out / run_id)
        except OSError as exc:
            if exc.errno in _TAKEN:
                continue  # another run claimed it since we looked
            raise
        return out / run_id
    raise RetbenchError(f"results folder {out}: {_CLAIM_ATTEMPTS} runs named {base_id}… already exist. "
                        "Fix: choose another --out")


def write_folder(out: Path, files: Mapping[str, str], base_id: str, identified: Callable[[str], Mapping[str, str]],
                 derived: Derived | None = None, say: Say = warn_on_stderr) -> Path:
    """Write a results folder atomically as ``out/<run id>`` and return its path.

    ``files`` (relative name -> text) are staged first; ``identified(run_id)`` gives the files that
    hold the run id (the manifest, ...), written for each id tried by :func:`_claim`; then
    ``derived`` (if any) makes more files from the staged folder, which is then complete, so they
    show the run id too. A derived name that is already a file of the folder is a ``ValueError``
    (the caller's mistake, not the user's). A failed write keeps nothing and is a RetbenchError.
    """
    out = _prepare_out(out, say)
    staging = _new_staging(out)

    def write_identified(run_id: str) -> None:
        named = identified(run_id)
        for name, text in named.items():
            (staging / name).write_text(text, encoding="utf-8")
        if derived is not None:  # again if the run id was taken meanwhile: what it makes shows the id
            for name, text in derived(staging).items():
                if name in files or name in named:
                    raise ValueError(f"derived file {name!r} would replace a file of the results folder")
                (staging / name).write_text(text, encoding="utf-8")

    try:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.chmod(staging, 0o755)
        return _claim(staging, out, base_id, write_identified)
    except OSError as exc:
        raise RetbenchError(f"results folder {out}: writing failed ({exc.strerror}); nothing was kept. "
                            "Fix: free space or choose another --out") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
