"""Declarative checks of retriever parameters, in scikit-learn's words plus a fix.

``check_float(k1, "k1", "bm25", low=0.0, default=1.2)`` raises
"The 'k1' parameter of bm25 must be a finite float >= 0. Got inf instead. Fix: ..." for inf, NaN, a
bool or a value out of range; ``check_int`` the same for integers. Infinity is never a parameter:
it silently turns every score into 0 or NaN (``bm25(k1=inf)`` scored every metric 0).
"""

from __future__ import annotations

import math
import numbers

from corpora import ParameterError


def _error(parameter: str, owner: str, expected: str, got: object, default: object) -> ParameterError:
    error = ParameterError(parameter, owner, expected, got)
    error.args = (f"{error} Fix: give {parameter} {expected}, e.g. the default {owner}({parameter}={default!r}).",)
    return error


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _range(kind: str, low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"{kind} in [{_number(low)}, {_number(high)}]"
    if low is not None:
        return f"{kind} >= {_number(low)}"
    if high is not None:
        return f"{kind} <= {_number(high)}"
    return kind


def check_float(value: object, parameter: str, owner: str, *, low: float | None = None,
                high: float | None = None, default: float) -> float:
    """``value`` as a float when it is a finite real number in [low, high] (bools refused).

    >>> check_float(0.5, "alpha", "weighted", low=0, high=1, default=0.5)
    0.5
    >>> check_float(float("inf"), "k1", "bm25", low=0, default=1.2)
    Traceback (most recent call last):
    ...
    corpora.errors.ParameterError: The 'k1' parameter of bm25 must be a finite float >= 0. Got inf instead. \
Fix: give k1 a finite float >= 0, e.g. the default bm25(k1=1.2).
    """
    expected = "a " + _range("finite float", low, high)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise _error(parameter, owner, expected, value, default)
    if (low is not None and value < low) or (high is not None and value > high):
        raise _error(parameter, owner, expected, value, default)
    return float(value)


def check_int(value: object, parameter: str, owner: str, *, low: int | None = None,
              high: int | None = None, default: int) -> int:
    """``value`` when it is an int in [low, high] (bools and floats refused).

    >>> check_int(10, "depth", "rrf", low=1, default=10)
    10
    """
    expected = "an " + _range("int", low, high)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _error(parameter, owner, expected, value, default)
    if (low is not None and value < low) or (high is not None and value > high):
        raise _error(parameter, owner, expected, value, default)
    return int(value)
