"""A cache of fitted retriever state on disk, keyed by corpus content, analyzer and parameters. A
vocabulary goes into an entry as a packed string table
(:mod:`retrievers.strings`).

A retriever whose fit is expensive describes its fitted state as named numpy arrays and asks
:meth:`~retrievers.base.Retriever.fitted_state` for them; the :class:`IndexCache` of its run context
(:mod:`retrievers.context`, made by the harness for a run) answers from memory, then from disk, and
only then calls the build function and stores what it returns. Without a cache (the default context)
the state is simply built, so library use and tests need no cache at all.

Key: SHA-256 of (file format, retriever kind, its parameters with the analyzer's fingerprint, the
corpus digest). The corpus digest hashes every doc id, title and text with their lengths, so two
corpora share an entry only when they are the same documents in the same order.

Trust: an entry is a header (JSON) and raw arrays; nothing is unpickled. It is used only when its
header names the same key, every array has an allowed dtype, lies inside the file and matches its
CRC-32, and the retriever's own structural check passes. Anything else -- a truncated file, a flipped
bit, an entry of another corpus or version -- is ignored with a note on stderr and rebuilt. Entries
are written to a temporary name and renamed, so readers never see half a file.

Folder: ``--cache-dir``, else ``$RETBENCH_CACHE_DIR``, else the platform's user cache dir for
``retbench``; entries live in its ``indexes`` subfolder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import sys
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from corpora import Corpus

FORMAT = 1
CACHE_ENV = "RETBENCH_CACHE_DIR"
_MAGIC = b"RETBENCH-INDEX\n\x00"
_ALIGN = 64
_ALLOWED_DTYPES = frozenset({"|b1", "|u1", "|i1", "<u2", "<i4", "<i8", "<u4", "<u8", "<f4", "<f8"})

State = dict[str, np.ndarray]


def cache_root() -> Path:
    """``$RETBENCH_CACHE_DIR``, else the platform's user cache dir for retbench."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("retbench"))


def corpus_digest(corpus: Corpus) -> str:
    """The corpus's identity in cache keys: :meth:`Corpus.content_hash` (memoised there)."""
    return corpus.content_hash()


