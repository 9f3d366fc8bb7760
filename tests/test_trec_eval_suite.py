"""trec_eval's own expected outputs, reproduced through ``bench evaluate --format trec``.

Each case is one line of trec_eval's ``make quicktest`` (see ``SOURCE.md`` next to the data): the
same qrels, run and options, translated to ours (``-c`` is our default; plain trec_eval is
``--run-queries-only``; ``-M100`` is ``--depth 100``; ``-l2`` is ``--rel-threshold 2``; trec_eval
reads past the extra words after the tag in ``results.trunc``, which we refuse unless
``--trailing-fields ignore``). Every value of every measure family we implement (map, map_cut_K,
Rprec, bpref, recip_rank, P_K, recall_K, ndcg, ndcg_cut_K, success_K) and of the counts (runid,
num_q, num_ret, num_rel, num_rel_ret), per query and ``all``, must print the same text, and our
output must be trec_eval's, line for line, once filtered to the measures we print.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.conftest import SHARED_DATA, real_data

SUITE = SHARED_DATA / "trec_eval_tests"
OURS = re.compile(r"^(map|map_cut_\d+|Rprec|bpref|recip_rank|P_\d+|recall_\d+|ndcg|ndcg_cut_\d+|success_\d+)$")
COUNTS = re.compile(r"^(runid|num_q|num_ret|num_rel|num_rel_ret)$")  # printed with every measure set
TRUNC = ("--trailing-fields", "ignore")  # results.trunc has words after the tag on 5 lines

# expected file -> (qrels, run, our options)
CASES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "out.test.aq": ("qrels.test", "results.test", ("--run-queries-only",)),
    "out.test.aqc": ("qrels.test", "results.trunc", TRUNC),
    "out.test.aqcM": ("qrels.test", "results.trunc", ("--depth", "100", *TRUNC)),
    "out.test.aql": ("qrels.rel_level", "results.test", ("--run-queries-only", "--rel-threshold", "2")),
    # default measures, summary only: comment lines in qrels, '#' inside MS MARCO doc ids
    "out.test": ("qrels.test.with-comments", "results.test", ("--run-queries-only",)),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", ("--run-queries-only",)),
}
# The same expected outputs through our default options (trec_eval -c): every query of the qrels
# is in these runs, so plain trec_eval and -c agree, and so must we (2024-36302 has no relevant
# judgment: it counts, and scores 0).
DEFAULT_CASES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "out.test.aq": ("qrels.test", "results.test", ()),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", ()),
}

Values = dict[str, dict[str, str]]  # measure -> query id -> printed value


def _require_suite() -> None:
    real_data("trec_eval_tests")  # trec_eval's own test suite, described by its SOURCE.md


def parse_trec_eval(text: str) -> Values:
    values: Values = defaultdict(dict)
    for line in text.splitlines():
        measure, query_id, value = line.split("\t")
        values[measure.rstrip()][query_id] = value
    return values


def _printed(line: str) -> bool:
    measure = line.split("\t")[0].rstrip()
    return bool(OURS.match(measure) or COUNTS.match(measure))


def expected_lines(name: str) -> list[str]:
    """trec_eval's output, filtered to the measures we implement and the counts."""
    return [line for line in (SUITE / name).read_text().splitlines() if _printed(line)]


def expected_values(name: str) -> Values:
    return dict(parse_trec_eval("\n".join(expected_lines(name))))


def requested_measures(name: str) -> str:
    return ",".join(m for m in expected_values(name) if OURS.match(m))


_computed: dict[tuple[str, bool], list[str]] = {}


def computed_lines(name: str, defaults: bool = False) -> list[str]:
    """Our ``--format trec`` output for the case (its lines), with our default options if asked."""
    if (name, defaults) not in _computed:
        qrels, run, options = (DEFAULT_CASES if defaults else CASES)[name]
        result = CliRunner().invoke(main, ["evaluate", "--qrels", str(SUITE / qrels), str(SUITE / run),
                                           "--metrics", requested_measures(name), "--format", "trec", *options])
        assert result.exit_code == 0, result.output
        _computed[name, defaults] = result.stdout.splitlines()
    return _computed[name, defaults]


