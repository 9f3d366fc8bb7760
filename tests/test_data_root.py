"""The real collections are looked for where ``RETBENCH_DATA`` says (default ``../shared/data``
beside the repository), and a test that does not find them skips naming the folder it looked in
(tests/conftest.py: :func:`data_root`, :func:`absent`, :func:`real_data`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, absent, data_root, real_data


def test_without_the_variable_the_data_is_looked_for_beside_the_repository(monkeypatch) -> None:
    monkeypatch.delenv("RETBENCH_DATA", raising=False)
    assert data_root() == REPO.parent / "shared" / "data"
    monkeypatch.setenv("RETBENCH_DATA", "")
    assert data_root() == REPO.parent / "shared" / "data"


def test_the_variable_names_the_folder_and_a_relative_one_is_read_from_the_working_directory(
        monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RETBENCH_DATA", str(tmp_path / "collections"))
    assert data_root() == (tmp_path / "collections").resolve()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RETBENCH_DATA", "elsewhere")
    assert data_root() == (tmp_path / "elsewhere").resolve()


def test_the_skip_reason_names_the_folder_and_the_variable(tmp_path: Path) -> None:
    reason = absent(tmp_path / "cranfield")
    assert str(tmp_path / "cranfield") in reason and "RETBENCH_DATA" in reason


def run_pytest(test: str, data: Path) -> str:
    """``pytest -rs test`` in a fresh interpreter at the repository root, with RETBENCH_DATA=data."""
    env = {**os.environ, "RETBENCH_DATA": str(data), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_real_collection_test_honours_the_variable_and_skips_naming_where_it_looked(tmp_path: Path) -> None:
    """Pointed at an empty folder, a test that needs Cranfield skips and says where it looked;
    pointed at a folder that holds Cranfield (a link to the real one, when it is here), it runs."""
    empty = tmp_path / "no collections here"
    empty.mkdir()
    test = "tests/test_corpora_cli.py::test_forcing_the_generic_smart_reader_on_cranfield_stops_at_the_unmatched_queries"
    skipped = run_pytest(test, empty)
    assert "1 skipped" in skipped
    assert f"{empty / 'cranfield'} is absent" in skipped and "RETBENCH_DATA" in skipped
    try:
        cranfield = real_data("cranfield")
    except pytest.skip.Exception:
        return  # no real collection here to point at: the skip above is all that can be shown
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "cranfield").symlink_to(cranfield, target_is_directory=True)
    ran = run_pytest(test, elsewhere)
    assert "1 passed" in ran and "skipped" not in ran
