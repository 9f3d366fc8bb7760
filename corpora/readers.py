"""Low-level, error-reporting file readers shared by the loaders.

Every problem is reported as :class:`~corpora.errors.InputFileError` naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from corpora.errors import InputFileError


def read_text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line without its end-of-line) for each line of a UTF-8 file; ``\\r`` stripped."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(path, "file not found", fix="check the path") from None
    except OSError as exc:
        raise InputFileError(path, f"cannot read the file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputFileError(
            path,
            f"byte 0x{raw[exc.start]:02x} is not valid UTF-8",
            line=line,
            fix="re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
        ) from None
    for number, line in enumerate(text.split("\n"), 1):
        yield number, line.rstrip("\r")


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON Lines file."""
    for number, line in read_text_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(
                path, f"not valid JSON ({exc.msg} at column {exc.colno})", line=number,
                fix="write one JSON object per line",
            ) from None
        if not isinstance(record, dict):
            raise InputFileError(path, f"expected a JSON object, got {type(record).__name__}", line=number)
        yield number, record


def require_id(path: Path, number: int, record: dict, keys: tuple[str, ...] = ("_id", "id")) -> str:
    for key in keys:
        value = record.get(key)
        if value is not None and str(value).strip():
            return str(value).strip()
    raise InputFileError(
        path, f"record has no id (expected a non-empty {' or '.join(repr(k) for k in keys)} field)",
        line=number, fix="give every record an id",
    )


class UniqueIds:
    """Where each id of a file (or of a set of files) was first read; reading one again is an error
    that names both places. A dict, so checking stays constant-time per record.

    >>> ids = UniqueIds("document id", fix="give every document a unique id")
    >>> ids.add("d1", Path("c.jsonl"), 1); ids.add("d2", Path("c.jsonl"), 2)
    >>> ids.add("d1", Path("c.jsonl"), 5)
    Traceback (most recent call last):
    ...
    corpora.errors.InputFileError: c.jsonl:5: duplicate document id 'd1' (first on line 1). Fix: give every document a unique id.
    """

    def __init__(self, what: str, fix: str):
        self.what, self.fix = what, fix
        self._first: dict[str, tuple[Path, int]] = {}

    def add(self, identifier: str, path: Path, line: int) -> None:
        first = self._first.setdefault(identifier, (path, line))
        if first != (path, line):
            where = f"on line {first[1]}" if first[0] == path else f"at {first[0]}:{first[1]}"
            raise InputFileError(path, f"duplicate {self.what} {identifier!r} (first {where})", line=line,
                                 fix=self.fix)


def parse_grade(path: Path, number: int, text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise InputFileError(path, f"grade {text!r} is not an integer", line=number,
                             fix="use integer grades (0 irrelevant, 1 marginal, 2 relevant, 3 perfect)") from None
    if value != int(value):
        raise InputFileError(path, f"grade {text!r} is not an integer", line=number,
                             fix="use integer grades (0 irrelevant, 1 marginal, 2 relevant, 3 perfect)")
    return int(value)
