"""Low-level, error-reporting file readers shared by the loaders.

Every problem is reported as :class:`~corpora.errors.InputFileError` naming the file and line.
Files are read under the bounds of :mod:`corpora.input_files` (lines of at most
:data:`~corpora.input_files.MAX_TEXT_LINE`; devices and folders refused); JSON values are checked
for their type (:func:`text_field`, :func:`require_id`) and depth (:func:`parse_json`).
"""

from __future__ import annotations

import csv
import io
import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from corpora.errors import InputFileError
from corpora.input_files import MAX_TEXT_LINE, decode_utf8, read_input_bytes

def read_text_lines(path: Path, max_line: int = MAX_TEXT_LINE) -> Iterator[tuple[int, str]]:
    """(line number, line without its end-of-line) for each line of a UTF-8 file; ``\\r`` stripped.
    Read with :func:`read_input_bytes`'s bounds (lines up to ``max_line`` bytes)."""
    text = decode_utf8(path, read_input_bytes(path, max_line=max_line, what="a corpus, query or facet file"))
    for number, line in enumerate(text.split("\n"), 1):
        yield number, line.rstrip("\r")


def stream_text_lines(path: Path, max_line: int = MAX_TEXT_LINE) -> Iterator[tuple[int, str]]:
    """:func:`read_text_lines` one line at a time, without holding the file: the same lines (a final
    empty line aside), numbers and errors. A file that is not a regular file (a pipe) is read whole
    by :func:`read_text_lines`; a line it cannot take (not UTF-8, too long) is handed to it too, to
    raise its error."""
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError:
        regular = False
    if not regular:
        yield from read_text_lines(path, max_line)
        return
    with path.open("rb") as handle:
        number = 0
        while True:
            raw = handle.readline(max_line + 2)
            if not raw:
                return
            number += 1
            body = raw[:-1] if raw.endswith(b"\n") else raw
            try:
                if len(body) > max_line:
                    raise ValueError
                line = body.decode("utf-8-sig" if number == 1 else "utf-8")
            except ValueError:  # UnicodeDecodeError too: read_text_lines names the line and the fix
                for _ in read_text_lines(path, max_line):
                    pass
                raise InputFileError(path, "changed while it was read", line=number,
                                     fix="leave the file unchanged while it is read") from None
            yield number, line.rstrip("\r")


def parse_json(path: Path, text: str, line: int | None = None) -> object:
    """``text`` parsed as JSON; invalid JSON, a number too long to read and a value nested too deeply
    for Python's parser (about a thousand levels: ``RecursionError``) are errors at ``path:line``
    (the line within ``text`` when ``line`` is None)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        column = f" at column {exc.colno}" if line is not None else ""
        raise InputFileError(path, f"not valid JSON ({exc.msg}{column})", line=where,
                             fix="write one JSON object per line" if line is not None else "write valid JSON") from None
    except RecursionError:
        raise InputFileError(path, "a JSON value nested too deeply to read (arrays or objects about a thousand "
                             "levels deep)", line=line,
                             fix="flatten the value: no field of a corpus file needs such nesting") from None
    except ValueError as exc:  # an integer of more than 4300 digits (Python's int_max_str_digits)
        raise InputFileError(path, f"cannot read the JSON ({exc})", line=line,
                             fix="write long numbers as strings") from None


def json_object(path: Path, line: str, number: int) -> dict:
    """Line ``number`` of a JSON Lines file as its object; not JSON, or not an object, is an
    :class:`~corpora.InputFileError` at that line."""
    record = parse_json(path, line, number)
    if not isinstance(record, dict):
        raise InputFileError(path, f"expected a JSON object, got {json_type(record)}", line=number,
                             fix="write one JSON object per line")
    return record


def read_jsonl(path: Path, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON Lines file; with ``start``/``stop``,
    only records ``start:stop`` (counted over the non-blank lines): the others are not parsed."""
    record_number = -1
    for number, line in stream_text_lines(path):
        if not line.strip():
            continue
        record_number += 1
        if record_number < start:
            continue
        if stop is not None and record_number >= stop:
            return
        yield number, json_object(path, line, number)


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for messages.

    >>> json_type({}), json_type([1]), json_type(1.5), json_type(True), json_type(None)
    ('an object', 'an array', 'a number', 'true/false', 'null')
    """
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return "a string" if isinstance(value, str) else type(value).__name__


def _shown(value: object, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def document_metadata(path: Path, number: int, record: dict) -> dict:
    """A corpus record's ``metadata`` object (``{}`` when missing or null); anything else is an error."""
    value = record.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputFileError(path, f"the document's 'metadata' field holds {json_type(value)}, not an object",
                             line=number, fix='write it as a JSON object, e.g. "metadata": {"url": "..."}')
    return dict(value)


