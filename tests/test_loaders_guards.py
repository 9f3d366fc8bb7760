"""Input the loaders used to misread or lose, refused at load with file:line and a fix (issue 11).

* ids that cannot be written to a TREC run or qrels file (whitespace, control characters, empty, a
  query id starting with ``#``), in every loader;
* a CSV quote that is never closed (it used to swallow every following row);
* judgments of unknown ids: more than 5% of them, or a query losing every relevant judgment, stop
  loading unless ``--allow-unmatched-judgments``; fewer are skipped with a warning naming them;
* grades outside the 64-bit range (an ``OverflowError`` later, while ``validate`` said "valid"), and
  non-integral CSFCube grades (``int(1.5)`` read 1).

Each folder is written into ``tmp_path``; the CLI cases go through ``bench`` with ``CliRunner``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import InputFileError, load_dataset
from harness import compare
from harness.cli import main
from harness.core.options import Loading


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def bench(*args: str):
    return CliRunner().invoke(main, list(args))


def refused(folder: Path, *options: str) -> str:
    """``bench corpora validate`` on ``folder``: exit 2, one error line without a traceback; its text."""
    result = bench("corpora", "validate", *options, str(folder))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith("error: ") and "Fix: " in result.stderr
    return result.stderr


CSV = {
    "corpus.csv": "id,text\nd1,refunds take a week\nd2,passwords are reset by mail\n",
    "queries.csv": "id,text\nq1,refund\nq2,password\n",
    "qrels.tsv": "q1\td1\t1\nq2\td2\t1\n",
}
BEIR = {
    "corpus.jsonl": '{"_id": "D1", "text": "refunds"}\n{"_id": "D2", "text": "passwords"}\n',
    "queries.jsonl": '{"_id": "Q1", "text": "refund"}\n{"_id": "Q2", "text": "password"}\n',
    "qrels/test.tsv": "query-id\tcorpus-id\tscore\nQ1\tD1\t1\nQ2\tD2\t1\n",
}
TREC = {
    "docs.sgml": "<DOC>\n<DOCNO>FT-1</DOCNO>\nrefunds\n</DOC>\n<DOC>\n<DOCNO>FT-2</DOCNO>\npasswords\n</DOC>\n",
    "topics.txt": "<top>\n<num> Number: 1\n<title> refund\n</top>\n<top>\n<num> Number: 2\n<title> password\n</top>\n",
    "qrels.txt": "1 0 FT-1 1\n2 0 FT-2 1\n",
}
SMART = {
    "TOY.ALL": ".I 1\n.W\nrefunds\n.I 2\n.W\npasswords\n",
    "TOY.QRY": ".I 1\n.W\nrefund\n.I 2\n.W\npassword\n",
    "TOY.REL": "1 1 0 0.000000\n2 2 0 0.000000\n",
}
CYSTIC_FIBROSIS = {
    "cf74": "PN 74001\nRN 00001\nTI Refunds.\nAB Refunds take a week.\nPN 74002\nRN 00002\nTI Passwords.\n"
            "AB Reset by mail.\n",
    "cfquery": "QN 00001\nQU Refund?\nNR 00001\nRD 1 2222\nQN 00002\nQU Password?\nNR 00001\nRD 2 1000\n",
}


def csfcube(table: str, grades: list[object] | None = None) -> dict[str, str]:
    """A two-paper CSFCube folder: query paper 100 (background facet) judged against paper 7."""
    annotations = {"100": {"cands": ["7"], "relevance_adju": grades if grades is not None else [2]}}
    return {
        "queries-release.csv": table,
        "test-pid2anns-csfcube-background.json": json.dumps(annotations),
        "readable_annotations/100-background-adju.txt":
            "=====\npaper_id: 100; YEAR: 2020\nTITLE: Query paper\nABSTRACT: background_label: About refunds.\n"
            "=====\npaper_id: 7; YEAR: 2019\nTITLE: Candidate\nABSTRACT: method_label: Refunds in a week.\n",
    }


CSFCUBE_TABLE = "pid,facet,year,title,paper type\n100,background,2020,Query paper,method\n"


def test_every_fixture_loads_as_written(tmp_path: Path) -> None:
    # the baselines the refusals below change one thing of
    for name, files in (("csv", CSV), ("beir", BEIR), ("trec", TREC), ("smart", SMART),
                        ("cf", CYSTIC_FIBROSIS), ("csfcube", csfcube(CSFCUBE_TABLE))):
        assert len(load_dataset(str(write(tmp_path / name, files))).qrels) >= 1


# ----- ids that cannot be written to TREC files ------------------------------------------------------
# (what, files, file named in the error, its line, words of the error)
UNWRITABLE_IDS = [
    ("csv document id with a space", dict(CSV, **{"corpus.csv": "id,text\nd1,refunds\nd 2,passwords\n"}),
     "corpus.csv", 3, "document id 'd 2' holds whitespace"),
    ("csv document id with a tab", dict(CSV, **{"corpus.csv": 'id,text\nd1,refunds\n"d\t2",passwords\n'}),
     "corpus.csv", 3, "holds whitespace ('\\t' at position 2)"),
    ("csv query id with a space", dict(CSV, **{"queries.csv": "id,text\nq1,refund\nq 2,password\n"}),
     "queries.csv", 3, "query id 'q 2' holds whitespace"),
    ("csv query id starting with #", dict(CSV, **{"queries.csv": "id,text\nq1,refund\n#q2,password\n"}),
     "queries.csv", 3, "query id '#q2' starts with '#'"),
    ("jsonl document id with a non-breaking space",
     dict(BEIR, **{"corpus.jsonl": '{"_id": "D1", "text": "a"}\n{"_id": "D\\u00a02", "text": "b"}\n'}),
     "corpus.jsonl", 2, "holds whitespace ('\\xa0' at position 2)"),
    ("jsonl document id with a control character",
     dict(BEIR, **{"corpus.jsonl": '{"_id": "D1", "text": "a"}\n{"_id": "D\\u00002", "text": "b"}\n'}),
     "corpus.jsonl", 2, "holds a control character ('\\x00' at position 2)"),
    ("jsonl query id starting with #",
     dict(BEIR, **{"queries.jsonl": '{"_id": "#Q1", "text": "refund"}\n{"_id": "Q2", "text": "password"}\n'}),
     "queries.jsonl", 1, "starts with '#', which makes its TREC lines comments"),
    ("trec docno with a space", dict(TREC, **{"docs.sgml": TREC["docs.sgml"].replace("FT-2", "FT 2")}),
     "docs.sgml", 5, "document id 'FT 2' holds whitespace"),
    ("trec topic number with a space", dict(TREC, **{"topics.txt": TREC["topics.txt"].replace("Number: 2", "2 b")}),
     "topics.txt", 5, "topic number '2 b' holds whitespace"),
    ("smart record id with a control character", dict(SMART, **{"TOY.ALL": ".I 1\n.W\na\n.I 2\x01\n.W\nb\n"}),
     "TOY.ALL", 4, "document id '2\\x01' holds a control character"),
    ("smart query id starting with #", dict(SMART, **{"TOY.QRY": ".I #1\n.W\nrefund\n"}),
     "TOY.QRY", 1, "query id '#1' starts with '#'"),
    ("cystic fibrosis record number with a space",
     dict(CYSTIC_FIBROSIS, cf74=CYSTIC_FIBROSIS["cf74"].replace("RN 00002", "RN 2 b")),
     "cf74", 5, "record number RN '2 b' holds whitespace"),
    ("csfcube paper id with a space", csfcube(CSFCUBE_TABLE.replace("\n100,", "\n10 0,")),
     "queries-release.csv", 2, "query id '10 0_background' holds whitespace"),
]


@pytest.mark.parametrize(("files", "name", "line", "words"), [c[1:] for c in UNWRITABLE_IDS],
                         ids=[c[0] for c in UNWRITABLE_IDS])
def test_ids_that_cannot_be_written_to_trec_files_are_refused_at_their_line(
        tmp_path: Path, files: dict[str, str], name: str, line: int, words: str) -> None:
    message = refused(write(tmp_path, files))
    assert f"{name}:{line}: " in message
    assert words in message and "cannot be written to TREC run and qrels files" in message


def test_a_document_id_with_a_space_stops_compare_before_any_run_is_written(tmp_path: Path) -> None:
    folder = write(tmp_path / "corpus", dict(CSV, **{"corpus.csv": "id,text\nd1,refunds\nd 2,passwords\n"}))
    result = bench("compare", "--corpus", str(folder), "--systems", "bm25", "--metrics", "mrr",
                   "--out", str(tmp_path / "out"), "--no-cache")
    assert result.exit_code == 2
    assert "corpus.csv:3: document id 'd 2' holds whitespace" in result.stderr
    assert "Fix: give it an id without whitespace or control characters, e.g. 'd_2'" in result.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_hash_inside_a_document_id_is_kept(tmp_path: Path) -> None:
    # trec_eval reads '#' as a comment only in column 0, where a query id stands (MS MARCO v2.1 docids hold '#')
    files = dict(CSV, **{"corpus.csv": "id,text\nd#1,refunds\n#d2,passwords\n",
                         "qrels.tsv": "q1\td#1\t1\nq2\t#d2\t1\n"})
    assert load_dataset(str(write(tmp_path, files))).corpus.ids == ["d#1", "#d2"]


# ----- CSV quoting -----------------------------------------------------------------------------------
def test_an_unclosed_csv_quote_is_an_error_at_the_line_it_opens(tmp_path: Path) -> None:
    rows = "".join(f"d{j},document number {j}\n" for j in range(4, 29))
    folder = write(tmp_path, dict(CSV, **{"corpus.csv": f'id,text\nd1,one\nd2,two\nd3,"three\n{rows}'}))
    message = refused(folder)
    assert "corpus.csv:4: the quote that opens a value here is never closed" in message
    assert "(lines 4-29)" in message and 'two quotes ("")' in message


def test_an_unclosed_quote_after_a_multiline_value_names_its_own_line(tmp_path: Path) -> None:
    folder = write(tmp_path, dict(CSV, **{"corpus.csv": 'id,text,title\nd1,"two\nlines","open\nd2,b,c\n'}))
    assert "corpus.csv:3: the quote that opens a value here is never closed" in refused(folder)


def test_text_after_a_closing_quote_is_an_error(tmp_path: Path) -> None:
    folder = write(tmp_path, dict(CSV, **{"corpus.csv": 'id,text\nd1,one\nd2,"two" and more\nd3,three\n'}))
    assert "corpus.csv:3: a closing quote must be followed by a comma or the end of the line" in refused(folder)


def test_quoted_values_with_commas_quotes_and_newlines_still_load(tmp_path: Path) -> None:
    files = dict(CSV, **{"corpus.csv": 'id,text\nd1,"one, ""quoted""\nsecond line"\nd2,two\n'})
    dataset = load_dataset(str(write(tmp_path, files)))
    assert dataset.corpus.texts == ['one, "quoted"\nsecond line', "two"]


def test_a_multiline_record_is_reported_at_the_line_it_starts(tmp_path: Path) -> None:
    files = dict(CSV, **{"corpus.csv": 'id,text\nd1,"one\ntwo"\nd1,"again\nand again"\n'})
    message = refused(write(tmp_path, files))
    assert "corpus.csv:4: duplicate document id 'd1' (first on line 2)" in message  # not 5 and 3, where they end


# ----- judgments of unknown documents or queries ----------------------------------------------------
def many_documents(n_documents: int, judged: list[str]) -> dict[str, str]:
    """BEIR-like tabular folder: documents d1..dN, query q1..q3, judgments of ``judged`` (q\\td lines)."""
    corpus = "".join(f'{{"id": "d{j}", "text": "document {j}"}}\n' for j in range(1, n_documents + 1))
    queries = "".join(f'{{"id": "q{j}", "text": "question {j}"}}\n' for j in range(1, 4))
    return {"corpus.jsonl": corpus, "queries.jsonl": queries, "qrels.tsv": "".join(f"{line}\t1\n" for line in judged)}


def test_seventy_percent_unmatched_judgments_are_an_error_through_validate(tmp_path: Path) -> None:
    judged = ["q1\td1", "q2\td2", "q3\td3"] + [f"q1\tx{j}" for j in range(7)]  # 7 of 10 name unknown docs
    message = refused(write(tmp_path, many_documents(5, judged)))
    assert "qrels.tsv: 7 of 10 judgments (70.0%) cannot be matched, more than the 5% that is skipped" in message
    assert "7 name document ids not in the corpus ('x0', 'x1', 'x2', 'x3', 'x4' and 2 more" in message
    assert "--allow-unmatched-judgments" in message


def test_the_flag_skips_them_with_a_warning_through_validate(tmp_path: Path) -> None:
    judged = ["q1\td1", "q2\td2", "q3\td3"] + [f"q1\tx{j}" for j in range(7)]
    result = bench("corpora", "validate", "--allow-unmatched-judgments", str(write(tmp_path, many_documents(5, judged))))
    assert result.exit_code == 0, result.output
    assert "skipped 7 of 10 judgments (70.0%) that cannot be matched" in result.output
    assert "judgments of unknown docs     7" in result.output


def test_few_unmatched_judgments_are_skipped_with_a_warning_naming_them(tmp_path: Path) -> None:
    judged = [f"q{1 + j % 3}\td{j}" for j in range(1, 41)] + ["q1\tgone-1"]  # 1 of 41 (2.4%)
    dataset = load_dataset(str(write(tmp_path, many_documents(40, judged))))
    assert dataset.warnings == [f"{tmp_path / 'qrels.tsv'}: skipped 1 of 41 judgments (2.4%) that cannot be matched: "
                                "1 names document ids not in the corpus ('gone-1'; the corpus has ids like 'd1', "
                                "'d2', 'd3')"]
    assert dataset.unmatched_judgments == [("q1", "gone-1", 1)]


def test_a_query_losing_every_relevant_judgment_is_an_error_even_below_five_percent(tmp_path: Path) -> None:
    judged = [f"q{1 + j % 2}\td{j}" for j in range(1, 41)] + ["q3\tgone-1"]  # q3's only judgment: 1 of 41
    message = refused(write(tmp_path, many_documents(40, judged)))
    assert "1 of 41 judgments (2.4%) cannot be matched, and skipping them would drop a query from the averages" \
        in message
    assert "1 query loses every relevant judgment and would leave the averages ('q3')" in message


def test_compare_stops_on_unmatched_judgments_unless_allowed(tmp_path: Path) -> None:
    folder = write(tmp_path / "corpus", many_documents(5, ["q1\td1", "q2\td2", "q3\td3", "q1\tx1", "q1\tx2"]))
    common = ["compare", "--corpus", str(folder), "--systems", "bm25", "--metrics", "mrr", "--no-cache",
              "--out", str(tmp_path / "out")]
    result = bench(*common)
    assert result.exit_code == 2
    assert "qrels.tsv: 2 of 5 judgments (40.0%) cannot be matched" in result.stderr
    allowed = bench(*common, "--allow-unmatched-judgments")
    assert allowed.exit_code == 0, allowed.output
    assert "skipped 2 of 5 judgments (40.0%)" in allowed.stderr  # printed as a warning, and kept in the manifest


def test_compare_passes_the_flag_to_the_loader(tmp_path: Path) -> None:
    folder = write(tmp_path, many_documents(5, ["q1\td1", "q2\td2", "q3\td3", "q1\tx1", "q1\tx2"]))
    with pytest.raises(InputFileError, match="2 of 5 judgments"):
        compare("bm25", str(folder), "mrr")
    result = compare("bm25", str(folder), "mrr", loading=Loading(allow_unmatched_judgments=True))
    assert any("skipped 2 of 5 judgments" in w for w in result.warnings)


# ----- grades -------------------------------------------------------------------------------------
TOO_LARGE = str(2**63)
# (what, files, file named in the error, its line)
HUGE_GRADES = [
    ("beir qrels", dict(BEIR, **{"qrels/test.tsv": f"query-id\tcorpus-id\tscore\nQ1\tD1\t1\nQ2\tD2\t{TOO_LARGE}\n"}),
     "test.tsv", 3),
    ("tabular qrels", dict(CSV, **{"qrels.tsv": f"q1\td1\t1\nq2\td2\t{TOO_LARGE}\n"}), "qrels.tsv", 2),
    ("trec qrels", dict(TREC, **{"qrels.txt": f"1 0 FT-1 {TOO_LARGE}\n2 0 FT-2 1\n"}), "qrels.txt", 1),
    ("trec qrels, negative", dict(TREC, **{"qrels.txt": f"1 0 FT-1 1\n2 0 FT-2 -{2**63 + 1}\n"}), "qrels.txt", 2),
    ("smart three-column", dict(SMART, **{"TOY.REL": f"1 1 1\n2 2 {TOO_LARGE}\n"}), "TOY.REL", 2),
    ("smart trec layout", dict(SMART, **{"TOY.REL": f"1 0 1 1\n2 0 2 {TOO_LARGE}.0\n"}), "TOY.REL", 2),
]


@pytest.mark.parametrize(("files", "name", "line"), [c[1:] for c in HUGE_GRADES], ids=[c[0] for c in HUGE_GRADES])
def test_a_grade_outside_the_64_bit_range_is_an_error_at_its_line(
        tmp_path: Path, files: dict[str, str], name: str, line: int) -> None:
    message = refused(write(tmp_path, files))
    assert f"{name}:{line}: grade " in message and "outside the range of a 64-bit integer" in message


def test_the_largest_64_bit_grade_is_read_exactly(tmp_path: Path) -> None:
    # float("9223372036854775807") is 2^63: reading through a float would silently change it
    files = dict(CSV, **{"qrels.tsv": f"q1\td1\t{2**63 - 1}\nq2\td2\t9007199254740993\n"})
    assert load_dataset(str(write(tmp_path, files))).qrels.to_dict() == {"q1": {"d1": 2**63 - 1},
                                                                         "q2": {"d2": 9007199254740993}}


def test_a_first_judgment_with_an_exponent_is_refused_not_taken_for_a_header(tmp_path: Path) -> None:
    # trec_eval's atol reads 1e0 as 1 but 1e3 as 1 too: grades are integers in digits (corpora.number_grammar)
    message = refused(write(tmp_path, dict(CSV, **{"qrels.tsv": "q1\td1\t1e0\nq2\td2\t1\n"})))
    assert "qrels.tsv:1: grade '1e0' is not an integer as written (trec_eval would read it as 1)" in message


@pytest.mark.parametrize("grade", [2**63, 1.5, "2", True])
def test_a_csfcube_grade_that_is_not_a_64_bit_integer_is_an_error(tmp_path: Path, grade: object) -> None:
    message = refused(write(tmp_path, csfcube(CSFCUBE_TABLE, [grade])))
    assert "test-pid2anns-csfcube-background.json: " in message and "grade" in message


def test_beir_judgments_that_disagree_are_an_error_instead_of_last_wins(tmp_path: Path) -> None:
    files = dict(BEIR, **{"qrels/test.tsv": "Q1\tD1\t2\nQ2\tD2\t1\nQ1\tD1\t0\n"})
    assert "test.tsv:3: query 'Q1', document 'D1' is judged 0 here but 2" in refused(write(tmp_path, files))
