"""The results reader's tables: every CSV file of a results folder reads back with its numbers to
the bit, its ids as text, and a damaged file named with its line (one reader, for report, gate and
serve)."""

from __future__ import annotations

import math
import shutil

import pandas as pd
import pytest

from corpora import Corpus, Dataset, InputFileError, Qrels, Queries, UnknownNameError
from harness import compare
from harness.store.read import TABLES, open_results
from retrievers import BM25, FixedRun
from harness.core.options import Statistics

DOCS = Corpus(["d1", "d2", "d3", "d4"], ["apple pie recipe", "apple tart", "blue sky", "sky and apple"])
QUERIES = Queries(["007", "q2", "q3"], ["apple pie", "sky", "zebra"])  # bm25 finds nothing for q3
QRELS = Qrels({"007": {"d1": 2, "d2": 1}, "q2": {"d3": 1}, "q3": {"d2": 1}})


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    dataset = Dataset("tiny", DOCS, QUERIES, QRELS, "<memory>")
    result = compare({"NA": BM25(), "nan": FixedRun({"007": ["d2", "d1"], "q2": ["d4"], "q3": ["d1"]})}, dataset,
                     ["ndcg@3", "mrr"], statistics=Statistics(bootstrap_samples=200))
    return result, open_results(result.write(tmp_path_factory.mktemp("tiny"), command_line=["test"]))


def test_every_table_reads_back_its_numbers_to_the_bit(stored) -> None:
    result, folder = stored
    pd.testing.assert_frame_equal(folder.summary, result.summary, check_dtype=False)
    assert folder.summary["system"].tolist() == ["NA", "nan"]  # names that pandas would read as missing
    pd.testing.assert_frame_equal(folder.leaderboard, result.leaderboard, check_dtype=False)
    pd.testing.assert_frame_equal(folder.risk_coverage_summary, result.risk_coverage_summary, check_dtype=False)
    pd.testing.assert_frame_equal(folder.risk_coverage, result.risk_coverage, check_dtype=False)
    stored_comparisons = folder.comparisons.to_dict("records")
    for row, comparison in zip(stored_comparisons, result.comparisons, strict=True):
        for column in ("mean_diff", "ci_low", "ci_high", "p_value", "p_adjusted"):
            assert row[column] == getattr(comparison, column)  # the same double, not a rounding of it
        assert row["verdict"] == comparison.verdict and row["n_differing"] == comparison.n_differing
    values = folder.per_query_values
    assert values["query_id"].tolist()[:3] == ["007", "q2", "q3"]  # ids stay ids
    assert values["ndcg@3"].tolist() == result.per_query["ndcg@3"].tolist()
    assert str(values["first_relevant_rank"].dtype) == "Int64"
    assert set(TABLES) == {"summary", "comparisons", "leaderboard", "facets", "risk_coverage",
                           "risk_coverage_summary", "diagnosis", "duplicates", "retrieval_metrics_summary",
                           "retrieval_metrics_facets", "query_facets", "efficiency", "latency_comparisons"}
    rollup = folder.table("retrieval_metrics_summary")
    assert rollup["n_queries"].tolist() == [3, 3] and str(rollup["n_queries"].dtype) == "Int64"
    for name in TABLES:  # each reads, even when it holds only its header (facets, duplicates)
        assert list(folder.table(name).columns)
    assert folder.metric_names == ["ndcg@3", "mrr"]


def test_empty_cells_read_as_missing_numbers(stored) -> None:
    _, folder = stored
    queries_needed = folder.comparisons["queries_needed"]
    assert str(queries_needed.dtype) == "Int64"
    diagnosis = folder.diagnosis
    assert str(diagnosis["rank"].dtype) == "Int64"
    assert diagnosis.loc[(diagnosis["system"] == "NA") & (diagnosis["query_id"] == "q3"), "rank"].isna().all()
    thresholds = folder.risk_coverage["threshold"]
    assert (thresholds == -math.inf).any()  # written "-inf": a query with no result


def test_a_damaged_table_is_an_error_naming_its_file_line_and_column(stored, tmp_path) -> None:
    _, folder = stored
    copy = tmp_path / "copy"
    shutil.copytree(folder.path, copy)
    text = (copy / "comparisons.csv").read_text().splitlines()
    cells = text[1].split(",")
    cells[8] = "many"  # n_queries
    (copy / "comparisons.csv").write_text("\n".join([text[0], ",".join(cells), *text[2:]]) + "\n")
    # edited on purpose: the parser's errors are what is tested, past the hash check
    edited = {"accept_edited": True, "say": lambda message: None}
    with pytest.raises(InputFileError, match=r"comparisons.csv:2: column 'n_queries': 'many' is not an integer"):
        open_results(copy, **edited).comparisons
    (copy / "leaderboard.csv").write_text("metric,system\nmrr,NA\n")
    with pytest.raises(InputFileError, match=r"leaderboard.csv: has no 'group' column"):
        open_results(copy, **edited).leaderboard
    (copy / "facets.csv").unlink()
    with pytest.raises(InputFileError, match=r"facets.csv: file not found"):
        open_results(copy).facets
    with pytest.raises(UnknownNameError, match="unknown results table 'runs'"):
        open_results(copy).table("runs")
