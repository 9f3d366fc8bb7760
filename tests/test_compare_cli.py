"""`bench compare` through the CLI: bad input, the results contract, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

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
    ],
)
def test_bad_input_is_one_clear_message_exit_2_and_nothing_written(runner, tmp_path, args, message):
    result = compare(runner, tmp_path, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert nothing_written(tmp_path)


def test_unknown_names_list_the_registry(runner, tmp_path):
    from harness.metrics import metric_names
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
    from harness.compare import restrict_to_candidates

    run = Run.from_mapping({"q1": [("a", 3.0), ("b", 2.0), ("c", 1.0)], "q2": [("a", 1.0)]})
    restricted = restrict_to_candidates(run, {"q1": ["c", "a"]}, depth=1)
    assert restricted.ranking("q1") == ["a"] and restricted.ranking("q2") == ["a"]
    assert restrict_to_candidates(run, {"q1": ["c", "b"]}, depth=5).ranking("q1") == ["b", "c"]


def test_results_folder_contract(runner, tmp_path):
    result = compare(runner, tmp_path, "--systems", "bm25,rrf(bm25,lsa,k=30)", "--metrics", "ndcg@5,P_5,mrr")
    assert result.exit_code == 0, result.output
    folder = only_folder(tmp_path)
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert names == ["comparisons.csv", "diagnosis.csv", "manifest.json", "per_query.csv", "qrels.txt",
                     "runs/bm25.raw.tsv", "runs/bm25.trec", "runs/rrf_k=30_.raw.tsv", "runs/rrf_k=30_.trec",
                     "summary.csv"]
    assert (folder / "summary.csv").read_text().splitlines()[0] == "system,ndcg@5,P_5,mrr"
    assert (folder / "per_query.csv").read_text().splitlines()[0] == \
        "system,query_id,ndcg@5,P_5,mrr,first_relevant_rank"
    assert (folder / "comparisons.csv").read_text().splitlines()[0] == \
        "system_a,system_b,metric,mean_diff,ci_low,ci_high,p_value,p_adjusted,n_queries"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["corpus"]["name"] == "article" and len(manifest["corpus"]["content_hash"]) == 64
    assert [s["label"] for s in manifest["systems"]] == ["bm25", "rrf(k=30)"]
    assert manifest["systems"][0]["parameters"] == {"k1": 1.2, "b": 0.75, "analyzer": "article"}
    assert manifest["statistics"]["bootstrap_samples"] == 200
    assert [(s["run_file"], s["raw_scores_file"], s["run_tag"]) for s in manifest["systems"]] == [
        ("runs/bm25.trec", "runs/bm25.raw.tsv", "bm25"), ("runs/rrf_k=30_.trec", "runs/rrf_k=30_.raw.tsv", "rrf(k=30)")]
    first = (folder / "runs" / "bm25.trec").read_text().splitlines()[0].split()
    assert first[:4] == ["q01", "Q0", "pricing1", "1"] and first[5] == "bm25"
    assert float(first[4]) > 0  # a plain float, readable by trec_eval
    from harness.trec import read_run

    read_run(folder / "runs" / "bm25.trec")  # the results store's runs read back cleanly


def test_same_inputs_and_seed_give_identical_files(runner, tmp_path):
    args = ["--systems", "bm25,lsa,rrf", "--metrics", "ndcg@5,mrr"]
    assert compare(runner, tmp_path, *args).exit_code == 0
    assert compare(runner, tmp_path, *args).exit_code == 0
    first, second = sorted(p for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert first.name != second.name  # a new folder per run; the earlier one untouched
    for path in first.rglob("*"):
        if path.is_file() and path.name != "manifest.json":
            assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path.name
    strip = lambda m: {k: v for k, v in m.items() if k not in ("run_id", "time", "systems")}  # noqa: E731
    m1, m2 = (json.loads((f / "manifest.json").read_text()) for f in (first, second))
    assert strip(m1) == strip(m2)


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
