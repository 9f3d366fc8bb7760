"""TREC qrels and run files: trec_eval's reading semantics, and errors that name file and line."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from corpora import InputFileError, Qrels, RetbenchError, Run
from corpora.id_hashes import hash_ids
from corpora.run_order import reading_dependent_queries
from corpora.trec_io import (TREC_EVAL_QRELS, QrelsFile, QrelsRules, format_qrels, format_raw_scores, format_run,
                             read_qrels, read_qrels_file, read_run, read_run_file, run_and_raw_score_pieces,
                             run_from_arrays, trec_scores, write_qrels, write_run)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ----- runs: ordering -------------------------------------------------------------------------


def test_ranks_by_score_then_doc_id_descending_ignoring_the_rank_column(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", """\
q1 Q0 d1 1 1.5 tag
q1 Q0 d3 2 2.5 tag
q1 Q0 d2 3 2.5 tag
q1 Q0 d10 4 2.5 tag
""")
    # 2.5 ties: d3 > d2 > d10 in byte order, descending; rank column says otherwise, ignored
    assert read_run(path).ranking("q1") == ["d3", "d2", "d10", "d1"]


def test_file_order_keeps_the_lines_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", "q1 Q0 d1 1 1.5 t\nq1 Q0 d3 2 2.5 t\nq1 Q0 d2 3 9 t\n")
    assert read_run(path, order="file").ranking("q1") == ["d1", "d3", "d2"]
    assert read_run(path).ranking("q1") == ["d2", "d3", "d1"]


def test_tie_break_is_byte_order_not_numeric_or_locale(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", "".join(f"q Q0 {d} 1 0 t\n" for d in ["B", "a", "é", "Z", "10", "9"]))
    assert read_run(path).ranking("q") == ["é", "a", "Z", "B", "9", "10"]


def test_queries_need_not_be_contiguous_and_keep_first_appearance(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", "2 Q0 a 1 1 t\n10 Q0 b 1 3 t\n2 Q0 c 2 2 t\n")
    run = read_run(path)
    assert run.query_ids == ["2", "10"]
    assert run.ranking("2") == ["c", "a"] and run.ranking("10") == ["b"]


def test_many_ties_in_many_queries_match_a_plain_sort(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    lines = []
    for q in range(30):
        docs = rng.choice(200, 40, replace=False)
        for d in docs:
            lines.append((f"q{q}", f"D{d}", float(rng.integers(0, 4))))
    rng.shuffle(lines)
    path = write(tmp_path, "run.trec", "".join(f"{q} Q0 {d} 0 {s} t\n" for q, d, s in lines))
    run = read_run(path)
    for q in {line[0] for line in lines}:
        expected = sorted(((s, d) for qq, d, s in lines if qq == q), reverse=True)
        assert run.ranking(q) == [d for _, d in expected]


def test_grouped_queries_with_a_few_out_of_order_are_each_ranked_like_a_plain_sort(tmp_path: Path) -> None:
    """Queries already grouped are sorted only where a query is out of order: the others keep
    their lines, and each query's ranking is still the plain sort's."""
    rng = np.random.default_rng(5)
    lines = []
    for q in range(40):
        scores = np.sort(rng.integers(0, 6, 25).astype(float))[::-1]
        if q % 7 == 3:
            scores[[2, 20]] = scores[[20, 2]]  # out of order
        lines += [(f"q{q}", f"D{rng.integers(10**6)}-{i}", s) for i, s in enumerate(scores)]
    path = write(tmp_path, "run.trec", "".join(f"{q} Q0 {d} 0 {s} t\n" for q, d, s in lines))
    run = read_run(path)
    assert run.query_ids == [f"q{q}" for q in range(40)]
    for q in run.query_ids:
        expected = sorted(((s, d) for qq, d, s in lines if qq == q), reverse=True)
        assert run.ranking(q) == [d for _, d in expected]


# ----- runs: lexical conventions --------------------------------------------------------------


def test_comments_only_in_column_zero_and_hash_inside_ids(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", """\
# a comment line
q1 Q0 msmarco_v2.1_doc_00_880019750#4_1633802806 1 2.0 tag
q1 Q0 doc#2 2 1.0 tag
#q1 Q0 hidden 3 9.0 tag
""")
    assert read_run(path).ranking("q1") == ["msmarco_v2.1_doc_00_880019750#4_1633802806", "doc#2"]


def test_extra_fields_leading_spaces_tabs_and_blank_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", "301\tQ0\tFR1\t1\t  2.129133\tSTANDARD\n"
                                       "\n301 Q0 FR2 2 1.5 STANDARD more junk at\n   301 Q0 FR3 3 3e0 S\r\n")
    # words after the tag are an error by default (see test_a_seventh_field_is_an_error_at_its_line);
    # trec_eval ignores them, and so does trailing_fields="ignore"
    run = read_run(path, trailing_fields="ignore")
    assert run.ranking("301") == ["FR3", "FR1", "FR2"]
    assert dict(run.items("301"))["FR1"] == 2.129133


def test_ids_stay_strings(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", "007 Q0 0042 1 1 t\n2024-127266 Q0 1.EC.AB 1 1 t\n")
    run = read_run(path)
    assert run.query_ids == ["007", "2024-127266"]
    assert run.ranking("007") == ["0042"] and run.ranking("2024-127266") == ["1.EC.AB"]


def test_run_from_arrays_orders_like_the_reader() -> None:
    run = run_from_arrays(["q", "q", "q"], ["a", "c", "b"], [1.0, 2.0, 2.0])
    assert run.ranking("q") == ["c", "b", "a"]
    with pytest.raises(ValueError, match="ranked twice"):
        run_from_arrays(["q", "q"], ["a", "a"], [1.0, 2.0])


# ----- runs: bad input ------------------------------------------------------------------------


def read_error(path: Path, reader=read_run) -> InputFileError:
    with pytest.raises(InputFileError) as caught:
        reader(path)
    return caught.value


def test_a_run_line_with_five_fields_is_named(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "run.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n"))
    assert (Path(error.path).name, error.line) == ("run.trec", 2)
    assert "expected 6" in str(error) and "got 5" in str(error)


def test_a_non_numeric_score_is_named(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "run.trec", "# header\nq1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 high t\n"))
    assert error.line == 3 and "score 'high' is not a number" in str(error)


def test_a_nan_score_is_refused(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "run.trec", "q1 Q0 d1 1 nan t\n"))
    assert error.line == 1 and "NaN" in str(error)


def test_a_document_ranked_twice_names_both_lines(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "run.trec", "q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 2.0 t\nq1 Q0 d1 3 1.0 t\n"))
    assert error.line == 3 and "first at line 1" in str(error) and "'d1'" in str(error)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_an_empty_run_file_is_an_error(tmp_path: Path, text: str) -> None:
    error = read_error(write(tmp_path, "run.trec", text))
    assert "empty" in str(error) and error.line is None


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    assert "file not found" in str(read_error(tmp_path / "absent.trec"))


# ----- qrels ----------------------------------------------------------------------------------


def test_qrels_keep_negative_grades_and_string_ids(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "# judged\n301 0 CR93E-3103#37 1\n301 0 FT1 -1\n0302 0 FT2 2\n")
    qrels = read_qrels(path)
    assert qrels.to_dict() == {"301": {"CR93E-3103#37": 1, "FT1": -1}, "0302": {"FT2": 2}}
    assert qrels.queries_with_relevant(1) == ["301", "0302"] and qrels.queries_with_relevant(2) == ["0302"]


def test_a_grade_that_is_not_an_integer_is_named(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 1.5\n"), read_qrels)
    assert error.line == 2 and "grade '1.5' is not an integer" in str(error)
    error = read_error(write(tmp_path, "qrels.txt", "q1 0 d1 yes\n"), read_qrels)
    assert error.line == 1 and "'yes'" in str(error)


def test_a_qrels_line_with_the_wrong_number_of_fields_is_named(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 d2 1\n"), read_qrels)
    assert error.line == 2 and "expected 4" in str(error)


def test_a_document_judged_twice_with_two_grades_is_named(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d1 0\n"), read_qrels)
    assert error.line == 2 and "is judged 0 here but 1 at line 1" in str(error)


def test_empty_qrels_are_an_error(tmp_path: Path) -> None:
    assert "empty" in str(read_error(write(tmp_path, "qrels.txt", ""), read_qrels))


# ----- writing --------------------------------------------------------------------------------


def test_run_and_qrels_round_trip(tmp_path: Path) -> None:
    run = Run.from_mapping({"q1": [("b", 2.5), ("a", 0.1 + 0.2)], "q2": [("c", -1.0)]})
    write_run(run, tmp_path / "run.trec", tag="mine")
    again = read_run(tmp_path / "run.trec")
    assert again.to_mapping() == run.to_mapping()
    qrels = Qrels({"q1": {"a": 2, "b": -1}, "q2": {"c": 0}})
    buffer = io.StringIO()
    write_qrels(qrels, buffer)
    assert buffer.getvalue() == format_qrels(qrels) == "q1 0 a 2\nq1 0 b -1\nq2 0 c 0\n"
    (tmp_path / "qrels.txt").write_text(buffer.getvalue())
    assert read_qrels(tmp_path / "qrels.txt").to_dict() == qrels.to_dict()


def test_id_hashes_do_not_depend_on_the_slice_or_the_array_width(monkeypatch: pytest.MonkeyPatch) -> None:
    from corpora import id_hashes

    ids = np.array(["a", "bb", "ccc", "msmarco_v2.1_doc_00_880019750#4_1633802806", "é", ""] * 5, dtype=object)
    whole = id_hashes.hash_ids(ids)
    monkeypatch.setattr(id_hashes, "_HASH_SLICE", 4)
    assert (id_hashes.hash_ids(ids) == whole).all()
    assert (id_hashes.hash_ids(ids[:3]) == whole[:3]).all()
    assert len(set(whole[:6].tolist())) == 6


# ----- writing: the written file ranks like the run ------------------------------------------


def _down(x: float, steps: int = 1) -> float:
    """``steps`` single-precision floats below the float ``x`` reads as (trec_eval reads a score
    into a C float), as a double."""
    f = np.float32(x)
    for _ in range(steps):
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def test_tied_scores_are_written_one_float_apart_so_trec_eval_keeps_the_run_order(tmp_path: Path) -> None:
    # the retriever broke the tie by doc id ascending; trec_eval would put "c" first
    run = Run.from_mapping({"q1": [("a", 2.0), ("b", 2.0), ("c", 2.0), ("d", 1.0)], "q2": [("x", 5.0)]})
    assert trec_scores(run).tolist() == [2.0, _down(2.0), _down(2.0, 2), 1.0, 5.0]
    write_run(run, tmp_path / "run.trec", tag="mine")
    assert read_run(tmp_path / "run.trec").to_mapping() == {
        "q1": [("a", 2.0), ("b", _down(2.0)), ("c", _down(2.0, 2)), ("d", 1.0)], "q2": [("x", 5.0)]}
    assert read_run(tmp_path / "run.trec").ranking("q1") == run.ranking("q1")


def test_scores_that_differ_only_beyond_float_precision_are_a_tie_only_for_trec_eval_9(tmp_path: Path) -> None:
    """trec_eval 10 reads scores as C doubles: 1.0 is above 1.0 - 1e-12. trec_eval 9.x and
    pytrec_eval hold them as C floats: the two tie there, and the tie goes to the larger doc id.
    The reader follows 10 by default and 9.x with order="trec9"; the writer separates them as
    floats, so both read the written file as the run is ranked."""
    path = write(tmp_path, "run.trec", "q Q0 a 1 1.0 t\nq Q0 b 2 0.999999999999 t\nq Q0 c 3 0.5 t\n")
    assert read_run(path).ranking("q") == ["a", "b", "c"]
    assert read_run(path, order="trec9").ranking("q") == ["b", "a", "c"]
    run = Run.from_mapping({"q": [("a", 1.0), ("b", 1.0 - 1e-12), ("c", 0.5)]})
    assert trec_scores(run).tolist() == [1.0, _down(1.0), 0.5]
    write_run(run, tmp_path / "written.trec", tag="t")
    for order in ("trec", "trec9"):
        assert read_run(tmp_path / "written.trec", order=order).ranking("q") == ["a", "b", "c"]


def test_the_two_line_example_of_trec_eval_10(tmp_path: Path) -> None:
    """0.1000000001 > 0.1 as doubles (trec_eval 10: "a" first); as floats both are 0.1f, a tie that
    the larger doc id "b" wins (trec_eval 9.x). Derived by hand from trec_eval's comparison."""
    path = write(tmp_path, "run.trec", "q Q0 a 1 0.1000000001 t\nq Q0 b 2 0.1 t\n")
    assert read_run(path).ranking("q") == ["a", "b"]
    assert read_run(path, order="trec9").ranking("q") == ["b", "a"]
    assert read_run(path, order="file").ranking("q") == ["a", "b"]


