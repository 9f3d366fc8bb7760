"""``bench evaluate`` through click's CliRunner: outputs, options, and bad input (exit 2, one line)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from harness.cli import main

SEED_QRELS = """\
q1 0 A 3
q1 0 B 2
q1 0 C 1
q1 0 Y 0
"""
SEED_RUN = """\
q1 Q0 B 1 4.0 mine
q1 Q0 X 2 3.0 mine
q1 Q0 A 3 2.0 mine
q1 Q0 C 4 1.0 mine
"""


def bench(*args: str) -> Result:
    return CliRunner().invoke(main, ["evaluate", *args])


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "qrels.txt").write_text(SEED_QRELS)
    (tmp_path / "run.trec").write_text(SEED_RUN)
    return {"qrels": tmp_path / "qrels.txt", "run": tmp_path / "run.trec", "dir": tmp_path}


def test_seed_001_worked_example(files: dict[str, Path]) -> None:
    result = bench("--qrels", str(files["qrels"]), str(files["run"]),
                   "--metrics", "ndcg_exp@4,recall@4,precision@4,hit@4,mrr", "--format", "csv")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout), dtype={"query_id": str})
    assert list(frame.columns) == ["run", "query_id", "ndcg_exp@4", "recall@4", "precision@4", "hit@4", "mrr"]
    assert list(frame.query_id) == ["q1", "all"]
    means = frame.set_index("query_id").loc["all"]
    assert round(means["ndcg_exp@4"], 3) == 0.738
    assert (means["recall@4"], means["precision@4"], means["hit@4"], means["mrr"]) == (1.0, 0.75, 1.0, 1.0)


def test_csv_has_one_row_per_query_and_run_plus_all(files: dict[str, Path]) -> None:
    other = files["dir"] / "other.trec"
    other.write_text("q1 Q0 A 1 1 x\nq2 Q0 Z 1 1 x\n")
    qrels = files["dir"] / "two.txt"
    qrels.write_text(SEED_QRELS + "q2 0 Z 1\nq3 0 W 0\n")
    result = bench("--qrels", str(qrels), str(files["run"]), str(other), "--metrics", "P_1,recip_rank",
                   "--format", "csv")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout), dtype={"query_id": str})
    assert frame[["run", "query_id"]].values.tolist() == [
        [str(files["run"]), "q1"], [str(files["run"]), "q2"], [str(files["run"]), "all"],
        [str(other), "q1"], [str(other), "q2"], [str(other), "all"],
    ]
    # q2 is missing from the first run: it counts, as 0 (trec_eval -c); q3 has no relevant doc: excluded
    assert frame.P_1.tolist() == [1.0, 0.0, 0.5, 1.0, 1.0, 1.0]
    assert "missing from the run" in result.stderr and "excluded: 'q3'" in result.stderr


def test_run_queries_only_is_plain_trec_eval(files: dict[str, Path]) -> None:
    qrels = files["dir"] / "two.txt"
    qrels.write_text(SEED_QRELS + "q2 0 Z 1\n")
    result = bench("--qrels", str(qrels), str(files["run"]), "--metrics", "mrr", "--format", "csv",
                   "--run-queries-only")
    frame = pd.read_csv(io.StringIO(result.stdout), dtype={"query_id": str})
    assert frame.query_id.tolist() == ["q1", "all"] and frame.mrr.tolist() == [1.0, 1.0]


def test_trec_format_is_trec_eval_layout(files: dict[str, Path]) -> None:
    result = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "P_4,ndcg_cut_4",
                   "--format", "trec")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"runid                 \tall\t{files['run']}"
    assert "P_4                   \tq1\t0.7500" in lines
    assert "P_4                   \tall\t0.7500" in lines
    assert all(len(line.split("\t")) == 3 for line in lines)


def test_json_and_table_formats(files: dict[str, Path]) -> None:
    result = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr,ndcg@4", "--format", "json")
    document = json.loads(result.stdout)
    assert document["runs"][0]["means"]["mrr"] == 1.0
    assert document["runs"][0]["per_query"]["q1"]["mrr"] == 1.0
    assert document["settings"]["rel_threshold"] == 1
    table = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr,ndcg@4")
    assert table.exit_code == 0 and "mrr" in table.stdout and "1.0000" in table.stdout


def test_rel_threshold_and_depth(files: dict[str, Path]) -> None:
    # with threshold 3 only A counts: first relevant at rank 3
    result = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr,ndcg", "--format", "csv",
                   "--rel-threshold", "3")
    frame = pd.read_csv(io.StringIO(result.stdout), dtype={"query_id": str})
    assert frame.mrr.iloc[0] == pytest.approx(1 / 3)
    # depth 2 keeps B and X only
    result = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "recall@4", "--format", "csv",
                   "--depth", "2")
    assert pd.read_csv(io.StringIO(result.stdout))["recall@4"].iloc[0] == pytest.approx(1 / 3)


def test_file_order(files: dict[str, Path]) -> None:
    run = files["dir"] / "reversed.trec"
    run.write_text("q1 Q0 C 1 1 t\nq1 Q0 A 2 2 t\n")
    trec = bench("--qrels", str(files["qrels"]), str(run), "--metrics", "mrr", "--format", "csv")
    kept = bench("--qrels", str(files["qrels"]), str(run), "--metrics", "mrr", "--format", "csv", "--order", "file")
    assert pd.read_csv(io.StringIO(trec.stdout)).mrr.iloc[0] == 1.0
    assert pd.read_csv(io.StringIO(kept.stdout)).mrr.iloc[0] == 1.0  # C (grade 1) is relevant too
    strict = bench("--qrels", str(files["qrels"]), str(run), "--metrics", "mrr", "--format", "csv", "--order", "file",
                   "--rel-threshold", "3")
    assert pd.read_csv(io.StringIO(strict.stdout)).mrr.iloc[0] == 0.5


# ----- bad input: one line on stderr, exit 2 --------------------------------------------------


def fails(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.stderr.startswith("error: ") or result.stderr.startswith("Usage")
    for fragment in fragments:
        assert fragment in result.stderr


def test_a_run_line_with_five_fields(files: dict[str, Path]) -> None:
    files["run"].write_text(SEED_RUN + "q1 Q0 D 5 0.5\n")
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"), "run.trec:5", "got 5")


def test_a_non_numeric_score(files: dict[str, Path]) -> None:
    files["run"].write_text("q1 Q0 B 1 four mine\n")
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"), "run.trec:1",
          "'four' is not a number")


def test_a_grade_that_is_not_an_integer(files: dict[str, Path]) -> None:
    files["qrels"].write_text(SEED_QRELS + "q1 0 Z relevant\n")
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"), "qrels.txt:5",
          "'relevant' is not an integer")


def test_an_empty_run_file(files: dict[str, Path]) -> None:
    files["run"].write_text("")
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"), "run.trec", "empty")


def test_a_run_whose_queries_are_all_absent_from_the_qrels(files: dict[str, Path]) -> None:
    files["run"].write_text("301 Q0 B 1 4.0 mine\n302 Q0 B 1 4.0 mine\n")
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"), "run.trec",
          "none of the run's 2 queries", "'301'", "same query ids")


def test_qrels_without_any_relevant_judgment(files: dict[str, Path]) -> None:
    files["qrels"].write_text("q1 0 A 0\n")
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"), "no query has a relevant")


@pytest.mark.parametrize(("option", "fragment"), [
    (("--metrics", "ndgc@5"), "unknown metric 'ndgc@5'"),
    (("--metrics", "ndcg@0"), "'k' parameter"),
    (("--metrics", "mrr", "--depth", "0"), "'depth' parameter"),
    (("--metrics", "mrr", "--rel-threshold", "-1"), "'rel_threshold' parameter"),
])
def test_bad_options(files: dict[str, Path], option: tuple[str, ...], fragment: str) -> None:
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), *option), fragment)


def test_a_missing_run_file(files: dict[str, Path]) -> None:
    fails(bench("--qrels", str(files["qrels"]), str(files["dir"] / "nope.trec"), "--metrics", "mrr"),
          "nope.trec", "file not found")
