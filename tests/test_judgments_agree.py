"""bench agree: kappa equals scikit-learn's, tau equals scipy's, alpha a hand-derived value, and the
PPI numbers the formula on hand-made per-query values."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from harness.cli import main
from harness.judgments.agreement import (agreement, cohen_kappa, common_pairs, kendall_tau,
                                         krippendorff_alpha_ordinal, tau_ap)
from harness.judgments.ppi import ppi

QRELS_A = """\
q1 0 d1 3
q1 0 d2 0
q1 0 d3 1
q1 0 d4 2
q2 0 d1 0
q2 0 d5 2
q2 0 d6 1
q3 0 d7 0
"""


def test_kappa_and_alpha_on_the_pairs_judged_in_both():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    a = {"q1": {"d1": 3, "d2": 0, "d3": 1, "d4": 2}, "q2": {"d1": 0, "d5": 2, "d6": 1}, "q3": {"d7": 0}}
    b = {"q1": {"d1": 2, "d2": 0, "d3": 0, "d4": 2}, "q2": {"d1": 1, "d5": 3, "d6": 1, "d9": 1}}
    pairs = common_pairs(a, b)
    assert len(pairs) == 7
    found = agreement(a, b, rel_threshold=1)
    relevant_a = [x >= 1 for _, _, x, _ in pairs]
    relevant_b = [y >= 1 for _, _, _, y in pairs]
    assert found.cohen_kappa == pytest.approx(sklearn_metrics.cohen_kappa_score(relevant_a, relevant_b), abs=1e-12)
    # the confusion matrix: rows A's grade, columns B's, over grades 0..3
    assert found.grades == [0, 1, 2, 3]
    assert found.confusion.tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 0]]


def test_kappa_equals_scikit_learn_on_random_labels():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(0, 4, 50)
        y = np.where(rng.random(50) < 0.6, x, rng.integers(0, 4, 50))
        assert cohen_kappa(x, y) == pytest.approx(sklearn_metrics.cohen_kappa_score(x, y), abs=1e-12)


def test_krippendorff_alpha_ordinal_hand_derived():
    # units (0,0), (1,1), (1,2): o = [[2,0,0],[0,2,1],[0,1,0]], n_g = (2,3,1), n = 6
    # delta(0,1) = (2+3-2.5)^2 = 6.25, delta(1,2) = (3+1-2)^2 = 4, delta(0,2) = (2+3+1-1.5)^2 = 20.25
    # D_o = (1 + 1) * 4 / 6; D_e = 2 * (2*3*6.25 + 3*1*4 + 2*1*20.25) / (6 * 5) = 6
    assert krippendorff_alpha_ordinal([0, 1, 1], [0, 1, 2]) == pytest.approx(1 - (8 / 6) / 6, abs=1e-12)
    assert krippendorff_alpha_ordinal([0, 1, 2, 3], [0, 1, 2, 3]) == 1.0


def test_krippendorff_alpha_ordinal_equals_the_krippendorff_package():
    krippendorff = pytest.importorskip("krippendorff", reason="the krippendorff package is not installed")
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, 40)
    y = np.clip(x + rng.integers(-1, 2, 40), 0, 3)
    assert krippendorff_alpha_ordinal(x, y) == pytest.approx(
        krippendorff.alpha(reliability_data=[x, y], level_of_measurement="ordinal"), abs=1e-9)


def test_kendall_tau_equals_scipy_with_and_without_ties():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(7)
    for size in (3, 5, 12):
        for _ in range(10):
            x = rng.integers(0, 5, size).astype(float)
            y = x + rng.normal(0, 1.5, size)
            if rng.random() < 0.5:
                y = np.round(y)
            expected = stats.kendalltau(x, y).statistic
            assert (math.isnan(expected) and math.isnan(kendall_tau(x, y))) or \
                kendall_tau(x, y) == pytest.approx(expected, abs=1e-12)


def test_tau_ap_weighs_a_swap_at_the_top_more():
    truth = [4, 3, 2, 1]
    swap_top = tau_ap(truth, [3, 4, 2, 1])
    swap_bottom = tau_ap(truth, [4, 3, 1, 2])
    # hand-derived: top swap: C = (0, 2, 3): 2/3 * (0 + 1 + 1) - 1 = 1/3; bottom: (1, 1, 2/3) -> 2/3*(8/3) - 1 = 7/9
    assert swap_top == pytest.approx(1 / 3) and swap_bottom == pytest.approx(7 / 9)
    assert kendall_tau(truth, [3, 4, 2, 1]) == kendall_tau(truth, [4, 3, 1, 2])


def test_ppi_is_the_formula_on_hand_made_values():
    machine_all = np.array([0.2, 0.4, 0.6, 0.8, 1.0, 0.0])  # N = 6
    human = np.array([0.3, 0.7, 0.5])  # n = 3: the first three queries
    machine_on_human = machine_all[:3]
    result = ppi(machine_all, human, machine_on_human, method="ppi")
    assert result.lambdas == (("", 1.0),)
    # mean_N(M_B) = 0.5; M_A - M_B = (0.1, 0.3, -0.1), mean 0.1 -> theta = 0.6
    assert result.ppi.mean == pytest.approx(0.6, abs=1e-12)
    var_b = sum((v - 0.5) ** 2 for v in machine_all) / 5  # 0.14
    var_d = ((0.1 - 0.1) ** 2 + (0.3 - 0.1) ** 2 + (-0.1 - 0.1) ** 2) / 2  # 0.04
    half = 1.959964 * math.sqrt(var_b / 6 + var_d / 3)
    assert (result.ppi.low, result.ppi.high) == pytest.approx((0.6 - half, 0.6 + half), abs=1e-12)
    human_half = 1.959964 * math.sqrt(0.04 / 3)  # var of (0.3, 0.7, 0.5) = 0.04
    assert (result.human.mean, result.human.low, result.human.high) == pytest.approx(
        (0.5, 0.5 - human_half, 0.5 + human_half), abs=1e-12)
    machine_half = 1.959964 * math.sqrt(var_b / 6)
    assert (result.machine.low, result.machine.high) == pytest.approx((0.5 - machine_half, 0.5 + machine_half))


def test_agree_cli_json_has_kappa_and_tau_and_ppi_per_system(tmp_path, runner, shared_data):
    from harness import Scoring, Statistics, compare
    from corpora import load_dataset
    from retrievers import BM25, LSA
    result = compare([BM25(), BM25(k1=0.5, b=0.3), LSA(dims=40)], load_dataset(str(shared_data / "cranfield")),
                     ["ndcg@10"], scoring=Scoring(depth=50),
                     statistics=Statistics(bootstrap_samples=20, permutations=20))
    folder = result.write(tmp_path / "out", say=lambda message: None)
    rng = random.Random(1)
    human, machine = [], []
    for line in (folder / "qrels.txt").read_text().splitlines():
        query, _, doc, grade = line.split()
        noisy = max(0, int(grade) + rng.choice([-1, 0, 0, 1]))
        machine.append(f"{query} 0 {doc} {noisy}")
        if int(query) % 4 == 0:
            human.append(line)
    (tmp_path / "a.txt").write_text("\n".join(human) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(machine) + "\n")
    done = runner.invoke(main, ["agree", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--results", str(folder),
                                "--ppi", "--ppi-method", "ppi", "--format", "json"])
    assert done.exit_code == 0, done.output
    document = json.loads(done.output)
    assert isinstance(document["cohen_kappa"], float) and isinstance(document["kendall_tau"], float)
    stats = pytest.importorskip("scipy.stats")
    a_values = [s["a"] for s in document["systems"]]
    b_values = [s["b"] for s in document["systems"]]
    assert document["kendall_tau"] == pytest.approx(stats.kendalltau(a_values, b_values).statistic, abs=1e-12)
    entries = document["ppi"]["systems"]
    assert [e["system"] for e in entries] == result.summary["system"].tolist()
    for entry in entries:
        assert entry["ppi"]["low"] < entry["ppi"]["mean"] < entry["ppi"]["high"]
        assert entry["human"]["n"] == document["ppi"]["n_human"] and entry["machine"]["n"] == 225
    # the bm25 entry, recomputed from per-query values (a query B does not call relevant scores 0)
    from corpora import Run
    from harness import evaluate
    queries = sorted({line.split()[0] for line in machine}, key=int)
    run = Run.read(folder / "runs" / "bm25.trec")
    under_b = evaluate(run, {q: {} for q in queries} | _qrels(machine), ["ndcg@10"], query_ids=queries)["ndcg@10"]
    human_queries = [q for q in queries if int(q) % 4 == 0]
    under_a = evaluate(run, _qrels(human), ["ndcg@10"], query_ids=human_queries)["ndcg@10"]
    difference = under_a.to_numpy() - under_b[human_queries].to_numpy()
    theta = under_b.mean() + difference.mean()
    half = 1.959964 * math.sqrt(under_b.var(ddof=1) / len(queries) + difference.var(ddof=1) / len(human_queries))
    bm25 = next(e for e in entries if e["system"] == "bm25")
    assert (bm25["ppi"]["mean"], bm25["ppi"]["low"], bm25["ppi"]["high"]) == pytest.approx(
        (theta, theta - half, theta + half), abs=1e-12)
    text = runner.invoke(main, ["agree", str(tmp_path / "a.txt"), str(tmp_path / "b.txt")])
    assert text.exit_code == 0 and "Cohen's kappa" in text.output


def _qrels(lines: list[str]) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    for line in lines:
        query, _, doc, grade = line.split()
        judged.setdefault(query, {})[doc] = int(grade)
    return judged


def test_agree_refuses_bad_input_in_one_line(tmp_path, runner):
    (tmp_path / "a.txt").write_text(QRELS_A)
    (tmp_path / "c.txt").write_text("x 0 y 1\n")
    (tmp_path / "bad.txt").write_text("q1 0 d1\n")
    for args in (["agree", str(tmp_path / "a.txt"), str(tmp_path / "c.txt")],
                 ["agree", str(tmp_path / "a.txt"), str(tmp_path / "bad.txt")],
                 ["agree", str(tmp_path / "a.txt"), str(tmp_path / "a.txt"), "--ppi"]):
        done = runner.invoke(main, args)
        assert done.exit_code == 2, done.output
        assert "Traceback" not in done.output and "Fix:" in done.output
