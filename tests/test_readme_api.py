"""The "Python API" page's example (docs/python-api.md, moved there from the README) runs as written,
in a fresh interpreter, and prints what the page shows: the article's numbers for bm25 and rrf, a custom retriever beside them, and a results folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from harness.core.options import Scoring, Statistics

REPO = Path(__file__).resolve().parents[1]
SECTION = REPO.joinpath("docs", "python-api.md").read_text(encoding="utf-8").split("\n## Python API\n")[1].split("\n## ")[0]


def block(language: str) -> str:
    return SECTION.split(f"```{language}\n")[1].split("```")[0]


def test_the_page_comes_after_the_commands_page_in_the_sites_navigation() -> None:
    pages = re.findall(r"^\s*- [^:\n]+: (\S+\.md)$", REPO.joinpath("mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert pages.index("python-api.md") == pages.index("commands.md") + 1


def test_the_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    example = block("python")
    assert "from harness import compare" in example and "RRF(BM25(), LSA())" in example
    assert "class Overlap(ScoreRetriever)" in example and "result.write(" in example
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "TMPDIR": str(tmp_path)}  # where the example's tempfile.mkdtemp() writes
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == block("text")
    assert done.stderr == ""  # silent: no progress line, no warning


def test_the_option_groups_example_runs_and_its_options_reach_the_run() -> None:
    """The page's option-groups example runs as written, and the groups it passes are the ones the result ran with."""
    example = next(part.split("```")[0] for part in SECTION.split("```python\n")[1:] if "Scoring(depth=100)" in part)
    scope: dict[str, object] = {}
    exec(compile(example, "python-api.md", "exec"), scope)  # noqa: S102 - the page's own example
    result = scope["result"]
    assert list(result.summary["system"]) == ["bm25", "lsa"]
    config = result.config
    assert (config.scoring.depth, config.statistics.bootstrap_samples, config.statistics.seed) == (100, 2000, 1)
    assert config.scoring == Scoring(depth=100) and config.statistics == Statistics(bootstrap_samples=2000, seed=1)
