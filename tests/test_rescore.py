"""A results folder re-scores to its own numbers in standard evaluators.

pytrec_eval (trec_eval's code) on the written ``runs/*.trec`` and the written qrels gives every
value of ``per_query.csv``, and ``bench evaluate`` with default options (the command the manifest
records) prints ``summary.csv``'s means to the last bit: on the bundled corpus and on two real
collections (and CSFCube's candidate pools), for the four baselines, including rrf, whose scores
tie in every Cranfield query. The written scores are strictly decreasing as floats, so the two
readings of trec_eval (10: doubles, the default; 9.x and pytrec_eval: floats, ``--order trec9``)
rank them alike: both print the same bytes, without a warning.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.evaluation import evaluate
from harness.core.metrics import parse_metric, trec_eval_name
from corpora.trec_io import read_run
from tests.conftest import SHARED_DATA, real_data

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (the test extra) is the reference evaluator")

SYSTEMS = "bm25,lsa,weighted,rrf"
# one metric of every family trec_eval has, under retbench's names
METRICS = "ndcg@10,ndcg,map,map@100,recall@100,mrr,hit@3,precision@5,rprec,bpref"
# CSFCube: each query ranks its own candidate pool (the written runs are the pooled rankings)
CORPORA = {"article": "article", "cranfield": str(SHARED_DATA / "cranfield"),
           "cisi": str(SHARED_DATA / "cisi"), "csfcube": str(SHARED_DATA / "csfcube")}


def compare(out: Path, cache: Path, corpus: str, *extra: str) -> Path:
    result = CliRunner().invoke(main, ["compare", "--corpus", corpus, "--systems", SYSTEMS, "--metrics", METRICS,
                                       "--bootstrap-samples", "200", "--cache-dir", str(cache), "--out", str(out),
                                       "--quiet", *extra])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder


@pytest.fixture(scope="module", params=list(CORPORA))
def results_folder(request, tmp_path_factory) -> Path:
    name = request.param
    if name != "article":
        real_data(name)
    base = tmp_path_factory.mktemp(f"rescore-{name}")
    return compare(base / "out", base / "cache", CORPORA[name])


def read_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def plain_qrels(folder: Path) -> dict[str, dict[str, int]]:
    """The results folder's judgments file, read as any script would: split on whitespace."""
    (path,) = [p for p in folder.iterdir() if "qrels" in p.name]
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        query_id, _, doc_id, grade = line.split()
        qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return qrels


def plain_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        assert len(fields) == 6, line
        run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    return run


def pytrec_eval_spec(name: str) -> str:
    """retbench metric -> trec_eval name -> pytrec_eval's measure spec (``ndcg_cut_10`` -> ``ndcg_cut.10``)."""
    trec_name = trec_eval_name(parse_metric(name))
    assert trec_name is not None, name
    family, _, cutoff = trec_name.rpartition("_")
    return f"{family}.{cutoff}" if cutoff.isdigit() else trec_name


def test_pytrec_eval_on_the_written_runs_equals_per_query(results_folder: Path) -> None:
    manifest = json.loads((results_folder / "manifest.json").read_text())
    metrics = METRICS.split(",")
    evaluator = pytrec_eval.RelevanceEvaluator(plain_qrels(results_folder), {pytrec_eval_spec(m) for m in metrics})
    per_query = read_rows(results_folder / "per_query.csv")
    assert {s["label"] for s in manifest["systems"]} == set(SYSTEMS.split(","))
    compared = 0
    for system in manifest["systems"]:
        scored = evaluator.evaluate(plain_run(results_folder / system["run_file"]))
        rows = [row for row in per_query if row["system"] == system["label"]]
        assert rows
        for row in rows:
            for metric in metrics:
                trec_name = trec_eval_name(parse_metric(metric))
                reference = scored.get(row["query_id"], {}).get(trec_name, 0.0)  # absent: no result, 0
                assert float(row[metric]) == pytest.approx(reference, abs=1e-12, rel=0), \
                    (system["label"], row["query_id"], metric)
                compared += 1
    assert compared == len(per_query) * len(metrics)


