"""Low-level, error-reporting file readers shared by the loaders.

Every problem is reported as :class:`~corpora.errors.InputFileError` naming the file and line.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
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


def read_jsonl(path: Path, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON Lines file; with ``start``/``stop``,
    only records ``start:stop`` (counted over the non-blank lines): the others are not parsed."""
    record_number = -1
    for number, line in read_text_lines(path):
        if not line.strip():
            continue
        record_number += 1
        if record_number < start:
            continue
        if stop is not None and record_number >= stop:
            return
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


#: Characters no id may hold: whitespace (trec_eval and every TREC reader split lines on it; Python's
#: ``\\s`` is exactly ``str.isspace``, so non-breaking and other Unicode spaces count too) and control
#: characters (C0, DEL, C1; a NUL ends a string in trec_eval).
_UNWRITABLE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def id_problem(identifier: str, *, starts_a_line: bool = False) -> str | None:
    """Why ``identifier`` cannot be one field of a TREC run or qrels line; ``None`` when it can.

    TREC files are whitespace-separated (``qid Q0 docid rank score tag``, ``qid iter docid grade``), so
    an id must be non-empty and hold no whitespace or control character; a query id (``starts_a_line``)
    also must not begin with ``#``, since trec_eval skips a line that starts with ``#`` as a comment.
    A ``#`` anywhere else is fine (MS MARCO v2.1 document ids hold one).

    >>> id_problem("DOC-7"), id_problem("#3"), id_problem("#3", starts_a_line=True)
    (None, None, "starts with '#', which makes its TREC lines comments")
    >>> id_problem("a b"), id_problem("")
    ("holds whitespace (' ' at position 2)", 'is empty')
    """
    if not identifier:
        return "is empty"
    bad = _UNWRITABLE.search(identifier)
    if bad is not None:
        kind = "whitespace" if bad.group().isspace() else "a control character"
        return f"holds {kind} ({bad.group()!r} at position {bad.start() + 1})"
    if starts_a_line and identifier.startswith("#"):
        return "starts with '#', which makes its TREC lines comments"
    return None


def check_id(identifier: str, what: str, path: Path | str, line: int | None, *, starts_a_line: bool = False) -> None:
    """Raise :class:`InputFileError` at ``path:line`` when ``identifier`` cannot be written to TREC files."""
    problem = id_problem(identifier, starts_a_line=starts_a_line)
    if problem is None:
        return
    if _UNWRITABLE.search(identifier) is None and identifier:  # only the leading '#' is wrong
        fix = "drop the leading '#'"
    else:
        fix = "give it an id without whitespace or control characters"
        if identifier.strip():
            fix += f", e.g. {_UNWRITABLE.sub('_', identifier.strip())!r}"
    raise InputFileError(path, f"{what} {identifier!r} {problem}, so it cannot be written to TREC run and qrels "
                         "files", line=line, fix=fix)


class UniqueIds:
    """Where each id of a file (or of a set of files) was first read; reading one again is an error
    that names both places. A dict, so checking stays constant-time per record.

    Every loader registers each document and query id here as it reads it, so this is also where
    an id that cannot be written to a TREC file (:func:`id_problem`) is refused, at its file and
    line. ``starts_a_line`` is for query ids, which begin the lines of run and qrels files.

    >>> ids = UniqueIds("document id", fix="give every document a unique id")
    >>> ids.add("d1", Path("c.jsonl"), 1); ids.add("d2", Path("c.jsonl"), 2)
    >>> ids.add("d1", Path("c.jsonl"), 5)
    Traceback (most recent call last):
    ...
    corpora.errors.InputFileError: c.jsonl:5: duplicate document id 'd1' (first on line 1). Fix: give every document a unique id.
    """

    def __init__(self, what: str, fix: str, *, starts_a_line: bool = False):
        self.what, self.fix, self.starts_a_line = what, fix, starts_a_line
        self._first: dict[str, tuple[Path, int]] = {}

    def add(self, identifier: str, path: Path, line: int) -> None:
        first = self._first.setdefault(identifier, (path, line))
        if first != (path, line):
            where = f"on line {first[1]}" if first[0] == path else f"at {first[0]}:{first[1]}"
            raise InputFileError(path, f"duplicate {self.what} {identifier!r} (first {where})", line=line,
                                 fix=self.fix)
        check_id(identifier, self.what, path, line, starts_a_line=self.starts_a_line)


