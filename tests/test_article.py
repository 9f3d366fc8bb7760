"""The article's numbers, end to end through `bench compare` (seed 000)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from harness.cli import main

ARTICLE_MEANS = {  # system: hit@3, recall@5, mrr, ndcg@5 as the article prints them
    "bm25": ("0.86", "0.67", "0.82", "0.691"),
    "lsa": ("0.86", "0.68", "0.83", "0.679"),
    "weighted": ("0.86", "0.74", "0.86", "0.734"),
    "rrf": ("0.86", "0.74", "0.86", "0.737"),
}
# rank of the first relevant document; None = not found
ARTICLE_RANKS = {
    "bm25": [1, None, 1, 1, 1, 1, 1, 1, 1, None, 1, 2, 1, 1],
    "lsa": [2, None, 1, 1, 1, 1, 1, 1, 1, 13, 1, 1, 1, 1],
    "weighted": [1, None, 1, 1, 1, 1, 1, 1, 1, None, 1, 1, 1, 1],
    "rrf": [1, None, 1, 1, 1, 1, 1, 1, 1, None, 1, 1, 1, 1],
}


@pytest.fixture(scope="module")
def article_run(tmp_path_factory) -> tuple[str, Path]:
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("results")
    result = CliRunner().invoke(main, ["compare", "--systems", "bm25,lsa,weighted,rrf",
                                       "--metrics", "hit@3,recall@5,mrr,ndcg@5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 1
    return result.output, folders[0]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_table_of_means_matches_the_article(article_run):
    _, folder = article_run
    rows = {r["system"]: r for r in _rows(folder / "summary.csv")}
    assert list(rows) == list(ARTICLE_MEANS)
    for system, expected in ARTICLE_MEANS.items():
        row = rows[system]
        got = (f"{float(row['hit@3']):.2f}", f"{float(row['recall@5']):.2f}", f"{float(row['mrr']):.2f}",
               f"{float(row['ndcg@5']):.3f}")
        assert got == expected, system


def test_rank_table_matches_the_article(article_run):
    _, folder = article_run
    rows = _rows(folder / "per_query.csv")
    for system, expected in ARTICLE_RANKS.items():
        got = [int(r["first_relevant_rank"]) if r["first_relevant_rank"] else None
               for r in rows if r["system"] == system]
        assert got == expected, system


def test_bootstrap_line_matches_the_article(article_run):
    output, folder = article_run
    row = next(r for r in _rows(folder / "comparisons.csv")
               if (r["system_a"], r["system_b"], r["metric"]) == ("bm25", "lsa", "ndcg@5"))
    assert f"{float(row['mean_diff']):+.3f}" == "+0.012"
    assert f"{float(row['ci_low']):+.3f}" == "-0.081"
    assert f"{float(row['ci_high']):+.3f}" == "+0.107"
    assert row["n_queries"] == "14"
    assert "+0.012" in output and "[-0.081, +0.107]" in output


def test_diagnosis_matches_the_article(article_run):
    output, folder = article_run
    rows = {(r["system"], r["query_id"]): r for r in _rows(folder / "diagnosis.csv")}
    assert rows[("bm25", "q02")]["category"] == "vocabulary gap"
    assert rows[("bm25", "q02")]["first_result"] == ""
    assert rows[("bm25", "q10")]["category"] == "surface homonymy"
    assert rows[("bm25", "q10")]["first_result"] == "export1"
    assert rows[("bm25", "q10")]["shared_words"] == "backup3: -; backup2: -"
    assert rows[("lsa", "q10")]["category"] == "late rank"
    assert rows[("lsa", "q10")]["rank"] == "13"
    assert {q for s, q in rows if s == "bm25"} == {"q02", "q10"}
    assert "q10 'I want my data from yesterday back' -> not found, first result: export1  [surface homonymy]" in output


def test_printed_tables_hold_the_readings(article_run):
    output, folder = article_run
    assert "bm25      0.857     0.667  0.821   0.691" in output
    assert f"results: {folder}" in output


def test_first_results_of_the_article_listing():
    """corpus_rag.py's own output: the top 3 of q01 and the empty rankings of q02."""
    from corpora import load_dataset
    from retrievers import build

    dataset = load_dataset("article")
    queries = dataset.queries.subset({"q01", "q02"})
    bm25 = build("bm25").fit(dataset.corpus).search(queries, 3)
    lsa = build("lsa").fit(dataset.corpus).search(queries, 3)
    assert bm25.ranking("q01") == ["pricing1", "sso1", "pricing2"]
    assert lsa.ranking("q01") == ["sso1", "pricing1", "pricing2"]
    assert bm25.ranking("q02") == [] and lsa.ranking("q02") == []
    from sklearn.feature_extraction.text import CountVectorizer
    from corpora import get_analyzer

    vocabulary = CountVectorizer(analyzer=get_analyzer("article")).fit(dataset.corpus.texts).vocabulary_
    assert len(vocabulary) == 177
