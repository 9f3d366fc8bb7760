"""Sakai's effect size for several systems (``harness.core.power.anova_effect_sizes``): the residual
variance of the two-way ANOVA without replication, the standardised mean difference and its interval,
against the textbook sums of squares, statsmodels' ANOVA, and in comparisons.csv."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness import compare
from harness.core.options import Statistics
from harness.core.power import EFFECT_COLUMNS, anova_effect_sizes, power_table, residual_variance


def sums_of_squares_reference(scores: np.ndarray) -> float:
    """V_E from the sums of squares, as Sakai (2014) writes the two-way ANOVA without replication:
    S_T = sum (x_ij - x..)^2, S_A = n sum_i (x_.i - x..)^2 (systems), S_B = k sum_j (x_j. - x..)^2
    (topics), S_E = S_T - S_A - S_B, V_E = S_E / ((k - 1)(n - 1))."""
    n, k = scores.shape
    grand = sum(sum(row) for row in scores) / (n * k)
    total = sum((x - grand) ** 2 for row in scores for x in row)
    systems = n * sum((sum(scores[j][i] for j in range(n)) / n - grand) ** 2 for i in range(k))
    topics = k * sum((sum(row) / k - grand) ** 2 for row in scores)
    return (total - systems - topics) / ((k - 1) * (n - 1))


def _scores(seed: int, n: int = 30, k: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.random((n, 1)) + np.linspace(0, 0.2, k)[None, :] + rng.normal(0, 0.1, (n, k)), 0, 1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_residual_variance_is_the_sums_of_squares(seed: int) -> None:
    scores = _scores(seed)
    assert residual_variance(scores) == pytest.approx(sums_of_squares_reference(scores),
                                                      rel=1e-12)


def test_residual_variance_equals_statsmodels_anova() -> None:
    smf = pytest.importorskip("statsmodels.formula.api")
    sm = pytest.importorskip("statsmodels.api")
    scores = _scores(4, n=12, k=4)
    frame = pd.DataFrame([{"y": scores[q, s], "query": f"q{q}", "system": f"s{s}"}
                          for q in range(12) for s in range(4)])
    table = sm.stats.anova_lm(smf.ols("y ~ C(system) + C(query)", data=frame).fit())
    residual = table.loc["Residual"]
    assert residual["df"] == 33
    assert residual_variance(scores) == pytest.approx(residual["sum_sq"] / residual["df"], rel=1e-10)


def test_effect_size_and_interval_follow_the_formula() -> None:
    scores = _scores(5, n=25, k=4)
    pairs = [(3, 0), (1, 2)]
    got = anova_effect_sizes(scores, pairs, alpha=0.05)
    variance = sums_of_squares_reference(scores)
    t = stats.t.ppf(0.975, (25 - 1) * (4 - 1))
    for (a, b), (effect, low, high) in zip(pairs, got):
        expected = (scores[:, a].mean() - scores[:, b].mean()) / math.sqrt(variance)
        assert effect == pytest.approx(expected, rel=1e-10)
        assert (low, high) == pytest.approx((expected - t * math.sqrt(2 / 25), expected + t * math.sqrt(2 / 25)),
                                            rel=1e-9)
    assert got[0][0] > 0  # system 3 has the largest true effect


def test_two_systems_give_sqrt_two_times_d_z() -> None:
    scores = _scores(6, n=40, k=2)
    d = scores[:, 0] - scores[:, 1]
    assert anova_effect_sizes(scores, [(0, 1)])[0][0] == pytest.approx(math.sqrt(2) * d.mean() / d.std(ddof=1),
                                                                      rel=1e-10)


def test_a_query_effect_does_not_move_it() -> None:
    """A query easier for every system by the same amount changes nothing: the ANOVA takes it out."""
    scores = _scores(7)
    shifted = scores + np.linspace(0, 3, scores.shape[0])[:, None]
    assert np.allclose(anova_effect_sizes(shifted, [(0, 4)]), anova_effect_sizes(scores, [(0, 4)]), rtol=1e-9)


def test_degenerate_cases() -> None:
    same = np.tile(np.array([[0.1], [0.5], [0.9]]), (1, 3))
    assert anova_effect_sizes(same, [(0, 1)])[0][0] == 0.0 and math.isnan(anova_effect_sizes(same, [(0, 1)])[0][1])
    shifted = same + np.array([0.0, 0.1, 0.2])[None, :]  # an exact shift: no residual at all
    assert anova_effect_sizes(shifted, [(2, 0)])[0][0] == math.inf
    assert all(math.isnan(v) for v in anova_effect_sizes(np.array([[0.1, 0.2]]), [(0, 1)])[0])


def test_comparisons_carry_it_over_every_system_of_the_run() -> None:
    result = compare("bm25,lsa,weighted,rrf", "article", "ndcg@5,mrr", statistics=Statistics(bootstrap_samples=100))
    table = power_table(result.per_query, result.comparisons)
    systems = ["bm25", "lsa", "weighted", "rrf"]
    for metric in ("ndcg@5", "mrr"):
        scores = np.column_stack([result.per_query.loc[result.per_query.system == s, metric].to_numpy()
                                  for s in systems])
        variance = sums_of_squares_reference(scores)
        for row in table[table.metric == metric].itertuples(index=False):
            difference = scores[:, systems.index(row.system_a)].mean() - scores[:, systems.index(row.system_b)].mean()
            assert row.effect_size_anova == pytest.approx(difference / math.sqrt(variance), rel=1e-9, abs=1e-12)
            assert row.effect_size_anova_low < row.effect_size_anova < row.effect_size_anova_high
    # the stored record carries the same columns, and the same inputs give the same bytes
    again = power_table(result.per_query, result.comparisons)
    assert table[EFFECT_COLUMNS].to_csv(index=False) == again[EFFECT_COLUMNS].to_csv(index=False)
    assert list(result.power.columns)[-3:] == EFFECT_COLUMNS
