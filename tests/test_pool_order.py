"""``bench pool --order``: the default order unchanged, and ``pair:A,B``, the pairs that could most move
the mean DCG difference of A and B first (``harness.judgments.pool``)."""

from __future__ import annotations

import math

import pytest

from corpora import RetbenchError, Run
from harness.cli import main
from harness.judgments.pool import pair_impacts, pool, systems_of_order, unknown_difference


def _run(rankings: dict[str, list[str]]) -> Run:
    return Run.from_mapping({q: [(d, float(len(docs) - i)) for i, d in enumerate(docs)] for q, docs in rankings.items()})


RUNS = {
    "A": _run({"q1": ["a", "b", "c"], "q2": ["x", "y", "z"]}),
    "B": _run({"q1": ["a", "c", "b"], "q2": ["w", "y", "x"]}),
    "C": _run({"q1": ["d", "a", "e"], "q2": ["v", "x", "y"]}),
}
QUERIES = ["q1", "q2"]


def disc(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / math.log2(rank + 1)


def test_impacts_by_hand() -> None:
    impacts = pair_impacts(RUNS, "A", "B", QUERIES, 3)
    # q1: a ranked 1st by both (no impact); b 2nd by A, 3rd by B; c 3rd by A, 2nd by B
    assert impacts[("q1", "a")] == 0.0
    assert impacts[("q1", "b")] == pytest.approx((disc(2) - disc(3)) / 2)
    assert impacts[("q1", "c")] == pytest.approx((disc(2) - disc(3)) / 2)
    # q2: x 1st by A, 3rd by B; w only B's 1st; z only A's 3rd
    assert impacts[("q2", "x")] == pytest.approx((disc(1) - disc(3)) / 2)
    assert impacts[("q2", "w")] == pytest.approx(disc(1) / 2)
    assert impacts[("q2", "z")] == pytest.approx(disc(3) / 2)
    assert ("q1", "d") not in impacts  # only C ranks it


def test_the_pair_order_puts_the_most_decisive_pairs_first_across_queries() -> None:
    ordered = pool(RUNS, {}, QUERIES, 3, "pair:A,B").pairs
    pairs = list(zip(ordered["query_id"], ordered["doc_id"]))
    assert pairs[:2] == [("q2", "w"), ("q2", "x")]  # 1/2 and (1 - 1/2)/2: the largest impacts, from q2
    impacts = pair_impacts(RUNS, "A", "B", QUERIES, 3)
    values = [impacts.get(p, 0.0) for p in pairs]
    assert values == sorted(values, reverse=True)
    # equal impacts keep the default order: C's documents and the ones A and B rank alike last, as it has them
    default = list(zip(*[pool(RUNS, {}, QUERIES, 3).pairs[c] for c in ("query_id", "doc_id")]))
    tail = [p for p in pairs if impacts.get(p, 0.0) == 0.0]
    assert tail == [p for p in default if p in tail]
    assert sorted(pairs) == sorted(default)  # the same pairs, only their order differs


def test_the_default_order_is_unchanged() -> None:
    found = pool(RUNS, {"q1": {"a": 1}}, QUERIES, 3)
    assert found.order == "systems" and found.unknown is None
    assert list(found.pairs["query_id"]) == sorted(found.pairs["query_id"], key=QUERIES.index)
    q1 = found.pairs[found.pairs.query_id == "q1"]
    assert list(q1["doc_id"]) == ["b", "c", "d", "e"]  # most retrieved first, then best rank


def test_unknown_difference_shrinks_to_zero_as_the_pairs_are_judged() -> None:
    start = unknown_difference(RUNS, {}, "A", "B", QUERIES, 3)
    assert start == pytest.approx(sum(pair_impacts(RUNS, "A", "B", QUERIES, 3).values()))
    found = pool(RUNS, {}, QUERIES, 3, "pair:A,B")
    assert found.unknown == pytest.approx(start)
    judged: dict[str, dict[str, int]] = {}
    widths = [start]
    for query, doc in zip(found.pairs["query_id"], found.pairs["doc_id"]):
        judged.setdefault(query, {})[doc] = 0
        widths.append(unknown_difference(RUNS, judged, "A", "B", QUERIES, 3))
    assert widths == sorted(widths, reverse=True) and widths[-1] == 0.0
    # the first judgment took the largest step any single pair could take
    assert start - widths[1] == pytest.approx(max(pair_impacts(RUNS, "A", "B", QUERIES, 3).values()))


def test_names_with_commas_and_wrong_names() -> None:
    labels = ["bm25", "weighted(bm25,lsa)", "lsa"]
    assert systems_of_order("pair:weighted(bm25,lsa),lsa", labels) == ("weighted(bm25,lsa)", "lsa")
    assert systems_of_order("systems", labels) is None
    for wrong in ("pair:bm25,nope", "pair:bm25,bm25", "pair:bm25"):
        with pytest.raises(RetbenchError, match="Fix: write pair:A,B"):
            systems_of_order(wrong, labels)
    with pytest.raises(RetbenchError, match="unknown pool order 'bogus'"):
        systems_of_order("bogus", labels)


def test_bench_pool_order_on_the_bundled_corpus(runner, tmp_path) -> None:
    from harness import compare
    from harness.core.options import Statistics

    folder = compare("bm25,lsa,rrf", "article", "ndcg@5", statistics=Statistics(bootstrap_samples=20)) \
        .write(tmp_path / "out", say=lambda message: None)
    default = runner.invoke(main, ["pool", str(folder), "--depth", "5", "--out", str(tmp_path / "default.tsv")])
    assert default.exit_code == 0, default.output
    assert "still unknown" not in default.output
    done = runner.invoke(main, ["pool", str(folder), "--depth", "5", "--order", "pair:bm25,lsa",
                                "--out", str(tmp_path / "pair.tsv")])
    assert done.exit_code == 0, done.output
    assert "still unknown about bm25 - lsa: their mean DCG@5 difference" in done.output
    first, second = ((tmp_path / name).read_text().splitlines() for name in ("default.tsv", "pair.tsv"))
    assert first[0] == second[0] == "query_id\tdoc_id\tn_systems\tbest_rank"
    assert sorted(first) == sorted(second) and first != second
    wrong = runner.invoke(main, ["pool", str(folder), "--order", "pair:bm25,dense", "--out", str(tmp_path / "x.tsv")])
    assert wrong.exit_code == 2 and "Fix:" in wrong.output and "Traceback" not in wrong.output
    assert not (tmp_path / "x.tsv").exists()
