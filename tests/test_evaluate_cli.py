"""``bench evaluate`` through click's CliRunner: outputs, options, and bad input (exit 2, one line)."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result

from corpora import Run, read_qrels
from harness import evaluate
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
        [str(files["run"]), "q1"], [str(files["run"]), "q2"], [str(files["run"]), "q3"], [str(files["run"]), "all"],
        [str(other), "q1"], [str(other), "q2"], [str(other), "q3"], [str(other), "all"],
    ]
    # trec_eval -c: every query of the qrels counts; q2 is missing from the first run and q3 has no
    # relevant document, so both score 0 (until this default was fixed, q3 was left out)
    assert frame.P_1.tolist() == [1.0, 0.0, 0.0, 1 / 3, 1.0, 1.0, 0.0, 2 / 3]
    assert "missing from the run and score 0: 'q2', 'q3'" in result.stderr
    assert "no relevant document (grade >= 1) and score 0: 'q3'" in result.stderr


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
    # per query: the counts, then the measures in trec_eval's order; then `all`, led by the run's tag
    assert result.stdout.splitlines() == [
        "num_ret               \tq1\t4",
        "num_rel               \tq1\t3",
        "num_rel_ret           \tq1\t3",
        "P_4                   \tq1\t0.7500",
        "ndcg_cut_4            \tq1\t0.8254",  # (2 + 3/2 + 1/log2 5) / (3 + 2/log2 3 + 1/2)
        "runid                 \tall\tmine",
        "num_q                 \tall\t1",
        "num_ret               \tall\t4",
        "num_rel               \tall\t3",
        "num_rel_ret           \tall\t3",
        "P_4                   \tall\t0.7500",
        "ndcg_cut_4            \tall\t0.8254",
    ]


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


# ----- how scores are read: trec_eval 10 (doubles) by default, 9.x (floats) with --order trec9 ----
# Hand-derived: 0.1000000001 > 0.1 as doubles, so trec_eval 10 ranks a first; as floats both are
# 0.1f, a tie that trec_eval breaks by doc id descending, so 9.x (and pytrec_eval) rank b first.

TWO_LINES_QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
TWO_LINES_RUN = "q1 Q0 a 1 0.1000000001 t\nq1 Q0 b 2 0.1 t\nq2 Q0 c 1 1 t\n"


def test_scores_are_compared_as_doubles_as_trec_eval_10_does(files: dict[str, Path]) -> None:
    files["qrels"].write_text(TWO_LINES_QRELS)
    files["run"].write_text(TWO_LINES_RUN)
    ten = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "P_1,recip_rank", "--format", "trec")
    assert ten.exit_code == 0, ten.output
    assert "P_1                   \tq1\t1.0000" in ten.stdout and "recip_rank            \tq1\t1.0000" in ten.stdout
    nine = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "P_1,recip_rank", "--format", "trec",
                 "--order", "trec9")
    assert "P_1                   \tq1\t0.0000" in nine.stdout and "recip_rank            \tq1\t0.5000" in nine.stdout
    # either way, one warning line: how many queries depend on the reading, and how to get the other
    (line,) = [w for w in ten.stderr.splitlines() if w.startswith("warning:")]
    assert "1 query ranks differently as trec_eval 10 and 9.x read their scores" in line and "'q1'" in line
    assert "--order trec9" in line
    (line,) = [w for w in nine.stderr.splitlines() if w.startswith("warning:")]
    assert "1 query ranks differently" in line and "--order trec gives trec_eval 10's" in line
    kept = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "P_1", "--order", "file")
    assert "warning:" not in kept.stderr  # the file's order decides: the reading plays no part


def test_no_warning_when_the_ranking_does_not_depend_on_the_reading(files: dict[str, Path]) -> None:
    files["qrels"].write_text(TWO_LINES_QRELS)
    # the larger doc id has the larger double: both readings put b first
    files["run"].write_text("q1 Q0 b 1 0.1000000001 t\nq1 Q0 a 2 0.1 t\nq2 Q0 c 1 1 t\n")
    result = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "P_1", "--format", "csv")
    assert result.exit_code == 0 and "warning:" not in result.stderr


def test_json_records_how_the_scores_were_read(files: dict[str, Path]) -> None:
    files["qrels"].write_text(TWO_LINES_QRELS)
    files["run"].write_text(TWO_LINES_RUN)
    for options, compared_as in (((), "float64"), (("--order", "trec9"), "float32"), (("--order", "file"), None)):
        result = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "P_1", "--format", "json",
                       *options)
        document = json.loads(result.stdout)
        assert document["settings"]["scores_compared_as"] == compared_as
        assert len(document["runs"][0]["warnings"]) == (0 if compared_as is None else 1)


def _random_files(folder: Path, seed: int) -> tuple[Path, Path]:
    """Tie-heavy files: few score values, some nudged by 1e-10 (colliding only as floats), queries
    missing from the run, judged only non-relevant, or ranked but not judged."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(40)]
    qrels, run = [], []
    for q in range(25):
        judged = rng.choice(docs, size=int(rng.integers(1, 10)), replace=False)
        grades = rng.choice([0, 0, 1, 2], size=len(judged)) if q % 7 else np.zeros(len(judged), dtype=int)
        qrels += [f"q{q} 0 {d} {g}" for d, g in zip(judged, grades)]
        if q % 5 == 4:
            continue
        for d in rng.choice(docs, size=int(rng.integers(1, 30)), replace=False):
            score = float(rng.choice([0.1, 0.5, 1.0, 2.25]))
            run.append(f"q{q} Q0 {d} 0 {score * (1 + int(rng.integers(-3, 4)) * 1e-10)!r} t")
    run.append("x Q0 d1 0 1.0 t")
    (folder / "r.qrels").write_text("\n".join(qrels) + "\n")
    (folder / "r.run").write_text("\n".join(rng.permutation(run)) + "\n")
    return folder / "r.qrels", folder / "r.run"


