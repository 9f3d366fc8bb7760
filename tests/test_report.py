"""What `bench compare` prints, and the whole of it in report.txt."""

from __future__ import annotations

import re
from pathlib import Path

from harness.cli import main
from harness.core.diagnosis import Failure
from tests.conftest import without_cost
from harness.report.text import (ABRIDGED_FAILURES, ABRIDGED_QUERIES, SHOWN_DOCUMENTS, TERMINAL_QUERIES, failure_lines,
                            terminal_cut)

FAST = ["--bootstrap-samples", "200"]


def only_folder(out: Path) -> Path:
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder


def test_the_terminal_gets_at_most_n_failed_queries_per_system_and_a_count(runner, tmp_path) -> None:
    result = runner.invoke(main, ["compare", "--systems", "bm25,lsa", "--fail-rank", "1", "--show-failures", "1",
                                  "--out", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 0, result.output
    diagnosis = result.stdout.split("diagnosis (first relevant document missing or below rank 1, or near-duplicate "
                                    "documents in the top 1):\n")[1]
    lines = diagnosis.splitlines()
    assert lines[0] == " bm25: 3 failed queries, 0 with duplicate versions in the top 1"
    assert lines[1].startswith("  q02 'can I get my money back' -> not found")
    assert "  … and 2 more in report.txt and diagnosis.csv" in lines
    assert lines.count("  … and 2 more in report.txt and diagnosis.csv") == 2  # bm25 and lsa, 3 each
    folder = only_folder(tmp_path / "out")
    report = (folder / "report.txt").read_text(encoding="utf-8").split("diagnosis (first relevant")[1]
    diagnosed = [row.split(",")[:2] for row in (folder / "diagnosis.csv").read_text().splitlines()[1:]]
    assert len(diagnosed) == 6
    parts = re.split(r"\n (\S+): \d+ failed quer(?:y|ies), \d+ with duplicate versions in the top 1", report)
    section = dict(zip(parts[1::2], parts[2::2]))
    for system, query in diagnosed:  # every failure, under its system
        assert f"\n  {query} '" in section[system]
    assert "more in report.txt" not in report


def test_report_txt_is_what_was_printed_when_nothing_was_cut(runner, tmp_path) -> None:
    result = runner.invoke(main, ["compare", "--out", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 0, result.output
    folder = only_folder(tmp_path / "out")
    assert printed_less_cost(result.stdout) == whole_report_printed(folder)


def whole_report_printed(folder: Path) -> str:
    """What `bench compare` prints when it cuts nothing: report.txt with the results line second
    (the corpus's line comes first, while the systems fit) and last."""
    heading, rest = (folder / "report.txt").read_text(encoding="utf-8").split("\n", 1)
    return f"{heading}\nresults: {folder}\n{rest}\nresults: {folder}\n"


def printed_less_cost(printed: str) -> str:
    """What `bench compare` printed, less the cost table it prints last (report.txt leaves it out: its times)."""
    assert "\n\ncost on this machine (" in printed
    return without_cost(printed)


def write_corpus(folder: Path, queries: int) -> Path:
    """A BEIR folder: ``queries`` queries, each with two documents of its own, each sharing one of
    its two words; the relevant one has it once, the other thrice, so BM25 ranks it second."""
    (folder / "qrels").mkdir(parents=True)
    documents, topics, judgments = [], [], ["query-id\tcorpus-id\tscore"]
    for i in range(queries):
        documents.append(f'{{"_id": "d{i}a", "text": "alpha{i} common"}}')
        documents.append(f'{{"_id": "d{i}b", "text": "beta{i} beta{i} beta{i}"}}')
        topics.append(f'{{"_id": "q{i:02d}", "text": "beta{i} alpha{i}"}}')
        judgments.append(f"q{i:02d}\td{i}a\t1")
    (folder / "corpus.jsonl").write_text("\n".join(documents) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(topics) + "\n", encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("\n".join(judgments) + "\n", encoding="utf-8")
    return folder


def test_beyond_a_few_dozen_queries_the_terminal_abridges_and_full_prints_it_whole(runner, tmp_path) -> None:
    n = TERMINAL_QUERIES + 5
    corpus = write_corpus(tmp_path / "corpus", n)
    options = ["compare", "--corpus", str(corpus), "--systems", "bm25,lsa", "--metrics", "mrr", "--fail-rank", "1",
               "--no-cache", *FAST]
    result = runner.invoke(main, [*options, "--out", str(tmp_path / "short")])
    assert result.exit_code == 0, result.output
    folder = only_folder(tmp_path / "short")
    lines = result.stdout.splitlines()
    assert lines[1] == f"results: {folder} (report.txt there holds the whole report; --full prints it here)"
    table = result.stdout.split("rank of the first relevant document (-- = not found):\n")[1].split("\n\n")[0]
    rows = table.splitlines()[1:]  # under the header
    assert [row.split()[0] for row in rows[:-1]] == [f"q{i:02d}" for i in range(ABRIDGED_QUERIES)]
    assert rows[-1] == f"  … and {n - ABRIDGED_QUERIES} more queries in report.txt and per_query.csv"
    per_query = (folder / "per_query.csv").read_text(encoding="utf-8").splitlines()
    assert len(per_query) == 1 + 2 * n  # the file holds every query of both systems
    diagnosis = result.stdout.split("near-duplicate documents in the top 1):\n")[1]
    failed = re.findall(r"^ (\w+): (\d+) failed quer", diagnosis, re.MULTILINE)
    assert [system for system, _ in failed] == ["bm25", "lsa"]
    for system, count in failed:  # each system's list is cut to the abridged count, the rest counted
        assert int(count) > ABRIDGED_FAILURES
        assert f"  … and {int(count) - ABRIDGED_FAILURES} more in report.txt and diagnosis.csv" in diagnosis
    assert len(re.findall(r"^  q\d+ '", diagnosis, re.MULTILINE)) == 2 * ABRIDGED_FAILURES

    whole = runner.invoke(main, [*options, "--full", "--out", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output
    assert printed_less_cost(whole.stdout) == whole_report_printed(only_folder(tmp_path / "whole"))
    assert "more queries in" not in whole.stdout and "more in report.txt" not in whole.stdout
    assert all(f"\n  q{i:02d} " in whole.stdout for i in range(n))


def test_the_terminal_cut_grows_with_the_collection() -> None:
    assert terminal_cut(14) == (None, 10)  # the article: every query, as before
    assert terminal_cut(TERMINAL_QUERIES) == (None, 10)
    assert terminal_cut(TERMINAL_QUERIES + 1) == (ABRIDGED_QUERIES, ABRIDGED_FAILURES)
    assert ABRIDGED_QUERIES < TERMINAL_QUERIES


def test_show_failures_zero_prints_only_the_counts(runner, tmp_path) -> None:
    result = runner.invoke(main, ["compare", "--systems", "bm25", "--show-failures", "0", "--out",
                                  str(tmp_path / "out"), *FAST])
    assert result.exit_code == 0, result.output
    tail = result.stdout.split("diagnosis (first relevant document missing or below rank 3, or near-duplicate "
                               "documents in the top 3):\n")[1].splitlines()
    assert tail[:2] == [" bm25: 2 failed queries, 0 with duplicate versions in the top 3",
                        "  … and 2 more in report.txt and diagnosis.csv"]


def test_a_failed_query_with_many_relevant_documents_lists_a_few_and_counts_the_rest() -> None:
    relevant = {f"d{i}": ["word"] if i % 2 else [] for i in range(40)}
    failure = Failure("bm25", "q1", "a word", "late rank", 12, "x", relevant, {d: 1 for d in relevant})
    abridged = failure_lines(failure, SHOWN_DOCUMENTS)
    assert abridged[1:] == ["      d0 (grade 1): words in common = none",
                            "      d1 (grade 1): words in common = word",
                            "      d2 (grade 1): words in common = none",
                            "      … and 37 more relevant documents"]
    assert len(failure_lines(failure)) == 41  # the whole diagnosis (report.txt)


def test_a_large_collection_prints_a_bounded_diagnosis(runner, tmp_path, shared_data) -> None:
    result = runner.invoke(main, ["compare", "--corpus", str(shared_data / "cisi"), "--systems", "bm25,lsa,rrf",
                                  "--no-cache", "--bootstrap-samples", "100", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    diagnosis = without_cost(result.stdout).split("diagnosis (first relevant document missing or below rank 3, or "
                                                  "near-duplicate documents in the top 3):\n")[1]
    # three systems: a heading, at most ABRIDGED_FAILURES failures of at most 1 + 1 (near-duplicates) + 3 + 1 lines each, and a count
    assert len(diagnosis.splitlines()) <= 3 * (1 + ABRIDGED_FAILURES * 6 + 1) + 2
    folder = only_folder(tmp_path / "out")
    report = (folder / "report.txt").read_text(encoding="utf-8")
    failed = sum(1 for _ in (folder / "diagnosis.csv").open(encoding="utf-8")) - 1
    assert failed > 3 * ABRIDGED_FAILURES  # more than the printed diagnosis shows
    # the whole diagnosis is kept: one line per failed query of diagnosis.csv
    assert len(re.findall(r"^  \S+ ['\"].* -> .*  \[[a-z ]+\]$", report, re.M)) == failed
