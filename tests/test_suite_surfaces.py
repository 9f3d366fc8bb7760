"""Suites on every surface (issue 41, items 4 and 5): every command that reads a results folder
reads a suite folder or refuses it with one line naming what to give instead; two collections of one
name are told apart; a gate refuses two sides that read their judgments differently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpora import InputFileError, RetbenchError
from harness import compare, compare_suite, gate
from harness.cli import main
from harness.core.options import Scoring
from harness.judgments.pool import pool_folder
from harness.serve.store import RunStore
from retrievers import FixedRun
from tests.test_suite import CLI_FAST, FAST, small_collection

STATS = ["--bootstrap-samples", "200", "--permutations", "200"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """A suite folder of the article and one small synthetic collection (bm25, lsa; ndcg@10, mrr)."""
    root = tmp_path_factory.mktemp("surfaces")
    other = small_collection(root / "fruit", seed=1)
    return compare_suite("bm25,lsa", ["article", str(other)], ["ndcg@10", "mrr"], **FAST).write(
        root / "out", command_line=["test"])


def _refused(result, line: str) -> None:
    """Exit 2, exactly one ``error:`` line, and no traceback."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # not an uncaught error
    assert result.output.strip().splitlines() == [line]


def _suite_line(suite: Path) -> str:
    return (f"error: {suite}: is a suite folder (bench compare with several --corpus), not the results folder of one "
            f"comparison. Fix: name one of the results folders inside it ({suite}/collections/article, "
            f"{suite}/collections/fruit).")


def _collections_line(suite: Path) -> str:
    return (f"error: {suite}/collections: holds the results folders of 2 collections of the suite {suite}, not one. "
            f"Fix: name one of them ({suite}/collections/article, {suite}/collections/fruit), or the suite folder "
            "for bench report and bench gate.")


# ----- pool, agree, report, gate over a suite folder -----------------------------------------------------


def test_pool_refuses_a_suite_and_its_collections_folder_and_reads_a_collection(runner, suite, tmp_path):
    out = tmp_path / "pool.tsv"
    _refused(runner.invoke(main, ["pool", str(suite), "--out", str(out)]), _suite_line(suite))
    _refused(runner.invoke(main, ["pool", str(suite / "collections"), "--out", str(out)]), _collections_line(suite))
    assert not out.exists()  # refused before anything was written
    one = runner.invoke(main, ["pool", str(suite / "collections" / "fruit"), "--out", str(out)])
    assert one.exit_code == 0, one.output
    assert out.read_text().startswith("query_id\tdoc_id\tn_systems\tbest_rank")


def test_pool_folder_in_the_library_refuses_a_suite(suite):
    with pytest.raises(InputFileError, match="is a suite folder"):
        pool_folder(suite, 10)


def test_agree_refuses_a_suite_as_results(runner, suite):
    qrels = suite / "collections" / "article" / "qrels.txt"
    _refused(runner.invoke(main, ["agree", str(qrels), str(qrels), "--results", str(suite)]), _suite_line(suite))
    _refused(runner.invoke(main, ["agree", str(qrels), str(qrels), "--results", str(suite / "collections")]),
             _collections_line(suite))
    one = runner.invoke(main, ["agree", str(qrels), str(qrels), "--results", str(suite / "collections" / "article"),
                               "--metric", "mrr"])
    assert one.exit_code == 0 and "Kendall's tau" in one.output, one.output


def test_report_reads_a_suite_and_a_collection_and_refuses_the_collections_folder(runner, suite):
    whole = runner.invoke(main, ["report", str(suite), "--format", "md"])
    assert whole.exit_code == 0 and "macro" in whole.output, whole.output
    one = runner.invoke(main, ["report", str(suite / "collections" / "fruit"), "--format", "md"])
    assert one.exit_code == 0 and "fruit" in one.output, one.output
    _refused(runner.invoke(main, ["report", str(suite / "collections"), "--format", "md"]), _collections_line(suite))


