"""The life of a results folder on disk, shared by every writer of one (``bench compare``'s
:mod:`harness.store.write`, ``bench tune``'s :mod:`harness.tuning.results`).

A writer checks ``--out`` before any work (:func:`check_out`) and hands its files to
:func:`write_folder`, which writes them into a hidden staging folder ``.staging-<host>-<pid>-…``
inside it, then renames the staging folder to ``<out>/<run id>``: the rename is atomic, so a killed run leaves no
half-written result, and it fails when another run holds the name, so two runs that chose the same
id in the same second both land (the later one under ``<id>-2``). A staging folder whose process is
gone is removed by the next run into the same folder.

Every file is hashed as it is written, and the manifest records the hashes under :data:`FILES_KEY`
(``"files"``: relative POSIX path -> ``"sha256:<hex>"``, sorted by path), so a reader
(:mod:`harness.store.read`) can tell a file edited or truncated since. The manifest cannot
record a hash of itself, so it is the one file not covered. The hashes are of the bytes written,
which are a pure function of the inputs and the seed, so same inputs and seed still give
byte-identical folders (the run id, times and command line aside, which the manifest,
``retrieval_metrics.jsonl`` and the reports show, and so the hashes of those files).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from corpora import RetbenchError
from corpora.output_files import MANIFEST_FILE, STAGING_NAME, is_staging_name, results_folder_holding

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FILES_KEY", "MANIFEST_FILE", "Derived", "Identified", "Pieces", "Say", "check_out", "csv_text",
           "file_hash", "file_text_hash", "host_tag", "is_staging", "manifest_text", "out_folder", "package_version",
           "safe_file_name", "warn_on_stderr", "write_folder"]

#: The manifest's key of the hash of every other file of the folder: relative POSIX path -> ``sha256:<hex>``.
FILES_KEY = "files"
_HASH_PREFIX = "sha256:"
_CHUNK = 1 << 20  # bytes hashed at a time: a run file of a large corpus is never held whole

_STAGING = STAGING_NAME
_TAKEN = {errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR}  # rename targets another run (or a file) holds
_CLAIM_ATTEMPTS = 1000

#: Where a writer says what it did besides writing (a stale staging folder removed).
Say = Callable[[str], None]
#: Makes files from a results folder already written (its path): file name -> text.
Derived = Callable[[Path], Mapping[str, str]]
#: Files written a piece at a time: (relative name, text) pairs, each text appended to its file in
#: the order given, so one producer can fill several files at once (a run file and its raw scores)
#: and no file is ever held whole.
Pieces = Iterable[tuple[str, str]]

#: Given a run id, the manifest (a JSON-ready dict, without :data:`FILES_KEY`) and the other files
#: that hold the run id (file name -> text).
Identified = Callable[[str], tuple[Mapping[str, Any], Mapping[str, str]]]


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


def file_hash(path: str | PathLike[str]) -> str:
    """``sha256:<hex>`` of the file's bytes, as the manifest's :data:`FILES_KEY` records it."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return _HASH_PREFIX + digest.hexdigest()


def is_staging(path: str | PathLike[str]) -> bool:
    """Whether ``path`` is a staging folder (``.staging-<host>-<pid>-…``): a run still writing, or
    one killed while writing. Its files are never results."""
    return is_staging_name(Path(os.path.abspath(path)).name)


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
    ``out``: it is a folder we can write into, or its nearest existing parent is, and it is neither
    a results folder nor inside one (:func:`corpora.output_files.results_folder_holding`: the new
    folder would be a file its manifest does not record). Stale staging folders in it are removed.
    An unusable folder is a :class:`~corpora.RetbenchError`."""
    out = Path(out)
    fix = "choose a folder you can write to with `out`"
    if out.is_symlink() and not out.exists():
        raise RetbenchError(f"results folder {out}: is a symbolic link to {os.readlink(out)}, which does not exist "
                            f"(a dangling link is not followed). Fix: create the folder it points to, or {fix}")
    holder = results_folder_holding(out)
    if holder is not None:
        what = "a run's staging folder" if is_staging_name(holder.name) else "a results folder"
        where = f"is {what}" if holder == Path(os.path.realpath(out)) else f"lies inside {what}, {holder}"
        raise RetbenchError(f"results folder {out}: {where}, which holds only what its {MANIFEST_FILE} records, not "
                            f"more runs. Fix: choose a folder outside it with `out`, e.g. {holder.parent}")
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
                            "Fix: choose a folder you can write to with `out`") from None
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
                        "Fix: choose another `out`")


def file_text_hash(text: str) -> str:
    """The manifest's hash of a file written from ``text`` (its UTF-8 bytes): ``sha256:<hex>``."""
    return _HASH_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_text(document: Mapping[str, Any], hashes: Mapping[str, str]) -> str:
    """``manifest.json``'s text: ``document`` with :data:`FILES_KEY`, the ``hashes`` sorted by file."""
    return json.dumps({**document, FILES_KEY: dict(sorted(hashes.items()))}, indent=2) + "\n"


