"""Query facets as the loaders and the side file give them (``corpora.facets``).

Fixtures are small folders and files written into ``tmp_path``; expected values are read off them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from corpora import InputFileError, RetbenchError, load_dataset, load_facets_file, with_facets
from corpora.inspection import reconcile
from tests.conftest import real_data

BEIR = {
    "corpus.jsonl": '{"_id": "d1", "text": "money back within 30 days"}\n{"_id": "d2", "text": "reset a password"}\n',
    "qrels/test.tsv": "q1\td1\t2\nq2\td2\t1\n",
}


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return folder


def test_beir_metadata_scalars_are_facets_and_nested_values_are_left_out_with_a_warning(tmp_path: Path) -> None:
    queries = ('{"_id": "q1", "text": "refund", "metadata": {"type": "billing", "popularity": 12, '
               '"answers": ["a", "b"], "source": {"site": "x"}}}\n'
               '{"_id": "q2", "text": "password", "metadata": {"type": "account", "popularity": 3.5}}\n')
    dataset = load_dataset(str(write(tmp_path, {**BEIR, "queries.jsonl": queries})))
    assert dataset.queries.facets == {"type": ["billing", "account"], "popularity": [12, 3.5]}
    # the two nested fields are named once, in one warning, and nothing else is warned about
    assert len(dataset.warnings) == 1
    warning = dataset.warnings[0]
    assert "queries.jsonl" in warning and "'answers' (in 1 query)" in warning and "'source' (in 1 query)" in warning
    assert "not a facet" in warning and "Fix:" in warning


def test_a_field_nested_in_one_query_only_is_dropped_for_every_query(tmp_path: Path) -> None:
    queries = ('{"_id": "q1", "text": "refund", "tags": "money"}\n'
               '{"_id": "q2", "text": "password", "tags": ["login", "account"]}\n')
    dataset = load_dataset(str(write(tmp_path, {**BEIR, "queries.jsonl": queries})))
    assert dataset.queries.facets == {}  # never a column of "money" beside a list
    assert "'tags' (in 1 query)" in dataset.warnings[0]


def test_tabular_jsonl_nested_values_and_csv_columns(tmp_path: Path) -> None:
    jsonl = write(tmp_path / "jsonl", {
        "corpus.jsonl": '{"id": "a", "text": "alpha"}\n',
        "queries.jsonl": '{"id": "1", "text": "alpha?", "popularity": 3, "spans": [[0, 5]]}\n',
        "qrels.tsv": "1\ta\t1\n",
    })
    dataset = load_dataset(str(jsonl))
    assert dataset.queries.facets == {"popularity": [3]}
    assert len(dataset.warnings) == 1 and "'spans'" in dataset.warnings[0]
    csv = write(tmp_path / "csv", {
        "corpus.csv": "id,text\na,alpha\n",
        "queries.csv": "id,text,type,popularity\n1,alpha?,lookup,12\n",
        "qrels.tsv": "1\ta\t1\n",
    })
    dataset = load_dataset(str(csv))
    assert dataset.queries.facets == {"type": ["lookup"], "popularity": ["12"]}  # CSV cells stay text
    assert dataset.warnings == []


def test_csfcube_queries_carry_facet_year_and_paper_type() -> None:
    csfcube = real_data("csfcube")
    dataset = load_dataset(str(csfcube))
    facets = dataset.queries.facets
    assert list(facets) == ["facet", "year", "paper_type"]
    assert Counter(facets["facet"]) == {"background": 16, "method": 17, "result": 17}
    assert Counter(facets["paper_type"]) == {"data-driven approach": 33, "resources/evaluation": 12, "theoretical": 5}
    assert all(isinstance(y, int) for y in facets["year"]) and (min(facets["year"]), max(facets["year"])) == (1996, 2019)
    fold = load_dataset(str(csfcube), split="fold1_test")
    by_id = dict(zip(dataset.queries.ids, facets["facet"]))
    assert fold.queries.facets["facet"] == [by_id[q] for q in fold.queries.ids]


# ----- the side file --------------------------------------------------------------------------------
def test_a_csv_side_file_types_number_columns_and_keeps_codes_as_text(tmp_path: Path) -> None:
    path = tmp_path / "facets.csv"
    path.write_text("query_id,type,popularity,code,score\n"
                    "q01,lookup,12,007,0.5\n"
                    'q02,"how, to",3,010,\n'
                    "q03,,1e3,100,-2\n", encoding="utf-8")
    facets = load_facets_file(path)
    assert list(facets) == ["type", "popularity", "code", "score"]
    assert facets["type"] == {"q01": "lookup", "q02": "how, to", "q03": None}  # an empty cell is missing
    assert facets["popularity"] == {"q01": 12, "q02": 3, "q03": 1000.0}
    assert facets["code"] == {"q01": "007", "q02": "010", "q03": "100"}  # a leading zero makes a code
    assert facets["score"] == {"q01": 0.5, "q02": None, "q03": -2}


def test_tsv_and_jsonl_side_files(tmp_path: Path) -> None:
    tsv = tmp_path / "f.tsv"
    tsv.write_text("qid\tdynamism\nq01\tstatic\nq02\tfast changing\n", encoding="utf-8")
    assert load_facets_file(tsv) == {"dynamism": {"q01": "static", "q02": "fast changing"}}
    jsonl = tmp_path / "f.jsonl"
    jsonl.write_text('{"query_id": "q01", "popularity": 3, "hot": true}\n\n{"query_id": "q02", "popularity": "7"}\n',
                     encoding="utf-8")
    # JSON keeps its types (the string "7" stays a string); a query without a field is missing
    assert load_facets_file(jsonl) == {"popularity": {"q01": 3, "q02": "7"}, "hot": {"q01": True, "q02": None}}


# (case, file name, content, query ids given, line in the error, words of the error)
BAD_FILES = [
    ("unknown query id", "f.csv", "query_id,type\nq01,a\nq99,b\n", ["q01", "q02"], 3,
     "query id 'q99' is not a query of the dataset"),
    ("id twice", "f.tsv", "query_id\ttype\nq01\ta\nq01\tb\n", None, 3, "listed twice (first on line 2)"),
    ("no id column", "f.csv", "query,type\nq01,a\n", None, 1, "no query id column in the header"),
    ("two id columns", "f.csv", "id,qid,type\nq01,1,a\n", None, 1, "2 query id columns"),
    ("no facet column", "f.csv", "query_id\nq01\n", None, 1, "no facet column"),
    ("column named twice", "f.csv", "query_id,type,type\nq01,a,b\n", None, 1, "'type' twice"),
    ("row too long", "f.tsv", "query_id\ttype\nq01\ta\tb\n", None, 2, "3 cells but the header has 2"),
    ("empty id", "f.csv", "query_id,type\n,a\n", None, 2, "empty query id"),
    ("nested json", "f.jsonl", '{"query_id": "q01", "type": ["a"]}\n', None, 1, "is a list, not a string"),
    ("json without id", "f.jsonl", '{"type": "a"}\n', None, 1, "record has no query id"),
    ("json with two ids", "f.jsonl", '{"query_id": "q01", "type": "a"}\n{"query_id": "q02", "id": 7}\n', None, 2,
     "2 query id fields (query_id, id)"),
    ("unclosed quote", "f.csv", 'query_id,type\nq01,"a\nq02,b\n', None, 2, "never closed"),
]


@pytest.mark.parametrize(("name", "file", "content", "ids", "line", "words"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_side_file_is_an_error_at_its_line(tmp_path: Path, name: str, file: str, content: str,
                                                 ids: list[str] | None, line: int, words: str) -> None:
    path = tmp_path / file
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        load_facets_file(path, ids)
    assert caught.value.line == line
    assert f"{path}:{line}:" in str(caught.value) and words in str(caught.value)


@pytest.mark.parametrize(("file", "content", "words"), [
    ("f.txt", "query_id,type\n", "must end in .csv, .tsv, .jsonl"),
    ("f.csv", "", "the file is empty"),
    ("f.csv", "query_id,type\n", "a header but no rows"),
    ("f.jsonl", "\n", "holds no facet values"),
])
def test_a_side_file_without_facets_is_an_error(tmp_path: Path, file: str, content: str, words: str) -> None:
    path = tmp_path / file
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFileError, match="Fix:") as caught:
        load_facets_file(path)
    assert words in str(caught.value)


def test_with_facets_attaches_a_side_file_to_the_bundled_corpus(tmp_path: Path) -> None:
    dataset = load_dataset("article")
    path = tmp_path / "facets.csv"
    path.write_text("query_id,type\nq01,pricing\nq02,billing\nq03,export\n", encoding="utf-8")
    extended = with_facets(dataset, load_facets_file(path, dataset.queries.ids), source=str(path))
    assert extended.queries.facets["type"][:4] == ["pricing", "billing", "export", None]  # q04 is not listed
    assert extended.queries.ids == dataset.queries.ids and extended.queries.texts == dataset.queries.texts
    assert dataset.queries.facets == {}  # the dataset given is left as it was
    assert extended.queries.content_hash() != dataset.queries.content_hash()  # facets are part of the queries' identity
    assert extended.corpus is dataset.corpus and extended.qrels is dataset.qrels
    # they survive the subset compare evaluates and the loaders' checks
    subset = extended.queries.subset(["q03", "q01"])
    assert subset.ids == ["q01", "q03"] and subset.facets == {"type": ["pricing", "export"]}
    assert reconcile(extended).queries.facets == extended.queries.facets


def test_with_facets_refuses_unknown_queries_nested_values_and_a_facet_the_queries_have(tmp_path: Path) -> None:
    dataset = load_dataset("article")
    with pytest.raises(RetbenchError, match=r"facets.csv: facet 'type' names 2 queries not in the dataset "
                                            r"\('q99', 'Q01'; .*Fix: use the dataset's query ids"):
        with_facets(dataset, {"type": {"q01": "a", "q99": "b", "Q01": "c"}}, source="facets.csv")
    with pytest.raises(RetbenchError, match="is a list, not a string"):
        with_facets(dataset, {"type": {"q01": ["a"]}})
    typed = with_facets(dataset, {"type": {"q01": "a"}})
    with pytest.raises(RetbenchError, match="'type' is already a facet of the queries.*Fix: rename"):
        with_facets(typed, {"type": {"q02": "b"}})
