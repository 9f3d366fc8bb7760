"""`bench corpora`, `bench corpora show` and `bench corpora validate` through the CLI."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from corpora import FORMATS, load_dataset, summary_line
from harness.cli import main
from tests.conftest import real_data


GOOD = {
    "corpus.jsonl": '{"_id": "DOC-1", "title": "Refunds", "text": "Money back."}\n'
                    '{"_id": "DOC-2", "text": ""}\n'
                    '{"_id": "DOC-3", "text": "Passwords."}\n',
    "queries.jsonl": '{"_id": "q1", "text": "refund"}\n{"_id": "q2", "text": "password"}\n'
                     '{"_id": "q3", "text": "never judged"}\n',
    "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\tDOC-1\t2\nq1\tDOC-3\t0\nq2\tDOC-3\t1\n",
}


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content, encoding="utf-8")
    return folder


def bench(*args: str):
    return CliRunner().invoke(main, list(args))


def test_lists_the_bundled_corpora() -> None:
    result = bench("corpora")
    assert result.exit_code == 0
    assert result.output.startswith("article (default)")


def test_show_counts_everything(tmp_path: Path) -> None:
    result = bench("corpora", "show", str(write(tmp_path, GOOD)))
    assert result.exit_code == 0, result.output
    lines = {line.split("  ")[1].strip(): line[32:].strip() for line in result.output.splitlines()[1:]
             if line.startswith("  ") and not line.startswith("    ")}
    assert lines["documents"] == "3"
    assert lines["empty documents"] == "1 ('DOC-2')"
    assert lines["queries"] == "3"
    assert lines["judgments"] == "3 over 2 queries"
    assert lines["grade histogram"] == "0:1 1:1 2:1"
    assert lines["evaluated (grade >= 1)"] == "2 queries"
    assert lines["no relevant judgment"] == "1 query, excluded from averages ('q3')"
    assert lines["judgments of unknown docs"] == "0"
    assert lines["warnings"] == "0"
    assert result.output.startswith(f"{tmp_path.name} (beir) from ")


def test_validate_counts_and_shows_judgments_of_unknown_ids_when_allowed(tmp_path: Path) -> None:
    files = dict(GOOD, **{"qrels/test.tsv": "q1\tDOC-1\t1\nq1\tDOC-9\t1\nq1\tDOC-8\t1\nq7\tDOC-1\t1\n"})
    result = bench("corpora", "validate", "--allow-unmatched-judgments", str(write(tmp_path, files)))
    assert result.exit_code == 0, result.output
    assert "judgments of unknown docs     2 ('DOC-8', 'DOC-9')" in result.output
    assert "judgments of unknown queries  1 ('q7')" in result.output
    assert "skipped 3 of 4 judgments (75.0%) that cannot be matched: 2 name document ids not in the corpus" \
        in result.output
    assert "valid with 1 warning(s)" in result.output


def test_validate_exits_2_on_a_broken_line_naming_file_and_line(tmp_path: Path) -> None:
    files = dict(GOOD, **{"queries.jsonl": '{"_id": "q1", "text": "refund"}\nnot json\n'})
    result = bench("corpora", "validate", str(write(tmp_path, files)))
    assert result.exit_code == 2
    assert "queries.jsonl:2: not valid JSON" in result.stderr
    assert "Traceback" not in result.output


def test_validate_exits_2_on_duplicate_ids(tmp_path: Path) -> None:
    files = dict(GOOD, **{"corpus.jsonl": '{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n'})
    result = bench("corpora", "validate", str(write(tmp_path, files)))
    assert result.exit_code == 2
    assert "corpus.jsonl:2: duplicate document id 'a'" in result.stderr


def test_validate_exits_2_when_no_judgment_is_usable(tmp_path: Path) -> None:
    files = dict(GOOD, **{"qrels/test.tsv": "q1\tx\t1\n"})
    result = bench("corpora", "validate", str(write(tmp_path, files)))
    assert result.exit_code == 2 and "none of the 1 judgment can be used" in result.stderr


def test_format_choices_come_from_the_registry(tmp_path: Path) -> None:
    result = bench("corpora", "show", "--help")
    assert all(name in result.output for name in FORMATS)
    result = bench("corpora", "show", "--format", "nope", str(write(tmp_path, GOOD)))
    assert result.exit_code == 2 and "'nope' is not one of" in result.output


def test_split_is_passed_to_the_loader(tmp_path: Path) -> None:
    result = bench("corpora", "show", "--split", "dev", str(write(tmp_path, GOOD)))
    assert result.exit_code == 2 and "--split" in result.stderr and "test" in result.stderr


def test_summary_line_is_one_line(tmp_path: Path) -> None:
    line = summary_line(load_dataset(str(write(tmp_path, GOOD))))
    assert "\n" not in line
    assert line == (f"{tmp_path.name}: 3 documents (1 empty), 3 queries, 3 judgments (grades 0:1 1:1 2:1); "
                    "2 queries evaluated, 1 without a relevant judgment excluded from averages")


def test_show_a_real_collection_with_unjudged_queries() -> None:
    result = bench("corpora", "show", str(real_data("cisi")))
    assert result.exit_code == 0
    assert "36 queries, excluded from averages" in result.output


def test_forcing_the_generic_smart_reader_on_cranfield_stops_at_the_unmatched_queries() -> None:
    cranfield = real_data("cranfield")
    # cranqrel numbers queries by position; read as .I ids, 73 of its query numbers match no query:
    # 611 of 1,837 judgments (33%) would be dropped, so the misreading stops unless it is asked for
    refused = bench("corpora", "validate", "--format", "smart", str(cranfield))
    assert refused.exit_code == 2
    assert "cranqrel: 611 of 1,837 judgments (33.3%) cannot be matched" in refused.stderr
    assert "--allow-unmatched-judgments" in refused.stderr
    allowed = bench("corpora", "validate", "--format", "smart", "--allow-unmatched-judgments", str(cranfield))
    assert allowed.exit_code == 0
    assert "judgments of unknown queries  611" in allowed.output
