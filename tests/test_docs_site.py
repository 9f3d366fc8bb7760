"""The README is a front door and the documentation site holds the rest (issues 31 and 35): the README
stays short and carries both quick-start commands, the first of which prints what the README shows and
separates the systems on its first metric; CI runs the second verbatim; every page of docs/ is in
mkdocs.yml's navigation; every relative link of the README and the pages reaches a file."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from harness.cli import main

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
TEST_COMMAND = 'pip install -e ".[test]" && python -m pytest'
README_LIMIT = 250  # lines; the front door aims at about 200


def quick_start() -> list[str]:
    section = README.split("\n## Quick start\n")[1].split("\n## ")[0]
    return section.split("```bash\n")[1].split("```")[0].splitlines()


def pages() -> list[Path]:
    """Every Markdown page of the site (docs/hooks holds the build's Python hook, not pages)."""
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def test_the_readme_is_a_front_door_with_both_quick_start_commands() -> None:
    assert len(README.splitlines()) <= README_LIMIT
    run, test = quick_start()
    assert run.startswith("pip install . && bench compare ")
    assert test == TEST_COMMAND


def test_ci_runs_the_readmes_test_command_verbatim_in_both_halves_and_builds_the_docs() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert [line.strip() for line in ci.splitlines() if line.strip() == TEST_COMMAND] == [TEST_COMMAND] * 2
    assert re.search(r'pip install -e "\.\[docs\]" && mkdocs build --strict', ci)
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    docs_extra = pyproject.split("\ndocs = [\n")[1].split("]\n")[0]
    assert all(name in docs_extra for name in ('"mkdocs>=', '"mkdocs-material>=', '"mkdocstrings[python]>='))


def test_the_readmes_main_command_prints_what_the_readme_shows_and_separates_the_systems(runner, tmp_path) -> None:
    words = shlex.split(quick_start()[0].split("&&")[1])
    assert words[0] == "bench"
    result = runner.invoke(main, [*words[1:], "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    printed = result.output.splitlines()
    blocks = re.findall(r"```\n(.*?)```", README.split("\n## What you get\n")[1].split("\n## ")[0], re.S)
    assert len(blocks) == 2
    for block in blocks:
        for line in block.splitlines():
            assert line in printed, line
    # the results folder is new, under --out, and its path is printed second and last
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    lines = result.stdout.rstrip("\n").splitlines()
    assert lines[1] == lines[-1] == f"results: {folder}"
    # issue 35: the first metric of the front door's command tells the systems apart
    metrics = words[words.index("--metrics") + 1].split(",")
    summary = (folder / "summary.csv").read_text(encoding="utf-8").splitlines()
    first = summary[0].split(",").index(metrics[0])
    assert len({row.split(",")[first] for row in summary[1:]}) > 1


def test_every_page_of_docs_is_in_the_navigation_and_every_nav_entry_exists() -> None:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    nav = re.findall(r"^\s*- [^:\n]+: (\S+\.md)$", config.split("\nnav:\n")[1], re.M)
    assert len(nav) == len(set(nav))
    assert sorted(nav) == sorted(p.relative_to(DOCS).as_posix() for p in pages())


def test_every_relative_link_of_the_readme_and_the_pages_reaches_a_file() -> None:
    broken = []
    for document in [REPO / "README.md", *pages()]:
        text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.S)  # code is not links
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a web address, or a heading of the same page
            path = target.split("#")[0]
            if not (document.parent / path).exists():
                broken.append(f"{document.relative_to(REPO)}: {target}")
    assert broken == []


def test_measured_speeds_live_in_benchmarks_results_not_in_the_readme() -> None:
    """Speed and memory numbers (q/s, seconds, MB) are on one generated page; the README links it."""
    assert "](benchmarks/RESULTS.md)" in README
    assert not re.search(r"\d[\d,.]* ?(?:q/s|ms|MB|KB|GB)\b|\d+(?:\.\d+)? s\b|\d+(?:\.\d+)?x (?:faster|slower)", README)
    assert (DOCS / "benchmarks.md").read_text(encoding="utf-8").strip() == '--8<-- "benchmarks/RESULTS.md"'