def _evaluate_as_recorded(folder: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> list[dict[str, str]]:
    manifest = json.loads((folder / "manifest.json").read_text())
    command = manifest["rescore"]["command"].split()
    assert command[:2] == ["bench", "evaluate"] and "--format" in command
    monkeypatch.chdir(folder)  # the recorded command runs inside the results folder
    result = CliRunner().invoke(main, [*command[1:], *extra])
    assert result.exit_code == 0, result.output
    assert "warning:" not in result.stderr  # no ranking depends on how the scores are read
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_both_readings_of_the_scores_rescore_the_written_runs_alike(
        results_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _evaluate_as_recorded(results_folder, monkeypatch, "--order", "trec9") == \
        _evaluate_as_recorded(results_folder, monkeypatch)


def test_bench_evaluate_with_default_options_reproduces_summary_and_per_query(
        results_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = json.loads((results_folder / "manifest.json").read_text())
    label_of = {s["run_file"]: s["label"] for s in manifest["systems"]}
    rows = _evaluate_as_recorded(results_folder, monkeypatch)
    metrics = METRICS.split(",")
    summary = {row["system"]: row for row in read_rows(results_folder / "summary.csv")}
    per_query = {(row["system"], row["query_id"]): row for row in read_rows(results_folder / "per_query.csv")}
    means = {label_of[row["run"]]: row for row in rows if row["query_id"] == "all"}
    assert set(means) == set(summary)
    for label, row in means.items():
        assert [float(row[m]) for m in metrics] == [float(summary[label][m]) for m in metrics], label  # every bit
    queries = {(label_of[row["run"]], row["query_id"]): row for row in rows if row["query_id"] != "all"}
    assert set(queries) == set(per_query)
    for key, row in queries.items():
        assert [float(row[m]) for m in metrics] == [float(per_query[key][m]) for m in metrics], key


def test_a_non_default_rel_threshold_is_part_of_the_recorded_command(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = compare(tmp_path / "out", tmp_path / "cache", "article", "--rel-threshold", "2")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["rescore"]["command"].endswith("--rel-threshold 2")
    # the queries without a grade-2 judgment are excluded, and left out of the judgments file too
    assert set(plain_qrels(folder)) == {row["query_id"] for row in read_rows(folder / "per_query.csv")}
    summary = {row["system"]: row for row in read_rows(folder / "summary.csv")}
    for row in _evaluate_as_recorded(folder, monkeypatch):
        if row["query_id"] == "all":
            label = {s["run_file"]: s["label"] for s in manifest["systems"]}[row["run"]]
            assert [row[m] for m in METRICS.split(",")] == [summary[label][m] for m in METRICS.split(",")]


def test_rrf_ties_on_the_bundled_corpus_survive_the_round_trip(tmp_path: Path) -> None:
    """rrf's q01 ties pricing1 and sso1; written as scored, trec_eval keeps pricing1 first."""
    folder = compare(tmp_path / "out", tmp_path / "cache", "article")
    lines = (folder / "runs" / "rrf.trec").read_text().splitlines()[:2]
    raw = (folder / "runs" / "rrf.raw.tsv").read_text().splitlines()[1:3]
    assert [line.split()[2] for line in lines] == ["pricing1", "sso1"]
    assert raw[0].split("\t")[3] == raw[1].split("\t")[3]  # tied as the retriever scored them
    assert float(lines[0].split()[4]) > float(lines[1].split()[4])


# ----- order="trec9" reads scores as trec_eval 9.x and pytrec_eval do ----------------------------

# distinct doubles, but only three distinct floats: trec_eval 9.x (so pytrec_eval) ties them
_NEAR_TIES = [1.0, 1.0 - 1e-12, 1.0 - 2e-12, 0.5, 0.5 + 1e-13, 0.25]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_NEAR_TIES), st.integers(0, 3)), min_size=1, max_size=12))
def test_scores_equal_as_floats_rank_as_in_pytrec_eval(tmp_path_factory, entries: list[tuple[float, int]]) -> None:
    docs = [f"d{j:02d}" for j in range(len(entries))]
    qrels = {"q": {d: grade for d, (_, grade) in zip(docs, entries)}}
    if not any(grade for _, grade in entries):
        qrels["q"]["unretrieved"] = 1
    path = tmp_path_factory.mktemp("near-ties") / "run.trec"
    path.write_text("".join(f"q Q0 {d} 1 {score!r} t\n" for d, (score, _) in zip(docs, entries)))
    metrics = [parse_metric(m) for m in ("mrr", "ndcg@5", "precision@3", "map")]
    ours = evaluate(read_run(path, order="trec9"), qrels, metrics).loc["q"]
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut.5", "P.3", "map"}).evaluate(
        {"q": {d: score for d, (score, _) in zip(docs, entries)}})["q"]
    for metric in metrics:
        assert ours[metric.name] == pytest.approx(reference[trec_eval_name(metric)], abs=1e-12), metric.name
