"""Effect size and power (``harness.core.power``) against statsmodels' ``TTestPower`` and hand values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.power import TTestPower

from harness import compare
from harness.core.power import (POWER_COLUMNS, detectable_effect, paired_power, paired_t_power, power_table,
                           queries_needed)
from harness.core.options import Statistics

REFERENCE = TTestPower()


def with_moments(n: int, mean: float, sd: float, seed: int) -> np.ndarray:
    """n paired differences whose sample mean and sample sd (ddof=1) are exactly ``mean`` and ``sd``."""
    x = np.random.default_rng(seed).normal(size=n)
    return mean + sd * (x - x.mean()) / x.std(ddof=1)


def reference_power(effect: float, n: int, alpha: float = 0.05) -> float:
    """statsmodels' two-sided power. It reads the lower tail with scipy's ``nct.cdf``, which is NaN far out
    (d_z 0.8 with 225 pairs, 11.5 with 2); that tail is then below 1e-30, so the two-sided power is the
    upper tail alone: statsmodels' one-sided power at alpha / 2."""
    power = REFERENCE.power(effect_size=effect, nobs=n, alpha=alpha, alternative="two-sided")
    if math.isnan(power):
        power = REFERENCE.power(effect_size=effect, nobs=n, alpha=alpha / 2, alternative="larger")
    return power


@pytest.mark.parametrize("n", [3, 5, 14, 50, 225])
@pytest.mark.parametrize("effect", [0.0, 0.1, 0.35, 0.8, 1.5])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_power_equals_statsmodels(n: int, effect: float, alpha: float) -> None:
    assert paired_t_power(effect, n, alpha) == pytest.approx(reference_power(effect, n, alpha), abs=1e-10)


@pytest.mark.parametrize("n", [2, 5, 14, 50, 1000])
def test_detectable_effect_equals_statsmodels(n: int) -> None:
    effect = detectable_effect(n)
    # statsmodels' power at our solution is 0.8; its own solver stops within about 2e-5 of it
    assert reference_power(effect, n) == pytest.approx(0.8, abs=1e-9)
    expected = REFERENCE.solve_power(effect_size=None, nobs=n, alpha=0.05, power=0.8, alternative="two-sided")
    assert effect == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize("effect", [0.05, 0.2, 0.5, 1.0, 2.5, -0.5])
def test_queries_needed_is_the_smallest_n_statsmodels_gives_power_080(effect: float) -> None:
    n = queries_needed(effect)
    assert reference_power(abs(effect), n) >= 0.8
    assert n == 2 or reference_power(abs(effect), n - 1) < 0.8
    assert n == math.ceil(REFERENCE.solve_power(effect_size=abs(effect), nobs=None, alpha=0.05, power=0.8))


def test_hand_values() -> None:
    # G*Power's matched-pairs t-test: d_z = 0.5, alpha 0.05 two-sided, power 0.8 -> 34 pairs
    assert queries_needed(0.5) == 34
    # no effect: power is the level itself, and no number of queries detects it
    assert paired_t_power(0.0, 30) == pytest.approx(0.05, abs=1e-12)
    assert queries_needed(0.0) is None
    # large effects: with 2 pairs (t with 1 df) d_z must reach 11.55, with 3 pairs 3.26
    assert queries_needed(30.0) == 2
    assert queries_needed(5.0) == 3 and paired_t_power(5.0, 2) < 0.8 <= paired_t_power(5.0, 3)


def test_a_synthetic_case_with_known_variance() -> None:
    # 40 queries, mean difference 0.03, sd 0.12: d_z = 0.25 exactly
    d = with_moments(40, 0.03, 0.12, seed=7)
    result = paired_power(d)
    assert result.effect_size == pytest.approx(0.25, abs=1e-12)
    expected_effect = REFERENCE.solve_power(effect_size=None, nobs=40, alpha=0.05, power=0.8)
    assert result.detectable_difference == pytest.approx(expected_effect * 0.12, rel=1e-4)
    assert reference_power(result.detectable_difference / 0.12, 40) == pytest.approx(0.8, abs=1e-9)
    expected_n = REFERENCE.solve_power(effect_size=0.25, nobs=None, alpha=0.05, power=0.8)
    assert result.queries_needed == math.ceil(expected_n) == 128
    assert result.wins + result.ties + result.losses == 40


def test_wins_ties_losses_and_the_zero_variance_cases() -> None:
    result = paired_power(np.array([0.5, 0.0, -0.25, 0.0, 0.1]))
    assert (result.wins, result.ties, result.losses) == (2, 2, 1)
    assert result.effect_size == pytest.approx(np.mean([0.5, 0, -0.25, 0, 0.1]) / np.std([0.5, 0, -0.25, 0, 0.1], ddof=1))
    # identical systems: no effect, nothing to detect
    same = paired_power(np.zeros(6))
    assert (same.effect_size, same.detectable_difference, same.queries_needed) == (0.0, 0.0, None)
    # the same shift on every query: an infinite standardised effect, found with the fewest pairs a t-test takes
    shift = paired_power(np.full(6, -0.1))
    assert (shift.losses, shift.effect_size, shift.detectable_difference, shift.queries_needed) == (6, -math.inf, 0.0, 2)
    # one query: no sd
    one = paired_power(np.array([0.3]))
    assert one.wins == 1 and math.isnan(one.effect_size) and math.isnan(one.detectable_difference)
    assert one.queries_needed is None


def test_power_table_on_the_bundled_corpus() -> None:
    result = compare("bm25,lsa,weighted,rrf", "article", "hit@3,recall@5,mrr,ndcg@5",
                     statistics=Statistics(bootstrap_samples=200))
    table = power_table(result.per_query, result.comparisons)
    assert list(table.columns) == ["system_a", "system_b", "metric", *POWER_COLUMNS]
    assert len(table) == len(result.comparisons) == 24
    for c, row in zip(result.comparisons, table.to_dict("records")):
        assert (row["system_a"], row["system_b"], row["metric"]) == (c.system_a, c.system_b, c.metric)
        assert row["wins"] + row["losses"] == c.n_differing and row["ties"] == c.n_queries - c.n_differing
        assert np.sign(row["effect_size"]) == np.sign(c.mean_diff)
    # bm25 - lsa on ndcg@5: +0.012 over 14 queries, 6 of them differing
    row = table[(table.system_a == "bm25") & (table.system_b == "lsa") & (table.metric == "ndcg@5")].iloc[0]
    a = result.per_query.loc[result.per_query.system == "bm25", "ndcg@5"].to_numpy()
    b = result.per_query.loc[result.per_query.system == "lsa", "ndcg@5"].to_numpy()
    d = a - b
    assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), abs=1e-12)
    assert reference_power(row["detectable_difference"] / d.std(ddof=1), 14) == pytest.approx(0.8, abs=1e-9)
    needed = math.ceil(REFERENCE.solve_power(effect_size=abs(d.mean() / d.std(ddof=1)), nobs=None, alpha=0.05, power=0.8))
    assert row["queries_needed"] == needed
    # identical columns (every system finds something in the top 3 for the same queries): no queries needed
    same = table[table.metric == "hit@3"]
    assert same["queries_needed"].isna().all() and (same["effect_size"] == 0).all()
    # queries_needed written empty; the ANOVA effect size 0 (no residual variance), its interval empty
    assert ",hit@3,0,14,0,0.0,0.0,,0.0,,\n" in same.to_csv(index=False)
