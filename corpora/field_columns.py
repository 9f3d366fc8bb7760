"""Whitespace-separated ASCII lines of a fixed field count, split into numpy columns without a
Python string per field: the fast path of the TREC run reader.

A 2M-line run file read by pandas' C tokenizer spends most of its time making six million Python
strings. Here the bytes are split with array operations: every field's start and end come from
where the bytes change between separator and not, the fields of a column become one fixed-width
``numpy.str_`` array, and decimal scores are parsed from their digits.

:func:`split_fields` vouches only for what it fully understands: ASCII text with no control byte
other than tab, line feed and carriage return, every non-blank line holding exactly ``n_fields``
fields. Anything else is None, and the caller's careful parser (which names the file and line of a
problem) reads the file instead. The same holds for :meth:`FieldColumns.decimals`: a value it cannot
parse exactly is left to :func:`~corpora.number_grammar.read_scores`, and a value that is not a score
of that grammar is None.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from corpora.number_grammar import read_scores

#: The only control bytes this path accepts (tab, LF, CR): Python's ``str.split()`` treats some
#: others as whitespace, and a careful parser should look at a file holding any. DEL is refused too.
_FINE_CONTROL_BYTES = (9, 10, 13)
#: Integers below this are exact doubles (2**53), so m / 10**k is one correctly rounded division
#: (up to 15 or 16 digits); longer ones are divided in extended precision (:func:`_divide_extended`).
_EXACT_MANTISSA = 2**53
_MAX_DIGITS = 18  # 10**18 still fits an int64 before the exactness check
#: A decimal field longer than this is left to ``float`` (and digit counts fit an int8).
_LONGEST_DECIMAL = 64
_TENS = np.array([float(10**k) for k in range(23)])  # exact doubles: 10**k for k <= 22
#: Work in pieces that stay in the CPU's caches (and in memory the allocator reuses): bytes of the
#: file, lines at a time, and rows of a column at a time.
_BYTES_AT_A_TIME = 1 << 21
_ROWS_AT_A_TIME = 1 << 15
#: :meth:`FieldColumns.text` columns may take up to 4x the file's size plus this before a reader
#: prefers Python strings (UTF-32 takes 4 bytes a character; ids of one width take about that).
_FIXED_WIDTH_SLACK = 64 << 20

#: The same powers in extended precision, where numpy's longdouble has a 64-bit or wider significand
#: (x86's 80-bit, or quad): an 18-digit integer is exact there. None elsewhere (then ``float`` does it).
_EXTENDED = _TENS.astype(np.longdouble) if np.finfo(np.longdouble).nmant >= 63 else None


def _divide_extended(mantissa: np.ndarray, tens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``mantissa / 10**tens`` correctly rounded to doubles, and where that is certain: the quotient
    is rounded once in extended precision, then to a double; the two roundings agree with one
    correct rounding unless the first lands exactly halfway between two doubles (then not exact)."""
    assert _EXTENDED is not None
    quotient = mantissa.astype(np.longdouble) / _EXTENDED[tens]
    values = quotient.astype(np.float64)
    wide = values.astype(np.longdouble)
    below = (wide + np.nextafter(values, -np.inf).astype(np.longdouble)) / 2
    above = (wide + np.nextafter(values, np.inf).astype(np.longdouble)) / 2
    return values, (quotient != below) & (quotient != above)


