"""One grammar for scores and grades (corpora.number_grammar): every field retbench accepts is read as
trec_eval's atof/atol read it, every field they would read differently from its face is refused with
file:line, in every reader; one rule for a judgment repeated; the --ppi counts say which queries."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from corpora import InputFileError, load_dataset, read_qrels, read_run
from corpora.number_grammar import (SCORE_FIX, parse_grade, parse_score, read_score, read_scores, score_array,
                                    trec_eval_grade, trec_eval_score)
from corpora.trec_io import QrelsBuilder, read_qrels_file
from harness.cli import main
from harness.judgments.ppi import ppi
from harness.judgments.systems import PPIBySystem

# ----- the grammar as a table -------------------------------------------------------------------

# (field, the double it is): each equals float(field), and C strtod reads the same from all of it
ACCEPTED_SCORES = [
    ("1", 1.0), ("-2.5", -2.5), ("+.5", 0.5), ("5.", 5.0), ("007", 7.0), ("1e3", 1000.0), ("1.5E-3", 0.0015),
    ("-0", -0.0), ("0.000000", 0.0), ("inf", math.inf), ("-Infinity", -math.inf), ("+INF", math.inf),
    ("1e400", math.inf), ("1e-400", 0.0), ("0.1000000000000000055511151231257827", 0.1),
]
# (field, what trec_eval's atof reads from it): each refused
REFUSED_SCORES = [
    ("1_000", 1.0), ("0x10", 16.0), ("0x1p3", 8.0), ("١", 0.0), ("١٢", 0.0), ("1e", 1.0), ("1.5e", 1.5),
    ("1,5", 1.0), ("infinite", math.inf), ("True", 0.0), ("1d3", 1.0), ("--1", 0.0), ("1.2.3", 1.2), ("high", 0.0),
    ("+", 0.0), (".", 0.0), ("1e3.5", 1000.0), ("２", 0.0),
]
ACCEPTED_GRADES = [
    ("0", 0), ("2", 2), ("-1", -1), ("+3", 3), ("007", 7), ("1.0", 1), ("0.000000", 0), ("-0", 0), ("1.", 1),
    ("9007199254740993", 9007199254740993), ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -(2**63)),
]
# (field, what trec_eval's atol reads from it)
REFUSED_GRADES = [
    ("1e3", 1), ("1e0", 1), ("1.5", 1), ("1_0", 1), ("٣", 0), ("0x10", 0), ("rel", 0), ("inf", 0), (".0", 0),
    ("2.01", 2), ("１", 0), ("", 0),
]


@pytest.mark.parametrize(("text", "value"), ACCEPTED_SCORES)
def test_an_accepted_score_is_read_as_float_and_strtod_read_it(text: str, value: float) -> None:
    read = parse_score("run.trec", 1, text)
    assert read == value and math.copysign(1, read) == math.copysign(1, value)
    assert read == float(text) == trec_eval_score(text)


@pytest.mark.parametrize(("text", "trec_eval_reads"), REFUSED_SCORES)
def test_a_refused_score_names_the_field_and_what_trec_eval_would_read(text: str, trec_eval_reads: float) -> None:
    with pytest.raises(InputFileError) as caught:
        parse_score("run.trec", 7, text)
    assert str(caught.value) == (f"run.trec:7: score {text!r} is not a number as written (trec_eval would read it as "
                                 f"{trec_eval_reads!r}). Fix: {SCORE_FIX}.")
    assert trec_eval_score(text) == trec_eval_reads


@pytest.mark.parametrize("text", ["nan", "NaN", "-nan", "+NAN"])
def test_a_nan_score_is_refused_because_it_cannot_be_ranked(text: str) -> None:
    with pytest.raises(InputFileError) as caught:
        parse_score("run.trec", 2, text)
    assert str(caught.value) == (f"run.trec:2: score {text!r} is NaN, which cannot be ranked. "
                                 "Fix: give every result a real-valued score.")


@pytest.mark.parametrize(("text", "value"), ACCEPTED_GRADES)
def test_an_accepted_grade_is_the_integer_atol_reads(text: str, value: int) -> None:
    assert parse_grade("qrels.txt", 1, text) == value == trec_eval_grade(text)


@pytest.mark.parametrize(("text", "trec_eval_reads"), REFUSED_GRADES)
def test_a_refused_grade_names_the_field_and_what_trec_eval_would_read(text: str, trec_eval_reads: int) -> None:
    with pytest.raises(InputFileError) as caught:
        parse_grade("qrels.txt", 4, text)
    assert str(caught.value).startswith(f"qrels.txt:4: grade {text!r} is not an integer as written (trec_eval would "
                                        f"read it as {trec_eval_reads}). Fix: write each grade as an integer in ASCII "
                                        "digits")
    assert "1000, not 1e3" in str(caught.value)


def test_a_grade_outside_64_bits_is_refused_without_reading_its_digits() -> None:
    for text in ("9223372036854775808", "-9223372036854775809", "1" * 100_000):
        with pytest.raises(InputFileError, match=r"is outside the range of a 64-bit integer"):
            parse_grade("qrels.txt", 1, text)


# ----- every reader refuses 1_000 (score) and 1e3 (grade) at file:line ---------------------------


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


SCORE_1000 = "score '1_000' is not a number as written (trec_eval would read it as 1.0)"
GRADE_1E3 = "grade '1e3' is not an integer as written (trec_eval would read it as 1)"


@pytest.mark.parametrize(("case", "text", "options"), [
    ("ASCII, the array path", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1_000 t\n", {}),
    ("not ASCII, the pandas path", "q1 Q0 dé 1 2.0 t\nq1 Q0 d2 2 1_000 t\n", {}),
    ("trailing fields, the line parser", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1_000 t x\n", {"trailing_fields": "ignore"}),
    ("an exponent beside it", "q1 Q0 d1 1 2e0 t\nq1 Q0 d2 2 1_000 t\n", {}),
])
def test_every_run_reading_path_refuses_an_underscore_score(tmp_path: Path, case: str, text: str,
                                                            options: dict[str, str]) -> None:
    path = _write(tmp_path, "run.trec", text)
    with pytest.raises(InputFileError) as caught:
        read_run(path, **options)  # type: ignore[arg-type]
    assert str(caught.value).startswith(f"{path}:2: {SCORE_1000}"), case


@pytest.mark.parametrize(("case", "name", "text"), [
    ("TREC qrels", "qrels.txt", "q1 0 d1 1\nq1 0 d2 1e3\n"),
    ("TREC qrels, not ASCII", "qrels.txt", "q1 0 dé 1\nq1 0 d2 1e3\n"),
    ("BEIR qrels with a header", "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1e3\n"),
    ("TREC qrels, first line", "qrels.txt", "q1 0 d2 1e3\nq1 0 d1 1\n"),
])
def test_qrels_files_refuse_an_exponent_grade(tmp_path: Path, case: str, name: str, text: str) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(InputFileError) as caught:
        read_qrels(path)
    line = 1 + text.split("\n").index(next(x for x in text.split("\n") if x.endswith("1e3")))
    assert str(caught.value).startswith(f"{path}:{line}: {GRADE_1E3}"), case


CSV_FOLDER = {"corpus.csv": "id,text\nd1,refunds\nd2,passwords\n", "queries.csv": "id,text\nq1,refund\nq2,password\n"}
BEIR_FOLDER = {"corpus.jsonl": '{"_id": "d1", "text": "refunds"}\n{"_id": "d2", "text": "passwords"}\n',
               "queries.jsonl": '{"_id": "q1", "text": "refund"}\n{"_id": "q2", "text": "password"}\n'}
SMART_FOLDER = {"TOY.ALL": ".I 1\n.W\nrefunds\n.I 2\n.W\npasswords\n",
                "TOY.QRY": ".I 1\n.W\nrefund\n.I 2\n.W\npassword\n"}


def _folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        _write(root, name, text)
    return root


@pytest.mark.parametrize(("case", "files", "qrels_name", "qrels", "line"), [
    ("tabular TSV", CSV_FOLDER, "qrels.tsv", "q1\td1\t1\nq2\td2\t1e3\n", 2),
    ("tabular TSV, the exponent on the first line is no header", CSV_FOLDER, "qrels.tsv",
     "q1\td1\t1e3\nq2\td2\t1\n", 1),
    ("tabular CSV", CSV_FOLDER, "qrels.csv", "query,doc,grade\nq1,d1,1\nq2,d2,1e3\n", 3),
    ("BEIR", BEIR_FOLDER, "qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1e3\n", 3),
    ("SMART, TREC layout", SMART_FOLDER, "TOY.REL", "1 0 1 1\n2 0 2 1e3\n", 2),
])
def test_corpus_loaders_refuse_an_exponent_grade(tmp_path: Path, case: str, files: dict[str, str], qrels_name: str,
                                                 qrels: str, line: int) -> None:
    folder = _folder(tmp_path / "c", {**files, qrels_name: qrels})
    with pytest.raises(InputFileError) as caught:
        load_dataset(str(folder))
    assert str(caught.value).startswith(f"{folder / qrels_name}:{line}: {GRADE_1E3}"), case


def _bench(*args: str):
    return CliRunner().invoke(main, list(args))


def test_bench_evaluate_refuses_both_with_one_error_line(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 1e3\n")
    good_qrels = _write(tmp_path, "good.txt", "q1 0 d1 1\n")
    run = _write(tmp_path, "run.trec", "q1 Q0 d1 1 1_000 t\n")
    good_run = _write(tmp_path, "good.trec", "q1 Q0 d1 1 1000 t\n")
    for args, expected in (((str(qrels), str(good_run)), f"error: {qrels}:2: {GRADE_1E3}"),
                           ((str(good_qrels), str(run)), f"error: {run}:1: {SCORE_1000}")):
        done = _bench("evaluate", "--qrels", args[0], args[1], "--metrics", "mrr")
        assert done.exit_code == 2 and done.stderr.startswith(expected), done.output
        assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.output


def test_bench_agree_refuses_an_exponent_grade_that_garbled_its_confusion_table(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.txt", "q1 0 d1 1\nq1 0 d2 0\n")
    b = _write(tmp_path, "b.txt", "q1 0 d1 1e3\nq1 0 d2 0\n")
    done = _bench("agree", str(a), str(b))
    assert done.exit_code == 2 and done.stderr.startswith(f"error: {b}:1: {GRADE_1E3}"), done.output


# ----- every float written as text is read back exactly ------------------------------------------

FINITE = st.floats(allow_nan=False, allow_infinity=True)


@given(FINITE)
def test_every_float_written_by_repr_or_printf_is_read_back_exactly(value: float) -> None:
    for text in (repr(value), "%.17g" % value, "%f" % value, "%e" % value, "%.3E" % value):
        read = parse_score("run.trec", 1, text)
        assert read == float(text) == trec_eval_score(text)
        if text in (repr(value), "%.17g" % value):
            assert read == value and math.copysign(1, read) == math.copysign(1, value)


FIELD = st.text(alphabet="0123456789.eE+-_ ,\n\tinfaINFAx١", max_size=8)


@given(st.lists(FIELD, max_size=6))
@example(["1", "1_0"])
@example(["1e5", " 1"])
@example(["2\n"])
@example(["1,2"])
@example(["1.5", "inf", "1e-05"])
def test_many_fields_are_read_as_each_alone(texts: list[str]) -> None:
    alone = [read_score(text) for text in texts]
    assert read_scores(texts) == (None if None in alone else alone)
    array = score_array(texts)
    assert (array is None) if None in alone else (array is not None and array.tolist() == alone)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=40), st.booleans())
def test_run_files_read_every_written_float_exactly_on_every_path(tmp_path_factory: pytest.TempPathFactory,
                                                                  values: list[float], ascii_ids: bool) -> None:
    folder = tmp_path_factory.mktemp("run")
    doc = "d" if ascii_ids else "dé"  # a non-ASCII id sends the file down the pandas path
    lines, expected = [], {}
    for j, value in enumerate(values):
        for k, text in enumerate((repr(value), "%.17g" % value, "%f" % value, "%e" % value)):
            query = f"q{j}-{k}"
            lines.append(f"{query} Q0 {doc} 1 {text} t")
            expected[query] = float(text)
    run = read_run(_write(folder, "run.trec", "\n".join(lines) + "\n"))
    assert {q: run.items(q)[0][1] for q in expected} == expected


# ----- one rule for a judgment given twice ------------------------------------------------------

REPEATED = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 1\n"
CONFLICTING = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n"


def _repeat_warning(source: Path | str) -> str:
    return (f"{source}: 1 judgment line(s) repeat an earlier (query, document) pair with the same grade; "
            "each pair counts once")


def _conflict(path: Path) -> str:
    return (f"{path}:3: query 'q1', document 'd1' is judged 2 here but 1 at line 1. Fix: keep one grade per "
            "(query, document): delete the line with the wrong grade.")


def test_the_builder_counts_an_identical_repeat_and_refuses_another_grade() -> None:
    builder = QrelsBuilder()
    builder.add("q1", "d1", 1, Path("a.txt"), 1)
    builder.add("q1", "d1", 1, Path("a.txt"), 5)
    assert builder.judgments == {"q1": {"d1": 1}} and builder.warnings("a.txt") == [_repeat_warning("a.txt")]
    with pytest.raises(InputFileError) as caught:
        builder.add("q1", "d1", 0, Path("b.txt"), 2)
    assert str(caught.value).startswith("b.txt:2: query 'q1', document 'd1' is judged 0 here but 1 at a.txt:1.")


def test_read_qrels_file_follows_the_rule(tmp_path: Path) -> None:
    path = _write(tmp_path, "qrels.txt", REPEATED)
    read = read_qrels_file(path)
    assert read.qrels.to_dict() == {"q1": {"d1": 1, "d2": 0}} and read.warnings == [_repeat_warning(path)]
    conflicting = _write(tmp_path, "conflict.txt", CONFLICTING)
    with pytest.raises(InputFileError) as caught:
        read_qrels_file(conflicting)
    assert str(caught.value) == _conflict(conflicting)


def test_bench_evaluate_warns_about_a_repeat_and_refuses_a_conflict(tmp_path: Path) -> None:
    run = _write(tmp_path, "run.trec", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    qrels = _write(tmp_path, "qrels.txt", REPEATED)
    done = _bench("evaluate", "--qrels", str(qrels), str(run), "--metrics", "mrr", "--format", "csv")
    assert done.exit_code == 0, done.output
    assert f"warning: {_repeat_warning(qrels)}" in done.stderr.splitlines()
    conflicting = _write(tmp_path, "conflict.txt", CONFLICTING)
    done = _bench("evaluate", "--qrels", str(conflicting), str(run), "--metrics", "mrr")
    assert done.exit_code == 2 and done.stderr == f"error: {_conflict(conflicting)}\n"


def test_bench_agree_warns_about_a_repeat_and_refuses_a_conflict(tmp_path: Path) -> None:
    other = _write(tmp_path, "other.txt", "q1 0 d1 1\nq1 0 d2 1\n")
    qrels = _write(tmp_path, "qrels.txt", REPEATED)
    done = _bench("agree", str(qrels), str(other))
    assert done.exit_code == 0, done.output
    assert f"warning: {_repeat_warning(qrels)}" in done.stderr.splitlines()
    assert "pairs judged in both: 2" in done.stdout
    conflicting = _write(tmp_path, "conflict.txt", CONFLICTING)
    done = _bench("agree", str(other), str(conflicting))
    assert done.exit_code == 2 and done.stderr == f"error: {_conflict(conflicting)}\n"


@pytest.mark.parametrize(("case", "files", "name", "to_line"), [
    ("tabular", CSV_FOLDER, "qrels.tsv", lambda q, d, g: f"{q}\t{d}\t{g}"),
    ("BEIR", BEIR_FOLDER, "qrels/test.tsv", lambda q, d, g: f"{q}\t{d}\t{g}"),
    ("TREC lines in a tabular folder", CSV_FOLDER, "qrels.txt", lambda q, d, g: f"{q} 0 {d} {g}"),
])
def test_a_corpus_loads_with_the_same_rule(tmp_path: Path, case: str, files: dict[str, str], name: str,
                                           to_line) -> None:
    def text(grades: tuple[int, int, int]) -> str:
        pairs = (("q1", "d1"), ("q2", "d2"), ("q1", "d1"))
        return "".join(to_line(q, d, g) + "\n" for (q, d), g in zip(pairs, grades))

    folder = _folder(tmp_path / "same", {**files, name: text((1, 1, 1))})
    dataset = load_dataset(str(folder))
    assert dataset.qrels.to_dict() == {"q1": {"d1": 1}, "q2": {"d2": 1}}, case
    assert _repeat_warning(folder / name) in dataset.warnings, case
    folder = _folder(tmp_path / "two", {**files, name: text((1, 1, 2))})
    with pytest.raises(InputFileError) as caught:
        load_dataset(str(folder))
    assert str(caught.value) == _conflict(folder / name), case


# ----- --ppi says which queries each set judges -------------------------------------------------


def test_the_ppi_line_counts_what_each_set_judges() -> None:
    queries = [f"q{j}" for j in range(1, 15)]
    result = ppi([0.5] * 14, [0.4, 0.6], [0.5, 0.5])
    partial = PPIBySystem(queries, ["q1", "q2"], ["q1", "q2", "q3", "q4", "q5"], {"bm25": result})
    assert partial.coverage("ndcg@10") == (
        "prediction-powered ndcg@10 over the results folder's 14 evaluated queries: B judges 5 of them (the other 9 "
        "score 0 under B: q10, q11, q12, q13, q14 and 4 more); A judges 2 of them, which correct the estimate; "
        "PPI++ (the machine weighted by λ); 95%:")
    whole = PPIBySystem(queries, ["q1", "q2"], queries, {"bm25": result})
    assert whole.coverage("ndcg@10") == ("prediction-powered ndcg@10 over the results folder's 14 evaluated queries: "
                                         "B judges all 14; A judges 2 of them, which correct the estimate; "
                                         "PPI++ (the machine weighted by λ); 95%:")
