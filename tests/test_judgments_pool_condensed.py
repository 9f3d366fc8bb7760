"""bench pool and the condensed-list reading, on a real collection (Cranfield) with two systems'
runs: the pool equals an independent computation from the written files, and condensed-list
metrics equal trec_eval's (pytrec_eval) on the runs with their unjudged documents removed."""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import pytest

from corpora import Run, load_dataset
from harness import Scoring, Statistics, compare
from harness.cli import main
from harness.core.api import evaluate
from harness.core.condensed import condense
from retrievers import BM25, LSA

DEPTH = 20


@pytest.fixture(scope="module")
def cranfield_folder(tmp_path_factory) -> Path:
    from tests.conftest import real_data

    data = load_dataset(str(real_data("cranfield")))
    result = compare([BM25(), LSA(dims=50)], data, ["ndcg@10", "map", "judged@10"],
                     scoring=Scoring(depth=100), statistics=Statistics(bootstrap_samples=50, permutations=50))
    return result.write(tmp_path_factory.mktemp("pool"), say=lambda message: None)


def _read_run_file(path: Path) -> dict[str, list[tuple[str, float]]]:
    """query -> [(doc, score)], ranked as trec_eval ranks (score descending, doc id descending)."""
    found: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        found[query].append((doc, float(score)))
    return {q: sorted(pairs, key=lambda p: (-p[1], tuple(-ord(c) for c in p[0]))) for q, pairs in found.items()}


def _read_qrels_file(path: Path) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        query, _, doc, grade = line.split()
        judged[query][doc] = int(grade)
    return judged


def test_the_pool_is_every_unjudged_top_k_pair_most_retrieved_first(cranfield_folder, tmp_path, runner):
    out = tmp_path / "pool.tsv"
    done = runner.invoke(main, ["pool", str(cranfield_folder), "--depth", str(DEPTH), "--out", str(out)])
    assert done.exit_code == 0, done.output
    judged = _read_qrels_file(cranfield_folder / "qrels.txt")
    import json
    systems = json.loads((cranfield_folder / "manifest.json").read_text())["systems"]
    runs = {s["label"]: _read_run_file(cranfield_folder / s["run_file"]) for s in systems}
    assert len(runs) == 2
    expected: dict[tuple[str, str], list[int]] = {}
    holes = {}
    for label, run in runs.items():
        holes[label] = 0
        for query in judged:  # the evaluated queries: those of qrels.txt
            for rank, (doc, _) in enumerate(run.get(query, [])[:DEPTH], start=1):
                if doc not in judged[query]:
                    holes[label] += 1
                    entry = expected.setdefault((query, doc), [0, rank])
                    entry[0] += 1
                    entry[1] = min(entry[1], rank)
    with out.open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert {(r["query_id"], r["doc_id"]): [int(r["n_systems"]), int(r["best_rank"])] for r in rows} == expected
    assert len(rows) == len(expected)  # each pair once
    for first, second in zip(rows, rows[1:]):  # within a query: most retrieved first, then best rank
        if first["query_id"] == second["query_id"]:
            assert (-int(first["n_systems"]), int(first["best_rank"])) <= (-int(second["n_systems"]),
                                                                            int(second["best_rank"]))
    assert any(int(r["n_systems"]) == 2 for r in rows) and any(int(r["n_systems"]) == 1 for r in rows)
    for label, count in holes.items():
        assert re.search(rf"^  {re.escape(label)} +{count} of ", done.output, re.MULTILINE), done.output


def test_pool_refuses_a_folder_that_is_not_results_in_one_line(tmp_path, runner):
    done = runner.invoke(main, ["pool", str(tmp_path), "--out", str(tmp_path / "p.tsv")])
    assert done.exit_code == 2
    assert "not a results folder" in done.output and "Traceback" not in done.output