@pytest.mark.parametrize("order", ["trec", "trec9"])
def test_bench_evaluate_equals_harness_evaluate_on_the_same_files(tmp_path: Path, order: str) -> None:
    metrics = "map,P_5,recip_rank,ndcg_cut_10,recall_10,Rprec,bpref,success_1"
    for seed in range(3):
        qrels, run = _random_files(tmp_path, seed)
        result = bench("--qrels", str(qrels), str(run), "--metrics", metrics, "--format", "csv", "--order", order)
        assert result.exit_code == 0, result.output
        assert "queries rank differently as trec_eval 10 and 9.x" in result.stderr  # the reading matters here
        printed = pd.read_csv(io.StringIO(result.stdout), dtype={"query_id": str}).set_index("query_id")
        library = evaluate(Run.read(run, order=order), read_qrels(qrels), metrics)
        names = metrics.split(",")
        assert printed.index.tolist() == [*library.index, "all"]  # the same queries, in the same order
        assert printed.loc[library.index, names].to_numpy().tolist() == library[names].to_numpy().tolist()
        assert printed.loc["all", names].tolist() == [math.fsum(library[n]) / len(library) for n in names]


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


# ----- qrels layouts: TREC or BEIR, told apart by content -------------------------------------

BEIR_QRELS = "query-id\tcorpus-id\tscore\nq1\tA\t3\nq1\tB\t2\nq1\tC\t1\nq1\tY\t0\n"


@pytest.mark.parametrize("text", [BEIR_QRELS, BEIR_QRELS.split("\n", 1)[1]], ids=["header", "no-header"])
def test_beir_qrels_score_like_the_same_trec_qrels(files: dict[str, Path], text: str) -> None:
    beir = files["dir"] / "test.tsv"
    beir.write_text(text)
    args = [str(files["run"]), "--metrics", "ndcg@4,P_2,mrr,bpref", "--format", "csv"]
    from_beir, from_trec = bench("--qrels", str(beir), *args), bench("--qrels", str(files["qrels"]), *args)
    assert from_beir.exit_code == 0, from_beir.output
    assert from_beir.stdout == from_trec.stdout