#: Grades are 64-bit integers: the evaluator holds them in int64 arrays (and trec_eval in a C long).
GRADE_MIN, GRADE_MAX = -(2**63), 2**63 - 1
_GRADE_FIX = "use integer grades (0 irrelevant, 1 marginal, 2 relevant, 3 perfect; negative = judged, never relevant)"
_NUMBER = re.compile(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?")


def looks_like_grade(text: str) -> bool:
    """Whether ``text`` is written as a number, so a first line ending in it is a judgment, not a header.

    >>> looks_like_grade("1"), looks_like_grade("0.000000"), looks_like_grade("1e0"), looks_like_grade("score")
    (True, True, True, False)
    """
    return _NUMBER.fullmatch(text.strip()) is not None


def check_grade(value: int, path: Path | str, line: int | None, text: str | None = None) -> int:
    """``value`` when it lies in the 64-bit range of :data:`GRADE_MIN`..:data:`GRADE_MAX`, else an error."""
    if GRADE_MIN <= value <= GRADE_MAX:
        return value
    shown = repr(text) if text is not None else str(value)  # as written in the file, quoted
    raise InputFileError(path, f"grade {shown} is outside the range of a 64-bit integer (-2^63 to 2^63-1)",
                         line=line, fix=_GRADE_FIX)


def parse_grade(path: Path, number: int, text: str) -> int:
    """The integer grade written as ``text``: ``2``, ``-1``, ``1.0``, ``0.000000`` or ``1e0``, read exactly.

    Decimal, not float: ``float("9007199254740993")`` would silently become ...992. A fraction, a word
    or a value outside the 64-bit range (:func:`check_grade`) is an error at ``path:number``.

    >>> parse_grade(Path("q"), 1, "0.000000"), parse_grade(Path("q"), 1, "-1"), parse_grade(Path("q"), 1, "9007199254740993")
    (0, -1, 9007199254740993)
    """
    text = text.strip()
    value: Decimal | None = None
    if _NUMBER.fullmatch(text):
        try:
            value = Decimal(text)
        except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
            value = None
    if value is None or value != value.to_integral_value():
        raise InputFileError(path, f"grade {text!r} is not an integer", line=number, fix=_GRADE_FIX)
    if not GRADE_MIN <= value <= GRADE_MAX:  # compared as a Decimal: int("1e999999999") would take forever
        return check_grade(GRADE_MAX + 1, path, number, text)
    return int(value)


def _unclosed_quote_line(lines: list[str], start: int) -> int:
    """1-based line where the quoted value left open at the end of the file began, reading the
    record that starts on line ``start`` with RFC 4180's rules (a value opens a quote only at its
    first character; ``""`` inside quotes is one quote)."""
    in_quotes, at_value_start, opened = False, True, start
    for number in range(start, len(lines) + 1):
        line = lines[number - 1]
        j = 0
        while j < len(line):
            char = line[j]
            if in_quotes:
                if char == '"':
                    if line[j + 1:j + 2] == '"':
                        j += 1
                    else:
                        in_quotes = False
            elif char == '"' and at_value_start:
                in_quotes, opened = True, number
            at_value_start = not in_quotes and char == ","
            j += 1
        at_value_start = not in_quotes  # a new line outside quotes starts a new record
    return opened


def csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line where the record starts, fields) for each record of a CSV file, read strictly.

    Python's csv module, left lenient, reads an unclosed quote to the end of the file, silently
    turning every following row into one value; strict mode stops there, and so does a closing
    quote followed by anything but a comma, which lenient mode would glue to the value.
    """
    lines = [line for _, line in read_text_lines(path)]
    reader = csv.reader(io.StringIO("\n".join(lines)), strict=True)
    consumed = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            start = consumed + 1
            if "unexpected end of data" in str(exc):
                opened = _unclosed_quote_line(lines, start)
                last = len(lines) - (lines[-1] == "")  # the text's final newline ends no line of its own
                raise InputFileError(
                    path, f"the quote that opens a value here is never closed, so the rest of the file "
                    f"(lines {opened}-{last}) would be read as that one value", line=opened,
                    fix='close the quote; write a quote inside a quoted value as two quotes ("")') from None
            raise InputFileError(path, f"a closing quote must be followed by a comma or the end of the line "
                                 f"({exc})", line=reader.line_num,
                                 fix='quote the whole value and double each quote inside it ("")') from None
        yield consumed + 1, row
        consumed = reader.line_num