def test_a_run_read_one_way_is_written_so_that_both_readings_agree(tmp_path: Path) -> None:
    """Read as trec_eval 10 reads it, ["a", "b"] depends on the reading (9.x says ["b", "a"]); the
    written file lowers b just below a as a float, so that both say ["a", "b"]. A query whose
    ranking does not depend on the reading keeps its scores exactly."""
    path = write(tmp_path, "run.trec", "q Q0 a 1 0.1000000001 t\nq Q0 b 2 0.1 t\nr Q0 d 1 0.1000000001 t\n"
                                       "r Q0 c 2 0.1 t\n")
    run = read_run(path)
    assert run.ranking("r") == ["d", "c"] == read_run(path, order="trec9").ranking("r")  # the tie goes to d too
    written = run.file_scores()
    assert written.tolist() == [0.1000000001, _down(0.1000000001), 0.1000000001, 0.1]
    run.write(tmp_path / "back.trec")
    for order in ("trec", "trec9"):
        back = read_run(tmp_path / "back.trec", order=order)
        assert [back.ranking(q) for q in ("q", "r")] == [["a", "b"], ["d", "c"]]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3"]), st.sampled_from(list("abcdefg")),
                          st.sampled_from([0.1, 0.1000000001, 0.1 - 3e-10, 0.5, 1.0, 1.0 + 1e-12, 2.0])),
                min_size=1, max_size=30, unique_by=lambda row: row[:2]))
