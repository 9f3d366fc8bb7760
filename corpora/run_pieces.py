"""A TREC run file read a piece at a time, each piece whole queries, so that evaluating a run of
ten million lines holds one piece of it, not the file, its columns and its Run at once.

:func:`grouped_pieces` reads :data:`PIECE_BYTES` at a time and cuts each read before the lines of
the last query in it, which go on into the next piece: a file whose queries are each on consecutive
lines (what every retrieval tool writes) is read in one pass. A query id that comes back after
another query began raises :class:`ScatteredRun`; :func:`scattered_pieces` then sorts the file's
lines into temporary files by a hash of their query id (every query whole in one of them, its lines
in the file's order, each file about half a piece) and reads them one at a time: two passes, the
same bound. Each piece goes through the very reader of a whole file (:func:`corpora.trec_io.run_from_bytes`),
so each query's ranking is the one reading the whole file gives.

Anything else that reading the whole file would say something about (a line without six fields, a
score that is not a number, a document twice in a query, a NUL byte, a line over
:data:`~corpora.input_files.MAX_JUDGMENT_LINE`, a byte order mark, a gzipped file,
``trailing_fields="ignore"``) raises :class:`NotStreamable`: the caller reads the whole file as before, which names the file and
the line, or reads what streaming would not.
"""

from __future__ import annotations

import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path


from corpora.input_files import MAX_JUDGMENT_LINE, check_input_file
from corpora.run import RunFile, TrailingFields, run_file_format
from corpora.run_order import RunOrder

__all__ = ["PIECE_BYTES", "NotStreamable", "ScatteredRun", "grouped_pieces", "scattered_pieces"]

#: Bytes of a run file read at a time (a piece is this, less the lines of its last query, plus the
#: lines carried over from the read before).
PIECE_BYTES = 1 << 25


class NotStreamable(Exception):
    """The file must be read whole (:mod:`corpora.run_pieces`' docstring says when)."""


class ScatteredRun(Exception):
    """A query's lines are not consecutive in the file."""


def _check_streamable(path: Path, trailing_fields: TrailingFields) -> None:
    if trailing_fields != "error" or run_file_format(path).name != "trec" or path.suffix.lower() == ".gz":
        raise NotStreamable(path)
    check_input_file(path)
    if not path.is_file():  # a pipe is read once: whole
        raise NotStreamable(path)
    with path.open("rb") as handle:
        if handle.read(3) == b"\xef\xbb\xbf":  # a byte order mark: the whole reader drops it
            raise NotStreamable(path)


def _first_field(line: bytes) -> bytes:
    fields = line.split(None, 1)
    return fields[0] if fields else b""


def _piece(raw: bytes, order: RunOrder) -> RunFile:
    """The run of ``raw`` (whole lines), or :class:`NotStreamable`."""
    from corpora.trec_io import run_from_bytes

    if b"\0" in raw or _may_hold_a_long_line(raw):
        raise NotStreamable()
    read = run_from_bytes(raw, "error", order)
    if read is None:
        raise NotStreamable()
    return read


def _may_hold_a_long_line(raw: bytes) -> bool:
    """False when no line of ``raw`` is longer than :data:`~corpora.input_files.MAX_JUDGMENT_LINE`
    bytes: every window of half that length starting at a multiple of it holds a line end (a longer
    line would cover one whole). True may be a false alarm (a line just under the bound): the file
    is then read whole, which is always right."""
    half = MAX_JUDGMENT_LINE // 2
    return any(raw.find(b"\n", start, start + half) < 0 for start in range(0, max(len(raw) - half, 0), half))


