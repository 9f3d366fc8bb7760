"""docs/corpus-formats.md cannot drift: every example folder it shows is written out and validated.

Each example sits between ``<!-- example: NAME format: FORMAT -->`` and ``<!-- end example -->``; in
it, a line holding a file name in backticks is followed by a fenced block with the file's content.
Each folder must load with no flag as FORMAT, without warnings, and again with ``--format FORMAT``;
every registered format must have an example; and the detection table must list the formats in
the order the loaders are tried.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import FORMATS
from harness.cli import main

DOC = Path(__file__).resolve().parents[1] / "docs" / "corpus-formats.md"
README = Path(__file__).resolve().parents[1] / "README.md"
_EXAMPLE = re.compile(r"<!-- example: (?P<name>[\w-]+) format: (?P<format>\w+) -->\n(?P<body>.*?)<!-- end example -->",
                      re.S)
_FILE = re.compile(r"^`(?P<path>[^`]+)`[^\n]*\n```[a-z]*\n(?P<content>.*?)^```$", re.S | re.M)


def examples() -> list[tuple[str, str, dict[str, str]]]:
    found = []
    for match in _EXAMPLE.finditer(DOC.read_text(encoding="utf-8")):
        files = {f.group("path"): f.group("content") for f in _FILE.finditer(match.group("body"))}
        found.append((match.group("name"), match.group("format"), files))
    return found


EXAMPLES = examples()


def test_the_document_holds_examples_and_the_readme_links_it() -> None:
    assert len(EXAMPLES) >= len(FORMATS)
    assert all(files for _, _, files in EXAMPLES)
    assert "(docs/corpus-formats.md)" in README.read_text(encoding="utf-8")


def test_every_registered_format_has_an_example() -> None:
    assert {fmt for _, fmt, _ in EXAMPLES} == set(FORMATS)


@pytest.mark.parametrize(("fmt", "files"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_each_example_folder_validates_as_its_format(tmp_path: Path, fmt: str, files: dict[str, str]) -> None:
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content, encoding="utf-8")
    detected = CliRunner().invoke(main, ["corpora", "validate", str(tmp_path)])
    assert detected.exit_code == 0, detected.output
    assert detected.output.startswith(f"{tmp_path.name} ({fmt}) from ")
    assert "\nvalid: " in detected.output  # "valid with N warning(s)" would mean the example is sloppy
    forced = CliRunner().invoke(main, ["corpora", "validate", "--format", fmt, str(tmp_path)])
    assert forced.exit_code == 0, forced.output


def test_the_detection_table_follows_the_registry_order() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("<!-- detection order -->"):].split("\n\n")[0]
    listed = re.findall(r"^\| \d+ \| `(\w+)` \|", table, re.M)
    assert listed == list(FORMATS)


_FACETS = re.compile(r"<!-- facets example: (?P<name>[\w.-]+) -->\n```[a-z]*\n(?P<content>.*?)^```$", re.S | re.M)


def test_the_facets_side_file_examples_add_facets_to_the_beir_example(tmp_path: Path) -> None:
    from corpora import load_dataset, load_facets_file, with_facets

    found = {m.group("name"): m.group("content") for m in _FACETS.finditer(DOC.read_text(encoding="utf-8"))}
    assert sorted(found) == ["topics.csv", "topics.jsonl"]
    (_, _, files), = [e for e in EXAMPLES if e[0] == "beir"]
    for relative, content in files.items():
        (tmp_path / "beir" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "beir" / relative).write_text(content, encoding="utf-8")
    dataset = load_dataset(str(tmp_path / "beir"))
    for name, content in found.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        faceted = with_facets(dataset, load_facets_file(path, dataset.queries.ids), source=name)
        assert faceted.queries.facets["topic"] == ["billing", "account"], name
        assert faceted.queries.facets["popularity"] == [120, 8 if name.endswith(".csv") else None], name
