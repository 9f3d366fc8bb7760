"""Shared fixtures: the CLI runner and the location of the real collections."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Keep every test's index and embedding cache out of the user's real cache folder."""
    monkeypatch.setenv("RETBENCH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "retbench-cache"))


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (a fresh clone has no real collections); these tests need it")
    return SHARED_DATA