def write_folder(out: Path, files: Mapping[str, str], base_id: str, identified: Identified,
                 derived: Derived | None = None, say: Say = warn_on_stderr, pieces: Pieces = ()) -> Path:
    """Write a results folder atomically as ``out/<run id>`` and return its path.

    ``files`` (relative POSIX name -> text, written as UTF-8 bytes with the line ends they hold) and
    ``pieces`` (:data:`Pieces`: files written and hashed a piece at a time, as they come) are staged
    first; ``identified(run_id)`` gives the manifest and the other files that hold the run
    id, written for each id tried by :func:`_claim`, the manifest with :data:`FILES_KEY`, the hash
    of every file; then ``derived`` (if any) makes more files from the staged folder, which is then
    complete and verifiable, so they show the run id too, and the manifest is written again to
    record their hashes as well. A name given twice, or a manifest that sets :data:`FILES_KEY`
    itself, is a ``ValueError`` (the caller's mistake, not the user's). A failed write keeps
    nothing and is a RetbenchError.
    """
    out = _prepare_out(out, say)
    staging = _new_staging(out)
    hashes: dict[str, str] = {}

    def staged(relative: str, written: dict[str, str]) -> Path:
        """Where a new file of the folder is staged; a name given twice is the caller's mistake."""
        if relative in written or relative == MANIFEST_FILE:
            raise ValueError(f"file {relative!r} would replace a file of the results folder")
        path = staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def put(relative: str, text: str, written: dict[str, str]) -> None:
        # bytes: no platform's line ends slip in, so the hash is of what is read
        staged(relative, written).write_bytes(text.encode("utf-8"))
        written[relative] = file_text_hash(text)

    def put_pieces(written: dict[str, str]) -> None:
        open_files: dict[str, tuple[Any, Any]] = {}  # name -> (handle, its SHA-256 so far)
        try:
            for relative, text in pieces:
                if relative not in open_files:
                    open_files[relative] = (staged(relative, written).open("wb"), hashlib.sha256())
                handle, digest = open_files[relative]
                data = text.encode("utf-8")
                handle.write(data)
                digest.update(data)
        finally:
            for handle, _ in open_files.values():
                handle.close()
        for relative, (_, digest) in open_files.items():
            written[relative] = _HASH_PREFIX + digest.hexdigest()

    def write_identified(run_id: str) -> None:
        document, named = identified(run_id)
        if FILES_KEY in document:
            raise ValueError(f"the manifest sets {FILES_KEY!r}, which write_folder records")
        written = dict(hashes)  # afresh for each id tried: the files below are written again
        for name, text in named.items():
            put(name, text, written)
        manifest = staging / MANIFEST_FILE
        manifest.write_text(manifest_text(document, written), encoding="utf-8", newline="\n")
        if derived is not None:  # again if the run id was taken meanwhile: what it makes shows the id
            for name, text in derived(staging).items():
                put(name, text, written)
            manifest.write_text(manifest_text(document, written), encoding="utf-8", newline="\n")

    try:
        for relative, text in files.items():
            put(relative, text, hashes)
        put_pieces(hashes)
        os.chmod(staging, 0o755)
        return _claim(staging, out, base_id, write_identified)
    except OSError as exc:
        raise RetbenchError(f"results folder {out}: writing failed ({exc.strerror}); nothing was kept. "
                            "Fix: free space or choose another `out`") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
