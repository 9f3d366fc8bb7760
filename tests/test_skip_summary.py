"""A run of the suite ends by saying why tests were skipped, one line per reason with its count
(the root conftest's ``pytest_terminal_summary``): a fresh clone skips most of the suite for want of
an extra or of the real collections, and "166 skipped" alone does not say which."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SKIPPING = '''
import pytest

needs_x = pytest.mark.skipif(True, reason="the x extra is not installed: pip install 'retbench[x]'")


@needs_x
def test_one():
    pass


@needs_x
def test_two():
    pass


def test_three():
    pytest.skip("../shared/data is absent")


def test_four():
    pass


def test_five():
    pass
'''


def run_pytest(folder: Path) -> str:
    # no third-party plugins: the hook is the root conftest's own
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)], cwd=folder,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_run_ends_with_each_skip_reason_and_its_count(tmp_path) -> None:
    shutil.copy(REPO / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_skipping.py").write_text(SKIPPING, encoding="utf-8")
    lines = run_pytest(tmp_path).splitlines()
    heading = next(i for i, line in enumerate(lines) if "3 skipped: what would run them" in line)
    assert [line for line in lines[heading + 1:] if line.strip()][:2] == ["    2  the x extra is not installed: pip install 'retbench[x]'",
                                              "    1  ../shared/data is absent"]
    assert "2 passed, 3 skipped" in lines[-1]

