"""The metrics card's retrievalMetrics object, written by bench compare (issue 15): the card's worked
example, equality with the metric registry, stable result ids, the rollups and the --retrieval-k option."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from corpora import Corpus, Dataset, Qrels, Queries
from harness import compare
from harness.cli import main
from harness.readings.retrieval_metrics import (CARD_METRICS, FACETS_FILE, QUERY_FACETS_FILE, RESULTS_FILE, ROLLUP_FILE,
                                       result_id)
from harness.core.statistics import bootstrap_means, percentile_interval
from retrievers import FixedRun
from harness.core.options import Readings, Statistics

CARD_NAMES = list(CARD_METRICS)


def card_dataset() -> Dataset:
    """The card's worked example: qrels A=3, B=2, C=1, everything else 0; one query."""
    corpus = Corpus(["A", "B", "C", "X"], ["alpha", "beta", "gamma", "chi"])
    return Dataset("card", corpus, Queries(["q1"], ["which chunks"]), Qrels({"q1": {"A": 3, "B": 2, "C": 1}}),
                   "<memory>")


def read_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / RESULTS_FILE).read_text().splitlines()]


def test_the_cards_worked_example_gives_the_cards_numbers(tmp_path: Path) -> None:
    # ranking B, X, A, C at the card's k = 4
    result = compare({"fixed": FixedRun({"q1": ["B", "X", "A", "C"]})}, card_dataset(), ["ndcg_exp@4"],
                     readings=Readings(retrieval_k=4), statistics=Statistics(bootstrap_samples=50))
    row = result.retrieval_metrics.iloc[0]  # the card's per-query values, a table of the comparison
    assert round(row["ndcgAt10"], 3) == 0.738  # 6.931 / 9.393: the card's nDCG@4, also nDCG@10 (4 results)
    assert row["ndcgAt10"] == result.per_query["ndcg_exp@4"].iloc[0]
    assert (round(row["recallAtK"], 2), round(row["precisionAtK"], 2), row["hitAtK"], round(row["mrr"], 2)) == \
        (1.00, 0.75, 1, 1.00)
    folder = result.write(tmp_path)
    (line,) = read_lines(folder)
    assert line["retrievalMetrics"]["hitAtK"] == 1 and isinstance(line["retrievalMetrics"]["hitAtK"], int)
    assert line["retrievalMetrics"]["precisionAtK"] == 0.75 and line["retrievalMetrics"]["recallAtK"] == 1.0
    assert list(line) == ["resultId", "runId", "system", "queryId", "retrievalMetrics"]
    assert list(line["retrievalMetrics"]) == CARD_NAMES
    manifest = json.loads((folder / "manifest.json").read_text())
    assert line["runId"] == manifest["run_id"] == folder.name
    assert line["resultId"] == result_id(manifest["hashes"], "fixed", "q1")
    assert manifest["retrieval_metrics"]["default_retrieval_k"] == 4
    assert manifest["retrieval_metrics"]["metrics"] == {"recallAtK": "recall@4", "precisionAtK": "precision@4",
                                                         "ndcgAt10": "ndcg_exp@10", "mrr": "mrr", "hitAtK": "hit@4"}


def test_the_bundled_run_equals_the_registry_and_the_summary(runner, tmp_path: Path) -> None:
    metrics = "recall@10,precision@10,ndcg_exp@10,mrr,hit@10"
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--metrics", metrics, "--no-cache", "-q", "--out", str(out),
                                  "--bootstrap-samples", "300"])
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()
    per_query = pd.read_csv(folder / "per_query.csv", dtype={"query_id": str})
    lines = read_lines(folder)
    assert len(lines) == len(per_query) == 4 * 14
    for line, (_, row) in zip(lines, per_query.iterrows()):
        assert (line["system"], line["queryId"]) == (row["system"], row["query_id"])
        stored = line["retrievalMetrics"]
        for card, metric in zip(CARD_NAMES, metrics.split(",")):
            assert stored[card] == row[metric], (card, line["queryId"])  # same bits, through the registry
    summary = pd.read_csv(folder / "summary.csv").set_index("system")
    rollup = pd.read_csv(folder / ROLLUP_FILE).set_index("system")
    assert list(rollup.index) == ["bm25", "lsa", "weighted", "rrf"] and set(rollup["n_queries"]) == {14}
    for card, metric in zip(CARD_NAMES, metrics.split(",")):
        assert (rollup[card] == summary[metric]).all(), card
        assert (rollup[f"{card}_ci_low"] <= rollup[card]).all() and (rollup[card] <= rollup[f"{card}_ci_high"]).all()