def test_the_queries_whose_ranking_depends_on_the_reading_are_found(rows: list[tuple[str, str, float]]) -> None:
    columns = [list(c) for c in zip(*rows)]
    doubles, floats = Run.from_columns(*columns), Run.from_columns(*columns, order="trec9")
    differ = [j for j, q in enumerate(doubles.query_ids) if doubles.ranking(q) != floats.ranking(q)]
    for run in (doubles, floats):  # found from a run ordered either way
        assert reading_dependent_queries(run.offsets, run.scores, run.doc_ids, run.doc_index).tolist() == differ


def test_a_step_cascades_into_the_next_score_only_when_it_must() -> None:
    close = _down(1.0)  # one float below 1.0: the second 1.0 takes its place, so it moves down too
    run = Run.from_mapping({"q": [("a", 1.0), ("b", 1.0), ("c", close), ("d", 0.5), ("e", 0.1 + 0.2)]})
    assert trec_scores(run).tolist() == [1.0, close, _down(1.0, 2), 0.5, 0.1 + 0.2]  # the rest kept exactly


def test_an_order_that_disagrees_with_the_scores_is_kept() -> None:
    run = Run.from_mapping({"q": [("a", 1.0), ("b", 3.0), ("c", -0.0), ("d", 0.0)]})
    assert trec_scores(run).tolist() == [1.0, _down(1.0), -0.0, _down(0.0)]


