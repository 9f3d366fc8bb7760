"""Prediction-powered inference of a system's mean metric, from machine judgments (B) on all N evaluated
queries and human judgments (A) on n of them: PPI++ by default, plain PPI on request, each stratified
when the queries fall into strata.

PPI++ (Angelopoulos, Duchi and Zrnic 2023, "PPI++: Efficient Prediction-Powered Inference",
arXiv 2311.01453; the mean-estimation case) weighs the machine by a power-tuning ``lambda``. As in
the paper, the n queries A judges are the labelled set and the other U = N - n queries the
unlabelled one (disjoint, so the two means below are independent)::

    theta = lambda * mean_U(M_B) + mean_n(M_A - lambda * M_B)
    theta +- z * sqrt(lambda^2 * var_U(M_B) / U + var_n(M_A - lambda * M_B) / n)

(sample variances, ddof = 1; z = 1.959964 for 95%). ``lambda`` minimises that variance: the
covariance of M_A and M_B on the n labelled queries over (1 + n / U) times the variance of M_B, the
factor (1 + n / U) being the finite-sample one of the paper; it is estimated as ``ppi_py``'s
``ppi_mean_ci(Y, Yhat, Yhat_unlabeled, lam=None)`` estimates it (:func:`power_tuned_lambda`: the
covariance with 1 / n, the variance of M_B over the labelled and the unlabelled queries together,
ddof = 1) and clipped to [0, 1]. lambda = 0 is the human-only estimate; a poor machine judge gets a
small lambda, so the interval is never much wider than the humans' alone (only by the error of
lambda's estimate). When A judges every query but one (U < 2), lambda is 0.

Plain PPI (Angelopoulos et al., Science 2023; :data:`METHODS` ``"ppi"``, as retbench computed it
before PPI++) weighs the machine by 1 and reads it on all N queries, the n included::

    theta = mean_N(M_B) + mean_n(M_A - M_B)
    theta +- z * sqrt(var_N(M_B) / N + var_n(M_A - M_B) / n)

Stratified (:func:`ppi_stratified`): with the queries in strata h (a facet's values), each stratum
gets its own estimate and its own lambda, and theta = sum_h (N_h / N) theta_h, with variance
sum_h (N_h / N)^2 var_h; a stratum needs 2 queries judged by A and 2 evaluated.

Beside it, the naive estimates: human only, mean_n(M_A) +- z * sqrt(var_n(M_A) / n), and machine only,
mean_N(M_B) +- z * sqrt(var_N(M_B) / N) (neither stratified).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from corpora import RetbenchError, UnknownNameError

__all__ = ["METHODS", "PPI_PLUS", "Z_95", "Estimate", "PPIResult", "power_tuned_lambda", "ppi", "ppi_stratified"]

#: The 97.5% quantile of the standard normal: a 95% two-sided interval.
Z_95 = 1.959964
#: The default method: PPI++, the machine's weight lambda chosen from the data.
PPI_PLUS = "ppi++"
#: The estimators, by name.
METHODS = {
    PPI_PLUS: ("PPI++: the machine weighted by lambda = cov(M_A, M_B) / ((1 + n/U) var(M_B)), clipped to [0, 1], "
               "n the queries A judges, U = N - n the others"),
    "ppi": "plain PPI: the machine weighted by 1",
}


@dataclass(frozen=True)
class Estimate:
    """A mean and its interval (``low``, ``high``), from ``n`` queries."""

    mean: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class PPIResult:
    """The prediction-powered estimate beside the human-only and machine-only ones; ``method`` (a key
    of :data:`METHODS`) made it, with the machine's weight ``lambdas`` per stratum (one entry, stratum
    ``""``, when not stratified)."""

    ppi: Estimate
    human: Estimate
    machine: Estimate
    method: str = PPI_PLUS
    lambdas: tuple[tuple[str, float], ...] = ()

    def to_dict(self) -> dict[str, dict[str, float | int]]:
        return {name: asdict(getattr(self, name)) for name in ("ppi", "human", "machine")}

    def lambda_text(self) -> str:
        """``λ 0.83``, or ``λ by stratum: a 0.80, b 0.31``.

        >>> PPIResult(Estimate(0, 0, 0, 2), Estimate(0, 0, 0, 2), Estimate(0, 0, 0, 2), lambdas=(("", 0.825),)).lambda_text()
        'λ 0.825'
        """
        if len(self.lambdas) == 1 and self.lambdas[0][0] == "":
            return f"λ {self.lambdas[0][1]:.3f}"
        return "λ by stratum: " + ", ".join(f"{name} {value:.3f}" for name, value in self.lambdas)


def _sample_variance(values: np.ndarray) -> float:
    return float(np.var(values, ddof=1))


def power_tuned_lambda(human: np.ndarray, machine_on_human: np.ndarray, machine_unlabelled: np.ndarray) -> float:
    """PPI++'s lambda for a mean, as ``ppi_py`` estimates it: ``cov_n(M_A, M_B) / ((1 + n/U) var(M_B))``
    with the covariance over the n labelled queries (divided by n) and the variance over the n
    labelled and the U unlabelled values of M_B together (ddof = 1), clipped to [0, 1]; 0 when M_B
    does not vary or U < 2.

    >>> same = np.array([0.1, 0.5, 0.9])  # cov 0.32 / 3; var 0.64 / 6 over 7 values; 1 + 3/4
    >>> power_tuned_lambda(same, same, np.array([0.1, 0.5, 0.9, 0.5]))  # 1 / 1.75
    0.5714285714285714
    """
    n, unlabelled = len(human), len(machine_unlabelled)
    if unlabelled < 2:
        return 0.0
    covariance = float(np.mean((human - human.mean()) * (machine_on_human - machine_on_human.mean())))
    variance = float(np.var(np.concatenate([machine_on_human, machine_unlabelled]), ddof=1))
    if variance == 0.0:
        return 0.0
    return min(1.0, max(0.0, covariance / ((1.0 + n / unlabelled) * variance)))


def _checked(machine_all: np.ndarray, human: np.ndarray, machine_on_human: np.ndarray, judged: Sequence[int] | None,
             where: str = "") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The three arrays as floats and the mask of the judged queries among the N, checked."""
    machine_all = np.asarray(machine_all, dtype=float)
    human = np.asarray(human, dtype=float)
    machine_on_human = np.asarray(machine_on_human, dtype=float)
    if len(human) != len(machine_on_human):
        raise ValueError("human and machine_on_human must hold the same queries")
    positions = np.arange(len(human)) if judged is None else np.asarray(judged, dtype=np.int64)
    if len(positions) != len(human) or len(set(positions.tolist())) != len(positions) or \
            not np.array_equal(machine_all[positions], machine_on_human):
        raise ValueError("judged must give the positions among machine_all of the queries of machine_on_human "
                         "(default: the first n)")
    mask = np.zeros(len(machine_all), dtype=bool)
    mask[positions] = True
    big_n, n = len(machine_all), len(human)
    if n < 2 or big_n < 2:
        raise RetbenchError(f"prediction-powered inference needs at least 2 queries judged by the humans (A) and 2 "
                            f"evaluated{where}, for a variance; got {n} and {big_n}. Fix: judge more queries in A"
                            + (", or stratify by a facet with fewer values" if where else ""))
    return machine_all, human, machine_on_human, mask