@pytest.mark.parametrize("system", ["bm25", "lsa(dims=50)"])
def test_condensed_lists_equal_trec_eval_on_the_runs_without_their_unjudged_documents(cranfield_folder, system):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    judged = _read_qrels_file(cranfield_folder / "qrels.txt")
    import json
    systems = json.loads((cranfield_folder / "manifest.json").read_text())["systems"]
    run_file = cranfield_folder / next(s["run_file"] for s in systems if s["label"] == system)
    ours = evaluate(Run.read(run_file, order="trec9"), judged, ["ndcg@10", "map", "P_5", "mrr", "judged@10"],
                    run_queries_only=True, unjudged="condensed")
    raw = {q: {d: s for d, s in pairs} for q, pairs in _read_run_file(run_file).items()}
    filtered = {q: {d: s for d, s in docs.items() if d in judged.get(q, {})} for q, docs in raw.items()}
    filtered = {q: docs for q, docs in filtered.items() if docs}
    measures = {"ndcg_cut.10", "map", "P.5", "recip_rank"}
    reference = pytrec_eval.RelevanceEvaluator(judged, measures).evaluate(filtered)
    shown = 0
    for query, values in reference.items():
        assert ours.loc[query, "ndcg@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)
        assert ours.loc[query, "map"] == pytest.approx(values["map"], abs=1e-12)
        assert ours.loc[query, "P_5"] == pytest.approx(values["P_5"], abs=1e-12)
        assert ours.loc[query, "mrr"] == pytest.approx(values["recip_rank"], abs=1e-12)
        shown += 1
    assert shown > 100
    # trec_eval's reading differs on the same run (the holes count as non-relevant there) ...
    plain = evaluate(Run.read(run_file, order="trec9"), judged, ["P_5", "judged@10"], run_queries_only=True)
    assert (plain["P_5"] < ours["P_5"]).any()
    # ... and judged@k reads the ranking as returned under both
    assert plain["judged@10"].tolist() == ours["judged@10"].tolist()
    assert (ours["judged@10"] < 1).any()


def test_condense_keeps_negative_grades_and_empty_queries():
    run = Run.from_mapping({"q1": [("x", 3.0), ("a", 2.0), ("n", 1.0)], "q2": [], "q3": [("y", 1.0)]})
    kept = condense(run, {"q1": {"a": 1, "n": -1}, "q3": {"z": 1}})
    assert [kept.ranking(q) for q in ("q1", "q2", "q3")] == [["a", "n"], [], []]


def test_compare_and_evaluate_say_which_reading_they_used(cranfield_folder, tmp_path, runner):
    import json
    manifest = json.loads((cranfield_folder / "manifest.json").read_text())
    assert manifest["conventions"]["unjudged"]["reading"] == "nonrelevant"
    done = runner.invoke(main, ["evaluate", "--qrels", str(cranfield_folder / "qrels.txt"),
                                str(next((cranfield_folder / "runs").glob("bm25*.trec"))), "--metrics", "P_5",
                                "--unjudged", "condensed", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert '"unjudged": "condensed"' in done.output
    bad = runner.invoke(main, ["evaluate", "--qrels", str(cranfield_folder / "qrels.txt"),
                               str(next((cranfield_folder / "runs").glob("bm25*.trec"))), "--metrics", "P_5",
                               "--unjudged", "ignored"])
    assert bad.exit_code == 2


def test_compare_condensed_writes_its_reading_and_a_rescore_command_that_reproduces_it(tmp_path, runner):
    out = tmp_path / "out"
    done = runner.invoke(main, ["compare", "--systems", "bm25,lsa", "--metrics", "P_5,judged@5", "--unjudged",
                                "condensed", "--bootstrap-samples", "20", "--permutations", "20", "--no-cache",
                                "--out", str(out), "-q"])
    assert done.exit_code == 0, done.output
    assert "unjudged documents (condensed)" in done.output
    import json
    folder = next(out.iterdir())
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["conventions"]["unjudged"]["reading"] == "condensed"
    assert "--unjudged condensed" in manifest["rescore"]["command"]
    per_query = list(csv.DictReader((folder / "per_query.csv").open()))
    judged = _read_qrels_file(folder / "qrels.txt")
    for row in per_query:
        if row["system"] != "bm25":
            continue
        ranking = [d for d, _ in _read_run_file(folder / "runs" / "bm25.trec").get(row["query_id"], [])]
        kept = [d for d in ranking if d in judged[row["query_id"]]][:5]
        assert float(row["P_5"]) == pytest.approx(sum(judged[row["query_id"]][d] >= 1 for d in kept) / 5)
        assert float(row["judged@5"]) == pytest.approx(sum(d in judged[row["query_id"]] for d in ranking[:5]) / 5)