def test_infinite_scores() -> None:
    top = Run.from_mapping({"q": [("a", np.inf), ("b", 1e39), ("c", 1.0)]})  # 1e39 is inf as a float
    assert trec_scores(top).tolist() == [np.inf, float(np.finfo(np.float32).max), 1.0]
    bottom = Run.from_mapping({"q": [("a", 1.0), ("b", -np.inf), ("c", -np.inf)]})
    with pytest.raises(RetbenchError, match=r"run 'mine': query 'q', document 'c': tied at -inf.*Fix:"):
        trec_scores(bottom, "mine")
    nan = Run.from_mapping({"q": [("a", 1.0), ("b", float("nan"))]})
    with pytest.raises(RetbenchError, match=r"document 'b': the score is NaN"):
        format_run(nan, "mine")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([3.0, 2.0, 2.0, 2.0 - 1e-12, _down(2.0), 1.0, 0.0, -0.0, -1.0, 1e-300,
                                          0.1 + 0.2]), max_size=12), min_size=1, max_size=5))
def test_written_scores_are_the_smallest_change_that_makes_them_strictly_decreasing(
        rankings: list[list[float]]) -> None:
    run = Run.from_mapping({f"q{i}": [(f"d{j}", s) for j, s in enumerate(scores)]
                            for i, scores in enumerate(rankings)})
    written = iter(trec_scores(run).tolist())
    for scores in rankings:
        previous = None
        for raw in scores:  # the specification, one score at a time
            keep = previous is None or np.float32(raw) < np.float32(previous)
            expected = raw if keep else _down(previous)
            got = next(written)
            assert got == expected
            assert previous is None or (np.float32(got) < np.float32(previous) and got < previous)
            previous = got


