"""How far two judgment sets agree, on the (query, document) pairs both judge, and how far the
systems' ranking moves from one set to the other.

- Cohen's kappa on relevance (grade >= ``rel_threshold``): (p_o - p_e) / (1 - p_e), p_o the share of
  pairs both call the same, p_e the agreement expected from each set's own rate (NaN when p_e = 1).
- Krippendorff's alpha, ordinal, on the grades (two coders, every pair judged by both):
  1 - D_o / D_e over the coincidence matrix o (each pair adds 1 to o[a, b] and o[b, a]), with n_g its
  marginals, n = sum n_g, and the ordinal distance d(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2;
  D_o = sum o[c, k] d(c, k) / n, D_e = sum n_c n_k d(c, k) / (n (n - 1)) (NaN when D_e = 0).
- The confusion matrix: pairs by (grade in A, grade in B).
- Between two rankings of the systems: Kendall's tau-b (ties in either corrected, as
  ``scipy.stats.kendalltau``) and tau_AP (Yilmaz, Aslam and Robertson 2008), which weighs a swap
  near the top more: with the systems ordered by B's values (estimated) and A's taken as the truth,
  tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1, C(i) the systems above the i-th that A
  also puts above it (strictly greater value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from corpora import RetbenchError

__all__ = ["Agreement", "agreement", "cohen_kappa", "common_pairs", "kendall_tau", "krippendorff_alpha_ordinal",
           "tau_ap"]

Judgments = Mapping[str, Mapping[str, int]]


def common_pairs(a: Judgments, b: Judgments) -> list[tuple[str, str, int, int]]:
    """(query, doc, grade in ``a``, grade in ``b``) for every pair both judge, in ``a``'s order."""
    return [(q, d, int(grade), int(b[q][d])) for q, docs in a.items() if q in b
            for d, grade in docs.items() if d in b[q]]


def cohen_kappa(first: Sequence[int] | np.ndarray, second: Sequence[int] | np.ndarray) -> float:
    """Cohen's kappa of two label sequences of equal length (any labels).

    >>> round(cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]), 4)
    0.5
    """
    x, y = np.asarray(first), np.asarray(second)
    labels = np.union1d(x, y)
    if not len(x):
        return float("nan")
    px = np.array([(x == label).mean() for label in labels])
    py = np.array([(y == label).mean() for label in labels])
    observed = float((x == y).mean())
    expected = float(px @ py)
    return float("nan") if expected == 1.0 else (observed - expected) / (1.0 - expected)


def krippendorff_alpha_ordinal(first: Sequence[int] | np.ndarray, second: Sequence[int] | np.ndarray) -> float:
    """Krippendorff's alpha with the ordinal metric for two coders who rated every unit (the module
    docstring has the formula).

    Hand-derived: grades (0, 0), (1, 1), (1, 2): o = [[2,0,0],[0,2,1],[0,1,0]], n_g = (2, 3, 1), n = 6;
    d(0,1) = (2+3 - 2.5)^2 = 6.25, d(1,2) = (3+1 - 2)^2 = 4, d(0,2) = (2+3+1 - 1.5)^2 = 20.25;
    D_o = 2*4/6, D_e = 2*(2*3*6.25 + 3*1*4 + 2*1*20.25)/30 = 6, alpha = 1 - (4/3)/6 = 7/9.

    >>> round(krippendorff_alpha_ordinal([0, 1, 1], [0, 1, 2]), 6) == round(7 / 9, 6)
    True
    """
    x, y = np.asarray(first), np.asarray(second)
    values = np.union1d(x, y)
    index = {v: j for j, v in enumerate(values.tolist())}
    m = len(values)
    coincidence = np.zeros((m, m))
    for a, b in zip(x.tolist(), y.tolist()):
        coincidence[index[a], index[b]] += 1
        coincidence[index[b], index[a]] += 1
    totals = coincidence.sum(axis=1)
    n = totals.sum()
    if n < 2:
        return float("nan")
    cumulative = np.concatenate([[0.0], np.cumsum(totals)])
    c, k = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    low, high = np.minimum(c, k), np.maximum(c, k)
    distance = (cumulative[high + 1] - cumulative[low] - (totals[c] + totals[k]) / 2) ** 2
    observed = (coincidence * distance).sum() / n
    expected = (np.outer(totals, totals) * distance).sum() / (n * (n - 1))
    return float("nan") if expected == 0 else float(1.0 - observed / expected)


def kendall_tau(first: Sequence[float] | np.ndarray, second: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b of two value sequences: (concordant - discordant) / sqrt((n0 - t1)(n0 - t2)),
    n0 the pairs, t1 and t2 those tied in each (NaN when either is constant).

    >>> kendall_tau([1, 2, 3], [1, 3, 2])
    0.3333333333333333
    """
    x, y = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    i, j = np.triu_indices(len(x), k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    n0 = len(i)
    untied_x, untied_y = n0 - int((dx == 0).sum()), n0 - int((dy == 0).sum())
    if untied_x == 0 or untied_y == 0:
        return float("nan")
    return float((dx * dy).sum() / np.sqrt(untied_x * untied_y))


def tau_ap(truth: Sequence[float] | np.ndarray, estimate: Sequence[float] | np.ndarray) -> float:
    """tau_AP of the ranking by ``estimate`` against the ranking by ``truth`` (higher is better;
    ties in ``estimate`` keep the given order). 1 when the orders agree, -1 when reversed.

    >>> tau_ap([3, 2, 1], [3, 2, 1]), tau_ap([3, 2, 1], [1, 2, 3])
    (1.0, -1.0)
    """
    true_values = np.asarray(truth, dtype=float)
    order = np.argsort(-np.asarray(estimate, dtype=float), kind="stable")
    n = len(order)
    if n < 2:
        return float("nan")
    total = 0.0
    for i in range(1, n):
        above = true_values[order[:i]]
        total += float((above > true_values[order[i]]).sum()) / i
    return 2.0 * total / (n - 1) - 1.0


@dataclass(frozen=True)
class Agreement:
    """Agreement of judgment sets A and B on the pairs both judge (see the module docstring)."""

    n_pairs: int
    cohen_kappa: float
    krippendorff_alpha: float
    grades: list[int]
    confusion: np.ndarray  # rows: A's grade, columns: B's grade, over ``grades``
    relevance_agreement: float  # share of pairs both call relevant or both not


def agreement(a: Judgments, b: Judgments, rel_threshold: int = 1) -> Agreement:
    """:class:`Agreement` of ``a`` and ``b``; no pair judged in both is a :class:`~corpora.RetbenchError`."""
    pairs = common_pairs(a, b)
    if not pairs:
        raise RetbenchError("the two judgment sets share no judged (query, document) pair, so their agreement is "
                            "undefined. Fix: check that both use the same query and document ids")
    grades_a = np.array([p[2] for p in pairs])
    grades_b = np.array([p[3] for p in pairs])
    relevant_a, relevant_b = grades_a >= rel_threshold, grades_b >= rel_threshold
    grades = sorted(set(grades_a.tolist()) | set(grades_b.tolist()))
    position = {g: j for j, g in enumerate(grades)}
    confusion = np.zeros((len(grades), len(grades)), dtype=np.int64)
    for x, y in zip(grades_a.tolist(), grades_b.tolist()):
        confusion[position[x], position[y]] += 1
    return Agreement(len(pairs), cohen_kappa(relevant_a, relevant_b), krippendorff_alpha_ordinal(grades_a, grades_b),
                     grades, confusion, float((relevant_a == relevant_b).mean()))
