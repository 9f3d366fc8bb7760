"""A run and judgments as other tools hold them: DataFrames in PyTerrier's columns, TREC and Parquet
files (``Run.read`` / ``Run.write`` by suffix), ranx objects, and ``bench evaluate`` on Parquet runs.

The round trips are properties over runs full of ties (as doubles, and as floats only), infinite
scores and unicode ids: every (query, doc, score) survives and so does the ranking, under both
readings of the scores (trec_eval 10's doubles, 9.x's floats); only a query whose ranking depends on
the reading gets the smallest change of scores that makes both readings agree.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpora import Qrels, RetbenchError, Run
from corpora.run import RUN_FILE_FORMATS, RunFile, run_file_format, trec_scores
from harness import evaluate
from harness.cli import main

HAS_PYARROW = __import__("importlib").util.find_spec("pyarrow") is not None
needs_pyarrow = pytest.mark.skipif(not HAS_PYARROW, reason='Parquet needs pyarrow: pip install "retbench[parquet]"')

# ----- strategies --------------------------------------------------------------------------------

# Ids a TREC line can hold: no whitespace, no control or surrogate character, no '#'; unicode welcome.
_ID = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), blacklist_characters="#"),
              min_size=1, max_size=4).filter(lambda s: not any(c.isspace() for c in s))
# Few distinct values, so that ties are common: exact ties, ties as floats only (1 and 1 + 1e-12),
# infinities, and a value beyond float range (1e300 reads as +inf in single precision).
_SCORE = st.one_of(st.sampled_from([0.0, 1.0, 1.0 + 1e-12, 2.5, -3.0, 1e300, math.inf, -math.inf]),
                   st.floats(allow_nan=False, width=64))
_ROWS = st.lists(st.tuples(st.sampled_from(["q1", "q2", "é", "查询"]), _ID, _SCORE), min_size=1, max_size=40,
                 unique_by=lambda row: (row[0], row[1]))


def _expected(rows: list[tuple[str, str, float]], order: str = "trec") -> dict[str, list[tuple[str, float]]]:
    """trec_eval's ranking, computed independently: score descending (as doubles, trec_eval 10;
    ``order="trec9"``: as single-precision floats, trec_eval 9.x), ties by doc id descending
    (code-point order); queries in order of first appearance."""
    by_query: dict[str, list[tuple[str, float]]] = {}
    for query, doc, score in rows:
        by_query.setdefault(query, []).append((doc, score))
    key = float if order == "trec" else np.float32
    with np.errstate(over="ignore"):
        return {q: sorted(pairs, key=lambda p: (key(p[1]), p[0]), reverse=True) for q, pairs in by_query.items()}


def _rankings(mapping: dict[str, list[tuple[str, float]]]) -> dict[str, list[str]]:
    return {q: [d for d, _ in pairs] for q, pairs in mapping.items()}


def _reading_dependent(rows: list[tuple[str, str, float]]) -> set[str]:
    """The queries whose ranking differs between the two readings."""
    doubles, floats = _rankings(_expected(rows)), _rankings(_expected(rows, "trec9"))
    return {q for q in doubles if doubles[q] != floats[q]}


def _frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["qid", "docno", "score"]).astype({"qid": object, "docno": object})


# ----- DataFrame <-> Run <-> TREC file <-> Parquet ------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ROWS)
def test_every_form_keeps_every_result_its_score_and_the_ranking(rows) -> None:
    frame = _frame(rows)
    run = Run.from_dataframe(frame)
    expected = _expected(rows)
    assert run.to_mapping() == expected  # ranked like trec_eval 10, every score exact
    assert Run.from_dataframe(frame, order="trec9").to_mapping() == _expected(rows, "trec9")
    ranked, depends = _rankings(expected), _reading_dependent(rows)

    try:
        back = run.to_dataframe()
    except RetbenchError as error:  # the one run no scores can write: see test_trec_io's -inf tests
        # a query whose ranking depends on the reading, with scores that read as -inf as floats
        # (-inf, or a double below float range): no float lies below -inf to separate them
        with np.errstate(over="ignore"):
            at_minus_inf = {q for q, _, s in rows if np.float32(s) == -np.inf}
        assert "tied at -inf" in str(error) and at_minus_inf & depends
        return
    kept = sorted(row for row in zip(back.qid, back.docno, back.score) if row[0] not in depends)
    assert kept == sorted(row for row in rows if row[0] not in depends)  # every (query, doc, score)
    assert sorted(zip(back.qid, back.docno)) == sorted((q, d) for q, d, _ in rows)
    assert list(back.columns) == ["qid", "docno", "score", "rank"]
    if not depends:
        assert Run.from_dataframe(back).to_mapping() == expected
    for order in ("trec", "trec9", "file"):  # both readings now rank it as the run is ranked
        assert _rankings(Run.from_dataframe(back, order=order).to_mapping()) == ranked

    with tempfile.TemporaryDirectory() as folder:
        forms = [Path(folder) / "run.trec", Path(folder) / "run.txt.gz"]
        if HAS_PYARROW:
            forms.append(Path(folder) / "run.parquet")
        for path in forms:
            assert run.write(path, tag="mine") == path
            read = RunFile.read(path)
            assert read.run_id == "mine"
            assert read.run.scores.tolist() == back.score.tolist(), path.name
            for order in ("trec", "trec9", "file"):
                assert _rankings(Run.read(path, order=order).to_mapping()) == ranked, (path.name, order)
        if HAS_PYARROW:
            assert _rankings(Run.from_dataframe(pd.read_parquet(forms[-1])).to_mapping()) == ranked


# Within float range, so that a score can always be lowered below the one before it.
_FINITE = st.one_of(st.sampled_from([0.0, 1.0, 1.0 + 1e-12, 2.5, -3.0]),
                    st.floats(min_value=-1e30, max_value=1e30, allow_nan=False, width=64))
_RANKINGS = st.dictionaries(st.sampled_from(["q1", "q2", "é"]),
                            st.lists(st.tuples(_ID, _FINITE), max_size=12, unique_by=lambda pair: pair[0]),
                            min_size=1).filter(lambda rankings: any(rankings.values()))  # a file needs a result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_RANKINGS)
def test_a_ranking_in_any_order_survives_the_files_with_the_fewest_scores_changed(rankings) -> None:
    """A retriever's run breaks ties by doc id ascending (or any way it likes): the files keep its
    order, and only the queries whose order trec_eval (10 or 9.x) could not rebuild get lowered scores."""
    run = Run.from_mapping(rankings)
    written = run.file_scores()
    for j, query in enumerate(run.query_ids):
        span = slice(run.offsets[j], run.offsets[j + 1])
        rows = [(query, d, s) for d, s in rankings[query]]
        rebuilt = [_rankings(_expected(rows, order)).get(query, []) for order in ("trec", "trec9")]
        if rebuilt == [run.ranking(query)] * 2:
            assert written[span].tolist() == run.scores[span].tolist()  # kept exactly
        else:
            assert written[span].tolist() == trec_scores(run)[span].tolist()  # strictly decreasing
    with tempfile.TemporaryDirectory() as folder:
        for name in ("run.trec", "run.parquet") if HAS_PYARROW else ("run.trec",):
            read = Run.read(run.write(Path(folder) / name))
            assert [read.ranking(q) for q in read.query_ids] == [run.ranking(q) for q in read.query_ids]
            floats = Run.read(Path(folder) / name, order="trec9")
            assert [floats.ranking(q) for q in read.query_ids] == [run.ranking(q) for q in read.query_ids]
            assert read.scores.tolist() == written.tolist()  # an empty ranking writes no line
        # what a DataFrame hands PyTerrier's evaluation is ranked the same way
        assert all(Run.from_dataframe(run.to_dataframe()).ranking(q) == run.ranking(q) for q in rankings)


def test_the_tie_rule_is_trec_evals_and_rank_columns_are_ignored() -> None:
    frame = pd.DataFrame({"qid": ["q1"] * 4, "docno": ["a", "c", "b", "d"], "score": [1.0, 2.0, 2.0, 0.5],
                          "rank": [0, 1, 2, 3]})
    assert Run.from_dataframe(frame).ranking("q1") == ["c", "b", "a", "d"]  # 2.0 tie: c before b
    assert Run.from_dataframe(frame, order="file").ranking("q1") == ["a", "c", "b", "d"]
    ir_measures_columns = frame.rename(columns={"qid": "query_id", "docno": "doc_id"})
    assert Run.from_dataframe(ir_measures_columns).to_mapping() == Run.from_dataframe(frame).to_mapping()


def test_integer_ids_are_read_as_their_decimal_text() -> None:
    frame = pd.DataFrame({"qid": [1, 1, 2], "docno": [10, 7, 7], "score": [0.5, 0.7, 1]})
    run = Run.from_dataframe(frame)
    assert run.to_mapping() == {"1": [("7", 0.7), ("10", 0.5)], "2": [("7", 1.0)]}


def test_to_dataframe_numbers_ranks_from_zero_as_pyterrier_does() -> None:
    run = Run.from_mapping({"q1": [("b", 3.0), ("a", 1.0)], "q2": [("c", 0.5)], "q3": []})
    frame = run.to_dataframe()
    assert frame.to_dict("list") == {"qid": ["q1", "q1", "q2"], "docno": ["b", "a", "c"], "score": [3.0, 1.0, 0.5],
                                     "rank": [0, 1, 0]}


def test_a_retriever_ranking_reaches_a_dataframe_with_scores_that_keep_its_order() -> None:
    """Ties by doc id ascending (a retriever's rule) would be re-sorted descending by PyTerrier's
    evaluation: the tied scores are lowered just enough that they are not."""
    run = Run.from_mapping({"q": [("a", 1.0), ("b", 1.0), ("c", 0.5)]})
    frame = run.to_dataframe()
    below = float(np.nextafter(np.float32(1.0), np.float32(0)))
    assert frame.score.tolist() == [1.0, below, 0.5]
    assert Run.from_dataframe(frame).ranking("q") == ["a", "b", "c"]


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"query": ["q"], "docno": ["d"], "score": [1.0]}),
     "rankings need the columns qid, docno, score or query_id, doc_id, score; found query, docno, score"),
    (pd.DataFrame({"qid": ["q"], "docno": ["d"], "query_id": ["q"], "doc_id": ["d"], "score": [1.0]}),
     "the columns hold rankings twice"),
    (pd.DataFrame({"qid": ["q", "q"], "docno": ["d", "e"], "score": [1.0, float("nan")]}),
     "column 'score', row 1: the score is NaN"),
    (pd.DataFrame({"qid": ["q", "q"], "docno": ["d", None], "score": [1.0, 2.0]}),
     "column 'docno', row 1: the id is missing"),
    (pd.DataFrame({"qid": [1.0, 2.0], "docno": ["d", "e"], "score": [1.0, 2.0]}),
     "column 'qid', row 0: 1.0 is not an id"),
    (pd.DataFrame({"qid": ["q", ""], "docno": ["d", "e"], "score": [1.0, 2.0]}),
     "column 'qid', row 1: the id is empty"),
    (pd.DataFrame({"qid": ["q", "q"], "docno": ["d", "e"], "score": ["1", "2"]}),
     "column 'score' holds"),
    (pd.DataFrame({"qid": ["q", "r", "q"], "docno": ["d", "d", "d"], "score": [1.0, 2.0, 3.0]}),
     "row 2: document 'd' is ranked twice for query 'q' (first at row 0)"),
])
def test_a_dataframe_that_is_not_a_ranking_is_an_error_naming_the_row(frame, message) -> None:
    with pytest.raises(RetbenchError) as raised:
        Run.from_dataframe(frame)
    assert message in str(raised.value)
    assert str(raised.value).startswith("DataFrame: ") and "Fix: " in str(raised.value)


# ----- qrels -------------------------------------------------------------------------------------


def test_something_that_is_not_a_dataframe_is_an_error() -> None:
    with pytest.raises(RetbenchError, match="Run.from_dataframe: got a dict, not a pandas DataFrame"):
        Run.from_dataframe({"qid": ["q"], "docno": ["d"], "score": [1.0]})
    with pytest.raises(RetbenchError, match="Qrels.from_dataframe: got a list, not a pandas DataFrame"):
        Qrels.from_dataframe([("q", "d", 1)])


def test_qrels_round_trip_through_a_dataframe_in_pyterrier_columns() -> None:
    qrels = Qrels({"q1": {"a": 2, "é": 0, "b": -1}, "查询": {"c": 3}})
    frame = qrels.to_dataframe()
    assert list(frame.columns) == ["qid", "docno", "label"] and frame.label.dtype == np.int64
    back = Qrels.from_dataframe(frame)
    assert back.to_dict() == qrels.to_dict() and back.content_hash() == qrels.content_hash()
    ir_measures = frame.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    assert Qrels.from_dataframe(ir_measures).to_dict() == qrels.to_dict()
    merged = frame.assign(label=frame.label.astype(float))  # a merge made the grades float: whole numbers read
    assert Qrels.from_dataframe(merged).to_dict() == qrels.to_dict()


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"qid": ["q"], "docno": ["d"], "grade": [1]}), "judgments need the columns qid, docno, label"),
    (pd.DataFrame({"qid": ["q", "q"], "docno": ["d", "e"], "label": [1.0, 0.5]}),
     "column 'label', row 1: 0.5 is not an integer grade"),
    (pd.DataFrame({"qid": ["q", "q"], "docno": ["d", "d"], "label": [1, 1]}),
     "row 1: document 'd' is judged twice for query 'q' (first at row 0)"),
])
def test_a_dataframe_that_is_not_judgments_is_an_error_naming_the_row(frame, message) -> None:
    with pytest.raises(RetbenchError, match="Fix: ") as raised:
        Qrels.from_dataframe(frame)
    assert message in str(raised.value)


# ----- file names --------------------------------------------------------------------------------


def test_the_format_comes_from_the_suffix(tmp_path: Path) -> None:
    assert {name: fmt.suffixes for name, fmt in RUN_FILE_FORMATS.items()} == {
        "trec": (".trec", ".txt", ".run", ".gz"), "parquet": (".parquet",), "tsv": (".tsv",)}
    assert run_file_format(tmp_path / "RUN.PARQUET").name == "parquet"
    assert run_file_format(tmp_path / "results.test").name == "trec"  # reading: trec_eval's own file names
    with pytest.raises(RetbenchError, match=r"no run file format has the suffix '\.csv'.*Fix: name the file"):
        Run.from_mapping({"q": [("d", 1.0)]}).write(tmp_path / "run.csv")
    assert not (tmp_path / "run.csv").exists()


def test_a_gzipped_trec_run_is_written_and_read(tmp_path: Path) -> None:
    run = Run.from_mapping({"q": [("d", 2.0), ("e", 1.0)]})
    path = run.write(tmp_path / "run.trec.gz", tag="t")
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert Run.read(path).to_mapping() == run.to_mapping()


# ----- Parquet -----------------------------------------------------------------------------------


@needs_pyarrow
def test_a_parquet_run_holds_pyterrier_columns_and_the_trec_files_numbers(tmp_path: Path) -> None:
    run = Run.from_mapping({"q1": [("b", 2.0), ("a", 2.0), ("c", 1.0)], "q2": [("d", 0.25)]})
    run.write(tmp_path / "run.parquet", tag="mine")
    run.write(tmp_path / "run.trec", tag="mine")
    table = pd.read_parquet(tmp_path / "run.parquet")
    assert list(table.columns) == ["qid", "docno", "score", "rank"]
    assert table.to_dict("list") == {"qid": ["q1", "q1", "q1", "q2"], "docno": ["b", "a", "c", "d"],
                                     "score": [2.0, 2.0, 1.0, 0.25], "rank": [0, 1, 2, 0]}
    assert Run.read(tmp_path / "run.parquet").to_mapping() == Run.read(tmp_path / "run.trec").to_mapping()


@needs_pyarrow
def test_a_parquet_run_from_another_tool_is_read_by_its_columns(tmp_path: Path) -> None:
    pd.DataFrame({"query_id": [3, 3, 4], "doc_id": ["x", "y", "x"], "score": [1.0, 5.0, 2.0],
                  "extra": ["a", "b", "c"]}).to_parquet(tmp_path / "theirs.parquet")
    read = RunFile.read(tmp_path / "theirs.parquet")
    assert read.run.to_mapping() == {"3": [("y", 5.0), ("x", 1.0)], "4": [("x", 2.0)]}
    assert read.run_id == "theirs"  # no stored tag: the file's name


@needs_pyarrow
@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"qid": ["q"], "docid": ["d"], "score": [1.0]}), "rankings need the columns qid, docno, score"),
    (pd.DataFrame({"qid": ["q", None], "docno": ["d", "e"], "score": [1.0, 2.0]}), "column 'qid', row 1"),
    (pd.DataFrame({"qid": ["q", "q"], "docno": ["d", "e"], "score": [1.0, None]}), "column 'score', row 1"),
    (pd.DataFrame({"qid": pd.Series([], dtype=object), "docno": pd.Series([], dtype=object),
                   "score": pd.Series([], dtype=float)}), "the run holds no results"),
])
def test_a_bad_parquet_run_is_an_error_naming_the_file(tmp_path: Path, frame, message) -> None:
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path)
    with pytest.raises(RetbenchError) as raised:
        Run.read(path)
    assert str(raised.value).startswith(str(path)) and message in str(raised.value)


@needs_pyarrow
def test_a_file_that_is_not_parquet_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "run.parquet").write_text("q Q0 d 1 1.0 t\n", encoding="utf-8")
    with pytest.raises(RetbenchError, match="cannot read the file as Parquet"):
        Run.read(tmp_path / "run.parquet")


# ----- bench evaluate: the Parquet form scores as the TREC form ----------------------------------


def _evaluate(runner, qrels: Path, run: Path, *options: str) -> str:
    result = runner.invoke(main, ["evaluate", "--qrels", str(qrels), str(run), "--metrics",
                                  "ndcg@10,map,P_5,recall@100,mrr,rprec,bpref,success@1", "--format", "trec",
                                  *options])
    assert result.exit_code == 0, result.output
    return result.output


@needs_pyarrow
@pytest.mark.parametrize("order", ["trec", "file"])
def test_bench_evaluate_scores_a_parquet_run_exactly_as_its_trec_form(runner, tmp_path: Path, order: str) -> None:
    """A run with ties, as a retriever would rank it, written both ways; every value equal."""
    rng = np.random.default_rng(0)
    rankings = {f"q{j}": [(f"d{i}", float(rng.integers(0, 4))) for i in rng.permutation(30)[:20]] for j in range(12)}
    run = Run.from_mapping(rankings)
    run.write(tmp_path / "run.trec", tag="mine")
    run.write(tmp_path / "run.parquet", tag="mine")
    (tmp_path / "qrels.txt").write_text(
        "".join(f"q{j} 0 d{i} {int(rng.integers(-1, 3))}\n" for j in range(12) for i in range(0, 30, 3)),
        encoding="utf-8")
    as_trec = _evaluate(runner, tmp_path / "qrels.txt", tmp_path / "run.trec", "--order", order)
    assert _evaluate(runner, tmp_path / "qrels.txt", tmp_path / "run.parquet", "--order", order) == as_trec
    assert "runid                 \tall\tmine" in as_trec


@needs_pyarrow
def test_bench_evaluate_scores_trec_evals_own_run_as_parquet_like_the_original(runner, shared_data: Path,
                                                                               tmp_path: Path) -> None:
    tests = shared_data / "trec_eval_tests"
    original = RunFile.read(tests / "results.test")
    original.run.write(tmp_path / "results.parquet", tag=original.run_id)
    expected = _evaluate(runner, tests / "qrels.test", tests / "results.test")
    assert _evaluate(runner, tests / "qrels.test", tmp_path / "results.parquet") == expected


@needs_pyarrow
def test_bench_evaluate_names_the_row_of_a_bad_parquet_run(runner, tmp_path: Path) -> None:
    pd.DataFrame({"qid": ["q1", "q1"], "docno": ["d", "d"], "score": [1.0, 2.0]}).to_parquet(tmp_path / "r.parquet")
    (tmp_path / "qrels.txt").write_text("q1 0 d 1\n", encoding="utf-8")
    result = runner.invoke(main, ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), str(tmp_path / "r.parquet"),
                                  "--metrics", "mrr"])
    assert result.exit_code == 2
    assert f"error: {tmp_path / 'r.parquet'}: row 1: document 'd' is ranked twice" in result.output


# ----- ranx --------------------------------------------------------------------------------------


def test_the_dict_form_of_a_ranx_run_converts_without_ranx() -> None:
    run = Run.from_ranx({"q1": {"a": 1.0, "b": 2.0, "c": 2.0}})
    assert run.to_mapping() == {"q1": [("c", 2.0), ("b", 2.0), ("a", 1.0)]}
    assert Qrels.from_ranx({"q1": {"a": 1, "b": 0}}).to_dict() == {"q1": {"a": 1, "b": 0}}
    with pytest.raises(RetbenchError, match="ranx qrels: column 'label', row 1: 0.5 is not an integer grade"):
        Qrels.from_ranx({"q1": {"a": 1, "b": 0.5}})
    with pytest.raises(RetbenchError, match="not a ranx Run"):
        Run.from_ranx([("q1", "a", 1.0)])


def test_ranx_round_trips_runs_and_judgments() -> None:
    ranx = pytest.importorskip("ranx", reason='ranx is not installed (pip install "retbench[ranx]")')
    run = Run.from_mapping({"q1": [("a", 1.0), ("b", 1.0), ("é", 0.5)], "q2": [("c", 3.0)]})
    as_ranx = run.to_ranx("mine")
    assert isinstance(as_ranx, ranx.Run) and as_ranx.name == "mine"
    back = Run.from_ranx(as_ranx)
    assert back.to_mapping() == {q: list(zip(run.ranking(q), trec_scores(run)[run.offsets[j]:run.offsets[j + 1]]))
                                 for j, q in enumerate(run.query_ids)}
    qrels = Qrels({"q1": {"b": 2, "é": 1, "x": 0}, "q2": {"c": -1, "d": 3}})
    assert Qrels.from_ranx(qrels.to_ranx()).to_dict() == qrels.to_dict()


def test_ranx_scores_a_run_with_ties_as_retbench_does() -> None:
    """ranx breaks ties by a per-process hash of the doc id; the run it gets has none to break."""
    ranx = pytest.importorskip("ranx", reason='ranx is not installed (pip install "retbench[ranx]")')
    run = Run.from_mapping({"q1": [("a", 1.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)],
                            "q2": [("e", 2.0), ("f", 2.0), ("g", 0.0)]})
    qrels = Qrels({"q1": {"d": 1, "a": 0}, "q2": {"f": 2, "g": 1}})
    ours = evaluate(run, qrels, ["ndcg@3", "mrr"])
    theirs = ranx.evaluate(qrels.to_ranx(), run.to_ranx(), ["ndcg@3", "mrr"], make_comparable=True)
    assert theirs["ndcg@3"] == pytest.approx(float(ours["ndcg@3"].mean()), abs=1e-12)
    assert theirs["mrr"] == pytest.approx(float(ours["mrr"].mean()), abs=1e-12)


# ----- without the extras ------------------------------------------------------------------------


@pytest.fixture
def without(monkeypatch):
    """Make packages unfindable and unimportable, as on an install without their extra (a None entry
    in sys.modules: import raises ImportError)."""
    def hide(*names: str) -> None:
        for name in names:
            for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                monkeypatch.delitem(sys.modules, loaded)
            monkeypatch.setitem(sys.modules, name, None)
    return hide


def test_without_pyarrow_a_parquet_run_says_how_to_install_it(without, runner, tmp_path: Path) -> None:
    without("pyarrow")
    run = Run.from_mapping({"q1": [("d", 1.0)]})
    with pytest.raises(RetbenchError, match=r'needs pyarrow, which is not installed\. Fix: pip install "retbench\[parquet\]"'):
        run.write(tmp_path / "run.parquet")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "qrels.txt").write_text("q1 0 d 1\n", encoding="utf-8")
    (tmp_path / "run.parquet").write_bytes(b"PAR1")
    result = runner.invoke(main, ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), str(tmp_path / "run.parquet"),
                                  "--metrics", "mrr"])
    assert result.exit_code == 2
    assert 'reading a Parquet run needs pyarrow, which is not installed. Fix: pip install "retbench[parquet]"' \
        in result.output


def test_without_ranx_the_conversions_to_ranx_say_how_to_install_it(without) -> None:
    without("ranx")
    with pytest.raises(RetbenchError, match=r'Run.to_ranx needs ranx.*pip install "retbench\[ranx\]"'):
        Run.from_mapping({"q1": [("d", 1.0)]}).to_ranx()
    with pytest.raises(RetbenchError, match=r'Qrels.to_ranx needs ranx.*pip install "retbench\[ranx\]"'):
        Qrels({"q1": {"d": 1}}).to_ranx()


def test_importing_corpora_imports_none_of_the_optional_libraries_nor_pandas(fresh_python) -> None:
    code = ("import sys, corpora, corpora.irds, corpora.parquet\n"
            "from corpora import Run, Qrels, load_dataset\n"
            "print(sorted(m for m in ('pandas', 'pyarrow', 'ranx', 'ir_datasets', 'pyterrier') if m in sys.modules))")
    assert fresh_python(code) == "[]"


def test_bm25_fits_and_searches_without_importing_pandas(fresh_python) -> None:
    """pandas holds ~30 MB once imported: a fit and a search (the tokenizer, the index) stay without it."""
    code = ("import sys\n"
            "from corpora import Corpus, Queries\n"
            "from retrievers.bm25 import BM25\n"
            "run = BM25().fit(Corpus(['a', 'b'], ['money back', 'the pro plan'])).search(Queries(['q'], ['plan']), 5)\n"
            "print(run.ranking('q'), 'pandas' in sys.modules)")
    assert fresh_python(code) == "['b'] False"
