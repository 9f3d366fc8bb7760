"""Paired bootstrap, randomisation test and Holm: against the article's loop and hand-derived values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.statistics import (
    EXACT_UP_TO,
    Comparison,
    bootstrap_means,
    compare_systems,
    exact_p_value,
    holm,
    percentile_interval,
    randomisation_p_values,
    sign_flip_tests,
    smallest_adjusted_p,
    smallest_p_value,
)
from harness.core.options import Statistics


def article_bootstrap(d: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """evaluate.py's loop, verbatim in spirit: one rng.choice per resample."""
    rng = np.random.default_rng(seed)
    return np.sort([rng.choice(d, size=len(d)).mean() for _ in range(n_samples)])


@pytest.mark.parametrize("n_queries", [1, 3, 14, 57])
def test_vectorised_bootstrap_is_the_article_loop(n_queries):
    d = np.random.default_rng(n_queries).normal(size=n_queries)
    expected = article_bootstrap(d, 5000, seed=0)
    got = bootstrap_means(d[:, None], 5000, seed=0)[:, 0]
    np.testing.assert_array_equal(got, expected)
    low, high = percentile_interval(got[:, None])
    assert (low[0], high[0]) == (expected[125], expected[4874])


def test_bootstrap_chunks_do_not_change_the_stream(monkeypatch):
    import harness.core.statistics as statistics

    d = np.random.default_rng(3).normal(size=(40, 2))
    whole = bootstrap_means(d, 1000, seed=7)
    monkeypatch.setattr(statistics, "_CHUNK_CELLS", 40 * 7)  # 7 resamples per chunk
    np.testing.assert_array_equal(bootstrap_means(d, 1000, seed=7), whole)


def test_same_seed_same_bytes_other_seed_other_values():
    d = np.random.default_rng(1).normal(size=(30, 3))
    a = bootstrap_means(d, 500, seed=0)
    assert a.tobytes() == bootstrap_means(d, 500, seed=0).tobytes()
    assert a.tobytes() != bootstrap_means(d, 500, seed=1).tobytes()
    p = randomisation_p_values(d, 500, seed=0)
    assert p.tobytes() == randomisation_p_values(d, 500, seed=0).tobytes()


def test_percentile_indices_follow_the_article():
    means = np.arange(5000, dtype=float)[:, None]
    low, high = percentile_interval(means, 0.95)
    assert (low[0], high[0]) == (125.0, 4874.0)
    low, high = percentile_interval(np.arange(1000, dtype=float)[:, None], 0.90)
    assert (low[0], high[0]) == (50.0, 949.0)


def test_randomisation_p_value_of_a_clear_and_of_no_difference():
    clear = np.full((20, 1), 0.5)  # every query better by 0.5: only the all-positive flips reach it
    p = randomisation_p_values(clear, 20000, seed=0)[0]
    assert p < 0.001
    noise = np.array([[0.1], [-0.1], [0.2], [-0.2]])  # mean 0: every flip is as extreme
    assert randomisation_p_values(noise, 999, seed=0)[0] == 1.0


def test_randomisation_matches_the_exact_sign_flip_distribution():
    d = np.array([0.3, 0.1, -0.05, 0.2, 0.15, 0.4, -0.1, 0.25])
    signs = np.array(np.meshgrid(*[[-1, 1]] * len(d))).reshape(len(d), -1).T
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    estimate = randomisation_p_values(d[:, None], 40000, seed=0)[0]
    assert abs(estimate - exact) < 0.01


def test_holm_hand_derived():
    # sorted p: 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> max(0.06, 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]).tolist() == [1.0, 1.0]
    assert holm([]).tolist() == []


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_holm_is_monotone_bounded_and_never_below_raw(p):
    adjusted = holm(p)
    assert np.all(adjusted >= np.asarray(p) - 1e-15) and np.all(adjusted <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= -1e-15)


def test_compare_systems_pairs_and_holm_per_metric():
    rng = np.random.default_rng(0)
    values = {s: {"m1": rng.random(25), "m2": rng.random(25)} for s in ("a", "b", "c")}
    values["a"]["m1"] = values["b"]["m1"] + 0.3
    comparisons = compare_systems(values, [("a", "b"), ("a", "c"), ("b", "c")], ["m1", "m2"], 2000, 0)
    assert [(c.system_a, c.system_b, c.metric) for c in comparisons][:3] == [("a", "b", "m1"), ("a", "c", "m1"),
                                                                          ("b", "c", "m1")]
    ab = comparisons[0]
    assert ab.mean_diff == pytest.approx(0.3)
    assert ab.ci_low == pytest.approx(0.3) and ab.ci_high == pytest.approx(0.3)
    assert ab.significant and ab.verdict == "a is better"
    m1 = [c for c in comparisons if c.metric == "m1"]
    np.testing.assert_allclose([c.p_adjusted for c in m1], holm([c.p_value for c in m1]))