def test_the_rollup_interval_is_the_paired_bootstrap_of_the_queries() -> None:
    dataset = card_dataset()
    corpus = dataset.corpus
    queries = Queries([f"q{i}" for i in range(8)], ["x"] * 8)
    qrels = Qrels({f"q{i}": {"A": 3, "C": 1} if i % 2 else {"B": 2} for i in range(8)})
    rankings = {f"q{i}": ["B", "X", "A", "C"][i % 4:] + ["B", "X", "A", "C"][:i % 4] for i in range(8)}
    result = compare({"fixed": FixedRun(rankings)}, Dataset("eight", corpus, queries, qrels, "<memory>"), ["mrr"],
                     readings=Readings(retrieval_k=2), statistics=Statistics(bootstrap_samples=400, seed=3))
    values = result.retrieval_metrics["recallAtK"].to_numpy()
    low, high = percentile_interval(bootstrap_means(values, 400, 3), 0.95)
    row = result.retrieval_metrics_summary.iloc[0]
    assert row["recallAtK"] == math.fsum(values.tolist()) / 8
    assert (row["recallAtK_ci_low"], row["recallAtK_ci_high"]) == pytest.approx((low[0], high[0]), abs=1e-12)
    assert row["recallAtK_ci_low"] < row["recallAtK_ci_high"]  # the queries differ: a real interval


def test_facet_rollups_and_each_querys_cell_are_stored(runner, tmp_path: Path) -> None:
    topics = tmp_path / "topics.csv"
    billing = {"q01", "q02", "q07", "q11", "q14"}
    topics.write_text("query_id,topic\n" + "".join(
        f"q{i:02d},{'billing' if f'q{i:02d}' in billing else 'other'}\n" for i in range(1, 15)))
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--systems", "bm25,lsa", "--metrics", "mrr", "--no-cache", "-q",
                                  "--out", str(out), "--facets-file", str(topics), "--bootstrap-samples", "200"])
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()
    cells = pd.read_csv(folder / QUERY_FACETS_FILE, dtype=str)
    assert list(cells.columns) == ["query_id", "facet", "value"] and len(cells) == 14
    assert set(cells.loc[cells["value"] == "billing", "query_id"]) == billing
    facets = pd.read_csv(folder / FACETS_FILE)
    lines = pd.DataFrame([{"system": x["system"], "query_id": x["queryId"], **x["retrievalMetrics"]}
                          for x in read_lines(folder)])
    for _, cell in facets.iterrows():
        members = lines[(lines["system"] == cell["system"]) &
                        lines["query_id"].isin(cells.loc[cells["value"] == cell["value"], "query_id"])]
        assert cell["n_queries"] == len(members)
        for card in CARD_NAMES:
            assert cell[card] == math.fsum(members[card].tolist()) / len(members)
            assert not np.isnan(cell[f"{card}_ci_low"])  # 5 and 9 queries: both get an interval


def test_retrieval_k_sets_the_cutoffs_and_a_bad_one_is_refused(runner, tmp_path: Path) -> None:
    out = tmp_path / "out"
    bad = runner.invoke(main, ["compare", "--systems", "bm25", "--retrieval-k", "0", "--out", str(out)])
    assert bad.exit_code == 2 and "--retrieval-k must be an int >= 1" in bad.output and "Fix:" in bad.output
    assert not out.exists()
    good = runner.invoke(main, ["compare", "--systems", "bm25", "--metrics", "recall@3,hit@3,precision@3",
                                "--retrieval-k", "3", "--no-cache", "-q", "--out", str(out)])
    assert good.exit_code == 0, good.output
    (folder,) = out.iterdir()
    per_query = pd.read_csv(folder / "per_query.csv", dtype={"query_id": str})
    lines = read_lines(folder)
    assert [x["retrievalMetrics"]["recallAtK"] for x in lines] == per_query["recall@3"].tolist()
    assert [x["retrievalMetrics"]["hitAtK"] for x in lines] == per_query["hit@3"].astype(int).tolist()
    assert [x["retrievalMetrics"]["precisionAtK"] for x in lines] == per_query["precision@3"].tolist()
    assert json.loads((folder / "manifest.json").read_text())["retrieval_metrics"]["default_retrieval_k"] == 3
