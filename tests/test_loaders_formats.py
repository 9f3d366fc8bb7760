"""Corpora as a user brings them, detected with no flag; and broken ones, which say what is wrong.

Every fixture is a small folder written into ``tmp_path``; expected values are read off the text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpora import FORMATS, InputFileError, RetbenchError, UnknownNameError, load_dataset


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


BEIR = {
    "corpus.jsonl": '{"_id": "DOC-17", "title": "Refunds", "text": "Money back within 30 days."}\n'
                    '{"_id": "DOC-18", "title": "", "text": "Passwords are reset by e-mail."}\n',
    "queries.jsonl": '{"_id": "Q-1", "text": "get my money back", "type": "billing"}\n'
                     '{"_id": "Q-2", "text": "forgot password", "type": "account"}\n',
    "qrels/test.tsv": "query-id\tcorpus-id\tscore\nQ-1\tDOC-17\t2\nQ-2\tDOC-18\t1\n",
}

TREC_DOCS = """<DOC>
<DOCNO> FT-1 </DOCNO>
<PROFILE>_AN-BEOA7AAIFT</PROFILE>
<TITLE>Storm hits the coast</TITLE>
<TEXT>
Heavy rain &amp; wind
closed the harbour.
</TEXT>
</DOC>
<DOC>
<DOCNO>FT-2</DOCNO>
<TEXT>Markets rallied on Monday.</TEXT>
</DOC>
"""

TREC_TOPICS = """<top>
<num> Number: 007
<title> Topic: storm damage

<desc> Description:
Find reports of storm damage.

<narr> Narrative:
A relevant document names a place.

