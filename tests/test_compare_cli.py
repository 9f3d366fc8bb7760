"""`bench compare` through the CLI: bad input, the results contract, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.options import Scoring, Statistics

FAST = ["--bootstrap-samples", "200"]


def compare(runner, tmp_path: Path, *args: str):
    return runner.invoke(main, ["compare", "--out", str(tmp_path / "out"), *FAST, *args])


def only_folder(tmp_path: Path) -> Path:
    folders = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    assert len(folders) == 1
    return folders[0]


def nothing_written(tmp_path: Path) -> bool:
    out = tmp_path / "out"
    return not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--systems", "bm25,nope"], "unknown retriever 'nope'. Valid: "),
        (["--systems", ""], "--systems is empty"),
        (["--systems", " , "], "--systems is empty"),
        (["--metrics", "ndgc@5"], "unknown metric 'ndgc@5'. Valid: hit@k"),
        (["--metrics", "ndcg@0"], "The 'k' parameter of ndcg@k must be an int >= 1. Got 0 instead."),
        (["--metrics", "ndcg@-2"], "must be an int >= 1"),
        (["--metrics", "recall"], "The 'k' parameter of recall@k must be"),
        (["--corpus", "no/such/folder"], "no such folder and no bundled corpus"),
        (["--baseline", "dense9"], "--baseline 'dense9' is not among the systems"),
        (["--depth", "0"], "--depth must be an int >= 1"),
        (["--systems", "bm25,bm25"], "more than once"),
        # several --corpus are a suite: every collection is found before the first one runs
        (["--corpus", "article", "--corpus", "no/such/folder"], "no such folder and no bundled corpus"),
        (["--corpus", "article", "--corpus", "article"], "is collection 1 again"),
    ],
)
def test_bad_input_is_one_clear_message_exit_2_and_nothing_written(runner, tmp_path, args, message):
    result = compare(runner, tmp_path, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert nothing_written(tmp_path)


def test_unknown_names_list_the_registry(runner, tmp_path):
    from harness.core.metrics import metric_names
    from retrievers import available

    result = compare(runner, tmp_path, "--systems", "nope")
    assert ", ".join(available()) in result.output
    result = compare(runner, tmp_path, "--metrics", "nope@3")
    assert ", ".join(metric_names()) in result.output


def test_corpus_folder_missing_a_file(runner, tmp_path):
    folder = tmp_path / "beir"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "hello world"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "hello"}\n')
    result = compare(runner, tmp_path, "--corpus", str(folder), "--systems", "bm25")
    assert result.exit_code == 2
    assert "test.tsv" in result.output and "not found" in result.output
    assert nothing_written(tmp_path)


def write_beir(folder: Path, corpus: str, qrels: str) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(corpus)
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "hello"}\n')
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


def test_qrels_line_with_wrong_field_count_names_file_and_line(runner, tmp_path):
    folder = write_beir(tmp_path / "c", '{"_id": "d1", "text": "hello"}\n{"_id": "d2", "text": "bye"}\n',
                        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n")
    result = compare(runner, tmp_path, "--corpus", str(folder), "--systems", "bm25")
    assert result.exit_code == 2
    assert "test.tsv:3:" in result.output and "got 2" in result.output
    assert nothing_written(tmp_path)


def test_duplicate_doc_ids_are_an_error(runner, tmp_path):
    folder = write_beir(tmp_path / "c", '{"_id": "d1", "text": "hello"}\n{"_id": "d1", "text": "bye"}\n',
                        "q1\td1\t1\n")
    result = compare(runner, tmp_path, "--corpus", str(folder), "--systems", "bm25")
    assert result.exit_code == 2
    assert "corpus.jsonl:2:" in result.output and "duplicate document id 'd1'" in result.output


def test_summary_line_is_printed_before_the_tables(runner, tmp_path):
    result = compare(runner, tmp_path, "--systems", "bm25", "--metrics", "mrr")
    first = result.output.splitlines()[0]
    assert first.startswith("article: 28 documents, 14 queries, 27 judgments")


def test_candidate_pools_restrict_each_ranking():
    from corpora import Run
    from harness.core.api import restrict_to_candidates

    run = Run.from_mapping({"q1": [("a", 3.0), ("b", 2.0), ("c", 1.0)], "q2": [("a", 1.0)]})
    restricted = restrict_to_candidates(run, {"q1": ["c", "a"]}, depth=1)
    assert restricted.ranking("q1") == ["a"] and restricted.ranking("q2") == ["a"]
    assert restrict_to_candidates(run, {"q1": ["c", "b"]}, depth=5).ranking("q1") == ["b", "c"]


def test_results_folder_contract(runner, tmp_path):
    result = compare(runner, tmp_path, "--systems", "bm25,rrf(bm25,lsa,k=30)", "--metrics", "ndcg@5,P_5,mrr")
    assert result.exit_code == 0, result.output
    folder = only_folder(tmp_path)
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert names == ["comparisons.csv", "diagnosis.csv", "duplicates.csv", "efficiency.csv", "facets.csv",
                     "latency_comparisons.csv", "leaderboard.csv",
                     "manifest.json", "per_query.csv", "qrels.txt", "query_facets.csv",
                     "report.txt", "retrieval_metrics.jsonl", "retrieval_metrics_facets.csv",
                     "retrieval_metrics_summary.csv", "risk_coverage.csv", "risk_coverage_summary.csv",
                     "runs/bm25.raw.tsv", "runs/bm25.trec", "runs/rrf_k=30_.raw.tsv",
                     "runs/rrf_k=30_.trec",
                     "summary.csv"]
    assert (folder / "summary.csv").read_text().splitlines()[0] == "system,ndcg@5,P_5,mrr"
    assert (folder / "per_query.csv").read_text().splitlines()[0] == \
        "system,query_id,ndcg@5,P_5,mrr,first_relevant_rank"
    assert (folder / "comparisons.csv").read_text().splitlines()[0] == \
        "system_a,system_b,metric,mean_diff,ci_low,ci_high,p_value,p_adjusted,n_queries,n_differing,test,verdict," \
        "wins,ties,losses,effect_size,detectable_difference,queries_needed,effect_size_anova,effect_size_anova_low," \
        "effect_size_anova_high"
    headers = {name: (folder / name).read_text().splitlines()[0] for name in
               ("leaderboard.csv", "facets.csv", "risk_coverage.csv", "risk_coverage_summary.csv", "duplicates.csv")}
    assert headers == {
        "leaderboard.csv": "metric,group,system,mean,rank,mean_rank,rank_ci_low,rank_ci_high",
        "facets.csv": "system,facet,value,n_queries,ndcg@5,ndcg@5_ci_low,ndcg@5_ci_high,P_5,P_5_ci_low,P_5_ci_high,"
                      "mrr,mrr_ci_low,mrr_ci_high,note",
        "risk_coverage.csv": "system,coverage,risk,threshold",
        "risk_coverage_summary.csv": "system,confidence,risk_metric,n_queries,aurc,oracle_aurc,e_aurc,random_risk,"
                                     "kendall_tau",
        "duplicates.csv": "system,query_id,doc_a,doc_b,rank_a,rank_b,jaccard",
    }
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["corpus"]["name"] == "article" and len(manifest["corpus"]["content_hash"]) == 64
    assert [s["label"] for s in manifest["systems"]] == ["bm25", "rrf(k=30)"]
    assert manifest["statistics"]["holm_family"] == "metric" and manifest["statistics"]["alpha"] == 0.05
    assert manifest["statistics"]["randomisation_test"]["comparisons_by_test"] == {"exact": 3, "monte-carlo": 0}
    assert isinstance(manifest["notes"], list) and manifest["loading"] == {"allow_unmatched_judgments": False}
    assert manifest["systems"][0]["parameters"] == {"k1": 1.2, "b": 0.75, "analyzer": "article"}
    assert manifest["statistics"]["bootstrap_samples"] == 200
    assert [(s["run_file"], s["raw_scores_file"], s["run_tag"]) for s in manifest["systems"]] == [
        ("runs/bm25.trec", "runs/bm25.raw.tsv", "bm25"), ("runs/rrf_k=30_.trec", "runs/rrf_k=30_.raw.tsv", "rrf(k=30)")]
    first = (folder / "runs" / "bm25.trec").read_text().splitlines()[0].split()
    assert first[:4] == ["q01", "Q0", "pricing1", "1"] and first[5] == "bm25"
    assert float(first[4]) > 0  # a plain float, readable by trec_eval
    from corpora.trec_io import read_run

    read_run(folder / "runs" / "bm25.trec")  # the results store's runs read back cleanly


def test_same_inputs_and_seed_give_identical_files(runner, tmp_path):
    args = ["--systems", "bm25,lsa,rrf", "--metrics", "ndcg@5,mrr"]
    assert compare(runner, tmp_path, *args).exit_code == 0
    assert compare(runner, tmp_path, *args).exit_code == 0
    first, second = sorted(p for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert first.name != second.name  # a new folder per run; the earlier one untouched
    for path in first.rglob("*"):
        # the cost reading's two files hold this run's times; nothing else may move (timings never reach them)
        if path.is_file() and path.name not in ("manifest.json", "retrieval_metrics.jsonl", "efficiency.csv",
                                                "latency_comparisons.csv"):
            assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path.name
    # the card's lines hold the run id (its time) and nothing else that moves: the result ids are stable
    lines = [(f / "retrieval_metrics.jsonl").read_text().replace(f'"runId": "{f.name}"', '"runId": ""')
             for f in (first, second)]
    assert lines[0] == lines[1] and lines[0].count('"runId": ""') == 3 * 14
    strip = lambda m: {k: v for k, v in m.items() if k not in ("run_id", "time", "systems", "files", "steps")}  # noqa: E731
    m1, m2 = (json.loads((f / "manifest.json").read_text()) for f in (first, second))
    assert strip(m1) == strip(m2)
    # the files' hashes are the same too, but for the one file that holds the run id
    assert m1["files"].pop("retrieval_metrics.jsonl") != m2["files"].pop("retrieval_metrics.jsonl")
    for timed in ("efficiency.csv", "latency_comparisons.csv"):
        m1["files"].pop(timed), m2["files"].pop(timed)
    assert m1["files"] == m2["files"] and len(m1["files"]) == 14 + 2 * 3


def test_other_seed_changes_the_intervals(runner, tmp_path):
    assert compare(runner, tmp_path, "--systems", "bm25,lsa", "--metrics", "ndcg@5").exit_code == 0
    assert compare(runner, tmp_path, "--systems", "bm25,lsa", "--metrics", "ndcg@5", "--seed", "1").exit_code == 0
    a, b = (f / "comparisons.csv" for f in sorted(p for p in (tmp_path / "out").iterdir() if p.is_dir()))
    assert a.read_text() != b.read_text()


def test_baseline_compares_each_system_with_it(runner, tmp_path):
    result = compare(runner, tmp_path, "--systems", "bm25,lsa,rrf", "--metrics", "ndcg@5", "--baseline", "bm25")
    assert result.exit_code == 0, result.output
    lines = (only_folder(tmp_path) / "comparisons.csv").read_text().splitlines()[1:]
    assert [tuple(line.split(",")[:2]) for line in lines] == [("lsa", "bm25"), ("rrf", "bm25")]


def test_fail_rank_widens_the_diagnosis(runner, tmp_path):
    result = compare(runner, tmp_path, "--systems", "lsa", "--metrics", "mrr", "--fail-rank", "1")
    assert result.exit_code == 0
    rows = (only_folder(tmp_path) / "diagnosis.csv").read_text().splitlines()[1:]
    assert sorted(r.split(",")[1] for r in rows) == ["q01", "q02", "q10"]


def test_config_file_with_command_line_override(runner, tmp_path):
    config = tmp_path / "experiment.toml"
    config.write_text('systems = ["bm25", "bm25(k1=0.9,b=0.4)"]\nmetrics = ["ndcg@5"]\nbootstrap-samples = 100\n')
    result = runner.invoke(main, ["compare", "--config", str(config), "--out", str(tmp_path / "out"),
                                  "--metrics", "mrr"])
    assert result.exit_code == 0, result.output
    import csv

    with (only_folder(tmp_path) / "summary.csv").open(newline="") as handle:
        summary = list(csv.reader(handle))
    assert summary[0] == ["system", "mrr"]
    assert [row[0] for row in summary[1:]] == ["bm25", "bm25(k1=0.9,b=0.4)"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--confidence", "1"], "--confidence must be a number strictly between 0.5 and 1. Got 1.0 instead. Fix: "),
        (["--confidence", "0.5"], "--confidence must be a number strictly between 0.5 and 1. Got 0.5 instead."),
        (["--confidence", "1.2"], "strictly between 0.5 and 1. Got 1.2 instead."),
        (["--confidence", "nan"], "strictly between 0.5 and 1. Got nan instead."),
        (["--seed", "-1"], "--seed must be an int >= 0 (numpy seeds are non-negative). Got -1 instead. Fix: pass"),
        (["--permutations", "0"], "--permutations must be an int >= 1. Got 0 instead. Fix: pass e.g. --permutations"),
        (["--bootstrap-samples", "0"], "--bootstrap-samples must be an int >= 1. Got 0 instead. Fix: "),
        (["--family", "pair"], "'pair' is not one of 'metric', 'all'"),
    ],
)
def test_statistics_options_are_validated_before_any_work(runner, tmp_path, args, message):
    result = compare(runner, tmp_path, "--systems", "bm25,lsa", "--metrics", "ndcg@5", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert nothing_written(tmp_path)


def test_a_bad_seed_in_an_experiment_file_is_the_same_error(runner, tmp_path):
    config = tmp_path / "experiment.toml"
    config.write_text('systems = ["bm25", "lsa"]\nseed = -1\n')
    result = runner.invoke(main, ["compare", "--config", str(config), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--seed must be an int >= 0" in result.output
    assert nothing_written(tmp_path)


def test_family_and_alpha_are_printed_and_family_all_changes_the_family(runner, tmp_path):
    args = ["--systems", "bm25,lsa,rrf", "--metrics", "ndcg@5,mrr"]
    per_metric = compare(runner, tmp_path, *args)
    assert per_metric.exit_code == 0, per_metric.output
    assert "alpha 0.05 (= 1 - confidence); Holm family (--family metric): the 3 comparisons of each metric" \
        in per_metric.output
    assert "p: exact over all 2^m sign patterns of the m differing queries (6 comparisons)" in per_metric.output
    together = compare(runner, tmp_path, *args, "--family", "all", "--confidence", "0.9")
    assert together.exit_code == 0, together.output
    assert "alpha 0.1 (= 1 - confidence); Holm family (--family all): all 6 comparisons" in together.output
    assert "90% interval" in together.output


def test_weighted_writes_no_result_with_fused_score_zero(runner, tmp_path):
    # Both children are bm25: a document neither matches fuses to 0, and used to pad every ranking
    result = compare(runner, tmp_path, "--systems", "bm25,weighted(bm25,bm25(analyzer=english))",
                     "--metrics", "hit@10")
    assert result.exit_code == 0, result.output
    folder = only_folder(tmp_path)
    (run_file,) = [p for p in (folder / "runs").iterdir() if p.name.startswith("weighted") and p.suffix == ".trec"]
    lines = run_file.read_text().splitlines()
    assert lines and all(float(line.split()[4]) > 0 for line in lines)
    summary = (folder / "summary.csv").read_text().splitlines()
    assert summary[1:] == ["bm25,0.8571428571428571", "\"weighted(bm25,bm25(analyzer=english))\",0.8571428571428571"]


def test_a_metric_deeper_than_a_fusion_warns_on_stderr(runner, tmp_path):
    result = compare(runner, tmp_path, "--systems", "bm25,rrf", "--metrics", "recall@100,mrr")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == ["warning: recall@100 looks deeper than rrf, which fuses to depth 10 (at most 20 documents "
                        "per query): it measures that cut, not the fusion. Fix: fuse deeper, e.g. rrf(depth=100)"]


def test_fusion_depth_notes_and_warnings_from_the_library():
    from harness import compare

    result = compare("bm25,rrf(bm25,lsa,depth=100),rrf(weighted,lsa,depth=100)", "article", "recall@100,mrr,map",
                     scoring=Scoring(depth=100), statistics=Statistics(bootstrap_samples=100))
    # mrr and map read to --depth 100: within rrf's depth 100, but not within the weighted inside the last one
    assert result.warnings == [
        "recall@100, map look deeper than weighted inside rrf(weighted,lsa,depth=100), which fuses to depth 10 "
        "(at most 10 documents per query): they measure that cut, not the fusion. Fix: fuse deeper, e.g. "
        "weighted(depth=100)"]
    assert result.notes == [
        "mrr looks deeper than weighted inside rrf(weighted,lsa,depth=100), which fuses to depth 10 (at most 10 "
        "documents per query): a query whose first relevant document lies below that scores 0 there"]


def test_the_articles_run_warns_of_nothing(runner, tmp_path):
    result = compare(runner, tmp_path, "--systems", "bm25,lsa,weighted,rrf", "--metrics", "hit@3,recall@5,mrr,ndcg@5")
    assert result.exit_code == 0
    assert "warning" not in result.stderr


def test_experiment_files_set_the_new_statistics_keys(runner, tmp_path):
    config = tmp_path / "experiment.toml"
    config.write_text('systems = ["bm25", "lsa"]\nmetrics = ["ndcg@5"]\nfamily = "all"\npermutations = 50\n'
                      'confidence = 0.9\n')
    result = runner.invoke(main, ["compare", "--config", str(config), "--out", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 0, result.output
    assert "alpha 0.1 (= 1 - confidence); Holm family (--family all): all 1 comparison" in result.output
    assert "p: exact over all 2^m sign patterns of the m differing queries (1 comparison)" in result.output
