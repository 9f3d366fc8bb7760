"""The text report is made from the results folder, like the other formats: ``bench report --format
text`` of a folder is its ``report.txt`` byte for byte, and ``result.report()`` is the same text made
from the folder ``write()`` would store, read in memory. A folder written before the manifest kept
what only the text report shows is a one-line error, not a report with a gap."""

from __future__ import annotations

import json
from pathlib import Path

from harness import compare
from harness.cli import main
from harness.core.options import Loading, Statistics
from harness.report.view import _shared_words

QUERIES = {
    "q1": "how many days to get\nmy money back",  # a line break, as Cranfield's queries have
    "q2": "export notebooks as markdown files with every attachment they hold",  # longer than the rank table's column
    "q3": "reset a forgotten password",
}
POLICY = ("Refunds. You can get your money back within 30 days of a payment: write to support with the invoice "
          "number, and the refund reaches your account within five working days. Annual plans are refunded pro "
          "rata for the months not yet used; monthly plans for the current month only.")
DOCUMENTS = {
    "refund-2024": POLICY,
    "refund-2025": POLICY.replace("within 30 days", "within 14 days"),  # a near-duplicate of the one above
    "export": "Export your notes. Open the settings page, choose export, and download every notebook as a zip "
              "file of markdown documents with their attachments.",
    "password": "Reset a forgotten password from the sign-in page; a link is sent to your e-mail address.",
    "billing": "Invoices are in the billing page; each payment has one.",
}


def _corpus(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n"
                                                 for d, t in DOCUMENTS.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    (folder / "qrels" / "test.tsv").write_text("q1\trefund-2025\t2\nq1\tbilling\t1\nq2\texport\t1\n"
                                               "q3\tbilling\t2\n")
    (folder / "facets.csv").write_text("query_id,kind,length\nq1,money,8\nq2,notes,11\nq3,account,4\n")
    return folder


def test_bench_report_text_of_a_folder_is_its_report_txt(runner, tmp_path) -> None:
    corpus = _corpus(tmp_path / "c")
    systems = "bm25,bm25(k1=0.9,b=0.4)"
    result = runner.invoke(main, ["compare", "--corpus", str(corpus), "--systems", systems, "--metrics",
                                  "mrr,ndcg@3", "--facets-file", str(corpus / "facets.csv"), "--bootstrap-samples",
                                  "50", "--no-cache", "-q", "--full", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "out").iterdir()
    stored = (folder / "report.txt").read_text(encoding="utf-8")
    # every section the folder must give back is there: the duplicates, the failures, the facets, the texts
    for part in ("near-duplicates: refund-2024 (rank 1) ~ refund-2025 (rank 2)", "[duplicate versions]",
                 "facet kind:", "facet length:", "'how many days to get my money back'", "export notebooks as "
                 "markdown files wi…", "billing (grade 1): words in common ="):
        assert part in stored, part
    again = runner.invoke(main, ["report", str(folder), "--format", "text"])
    assert again.exit_code == 0, again.output
    assert again.stdout == stored
    library = compare(["bm25", "bm25(k1=0.9,b=0.4)"], str(corpus), ["mrr", "ndcg@3"],
                      statistics=Statistics(bootstrap_samples=50), loading=Loading(facets_file=str(corpus / "facets.csv")))
    assert library.report() + "\n" == stored


def test_a_folder_without_the_text_reports_entries_is_one_line_exit_2(runner, tmp_path) -> None:
    corpus = _corpus(tmp_path / "c")
    assert runner.invoke(main, ["compare", "--corpus", str(corpus), "--systems", "bm25", "--metrics", "mrr",
                                "--bootstrap-samples", "50", "--no-cache", "-q", "--out", str(tmp_path / "out"),
                                "--report", "text"]).exit_code == 0
    (folder,) = (tmp_path / "out").iterdir()
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["corpus"]["query_texts"]  # as a folder written before the manifest kept them
    (folder / "manifest.json").write_text(json.dumps(manifest))
    refused = runner.invoke(main, ["report", str(folder), "--format", "text"])
    assert refused.exit_code == 2
    assert refused.stderr.count("\n") == 1 and "records no corpus 'query_texts'" in refused.stderr
    assert "Fix: read the report.txt it was written with" in refused.stderr


def test_shared_words_read_back_as_the_diagnosis_wrote_them() -> None:
    judged = {"d1": 2, "d2": 1, "d3": 0}
    assert _shared_words("d1: money back; d2: -", judged) == {"d1": ["money", "back"], "d2": []}
    # a word ending in ";" is told from the separator by the judged ids: "b" is no document of the query
    assert _shared_words("d1: a; b; d2: c", judged) == {"d1": ["a;", "b"], "d2": ["c"]}
    assert _shared_words("", judged) == {}
    assert _shared_words("d9: a", judged) is None  # not a judged document: the report refuses the file