def test_raw_scores_sit_beside_the_run_line_for_line(tmp_path: Path) -> None:
    run = Run.from_mapping({"q1": [("a", 0.1 + 0.2), ("b", 0.1 + 0.2)], "q2": [("c", 7.0)]})
    raw = format_raw_scores(run).splitlines()
    assert raw == ["query_id\tdoc_id\trank\tscore", "q1\ta\t1\t0.30000000000000004",
                   "q1\tb\t2\t0.30000000000000004", "q2\tc\t1\t7.0"]
    trec = format_run(run, "t").splitlines()
    assert [line.split()[:4] for line in trec] == [["q1", "Q0", "a", "1"], ["q1", "Q0", "b", "2"],
                                                   ["q2", "Q0", "c", "1"]]
    assert [float(line.split()[4]) for line in trec] == [0.1 + 0.2, _down(0.1 + 0.2), 7.0]


@pytest.mark.parametrize("entries", [1, 2, 3, 1000])
def test_run_files_written_in_pieces_are_the_same_bytes_whatever_the_block(tmp_path: Path, entries: int) -> None:
    # ties (whose written score steps down, so the raw file gets its own text), an empty query between two
    run = Run.from_mapping({"q1": [("a", 0.1 + 0.2), ("b", 0.1 + 0.2), ("c", 0.25)], "q2": [],
                            "q3": [("c", 7.0), ("a", 1.5)]})
    pieces = list(run_and_raw_score_pieces(run, "t", entries=entries))
    blocks = [[line.split()[0] for line in trec.splitlines()] for trec, _ in pieces]
    assert all(a[-1] != b[0] for a, b in zip(blocks, blocks[1:]))  # whole queries
    assert all(len(b) <= entries or len(set(b)) == 1 for b in blocks)  # at most `entries` lines, or one query
    trec, raw = "".join(p[0] for p in pieces), "".join(p[1] for p in pieces)
    assert trec == format_run(run, "t") and raw == format_raw_scores(run)
    assert raw.splitlines() == ["query_id\tdoc_id\trank\tscore", "q1\ta\t1\t0.30000000000000004",
                                "q1\tb\t2\t0.30000000000000004", "q1\tc\t3\t0.25", "q3\tc\t1\t7.0",
                                "q3\ta\t2\t1.5"]
    back = read_run(write(tmp_path, "run.trec", trec), order="file")
    assert [back.ranking(q) for q in back.query_ids] == [["a", "b", "c"], ["c", "a"]]
    assert [float(line.split()[4]) for line in trec.splitlines()] == [0.1 + 0.2, _down(0.1 + 0.2), 0.25, 7.0, 1.5]


def test_an_empty_run_in_pieces_is_an_empty_run_file_and_the_raw_scores_header() -> None:
    run = Run.from_mapping({"q1": []})
    assert list(run_and_raw_score_pieces(run, "t")) == [("", "query_id\tdoc_id\trank\tscore\n")]


def test_pieces_check_nan_scores_before_the_first_piece() -> None:
    pieces = run_and_raw_score_pieces(Run.from_mapping({"q1": [("a", 2.0)], "q2": [("b", float("nan"))]}), "t",
                                      entries=1)
    with pytest.raises(RetbenchError, match="run 't': query 'q2', document 'b': the score is NaN"):
        next(pieces)


