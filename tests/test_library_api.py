"""harness.compare and harness.evaluate over objects: a Dataset built in memory, Retriever objects
(built-in and a custom class), a mapping that names them; every mistake refused before any fit; the
library and `bench compare` give the same numbers and the same files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from click.testing import CliRunner

from corpora import Corpus, Dataset, Qrels, Queries, RetbenchError, Run, load_dataset, read_qrels, summary_line
from harness import CompareResult, compare, evaluate, parse_metric
from harness.cli import main
from harness.readings.retrieval_metrics import RESULTS_FILE
from retrievers import BM25, LSA, RRF, FixedRun, ScoreRetriever, Weighted
from harness.core.options import Loading, RunOptions, Scoring, Statistics

# Four documents, three queries: q3's only judgment is non-relevant, so it is excluded.
CORPUS = Corpus(["d1", "d2", "d3", "d4"], ["red apple pie", "green apple", "blue sky today", "apple sky"])
QUERIES = Queries(["q1", "q2", "q3"], ["apple pie", "sky", "nothing at all"])
QRELS = Qrels({"q1": {"d1": 2}, "q2": {"d3": 1}, "q3": {"d2": 0}})
FITTED: list[str] = []  # labels of the Overlap objects fitted so far


def tiny(corpus: Corpus = CORPUS, queries: Queries = QUERIES, qrels: Qrels = QRELS) -> Dataset:
    return Dataset("tiny", corpus, queries, qrels, "<memory>")


class Overlap(ScoreRetriever):
    """Scores a document by the number of distinct query words it holds.

    q1 'apple pie': d1 2, d2 1, d4 1, d3 0 -> d1, d2, d4 (ties by doc id); q2 'sky': d3, d4.
    """

    def fit(self, corpus: Corpus) -> Overlap:
        super().fit(corpus)
        FITTED.append(self.label)
        self.words = [set(text.split()) for text in corpus.full_texts]
        return self

    def score(self, queries: Queries) -> np.ndarray:
        asked = [set(text.split()) for text in queries.texts]
        return np.array([[len(q & d) for d in self.words] for q in asked], dtype=float)


# q1: d1 at rank 2 (rr 1/2); q2: d3 never retrieved (rr 0)
FIXED = {"q1": ["d2", "d1"], "q2": ["d4", "d1"]}


@pytest.fixture(autouse=True)
def nothing_fitted_yet() -> None:
    FITTED.clear()


# ----- objects in, a result out -----------------------------------------------------------------


def test_a_mapping_names_the_objects_and_the_numbers_are_hand_derived() -> None:
    result = compare({"mine": Overlap(), "theirs": FixedRun(FIXED)}, tiny(), ["hit@1", "mrr"],
                     statistics=Statistics(bootstrap_samples=50))
    assert isinstance(result, CompareResult)
    assert result.summary.to_dict("list") == {"system": ["mine", "theirs"], "hit@1": [1.0, 0.0], "mrr": [1.0, 0.25]}
    assert list(result.per_query.columns) == ["system", "query_id", "hit@1", "mrr", "first_relevant_rank"]
    ranks = result.per_query.set_index(["system", "query_id"])["first_relevant_rank"]
    assert [ranks[("mine", "q1")], ranks[("mine", "q2")], ranks[("theirs", "q1")]] == [1, 1, 2]
    assert ranks[("theirs", "q2")] is pd.NA
    assert (result.query_ids, result.excluded_query_ids) == (["q1", "q2"], ["q3"])
    mrr = [c for c in result.comparisons if c.metric == "mrr"]
    assert [(c.system_a, c.system_b, c.mean_diff) for c in mrr] == [("mine", "theirs", 0.75)]
    assert [(f.system, f.query_id, f.category) for f in result.failures] == [("theirs", "q2", "missed")]
    assert result.warnings == [] and FITTED == ["mine"]
    assert result.systems[0].run.ranking("q1") == ["d1", "d2", "d4"]


def test_objects_specs_and_built_ins_mix_and_label_as_on_the_command_line() -> None:
    result = compare([BM25(k1=0.9), "lsa(dims=2)", RRF(BM25(), Overlap()), Overlap()], tiny(), "mrr,ndcg@3",
                     statistics=Statistics(bootstrap_samples=50))
    assert result.summary["system"].tolist() == ["bm25(k1=0.9)", "lsa(dims=2)", "rrf(bm25,Overlap)", "Overlap"]
    from_specs = compare("bm25(k1=0.9),lsa(dims=2)", tiny(), [parse_metric("mrr"), "ndcg@3"],
                         statistics=Statistics(bootstrap_samples=50))
    pd.testing.assert_frame_equal(from_specs.summary, result.summary.iloc[:2])


def test_the_result_writes_the_results_folder_and_prints_the_report(tmp_path: Path) -> None:
    result = compare({"mine": Overlap(), "theirs": FixedRun(FIXED)}, tiny(), ["mrr"],
                     statistics=Statistics(bootstrap_samples=50))
    folder = result.write(tmp_path / "out", command_line=["notebook"])
    assert folder.parent == tmp_path / "out"
    assert (folder / "summary.csv").read_text() == "system,mrr\nmine,1.0\ntheirs,0.25\n"
    assert (folder / "runs" / "mine.trec").read_text().splitlines()[0] == "q1 Q0 d1 1 2.0 mine"
    assert (folder / "qrels.txt").read_text() == "q1 0 d1 2\nq2 0 d3 1\n"  # the evaluated queries only
    report = result.report()
    assert (folder / "report.txt").read_text() == report + "\n"
    assert report.splitlines()[0] == summary_line(result.dataset)
    assert result.report(heading=False) == report.split("\n", 1)[1]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["command_line"] == ["notebook"] and manifest["corpus"]["name"] == "tiny"
    assert manifest["loading"] == {"allow_unmatched_judgments": None}  # a Dataset object: not loaded here
    assert [s["label"] for s in manifest["systems"]] == ["mine", "theirs"]


def test_the_article_through_the_library_equals_bench_compare(runner, tmp_path: Path) -> None:
    metrics = ["hit@3", "recall@5", "mrr", "ndcg@5"]
    cli = runner.invoke(main, ["compare", "--systems", "bm25,lsa,weighted,rrf", "--metrics", ",".join(metrics),
                               "--no-cache", "-q", "--out", str(tmp_path / "cli")])
    assert cli.exit_code == 0, cli.output
    by_name = compare([BM25(), LSA(), Weighted(), RRF()], "article", metrics)
    by_object = compare([BM25(), LSA(), Weighted(), RRF()], load_dataset("article"), metrics)
    assert by_object.summary.round(3).values.tolist() == [
        ["bm25", 0.857, 0.667, 0.821, 0.691], ["lsa", 0.857, 0.679, 0.827, 0.679],
        ["weighted", 0.857, 0.738, 0.857, 0.734], ["rrf", 0.857, 0.738, 0.857, 0.737]]
    headline = next(c for c in by_object.comparisons if (c.system_a, c.system_b, c.metric) == ("bm25", "lsa", "ndcg@5"))
    assert [round(x, 3) for x in (headline.mean_diff, headline.ci_low, headline.ci_high)] == [0.012, -0.081, 0.107]

    (cli_folder,) = (tmp_path / "cli").iterdir()
    for result, name in ((by_name, "name"), (by_object, "object")):
        folder = result.write(tmp_path / name)
        files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(cli_folder) for p in cli_folder.rglob("*") if p.is_file())
        for relative in files:
            # the manifest and the card's lines hold the run id, the cost reading its own times
            if relative.name not in ("manifest.json", RESULTS_FILE, "efficiency.csv", "latency_comparisons.csv"):
                assert (folder / relative).read_bytes() == (cli_folder / relative).read_bytes(), relative
        ours, theirs = (_stable(json.loads((f / "manifest.json").read_text())) for f in (folder, cli_folder))
        # the card's lines carry the run id (its time), like the manifest; the rest is the same, and the
        # result ids too when the configuration hash is (loaded by name)
        lines = [[json.loads(line) for line in (f / RESULTS_FILE).read_text().splitlines()] for f in (folder, cli_folder)]
        assert {line["runId"] for line in lines[0]} == {folder.name}
        volatile = ("runId",) if name == "name" else ("runId", "resultId")
        assert [{k: v for k, v in line.items() if k not in volatile} for line in lines[0]] == \
            [{k: v for k, v in line.items() if k not in volatile} for line in lines[1]]
        if name == "name":  # loaded by name, as the CLI does: the same record, the same configuration hash
            assert ours == theirs
        else:  # a Dataset object: how it was loaded is not known here, and the record says so
            assert ours["loading"] == {"allow_unmatched_judgments": None}
            assert ours["hashes"]["configuration"] != theirs["hashes"]["configuration"]
            for key in ("loading", "hashes"):
                del ours[key], theirs[key]
            assert ours == theirs


def _stable(manifest: dict) -> dict:
    """The manifest without what changes from run to run (times, ids, paths, command line)."""
    for key in ("time", "run_id", "command_line", "versions", "steps"):
        del manifest[key]
    del manifest["corpus"]["source"]
    for system in manifest["systems"]:
        del system["fit_seconds"], system["search_seconds"]
    del manifest["files"][RESULTS_FILE]  # its hash: the file holds the run id
    del manifest["files"]["efficiency.csv"], manifest["files"]["latency_comparisons.csv"]  # this run's times
    return manifest


def test_progress_goes_to_the_function_given_and_nowhere_else(capsys) -> None:
    heard: list[tuple[str, int, int | None]] = []
    compare([Overlap()], tiny(), ["mrr"], progress=lambda label, done, total: heard.append((label, done, total)),
            statistics=Statistics(bootstrap_samples=50))
    assert [h for h in heard if h[1] == 0] == [("fitting Overlap", 0, None), ("searching Overlap", 0, 2),
                                              ("evaluating Overlap", 0, None), ("measuring latency", 0, None),
                                              ("bootstrap", 0, 50), ("leaderboard", 0, None), ("facets", 0, None),
                                              ("near-duplicates", 0, None), ("retrieval metrics", 0, None),
                                              ("diagnosis", 0, None)]
    assert capsys.readouterr() == ("", "")


def test_a_progress_channel_hears_the_work_of_its_own_comparison_only() -> None:
    from corpora.progress import Progress

    heard: list[str] = []
    channel = Progress(lambda label, done, total: heard.append(label))
    compare([Overlap()], tiny(), ["mrr"], statistics=Statistics(bootstrap_samples=50), progress=channel)
    # the readings' compute steps in registry order: the near-duplicates (80) before the metrics card (90)
    assert list(dict.fromkeys(heard)) == ["fitting Overlap", "searching Overlap", "evaluating Overlap",
                                          "measuring latency", "bootstrap", "leaderboard", "facets", "near-duplicates",
                                          "retrieval metrics", "diagnosis"]
    before = len(heard)
    compare([Overlap()], tiny(), ["mrr"], statistics=Statistics(bootstrap_samples=50))  # no channel handed over: nothing is heard
    assert len(heard) == before


def test_a_cache_folder_keeps_fitted_indexes_and_the_default_keeps_none(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RETBENCH_CACHE_DIR", str(tmp_path / "user-cache"))
    compare([BM25()], tiny(), ["mrr"], statistics=Statistics(bootstrap_samples=50))
    assert not (tmp_path / "user-cache").exists()
    compare([BM25()], tiny(), ["mrr"], statistics=Statistics(bootstrap_samples=50),
            run=RunOptions(cache=tmp_path / "chosen"))
    assert [p.name.split("-")[0] for p in (tmp_path / "chosen" / "indexes").iterdir()] == ["bm25"]
    compare([BM25()], tiny(), ["mrr"], statistics=Statistics(bootstrap_samples=50), run=RunOptions(cache=True))
    assert len(list((tmp_path / "user-cache" / "indexes").iterdir())) == 1


# ----- every mistake before the first fit --------------------------------------------------------


@pytest.mark.parametrize(
    ("corpus", "queries", "qrels", "message"),
    [
        (Corpus(["d 1", "d2"], ["a", "b"]), Queries(["q1"], ["a"]), Qrels({"q1": {"d2": 1}}),
         "dataset 'tiny' (<memory>): document id 'd 1' holds whitespace (' ' at position 2), so it cannot be "
         "written to TREC run and qrels files. Fix: give it an id without whitespace or control characters, "
         "e.g. 'd_1'."),
        (Corpus(["d1", ""], ["a", "b"]), Queries(["q1"], ["a"]), Qrels({"q1": {"d1": 1}}), "document id '' is empty"),
        (CORPUS, Queries(["#q1"], ["apple"]), Qrels({"#q1": {"d1": 1}}),
         "query id '#q1' starts with '#', which makes its TREC lines comments"),
        (CORPUS, Queries(["q1"], ["apple"]), Qrels({"q1": {"d1": 1, "d\x00": 1}}),
         "judged document id 'd\\x00' holds a control character"),
    ],
)
def test_ids_a_trec_file_cannot_hold_are_refused_before_any_fit(corpus, queries, qrels, message) -> None:
    with pytest.raises(RetbenchError) as caught:
        compare([Overlap()], tiny(corpus, queries, qrels), ["mrr"])
    assert message in str(caught.value)
    assert FITTED == []


@pytest.mark.parametrize(
    ("systems", "message"),
    [
        ([BM25], "systems[0] is the class BM25, not a retriever. Fix: create one, e.g. BM25()"),
        ([Overlap(), 3], "systems[1] is a int (3), not a Retriever or a spec string"),
        (BM25(), "systems is one retriever (bm25), not a list of them"),
        ([], "systems is empty"),
        ([Overlap(), Overlap()], "more than one system is labelled Overlap. Fix: give them different parameters, "
                                 "or name each one"),
        ({"bm25": LSA()}, "the label 'bm25' is the name of a retriever, but labels lsa"),
        ({"my bm25": BM25()}, "the label 'my bm25' holds whitespace"),
        ({3: BM25()}, "the label 3 is a int, not a string"),
        ([Overlap(), "nope"], "unknown retriever 'nope'"),
    ],
)
def test_bad_systems_are_refused_before_any_fit(systems, message) -> None:
    with pytest.raises(RetbenchError, match=None) as caught:
        compare(systems, tiny(), ["mrr"])
    assert message in str(caught.value)
    assert FITTED == []


def test_the_same_object_twice_is_refused() -> None:
    mine = Overlap()
    with pytest.raises(RetbenchError, match="systems holds the same Overlap object twice"):
        compare({"a": mine, "b": mine}, tiny(), ["mrr"])
    assert FITTED == []


@pytest.mark.parametrize(
    ("metrics", "options", "message"),
    [
        (["ndcg@0", "nope"], lambda: {}, "The 'k' parameter of ndcg@k must be an int >= 1. Got 0 instead.; unknown metric"),
        ([parse_metric("mrr"), 5], lambda: {}, "metric 5 is neither a Metric nor a name"),
        (["mrr"], lambda: {"scoring": Scoring(depth=0)}, "`depth` must be an int >= 1. Got 0 instead."),
        (["ndcg@10"], lambda: {"scoring": Scoring(depth=5)}, "a metric cuts at 10 but `depth` is 5"),
        (["mrr"], lambda: {"statistics": Statistics(seed=-1)}, "`seed` must be an int >= 0"),
        (["mrr"], lambda: {"statistics": Statistics(confidence=1.5)}, "`confidence` must be a number strictly between 0.5 and 1"),
        (["mrr"], lambda: {"statistics": Statistics(family="pairs")}, "unknown multiple-comparison family (`family`) 'pairs'"),
        (["mrr"], lambda: {"scoring": Scoring(rel_threshold=0.5)}, "`rel_threshold` must be an int >= 0 (a grade). Got 0.5"),
        (["mrr"], lambda: {"baseline": "bm25"}, "`baseline` 'bm25' is not among the systems (Overlap)"),
        (["mrr"], lambda: {"loading": Loading(split="dev")}, "split load a dataset given by name or folder, but dataset 'tiny'"),
        (["mrr"], lambda: {"run": RunOptions(cache=3)}, "cache is a int, not True, False or a folder"),
        (["mrr"], lambda: {"statistics": {"seed": 1}}, "`statistics` is a dict, not a Statistics. Fix: pass statistics="),
        (["mrr"], lambda: {"progress": "loud"}, "progress must be a renderer, a function (label, done, total) or None"),
    ],
)
def test_bad_metrics_and_options_are_refused_before_any_fit(metrics, options, message) -> None:
    """``options`` makes the keywords: an option group refuses a value out of its domain when it is made."""
    with pytest.raises(RetbenchError) as caught:
        compare([Overlap()], tiny(), metrics, **options())
    assert message in str(caught.value)
    assert FITTED == []


def test_a_dataset_of_the_wrong_kind_is_refused() -> None:
    with pytest.raises(RetbenchError, match="dataset is a int, not a corpora.Dataset, a bundled corpus name"):
        compare([Overlap()], 42, ["mrr"])
    with pytest.raises(RetbenchError, match="no such folder and no bundled corpus"):
        compare([Overlap()], "no/such/folder", ["mrr"])
    assert FITTED == []


# ----- evaluate ----------------------------------------------------------------------------------


def test_evaluate_counts_every_judged_query_as_trec_eval_c_does() -> None:
    run = {"q1": [("d2", 3.0), ("d1", 2.0)], "q9": [("d1", 1.0)]}  # q2 missed; q9 not judged
    frame = evaluate(run, QRELS.to_dict(), ["mrr", "ndcg@2"])
    assert frame.index.tolist() == ["q1", "q2", "q3"]  # q3 is judged, only non-relevant: it counts, as 0
    assert frame["mrr"].tolist() == [0.5, 0.0, 0.0]
    assert frame["ndcg@2"].iloc[0] == pytest.approx((2 / np.log2(3)) / 2)  # d1 (grade 2) at rank 2 of ideal 1
    assert frame["first_relevant_rank"].tolist() == [2, pd.NA, pd.NA]
    assert evaluate(run, QRELS, "mrr", depth=1)["mrr"].tolist() == [0.0, 0.0, 0.0]
    assert evaluate(run, QRELS, "mrr", query_ids=["q3", "q1"])["mrr"].tolist() == [0.0, 0.5]
    assert evaluate(run, QRELS, "mrr", run_queries_only=True)["mrr"].to_dict() == {"q1": 0.5}


def test_evaluate_and_bench_evaluate_count_the_same_queries(tmp_path) -> None:
    """The issue's example: q2 is judged only non-relevant. trec_eval -c (and both of ours) counts
    it: mean MRR (1 + 0) / 2 = 0.5, not 1.0."""
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 0\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 1.0 t\nq2 Q0 b 1 1.0 t\n")
    frame = evaluate(Run.read(tmp_path / "run"), read_qrels(tmp_path / "qrels"), ["mrr"])
    assert frame["mrr"].to_dict() == {"q1": 1.0, "q2": 0.0}
    result = CliRunner().invoke(main, ["evaluate", "--qrels", str(tmp_path / "qrels"), str(tmp_path / "run"),
                                       "--metrics", "mrr", "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = {row["query_id"]: float(row["mrr"]) for row in csv.DictReader(io.StringIO(result.stdout))}
    assert rows == {"q1": 1.0, "q2": 0.0, "all": 0.5} and frame["mrr"].mean() == 0.5


def test_evaluate_refuses_judgments_or_a_run_that_would_make_every_number_zero() -> None:
    with pytest.raises(RetbenchError, match="no query has a relevant judgment.*Fix:"):
        evaluate({"q1": [("d1", 1.0)]}, {"q1": {"d1": 0}}, ["mrr"])
    with pytest.raises(RetbenchError, match=r"run: none of the run's 1 query \('x'\) is judged.*Fix:"):
        evaluate({"x": [("d1", 1.0)]}, QRELS, ["mrr"])


def test_evaluate_equals_the_per_query_values_of_compare() -> None:
    """compare averages the queries with a relevant judgment (q1, q2); evaluate counts q3 too, as 0."""
    result = compare([Overlap(), FixedRun(FIXED)], tiny(), ["mrr", "ndcg@3"],
                     statistics=Statistics(bootstrap_samples=50))
    for system in result.systems:
        frame = evaluate(system.run, QRELS, ["mrr", "ndcg@3"])
        assert frame.loc["q3", ["mrr", "ndcg@3"]].tolist() == [0.0, 0.0]
        mine = result.per_query[result.per_query.system == system.label].set_index("query_id")
        pd.testing.assert_frame_equal(frame.loc[result.query_ids], mine.drop(columns="system"), check_names=False,
                                      check_index_type=False)
        same = evaluate(system.run, QRELS, ["mrr", "ndcg@3"], query_ids=result.query_ids)
        pd.testing.assert_frame_equal(same, mine.drop(columns="system"), check_names=False, check_index_type=False)


def test_evaluate_refuses_bad_options() -> None:
    with pytest.raises(RetbenchError, match="depth must be None or an int >= 1. Got 0 instead"):
        evaluate({}, QRELS, ["mrr"], depth=0)
    with pytest.raises(RetbenchError, match="unknown metric 'mmr'"):
        evaluate({}, QRELS, ["mmr"])
