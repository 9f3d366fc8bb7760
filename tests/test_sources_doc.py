"""docs/corpus-formats.md's sections on sources that are not folders run as written: the
DataFrame/Parquet example prints what the page shows and its `bench evaluate` line scores both
files alike; the ir_datasets example reads the bundled corpus's folder under an id; the table names
every run file suffix retbench knows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from corpora.bundled import bundled_path
from corpora.loading import SOURCES
from corpora.run import RUN_FILE_FORMATS
from harness.cli import main

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "corpus-formats.md").read_text(encoding="utf-8")
IRDS_SECTION = DOC.split("\n## ir_datasets ids (`irds:`)\n")[1].split("\n## ")[0]
RUNS_SECTION = DOC.split("\n## Runs and judgments from other tools: DataFrames, Parquet, ranx\n")[1].split("\n## ")[0]


def _blocks(section: str, language: str) -> list[str]:
    """Fenced blocks of ``language``, their indentation (inside a list item) removed."""
    found = re.findall(rf"^( *)```{language}\n(.*?)^\1```", section, re.S | re.M)
    return ["".join(line[len(indent):] + "\n" for line in body.splitlines()) for indent, body in found]


def _run(code: str, cwd: Path, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
                               **env})
    assert done.returncode == 0, done.stderr
    return done.stdout


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]  # pandas pads its index line


def test_the_table_names_every_run_file_suffix_and_the_page_every_source() -> None:
    assert {"trec", "tsv", "parquet"} <= set(RUN_FILE_FORMATS) and SOURCES  # the loops below check something
    for fmt in RUN_FILE_FORMATS.values():
        for suffix in fmt.suffixes:
            assert f"`{suffix}`" in RUNS_SECTION, suffix
    for prefix in SOURCES:
        assert f"--corpus {prefix}:" in IRDS_SECTION


def test_the_dataframe_and_parquet_example_prints_what_the_page_shows(runner, tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("pyarrow", reason='the example writes a Parquet run: pip install "retbench[parquet]"')
    (example,) = _blocks(RUNS_SECTION, "python")
    printed = _run(example, tmp_path)
    assert _lines(printed) == _lines(_blocks(RUNS_SECTION, "text")[0])
    (command,) = [line for line in RUNS_SECTION.splitlines() if "`bench evaluate --qrels" in line]
    words = command.split("`")[1].split()
    assert words[:3] == ["bench", "evaluate", "--qrels"]
    (tmp_path / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d9 1\nq2 0 d2 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, [*words[1:], "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = [line.split(",", 1) for line in result.stdout.splitlines()[1:]]
    by_file = {run: [rest for name, rest in rows if name == run] for run in ("mine.parquet", "mine.trec")}
    assert by_file["mine.parquet"] == by_file["mine.trec"] and len(by_file["mine.trec"]) == 3


def test_the_ir_datasets_example_reads_a_beir_folder_under_an_id(tmp_path: Path) -> None:
    pytest.importorskip("ir_datasets", reason='the example registers a dataset: pip install "retbench[irds]"')
    (example,) = _blocks(IRDS_SECTION, "python")
    assert 'folder = "my_beir_folder"' in example
    code = example.replace('"my_beir_folder"', repr(str(bundled_path("article"))))
    printed = _run(code, tmp_path, IR_DATASETS_HOME=str(tmp_path / "home"))
    assert _lines(printed) == _lines(_blocks(IRDS_SECTION, "text")[1])
