"""Leaderboard (``harness.leaderboard``): bootstrap ranks, rank intervals and tie groups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness import compare
from harness.leaderboard import LEADERBOARD_COLUMNS, bootstrap_ranks, leaderboard, tie_groups
from harness.statistics import Comparison, compare_systems


def fake(a: str, b: str, significant: bool, metric: str = "m") -> Comparison:
    """A comparison whose Holm p and interval both say ``significant`` (or both do not)."""
    return Comparison(a, b, metric, 0.1, 0.05 if significant else -0.05, 0.2, 0.001, 0.001 if significant else 0.4,
                      50, 50)


@pytest.mark.parametrize("metrics", ["hit@3,recall@5,mrr,ndcg@5", "ndcg@10,recall@10,mrr,hit@10"])
def test_the_four_baselines_share_one_group_on_the_bundled_corpus(metrics: str) -> None:
    result = compare("bm25,lsa,weighted,rrf", "article", metrics)
    for metric in [m.name for m in result.metrics]:
        board = leaderboard(result.per_query, metric, result.comparisons)
        assert list(board.columns) == LEADERBOARD_COLUMNS
        assert sorted(board["system"]) == ["bm25", "lsa", "rrf", "weighted"]
        assert board["group"].tolist() == [1, 1, 1, 1], metric
        # rank intervals are recorded and hold the mean rank; the ranks of a resample add up to 1 + 2 + 3 + 4
        assert ((1 <= board.rank_ci_low) & (board.rank_ci_low <= board.mean_rank)).all()
        assert ((board.mean_rank <= board.rank_ci_high) & (board.rank_ci_high <= 4)).all()
        assert board["mean_rank"].sum() == pytest.approx(10.0)
        assert board["mean"].is_monotonic_decreasing


def test_ndcg5_ranks_by_hand_resampling() -> None:
    result = compare("bm25,lsa,weighted,rrf", "article", "ndcg@5", bootstrap_samples=1000)
    board = leaderboard(result.per_query, "ndcg@5", result.comparisons, n_samples=1000, seed=0).set_index("system")
    systems = ["bm25", "lsa", "weighted", "rrf"]
    values = np.column_stack([result.per_query.loc[result.per_query.system == s, "ndcg@5"] for s in systems])
    rows = np.random.default_rng(0).integers(0, values.shape[0], size=(1000, values.shape[0]))
    means = values[rows].mean(axis=1)
    # rank 1 = highest, ties share the average rank (pandas' own ranking, on the means as computed)
    ranks = np.sort(pd.DataFrame(means).rank(axis=1, ascending=False, method="average").to_numpy(), axis=0)
    for j, system in enumerate(systems):
        assert board.loc[system, "mean_rank"] == pytest.approx(ranks[:, j].mean(), abs=1e-12)
        assert board.loc[system, ["rank_ci_low", "rank_ci_high"]].tolist() == [ranks[25, j], ranks[974, j]]
    assert board["rank"].to_dict() == {"rrf": 1.0, "weighted": 2.0, "bm25": 3.0, "lsa": 4.0}


def test_ranks_of_hand_resamples_with_a_tie() -> None:
    values = np.array([[1.0, 0.0, 0.5],
                       [0.0, 1.0, 0.5],
                       [0.2, 0.2, 0.9]])  # 3 queries x 3 systems
    chunks = [np.array([[0, 0, 0]]), np.array([[2, 2, 2], [0, 1, 2]])]
    # resample 1: means 1, 0, .5 -> ranks 1, 3, 2; resample 2: .2, .2, .9 -> 2.5, 2.5, 1;
    # resample 3: 0.4, 0.4, 0.6333 -> 2.5, 2.5, 1
    assert bootstrap_ranks(values, chunks).tolist() == [[1.0, 3.0, 2.0], [2.5, 2.5, 1.0], [2.5, 2.5, 1.0]]


def test_a_clearly_worse_system_gets_a_group_of_its_own() -> None:
    rng = np.random.default_rng(5)
    base = rng.uniform(0.3, 0.9, size=60)
    per_query = {"A": {"m": np.clip(base + 0.01 * rng.normal(size=60), 0, 1)},
                 "B": {"m": np.clip(base + 0.01 * rng.normal(size=60), 0, 1)},
                 "C": {"m": base * 0.4}}
    comparisons = compare_systems(per_query, [("A", "B"), ("A", "C"), ("B", "C")], ["m"], n_samples=1000)
    frame = pd.DataFrame([{"system": s, "query_id": f"q{i}", "m": v} for s in per_query
                          for i, v in enumerate(per_query[s]["m"])])
    board = leaderboard(frame, "m", comparisons, n_samples=1000)
    assert dict(zip(board.system, board.group)) == {"A": 1, "B": 1, "C": 2}
    assert board.loc[board.system == "C", ["rank", "mean_rank", "rank_ci_low", "rank_ci_high"]].values.tolist() == \
        [[3.0, 3.0, 3.0, 3.0]]


def test_groups_are_decided_against_each_leader() -> None:
    systems, means = ["A", "B", "C", "D", "E"], [0.9, 0.8, 0.7, 0.6, 0.2]
    # A ~ B, B ~ C, but A and C differ: C is not in A's group (not transitive); C leads group 2 with D;
    # E differs from everyone above it and is alone
    comparisons = [fake("A", "B", False), fake("A", "C", True), fake("A", "D", True), fake("A", "E", True),
                   fake("B", "C", False), fake("C", "D", False), fake("C", "E", True), fake("B", "D", True),
                   fake("B", "E", True), fake("D", "E", True)]
    assert tie_groups(systems, means, comparisons, "m") == {"A": 1, "B": 1, "C": 2, "D": 2, "E": 3}
    # the comparisons of another metric are not read
    assert tie_groups(["A", "B"], [0.9, 0.8], [fake("A", "B", True, "other"), fake("B", "A", False)], "m") == \
        {"A": 1, "B": 1}
    # equal means: the better mean rank leads
    assert tie_groups(["A", "B"], [0.5, 0.5], [fake("A", "B", True)], "m", mean_ranks=[1.6, 1.4]) == {"A": 2, "B": 1}


def test_significance_needs_both_holm_and_the_interval() -> None:
    # Holm p below alpha but the interval includes 0 (and the reverse): not separated, one group
    holm_only = Comparison("A", "B", "m", 0.1, -0.01, 0.2, 0.001, 0.01, 50, 50)
    interval_only = Comparison("A", "C", "m", 0.1, 0.02, 0.2, 0.3, 0.6, 50, 50)
    assert tie_groups(["A", "B", "C"], [0.9, 0.8, 0.7], [holm_only, interval_only, fake("B", "C", False)], "m") == \
        {"A": 1, "B": 1, "C": 1}


def test_a_missing_comparison_is_an_error_not_a_guess() -> None:
    with pytest.raises(ValueError, match="no comparison of 'B' and 'C' on 'm'"):
        tie_groups(["A", "B", "C"], [0.9, 0.8, 0.7], [fake("A", "B", True), fake("A", "C", True)], "m")
