"""Prediction-powered inference (Angelopoulos et al., Science 2023) of a system's mean metric, from
machine judgments (B) on all N evaluated queries and human judgments (A) on n of them.

theta = mean_N(M_B) + mean_n(M_A - M_B), with the interval
theta +- z * sqrt(var_N(M_B) / N + var_n(M_A - M_B) / n) (sample variances, ddof = 1; z = 1.959964 for
95%), beside the naive estimates: human only, mean_n(M_A) +- z * sqrt(var_n(M_A) / n), and machine only,
mean_N(M_B) +- z * sqrt(var_N(M_B) / N). The machine may be biased; PPI corrects the bias with the
human subset and is narrower than the human-only interval when the machine tracks the human.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from corpora import RetbenchError

__all__ = ["Z_95", "Estimate", "PPIResult", "ppi"]

#: The 97.5% quantile of the standard normal: a 95% two-sided interval.
Z_95 = 1.959964


@dataclass(frozen=True)
class Estimate:
    """A mean and its interval (``low``, ``high``), from ``n`` queries."""

    mean: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class PPIResult:
    """The prediction-powered estimate beside the human-only and machine-only ones."""

    ppi: Estimate
    human: Estimate
    machine: Estimate

    def to_dict(self) -> dict[str, dict[str, float | int]]:
        return {name: asdict(getattr(self, name)) for name in ("ppi", "human", "machine")}


def _sample_variance(values: np.ndarray) -> float:
    return float(np.var(values, ddof=1))


def ppi(machine_all: np.ndarray, human: np.ndarray, machine_on_human: np.ndarray, z: float = Z_95) -> PPIResult:
    """PPI from per-query values: ``machine_all`` (M_B on the N queries), ``human`` (M_A on the n
    queries A judges) and ``machine_on_human`` (M_B on those same n queries, in the same order).

    >>> r = ppi(np.array([0.5, 0.7, 0.2, 0.6]), np.array([0.4, 0.9]), np.array([0.5, 0.7]))
    >>> round(r.ppi.mean, 6)  # 0.5 (machine on all 4) + 0.05 (mean of -0.1 and 0.2)
    0.55
    """
    machine_all = np.asarray(machine_all, dtype=float)
    human = np.asarray(human, dtype=float)
    machine_on_human = np.asarray(machine_on_human, dtype=float)
    if len(human) != len(machine_on_human):
        raise ValueError("human and machine_on_human must hold the same queries")
    big_n, n = len(machine_all), len(human)
    if n < 2 or big_n < 2:
        raise RetbenchError(f"prediction-powered inference needs at least 2 queries judged by the humans (A) and 2 "
                            f"evaluated, for a variance; got {n} and {big_n}. Fix: judge more queries in A")
    rectifier = human - machine_on_human
    theta = float(machine_all.mean() + rectifier.mean())
    half = z * math.sqrt(_sample_variance(machine_all) / big_n + _sample_variance(rectifier) / n)
    human_mean, machine_mean = float(human.mean()), float(machine_all.mean())
    human_half = z * math.sqrt(_sample_variance(human) / n)
    machine_half = z * math.sqrt(_sample_variance(machine_all) / big_n)
    return PPIResult(Estimate(theta, theta - half, theta + half, n),
                     Estimate(human_mean, human_mean - human_half, human_mean + human_half, n),
                     Estimate(machine_mean, machine_mean - machine_half, machine_mean + machine_half, big_n))
