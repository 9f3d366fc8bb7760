"""The randomised Tukey HSD (``harness.core.tukey``, ``--family tukey``): Carterette's (2012) algorithm
re-written here from the paper, loop by loop, gives the same p-values bit for bit on fixed seeds;
compare_systems and suites use it per metric; the compact-letter groups agree with its verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.core.options import Statistics
from harness.core.statistics import adjusted_label, compare_systems, correction_words
from harness.core.tukey import tukey_hsd_p_values
from harness.suite.statistics import macro_statistics
from tests.conftest import real_data


def carterette_reference(scores: np.ndarray, pairs: list[tuple[int, int]], trials: int, seed: int) -> np.ndarray:
    """Carterette (2012, TOIS 30(1), Algorithm 1), as written there: for each trial, permute each topic's
    row of scores across the systems, compute the systems' means and record q* = max - min; a pair's
    count grows when q* >= its observed |mean_a - mean_b|. p = (1 + count) / (1 + trials) (the observed
    labelling counted, as retbench's Monte Carlo p-values are). The stream: numpy's PCG64 seeded with
    SeedSequence(seed, spawn_key=(0, 0)), one Generator.shuffle per topic per trial."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, 0)))
    n_topics = scores.shape[0]
    means = scores.mean(axis=0)
    observed = [abs(means[a] - means[b]) for a, b in pairs]
    tolerance = 1e-12 * max(1.0, float(np.abs(scores).sum())) / n_topics  # in units of means
    count = [0] * len(pairs)
    for _ in range(trials):
        permuted = scores.copy()
        for topic in range(n_topics):
            rng.shuffle(permuted[topic])
        trial_means = permuted.mean(axis=0)
        q_star = trial_means.max() - trial_means.min()
        for k, value in enumerate(observed):
            if q_star >= value - tolerance:
                count[k] += 1
    return (1.0 + np.array(count)) / (1.0 + trials)


def _all_pairs(k: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


@pytest.mark.parametrize("seed", [0, 7, 2026])
def test_the_vectorised_test_equals_the_papers_loop_exactly(seed: int) -> None:
    data = np.random.default_rng(100 + seed)
    # graded-looking scores with ties (quarters), and one system shifted up so some pairs differ
    scores = data.integers(0, 5, size=(40, 5)) / 4.0
    scores[:, 0] = np.minimum(1.0, scores[:, 0] + 0.25)
    pairs = _all_pairs(5)
    ours = tukey_hsd_p_values(scores, pairs, 999, seed)
    assert np.array_equal(ours, carterette_reference(scores, pairs, 999, seed))
    assert len(set(ours.tolist())) > 3  # the pairs get different p-values: the comparison is not trivial


def test_exact_values_on_a_fixed_seed() -> None:
    scores = np.array([[0.9, 0.5, 0.1], [0.8, 0.6, 0.2], [0.7, 0.4, 0.3], [1.0, 0.5, 0.0], [0.6, 0.7, 0.2]])
    p = tukey_hsd_p_values(scores, [(0, 1), (0, 2), (1, 2)], 199, seed=3)
    assert np.array_equal(p, carterette_reference(scores, [(0, 1), (0, 2), (1, 2)], 199, seed=3))
    assert p.tolist() == pytest.approx(PINNED, abs=0.0)


#: The p-values of test_exact_values_on_a_fixed_seed (Carterette's loop and ours agree on them).
PINNED = [0.54, 0.005, 0.245]


def test_chunking_never_moves_a_value(monkeypatch) -> None:
    import harness.core.tukey as tukey

    scores = np.random.default_rng(1).random((30, 4))
    whole = tukey_hsd_p_values(scores, _all_pairs(4), 500, seed=5)
    monkeypatch.setattr(tukey, "_CHUNK_CELLS", 7 * 30 * 4)  # 7 permutations a chunk
    assert np.array_equal(tukey_hsd_p_values(scores, _all_pairs(4), 500, seed=5), whole)


def test_the_p_of_a_pair_grows_with_more_systems_in_the_family() -> None:
    """The range of more systems is at least the range of fewer: adding systems never lowers a p."""
    scores = np.random.default_rng(2).random((25, 6))
    scores[:, 0] += 0.2
    few = tukey_hsd_p_values(scores[:, :2], [(0, 1)], 2000, seed=0)[0]
    many = tukey_hsd_p_values(scores, [(0, 1)], 2000, seed=0)[0]
    assert few < many


def test_the_family_wise_error_is_controlled_under_the_null() -> None:
    """Exchangeable systems: the share of experiments with any p <= 0.05 stays near 0.05 or below (300
    experiments: a binomial 95% upper bound of 0.05 is about 0.077)."""
    data = np.random.default_rng(11)
    rejections = 0
    for experiment in range(300):
        topic = data.random((30, 1))
        scores = np.clip(topic + data.normal(0, 0.2, size=(30, 6)), 0, 1)
        rejections += bool((tukey_hsd_p_values(scores, _all_pairs(6), 199, seed=experiment) <= 0.05).any())
    assert rejections / 300 <= 0.08


def _values(seed: int, n: int = 50) -> dict[str, dict[str, np.ndarray]]:
    data = np.random.default_rng(seed)
    base = data.random(n)
    return {name: {"m": np.clip(base + shift + data.normal(0, 0.15, n), 0, 1),
                   "r": np.clip(base + data.normal(0, 0.15, n), 0, 1)}
            for name, shift in [("A", 0.15), ("B", 0.05), ("C", 0.0), ("D", -0.02)]}


def test_compare_systems_reads_tukey_per_metric() -> None:
    values = _values(0)
    pairs = [(a, b) for i, a in enumerate("ABCD") for b in "ABCD"[i + 1:]]
    comparisons = compare_systems(values, pairs, ["m", "r"], n_samples=200, seed=4, permutations=999, family="tukey")
    for metric in ("m", "r"):
        scores = np.column_stack([values[s][metric] for s in "ABCD"])
        expected = tukey_hsd_p_values(scores, _all_pairs(4), 999, seed=4)
        got = [c.p_adjusted for c in comparisons if c.metric == metric]
        assert got == expected.tolist()
    assert {c.correction for c in comparisons} == {"tukey"}
    verdicts = [c.verdict for c in comparisons]
    assert "A is better" in verdicts and any(v.startswith("no clear difference") for v in verdicts)
    assert all("Holm" not in v for v in verdicts)
    # the raw sign-flip p is kept; only the adjusted one is the Tukey HSD's
    holm = compare_systems(values, pairs, ["m", "r"], n_samples=200, seed=4, permutations=999)
    assert [c.p_value for c in holm] == [c.p_value for c in comparisons]


def test_with_a_baseline_the_family_is_the_systems_compared() -> None:
    values = _values(1)
    pairs = [("A", "C"), ("B", "C")]
    comparisons = compare_systems(values, pairs, ["m"], n_samples=100, seed=0, permutations=500, family="tukey")
    scores = np.column_stack([values[s]["m"] for s in ("A", "C", "B")])
    assert [c.p_adjusted for c in comparisons] == tukey_hsd_p_values(scores, [(0, 1), (2, 1)], 500, 0).tolist()


def test_too_few_permutations_says_so() -> None:
    values = _values(2)
    comparisons = compare_systems(values, [("A", "D")], ["m"], n_samples=100, permutations=9, family="tukey")
    assert comparisons[0].verdict == "too few permutations to tell (p >= 1/10)"


def test_a_suite_permutes_the_weighted_scores_within_each_query() -> None:
    first, second = _values(3, 40), _values(4, 20)
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    result = macro_statistics([first, second], ["A", "B", "C"], ["m"], pairs,
                              Statistics(bootstrap_samples=100, permutations=999, family="tukey"))
    scores = np.column_stack([np.concatenate([first[s]["m"] / 80, second[s]["m"] / 40]) for s in "ABC"])
    expected = tukey_hsd_p_values(scores, [(0, 1), (0, 2), (1, 2)], 999, seed=0)
    assert [c.p_adjusted for c in result.comparisons] == expected.tolist()
    assert {c.correction for c in result.comparisons} == {"tukey"}


def test_the_reports_name_the_correction() -> None:
    assert adjusted_label("tukey") == "Tukey HSD p" and adjusted_label("metric") == "Holm p"
    assert "Tukey HSD" in correction_words("tukey") and correction_words("metric").startswith("Holm over")


@pytest.mark.slow
def test_cranfield_with_eight_systems_gets_letters_that_agree_with_tukey_verdicts(runner, tmp_path,
                                                                                  groups_contradicting) -> None:
    from harness.cli import main

    cranfield = real_data("cranfield")
    systems = ("bm25,bm25(k1=0.9,b=0.4),bm25(k1=2.0,b=0.9),bm25(analyzer=english),lsa(dims=50),lsa(dims=100),"
               "weighted(bm25,lsa(dims=100)),rrf(bm25,lsa(dims=100))")
    result = runner.invoke(main, ["compare", "--corpus", str(cranfield), "--systems", systems, "--metrics",
                                  "ndcg@10,map", "--family", "tukey", "--bootstrap-samples", "500",
                                  "--permutations", "2000", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = next(p for p in tmp_path.iterdir() if p.is_dir())
    assert groups_contradicting(folder) == []
    comparisons = pd.read_csv(folder / "comparisons.csv", dtype=str, keep_default_na=False)
    assert len(comparisons) == 2 * 28
    verdicts = comparisons["verdict"]
    assert verdicts.str.endswith(" is better").any() and not verdicts.str.endswith(" is better").all()
    board = pd.read_csv(folder / "leaderboard.csv", dtype=str, keep_default_na=False)
    assert board.groupby("metric")["group"].nunique().min() > 2  # several groups on each metric
    report = (folder / "report.txt").read_text(encoding="utf-8")
    assert "Tukey HSD p" in report and "randomised Tukey HSD" in report
    manifest = (folder / "manifest.json").read_text(encoding="utf-8")
    assert '"tukey_hsd"' in manifest
