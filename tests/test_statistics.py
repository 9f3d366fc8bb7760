"""Paired bootstrap, randomisation test and Holm: against the article's loop and hand-derived values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.statistics import (
    bootstrap_means,
    compare_systems,
    holm,
    percentile_interval,
    randomisation_p_values,
    too_few_queries,
)


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
    import harness.statistics as statistics

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


def test_too_few_queries_threshold():
    assert too_few_queries(5) and not too_few_queries(6)


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