def test_trec_scores_of_some_queries_are_those_of_the_whole_run() -> None:
    run = Run.from_mapping({"q1": [("a", 1.0), ("b", 1.0)], "q2": [("c", 3.0), ("d", 3.0), ("e", 3.0)], "q3": []})
    down = float(np.nextafter(np.float32(3.0), np.float32(0)))
    assert trec_scores(run, queries=slice(1, 3)).tolist() == [3.0, down, float(np.nextafter(np.float32(down),
                                                                                              np.float32(0)))]
    assert trec_scores(run, queries=slice(1, 3)).tolist() == trec_scores(run)[2:].tolist()


def test_pieces_check_the_ids_before_the_first_piece() -> None:
    pieces = run_and_raw_score_pieces(Run.from_mapping({"q1": [("a", 2.0)], "q2": [("my doc", 1.0)]}), "t", entries=1)
    with pytest.raises(RetbenchError, match="document id 'my doc' cannot be written"):
        next(pieces)


@pytest.mark.parametrize(("mapping", "tag", "fragment"), [
    ({"q1": [("my doc", 1.0)]}, "t", "document id 'my doc' cannot be written"),
    ({"q 1": [("d", 1.0)]}, "t", "query id 'q 1' cannot be written"),
    ({"#q": [("d", 1.0)]}, "t", "starts with '#'"),
    ({"q": [("d", 1.0)]}, "my run", "run tag 'my run'"),
])
def test_ids_and_tags_a_trec_file_cannot_hold_are_refused(mapping: dict, tag: str, fragment: str) -> None:
    with pytest.raises(RetbenchError, match=fragment):
        format_run(Run.from_mapping(mapping), tag)


