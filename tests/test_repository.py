"""The checkout itself: no file git tracks holds a merge-conflict marker (a README with one still
renders, and tests that read only parts of it would not notice)."""

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