def test_beir_qrels_with_spaces_inside_ids_split_on_tabs(files: dict[str, Path]) -> None:
    beir = files["dir"] / "test.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\tA\t1\n")
    forced = bench("--qrels", str(beir), str(files["run"]), "--metrics", "mrr", "--format", "csv",
                   "--qrels-format", "beir")
    assert forced.exit_code == 0, forced.output
    assert pd.read_csv(io.StringIO(forced.stdout)).mrr.iloc[0] == pytest.approx(1 / 3)


@pytest.mark.parametrize(("text", "fragments"), [
    ("q1 A 3 extra more\n", ("qrels.txt:1", "neither TREC qrels", "BEIR qrels", "Fix:")),
    ("q1 A\n", ("qrels.txt:1", "line has 2 fields", "Fix:")),
    ("q1\tA\t3\nq1 0 B 2\n", ("qrels.txt:2", "expected 3 fields", "read as BEIR qrels from line 1", "Fix:")),
    ("q1 0 A 3\nq1\tB\t2\n", ("qrels.txt:2", "expected 4 fields", "read as TREC qrels from line 1", "Fix:")),
])
def test_a_qrels_file_that_is_neither_layout_is_refused(files: dict[str, Path], text: str,
                                                        fragments: tuple[str, ...]) -> None:
    files["qrels"].write_text(text)
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"), *fragments)


@pytest.mark.parametrize("grade", ["9223372036854775808", "-9223372036854775809"])
@pytest.mark.parametrize("layout", ["trec", "beir"])
def test_a_grade_beyond_64_bits_is_an_error_at_its_line(files: dict[str, Path], grade: str, layout: str) -> None:
    line = f"q1 0 Z {grade}\n" if layout == "trec" else f"q1\tZ\t{grade}\n"
    first = SEED_QRELS if layout == "trec" else "q1\tA\t3\n"
    files["qrels"].write_text(first + line)
    row = first.count("\n") + 1
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"),
          f"qrels.txt:{row}", f"grade {grade!r}", "64-bit", "Fix:")


# ----- run lines: exactly six fields -----------------------------------------------------------


@pytest.mark.parametrize("row", [1, 3], ids=["first-line", "later-line"])
def test_a_seventh_field_is_an_error_at_its_line(files: dict[str, Path], row: int) -> None:
    """A doc id with a space shifts rank into the doc column and the rank into the score: trec_eval
    would read `q1 Q0 refund 1 2 4.0 mine` as doc `refund`, score 2 (and the old reader did too)."""
    lines = SEED_RUN.splitlines()
    lines[row - 1] = "q1 Q0 refund 1 2 4.0 mine" if row == 1 else "q1 Q0 refund 1 3 2.5 mine"
    files["run"].write_text("\n".join(lines) + "\n")
    fails(bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "mrr"),
          f"run.trec:{row}", "expected 6", "got 7", "--trailing-fields ignore")


def test_trailing_fields_ignore_reads_like_trec_eval(files: dict[str, Path]) -> None:
    files["run"].write_text(SEED_RUN.replace("mine\n", "mine some words\n", 1))
    result = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "P_4", "--format", "csv",
                   "--trailing-fields", "ignore")
    assert result.exit_code == 0, result.output
    assert pd.read_csv(io.StringIO(result.stdout))["P_4"].iloc[0] == 0.75


def test_beir_fields_padded_with_spaces_are_stripped(files: dict[str, Path]) -> None:
    beir = files["dir"] / "test.tsv"
    beir.write_text("q1\t A \t3\nq1\tB\t2 \nq1 \tC\t1\n")
    padded = bench("--qrels", str(beir), str(files["run"]), "--metrics", "ndcg@4", "--format", "csv")
    plain = bench("--qrels", str(files["qrels"]), str(files["run"]), "--metrics", "ndcg@4", "--format", "csv")
    assert padded.exit_code == 0, padded.output
    assert padded.stdout.replace(str(beir), "") == plain.stdout.replace(str(files["qrels"]), "")