def entry_key(kind: str, params: Mapping[str, Any], digest: str) -> str:
    text = json.dumps({"format": FORMAT, "kind": kind, "params": params, "corpus": digest}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class IndexCache:
    """Fitted state by key: in memory for this process, and on disk under ``root`` unless it is None.

    ``events`` records what each lookup did (``hit``, ``memory``, ``miss``, ``rejected``), for the
    progress line and for tests.
    """

    def __init__(self, root: Path | str | None):
        self.root = Path(root).expanduser() / "indexes" if root is not None else None
        self._memory: dict[str, State] = {}
        self.events: list[tuple[str, str]] = []

    def fetch(self, kind: str, params: Mapping[str, Any], corpus: Corpus, build: Callable[[], State],
              validate: Callable[[State], bool]) -> State:
        key = entry_key(kind, params, corpus_digest(corpus))
        if key in self._memory:
            self.events.append(("memory", kind))
            return self._memory[key]
        state = self._read(key, kind, validate) if self.root is not None else None
        if state is None:
            state = build()
            if self.root is not None:
                self._write(key, kind, state)
            self.events.append(("miss", kind))
        else:
            self.events.append(("hit", kind))
        self._memory[key] = state
        return state

    def path(self, key: str, kind: str) -> Path:
        """Where the entry for ``key`` lives (only for a cache with a folder)."""
        if self.root is None:
            raise ValueError("a memory-only cache has no files")
        return self.root / f"{kind}-{key[:40]}.idx"

    # ----- disk ------------------------------------------------------------------------------
    def _read(self, key: str, kind: str, validate: Callable[[State], bool]) -> State | None:
        path = self.path(key, kind)
        if not path.is_file():
            return None
        try:
            state = read_entry(path, key)
            if validate(state):
                return state
            reason = "its content fails the structural check"
        except (OSError, ValueError, KeyError, TypeError) as exc:
            reason = str(exc)
        self.events.append(("rejected", kind))
        sys.stderr.write(f"cache: ignoring {path} ({reason}); rebuilding\n")
        return None

    def _write(self, key: str, kind: str, state: State) -> None:
        path = self.path(key, kind)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_entry(temporary, key, state)
            os.replace(temporary, path)
        except OSError as exc:
            sys.stderr.write(f"cache: cannot write {path} ({exc}); continuing without it\n")
            with contextlib.suppress(OSError):
                temporary.unlink()


def write_entry(path: Path, key: str, state: State) -> None:
    """Header (magic, length, JSON) then every array's raw bytes, each aligned to 64 bytes."""
    arrays = {name: np.ascontiguousarray(value) for name, value in state.items()}
    specs, offset = [], 0
    for name, value in arrays.items():
        dtype = value.dtype.newbyteorder("<") if value.dtype.byteorder == ">" else value.dtype
        specs.append({"name": name, "dtype": dtype.str, "shape": list(value.shape), "offset": offset,
                      "nbytes": int(value.nbytes), "crc32": zlib.crc32(memoryview(value).cast("B"))})
        offset += -(-value.nbytes // _ALIGN) * _ALIGN
    header = json.dumps({"format": FORMAT, "key": key, "arrays": specs}).encode("utf-8")
    start = -(-(len(_MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    with open(path, "wb") as handle:
        handle.write(_MAGIC + len(header).to_bytes(8, "little") + header)
        for spec, value in zip(specs, arrays.values()):
            handle.seek(start + spec["offset"])
            handle.write(memoryview(value.astype(spec["dtype"], copy=False)).cast("B"))
        handle.truncate(start + offset)


def read_entry(path: Path, key: str, *, mmap_arrays: bool = True, verify: bool = True) -> State:
    """The arrays of an entry written by :func:`write_entry` for ``key``; ValueError when it is not.

    ``mmap_arrays`` (the default): arrays are read-only views of a memory map of the file, which the
    kernel's page cache serves without a copy and only where they are read (reading into fresh
    arrays costs more than building a small index); False: each array is read into memory.
    ``verify`` (the default): every array's CRC-32 is checked, which reads the whole file once
    (through the page cache: no copy); False leaves the checksums unchecked (the header, every
    array's type, shape and place inside the file are still checked).
    """
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if handle.read(len(_MAGIC)) != _MAGIC:
            raise ValueError("not a retbench index file")
        length = int.from_bytes(handle.read(8), "little")
        if not 0 < length <= min(size, 1 << 24):
            raise ValueError("damaged header")
        header = json.loads(handle.read(length).decode("utf-8"))
        if header.get("format") != FORMAT or header.get("key") != key:
            raise ValueError("written for another corpus, parameters or version")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    start = -(-(len(_MAGIC) + 8 + length) // _ALIGN) * _ALIGN
    state: State = {}
    for spec in header["arrays"]:
        dtype, shape = str(spec["dtype"]), tuple(int(n) for n in spec["shape"])
        if dtype not in _ALLOWED_DTYPES or any(n < 0 for n in shape):
            raise ValueError(f"array {spec['name']!r} has a disallowed type or shape")
        count = int(np.prod(shape, dtype=np.int64))
        nbytes = count * np.dtype(dtype).itemsize
        offset = start + int(spec["offset"])
        if nbytes != spec["nbytes"] or offset + nbytes > size:
            raise ValueError(f"array {spec['name']!r} is truncated")
        if count:
            value = np.frombuffer(mapped, dtype=np.dtype(dtype), count=count, offset=offset).reshape(shape)
            if not mmap_arrays:
                value = value.copy()
                value.flags.writeable = False
        else:
            value = np.empty(shape, dtype=np.dtype(dtype))
            value.flags.writeable = False
        if verify and _crc32(value) != spec["crc32"]:
            raise ValueError(f"array {spec['name']!r} fails its checksum")
        state[str(spec["name"])] = value
    return state


def _crc32(value: np.ndarray) -> int:
    """The CRC-32 of an array's bytes, a slice at a time (one call on gigabytes holds the GIL as long)."""
    flat = value.view(np.uint8).reshape(-1) if value.size else np.empty(0, np.uint8)
    crc, step = 0, 1 << 26
    for start in range(0, len(flat), step):
        crc = zlib.crc32(flat[start:start + step], crc)
    return crc


def fitted_state(cache: IndexCache | None, kind: str, params: Mapping[str, Any], corpus: Corpus,
                 build: Callable[[], State], validate: Callable[[State], bool]) -> State:
    """The fitted state of ``kind`` with ``params`` on ``corpus``: from ``cache``, else built (no cache:
    built, kept nowhere). A retriever calls it through :meth:`~retrievers.base.Retriever.fitted_state`,
    which passes the cache of its run context."""
    if cache is None:
        return build()
    return cache.fetch(kind, params, corpus, build, validate)
