"""Risk–coverage (``harness.readings.risk_coverage``): a hand-computed example with a tie, properties, and the
bundled corpus re-computed from a written results folder's run files and per_query.csv.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpora import RetbenchError, Run, UnknownNameError
from harness import compare
from harness.readings.risk_coverage import query_confidence
from harness.readings.risk_coverage import (CURVE_COLUMNS, SUMMARY_COLUMNS, aurc, oracle_aurc, risk_coverage,
                                   risk_coverage_curve, summarise)
from harness.core.options import Statistics

# ----- the hand-computed example -------------------------------------------------------------------
# query  confidence  metric  risk = 1 - metric
#   A       0.9       1.0       0.0
#   B       0.5       0.0       1.0      B and C tie: they enter together
#   C       0.5       0.5       0.5
#   D       0.3       1.0       0.0
#   E      -inf       0.0       1.0      no result: enters last
#
# Curve, one point per distinct confidence (coverage, selective risk, threshold):
#   {A}        1/5 = 0.2   0 / 1            = 0       0.9
#   {A,B,C}    3/5 = 0.6   (0+1+.5) / 3     = 0.5     0.5
#   {A..D}     4/5 = 0.8   1.5 / 4          = 0.375   0.3
#   {A..E}     5/5 = 1.0   2.5 / 5          = 0.5     -inf
#
# AURC: the mean over the 5 coverage points i/5 of R_i / i, each query of a tie group counting with the
# group's mean risk (B, C -> 0.75 each): risks in order 0, .75, .75, 0, 1; sums R_i 0, .75, 1.5, 1.5, 2.5;
# R_i / i = 0, .375, .5, .375, .5 (at i = 2 the expected selective risk over the two orders of B and C:
# (1/2 + .5/2) / 2 = .375); AURC = 1.75 / 5 = 0.35.
# Oracle: risks ascending 0, 0, .5, 1, 1; prefix means 0, 0, 1/6, 3/8, 1/2; mean = (25/24) / 5 = 5/24.
# E-AURC = 0.35 - 5/24 = 42/120 - 25/120 = 17/120. Random baseline: mean risk = 2.5 / 5 = 0.5.
# Kendall's tau-b (confidence, metric) over the 10 pairs: concordant AB AC AE CE DE = 5, discordant BD CD = 2,
# tied in confidence only BC (1), tied in metric only AD BE (2): (5 - 2) / sqrt((10 - 1) * (10 - 2)) = 3 / sqrt(72).
CONFIDENCE = np.array([0.9, 0.5, 0.5, 0.3, -np.inf])
METRIC = np.array([1.0, 0.0, 0.5, 1.0, 0.0])


def test_the_hand_computed_example() -> None:
    curve = risk_coverage_curve(CONFIDENCE, 1.0 - METRIC)
    assert curve.values.tolist() == [[0.2, 0.0, 0.9], [0.6, 0.5, 0.5], [0.8, 0.375, 0.3], [1.0, 0.5, -np.inf]]
    summary = summarise(CONFIDENCE, METRIC)
    assert summary.n_queries == 5
    assert summary.aurc == pytest.approx(0.35, abs=1e-15)
    assert summary.oracle_aurc == pytest.approx(5 / 24, abs=1e-15)
    assert summary.e_aurc == pytest.approx(17 / 120, abs=1e-15)
    assert summary.random_risk == 0.5
    assert summary.kendall_tau == pytest.approx(3 / math.sqrt(72), abs=1e-15)


def test_the_order_of_the_queries_given_changes_nothing() -> None:
    order = [4, 2, 0, 3, 1]
    shuffled = summarise(CONFIDENCE[order], METRIC[order])
    assert shuffled == summarise(CONFIDENCE, METRIC)
    assert risk_coverage_curve(CONFIDENCE[order], 1.0 - METRIC[order]).equals(risk_coverage_curve(CONFIDENCE, 1.0 - METRIC))


# ----- properties ------------------------------------------------------------------------------------
metric_values = st.lists(st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 0.75, 1.0]), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(metric_values)
def test_a_confidence_that_orders_the_queries_by_risk_has_no_excess(values: list[float]) -> None:
    metric = np.array(values)
    # the metric itself as the confidence: ties only between queries of equal risk
    assert summarise(metric, metric).e_aurc == pytest.approx(0.0, abs=1e-12)
    # any increasing function of it, too (ranks, not values, matter)
    assert summarise(np.exp(3 * metric) - 7, metric).e_aurc == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(metric_values, st.floats(-1e6, 1e6, allow_nan=False))
def test_constant_confidence_gives_the_mean_risk(values: list[float], constant: float) -> None:
    metric = np.array(values)
    summary = summarise(np.full(len(metric), constant), metric)
    assert summary.aurc == pytest.approx(np.mean(1.0 - metric), abs=1e-12)
    assert summary.aurc == pytest.approx(summary.random_risk, abs=1e-12)
    assert len(risk_coverage_curve(np.full(len(metric), constant), 1.0 - metric)) == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=30))
def test_aurc_is_the_mean_over_every_order_of_the_tied_queries(pairs: list[tuple[int, float]]) -> None:
    confidence = np.array([float(c) for c, _ in pairs])
    risk = np.array([r for _, r in pairs])
    # expected selective risk at each position: the queries ahead of its tie group, plus the group's mean
    # risk per admitted member of the group
    positions = []
    for level in sorted(set(confidence.tolist()), reverse=True):
        ahead = risk[confidence > level]
        group = risk[confidence == level]
        positions += [(ahead.sum() + i * group.mean()) / (len(ahead) + i) for i in range(1, len(group) + 1)]
    assert aurc(confidence, risk) == pytest.approx(np.mean(positions), abs=1e-12)
    assert oracle_aurc(risk) <= aurc(confidence, risk) + 1e-12


def test_bad_arrays_are_refused() -> None:
    with pytest.raises(ValueError, match="must not be NaN"):
        aurc(np.array([1.0, np.nan]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="same non-zero length"):
        aurc(np.array([1.0]), np.array([0.0, 1.0]))


# ----- confidence from a run -------------------------------------------------------------------------
def test_confidence_from_a_run() -> None:
    run = Run.from_mapping({"q1": [("a", 3.0), ("b", 2.5), ("c", 0.1)], "q2": [("c", 1.0)], "q3": []})
    assert query_confidence(run, ["q3", "q1", "q2", "missing"]).tolist() == [-np.inf, 3.0, 1.0, -np.inf]
    assert query_confidence(run, ["q1", "q2", "q3"], "margin").tolist() == [0.5, -np.inf, -np.inf]
    assert query_confidence(Run.from_mapping({}), ["q1"]).tolist() == [-np.inf]
    with pytest.raises(UnknownNameError, match="unknown confidence 'entropy'. Valid: score, margin"):
        query_confidence(run, ["q1"], "entropy")


def test_a_retrievers_own_confidence_is_checked() -> None:
    frame = pd.DataFrame({"system": ["mine"] * 3, "query_id": ["q1", "q2", "q3"], "mrr": [1.0, 0.5, 0.0]})
    with pytest.raises(RetbenchError, match="'mine': 2 confidences for 3 queries. Fix:"):
        risk_coverage(frame, "mrr", {"mine": np.array([0.1, 0.2])})
    with pytest.raises(RetbenchError, match=r"a confidence is NaN \(query 'q2'\). Fix:"):
        risk_coverage(frame, "mrr", {"mine": np.array([0.1, np.nan, 0.3])})
    curve, summary = risk_coverage(frame, "mrr", {"mine": np.array([0.9, 0.5, 0.1])}, {"mine": "retriever"})
    assert list(curve.columns) == CURVE_COLUMNS and list(summary.columns) == SUMMARY_COLUMNS
    assert summary.loc[0, ["confidence", "risk_metric", "e_aurc"]].tolist() == ["retriever", "mrr", 0.0]


# ----- the bundled corpus, re-computed from the files of a results folder ----------------------------
def first_scores(path: Path, column: int, needed: int) -> dict[str, list[float]]:
    """Query id -> its first ``needed`` scores, read in file order (rank order) from a run file."""
    scores: dict[str, list[float]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t") if path.suffix == ".tsv" else line.split()
        if fields[0] == "query_id":
            continue
        if len(scores[fields[0]]) < needed:
            scores[fields[0]].append(float(fields[column]))
    return scores


def slow_summary(confidence: list[float], metric: list[float]) -> tuple[list[tuple[float, float, float]], float, float]:
    """The curve, AURC and oracle AURC by the definition, one distinct confidence at a time."""
    n = len(metric)
    risk = [1.0 - m for m in metric]
    curve, positions = [], []
    for level in sorted(set(confidence), reverse=True):
        ahead = [r for c, r in zip(confidence, risk) if c > level]
        group = [r for c, r in zip(confidence, risk) if c == level]
        positions += [(sum(ahead) + i * sum(group) / len(group)) / (len(ahead) + i) for i in range(1, len(group) + 1)]
        curve.append(((len(ahead) + len(group)) / n, (sum(ahead) + sum(group)) / (len(ahead) + len(group)), level))
    ordered = sorted(risk)
    oracle = sum(sum(ordered[:i]) / i for i in range(1, n + 1)) / n
    return curve, sum(positions) / n, oracle


@pytest.mark.parametrize("kind", ["score", "margin"])
def test_bundled_corpus_recomputed_from_the_run_files_and_per_query_csv(tmp_path: Path, kind: str) -> None:
    result = compare("bm25,lsa,weighted,rrf", "article", "hit@3,recall@5,mrr,ndcg@5",
                     statistics=Statistics(bootstrap_samples=200))
    folder = result.write(tmp_path)
    per_query = pd.read_csv(folder / "per_query.csv", dtype={"query_id": str})
    confidences = {s.label: query_confidence(s.run, result.query_ids, kind) for s in result.systems}
    curve, summary = risk_coverage(result.per_query, "ndcg@5", confidences, {s.label: kind for s in result.systems})
    assert -np.inf in set(confidences["bm25"])  # q02: bm25 retrieves nothing
    for system in result.systems:
        # the top score is written unchanged to runs/<system>.trec; a margin needs the retriever's own scores
        path = folder / "runs" / (f"{system.label}.trec" if kind == "score" else f"{system.label}.raw.tsv")
        scores = first_scores(path, 4 if kind == "score" else 3, 1 if kind == "score" else 2)
        rows = per_query[per_query.system == system.label]
        confidence = [(s[0] if kind == "score" else s[0] - s[1]) if len(s) == (1 if kind == "score" else 2) else -math.inf
                      for s in (scores.get(q, []) for q in rows["query_id"])]
        expected_curve, expected_aurc, expected_oracle = slow_summary(confidence, rows["ndcg@5"].tolist())
        got = curve[curve.system == system.label]
        np.testing.assert_allclose(got[["coverage", "risk"]].to_numpy(), [c[:2] for c in expected_curve],
                                   rtol=0, atol=1e-12)
        assert got["threshold"].tolist() == [c[2] for c in expected_curve]  # the scores as read back, exactly
        row = summary[summary.system == system.label].iloc[0]
        assert row["aurc"] == pytest.approx(expected_aurc, abs=1e-12)
        assert row["oracle_aurc"] == pytest.approx(expected_oracle, abs=1e-12)
        assert row["e_aurc"] == pytest.approx(expected_aurc - expected_oracle, abs=1e-12)
        assert row["random_risk"] == pytest.approx(1 - rows["ndcg@5"].mean(), abs=1e-12)
        assert row["kendall_tau"] == pytest.approx(
            pd.Series(confidence).corr(rows["ndcg@5"].reset_index(drop=True), method="kendall"), abs=1e-12)
