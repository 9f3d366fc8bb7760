"""The one grammar for the numbers of run and judgment files: a score or a grade is read exactly as
trec_eval 10 reads it, or refused.

trec_eval reads a run's score with C ``atof`` (``strtod``) and a qrels grade with ``atol``
(``get_trec_results.c``, ``get_qrels.c``): each reads the *leading* number of the field and
silently drops the rest. So ``1_000`` is a score of 1 there (Python's ``float`` reads 1000), a grade
``1e3`` is 1 and ``1.5`` is 1, and ``0x10`` is 16 (C99 hexadecimal). retbench accepts a field only
when the *whole* field is a number of the grammar below, so every file it accepts is read exactly as
trec_eval reads it; a field trec_eval would read differently from what it says is an error naming
the file, the line, the field, what trec_eval would read, and the fix::

    digits   ::= [0-9]+                       (ASCII digits only: not "١" or "٣")
    sign     ::= "+" | "-"
    score    ::= sign? (digits ("." [0-9]*)? | "." digits) (("e" | "E") sign? digits)?
               | sign? ("inf" | "infinity")   (letters in any case)
    grade    ::= sign? digits ("." "0"*)?     (within 64 bits: -2^63 .. 2^63-1)

A score is the double nearest its decimal value (as glibc's ``strtod`` and Python's ``float``
round); one too large for a double is infinite, as ``strtod`` makes it. Refused: ``nan`` (a NaN
cannot be ranked), hexadecimal (``0x10``, ``0x1p3``: C99 reads them, but few tools write them and
Python does not), underscores, non-ASCII digits, spaces or anything else inside the field.

A grade is an integer in digits; a point followed only by zeros (``1.0``, ``0.000000``, as SMART
files and float columns write grades) is accepted because ``atol`` stops at the point and reads
the same integer the field says. An exponent (``1e3``, ``atol``: 1) or any other fraction
(``1.5``: 1) is refused.

Fields reach these functions already split (whitespace, tab or comma separated, stripped); every
reader of a score or grade in text goes through them: TREC run files (all three reading paths of
:mod:`corpora.trec_io`), TREC, BEIR and tabular qrels, SMART relevance files, and through those
``bench evaluate``, ``bench agree`` and the collection loaders. Parquet runs and qrels tables are
typed columns (:mod:`corpora.frames`), not text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from corpora.errors import InputFileError

__all__ = ["GRADE_MAX", "GRADE_MIN", "check_grade", "grade_array", "looks_like_number", "parse_grade",
           "parse_score", "read_score", "read_scores", "score_array", "trec_eval_grade", "trec_eval_score"]

GRADE_MIN, GRADE_MAX = -(2**63), 2**63 - 1
_GRADE_DIGITS = 19  # 2**63 has 19 digits: a longer integer (zeros stripped) is outside the range

_DECIMAL = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_INFINITY = r"(?i:inf(?:inity)?)"
_SCORE = re.compile(rf"[+-]?(?:{_DECIMAL}|{_INFINITY})")
_GRADE = re.compile(r"([+-]?)([0-9]+)(?:\.0*)?")
#: What C ``strtod`` reads from the start of a field (C99, as glibc): hexadecimal first, since the
#: decimal alternative would stop at the ``x`` of ``0x10``.
_C_DOUBLE = re.compile(rf"[+-]?(?:(0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
                       rf"|{_DECIMAL}|{_INFINITY}|(?i:nan)(?:\([0-9A-Za-z_]*\))?)")
_C_LONG = re.compile(r"[+-]?[0-9]+")

SCORE_FIX = ("write each score as a decimal number in ASCII digits, with an optional sign, point and exponent "
             "(1000, -2.5, 1.5e-3, inf), and nothing else in the field: no underscores, hexadecimal or other "
             "characters")
GRADE_FIX = ("write each grade as an integer in ASCII digits (0 irrelevant, 1 marginal, 2 relevant, 3 perfect; "
             "negative = judged, never relevant): 1000, not 1e3")


def trec_eval_score(text: str) -> float:
    """What trec_eval (C ``atof``) reads from a score field: its leading number, 0.0 when none.

    >>> trec_eval_score("1_000"), trec_eval_score("0x10"), trec_eval_score("high"), trec_eval_score("2.5e")
    (1.0, 16.0, 0.0, 2.5)
    """
    found = _C_DOUBLE.match(text)
    if found is None:
        return 0.0
    number = found.group(0)
    if found.group(1) is not None:  # hexadecimal
        try:
            return float.fromhex(number)
        except OverflowError:
            return float("-inf") if number.startswith("-") else float("inf")
    return float(number.split("(")[0])


def trec_eval_grade(text: str) -> int:
    """What trec_eval (C ``atol``) reads from a grade field: its leading integer (clamped to 64 bits,
    as glibc's ``strtol``), 0 when none.

    >>> trec_eval_grade("1e3"), trec_eval_grade("1.5"), trec_eval_grade("-2x"), trec_eval_grade("rel")
    (1, 1, -2, 0)
    """
    found = _C_LONG.match(text)
    if found is None:
        return 0
    digits = found.group(0).lstrip("+-").lstrip("0")
    negative = found.group(0).startswith("-")
    if len(digits) > _GRADE_DIGITS:
        return GRADE_MIN if negative else GRADE_MAX
    value = int(found.group(0))
    return min(max(value, GRADE_MIN), GRADE_MAX)


def read_score(text: str) -> float | None:
    """The score a whole field says (the grammar's), or None where it is not one (NaN included).

    >>> read_score("2.5"), read_score("-1e3"), read_score("Infinity"), read_score("1_000"), read_score("nan")
    (2.5, -1000.0, inf, None, None)
    """
    return float(text) if _SCORE.fullmatch(text) else None


#: A character no decimal score holds; ``,`` joins the fields that :func:`read_scores` searches at once.
_NOT_DECIMAL = re.compile(r"[^0-9.eE+\-,]")


def read_scores(texts: Sequence[str]) -> list[float] | None:
    """Many score fields, each as :func:`read_score` reads it; None where one is not a score.

    Fields of nothing but ASCII digits, points, signs and exponent letters are read by ``float``
    alone: on those characters, ``float`` takes exactly the grammar's decimals (no underscore,
    space, ``inf`` or ``nan`` can be in them), so one search over all the fields replaces a regular
    expression per field. Any other field sends them all through :func:`read_score`.

    >>> read_scores(["2.5", "1e-05", ".5"]), read_scores(["1", "1_000"]), read_scores(["1", "inf"])
    ([2.5, 1e-05, 0.5], None, [1.0, inf])
    """
    if _NOT_DECIMAL.search(",".join(texts)) is None:
        try:
            return [float(text) for text in texts]
        except ValueError:  # e.g. "1e", "1.2.3", "", or two fields joined by a comma
            return None
    values = [read_score(text) for text in texts]
    return None if any(value is None for value in values) else values  # type: ignore[return-value]


def parse_score(path: Path | str, line: int | None, text: str) -> float:
    """The score written as ``text`` (see the module docstring); anything else is an
    :class:`~corpora.InputFileError` at ``path:line`` that says what trec_eval would read instead.

    >>> parse_score("run", 1, "12.5")
    12.5
    >>> parse_score("run", 3, "1_000")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    corpora.errors.InputFileError: run:3: score '1_000' is not a number as written (trec_eval would read it as 1.0)...
    """
    value = read_score(text)
    if value is not None:
        return value
    if re.fullmatch(r"[+-]?(?i:nan)", text):
        raise InputFileError(path, f"score {text!r} is NaN, which cannot be ranked", line=line,
                             fix="give every result a real-valued score")
    raise InputFileError(path, f"score {text!r} is not a number as written (trec_eval would read it as "
                         f"{trec_eval_score(text)!r})", line=line, fix=SCORE_FIX)


def check_grade(value: int, path: Path | str, line: int | None, text: str | None = None) -> int:
    """``value`` when it lies in the 64-bit range of :data:`GRADE_MIN`..:data:`GRADE_MAX`, else an error."""
    if GRADE_MIN <= value <= GRADE_MAX:
        return value
    shown = repr(text) if text is not None else str(value)  # as written in the file, quoted
    raise InputFileError(path, f"grade {shown} is outside the range of a 64-bit integer (-2^63 to 2^63-1)",
                         line=line, fix=GRADE_FIX)


def parse_grade(path: Path | str, line: int | None, text: str) -> int:
    """The integer grade written as ``text``: ``2``, ``-1``, ``+3``, ``1.0`` or ``0.000000``, read
    exactly (never through a float: ``9007199254740993`` stays itself). An exponent, a fraction, a
    word or a value outside 64 bits is an :class:`~corpora.InputFileError` at ``path:line``.

    >>> parse_grade("q", 1, "0.000000"), parse_grade("q", 1, "-1"), parse_grade("q", 1, "9007199254740993")
    (0, -1, 9007199254740993)
    """
    found = _GRADE.fullmatch(text)
    if found is None:
        raise InputFileError(path, f"grade {text!r} is not an integer as written (trec_eval would read it as "
                             f"{trec_eval_grade(text)})", line=line, fix=GRADE_FIX)
    sign, digits = found.groups()
    if len(digits.lstrip("0")) > _GRADE_DIGITS:  # int() of a million digits would take long
        return check_grade(GRADE_MAX + 1, path, line, text)
    return check_grade(int(sign + digits), path, line, text)


def looks_like_number(text: str) -> bool:
    """Whether a field is written as a number or an attempt at one (it holds a digit, or C reads a
    number from all of it: ``inf``, ``nan``, ``0x1p3``), so that a first line ending in it is a
    judgment, never a header line to skip: ``1e3`` and ``1_000`` are then refused, not dropped.

    >>> looks_like_number("1"), looks_like_number("1_000"), looks_like_number("nan"), looks_like_number("score")
    (True, True, True, False)
    """
    return any(char.isdigit() for char in text) or _C_DOUBLE.fullmatch(text) is not None


def _plain_integers(texts: Sequence[str] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the fields as a ``numpy.str_`` array, per field whether it is ``[+-]?`` then ASCII digits
    only, at least one)."""
    text = np.asarray(texts, dtype=str)
    if not len(text) or text.dtype.itemsize == 0:
        return text, np.zeros(len(text), dtype=bool)
    codes = text.view(np.uint32).reshape(len(text), -1)  # a shorter field is padded with 0 (no NUL is read)
    digit = (codes >= ord("0")) & (codes <= ord("9"))
    fine = digit | (codes == 0)
    fine[:, 0] |= (codes[:, 0] == ord("+")) | (codes[:, 0] == ord("-"))
    return text, fine.all(axis=1) & digit.any(axis=1)


def score_array(texts: Sequence[str] | np.ndarray) -> np.ndarray | None:
    """Many score fields as float64, each as :func:`read_score` reads it; None when one is not a
    score (the caller's careful parser then names its line). Read by :func:`read_scores`."""
    values = read_scores(np.asarray(texts, dtype=object).tolist())
    return None if values is None else np.array(values, dtype=np.float64)


def grade_array(texts: Sequence[str] | np.ndarray) -> np.ndarray | None:
    """Many grade fields as int64, each as :func:`parse_grade` reads it; None when one is not a plain
    integer of at most 18 digits (the caller's careful parser then reads, or names, that line)."""
    text, plain = _plain_integers(texts)
    if not plain.all() or (len(text) and text.dtype.itemsize // 4 > 18):
        return None
    return text.astype(np.int64) if len(text) else np.empty(0, dtype=np.int64)