</top>
<top>
<num> Number: 8
<title> stock markets
</top>
"""


def test_beir_folder_with_string_ids_needs_no_flag(tmp_path: Path) -> None:
    dataset = load_dataset(str(write(tmp_path, BEIR)))
    assert dataset.format == "beir"
    assert dataset.corpus.ids == ["DOC-17", "DOC-18"]
    assert dataset.corpus.full_texts[0] == "Refunds\nMoney back within 30 days."
    assert dataset.queries.facets == {"type": ["billing", "account"]}
    assert dataset.qrels.to_dict() == {"Q-1": {"DOC-17": 2}, "Q-2": {"DOC-18": 1}}


def test_trec_folder_with_title_text_and_number_topics_needs_no_flag(tmp_path: Path) -> None:
    folder = write(tmp_path, {"docs/ft.sgml": TREC_DOCS, "topics.txt": TREC_TOPICS,
                              "qrels.txt": "7 0 FT-1 1\n7 0 FT-2 0\n8 0 FT-2 2\n"})
    dataset = load_dataset(str(folder))
    assert dataset.format == "trec"
    assert dataset.corpus.ids == ["FT-1", "FT-2"]
    assert dataset.corpus.titles == ["Storm hits the coast", ""]
    assert dataset.corpus.texts[0] == "_AN-BEOA7AAIFT\nHeavy rain & wind\nclosed the harbour."
    assert dataset.queries.ids == ["7", "8"]  # "Number: 007" normalised like the qrels' "7"
    assert dataset.queries.texts == ["storm damage", "stock markets"]
    assert dataset.queries.facets["description"] == ["Find reports of storm damage.", None]
    assert dataset.queries.facets["narrative"][0] == "A relevant document names a place."
    assert dataset.qrels.to_dict() == {"7": {"FT-1": 1, "FT-2": 0}, "8": {"FT-2": 2}}


def test_trec_topics_with_closing_tags_and_gzipped_documents(tmp_path: Path) -> None:
    import gzip

    folder = write(tmp_path, {"docs.gz": gzip.compress(TREC_DOCS.encode()),
                              "queries.trec": "<top>\n<num>1</num><title>\nSTORM\n</title>\n</top>\n",
                              "qrels": "1 0 FT-1 1\n"})
    dataset = load_dataset(str(folder))
    assert (dataset.queries.ids, dataset.queries.texts) == (["1"], ["STORM"])
    assert len(dataset.corpus) == 2


def test_tabular_jsonl_export(tmp_path: Path) -> None:
    folder = write(tmp_path, {
        "corpus.jsonl": '{"id": "a", "title": "T", "text": "alpha", "url": "u"}\n{"id": "b", "text": "beta"}\n',
        "queries.jsonl": '{"id": "1", "text": "alpha?", "popularity": 3}\n',
        "qrels.tsv": "1\ta\t1\n",
    })
    dataset = load_dataset(str(folder))
    assert dataset.format == "tabular"
    assert dataset.corpus.metadata[0] == {"url": "u"}
    assert dataset.queries.facets == {"popularity": [3]}


def test_tabular_csv_export_with_header_qrels(tmp_path: Path) -> None:
    folder = write(tmp_path, {
        "documents.csv": 'id,title,text\r\nd1,First,"one, with a comma"\r\nd2,,two\r\n',
        "queries.csv": "id,text,type\nq1,one,lookup\nq2,two,lookup\n",
        "qrels.tsv": "query-id\tdoc-id\tgrade\nq1\td1\t3\nq2\td2\t0\n",
    })
    dataset = load_dataset(str(folder))
    assert dataset.corpus.texts == ["one, with a comma", "two"]
    assert dataset.queries.facets == {"type": ["lookup", "lookup"]}
    assert dataset.qrels.to_dict() == {"q1": {"d1": 3}, "q2": {"d2": 0}}


SMART = {
    "TOY.ALL": ".I 1\r\n.T \r\nfirst title\r\n.A\r\nsmith\r\n.W\r\nfirst body   \r\n.A\r\nstill body\r\n"
               ".I 02\r\n.T\r\nsecond\r\n.W\r\npart one\r\n.W\r\npart two\r\n",
    "TOY.QRY": ".I 001\r\n.W\r\n body question \r\n.I 002\r\n.W\r\nnever judged\r\n",
    "TOY.REL": "    1     1\t0\t0.000000\r\n    1     2\t0\t0.000000\r\n",
}


def test_smart_markers_with_spaces_stray_and_repeated_fields(tmp_path: Path) -> None:
    dataset = load_dataset(str(write(tmp_path, SMART)))
    assert dataset.format == "smart"
    assert dataset.corpus.ids == ["1", "2"]
    assert dataset.corpus.titles == ["first title", "second"]
    assert dataset.corpus.texts == ["first body\nstill body", "part one\npart two"]  # stray .A stays in .W
    assert dataset.corpus.metadata[0] == {"authors": "smith"}
    assert dataset.queries.ids == ["1", "2"] and dataset.queries.texts[0] == "body question"
    assert dataset.qrels.to_dict() == {"1": {"1": 1, "2": 1}}


def test_format_is_forced_and_choices_come_from_the_registry(tmp_path: Path) -> None:
    folder = write(tmp_path, BEIR)
    assert load_dataset(str(folder), format="beir").format == "beir"
    with pytest.raises(UnknownNameError) as error:
        load_dataset(str(folder), format="nope")
    assert all(name in str(error.value) for name in FORMATS)


def test_detection_order_puts_specific_layouts_first() -> None:
    names = list(FORMATS)
    assert names.index("cranfield") < names.index("smart")
    assert names.index("beir") < names.index("trec") and names.index("tabular") < names.index("trec")


# ----- broken input: one clear error naming file and line, or a warning counting what was skipped ---
def error_of(folder: Path, **kwargs: str) -> InputFileError:
    with pytest.raises(InputFileError) as error:
        load_dataset(str(folder), **kwargs)
    return error.value


def test_jsonl_line_that_is_not_json(tmp_path: Path) -> None:
    files = dict(BEIR, **{"corpus.jsonl": '{"_id": "a", "text": "x"}\n{"_id": "b", "text": \n'})
    error = error_of(write(tmp_path, files))
    assert error.path.endswith("corpus.jsonl") and error.line == 2
    assert "not valid JSON" in str(error) and "corpus.jsonl:2" in str(error)


def test_document_without_an_id(tmp_path: Path) -> None:
    folder = write(tmp_path, {"corpus.jsonl": '{"id": "a", "text": "x"}\n{"text": "no id"}\n',
                              "queries.jsonl": '{"id": "q", "text": "x"}\n', "qrels.tsv": "q\ta\t1\n"})
    error = error_of(folder)
    assert error.line == 2 and "no id" in str(error)


def test_trec_document_without_docno(tmp_path: Path) -> None:
    folder = write(tmp_path, {"d.sgml": "<DOC>\n<DOCNO>a</DOCNO>\nx\n</DOC>\n<DOC>\n<TEXT>y</TEXT>\n</DOC>\n",
                              "t.txt": TREC_TOPICS, "qrels": "7 0 a 1\n"})
    error = error_of(folder)
    assert error.path.endswith("d.sgml") and error.line == 5 and "DOCNO" in str(error)


def test_trec_document_not_closed(tmp_path: Path) -> None:
    folder = write(tmp_path, {"d.sgml": "<DOC>\n<DOCNO>a</DOCNO>\n<DOC>\n<DOCNO>b</DOCNO>\n</DOC>\n",
                              "t.txt": TREC_TOPICS, "qrels": "7 0 a 1\n"})
    assert error_of(folder).line == 1


def test_qrels_pointing_only_to_unknown_documents(tmp_path: Path) -> None:
    files = dict(BEIR, **{"qrels/test.tsv": "query-id\tcorpus-id\tscore\nQ-1\tdoc-17\t1\nQ-2\t18\t1\n"})
    error = error_of(write(tmp_path, files))
    assert error.path.endswith("test.tsv")
    assert "none of the 2 judgments" in str(error) and "'doc-17'" in str(error)


def test_unknown_documents_and_queries_are_skipped_with_a_count_when_allowed(tmp_path: Path) -> None:
    files = dict(BEIR, **{"qrels/test.tsv": "Q-1\tDOC-17\t1\nQ-1\tDOC-99\t1\nQ-1\tDOC-98\t0\nQ-9\tDOC-17\t1\n"})
    dataset = load_dataset(str(write(tmp_path, files)), allow_unmatched_judgments=True)
    assert dataset.qrels.to_dict() == {"Q-1": {"DOC-17": 1}}
    assert sorted(dataset.unmatched_judgments) == [("Q-1", "DOC-98", 0), ("Q-1", "DOC-99", 1), ("Q-9", "DOC-17", 1)]
    [warning] = dataset.warnings
    assert "skipped 3 of 4 judgments (75.0%)" in warning
    assert "2 name document ids not in the corpus ('DOC-98', 'DOC-99'" in warning
    assert "1 names query ids not in the queries ('Q-9'" in warning


def test_empty_corpus(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, dict(BEIR, **{"corpus.jsonl": "\n"})))
    assert error.path.endswith("corpus.jsonl") and "no documents" in str(error)


def test_empty_trec_corpus(tmp_path: Path) -> None:
    folder = write(tmp_path, {"d.sgml": "<DOC>\n", "t.txt": TREC_TOPICS, "qrels": "7 0 a 1\n"})
    error = error_of(folder)
    assert error.path.endswith("d.sgml") and error.line == 1


def test_non_utf8_bytes(tmp_path: Path) -> None:
    folder = write(tmp_path, {"corpus.csv": b"id,text\na,caf\xe9\n", "queries.csv": "id,text\nq,x\n",
                              "qrels.tsv": "q\ta\t1\n"})
    error = error_of(folder)
    assert error.path.endswith("corpus.csv") and error.line == 2 and "UTF-8" in str(error)


def test_non_utf8_bytes_in_a_smart_file(tmp_path: Path) -> None:
    files = dict(SMART, **{"TOY.QRY": b".I 1\n.W\nna\xefve\n"})
    error = error_of(write(tmp_path, files))
    assert error.path.endswith("TOY.QRY") and error.line == 3


def test_duplicate_ids_are_errors(tmp_path: Path) -> None:
    folder = write(tmp_path, {"corpus.csv": "id,text\na,x\nb,y\na,z\n", "queries.csv": "id,text\nq,x\n",
                              "qrels.tsv": "q\ta\t1\n"})
    error = error_of(folder)
    assert error.line == 4 and "duplicate document id 'a' (first on line 2)" in str(error)


def test_a_duplicate_beir_query_names_its_first_line(tmp_path: Path) -> None:
    queries = BEIR["queries.jsonl"] + '{"_id": "Q-1", "text": "again"}\n'
    error = error_of(write(tmp_path, dict(BEIR, **{"queries.jsonl": queries})))
    assert error.path.endswith("queries.jsonl") and error.line == 3
    assert "duplicate query id 'Q-1' (first on line 1)" in str(error)


def test_a_trec_document_repeated_in_another_file_names_that_file(tmp_path: Path) -> None:
    folder = write(tmp_path, {"docs/a.sgml": TREC_DOCS, "docs/b.sgml": TREC_DOCS, "topics.txt": TREC_TOPICS,
                              "qrels.txt": "7 0 FT-1 1\n"})
    error = error_of(folder)
    assert error.path.endswith("b.sgml") and error.line == 1
    assert "duplicate document id 'FT-1' (first at " in str(error) and "a.sgml:1)" in str(error)


def test_conflicting_judgments_are_errors_and_repeats_are_counted(tmp_path: Path) -> None:
    folder = write(tmp_path / "conflict", dict(BEIR, **{"qrels.tsv": "Q-1\tDOC-17\t1\nQ-1\tDOC-17\t2\n"}))
    error = error_of(folder, format="tabular")
    assert error.line == 2 and "judged 2 here but 1" in str(error)
    folder = write(tmp_path / "repeat", {"corpus.csv": "id,text\na,x\n", "queries.csv": "id,text\nq,x\n",
                                         "qrels.tsv": "q\ta\t1\nq\ta\t1\n"})
    assert any("1 judgment line(s) repeat" in w for w in load_dataset(str(folder)).warnings)


def test_csv_without_a_text_column(tmp_path: Path) -> None:
    folder = write(tmp_path, {"corpus.csv": "id,body\na,x\n", "queries.csv": "id,text\nq,x\n",
                              "qrels.tsv": "q\ta\t1\n"})
    error = error_of(folder)
    assert error.line == 1 and "'text' column" in str(error)


def test_cranfield_code_outside_the_scale(tmp_path: Path) -> None:
    folder = write(tmp_path, {"cran.all.1400": ".I 1\n.T\nt\n.W\nw\n", "cran.qry": ".I 001\n.W\nq\n",
                              "cranqrel": "1 1 2\n1 1 7\n"})
    error = error_of(folder)
    assert error.path.endswith("cranqrel") and error.line == 2 and "code 7" in str(error)


def test_cystic_fibrosis_malformed_scores(tmp_path: Path) -> None:
    folder = write(tmp_path, {"cf74": "PN 74001\nRN 00001 \nTI A title.\nAB An abstract.\n",
                              "cfquery": "QN 00001 \nQU A question?\nNR 00001\nRD    1 12x2\n"})
    error = error_of(folder)
    assert error.path.endswith("cfquery") and error.line == 4


def test_no_known_layout(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, {"notes.txt": "hello\n"}))
    assert "no known corpus layout" in str(error) and "force a layout with `format`" in str(error)


def test_missing_folder_is_a_retbench_error() -> None:
    with pytest.raises(RetbenchError, match="no such folder"):
        load_dataset("/nonexistent/corpus")


# ----- SMART collections as distributed (issue 11): both namings, trailing '.I', 'q d 0 0' judgments ---
CACM = {  # the CACM naming: <name>.all, query.text, qrels.text; zero-padded query numbers, double spaces
    "cacm.all": ".I 1\n.T\nPreliminary Report-International Algebraic Language\n.B\nCACM December, 1958\n"
                ".A\nPerlis, A. J.\n.N\nCA581203 JB March 22, 1978  8:28 PM\n.X\n100\t5\t1\n123\t5\t1\n"
                ".I 2\n.T\nExtraction of Roots by Repeated Subtractions\n.W\nRoots are extracted by subtraction.\n"
                ".I 3\n.T\nTechniques Department on Matrix Program Schemes\n.I\n",
    "query.text": ".I 1\n.W\n What articles exist which deal with algebraic languages?\n.N\n 1. Richard Alexander\n"
                  ".I 2\n.W\n How are roots extracted?\n.N\n 2. Someone Else\n.I\n",
    "qrels.text": "01 1  0 0\n02 2  0 0\n02 3  0 0\n",
    "cite.info": "1\t5\n",
    "README": "CACM collection\n",
}


def validate(folder: Path, *options: str):
    from click.testing import CliRunner

    from harness.cli import main

    return CliRunner().invoke(main, ["corpora", "validate", *options, str(folder)])


def test_the_cacm_naming_loads_with_no_flag(tmp_path: Path) -> None:
    result = validate(write(tmp_path, CACM))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{tmp_path.name} (smart) from ")
    dataset = load_dataset(str(tmp_path))
    assert dataset.corpus.ids == ["1", "2", "3"]
    assert dataset.corpus.titles[0] == "Preliminary Report-International Algebraic Language"
    assert dataset.corpus.texts[1] == "Roots are extracted by subtraction."
    assert dataset.queries.ids == ["1", "2"]
    # '01 1  0 0' is SMART's query, document and two zeros, not TREC's query, iteration, document, grade
    assert dataset.qrels.to_dict() == {"1": {"1": 1}, "2": {"2": 1, "3": 1}}


def test_the_glasgow_naming_with_a_trailing_bare_marker_and_zero_columns(tmp_path: Path) -> None:
    files = {"CISI.ALL": ".I 1\r\n.T\r\nfirst\r\n.W\r\nbody one\r\n.I 2\r\n.W\r\nbody two\r\n.I\r\n\r\n",
             "CISI.QRY": ".I 1\r\n.W\r\nquestion\r\n", "CISI.REL": "01 1  0 0\r\n01 2  0 0\r\n",
             "CISI.BLN": "#q1\r\n"}
    result = validate(write(tmp_path, files))
    assert result.exit_code == 0, result.output
    assert "(smart)" in result.output and "2 documents" in result.output
    assert validate(tmp_path, "--format", "smart").exit_code == 0
    assert load_dataset(str(tmp_path)).qrels.to_dict() == {"1": {"1": 1, "2": 1}}


def test_a_bare_record_marker_followed_by_text_is_still_an_error(tmp_path: Path) -> None:
    files = dict(SMART, **{"TOY.ALL": ".I 1\n.W\none\n.I\n.W\norphan\n"})
    error = error_of(write(tmp_path, files))
    assert error.path.endswith("TOY.ALL") and error.line == 4 and "without a record id" in str(error)


def test_a_record_marker_with_two_ids_is_an_error_not_text(tmp_path: Path) -> None:
    files = dict(SMART, **{"TOY.ALL": ".I 1\n.W\none\n.I 2 3\n.W\ntwo\n"})
    error = error_of(write(tmp_path, files))
    assert error.path.endswith("TOY.ALL") and error.line == 4 and "more than one id" in str(error)


def test_judgments_that_fit_both_smart_and_trec_are_an_error_naming_the_file(tmp_path: Path) -> None:
    # column 2 is constant (a TREC iteration?) and columns 3-4 are zero (SMART?): the document is 5, or 0
    result = validate(write(tmp_path, dict(SMART, **{"TOY.REL": "1 5 0 0\n2 5 0 0\n"})))
    assert result.exit_code == 2
    assert "TOY.REL: the judgment layout is ambiguous" in result.stderr and "Fix: " in result.stderr


def test_judgments_that_fit_neither_layout_are_an_error(tmp_path: Path) -> None:
    result = validate(write(tmp_path, dict(SMART, **{"TOY.REL": "1 1 0 0\n1 2 0 1\n2 2 0 0\n"})))
    assert result.exit_code == 2
    assert "TOY.REL:2: four fields per line, but neither layout fits" in result.stderr


def test_the_trec_layout_of_med_rel_is_still_read_as_trec(tmp_path: Path) -> None:
    dataset = load_dataset(str(write(tmp_path, dict(SMART, **{"TOY.REL": "1 0 1 1\n1 0 2 1\n2 0 2 1\n"}))))
    assert dataset.qrels.to_dict() == {"1": {"1": 1, "2": 1}, "2": {"2": 1}}


def test_two_query_files_of_different_namings_are_an_error_naming_both(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, dict(CACM, **{"CACM.QRY": ".I 1\n.W\nq\n"})))
    assert "expected exactly one queries" in str(error)
    assert "CACM.QRY" in str(error) and "query.text" in str(error)
