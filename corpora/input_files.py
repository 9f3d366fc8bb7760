"""Reading an input file's bytes under bounds, so that a wrong file never fills the memory and
never hangs.

Every input file (corpus, queries, topics, facets, qrels, runs, experiment files) is read through
:func:`read_input_bytes`, and every reader that opens a path itself (a Parquet run, a file of a
results folder) checks it first with :func:`check_input_file`: a folder, a device (``/dev/zero``,
a terminal), a socket and a *named* pipe (made by ``mkfifo``) are refused before they are opened.
Opening a named pipe waits until some process opens it for writing, which may be never, so it is
never opened. An anonymous pipe is read: the shell's ``<(zcat qrels.gz)`` (``/dev/fd/N``, which on
Linux is a link to ``pipe:[...]``) and ``/dev/stdin``, whose writer the shell started with the
command. A file of a results folder must be a regular file (:func:`check_input_file` with
``regular=True``): no pipe of any kind.

A line longer than the kind of file allows (:data:`MAX_JUDGMENT_LINE` for qrels and run files,
:data:`MAX_TEXT_LINE` for corpus, query and facet files) stops reading at that line. Every input
(a regular file, a pipe, a gzipped file) is read a chunk at a time under that bound, so an endless
stream without line ends, or a huge sparse file of NUL bytes (``truncate -s 100G``), fails after one
over-long line instead of filling the memory. Text is UTF-8 (:func:`decode_utf8`: a
byte order mark is skipped, a UTF-16 file is named as such); :func:`refuse_nul_bytes` is for the
formats no NUL byte belongs in.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import zlib
from pathlib import Path
from typing import BinaryIO

from corpora.errors import InputFileError

#: The longest line (in bytes, without its line end) a qrels or run file may hold: 1 MiB. A
#: judgment or a result is four to six short fields (real lines are under 1 KiB); a longer line
#: means the file is not a qrels or run file (a binary file, an endless stream).
MAX_JUDGMENT_LINE = 1 << 20
#: The longest line a corpus, queries, topics or facets file may hold: 64 MiB. A JSON Lines record
#: holds a whole document, and long documents exist (a novel is a few MiB), but no document is
#: tens of millions of characters; a longer line is a wrong file, or a stream that never ends.
MAX_TEXT_LINE = 1 << 26
#: Bytes read at a time from a pipe or a gzipped file (at most the line bound, see _read_bounded).
_CHUNK = 1 << 20

_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_FIX = "re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"


def _size_text(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 and not limit % (1 << 20) else f"{limit} bytes"


#: How Linux names the target of an open descriptor of a pipe that has no name on disk.
_ANONYMOUS_PIPE = re.compile(r"^pipe:\[\d+\]$")
#: Open descriptors of this process, by path: what ``<(command)`` and a redirected stdin pass.
_DESCRIPTOR_PATHS = ("/dev/fd/", "/proc/self/fd/")
_LINKS_FOLLOWED = 40  # as many links as the kernel follows in one path


def _kind_of(mode: int) -> str | None:
    """What a path that cannot be read as a file is, or None when it can (a regular file or a pipe)."""
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def is_anonymous_pipe(path: Path) -> bool:
    """Whether ``path``, a pipe, is one with no name on disk: an open descriptor of this process
    (``/dev/fd/N``, ``/proc/self/fd/N``, ``/dev/stdin``: what the shell's ``<(command)`` and a
    redirected stdin pass), whose writer the shell started. A named pipe (``mkfifo``) is not: it may
    have no writer, and opening it would wait for one forever."""
    current = os.fspath(path)
    for _ in range(_LINKS_FOLLOWED):
        try:
            target = os.readlink(current)
        except OSError:
            break
        if _ANONYMOUS_PIPE.match(target):
            return True
        current = os.path.join(os.path.dirname(current), target)
    where = os.path.abspath(path)  # where a descriptor's link names no pipe (macOS): the path says it
    return where == "/dev/stdin" or where.startswith(_DESCRIPTOR_PATHS)


def check_input_file(path: Path, *, regular: bool = False, fix: str | None = None) -> os.stat_result:
    """The status of the input file ``path``, proved readable without waiting forever before it is
    opened (see the module docstring): a missing file, a folder, a device, a socket and a named pipe
    are :class:`InputFileError` naming the path; an anonymous pipe is accepted unless ``regular``
    (a file of a results folder, which is always a regular file). ``fix``: what to do, where the
    caller knows better than "check the path" (e.g. restore a results folder's file)."""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise InputFileError(path, "file not found", fix=fix or "check the path") from None
    except OSError as exc:
        raise InputFileError(path, f"cannot read the file ({exc.strerror or exc})", fix=fix) from None
    mode = status.st_mode
    kind = _kind_of(mode)
    if kind == "a folder":
        raise InputFileError(path, "is a folder, not a file", fix=fix or "name the file itself")
    if kind is not None:
        endless = " (a device such as /dev/zero never ends)" if kind == "a device" else ""
        raise InputFileError(path, f"is {kind}, not a file{endless}",
                             fix=fix or "name a file (a pipe such as <(zcat file.gz) works too)")
    if stat.S_ISFIFO(mode) and regular:
        raise InputFileError(path, "is a named pipe (FIFO), not a regular file", fix=fix or "name the file itself")
    if stat.S_ISFIFO(mode) and not is_anonymous_pipe(path):
        raise InputFileError(path, "is a named pipe (FIFO), not a file: reading it would wait for a writer that "
                             "may never come", fix=fix or "name a file; to read a command's output, pass it as "
                             "<(command)")
    return status


def _too_long(path: Path, line: int, limit: int, what: str) -> InputFileError:
    return InputFileError(path, f"line longer than {_size_text(limit)}: no line of {what} is that long (a binary "
                          "file, or a stream without line ends?)", line=line,
                          fix=f"name the right file: {what} holds one record per line")


def _read_bounded(handle: BinaryIO, path: Path, limit: int, what: str) -> bytes:
    """All of ``handle``, read a chunk at a time, stopping at the first line longer than ``limit``.

    Chunks are at most ``limit`` bytes, so a line inside one chunk is shorter than the limit; only
    the line that runs across chunk boundaries needs counting. The chunks are gathered in one
    growing buffer whose bytes ``getvalue`` hands over without a copy, so reading a file holds it
    in memory about once, not twice (a list of chunks joined at the end peaks at twice its size).
    """
    gathered = io.BytesIO()
    open_line = 0  # bytes of the line still open at the end of what was read
    lines_before = 0  # line ends read so far
    size = min(_CHUNK, limit)
    while True:
        chunk = handle.read(size)
        if not chunk:
            return gathered.getvalue()
        first = chunk.find(b"\n")
        if first < 0:
            open_line += len(chunk)
        else:
            if open_line + first > limit:
                raise _too_long(path, lines_before + 1, limit, what)
            lines_before += chunk.count(b"\n")
            open_line = len(chunk) - chunk.rfind(b"\n") - 1
        if open_line > limit:
            raise _too_long(path, lines_before + 1, limit, what)
        gathered.write(chunk)


def read_input_bytes(path: Path, *, max_line: int = MAX_TEXT_LINE, what: str = "a text file",
                     gzipped: bool = False) -> bytes:
    """The bytes of an input file, within the bounds of the module docstring.

    ``max_line``: the longest line allowed, in bytes; ``what``: the kind of file, for the message
    about a longer line (e.g. ``"a qrels file"``); ``gzipped``: decompress while reading (a
    corrupt or truncated archive is an error too). A missing file, a folder, a device, a socket, a
    named pipe (:func:`check_input_file`) and a file that cannot be read are :class:`InputFileError`
    naming the path.
    """
    check_input_file(path)
    try:
        with (gzip.open(path, "rb") if gzipped else path.open("rb")) as handle:
            return _read_bounded(handle, path, max_line, what)  # type: ignore[arg-type]
    except FileNotFoundError:
        raise InputFileError(path, "file not found", fix="check the path") from None
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        detail = getattr(exc, "strerror", None) or exc
        raise InputFileError(path, f"cannot read the file ({detail})",
                             fix="name a readable file" + (", gzipped as its .gz name says" if gzipped else "")) from None


def decode_utf8(path: Path, raw: bytes) -> str:
    """``raw`` as UTF-8 text, a leading byte order mark dropped; a byte that is not UTF-8 is an
    error naming its line, and a UTF-16 file (its byte order mark) is named as such."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if raw.startswith(_UTF16_MARKS):
            raise InputFileError(path, "the file is UTF-16 text (it starts with a UTF-16 byte order mark), not UTF-8",
                                 line=1, fix="re-encode it as UTF-8 (e.g. iconv -f utf-16 -t utf-8)") from None
        line = raw[: exc.start].count(b"\n") + 1
        raise InputFileError(path, f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", line=line,
                             fix=_UTF8_FIX) from None


def refuse_nul_bytes(path: Path, raw: bytes) -> None:
    """A NUL byte is an error at its line: no text format holds one (trec_eval would end a field
    there), so it means a binary file or a UTF-16 one."""
    position = raw.find(b"\0")
    if position < 0:
        return
    if raw.startswith(_UTF16_MARKS):
        decode_utf8(path, raw)  # names UTF-16
    raise InputFileError(path, "holds a NUL byte (0x00), which no text file does: a binary file, or text in "
                         "another encoding such as UTF-16", line=raw.count(b"\n", 0, position) + 1,
                         fix="name the right file, or re-encode it as UTF-8")
