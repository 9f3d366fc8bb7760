"""Shared fixtures: the CLI runner, a fresh interpreter and the location of the real collections."""

from __future__ import annotations

import subprocess
import sys
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
def fresh_python():
    """``run(code)``: ``code`` run by a fresh interpreter at the repository root (what it imports is
    its own), its stdout stripped; the test fails, showing stderr, if it exits non-zero."""
    def run(code: str, timeout: int = 120) -> str:
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    return run


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (a fresh clone has no real collections); these tests need it")
    return SHARED_DATA


#: Manifest entries that differ between two runs of the same inputs: when, how it was called, where
#: it ran and how long it took (engines change where work runs, never a result).
VOLATILE_MANIFEST_KEYS = ("time", "run_id", "command_line", "engine")
VOLATILE_SYSTEM_KEYS = ("fit_seconds", "search_seconds")


def _same_results(first: Path, second: Path) -> None:
    """Assert that two results folders hold the same bytes in every file, but for the run id (in
    the folder name, and the lines of retrieval_metrics.jsonl) and the manifest's volatile entries.
    The manifest's ``files`` must hold each file's SHA-256 (a file holding the run id differs in
    its hash too, so they are checked against the files rather than against each other)."""
    import hashlib
    import json

    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in files:
        a, b = (first / name).read_bytes(), (second / name).read_bytes()
        if name.name == "manifest.json":
            documents = [json.loads(a), json.loads(b)]
            for folder, document in zip((first, second), documents):
                assert document.pop("files") == {
                    str(p.relative_to(folder).as_posix()): "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"}
                for key in VOLATILE_MANIFEST_KEYS:
                    document.pop(key)
                for system in document["systems"]:
                    for key in VOLATILE_SYSTEM_KEYS:
                        system.pop(key)
            assert documents[0] == documents[1]
        else:
            a, b = a.replace(first.name.encode(), b"RUN"), b.replace(second.name.encode(), b"RUN")
            assert a == b, f"{name} differs"


@pytest.fixture
def assert_same_results():
    """``assert_same_results(folder_a, folder_b)``: see :func:`_same_results`."""
    return _same_results