def test_the_run_id_is_the_tag_of_the_last_line(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", "q1 Q0 a 1 2 first\nq1 Q0 b 2 1 last\n")
    assert read_run_file(path).run_id == "last"


# ----- one qrels reader: trec_eval's rules, or a loader's looser ones -------------------------

LOOSE = QrelsRules(layout="any", header="non-numeric")


def read_under(tmp_path: Path, text: str, rules: QrelsRules, name: str = "qrels.txt") -> QrelsFile:
    return read_qrels_file(write(tmp_path, name, text), rules)


def refused_under(tmp_path: Path, text: str, rules: QrelsRules, name: str = "qrels.txt") -> str:
    with pytest.raises(InputFileError) as caught:
        read_under(tmp_path, text, rules, name)
    return str(caught.value)


# (case, file text, what trec_eval's rules say, what the loose rules say): a dict is the qrels read,
# a string a fragment of the error (at file:line)
STRICT_AND_LOOSE = [
    ("three fields after four", "q1 0 d1 1\nq1 d2 2\n",
     "qrels.txt:2: expected 4 fields", {"q1": {"d1": 1, "d2": 2}}),
    ("a header of column names", "qid iter docno rel\nq1 0 d1 1\n",
     "qrels.txt:1: grade 'rel' is not an integer", {"q1": {"d1": 1}}),
    ("the same judgment twice (one rule: counted once)", "q1 0 d1 1\nq1 0 d1 1\n",
     {"q1": {"d1": 1}}, {"q1": {"d1": 1}}),
    ("two grades for one pair", "q1 0 d1 1\nq1 0 d1 2\n",
     "qrels.txt:2: query 'q1', document 'd1' is judged 2 here but 1 at line 1",
     "qrels.txt:2: query 'q1', document 'd1' is judged 2 here but 1 at line 1"),
    ("a fractional grade", "q1 0 d1 1.5\n", "qrels.txt:1: grade '1.5' is not an integer",
     "qrels.txt:1: grade '1.5' is not an integer"),
    ("an empty doc id", "q1\t\t1\n", "qrels.txt:1: empty query id or doc id",
     "qrels.txt:1: empty query id or doc id"),
    ("five fields", "q1 0 d1 1 extra\n", "qrels.txt:1: line has 5 fields", "qrels.txt:1: expected 3 fields"),
    ("only comments", "# nothing judged\n\n", "the qrels hold no judgments", "the qrels hold no judgments"),
]


@pytest.mark.parametrize(("text", "strict", "loose"), [c[1:] for c in STRICT_AND_LOOSE],
                         ids=[c[0] for c in STRICT_AND_LOOSE])
def test_one_reader_under_trec_eval_rules_and_under_loose_rules(tmp_path: Path, text: str, strict: object,
                                                                loose: object) -> None:
    for rules, expected in ((TREC_EVAL_QRELS, strict), (LOOSE, loose)):
        if isinstance(expected, dict):
            assert read_under(tmp_path, text, rules).qrels.to_dict() == expected
        else:
            assert expected in refused_under(tmp_path, text, rules)


def test_every_rule_counts_identical_repeats_in_the_warnings(tmp_path: Path) -> None:
    for rules in (LOOSE, TREC_EVAL_QRELS):
        read = read_under(tmp_path, "q1 0 d1 1\nq1 0 d1 1\nq1 0 d2 0\n", rules)
        assert read.qrels.to_dict() == {"q1": {"d1": 1, "d2": 0}}
        assert read.warnings == [f"{tmp_path / 'qrels.txt'}: 1 judgment line(s) repeat an earlier (query, document) "
                                 "pair with the same grade; each pair counts once"]
    assert read_under(tmp_path, "q1 0 d1 1\nq1 0 d2 0\n", TREC_EVAL_QRELS).warnings == []


def test_separators_headers_and_query_id_padding_are_options(tmp_path: Path) -> None:
    csv_rules = QrelsRules(layout="any", separator="comma", header="non-numeric")
    assert read_under(tmp_path, "query,doc,grade\nq 1, d 1 ,2\n", csv_rules, "qrels.csv").qrels.to_dict() == \
        {"q 1": {"d 1": 2}}
    named = QrelsRules(layout="any", separator="tab", header="named")
    assert read_under(tmp_path, "query-id\tcorpus-id\tscore\nq1\tmy doc\t1\n", named).qrels.to_dict() == \
        {"q1": {"my doc": 1}}
    assert "grade 'score' is not an integer" in refused_under(tmp_path, "q1\td1\t1\nquery-id\tcorpus-id\tscore\n",
                                                              named)
    padded = QrelsRules(layout="any", separator="whitespace", header="non-numeric",
                        normalise_query_ids=True)
    assert read_under(tmp_path, "051 0 FT-1 1\n51 0 FT-2 0\n", padded).qrels.to_dict() == {"51": {"FT-1": 1, "FT-2": 0}}
    assert read_under(tmp_path, "051 0 FT-1 1\n", TREC_EVAL_QRELS).qrels.to_dict() == {"051": {"FT-1": 1}}
    with pytest.raises(ValueError, match="layout must be one of"):
        QrelsRules(layout="csv")  # type: ignore[arg-type]


def test_several_files_are_merged_and_a_repeat_names_the_other_file(tmp_path: Path) -> None:
    first, second = write(tmp_path, "a.txt", "q1 0 d1 1\n"), write(tmp_path, "b.txt", "q1 0 d1 1\nq2 0 d2 2\n")
    read = read_qrels_file([first, second], LOOSE)
    assert read.qrels.to_dict() == {"q1": {"d1": 1}, "q2": {"d2": 2}} and len(read.warnings) == 1
    (tmp_path / "b.txt").write_text("q1 0 d1 2\n")
    with pytest.raises(InputFileError, match=r"b.txt:1: query 'q1', document 'd1' is judged 2 here but 1 at .*a.txt:1"):
        read_qrels_file([first, second])


def test_gzipped_qrels_are_read(tmp_path: Path) -> None:
    import gzip

    (tmp_path / "qrels.txt.gz").write_bytes(gzip.compress(b"q1 0 d1 2\n"))
    assert read_qrels(tmp_path / "qrels.txt.gz").to_dict() == {"q1": {"d1": 2}}


# ----- one qrels type, and the hashes a run carries --------------------------------------------


def test_qrels_from_a_file_and_from_a_mapping_are_the_same_judgments(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q2 0 b 1\nq1 0 a 2\nq2 0 c -1\n")
    from_file = read_qrels(path)
    from_mapping = Qrels({"q2": {"b": 1, "c": -1}, "q1": {"a": 2}})
    assert from_file == from_mapping and list(from_file) == list(from_mapping) == ["q2", "q1"]
    assert len(from_file) == 2 and from_file.n_judgments() == from_mapping.n_judgments() == 3
    assert from_file.content_hash() == from_mapping.content_hash()
    assert from_file.arrays is from_file.arrays  # built once
    arrays = from_mapping.arrays
    assert arrays.query_vocabulary.tolist() == ["q2", "q1"] and arrays.query_codes.tolist() == [0, 0, 1]
    assert arrays.grades.tolist() == [1, -1, 2] and (arrays.doc_hashes == hash_ids(arrays.doc_ids)).all()
    with pytest.raises(ValueError, match="judged twice"):
        Qrels.from_arrays(["q", "q"], ["a", "a"], [1, 0])


def test_a_run_read_from_a_file_carries_the_hashes_the_reader_computed(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from corpora import model
    from harness.core.evaluation import evaluate
    from harness.core.metrics import parse_metrics

    run = read_run(write(tmp_path, "run.trec", "q1 Q0 b 1 2 t\nq1 Q0 a 2 1 t\nq2 Q0 a 1 1 t\n"))
    qrels = read_qrels(write(tmp_path, "qrels.txt", "q1 0 a 1\nq2 0 a 2\n"))
    assert (run.doc_hashes == hash_ids(run.doc_ids)).all()

    def no_hashing(ids: np.ndarray) -> np.ndarray:
        raise AssertionError("the evaluator hashed ids the readers had already hashed")

    monkeypatch.setattr(model, "hash_ids", no_hashing)
    frame = evaluate(run, qrels, parse_metrics("mrr"))
    assert frame["mrr"].to_dict() == {"q1": 0.5, "q2": 1.0}
    with pytest.raises(ValueError, match="one entry per doc id"):
        Run(["q"], np.array(["a", "b"], dtype=object), np.array([0, 2]), np.array([0, 1]), np.array([2.0, 1.0]),
            doc_hashes=np.zeros(1, dtype=np.uint64))


def test_runs_read_from_files_evaluate_the_same_in_any_order(tmp_path: Path) -> None:
    import importlib

    from harness.core.evaluation import evaluate
    from harness.core.metrics import parse_metrics

    with pytest.raises(ModuleNotFoundError):  # no process-global table of hashes any more
        importlib.import_module("harness.idcodes")
    qrels = Qrels({"q1": {"a": 1, "c": 2}, "q2": {"b": 1}})
    texts = {"one": "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 b 1 1 t\n", "two": "q1 Q0 c 1 3 t\nq2 Q0 a 1 1 t\n"}
    metrics = parse_metrics("ndcg@2,mrr")
    expected = {name: evaluate(Run.from_mapping(read_run(write(tmp_path, f"{name}.trec", text)).to_mapping()),
                               qrels, metrics) for name, text in texts.items()}
    for order in (["one", "two"], ["two", "one"]):
        runs = {name: read_run(write(tmp_path, f"{name}.trec", texts[name])) for name in order}
        for name in order:
            assert evaluate(runs[name], qrels, metrics).equals(expected[name])


def test_a_run_keeps_its_doc_positions_in_the_narrow_type_and_refuses_any_outside_its_ids():
    from corpora.run import doc_index_dtype

    assert doc_index_dtype(3) is np.int32 and doc_index_dtype(2**31) is np.int64
    given = np.array([2, 0, 1], dtype=np.int64)
    run = Run(["q1"], np.array(["a", "b", "c"], dtype=object), np.array([0, 3]), given, np.array([3.0, 2.0, 1.0]))
    assert run.doc_index.dtype == np.int32 and run.ranking("q1") == ["c", "a", "b"]
    narrow = np.array([1, 0], dtype=np.int32)  # a search's: kept, not copied
    assert Run(["q1"], ["a", "b"], np.array([0, 2]), narrow, np.array([2.0, 1.0])).doc_index is narrow
    for wrong in ([0, 3], [-1, 0], [2**32, 0]):  # never wrapped into a valid-looking position
        with pytest.raises(ValueError, match="positions into doc_ids"):
            Run(["q1"], ["a", "b", "c"], np.array([0, 2]), np.array(wrong, dtype=np.int64), np.array([2.0, 1.0]))