@dataclass(frozen=True)
class FieldColumns:
    """Some fields of a file's data lines: ``starts[:, i]`` and ``ends[:, i]`` (exclusive) index
    ``data`` for field ``fields[i]`` of every row."""

    data: np.ndarray  # uint8, the file's bytes
    fields: tuple[int, ...]
    starts: np.ndarray  # int32 (int64 from 2 GiB on), rows x len(fields)
    ends: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    def _bytes(self, field: int, rows: slice, longest: int | None = None) -> Iterator[np.ndarray]:
        """Per character position j of ``field`` in ``rows`` (up to ``longest``), each row's j-th
        byte (0 past its end)."""
        column = self.fields.index(field)
        starts = self.starts[rows, column].astype(np.intp)
        lengths = self.ends[rows, column] - starts
        last = len(self.data) - 1
        width = int(lengths.max()) if len(lengths) else 0
        shortest = int(lengths.min()) if len(lengths) else 0  # every row has its first `shortest` bytes
        index = np.empty_like(starts)
        for j in range(width if longest is None else min(width, longest)):
            np.add(starts, j, out=index)
            if index[-1] > last:  # rows are in file order: only the file's last row can reach past it
                np.minimum(index, last, out=index)
            byte = self.data[index]
            if j >= shortest:
                byte *= lengths > j
            yield byte

    def width(self, field: int) -> int:
        """The longest value of ``field``: :meth:`text` takes 4 bytes per row and character of it."""
        column = self.fields.index(field)
        return int((self.ends[:, column] - self.starts[:, column]).max()) if len(self) else 0

    def text_fits(self, *fields: int) -> bool:
        """Whether :meth:`text` of ``fields`` takes at most 4x the file's size plus a slack: one very
        long value makes every row as wide, and Python strings then cost less."""
        return 4 * len(self) * sum(self.width(field) for field in fields) <= 4 * len(self.data) + _FIXED_WIDTH_SLACK

    def text(self, field: int) -> np.ndarray:
        """``field`` as a fixed-width ``numpy.str_`` array (ASCII: a byte is its code point)."""
        width = max(self.width(field), 1)
        code_points = np.zeros((len(self), width), dtype=np.uint32)
        for first in range(0, len(self), _ROWS_AT_A_TIME):
            rows = slice(first, first + _ROWS_AT_A_TIME)
            for j, byte in enumerate(self._bytes(field, rows)):
                code_points[rows, j] = byte
        return code_points.view(f"<U{width}").ravel()

    def last(self, field: int) -> str:
        """``field`` on the last data line."""
        column = self.fields.index(field)
        return bytes(self.data[self.starts[-1, column]:self.ends[-1, column]]).decode("ascii")

    def decimals(self, field: int) -> np.ndarray | None:
        """``field`` as float64, exactly as :func:`~corpora.number_grammar.read_score` reads each
        value (and Python's ``float``); None where one is not a score of that grammar. ``[+-]digits[.digits]`` with up to 18 digits, at most 22 after the point, is
        parsed here: the integer of its digits divided by an exact power of ten, one correctly
        rounded operation as ``float`` does it (in extended precision from 2**53 on, where numpy
        has it); anything else (exponents, ``inf``, longer values) goes through
        :func:`~corpora.number_grammar.read_scores`."""
        values = np.empty(len(self), dtype=np.float64)
        for first in range(0, len(self), _ROWS_AT_A_TIME):
            rows = slice(first, min(first + _ROWS_AT_A_TIME, len(self)))
            if not self._parse_decimals(field, rows, values[rows]):
                return None
        return values

    def _parse_decimals(self, field: int, rows: slice, out: np.ndarray) -> bool:
        n = rows.stop - rows.start
        column = self.fields.index(field)
        mantissa = np.zeros(n, dtype=np.int64)
        n_digits = np.zeros(n, dtype=np.int8)
        fraction = np.zeros(n, dtype=np.int8)  # digits after the point
        dots = np.zeros(n, dtype=np.int8)
        simple = self.ends[rows, column] - self.starts[rows, column] <= _LONGEST_DECIMAL
        negative = np.zeros(n, dtype=bool)
        for j, byte in enumerate(self._bytes(field, rows, _LONGEST_DECIMAL)):
            value = byte - np.uint8(ord("0"))  # wraps around for bytes below '0'
            digit = value < 10
            dot = byte == ord(".")
            if j == 0:
                negative = byte == ord("-")
                simple &= digit | dot | negative | (byte == ord("+"))
            else:
                simple &= digit | dot | (byte == 0)
            np.multiply(mantissa, 10, out=mantissa, where=digit)  # wraps past 18 digits: not simple
            np.add(mantissa, value, out=mantissa, where=digit)
            fraction += digit & (dots > 0)
            n_digits += digit
            dots += dot
        simple &= (dots <= 1) & (n_digits >= 1) & (n_digits <= _MAX_DIGITS) & (fraction < len(_TENS))
        tens = np.minimum(fraction, len(_TENS) - 1)
        np.divide(mantissa, _TENS[tens], out=out)
        long = simple & (mantissa >= _EXACT_MANTISSA)  # 16 to 18 digits, as repr writes many doubles
        if long.any():
            simple &= ~long
            if _EXTENDED is not None:
                rows_long = np.flatnonzero(long)
                values, exact = _divide_extended(mantissa[rows_long], tens[rows_long])
                out[rows_long] = values
                simple[rows_long] = exact
        np.negative(out, out=out, where=negative)
        hard = np.flatnonzero(~simple)
        if len(hard):
            spans = zip(self.starts[rows, column][hard].tolist(), self.ends[rows, column][hard].tolist())
            values = read_scores([bytes(self.data[start:end]).decode("ascii") for start, end in spans])
            if values is None:
                return False
            out[hard] = values
        return True