def brute_force_p(d: np.ndarray) -> float:
    """Every one of the 2^n sign patterns of all n differences, from the definition (means, not sums)."""
    from itertools import product

    observed = abs(d.mean())
    flipped = [abs(np.mean(np.array(signs) * d)) for signs in product([1.0, -1.0], repeat=len(d))]
    return float(np.mean([f >= observed - 1e-9 for f in flipped]))


@pytest.mark.parametrize("seed", range(12))
def test_exact_p_equals_brute_force_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 11))
    # metric differences: multiples of 1/3 and 1/4 (ties between patterns), zeros, and plain floats
    d = rng.choice([0.0, 1 / 3, -1 / 3, 0.25, -0.5, 2 / 3], size=n) if seed % 2 else rng.normal(size=n)
    d[rng.random(n) < 0.2] = 0.0
    assert exact_p_value(d) == pytest.approx(brute_force_p(d), abs=0)


def test_exact_p_hand_derived():
    # m = 4 differing, all the same sign: only the observed pattern and its mirror reach |sum| = 1
    assert exact_p_value(np.array([0.25, 0.25, 0.25, 0.25, 0.0, 0.0])) == 0.125
    assert exact_p_value(np.zeros(7)) == 1.0
    assert exact_p_value(np.array([0.5, -0.5])) == 1.0  # mean 0: every pattern is as extreme


def test_exact_p_blocks_do_not_change_it(monkeypatch):
    import harness.core.statistics as statistics

    d = np.random.default_rng(5).normal(size=EXACT_UP_TO)
    whole = exact_p_value(d)
    monkeypatch.setattr(statistics, "_CHUNK_CELLS", 64)  # 64 sums per block instead of a million
    assert exact_p_value(d) == whole


def test_exact_up_to_20_differing_queries_then_monte_carlo():
    rng = np.random.default_rng(2)
    d = np.zeros((30, 2))
    d[:20, 0] = rng.normal(size=20)  # 20 differ: exact
    d[:21, 1] = rng.normal(size=21)  # 21 differ: Monte Carlo
    p, tests = sign_flip_tests(d, 999, seed=0)
    assert tests == ["exact", "monte-carlo"]
    assert p[0] == exact_p_value(d[:, 0])
    assert p[1] == randomisation_p_values(d[:, 1:], 999, seed=0)[0]


def test_smallest_attainable_p():
    assert smallest_p_value("exact", 4, 10_000) == 2 / 16
    assert smallest_p_value("exact", 1, 10_000) == 1.0
    assert smallest_p_value("monte-carlo", 40, 99) == 1 / 100
    assert smallest_p_value("exact", 0, 10_000) == 1.0


def test_monte_carlo_p_uses_its_own_count_not_the_bootstraps():
    rng = np.random.default_rng(4)
    values = {"a": {"m": rng.random(40)}, "b": {"m": rng.random(40)}}
    few, many = (compare_systems(values, [("a", "b")], ["m"], n_samples, 0, permutations=500)[0]
                 for n_samples in (99, 3000))
    assert few.test == "monte-carlo" and few.n_differing == 40
    assert few.p_value == many.p_value  # the bootstrap's size no longer moves the p-value
    assert (few.ci_low, few.ci_high) != (many.ci_low, many.ci_high)
    other = compare_systems(values, [("a", "b")], ["m"], 99, 0, permutations=2000)[0]
    assert other.p_value != few.p_value


def test_smallest_adjusted_p_runs_holm_with_the_extreme_pattern():
    # family of 3: comparison 0 at its best 2/64 is ranked first and multiplied by 3
    assert smallest_adjusted_p([0.5, 0.01, 0.5], [2 / 64, 0.01, 0.25]).tolist() == \
        pytest.approx([max(3 * 0.01, 2 * 2 / 64), 3 * 0.01, 0.5])