def _weighted(machine_all: np.ndarray, human: np.ndarray, machine_on_human: np.ndarray, judged: np.ndarray,
              method: str) -> tuple[float, float, float]:
    """(theta, its variance, lambda) of one stratum (see the module docstring)."""
    if method not in METHODS:
        raise UnknownNameError("PPI method", method, list(METHODS))
    if method == PPI_PLUS:
        unlabelled = machine_all[~judged]
        lam = power_tuned_lambda(human, machine_on_human, unlabelled)
        rectifier = human - lam * machine_on_human
        if lam == 0.0:
            return float(rectifier.mean()), _sample_variance(rectifier) / len(human), lam
        theta = float(lam * unlabelled.mean() + rectifier.mean())
        return theta, lam * lam * _sample_variance(unlabelled) / len(unlabelled) + \
            _sample_variance(rectifier) / len(human), lam
    rectifier = human - machine_on_human
    theta = float(machine_all.mean() + rectifier.mean())
    return theta, _sample_variance(machine_all) / len(machine_all) + _sample_variance(rectifier) / len(human), 1.0


def _naive(machine_all: np.ndarray, human: np.ndarray, z: float) -> tuple[Estimate, Estimate]:
    human_mean, machine_mean = float(human.mean()), float(machine_all.mean())
    human_half = z * math.sqrt(_sample_variance(human) / len(human))
    machine_half = z * math.sqrt(_sample_variance(machine_all) / len(machine_all))
    return (Estimate(human_mean, human_mean - human_half, human_mean + human_half, len(human)),
            Estimate(machine_mean, machine_mean - machine_half, machine_mean + machine_half, len(machine_all)))