def text_field(path: Path, number: int, record: dict, key: str, what: str = "record") -> str:
    """The string in ``record[key]``: ``""`` when the field is missing or null, an error at
    ``path:number`` when it holds anything but a string (an object, an array, a number, true or
    false), which would otherwise be indexed as its Python spelling.

    >>> text_field(Path("c.jsonl"), 3, {"text": "a b"}, "text"), text_field(Path("c.jsonl"), 3, {}, "title")
    ('a b', '')
    >>> text_field(Path("c.jsonl"), 3, {"text": ["a", "b"]}, "text", "query")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    corpora.errors.InputFileError: c.jsonl:3: the query's 'text' field holds an array (["a", "b"]), not a string. ...
    """
    value = record.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise InputFileError(path, f"the {what}'s {key!r} field holds {json_type(value)} ({_shown(value)}), not a string",
                         line=number, fix=f"write the {key!r} as a JSON string")


def require_id(path: Path, number: int, record: dict, keys: tuple[str, ...] = ("_id", "id")) -> str:
    """The record's id: the first of ``keys`` present and non-empty, a string (stripped) or a JSON
    integer (``7`` reads as ``"7"``, exactly as written). A JSON fraction is refused, since Python's
    spelling of it is not always what was written (``1.50`` would read ``"1.5"``, ``1e3`` ``"1000.0"``),
    and so is true/false, an object or an array.

    >>> require_id(Path("c.jsonl"), 1, {"id": " D-7 "}), require_id(Path("c.jsonl"), 1, {"_id": 7})
    ('D-7', '7')
    """
    for key in keys:
        value = record.get(key)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise InputFileError(path, f"the {key!r} field holds {json_type(value)} ({_shown(value)}), not an id",
                                 line=number, fix=f"write the id as a JSON string, e.g. \"{key}\": \"d1\"")
        if value.strip():
            return value.strip()
    raise InputFileError(
        path, f"record has no id (expected a non-empty {' or '.join(repr(k) for k in keys)} field)",
        line=number, fix="give every record an id",
    )


#: The split every loader reads when none is asked for: a layout with one set of judgments reads
#: that set under this name, and refuses any other (:func:`refuse_split`).
DEFAULT_SPLIT = "test"
#: What a split is, for help texts (``--split`` of every command; ``harness.core.options.Loading``).
SPLIT_HELP = ("Judgments split: BEIR's or a tabular folder's qrels/<split>.tsv, a TREC folder's qrels file named "
              "after it, a CSFCube fold. A layout with one set of judgments refuses any split but the default.")


def refuse_split(folder: Path, layout: str, split: str, judgments: str) -> None:
    """An error when ``split`` is not :data:`DEFAULT_SPLIT` for a ``layout`` that has one set of
    judgments (``judgments`` names it), which would otherwise be read whatever the split said."""
    if split != DEFAULT_SPLIT:
        raise InputFileError(folder, f"split {split!r} asked for, but a {layout} folder has one set of judgments "
                             f"({judgments}) and no splits",
                             fix=f"leave out `split`: the default, {DEFAULT_SPLIT!r}, reads that set")


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
    quote followed by anything but a comma, which lenient mode would glue to the value. A value may
    be as long as a line of a corpus file (:data:`MAX_TEXT_LINE`), not just the csv module's 128 KiB
    (a long document is real data); the module's limit is raised while this reads, and restored.
    """
    lines = [line for _, line in read_text_lines(path)]
    reader = csv.reader(io.StringIO("\n".join(lines)), strict=True)
    previous_limit = csv.field_size_limit(max(csv.field_size_limit(), MAX_TEXT_LINE))
    try:
        yield from _strict_rows(path, lines, reader)
    finally:
        csv.field_size_limit(previous_limit)


def _strict_rows(path: Path, lines: list[str], reader: Any) -> Iterator[tuple[int, list[str]]]:
    """The rows of :func:`csv_rows`; ``reader`` is a strict ``csv.reader`` over ``lines``."""
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
            if "field larger than field limit" in str(exc):
                raise InputFileError(path, f"a value longer than {MAX_TEXT_LINE >> 20} MiB, longer than any "
                                     "document (a quote that is never closed?)", line=start,
                                     fix='close the quote; write a quote inside a quoted value as two quotes ("")'
                                     ) from None
            raise InputFileError(path, f"a closing quote must be followed by a comma or the end of the line "
                                 f"({exc})", line=reader.line_num,
                                 fix='quote the whole value and double each quote inside it ("")') from None
        yield consumed + 1, row
        consumed = reader.line_num
