"""``bench serve`` as a command: how to install the extra when it is absent, a missing folder, loopback
by default and a warning for any other address (issue 15). No server is started here: uvicorn.run is
replaced by a recorder (tests/test_serve_live.py runs a real one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.serve import is_loopback

MISSING = "bench serve needs fastapi and uvicorn, which are not installed. Fix: pip install 'retbench[serve]'"


def test_without_the_extra_serve_says_how_to_install_it(runner, monkeypatch, tmp_path: Path) -> None:
    # a None entry in sys.modules: find_spec returns None and an import fails, as without the extra
    for name in ("fastapi", "uvicorn"):
        monkeypatch.setitem(sys.modules, name, None)
    result = runner.invoke(main, ["serve", "--results", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {MISSING}"


def test_a_results_folder_that_is_not_there_is_an_error(runner, tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="needs the serve extra (the extra's absence is the error otherwise)")
    pytest.importorskip("uvicorn", reason="needs the serve extra")
    result = runner.invoke(main, ["serve", "--results", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert f"--results {tmp_path / 'nowhere'}: no such folder. Fix:" in result.stderr


@pytest.mark.parametrize(("host", "warned"), [(None, False), ("::1", False), ("0.0.0.0", True), ("192.0.2.7", True)])
def test_loopback_unless_host_says_otherwise_and_then_a_warning(runner, monkeypatch, tmp_path: Path, host: str | None,
                                                                warned: bool) -> None:
    pytest.importorskip("fastapi", reason="needs the serve extra")
    uvicorn = pytest.importorskip("uvicorn", reason="needs the serve extra")
    calls: list[dict] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.append({"app": app, **options}))
    result = runner.invoke(main, ["serve", "--results", str(tmp_path), "--port", "8123",
                                  *(["--host", host] if host else [])])
    assert result.exit_code == 0, result.output
    (call,) = calls
    assert (call["host"], call["port"]) == (host or "127.0.0.1", 8123)
    assert ("warning: serving on" in result.stderr) is warned
    if warned:
        assert f"anyone who can reach this address can read every run under {tmp_path}" in result.stderr


def test_what_counts_as_loopback() -> None:
    assert [is_loopback(h) for h in ("127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]")] == [True] * 5
    assert [is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "example.invalid")] == [False] * 4


def test_serve_is_listed_with_its_options(runner) -> None:
    listing = runner.invoke(main, ["--help"])
    assert "serve" in listing.output
    helped = runner.invoke(main, ["serve", "--help"])
    assert helped.exit_code == 0
    for option in ("--results", "--host", "--port"):
        assert option in helped.output
