"""Leaderboard (``harness.readings.leaderboard``): bootstrap ranks, rank intervals and tie groups (a compact
letter display)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import compare
from harness.readings.leaderboard import (LEADERBOARD_COLUMNS, bootstrap_ranks, group_letters, leaderboard, letter_sets,
                                 tie_groups)
from harness.core.statistics import Comparison, compare_systems
from harness.core.options import Statistics


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
        assert board["group"].tolist() == ["a"] * 4, metric
        # rank intervals are recorded and hold the mean rank; the ranks of a resample add up to 1 + 2 + 3 + 4
        assert ((1 <= board.rank_ci_low) & (board.rank_ci_low <= board.mean_rank)).all()
        assert ((board.mean_rank <= board.rank_ci_high) & (board.rank_ci_high <= 4)).all()
        assert board["mean_rank"].sum() == pytest.approx(10.0)
        assert board["mean"].is_monotonic_decreasing


def test_ndcg5_ranks_by_hand_resampling() -> None:
    result = compare("bm25,lsa,weighted,rrf", "article", "ndcg@5", statistics=Statistics(bootstrap_samples=1000))
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
    assert dict(zip(board.system, board.group)) == {"A": "a", "B": "a", "C": "b"}
    assert board.loc[board.system == "C", ["rank", "mean_rank", "rank_ci_low", "rank_ci_high"]].values.tolist() == \
        [[3.0, 3.0, 3.0, 3.0]]


def test_letters_follow_every_pair_not_a_leader() -> None:
    systems, means = ["A", "B", "C", "D", "E"], [0.9, 0.8, 0.7, 0.6, 0.2]
    # A ~ B, B ~ C, but A and C differ (significance is not transitive): B carries both letters;
    # C ~ D, B and D differ; E differs from everyone
    comparisons = [fake("A", "B", False), fake("A", "C", True), fake("A", "D", True), fake("A", "E", True),
                   fake("B", "C", False), fake("C", "D", False), fake("C", "E", True), fake("B", "D", True),
                   fake("B", "E", True), fake("D", "E", True)]
    assert tie_groups(systems, means, comparisons, "m") == {"A": "a", "B": "ab", "C": "bc", "D": "c", "E": "d"}
    # the leader-only rule put C and D together as group 2 but B alone with A: B ~ C was not shown
    # the comparisons of another metric are not read
    assert tie_groups(["A", "B"], [0.9, 0.8], [fake("A", "B", True, "other"), fake("B", "A", False)], "m") == \
        {"A": "a", "B": "a"}
    # equal means: the better mean rank comes first and names letter a
    assert tie_groups(["A", "B"], [0.5, 0.5], [fake("A", "B", True)], "m", mean_ranks=[1.6, 1.4]) == \
        {"A": "b", "B": "a"}


def test_all_equal_and_all_different() -> None:
    systems, means = ["A", "B", "C", "D"], [0.4, 0.9, 0.1, 0.5]
    pairs = list(combinations(systems, 2))
    assert tie_groups(systems, means, [fake(a, b, False) for a, b in pairs], "m") == dict.fromkeys(systems, "a")
    # letters go by mean: B (0.9) a, D (0.5) b, A (0.4) c, C (0.1) d
    assert tie_groups(systems, means, [fake(a, b, True) for a, b in pairs], "m") == \
        {"A": "c", "B": "a", "C": "d", "D": "b"}
    assert tie_groups([], [], [], "m") == {}


def test_a_system_can_carry_several_letters() -> None:
    # A > C, A > D, B > D, every other pair not separated: the largest unseparated sets are
    # {A, B}, {B, C} and {C, D}
    systems, means = ["A", "B", "C", "D"], [0.9, 0.8, 0.7, 0.6]
    separated = {("A", "C"), ("A", "D"), ("B", "D")}
    comparisons = [fake(a, b, (a, b) in separated) for a, b in combinations(systems, 2)]
    assert tie_groups(systems, means, comparisons, "m") == {"A": "a", "B": "ab", "C": "bc", "D": "c"}
    # a 4-cycle of non-separation (A~B, B~D, D~C, C~A; A>D, B>C): four letters, each system two
    separated = {("A", "D"), ("B", "C")}
    comparisons = [fake(a, b, (a, b) in separated) for a, b in combinations(systems, 2)]
    groups = tie_groups(systems, means, comparisons, "m")
    assert groups == {"A": "ab", "B": "ac", "C": "bd", "D": "cd"}
    assert [group_letters(groups[s]) for s in systems] == [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]]


def test_untested_pairs_are_not_separated() -> None:
    # only comparisons with the baseline C: A > C and C > D; A - B, B - D, A - D were not tested
    systems, means = ["A", "B", "C", "D"], [0.9, 0.8, 0.5, 0.1]
    comparisons = [fake("A", "C", True), fake("B", "C", False), fake("C", "D", True)]
    groups = tie_groups(systems, means, comparisons, "m")
    assert groups == {"A": "a", "B": "ab", "C": "b", "D": "a"}  # A and D were not compared: they share a
    assert not set(groups["A"]) & set(groups["C"]) and not set(groups["C"]) & set(groups["D"])
    assert set(groups["B"]) & set(groups["C"])


def test_conflicting_comparisons_of_one_pair_are_an_error() -> None:
    with pytest.raises(ValueError, match="comparisons of 'B' and 'A' on 'm' disagree"):
        tie_groups(["A", "B"], [0.9, 0.8], [fake("A", "B", True), fake("B", "A", False)], "m")


def test_many_letters_are_named_past_z_and_read_back() -> None:
    # 30 systems, every pair separated: 30 letters, a..z then A..D
    systems = [f"s{i:02d}" for i in range(30)]
    everything = [fake(a, b, True) for a, b in combinations(systems, 2)]
    groups = tie_groups(systems, [1 - i / 100 for i in range(30)], everything, "m")
    assert [groups[s] for s in systems] == list("abcdefghijklmnopqrstuvwxyzABCD")
    # 4 blocks of 4 systems, separated across blocks only: letters are one per choice of a system
    # from each block, 4^4 = 256 > 52, so the names run on (a1, ...) and a cell separates them by spaces
    blocks = [[f"b{k}s{i}" for i in range(4)] for k in range(4)]
    names = [s for block in blocks for s in block]
    block_of = {s: k for k, block in enumerate(blocks) for s in block}
    comparisons = [fake(a, b, block_of[a] == block_of[b]) for a, b in combinations(names, 2)]
    groups = tie_groups(names, [1 - i / 100 for i in range(16)], comparisons, "m")
    letters = {s: group_letters(groups[s]) for s in names}
    assert all(" " in groups[s] and len(letters[s]) == 64 for s in names)
    assert len({x for s in names for x in letters[s]}) == 256
    for a, b in combinations(names, 2):
        assert bool(set(letters[a]) & set(letters[b])) == (block_of[a] != block_of[b])


def _maximal_unseparated(n: int, separated: set[tuple[int, int]]) -> list[list[int]]:
    """Every largest set of positions with no separated pair inside, by brute force over all subsets."""
    free = [set(c) for r in range(1, n + 1) for c in combinations(range(n), r)
            if not any((i, j) in separated for i, j in combinations(c, 2))]
    return sorted(sorted(c) for c in free if not any(c < d for d in free))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 7).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.booleans(), min_size=n * (n - 1) // 2,
                                                                          max_size=n * (n - 1) // 2))))
def test_letters_agree_with_any_significance_matrix(case: tuple[int, list[bool]]) -> None:
    n, flags = case
    pairs = list(combinations(range(n), 2))
    separated = {p for p, flag in zip(pairs, flags) if flag}
    letters = letter_sets(n, separated)
    held = [{k for k, members in enumerate(letters) if i in members} for i in range(n)]
    assert all(held), "every system carries a letter"
    for i, j in pairs:  # both ways: share a letter exactly when not separated
        assert bool(held[i] & held[j]) == ((i, j) not in separated)
    # and the letters are exactly the largest unseparated sets (insert-and-absorb, no redundant letter kept)
    assert letters == _maximal_unseparated(n, separated)
    # the same through tie_groups, in a shuffled order of the systems and the comparisons
    systems = [f"S{i}" for i in range(n)][::-1]
    means = [1.0 - i / 10 for i in range(n)][::-1]
    comparisons = [fake(f"S{j}", f"S{i}", (i, j) in separated) for i, j in reversed(pairs)]
    groups = tie_groups(systems, means, comparisons, "m")
    for i, j in pairs:
        assert bool(set(groups[f"S{i}"]) & set(groups[f"S{j}"])) == ((i, j) not in separated)
    if n:
        assert groups["S0"].startswith("a")
def test_significance_needs_both_holm_and_the_interval() -> None:
    # Holm p below alpha but the interval includes 0 (and the reverse): not separated, one group
    holm_only = Comparison("A", "B", "m", 0.1, -0.01, 0.2, 0.001, 0.01, 50, 50)
    interval_only = Comparison("A", "C", "m", 0.1, 0.02, 0.2, 0.3, 0.6, 50, 50)
    assert tie_groups(["A", "B", "C"], [0.9, 0.8, 0.7], [holm_only, interval_only, fake("B", "C", False)], "m") == \
        {"A": "a", "B": "a", "C": "a"}


def test_the_suites_check_finds_a_contradiction(tmp_path, groups_contradicting) -> None:
    # the check every test's results folders go through (tests/conftest.py) must be able to fail
    header = "system_a,system_b,metric,verdict\n"
    (tmp_path / "comparisons.csv").write_text(header + "A,B,m,no clear difference\nA,C,m,A is better\n"
                                              "B,C,m,\"no clear difference: Holm p 0.064 > 0.05\"\n")
    (tmp_path / "leaderboard.csv").write_text("metric,group,system\nm,1,A\nm,1,B\nm,2,C\n")  # the leader rule
    assert groups_contradicting(tmp_path) == ["m: B ['1'] and C ['2'] share no letter, verdict "
                                              "'no clear difference: Holm p 0.064 > 0.05'"]
    (tmp_path / "leaderboard.csv").write_text("metric,group,system\nm,a,A\nm,ab,B\nm,b,C\nm,a,D\nm,c,E\n")
    assert groups_contradicting(tmp_path) == ["m: A and E were not compared but share no letter",
                                              "m: B and E were not compared but share no letter",
                                              "m: C and D were not compared but share no letter",
                                              "m: C and E were not compared but share no letter",
                                              "m: D and E were not compared but share no letter"]
    (tmp_path / "leaderboard.csv").write_text("metric,group,system\nm,a,A\nm,ab,B\nm,b,C\n")
    assert groups_contradicting(tmp_path) == []


@pytest.mark.slow
def test_med_with_every_pair_in_one_family_gets_letters_that_agree_with_its_verdicts(
        runner, shared_data, tmp_path, groups_contradicting) -> None:
    from harness.cli import main

    systems = "bm25,bm25(k1=0.9,b=0.4),bm25(analyzer=english),lsa(dims=100),weighted(bm25,lsa(dims=100))"
    result = runner.invoke(main, ["compare", "--corpus", str(shared_data / "med"), "--systems", systems,
                                  "--metrics", "ndcg@10,map", "--family", "all", "--bootstrap-samples", "200",
                                  "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = next(p for p in tmp_path.iterdir() if p.is_dir())
    assert groups_contradicting(folder) == []
    board = pd.read_csv(folder / "leaderboard.csv", dtype=str, keep_default_na=False)
    verdicts = pd.read_csv(folder / "comparisons.csv", dtype=str, keep_default_na=False)["verdict"]
    # on this collection both kinds of verdict occur, so the agreement above is not empty
    assert verdicts.str.endswith(" is better").any() and not verdicts.str.endswith(" is better").all()
    assert board.groupby("metric")["group"].nunique().max() > 1
