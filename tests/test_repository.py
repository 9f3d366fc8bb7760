"""The checkout itself: no file git tracks holds a merge-conflict marker (a README with one still
renders, and tests that read only parts of it would not notice), and what `pip install .` or a
run leaves in it is ignored."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)


def tracked_text_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / name for name in listed.splitlines()
            if name.endswith((".py", ".md", ".toml", ".txt", ".csv", ".tsv", ".jsonl", ".tex", ".cfg")) or
            name.startswith(".ci/")]


def test_no_tracked_file_holds_a_merge_conflict_marker() -> None:
    found = []
    for path in tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in MARKER.finditer(text):
            found.append(f"{path.relative_to(REPO)}:{text.count(chr(10), 0, match.start()) + 1}")
    assert found == []


@pytest.mark.parametrize("left", ["build/lib/harness/__init__.py", "retbench.egg-info/PKG-INFO",
                                  "dist/retbench-0.1.0-py3-none-any.whl", "results/20260101-000000-article-0a36c0fd/summary.csv"])
def test_what_an_install_or_a_run_leaves_is_ignored(left: str) -> None:
    """`pip install .` (setuptools) leaves build/ and retbench.egg-info/; `bench compare` writes results/."""
    try:
        done = subprocess.run(["git", "check-ignore", "--no-index", "-q", left], cwd=REPO, capture_output=True)
    except OSError:
        pytest.skip("git is absent")
    if done.returncode == 128:
        pytest.skip("not a git checkout")
    assert done.returncode == 0, f"{left} is not ignored by .gitignore"