def split_fields(raw: bytes, n_fields: int, keep: Sequence[int]) -> FieldColumns | None:
    """Fields ``keep`` of ``raw``'s lines, or None unless the text is ASCII without odd control
    bytes and every non-blank line holds exactly ``n_fields`` whitespace-separated fields, the
    first not starting with ``#`` (comment lines must be removed first)."""
    data = np.frombuffer(raw, dtype=np.uint8)
    keep = tuple(keep)
    position_type = np.int32 if len(data) < 2**31 else np.int64
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    position = 0
    while position < len(data):
        stop = raw.find(b"\n", position + _BYTES_AT_A_TIME) + 1 or len(data)  # whole lines
        edges = _split_piece(data[position:stop], n_fields)
        if edges is None:
            return None
        # field f of every row: edges[2f::2 n_fields] (starts), edges[2f + 1::2 n_fields] (ends)
        for out, first in ((starts, 0), (ends, 1)):
            columns = np.empty((len(edges) // (2 * n_fields), len(keep)), dtype=position_type)
            for column, field in enumerate(keep):
                np.add(edges[2 * field + first::2 * n_fields], position, out=columns[:, column], casting="unsafe")
            out.append(columns)
        position = stop
    if not sum(len(piece) for piece in starts):
        return None
    return FieldColumns(data, keep, np.concatenate(starts), np.concatenate(ends))


def _split_piece(data: np.ndarray, n_fields: int) -> np.ndarray | None:
    """Every field's start and end, alternately (a row of ``n_fields`` fields after another), of
    whole lines ``data``; None as for :func:`split_fields`."""
    if data.max() >= 127:  # DEL, or not ASCII
        return None
    line_ends = np.flatnonzero(data == ord("\n"))
    control = np.count_nonzero(data < ord(" "))
    if control != len(line_ends) and control != len(line_ends) + sum(
            np.count_nonzero(data == byte) for byte in _FINE_CONTROL_BYTES if byte != ord("\n")):
        return None
    separator = np.empty(len(data) + 2, dtype=bool)
    separator[0] = separator[-1] = True
    np.less_equal(data, ord(" "), out=separator[1:-1])
    edges = np.flatnonzero(separator[1:] != separator[:-1])  # alternately a field's start and its end
    if len(edges) % (2 * n_fields):
        return None
    first_starts, last_ends = edges[0::2 * n_fields], edges[2 * n_fields - 1::2 * n_fields]
    if (data[first_starts] == ord("#")).any():
        return None  # a comment line, or what may be one
    # Each row of n_fields fields is one line: the first line end after a row's first field comes
    # after its last field and before the next row's first field. With as many line ends as rows
    # and each between its row and the next, that is so (row i's is line_ends[i]); else look for each.
    if len(line_ends) != len(first_starts) or (line_ends < last_ends).any() \
            or (line_ends[:-1] >= first_starts[1:]).any():
        line_ends = np.append(line_ends, len(data))
        after = line_ends[np.searchsorted(line_ends, first_starts)]
        if (after < last_ends).any() or (after[:-1] >= first_starts[1:]).any():
            return None
    return edges
