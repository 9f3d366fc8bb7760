"""One rule for where a results folder's path is printed: every command that writes one (``bench
compare``, a suite, ``bench tune``) prints ``results: PATH`` before its report (after the line on
the collection, where there is one) and again as its last line, so a user sees at once where the
results go and a script's ``tail -1`` finds them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora.bundled import bundled_path
from harness.cli import main


def bench(*arguments: str) -> list[str]:
    result = CliRunner().invoke(main, list(arguments))
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def the_folder(out: Path) -> Path:
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder


def test_compare_prints_the_path_after_the_collection_line_and_last(tmp_path: Path) -> None:
    lines = bench("compare", "--systems", "bm25,lsa", "--metrics", "ndcg@5", "--bootstrap-samples", "200",
                  "--no-cache", "--out", str(tmp_path))
    folder = the_folder(tmp_path)
    assert lines[0].startswith("article: 28 documents")
    assert lines[1] == lines[-1] == f"results: {folder}"


def test_tune_prints_the_path_after_the_collection_line_and_last(tmp_path: Path) -> None:
    lines = bench("tune", "bm25(k1=0.9|1.2)", "--metric", "ndcg@5", "--folds", "2", "--bootstrap-samples", "200",
                  "--no-cache", "--out", str(tmp_path))
    folder = the_folder(tmp_path)
    assert lines[0].startswith("article: 28 documents")
    assert lines[1] == lines[-1] == f"results: {folder}"


@pytest.fixture
def second_collection(tmp_path: Path) -> Path:
    """The article's documents with its first ten queries: a collection other than the article."""
    article = Path(bundled_path("article"))
    folder = tmp_path / "first-ten"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_bytes((article / "corpus.jsonl").read_bytes())
    queries = (article / "queries.jsonl").read_text(encoding="utf-8").splitlines()[:10]
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    ids = {json.loads(q)["_id"] for q in queries}
    header, *rows = (article / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    (folder / "qrels" / "test.tsv").write_text("\n".join([header, *(r for r in rows if r.split("\t")[0] in ids)]) + "\n",
                                               encoding="utf-8")
    return folder


def test_a_suite_prints_the_path_first_and_last_with_the_same_words(tmp_path: Path, second_collection: Path) -> None:
    out = tmp_path / "out"
    lines = bench("compare", "--corpus", "article", "--corpus", str(second_collection), "--systems", "bm25,lsa",
                  "--metrics", "ndcg@5", "--bootstrap-samples", "200", "--no-cache", "--out", str(out))
    folder = the_folder(out)
    assert lines[0].startswith(f"results: {folder} (report.txt there adds each collection's comparisons")
    assert lines[-1] == f"results: {folder}"
    assert not any(line.startswith("suite: ") for line in lines)
