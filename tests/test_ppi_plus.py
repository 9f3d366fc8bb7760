"""PPI++ (``harness.judgments.ppi``, ``bench agree --ppi``): lambda and the interval as the paper
writes them (a reference here), as ``ppi_py`` computes them where it is installed, stratified by a
facet, a coverage check, and the CLI printing lambda."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from harness.cli import main
from harness.judgments.ppi import Z_95, power_tuned_lambda, ppi, ppi_stratified
from tests.conftest import real_data


def paper_reference(y: np.ndarray, f_labelled: np.ndarray, f_unlabelled: np.ndarray,
                    z: float = Z_95) -> tuple[float, float, float, float]:
    """PPI++ for a mean (Angelopoulos, Duchi and Zrnic 2023, arXiv 2311.01453, the mean-estimation
    example): lambda* = Cov(Y, f) / ((1 + n/N) Var(f)), the covariance on the n labelled pairs, the
    variance of f over the labelled and unlabelled predictions (ppi_py's choice), clipped to [0, 1];
    theta = lambda mean_N(f~) + mean_n(Y - lambda f); variance lambda^2 Var(f~)/N + Var(Y - lambda f)/n.
    Returns (lambda, theta, low, high), loops and sums written out."""
    n, big_n = len(y), len(f_unlabelled)
    mean_y = sum(y) / n
    mean_f = sum(f_labelled) / n
    covariance = sum((a - mean_y) * (b - mean_f) for a, b in zip(y, f_labelled)) / n
    pooled = list(f_labelled) + list(f_unlabelled)
    mean_pooled = sum(pooled) / len(pooled)
    variance_f = sum((v - mean_pooled) ** 2 for v in pooled) / (len(pooled) - 1)
    lam = min(1.0, max(0.0, covariance / ((1 + n / big_n) * variance_f)))
    rectifier = [a - lam * b for a, b in zip(y, f_labelled)]
    mean_r = sum(rectifier) / n
    mean_u = sum(f_unlabelled) / big_n
    theta = lam * mean_u + mean_r
    var_u = sum((v - mean_u) ** 2 for v in f_unlabelled) / (big_n - 1)
    var_r = sum((v - mean_r) ** 2 for v in rectifier) / (n - 1)
    half = z * math.sqrt(lam * lam * var_u / big_n + var_r / n)
    return lam, theta, theta - half, theta + half


def _draw(seed: int, big_n: int = 400, n: int = 60, bias: float = 0.1, noise: float = 0.1):
    rng = np.random.default_rng(seed)
    truth = rng.beta(2.0, 3.0, big_n)
    machine = np.clip(truth + bias + rng.normal(0.0, noise, big_n), 0.0, 1.0)
    judged = np.sort(rng.choice(big_n, n, replace=False))
    return truth, machine, judged


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppi_plus_is_the_papers_formula(seed: int) -> None:
    truth, machine, judged = _draw(seed)
    result = ppi(machine, truth[judged], machine[judged], judged=judged)
    unlabelled = np.delete(machine, judged)
    lam, theta, low, high = paper_reference(truth[judged], machine[judged], unlabelled)
    assert 0.0 < lam < 1.0
    assert result.lambdas == ((("", pytest.approx(lam, abs=1e-12)),))
    assert (result.ppi.mean, result.ppi.low, result.ppi.high) == pytest.approx((theta, low, high), abs=1e-12)
    assert result.method == "ppi++" and result.lambda_text().startswith("λ 0.")


def test_against_ppi_py_where_it_is_installed() -> None:
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is not installed (a reference only)")
    truth, machine, judged = _draw(5)
    unlabelled = np.delete(machine, judged)
    result = ppi(machine, truth[judged], machine[judged], judged=judged)
    assert result.ppi.mean == pytest.approx(float(ppi_py.ppi_mean_pointestimate(
        truth[judged], machine[judged], unlabelled, lam=None)[0]), abs=1e-12)
    # with ppi_py's own lambda given back to it, the same point estimate again (lambda agrees)
    assert result.ppi.mean == pytest.approx(float(ppi_py.ppi_mean_pointestimate(
        truth[judged], machine[judged], unlabelled, lam=result.lambdas[0][1])[0]), abs=1e-12)
    low, high = ppi_py.ppi_mean_ci(truth[judged], machine[judged], unlabelled, alpha=0.05)
    # ppi_py's standard deviations divide by n, ours by n - 1: the widths differ by at most sqrt(n / (n - 1))
    ratio = (result.ppi.high - result.ppi.low) / float(high[0] - low[0])
    assert 1.0 <= ratio <= math.sqrt(60 / 59) + 1e-6


def test_a_poor_judge_gets_a_small_lambda_and_no_wider_interval_than_humans_alone() -> None:
    rng = np.random.default_rng(3)
    truth = rng.beta(2.0, 3.0, 500)
    machine = rng.random(500)  # unrelated to the truth
    result = ppi(machine, truth[:50], machine[:50])
    plain = ppi(machine, truth[:50], machine[:50], method="ppi")
    width = result.ppi.high - result.ppi.low
    assert result.lambdas[0][1] < 0.2
    assert width <= 1.02 * (result.human.high - result.human.low)
    assert width < plain.ppi.high - plain.ppi.low  # plain PPI pays for the useless judge


def test_lambda_is_zero_without_unlabelled_queries_or_variance() -> None:
    assert power_tuned_lambda(np.array([0.1, 0.9]), np.array([0.2, 0.8]), np.array([0.5])) == 0.0
    assert power_tuned_lambda(np.array([0.1, 0.9]), np.array([0.5, 0.5]), np.array([0.5, 0.5])) == 0.0
    everything = ppi(np.array([0.2, 0.8, 0.4]), np.array([0.1, 0.9, 0.5]), np.array([0.2, 0.8, 0.4]))
    assert (everything.ppi.mean, everything.ppi.low) == pytest.approx((everything.human.mean, everything.human.low))


def test_judged_positions_are_checked() -> None:
    with pytest.raises(ValueError, match="positions"):
        ppi(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.1, 0.2]), np.array([0.3, 0.4]))  # not the first two
    assert ppi(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.1, 0.2]), np.array([0.3, 0.4]), judged=[2, 3]).ppi.n == 2


def test_stratified_combines_each_strata_estimate_by_its_share() -> None:
    truth, machine, judged = _draw(7, big_n=300, n=80)
    strata = np.where(np.arange(300) < 100, "head", "tail")
    result = ppi_stratified(machine, truth[judged], machine[judged], strata.tolist(), judged=judged)
    theta, variance = 0.0, 0.0
    for name, share in (("head", 1 / 3), ("tail", 2 / 3)):
        inside = np.flatnonzero(strata == name)
        mine = judged[strata[judged] == name]
        lam, t, low, high = paper_reference(truth[mine], machine[mine], machine[np.setdiff1d(inside, mine)])
        assert dict(result.lambdas)[name] == pytest.approx(lam, abs=1e-12)
        theta += share * t
        variance += share ** 2 * ((high - low) / (2 * Z_95)) ** 2
    half = Z_95 * math.sqrt(variance)
    assert (result.ppi.mean, result.ppi.low, result.ppi.high) == pytest.approx((theta, theta - half, theta + half),
                                                                               abs=1e-12)
    assert result.lambda_text().startswith("λ by stratum: head ")


def test_a_stratum_with_one_judged_query_is_refused() -> None:
    from corpora import RetbenchError

    machine = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    with pytest.raises(RetbenchError, match="in stratum 'b'"):
        ppi_stratified(machine, np.array([0.1, 0.2, 0.4]), machine[[0, 1, 3]], list("aaabbb"), judged=[0, 1, 3])


def test_coverage_of_a_biased_and_a_noisy_judge() -> None:
    """300 draws each (the benchmark draws 2,000): 95% intervals cover theta = 0.4 on 91% to 99% of them
    (3 binomial standard deviations either side of 95%)."""
    theta = 0.4
    for position, judge in enumerate([lambda y, r: np.clip(y + 0.1 + r.normal(0, 0.05, len(y)), 0, 1),
                                      lambda y, r: np.clip(0.3 * y + 0.35 + r.normal(0, 0.25, len(y)), 0, 1)]):
        rng = np.random.default_rng(position)
        covered = 0
        for _ in range(300):
            truth = rng.beta(2.0, 3.0, 600)
            machine = judge(truth, rng)
            estimate = ppi(machine, truth[:80], machine[:80]).ppi
            covered += estimate.low <= theta <= estimate.high
        assert 0.91 <= covered / 300 <= 0.99, (position, covered)


@pytest.fixture(scope="module")
def judged_folder(tmp_path_factory):
    """A Cranfield results folder with a query facet (odd/even id), a human subset and a noisy machine set."""
    from corpora import load_dataset
    from harness import Scoring, Statistics, compare
    from harness.core.options import Loading
    from retrievers import BM25, LSA

    cranfield = real_data("cranfield")
    root = tmp_path_factory.mktemp("ppi")
    data = load_dataset(str(cranfield))
    facets = root / "facets.csv"
    facets.write_text("query_id,parity\n" + "".join(f"{q},{'odd' if int(q) % 2 else 'even'}\n"
                                                    for q in data.queries.ids))
    result = compare([BM25(), LSA(dims=40)], str(cranfield), ["ndcg@10"],
                     scoring=Scoring(depth=50), statistics=Statistics(bootstrap_samples=20, permutations=20),
                     loading=Loading(facets_file=facets))
    folder = result.write(root / "out", say=lambda message: None)
    rng = random.Random(1)
    human, machine = [], []
    for line in (folder / "qrels.txt").read_text().splitlines():
        query, _, doc, grade = line.split()
        machine.append(f"{query} 0 {doc} {max(0, int(grade) + rng.choice([-1, 0, 0, 1]))}")
        if int(query) % 3 == 0:
            human.append(line)
    (root / "a.txt").write_text("\n".join(human) + "\n")
    (root / "b.txt").write_text("\n".join(machine) + "\n")
    return root, folder


def test_bench_agree_ppi_prints_lambda(runner, judged_folder) -> None:
    root, folder = judged_folder
    base = ["agree", str(root / "a.txt"), str(root / "b.txt"), "--results", str(folder), "--ppi"]
    text = runner.invoke(main, base)
    assert text.exit_code == 0, text.output
    assert "PPI++ (the machine weighted by λ)" in text.output
    lines = [line for line in text.output.splitlines() if line.startswith("  bm25: ppi++ ")]
    assert len(lines) == 1 and ("(λ 0." in lines[0] or "(λ 1.000)" in lines[0]), text.output
    document = json.loads(runner.invoke(main, [*base, "--format", "json"]).output)
    assert document["ppi"]["method"] == "ppi++"
    assert all(0.0 <= entry["lambda"] <= 1.0 for entry in document["ppi"]["systems"])
    plain = json.loads(runner.invoke(main, [*base, "--ppi-method", "ppi", "--format", "json"]).output)
    assert {entry["lambda"] for entry in plain["ppi"]["systems"]} == {1.0}
    assert plain["ppi"]["systems"][0]["ppi"] != document["ppi"]["systems"][0]["ppi"]


def test_bench_agree_stratifies_by_a_facet(runner, judged_folder) -> None:
    root, folder = judged_folder
    base = ["agree", str(root / "a.txt"), str(root / "b.txt"), "--results", str(folder), "--ppi"]
    done = runner.invoke(main, [*base, "--stratify", "parity", "--format", "json"])
    assert done.exit_code == 0, done.output
    document = json.loads(done.output)
    assert document["ppi"]["stratified_by"] == "parity"
    assert set(document["ppi"]["systems"][0]["lambda"]) == {"odd", "even"}
    text = runner.invoke(main, [*base, "--stratify", "parity"])
    assert "stratified by parity" in text.output and "λ by stratum: " in text.output
    wrong = runner.invoke(main, [*base, "--stratify", "colour"])
    assert wrong.exit_code == 2 and "no query facet 'colour'" in wrong.output and "Fix:" in wrong.output
    alone = runner.invoke(main, ["agree", str(root / "a.txt"), str(root / "b.txt"), "--stratify", "parity"])
    assert alone.exit_code == 2 and "Fix: add --ppi" in alone.output