def ppi(machine_all: np.ndarray, human: np.ndarray, machine_on_human: np.ndarray, z: float = Z_95,
        method: str = PPI_PLUS, judged: Sequence[int] | None = None) -> PPIResult:
    """The prediction-powered estimate from per-query values: ``machine_all`` (M_B on the N queries),
    ``human`` (M_A on the n queries A judges) and ``machine_on_human`` (M_B on those same n queries,
    in the same order), ``judged`` their positions among the N (None: the first n); ``method`` a key
    of :data:`METHODS`.

    >>> r = ppi(np.array([0.5, 0.7, 0.2, 0.6]), np.array([0.4, 0.9]), np.array([0.5, 0.7]), method="ppi")
    >>> round(r.ppi.mean, 6)  # 0.5 (machine on all 4) + 0.05 (mean of -0.1 and 0.2)
    0.55
    """
    machine_all, human, machine_on_human, mask = _checked(machine_all, human, machine_on_human, judged)
    theta, variance, lam = _weighted(machine_all, human, machine_on_human, mask, method)
    half = z * math.sqrt(variance)
    human_estimate, machine_estimate = _naive(machine_all, human, z)
    return PPIResult(Estimate(theta, theta - half, theta + half, len(human)), human_estimate, machine_estimate,
                     method, (("", lam),))


def ppi_stratified(machine_all: np.ndarray, human: np.ndarray, machine_on_human: np.ndarray,
                   strata_all: Sequence[str], z: float = Z_95, method: str = PPI_PLUS,
                   judged: Sequence[int] | None = None) -> PPIResult:
    """:func:`ppi` within each stratum (its own lambda), combined by the strata's shares of the N
    queries: theta = sum_h (N_h / N) theta_h, variance sum_h (N_h / N)^2 var_h. ``strata_all`` names
    each of the N queries' stratum; ``judged`` as for :func:`ppi`; strata in order of first appearance.

    >>> machine = np.array([0.2, 0.3, 0.25, 0.35, 0.8, 0.9, 0.85, 0.7])
    >>> r = ppi_stratified(machine, np.array([0.3, 0.4, 0.7, 0.9]), machine[[0, 1, 4, 5]], list("aaaabbbb"),
    ...                    judged=[0, 1, 4, 5])
    >>> [name for name, _ in r.lambdas]
    ['a', 'b']
    """
    machine_all, human, machine_on_human, mask = _checked(machine_all, human, machine_on_human, judged)
    strata_all = np.asarray(strata_all, dtype=object)
    if len(strata_all) != len(machine_all):
        raise ValueError("one stratum per query: strata_all names each of the N queries'")
    positions = np.flatnonzero(mask) if judged is None else np.asarray(judged, dtype=np.int64)
    big_n = len(machine_all)
    theta, variance, lambdas = 0.0, 0.0, []
    for name in dict.fromkeys(strata_all.tolist()):
        inside = strata_all == name
        mine = inside[positions]  # which of the n judged queries fall in this stratum
        where = np.flatnonzero(inside)
        local = np.searchsorted(where, positions[mine])  # their positions among the stratum's queries
        part = _checked(machine_all[inside], human[mine], machine_on_human[mine], local, f" in stratum {name!r}")
        theta_h, variance_h, lam = _weighted(*part, method)
        share = len(where) / big_n
        theta += share * theta_h
        variance += share * share * variance_h
        lambdas.append((str(name), lam))
    half = z * math.sqrt(variance)
    human_estimate, machine_estimate = _naive(machine_all, human, z)
    return PPIResult(Estimate(theta, theta - half, theta + half, len(human)), human_estimate, machine_estimate,
                     method, tuple(lambdas))