def _six_differing(n_queries: int = 14) -> np.ndarray:
    d = np.zeros(n_queries)
    d[:6] = 0.2  # 6 queries all better: exact p = 2/64 = 0.031, the smallest there is
    return d


def test_too_few_follows_the_holm_family_size():
    base = np.random.default_rng(0).random(14)
    alone = {"a": {"m": base + _six_differing()}, "b": {"m": base}}
    (one,) = compare_systems(alone, [("a", "b")], ["m"], 1000, 0)
    assert one.p_value == pytest.approx(2 / 64) and one.verdict == "a is better"
    systems = {name: {"m": base.copy()} for name in "bcd"}
    systems["a"] = alone["a"]
    pairs = [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    six = compare_systems(systems, pairs, ["m"], 1000, 0)
    # the same 6 differing queries cannot reach 0.05 once Holm multiplies 2/64 by a family of 6
    assert six[0].p_value == pytest.approx(2 / 64) and six[0].smallest_p_adjusted == pytest.approx(6 * 2 / 64)
    assert six[0].verdict == "too few differing queries to tell (6 of 14)"


def test_too_few_says_the_queries_are_short_when_every_one_differs():
    # 5 queries, all better: the exact test's smallest two-sided p is 2/32 = 0.0625 > 0.05
    (five,) = compare_systems({"a": {"m": np.full(5, 0.6)}, "b": {"m": np.full(5, 0.5)}}, [("a", "b")], ["m"], 500, 0)
    assert five.n_differing == five.n_queries == 5 and five.smallest_p_adjusted == pytest.approx(2 / 32)
    assert five.verdict == "too few queries to tell (all 5 differ)"


def test_family_all_adjusts_across_metrics():
    rng = np.random.default_rng(9)
    values = {s: {"m1": rng.random(30), "m2": rng.random(30)} for s in "ab"}
    values["a"]["m1"] = values["b"]["m1"] + 0.3
    per_metric = compare_systems(values, [("a", "b")], ["m1", "m2"], 500, 0)
    together = compare_systems(values, [("a", "b")], ["m1", "m2"], 500, 0, family="all")
    assert [c.p_adjusted for c in per_metric] == [c.p_value for c in per_metric]  # families of one
    np.testing.assert_allclose([c.p_adjusted for c in together], holm([c.p_value for c in together]))
    assert together[0].p_adjusted == pytest.approx(2 * together[0].p_value)
    with pytest.raises(ValueError, match="family must be one of metric, all"):
        compare_systems(values, [("a", "b")], ["m1"], 500, 0, family="pair")


def test_alpha_is_one_minus_confidence():
    rng = np.random.default_rng(1)
    base = rng.random(14)
    d = np.zeros(14)
    d[:4] = 0.1  # exact p = 2/16 = 0.125
    values = {"a": {"m": base + d}, "b": {"m": base}}
    strict = compare_systems(values, [("a", "b")], ["m"], 1000, 0, confidence=0.95)[0]
    loose = compare_systems(values, [("a", "b")], ["m"], 1000, 0, confidence=0.8)[0]
    assert strict.alpha == pytest.approx(0.05) and strict.verdict == "too few differing queries to tell (4 of 14)"
    assert loose.alpha == pytest.approx(0.2) and loose.verdict == "a is better"


def comparison(**changes) -> Comparison:
    fields = dict(system_a="a", system_b="b", metric="m", mean_diff=-0.055, ci_low=-0.111, ci_high=-0.011,
                  p_value=0.0625, p_adjusted=0.125, n_queries=14, n_differing=8, test="exact", alpha=0.05,
                  smallest_p_adjusted=0.01)
    fields.update(changes)
    return Comparison(**fields)


def test_no_clear_difference_says_why_when_the_interval_excludes_zero():
    assert comparison().verdict == ("no clear difference: the interval excludes 0 but the exact test does not "
                                    "reject (Holm p 0.125 > 0.05)")
    assert comparison(ci_low=-0.2, ci_high=0.1, p_adjusted=0.04).verdict == \
        "no clear difference: Holm p 0.040 <= 0.05 but the interval includes 0"
    assert comparison(ci_low=-0.2, ci_high=0.1).verdict == "no clear difference"
    assert comparison(p_adjusted=0.04).verdict == "b is better"
    assert comparison(n_differing=0).verdict == "identical on every query"


def test_too_few_permutations_is_named_as_such():
    limited = comparison(test="monte-carlo", n_differing=40, smallest_p_adjusted=0.06, permutations=99)
    assert limited.verdict == "too few permutations to tell (p >= 1/100)"


def test_bundled_corpus_exact_p_and_the_headline_verdict():
    from harness import compare

    result = compare("bm25,lsa,weighted,rrf", "article", "hit@3,recall@5,mrr,ndcg@5")
    rows = {(c.system_a, c.system_b, c.metric): c for c in result.comparisons}
    lsa_weighted = rows[("lsa", "weighted", "ndcg@5")]
    assert (lsa_weighted.test, lsa_weighted.n_differing, lsa_weighted.p_value) == ("exact", 4, 0.125)
    headline = rows[("bm25", "lsa", "ndcg@5")]
    assert (round(headline.mean_diff, 3), round(headline.ci_low, 3), round(headline.ci_high, 3)) == \
        (0.012, -0.081, 0.107)  # the bootstrap stream is unchanged
    # 6 differing queries: 2/64 * 6 comparisons of ndcg@5 > 0.05, whatever those queries said
    assert headline.n_differing == 6
    assert headline.verdict == "too few differing queries to tell (6 of 14)"
    assert all(c.test == "exact" for c in result.comparisons)


def test_the_manifest_record_says_which_test_how_many_flips_which_stream_and_family():
    import json

    from harness import compare

    result = compare("bm25,lsa", "article", "ndcg@5", statistics=Statistics(bootstrap_samples=100, permutations=321,
                     family="all", confidence=0.9))
    record = json.loads(json.dumps(result.statistics_record()))  # JSON-ready
    assert record["alpha"] == pytest.approx(0.1) and record["holm_family"] == "all"
    assert record["randomisation_test"]["permutations"] == 321
    assert record["randomisation_test"]["exact_up_to"] == EXACT_UP_TO
    assert record["randomisation_test"]["comparisons_by_test"] == {"exact": 1, "monte-carlo": 0}
    assert "SeedSequence(seed).spawn(1)[0]" in record["randomisation_test"]["permutation_stream"]
    assert (record["bootstrap_samples"], record["pairs"]) == (100, "all pairs")


# ----- printed p-values: never a comparison that reads false, never a Monte Carlo p of 0 -------------


def _comparison(p_adjusted: float, ci: tuple[float, float], **kw) -> "Comparison":
    from harness.core.statistics import Comparison

    return Comparison("a", "b", "ndcg@10", 0.02, ci[0], ci[1], p_adjusted, p_adjusted, 50, 30,
                      **{"test": "monte-carlo", "smallest_p_adjusted": 0.001, **kw})


@pytest.mark.parametrize(("p", "ci", "shown"), [
    (0.0502, (0.001, 0.04), "Holm p 0.0502 > 0.05"),  # 3 decimals would print 0.050 > 0.05
    (0.050000001, (0.001, 0.04), "Holm p 0.050000001 > 0.05"),
    (0.04996, (-0.01, 0.04), "Holm p 0.04996 <= 0.05"),  # 3 decimals would print 0.050, true but blurred
    (0.0449, (0.001, 0.04), "Holm p 0.045"),  # far from alpha: 3 decimals say it
])
def test_a_verdict_prints_enough_digits_to_be_visibly_true(p, ci, shown):
    from harness.core.statistics import format_p

    comparison = _comparison(p, ci)
    verdict = comparison.verdict
    if p > 0.05 or ci[0] <= 0 <= ci[1]:
        assert shown in verdict
        number, sign = verdict.split("Holm p ")[1].split()[:2]
        assert (float(number) > 0.05) == (sign == ">") and float(number) != 0.05
    else:
        assert verdict == "a is better" and format_p(p, 0.05) == "0.045"


def test_a_monte_carlo_p_never_prints_as_zero():
    from harness.core.statistics import format_p, randomisation_p_values

    clear = np.tile([1.0, 2.0, 3.0], 10)[:, None]  # 30 queries, all better: no flip is as extreme
    p = randomisation_p_values(clear, 10_000, seed=0)[0]
    assert p == 1 / 10_001
    assert format_p(p, 0.05) == "< 0.001" and format_p(p) == "< 0.001"
    # an alpha below 0.001 needs the digits: its side must show
    assert format_p(p, 0.0001) == "0.00009999" and format_p(p, 0.0005) == "0.0001"
    assert _comparison(p, (0.1, 0.2)).verdict == "a is better"
