"""Runs you already have as systems (issue 43): ``run(PATH)`` in a spec, the run file formats (TREC,
MS MARCO TSV, Parquet, each gzipped), every check of a run against the collection with its exact
message, ``bench tune``'s refusal, and runs given in Python to ``compare`` and to fusions."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from corpora import Corpus, Dataset, InputFileError, Qrels, Queries, RetbenchError, Run
from corpora.run import RunFile, run_file_format, run_file_name
from harness import compare
from harness.cli import main
from retrievers import BM25
from retrievers.fusion import RRF, Weighted
from retrievers.grid import read_grid
from retrievers.run_file import READINGS, RunSystem
from retrievers.spec import SpecError, build, split_systems
from tests.conftest import real_data

# Six documents, three queries; q3 has only a non-relevant judgment, so q1 and q2 are compared.
CORPUS = Corpus(["d1", "d2", "d3", "d4", "d5", "d6"],
                ["red apple pie", "green apple", "blue sky today", "apple sky", "sea", "sun"], name="tiny")
QUERIES = Queries(["q1", "q2", "q3"], ["apple pie", "sky", "nothing at all"])
QRELS = Qrels({"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}, "q3": {"d2": 0}})
TREC = """\
q1 Q0 d2 1 3.5 es
q1 Q0 d1 2 2.25 es
q1 Q0 d4 3 1 es
q2 Q0 d3 1 7 es
q2 Q0 d5 2 6 es
"""


def tiny() -> Dataset:
    return Dataset("tiny", CORPUS, QUERIES, QRELS, "<memory>")


@pytest.fixture
def es(tmp_path: Path) -> Path:
    path = tmp_path / "es.trec"
    path.write_text(TREC)
    return path


def compared(systems, depth: int = 1000, metrics: tuple[str, ...] = ("mrr", "ndcg@10")):
    from harness.core.options import Scoring, Statistics

    return compare(systems, tiny(), list(metrics), scoring=Scoring(depth=depth),
                   statistics=Statistics(bootstrap_samples=200, permutations=200))


def run_warnings(result) -> list[str]:
    return [w for w in result.warnings if w.startswith("run ")]


# ----- specs --------------------------------------------------------------------------------------


def test_a_spec_names_a_run_file_by_its_path_and_labels_it_by_the_stem(es: Path) -> None:
    system = build(f"run({es})")
    assert isinstance(system, RunSystem)
    assert system.label == "es"
    assert build(f"run({es}, name=prod)").label == "prod"
    assert build(f"prod=run({es})").label == "prod"


def test_a_path_with_dashes_dots_and_folders_needs_no_quotes(tmp_path: Path) -> None:
    folder = tmp_path / "runs-2024" / "v1.2"
    folder.mkdir(parents=True)
    (folder / "es-bm25.v2.trec.gz").write_bytes(gzip.compress(TREC.encode()))
    system = build(f"run({folder}/es-bm25.v2.trec.gz)")
    assert system.label == "es-bm25.v2"
    assert system.get_params()["format"] == "trec"


def test_a_path_with_a_comma_parenthesis_or_space_is_quoted(tmp_path: Path) -> None:
    path = tmp_path / "my runs (v2),final.trec"
    path.write_text(TREC)
    spec = f"rrf(bm25,run('{path}', name=es2))"
    assert split_systems(f"bm25,{spec},lsa") == ["bm25", spec, "lsa"]
    fused = build(spec)
    assert [child.label for child in fused.children] == ["bm25", "es2"]
    assert fused.label == "rrf(bm25,es2)"


def test_a_file_named_like_a_retriever_is_not_labelled_as_one(tmp_path: Path) -> None:
    (tmp_path / "dense.trec").write_text(TREC)
    assert build(f"run({tmp_path / 'dense.trec'})").label == "run-dense"


def test_run_spec_mistakes_are_one_line_each(es: Path) -> None:
    with pytest.raises(RetbenchError, match=r"^run names no file\. Fix: write run\(PATH\), e\.g\. run\(runs/es\.trec\)$"):
        build("run()")
    with pytest.raises(SpecError, match=r"^run takes one path, then keyword parameters\. Fix:"):
        build(f"run({es},{es})")
    with pytest.raises(SpecError, match=r"^run: path is given twice"):
        build(f"run({es}, path={es})")
    with pytest.raises(InputFileError, match="file not found"):
        build("run(no/such/run.trec)")
    with pytest.raises(RetbenchError, match=r"^run name 'a b': expected letters"):
        RunSystem(str(es), name="a b")


def test_the_manifest_parameters_record_the_file_hash_format_and_reading(es: Path) -> None:
    import hashlib

    params = build(f"run({es})").get_params()
    assert params["sha256"] == hashlib.sha256(es.read_bytes()).hexdigest()
    assert params["format"] == "trec"
    assert params["reading"] == READINGS["trec"]
    assert params["reading"].startswith("trec_eval 10: score descending, scores compared as doubles, ties by doc id descending")


def test_the_results_folder_records_the_run_file(es: Path, tmp_path: Path) -> None:
    result = compared({"es": RunSystem(str(es)), "bm25": BM25()})
    folder = result.write(tmp_path / "out")
    manifest = json.loads((Path(folder) / "manifest.json").read_text())
    entry = next(e for e in manifest["systems"] if e["label"] == "es")
    assert entry["name"] == "run"
    assert entry["parameters"]["sha256"] == __import__("hashlib").sha256(es.read_bytes()).hexdigest()
    assert entry["parameters"]["format"] == "trec"
    assert entry["as_run"] == f"run(path={es})"


def test_bench_tune_refuses_a_run_in_one_line(es: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(es.parent)
    message = ("grid 'rrf(bm25,run(es.trec),k=10|60)' holds a run file, run(...), a fixed ranking with no parameter to "
               "tune. Fix: tune the system that wrote it, or compare the run with bench compare")
    with pytest.raises(SpecError) as caught:
        read_grid("rrf(bm25,run(es.trec),k=10|60)")
    assert str(caught.value) == message
    with pytest.raises(SpecError, match="holds a run file"):
        read_grid({"run(es.trec)": {"order": ["trec", "file"]}})
    outcome = CliRunner().invoke(main, ["tune", "rrf(bm25,run(es.trec),k=10|60)", "--corpus", "article",
                                        "--metric", "ndcg@10"])
    assert outcome.exit_code == 2
    assert outcome.output.strip().splitlines() == [f"error: {message}"]


def test_collection_placeholder_reads_one_run_per_collection(tmp_path: Path) -> None:
    (tmp_path / "tiny.trec").write_text(TREC)
    system = build(f"run({tmp_path}/{{collection}}.trec, name=es)")
    assert "sha256" not in system.get_params()  # read at fit, when the collection is known
    result = compared([system])
    assert result.summary["mrr"].tolist() == [1.0]  # q1: d2 (grade 1) first; q2: d3 first
    assert system.get_params()["file"] == str(tmp_path / "tiny.trec")


# ----- formats ------------------------------------------------------------------------------------


def test_the_format_and_the_name_of_a_run_file_come_from_its_suffixes() -> None:
    assert [run_file_format(name).name for name in ("run.dev.tsv.gz", "es.trec.gz", "x.gz", "d.parquet.gz",
                                                     "results.test")] == ["tsv", "trec", "trec", "parquet", "trec"]
    assert [run_file_name(name) for name in ("runs/es.trec", "run.dev.tsv.gz", "bm25.run.7", "d.PARQUET")] == \
        ["es", "run.dev", "bm25.run.7", "d"]


def test_msmarco_tsv_reads_the_rank_as_score(tmp_path: Path) -> None:
    path = tmp_path / "run.dev.tsv"
    path.write_text("q1\td4\t3\nq1\td2\t1\nq1\td1\t2\n# a comment\nq2\td3\t1\n")
    read = RunFile.read(path)
    assert read.run_id == "run.dev"
    assert read.run.items("q1") == [("d2", -1.0), ("d1", -2.0), ("d4", -3.0)]
    assert run_file_format(path).name == "tsv"


def test_msmarco_tsv_ties_in_rank_break_by_doc_id_descending(tmp_path: Path) -> None:
    path = tmp_path / "tied.tsv"
    path.write_text("q1\ta\t1\nq1\tc\t1\nq1\tb\t2\n")
    assert Run.read(path).ranking("q1") == ["c", "a", "b"]
    assert Run.read(path, order="file").ranking("q1") == ["a", "c", "b"]


@pytest.mark.parametrize(("line", "message"), [
    ("q1 d1 1", "expected 3 tab-separated fields `qid<TAB>docid<TAB>rank`, got 'q1 d1 1'"),
    ("q1\td1\t0", "rank '0' is not a whole number >= 1"),
    ("q1\td1\t1.5", "rank '1.5' is not a whole number >= 1"),
])
def test_msmarco_tsv_mistakes_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(f"q1\td2\t1\n{line}\n")
    with pytest.raises(InputFileError) as caught:
        Run.read(path)
    assert f"{path}:2: {message}" in str(caught.value)


def test_a_duplicate_line_in_a_tsv_run_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "twice.tsv"
    path.write_text("q1\td2\t1\nq1\td2\t2\n")
    with pytest.raises(InputFileError, match=r"twice\.tsv:2: document 'd2' is ranked twice for query 'q1' "
                                             r"\(first at line 1\)"):
        Run.read(path)


@pytest.mark.parametrize("name", ["es.trec.gz", "es.gz", "es.tsv.gz", "es.run.gz"])
def test_every_text_format_is_gunzipped_by_its_suffix(tmp_path: Path, name: str) -> None:
    run = Run.from_mapping({"q1": [("d2", 3.0), ("d1", 2.0)], "q2": [("d3", 1.0)]})
    path = run.write(tmp_path / name, "es")
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    back = Run.read(path)
    assert [back.ranking(q) for q in ("q1", "q2")] == [["d2", "d1"], ["d3"]]
    assert run_file_name(path) == "es"


def test_a_gzipped_parquet_run_reads_back(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow", reason="Parquet runs need pyarrow")
    run = Run.from_mapping({"q1": [("d2", 3.0), ("d1", 2.0)]})
    path = run.write(tmp_path / "dense.parquet.gz", "dense")
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    read = RunFile.read(path)
    assert read.run.to_mapping() == run.to_mapping() and read.run_id == "dense"
    assert build(f"run({path})").get_params()["format"] == "parquet"


def test_a_parquet_run_beside_a_trec_run_in_a_comparison(es: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow", reason="Parquet runs need pyarrow")
    Run.read(es).write(tmp_path / "copy.parquet", "copy")
    result = compared(f"run({es}),run({tmp_path / 'copy.parquet'})")
    assert result.summary["mrr"].tolist()[0] == result.summary["mrr"].tolist()[1]


# ----- a run against the collection: every case, its exact message --------------------------------


def test_a_query_the_run_lacks_scores_zero_and_is_said(tmp_path: Path) -> None:
    path = tmp_path / "half.trec"
    path.write_text("q1 Q0 d1 1 2 t\n")
    result = compared([RunSystem(str(path))])
    assert run_warnings(result) == [f"run 'half' ({path}) ranks no document for 1 query of the 2 compared, which "
                                    "score 0 (as trec_eval -c counts them): 'q2'"]
    per_query = result.per_query.set_index("query_id")
    assert per_query.loc["q2", "mrr"] == 0.0 and per_query.loc["q1", "mrr"] == 1.0


def test_queries_the_comparison_lacks_are_ignored_and_said(es: Path) -> None:
    es.write_text(TREC + "q3 Q0 d2 1 1 es\nq9 Q0 d1 1 1 es\n")
    result = compared([RunSystem(str(es))])
    assert run_warnings(result) == [f"run 'es' ({es}): 2 queries of the run are not among the 2 queries compared "
                                    "(the collection lacks them, or they have no relevant judgment), ignored: "
                                    "'q3', 'q9'"]


def test_a_run_deeper_than_the_depth_is_cut_and_said(es: Path) -> None:
    result = compared([RunSystem(str(es))], depth=2, metrics=("mrr",))
    assert run_warnings(result) == [f"run 'es' ({es}) ranks more than the depth of 2 results in 1 query (up to 3); "
                                    "each ranking was cut to its first 2"]
    assert result.systems[0].run.ranking("q1") == ["d2", "d1"]


def test_a_few_documents_the_corpus_lacks_are_skipped_and_said(tmp_path: Path) -> None:
    path = tmp_path / "few.trec"
    lines = [f"q1 Q0 d{i} {i} {100 - i} t" for i in range(1, 7)]
    lines += ["q2 Q0 x1 1 49 t"] + [f"q2 Q0 d{i} {i + 1} {40 - i} t" for i in range(1, 7)]
    lines += [f"q9 Q0 d{i} {i} {20 - i} t" for i in range(1, 8 - 1)] + ["q8 Q0 d1 1 1 t"]
    path.write_text("\n".join(lines) + "\n")  # 20 results, one naming an unknown document: 5.0%, not above 5%
    result = compared([RunSystem(str(path))])
    assert run_warnings(result)[0] == (f"run 'few' ({path}): skipped 1 of 20 results (5.0%) naming 1 document the "
                                       "corpus 'tiny' does not have ('x1'); the results below them move up a rank")
    assert result.systems[0].run.ranking("q2")[:2] == ["d1", "d2"]


def test_many_documents_the_corpus_lacks_are_refused_with_count_and_examples(tmp_path: Path) -> None:
    path = tmp_path / "other.trec"
    path.write_text("q1 Q0 d1 1 9 t\nq1 Q0 x1 2 8 t\nq2 Q0 x2 1 7 t\nq2 Q0 d3 2 6 t\n")
    with pytest.raises(RetbenchError) as caught:
        compared([RunSystem(str(path))])
    assert str(caught.value) == (
        f"run 'other' ({path}): 2 of 4 results (50.0%) name 2 documents the corpus 'tiny' does not have ('x1', 'x2'), "
        "more than the 5% that is skipped with a warning. Fix: compare the run on the collection it was made for "
        "(the same doc ids)")


def test_a_duplicate_document_is_refused_as_trec_eval_refuses_it(tmp_path: Path) -> None:
    path = tmp_path / "twice.trec"
    path.write_text("q1 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n")
    with pytest.raises(InputFileError, match=r"twice\.trec:2: document 'd1' is ranked twice for query 'q1' "
                                             r"\(first at line 1\)"):
        RunSystem(str(path))
    given = Run.from_mapping({"q1": [("d1", 2.0), ("d1", 1.0)]})
    with pytest.raises(RetbenchError) as caught:
        compared({"mine": given})
    assert str(caught.value) == ("run 'run': document 'd1' is ranked twice for query 'q1', which trec_eval refuses. "
                                 "Fix: keep one result per (query, document)")


def test_a_run_that_scores_nothing_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.trec"
    path.write_text("q7 Q0 d1 1 2 t\nq8 Q0 d2 1 1 t\n")
    with pytest.raises(RetbenchError) as caught:
        compared([RunSystem(str(path))])
    assert str(caught.value) == (f"run 'elsewhere' ({path}) ranks no document of the corpus for any of the 2 queries "
                                 "compared ('q1', 'q2'). Fix: check that the run was made for this collection's "
                                 "queries and documents")
    with pytest.raises(RetbenchError) as caught:
        compared({"empty": Run.from_mapping({"q1": []})})
    assert str(caught.value) == "run 'empty' holds no results. Fix: give the run at least one ranked document"


def test_a_run_searched_by_hand_warns_through_python_warnings(tmp_path: Path) -> None:
    path = tmp_path / "half.trec"
    path.write_text("q1 Q0 d1 1 2 t\n")
    system = RunSystem(str(path)).fit(CORPUS)
    with pytest.warns(UserWarning, match=r"ranks no document for 1 query of the 2 compared"):
        system.search(QUERIES.subset({"q1", "q2"}), 10)


# ----- Python: runs as systems and in fusions -------------------------------------------------------


def test_compare_takes_a_corpora_run_and_names_it_by_its_key(es: Path) -> None:
    run = Run.read(es)
    result = compared({"es": run, "bm25": BM25()})
    assert [s.label for s in result.systems] == ["es", "bm25"]
    from_file = compared([RunSystem(str(es))])
    assert result.per_query[result.per_query.system == "es"]["mrr"].tolist() == from_file.per_query["mrr"].tolist()


def test_compare_takes_a_dataframe_and_a_ranx_run(es: Path) -> None:
    pd = pytest.importorskip("pandas")
    run = Run.read(es)
    frame = run.to_dataframe()
    assert isinstance(frame, pd.DataFrame)
    result = compared({"frame": frame, "file": RunSystem(str(es))})
    means = result.summary.set_index("system")["ndcg@10"]
    assert means["frame"] == means["file"]
    ranx = pytest.importorskip("ranx", reason="ranx runs need ranx")
    named = run.to_ranx(name="from-ranx")
    assert isinstance(named, ranx.Run)
    result = compared([named])
    assert result.systems[0].label == "from-ranx" and result.summary["ndcg@10"].iloc[0] == means["file"]


def test_runs_in_fusions_in_python_and_in_specs_agree(es: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.trec"
    other.write_text("q1 Q0 d1 1 5 o\nq1 Q0 d3 2 4 o\nq2 Q0 d4 1 3 o\nq2 Q0 d3 2 2 o\n")
    by_object = compared([RRF(Run.read(es), Run.read(other)), Weighted(Run.read(es), Run.read(other), alpha=0.3)])
    by_spec = compared(f"rrf(run({es}),run({other})),weighted(run({es}),run({other}),alpha=0.3)")
    assert by_object.per_query["mrr"].tolist() == by_spec.per_query["mrr"].tolist()
    assert [s.run.to_mapping() for s in by_object.systems] == [s.run.to_mapping() for s in by_spec.systems]


def test_bench_compare_takes_run_specs_and_a_run_baseline(tmp_path: Path) -> None:
    folder = tmp_path / "first"
    runner = CliRunner()
    outcome = runner.invoke(main, ["compare", "--corpus", "article", "--systems", "bm25", "--metrics", "ndcg@10",
                                   "--out", str(folder), "-q"])
    assert outcome.exit_code == 0, outcome.output
    written = next(folder.glob("*/runs/bm25.trec"))
    es = tmp_path / "es.trec"
    es.write_bytes(written.read_bytes())
    outcome = runner.invoke(main, ["compare", "--corpus", "article", "--systems", f"lsa,run({es}),rrf(lsa,run({es}))",
                                   "--baseline", "es", "--metrics", "ndcg@10", "--out", str(tmp_path / "second"), "-q"])
    assert outcome.exit_code == 0, outcome.output
    assert f"warning: run 'es' ({es}) ranks no document for 1 query of the 14 compared" in outcome.output
    manifest = json.loads(next((tmp_path / "second").glob("*/manifest.json")).read_text())
    assert [e["label"] for e in manifest["systems"]] == ["lsa", "es", "rrf(lsa,es)"]


def test_a_run_in_weighted_is_normalised_over_its_own_ranking(es: Path) -> None:
    system = RunSystem(str(es)).fit(CORPUS)
    matrix = system.score(QUERIES.subset({"q1", "q2"}))
    assert matrix.shape == (2, 6)
    assert matrix[0].tolist() == [2.25, 3.5, -np.inf, 1.0, -np.inf, -np.inf]
    fused = Weighted(RunSystem(str(es)), BM25(), alpha=1.0).fit(CORPUS)
    ranked = fused.search(QUERIES.subset({"q1", "q2"}), 10)
    # alpha 1: the run alone, min-max over its three documents of q1: d2 1, d1 0.5; d4 (the minimum) fuses to 0
    assert ranked.items("q1") == [("d2", 1.0), ("d1", 0.5)]


# ----- round trip: a run bench compare wrote, fed back, gives the same files ----------------------


def test_runs_written_by_compare_fed_back_give_byte_identical_results(tmp_path: Path) -> None:
    runner = CliRunner()
    builtins = ["bm25", "lsa", "weighted", "rrf"]
    metrics = ["--metrics", "ndcg@10,map,mrr,recall@5"]
    outcome = runner.invoke(main, ["compare", "--corpus", "article", "--systems", ",".join(builtins), *metrics,
                                   "--out", str(tmp_path / "first"), "-q"])
    assert outcome.exit_code == 0, outcome.output
    first = next((tmp_path / "first").iterdir())
    specs = [f"run({first / 'runs' / f'{name}.trec'}, name={name})" for name in builtins]
    outcome = runner.invoke(main, ["compare", "--corpus", "article", "--systems", ",".join(specs), *metrics,
                                   "--out", str(tmp_path / "again"), "-q"])
    assert outcome.exit_code == 0, outcome.output
    again = next((tmp_path / "again").iterdir())
    for name in ("per_query.csv", "comparisons.csv", "leaderboard.csv", "summary.csv"):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name


# ----- a run written by another tool: the means are trec_eval 10's ---------------------------------


def test_a_run_written_by_trec_evals_authors_gives_trec_evals_means() -> None:
    """trec_eval's own test run and judgments (``results.test``, ``qrels.test``) compared as
    ``run(...)`` on a collection holding their documents: the means are the ones trec_eval 10 prints
    in ``out.test`` (4 decimals), and those of ``harness.evaluate`` (trec_eval to the last bit)."""
    from corpora import read_qrels
    from harness import evaluate
    from harness.core.options import Statistics

    suite = real_data("trec_eval_tests")
    qrels = read_qrels(suite / "qrels.test")
    run = Run.read(suite / "results.test")
    docs = sorted({d for q in qrels for d in qrels[q]} | {str(d) for d in run.doc_ids})
    dataset = Dataset("trec_eval", Corpus(docs, ["text"] * len(docs), name="trec_eval"),
                      Queries(list(qrels), ["text"] * len(qrels)), qrels, "<memory>")
    metrics = {"map": "map", "rprec": "Rprec", "mrr": "recip_rank", "P@5": "P_5", "P@10": "P_10"}
    result = compare([RunSystem(str(suite / "results.test"))], dataset, list(metrics),
                     statistics=Statistics(bootstrap_samples=200, permutations=200))
    printed = {line.split()[0]: float(line.split()[2]) for line in (suite / "out.test").read_text().splitlines()
               if len(line.split()) == 3 and line.split()[1] == "all" and line.split()[0] in metrics.values()}
    exact = evaluate(run, qrels, list(metrics))
    per_query = result.per_query.set_index("query_id")
    for ours, theirs in metrics.items():
        assert round(float(result.summary[ours].iloc[0]), 4) == printed[theirs], ours
        assert per_query[ours].to_dict() == exact[ours].to_dict(), ours


def test_one_spec_reads_a_run_per_collection_in_a_suite(tmp_path: Path) -> None:
    from harness import compare_suite
    from harness.core.options import Statistics

    other = Dataset("other", Corpus(["e1", "e2"], ["sky", "sea"], name="other"), Queries(["p1"], ["sky"]),
                    Qrels({"p1": {"e1": 1}}), "<memory>")
    (tmp_path / "tiny.trec").write_text(TREC)
    (tmp_path / "other.trec").write_text("p1 Q0 e2 1 2 t\np1 Q0 e1 2 1 t\n")
    suite = compare_suite([f"run({tmp_path}/{{collection}}.trec, name=es)"], [tiny(), other], ["mrr"],
                          statistics=Statistics(bootstrap_samples=200, permutations=200))
    means = {collection.name: float(collection.summary["mrr"].iloc[0]) for collection in suite.collections}
    assert means == {"tiny": 1.0, "other": 0.5}


def test_runs_in_weighted_are_checked_once_against_the_whole_comparison_not_per_batch() -> None:
    # weighted reads its children's scores a batch of queries at a time; a run's checks must read the
    # comparison's queries: a batch whose queries the run lacks is not "ranks nothing", and a query of
    # another batch is not "not among the queries compared".
    corpus = Corpus([f"d{i}" for i in range(10)], ["text"] * 10, name="x")
    queries = Queries(["q1", "q2", "q3", "q4"], ["a", "b", "c", "d"])
    a = RunSystem.of(Run.from_mapping({"q1": [("d1", 3.0), ("d2", 1.0)], "q9": [("d1", 1.0)]}), name="a")
    b = RunSystem.of(Run.from_mapping({q: [("d3", 2.0), (f"d{4 + i}", 1.0)] for i, q in enumerate(queries.ids)}),
                     name="b")
    fused = Weighted(a, b)
    fused.batch_cells = 10  # one query per batch
    fused.fit(corpus)
    with pytest.warns(UserWarning) as said:
        run = fused.search(queries, 10)
    messages = [str(w.message) for w in said]
    assert messages == [
        "run 'a': 1 query of the run is not among the 4 queries compared (the collection lacks it, or it has no "
        "relevant judgment), ignored: 'q9'",
        "run 'a' ranks no document for 3 queries of the 4 compared, which score 0 (as trec_eval -c counts them): "
        "'q2', 'q3', 'q4'"]
    assert run.to_mapping()["q1"][0][0] == "d1"


@pytest.mark.parametrize("text", [
    "q1\td4\t3\nq1\td2\t1\nq2\td3\t1\n", "q1\td4\t3\nq1\td2\t1", "q1\td1\t1\n\n\nq2\td1\t+2\n", "q1\td1\t01\n",
    "\tq1\td1\t1\n", "q1\td1\t1\t\n", "q1\td1\t1\nq1\t\td2\t2\n", "q1\td1\t1\r\nq1\td2\t2\r\n", "q1\td1\t1\n\t\n",
    "q1\td1\t1\n#c\nq1\td2\t2\n", "q1\td1\t1\n#\tx\t1\n", "#\tx\t1\nq1\td1\t1\n", "q1\td1\t1\n\tq1\td2\t2\n",
    "q1\td1\r\t1\n", "q1\td1\t1\nq1\td1\t2\n", "q1\td1\t0\n", "q1\td 1\t1\n", "q1\td1\t1\x0b\n", "",
])
def test_a_tsv_run_reads_the_same_on_the_array_path_as_line_by_line(tmp_path: Path, text: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import corpora.tsv_run as tsv_run

    path = tmp_path / "run.tsv"
    path.write_bytes(text.encode("utf-8"))

    def outcome() -> object:
        try:
            run = Run.read(path)
        except InputFileError as error:
            return str(error)
        return {query: run.items(query) for query in run.query_ids}

    fast = outcome()
    monkeypatch.setattr(tsv_run, "_columns", lambda raw: None)
    assert fast == outcome()


def test_a_plain_tsv_run_takes_the_array_path() -> None:
    from corpora.tsv_run import _columns

    columns = _columns(b"q1\td4\t3\nq1\td2\t1")
    assert columns is not None and [list(column) for column in columns] == [["q1", "q1"], ["d4", "d2"], ["3", "1"]]