def grouped_pieces(path: str | Path, order: RunOrder = "trec", trailing_fields: TrailingFields = "error",
                   piece_bytes: int | None = None, first_seen: None = None) -> Iterator[RunFile]:
    """The file's queries a piece at a time (each a :class:`~corpora.run.RunFile` whose ``run_id`` is
    the tag of the piece's last line: the last piece's is the file's), in file order;
    :class:`ScatteredRun` when a query comes back after another began, :class:`NotStreamable` as the
    module docstring says. (``first_seen``: for the signature of :func:`scattered_pieces`; the pieces
    are already in order of first appearance.)"""
    path, piece_bytes = Path(path), piece_bytes or PIECE_BYTES
    _check_streamable(path, trailing_fields)
    finished: set[str] = set()
    position, size, any_piece = 0, piece_bytes, False
    with path.open("rb") as handle:
        while True:
            handle.seek(position)
            buffer = handle.read(size)
            if len(buffer) < size:  # the rest of the file
                if buffer.strip():
                    yield _checked(_piece(buffer if buffer.endswith(b"\n") else buffer + b"\n", order), finished)
                    any_piece = True
                break
            cut = _last_query_start(buffer, buffer.rfind(b"\n") + 1)
            if cut == 0:  # one query longer than a piece: read more of it
                if buffer.rfind(b"\n") < 0 and size > MAX_JUDGMENT_LINE:
                    raise NotStreamable(path)
                size *= 2
                continue
            yield _checked(_piece(buffer[:cut], order), finished)
            any_piece = True
            position, size = position + cut, piece_bytes
    if not any_piece:
        raise NotStreamable(path)  # an empty file: the whole reader names it


def _last_query_start(buffer: bytes, end: int) -> int:
    """Where the consecutive lines of the query of the last whole line (before ``end``) begin."""
    if end == 0:
        return 0
    start = buffer.rfind(b"\n", 0, end - 1) + 1
    query = _first_field(buffer[start:end])
    while start > 0:
        before = buffer.rfind(b"\n", 0, start - 1) + 1
        field = _first_field(buffer[before:start])
        if field != query and not field.startswith(b"#"):  # comments go with the lines after them
            break
        start = before
    return start


def _checked(piece: RunFile, finished: set[str]) -> RunFile:
    if not finished.isdisjoint(piece.run.query_ids):
        raise ScatteredRun()
    finished.update(piece.run.query_ids)
    return piece


def scattered_pieces(path: str | Path, order: RunOrder = "trec", trailing_fields: TrailingFields = "error",
                     piece_bytes: int | None = None, first_seen: list[str] | None = None) -> Iterator[RunFile]:
    """The file's queries a piece at a time, whatever the order of its lines: its lines sorted into
    temporary files by their query id's CRC-32 (about half a piece each, in the file's order), then
    each read as a whole; every piece's ``run_id`` is the tag of the file's last line. ``first_seen``
    (when given) receives the file's query ids in order of first appearance, as reading the whole
    file lists them, before the first piece is yielded."""
    path, piece_bytes = Path(path), piece_bytes or PIECE_BYTES
    _check_streamable(path, trailing_fields)
    n_files = max(1, 2 * (path.stat().st_size // piece_bytes + 1))
    last = b""
    seen: dict[bytes, None] = {}
    with tempfile.TemporaryDirectory(prefix="retbench-run-") as folder:
        names = [Path(folder) / f"{j}.trec" for j in range(n_files)]
        outs = [name.open("wb") for name in names]
        try:
            with path.open("rb") as handle:
                for line in handle:
                    if len(line) > MAX_JUDGMENT_LINE or b"\0" in line:
                        raise NotStreamable(path)
                    query = _first_field(line)
                    if query:
                        last = line
                        seen.setdefault(query)
                        outs[zlib.crc32(query) % n_files].write(line if line.endswith(b"\n") else line + b"\n")
        finally:
            for out in outs:
                out.close()
        tag = _first_field(last.split(None, 5)[-1]).decode("utf-8", "replace") if last else ""
        if first_seen is not None:
            first_seen.extend(query.decode("utf-8", "replace") for query in seen)
        for name in names:
            raw = name.read_bytes()
            name.unlink()
            if raw:
                yield RunFile(_piece(raw, order).run, tag)