def test_gate_reads_two_suites_and_refuses_the_collections_folder(runner, suite):
    both = runner.invoke(main, ["gate", str(suite), str(suite), "--metric", "mrr", "--system", "bm25", *STATS])
    assert both.exit_code == 0 and "suite gate: unchanged" in both.output, both.output
    single = suite / "collections" / "article"
    _refused(runner.invoke(main, ["gate", str(suite / "collections"), str(single), "--metric", "mrr"]),
             _collections_line(suite))
    with pytest.raises(InputFileError, match="is a suite folder"):
        gate(suite, single, "mrr")  # the library: one line's error, not a TypeError from the manifest


def test_serve_store_lists_a_suites_collections_as_runs(suite):
    for root in (suite.parent, suite):  # a folder holding the suite, and the suite folder itself
        store = RunStore(root)
        runs = store.runs()
        assert sorted((r["id"], r["suite"], r["collection"]) for r in runs) == [
            (f"{suite.name}~article", suite.name, "article"), (f"{suite.name}~fruit", suite.name, "fruit")]
        assert [s["id"] for s in store.suites()] == [suite.name]
        metrics = store.metrics(f"{suite.name}~fruit")
        assert metrics["runId"] == f"{suite.name}~fruit" and {s["system"] for s in metrics["systems"]} == {"bm25", "lsa"}
    inside = RunStore(suite / "collections").runs()  # the collections folder: its runs by their folder names
    assert sorted(r["id"] for r in inside) == ["article", "fruit"]


# ----- two collections of one name; one collection twice ---------------------------------------------------


class Recording(FixedRun):
    """A fixed ranking that records each fit, by the corpus's first document id."""

    fits: list[str] = []

    def fit(self, corpus):
        Recording.fits.append(corpus.ids[0])
        return super().fit(corpus)


