"""The `bench tune` page (docs/tune.md, moved there from the README) shows what the code prints: the Python example on the bundled
corpus, and the Cranfield example (when the real collections, ../shared/data or $RETBENCH_DATA, have Cranfield)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from harness.cli import main
from tests.conftest import real_data

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO.joinpath("docs", "tune.md").read_text(encoding="utf-8")
SECTION = PAGE.split("\n## Tuning parameters: `bench tune`\n")[1].split("\n## ")[0]


def blocks(language: str) -> list[str]:
    return [part.split("```")[0] for part in SECTION.split(f"```{language}\n")[1:]]


def test_the_commands_table_lists_bench_tune() -> None:
    commands = REPO.joinpath("docs", "commands.md").read_text(encoding="utf-8").split("\n## Commands\n")[1].split("\n## ")[0]
    assert "| `bench tune GRID" in commands
    assert main.get_command(None, "tune") is not None  # the table lists a command bench has


def test_the_python_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    (example,) = blocks("python")
    assert "from harness import tune" in example
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == blocks("text")[1]


def test_the_cranfield_example_prints_what_the_page_shows(runner, tmp_path: Path) -> None:
    cranfield = real_data("cranfield")
    (command,) = blocks("bash")
    words = shlex.split(command.strip())
    assert words[:2] == ["bench", "tune"]
    words = [str(cranfield) if w == "../shared/data/cranfield" else w for w in words[2:]]
    result = runner.invoke(main, ["tune", *words, "--out", str(tmp_path), "--no-cache"])
    assert result.exit_code == 0, result.output
    # the page leaves out the results folder's path, printed after the first line and last
    first, second, *rest = result.stdout.splitlines()
    assert second == rest[-1] and rest[-2] == "" and Path(second.removeprefix("results: ")).parent == tmp_path
    assert "\n".join([first, *rest[:-2]]) + "\n" == blocks("text")[0]


def test_the_section_shows_the_report_and_its_chart_of_the_cranfield_grid() -> None:
    """The report is described with real options only, and the chart shown is the one of the
    Cranfield search the section prints: its legend names the same choice and in-sample best."""
    import re

    from harness.cli.report import command as report_command
    from harness.cli.tune import command as tune_command

    assert "`bench report TUNE_DIR`" in SECTION and "the HTML report draws it" in SECTION
    assert "does not draw it yet" not in PAGE
    options = {flag for c in (tune_command, report_command) for p in c.params for flag in getattr(p, "opts", [])}
    named = set(re.findall(r"`(--[a-z][a-z-]*)", SECTION))
    assert {"--report", "--format"} <= named <= options, named - options
    (link,) = re.findall(r"\]\((tune-grid\.svg)\)", SECTION)
    chart = (REPO / "docs" / link).read_text(encoding="utf-8")
    printed = blocks("text")[0]
    chosen = re.search(r"chosen on all queries: (k1=\S+), (b=\S+) ->", printed).groups()
    best = re.search(r"in-sample best \(optimistic\)\s+(\d\.\d{3})", printed).group(1)
    assert chart.startswith("<?xml") and "<image" not in chart  # vectors and text only
    assert f"chosen on all queries (the in-sample best): {chosen[0]}, {chosen[1]}, {best}</text>" in chart