def computed_values(name: str) -> Values:
    return parse_trec_eval("\n".join(computed_lines(name)))


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


def _comparable(name: str, ours: list[str]) -> list[str]:
    """Our lines as trec_eval printed them: without -q (the files without per-query lines), the
    ``all`` block only."""
    per_query = any(line.split("\t")[1] != "all" for line in expected_lines(name))
    return ours if per_query else [line for line in ours if line.split("\t")[1] == "all"]


@pytest.mark.parametrize("expected_file", list(CASES))
def test_the_output_is_trec_eval_s_line_for_line(expected_file: str) -> None:
    """A diff against trec_eval's output, restricted to the measures we print, is empty."""
    _require_suite()
    assert _comparable(expected_file, computed_lines(expected_file)) == expected_lines(expected_file)


@pytest.mark.parametrize("expected_file", list(DEFAULT_CASES))
def test_default_options_are_trec_eval_minus_c(expected_file: str) -> None:
    _require_suite()
    ours = _comparable(expected_file, computed_lines(expected_file, defaults=True))
    assert ours == expected_lines(expected_file)


@pytest.mark.parametrize("expected_file", list(CASES))
def test_the_suite_reads_alike_as_trec_eval_10_and_9(expected_file: str) -> None:
    """The expected outputs predate trec_eval 10, which reads scores as doubles where 9.x read
    floats; no query of these runs ranks differently under the two, so they hold for both readings."""
    _require_suite()
    qrels, run, options = CASES[expected_file]
    result = CliRunner().invoke(main, ["evaluate", "--qrels", str(SUITE / qrels), str(SUITE / run), "--metrics",
                                       requested_measures(expected_file), "--format", "trec", "--order", "trec9",
                                       *options])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == computed_lines(expected_file)
    assert "warning:" not in result.stderr


def test_comment_test_map_and_p10_with_default_options() -> None:
    """The issue's acceptance line: default options, trec_eval's names, its `all` lines exactly."""
    _require_suite()
    result = CliRunner().invoke(main, ["evaluate", "--qrels", str(SUITE / "qrels.comment.test"),
                                       str(SUITE / "results.comment.test"), "--format", "trec",
                                       "--metrics", "map,P_10"])
    assert result.exit_code == 0, result.output
    summary = [line for line in result.stdout.splitlines() if line.split("\t")[1] == "all"]
    assert summary == ["runid                 \tall\tcomment.test",
                       "num_q                 \tall\t31",
                       "num_ret               \tall\t3100",
                       "num_rel               \tall\t4463",
                       "num_rel_ret           \tall\t1398",
                       "map                   \tall\t0.2689",
                       "P_10                  \tall\t0.7710"]
    assert "2024-36302" in result.stderr and "score 0" in result.stderr  # the query without a relevant doc


def test_the_suite_covers_every_family_and_query() -> None:
    """Guard against a vacuous pass: the cases really hold the measures and queries we expect."""
    _require_suite()
    detailed = ["out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql"]
    families = {re.sub(r"_\d+$", "_K", m) for name in detailed for m in expected_values(name) if OURS.match(m)}
    assert families == {"map", "map_cut_K", "Rprec", "bpref", "recip_rank", "P_K", "recall_K", "ndcg",
                        "ndcg_cut_K", "success_K"}
    for name in detailed:
        for measure, per_query in expected_values(name).items():
            assert set(per_query) == ({"all"} if measure in ("runid", "num_q") else {"301", "302", "303", "all"})
    total = sum(len(v) for name in CASES for v in expected_values(name).values())
    assert total >= 700  # 730 values in the files as published


def test_ties_are_broken_by_doc_id_descending() -> None:
    """results.test ranks disagree with its scores and holds tie groups; trec_eval re-sorts."""
    _require_suite()
    from corpora.trec_io import read_run

    run = read_run(SUITE / "results.test")
    items = run.items("301")
    for (doc_a, score_a), (doc_b, score_b) in zip(items, items[1:]):
        assert score_a > score_b or (score_a == score_b and doc_a > doc_b)
    assert any(a[1] == b[1] for a, b in zip(items, items[1:]))
