"""The gains of the graded measures (nDCG), declared once.

A gain turns a judgment grade into what a document at that rank is worth before the discount;
grades <= 0 gain nothing, in the ranking and in the ideal (as trec_eval's gains). Each gain has a
scalar form (the per-query specification in :mod:`harness.core.metrics` uses it), an array form (the
batch path in :mod:`harness.core.batch_metrics`), and the description the results manifest records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from corpora import RetbenchError

#: 2^1024 is past the largest float (about 1.8e308), so no exponential gain is finite from here on.
FIRST_INFINITE_EXP_GRADE = 1024


def exp_gain_overflow(grade: int, query_id: str | None = None) -> RetbenchError:
    """The error for an exponential-gain DCG that a float cannot hold: nDCG would be inf/inf."""
    where = f" of query {query_id!r}" if query_id is not None else ""
    return RetbenchError(
        f"ndcg_exp: grade {grade}{where} makes the exponential gain 2^{grade} - 1, summed over the ranking, larger "
        "than the largest float (about 1.8e308), so nDCG would be inf/inf. Fix: use ndcg@k (linear gain) for "
        "grades this large, or rescale the grades (exponential gain suits small grades such as 0-3)"
    )


def linear_gain(grade: int) -> float:
    """g for a grade g > 0, else 0.

    >>> linear_gain(3), linear_gain(-1)
    (3.0, 0.0)
    """
    return float(grade) if grade > 0 else 0.0


def exponential_gain(grade: int) -> float:
    """2^g - 1 for a grade g > 0, else 0; a grade of 1024 or more raises (never a silent inf).

    >>> exponential_gain(3), exponential_gain(0)
    (7.0, 0.0)
    """
    if grade <= 0:
        return 0.0
    if grade >= FIRST_INFINITE_EXP_GRADE:  # before 2**grade: with grade 2^62 that integer would not fit in memory
        raise exp_gain_overflow(grade)
    return float(2**grade - 1)


def linear_gains(grades: np.ndarray) -> np.ndarray:
    """:func:`linear_gain` of every grade, as float64."""
    return np.maximum(grades, 0).astype(np.float64)


def exponential_gains(grades: np.ndarray) -> np.ndarray:
    """:func:`exponential_gain` of every grade, as float64; past the float range it is inf (the
    caller names the grade)."""
    return np.exp2(np.maximum(grades, 0).astype(np.float64)) - 1.0


@dataclass(frozen=True)
class Gain:
    """One gain: its name (``ndcg(gain=...)``), the manifest's description, its two forms."""

    name: str
    description: str
    scalar: Callable[[int], float]
    array: Callable[[np.ndarray], np.ndarray]


GAINS: dict[str, Gain] = {
    gain.name: gain
    for gain in (
        Gain("linear", "linear (grade)", linear_gain, linear_gains),
        Gain("exp", "exponential (2^grade - 1)", exponential_gain, exponential_gains),
    )
}