def test_two_collections_of_one_name_are_told_apart(tmp_path, runner):
    first, second = small_collection(tmp_path / "a" / "c", seed=1), small_collection(tmp_path / "b" / "c", seed=2)
    out = tmp_path / "out"
    done = runner.invoke(main, ["compare", "--corpus", str(first), "--corpus", str(second), "--systems", "bm25",
                                "--metrics", "mrr", "--out", str(out), *CLI_FAST])
    assert done.exit_code == 0, done.output
    assert "suite of 2 collections, 16 queries: c (8), c-2 (8)" in done.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [(c["name"], c["given"], c["folder"]) for c in manifest["collections"]] == [
        ("c", str(first), "collections/c"), ("c-2", str(second), "collections/c-2")]
    summary = (folder / "suite_summary.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in summary[1:3]] == ["c", "c-2"]


def test_one_collection_twice_is_refused_before_any_fit(tmp_path):
    from corpora.loading import bundled_path

    Recording.fits.clear()
    with pytest.raises(RetbenchError, match=r"collection 2 .*is collection 1 again"):
        compare_suite({"fixed": Recording()}, ["article", str(bundled_path("article"))], "mrr", **FAST)
    folder = small_collection(tmp_path / "c", seed=3)
    with pytest.raises(RetbenchError, match=r"collection 2 .*is collection 1 again"):
        compare_suite({"fixed": Recording()}, [str(folder), str(folder) + "/"], "mrr", **FAST)
    assert Recording.fits == []


# ----- one reading of the judgments per comparison ----------------------------------------------------------


@pytest.fixture(scope="module")
def readings(tmp_path_factory) -> dict[str, Path]:
    """bm25 on the article, its unjudged documents read as trec_eval does and condensed."""
    root = tmp_path_factory.mktemp("readings")
    return {unjudged: compare("bm25", "article", ["ndcg@10", "mrr"], scoring=Scoring(unjudged=unjudged),
                              **FAST).write(root / unjudged, command_line=["test"])
            for unjudged in ("nonrelevant", "condensed")}


def _mixed_line(baseline: str, candidate: str, before: str = "nonrelevant", after: str = "condensed") -> str:
    return (f"error: the baseline {baseline} and the candidate {candidate} read their judgments differently "
            f"(unjudged documents read as {before} in the baseline, {after} in the candidate), so the same ranking "
            "would score differently on each side. Fix: score both the same way: the same --unjudged in bench "
            "compare (bench gate takes --unjudged for a run file)")


def test_gate_refuses_folders_scored_with_different_unjudged_readings(runner, readings):
    plain, condensed = readings["nonrelevant"], readings["condensed"]
    _refused(runner.invoke(main, ["gate", str(plain), str(condensed), "--metric", "ndcg@10", *STATS]),
             _mixed_line(str(plain), str(condensed)))
    _refused(runner.invoke(main, ["gate", str(condensed), str(plain), "--metric", "ndcg@10", *STATS]),
             _mixed_line(str(condensed), str(plain), "condensed", "nonrelevant"))
    for same in (plain, condensed):  # one reading on both sides: gated
        ok = runner.invoke(main, ["gate", str(same), str(same), "--metric", "ndcg@10", *STATS])
        assert ok.exit_code == 0 and "UNCHANGED" in ok.output, ok.output


def test_gate_run_file_takes_the_baseline_folders_reading_or_refuses_another(runner, readings):
    condensed = readings["condensed"]
    run, qrels = condensed / "runs" / "bm25.trec", condensed / "qrels.txt"
    same = runner.invoke(main, ["gate", str(condensed), str(run), "--qrels", str(qrels), "--metric", "ndcg@10", *STATS])
    assert same.exit_code == 0 and "UNCHANGED" in same.output, same.output  # scored condensed, as the baseline
    _refused(runner.invoke(main, ["gate", str(condensed), str(run), "--qrels", str(qrels), "--metric", "ndcg@10",
                                  "--unjudged", "nonrelevant"]),
             f"error: --unjudged nonrelevant, but the baseline {condensed} was scored with condensed. Fix: drop "
             "--unjudged")
    _refused(runner.invoke(main, ["gate", str(run), str(condensed), "--qrels", str(qrels), "--metric", "ndcg@10"]),
             _mixed_line(str(run), str(condensed)))
    given = runner.invoke(main, ["gate", str(run), str(condensed), "--qrels", str(qrels), "--metric", "ndcg@10",
                                 "--unjudged", "condensed", *STATS])
    assert given.exit_code == 0 and "UNCHANGED" in given.output, given.output


def test_gate_refuses_suites_scored_with_different_unjudged_readings(runner, tmp_path):
    other = small_collection(tmp_path / "fruit", seed=4)
    written = {unjudged: compare_suite("bm25", ["article", str(other)], "mrr", scoring=Scoring(unjudged=unjudged),
                                       **FAST).write(tmp_path / unjudged, command_line=["test"])
               for unjudged in ("nonrelevant", "condensed")}
    plain, condensed = written["nonrelevant"], written["condensed"]
    _refused(runner.invoke(main, ["gate", str(plain), str(condensed), "--metric", "mrr", *STATS]),
             _mixed_line(str(plain / "collections" / "article"), str(condensed / "collections" / "article")))
    ok = runner.invoke(main, ["gate", str(condensed), str(condensed), "--metric", "mrr", *STATS])
    assert ok.exit_code == 0 and "suite gate: unchanged" in ok.output, ok.output
    flag = runner.invoke(main, ["gate", str(plain), str(plain), "--metric", "mrr", "--unjudged", "condensed"])
    assert flag.exit_code == 2 and "error: --unjudged gate two results folders or run files, not two suites" in \
        flag.output, flag.output


def test_gate_still_refuses_different_relevance_thresholds(readings, tmp_path):
    other = compare("bm25", "article", ["ndcg@10", "mrr"], scoring=Scoring(rel_threshold=2), **FAST).write(
        tmp_path, command_line=["test"])
    with pytest.raises(RetbenchError, match=r"relevant from grade 1 in the baseline, 2 in the candidate.*the same "
                                            r"--rel-threshold in bench compare"):
        gate(readings["nonrelevant"], other, "mrr")


def test_gate_of_suites_names_a_collection_missing_from_the_candidate(runner, suite, tmp_path):
    other = small_collection(tmp_path / "veg", seed=5)
    candidate = compare_suite("bm25,lsa", ["article", str(other)], ["ndcg@10", "mrr"], **FAST).write(
        tmp_path / "out", command_line=["test"])
    _refused(runner.invoke(main, ["gate", str(suite), str(candidate), "--metric", "mrr", "--system", "bm25"]),
             f"error: collection 'fruit' of the baseline suite is not in the candidate suite {candidate}. Fix: gate "
             "suites run on the same collections")
