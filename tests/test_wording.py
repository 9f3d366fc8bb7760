"""A count of one reads "1 query", never "1 queries" (:func:`corpora.wording.counted`, the one helper
every message counts with), through the commands a user runs on a one-query collection."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora.bundled import bundled_path
from corpora.wording import counted
from harness.cli import main

#: a plural noun after the count 1 ("1 queries", "1 paired queries", "1 more queries")
ONE_PLURAL = re.compile(r"(?<![\d.,])1 (?:[a-z]+ )?(?:queries|systems|documents|judgments|pairs|collections|files|"
                        r"lines|holes|rows|folds|comparisons|terms)\b")


@pytest.mark.parametrize(("n", "noun", "plural", "expected"), [
    (1, "query", None, "1 query"), (0, "query", None, "0 queries"), (14, "query", None, "14 queries"),
    (1, "system", None, "1 system"), (2, "day", None, "2 days"), (1, "query is", "queries are", "1 query is"),
    (3, "query is", "queries are", "3 queries are"), (1_837, "judgment", None, "1837 judgments"),
])
def test_counted_is_singular_for_one_only(n: int, noun: str, plural: str | None, expected: str) -> None:
    assert counted(n, noun, plural) == expected


def test_counted_formats_the_number_as_asked() -> None:
    assert counted(1_837, "judgment", spec=",") == "1,837 judgments"
    assert counted(1, "judgment", spec=",") == "1 judgment"


@pytest.fixture(scope="module")
def one_query(tmp_path_factory) -> Path:
    """The bundled article corpus cut to its first query (q01) and that query's judgments."""
    article = Path(bundled_path("article"))
    folder = tmp_path_factory.mktemp("one-query")
    (folder / "qrels").mkdir()
    (folder / "corpus.jsonl").write_bytes((article / "corpus.jsonl").read_bytes())
    first = (article / "queries.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first)["_id"] == "q01"
    (folder / "queries.jsonl").write_text(first + "\n", encoding="utf-8")
    header, *rows = (article / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    (folder / "qrels" / "test.tsv").write_text("\n".join([header, *(r for r in rows if r.startswith("q01\t"))]) + "\n",
                                               encoding="utf-8")
    return folder


def bench(*arguments: str) -> str:
    result = CliRunner().invoke(main, list(arguments))
    assert result.exit_code == 0, result.output
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def one_query_results(one_query: Path, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("one-query-results")
    printed = bench("compare", "--corpus", str(one_query), "--systems", "bm25,lsa", "--metrics", "ndcg@5,mrr",
                    "--bootstrap-samples", "200", "--no-cache", "--out", str(out))
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder, printed


def assert_singular(printed: str) -> None:
    assert not ONE_PLURAL.findall(printed), printed


def test_a_one_query_collection_reads_1_query(one_query: Path, one_query_results: tuple[Path, str]) -> None:
    _, printed = one_query_results
    assert "28 documents, 1 query, 2 judgments" in printed and "1 query evaluated" in printed
    assert_singular(printed)
    shown = bench("corpora", "show", str(one_query))
    assert "2 over 1 query" in shown and "0 queries, excluded from averages" in shown
    assert_singular(shown)


def test_the_reports_of_a_one_query_folder_read_1_query(one_query_results: tuple[Path, str]) -> None:
    folder, _ = one_query_results
    for format in ("text", "md"):
        printed = bench("report", str(folder), "--format", format)
        assert "1 quer" in printed
        assert_singular(printed)


def test_evaluate_and_gate_on_one_query_read_1_query(one_query: Path, one_query_results: tuple[Path, str],
                                                      tmp_path: Path) -> None:
    folder, _ = one_query_results
    bm25 = folder / "runs" / "bm25.trec"
    lsa = folder / "runs" / "lsa.trec"
    # the run of q01 alone against the whole article's judgments: 13 judged queries missing
    article_qrels = Path(bundled_path("article")) / "qrels" / "test.tsv"
    evaluated = bench("evaluate", "--qrels", str(article_qrels), "--metrics", "ndcg@5", str(bm25))
    assert "13 queries are missing from the run" in evaluated
    # one judged query missing from a run: "1 query is missing"
    two = tmp_path / "two.tsv"
    two.write_text("query-id\tcorpus-id\tscore\nq01\tpricing1\t2\nq02\tpricing1\t1\n", encoding="utf-8")
    missing = bench("evaluate", "--qrels", str(two), "--metrics", "ndcg@5", str(bm25))
    assert "1 query is missing from the run" in missing
    assert_singular(evaluated + missing)
    gated = bench("gate", "--qrels", str(one_query / "qrels" / "test.tsv"), "--metric", "ndcg@5", str(bm25), str(lsa))
    assert "; 1 paired query, margin" in gated
    assert_singular(gated)


def test_pool_on_one_query_reads_1_query(one_query_results: tuple[Path, str], tmp_path: Path) -> None:
    folder, _ = one_query_results
    printed = bench("pool", str(folder), "--depth", "5", "--out", str(tmp_path / "pool.txt"))
    assert re.search(r"\d+ unjudged pairs? in 1 query written to ", printed), printed
    assert_singular(printed)
