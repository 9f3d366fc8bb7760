"""What `bench compare` prints, and the whole of it in report.txt."""

from __future__ import annotations

import re
from pathlib import Path

from harness.cli import main
from harness.core.diagnosis import Failure
from harness.report.text import SHOWN_DOCUMENTS, failure_lines

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
    assert result.stdout == (folder / "report.txt").read_text(encoding="utf-8") + f"\nresults: {folder}\n"


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
    diagnosis = result.stdout.split("diagnosis (first relevant document missing or below rank 3, or near-duplicate "
                                    "documents in the top 3):\n")[1]
    # three systems: a heading, at most 10 failures of at most 1 + 1 (near-duplicates) + 3 + 1 lines each, and a count
    assert len(diagnosis.splitlines()) <= 3 * (1 + 10 * 6 + 1) + 2
    folder = only_folder(tmp_path / "out")
    report = (folder / "report.txt").read_text(encoding="utf-8")
    failed = sum(1 for _ in (folder / "diagnosis.csv").open(encoding="utf-8")) - 1
    assert failed > 3 * 10  # more than the printed diagnosis shows
    # the whole diagnosis is kept: one line per failed query of diagnosis.csv
    assert len(re.findall(r"^  \S+ ['\"].* -> .*  \[[a-z ]+\]$", report, re.M)) == failed
