"""trec_eval's own expected outputs, reproduced through ``bench evaluate --format trec``.

Each case is one line of trec_eval's ``make quicktest`` (see ``SOURCE.md`` next to the data): the
same qrels, run and options, translated to ours (``-c`` is our default; plain trec_eval is
``--run-queries-only``; ``-M100`` is ``--depth 100``; ``-l2`` is ``--rel-threshold 2``). Every
value of every measure family we implement (map, map_cut_K, Rprec, bpref, recip_rank, P_K,
recall_K, ndcg, ndcg_cut_K, success_K), per query and ``all``, must print the same 4 decimals.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec_eval_tests"
OURS = re.compile(r"^(map|map_cut_\d+|Rprec|bpref|recip_rank|P_\d+|recall_\d+|ndcg|ndcg_cut_\d+|success_\d+)$")

# expected file -> (qrels, run, our options)
CASES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "out.test.aq": ("qrels.test", "results.test", ("--run-queries-only",)),
    "out.test.aqc": ("qrels.test", "results.trunc", ()),
    "out.test.aqcM": ("qrels.test", "results.trunc", ("--depth", "100")),
    "out.test.aql": ("qrels.rel_level", "results.test", ("--run-queries-only", "--rel-threshold", "2")),
    # default measures, summary only: comment lines in qrels, '#' inside MS MARCO doc ids
    "out.test": ("qrels.test.with-comments", "results.test", ("--run-queries-only",)),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", ("--run-queries-only",)),
}

Values = dict[str, dict[str, str]]  # measure -> query id -> printed value


def _require_suite() -> None:
    if not SUITE.is_dir():
        pytest.skip(f"trec_eval's test suite is not at {SUITE} (it lives in the shared data folder beside the "
                    "repository; see shared/data/trec_eval_tests/SOURCE.md)")


def parse_trec_eval(text: str) -> Values:
    values: Values = defaultdict(dict)
    for line in text.splitlines():
        measure, query_id, value = line.split("\t")
        values[measure.rstrip()][query_id] = value
    return values


def expected_values(name: str) -> Values:
    expected = parse_trec_eval((SUITE / name).read_text())
    return {m: v for m, v in expected.items() if OURS.match(m)}


_computed: dict[str, Values] = {}


def computed_values(name: str) -> Values:
    if name not in _computed:
        qrels, run, options = CASES[name]
        measures = ",".join(expected_values(name))
        result = CliRunner().invoke(main, ["evaluate", "--qrels", str(SUITE / qrels), str(SUITE / run),
                                           "--metrics", measures, "--format", "trec", *options])
        assert result.exit_code == 0, result.output
        _computed[name] = parse_trec_eval(result.stdout)
    return _computed[name]


def _measures() -> list[tuple[str, str]]:
    if not SUITE.is_dir():
        return [(name, "<suite absent>") for name in CASES]
    return [(name, measure) for name in CASES for measure in expected_values(name)]


@pytest.mark.parametrize(("expected_file", "measure"), _measures())
def test_every_value_equals_trec_eval(expected_file: str, measure: str) -> None:
    _require_suite()
    expected = expected_values(expected_file)[measure]
    got = computed_values(expected_file)[measure]
    if "all" in expected and len(expected) == 1:  # trec_eval ran without -q: the summary line only
        got = {"all": got.get("all", "<missing>")}
    assert got == expected


def test_the_suite_covers_every_family_and_query() -> None:
    """Guard against a vacuous pass: the cases really hold the measures and queries we expect."""
    _require_suite()
    detailed = ["out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql"]
    families = {re.sub(r"_\d+$", "_K", m) for name in detailed for m in expected_values(name)}
    assert families == {"map", "map_cut_K", "Rprec", "bpref", "recip_rank", "P_K", "recall_K", "ndcg",
                        "ndcg_cut_K", "success_K"}
    for name in detailed:
        for per_query in expected_values(name).values():
            assert set(per_query) == {"301", "302", "303", "all"}
    total = sum(len(v) for name in CASES for v in expected_values(name).values())
    assert total >= 700  # 730 values in the files as published


def test_ties_are_broken_by_doc_id_descending() -> None:
    """results.test ranks disagree with its scores and holds tie groups; trec_eval re-sorts."""
    _require_suite()
    from harness.trec import read_run

    run = read_run(SUITE / "results.test")
    items = run.items("301")
    for (doc_a, score_a), (doc_b, score_b) in zip(items, items[1:]):
        assert score_a > score_b or (score_a == score_b and doc_a > doc_b)
    assert any(a[1] == b[1] for a, b in zip(items, items[1:]))
