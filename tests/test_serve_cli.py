"""``bench serve`` as a command: how to install the extra when it is absent, a missing folder, loopback
by default and a warning for any other address (issue 15); the hosts it answers, and a port in use or
an address not of this machine as one error line before anything is announced (issue 30). The
socket is really bound, but no server is run: uvicorn's Server.run is replaced by a recorder
(tests/test_serve_live.py runs a real one)."""

from __future__ import annotations

import socket
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


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.fixture
def served(monkeypatch) -> list[dict]:
    """uvicorn's server recorded instead of run: its app and the sockets handed to it (then closed)."""
    pytest.importorskip("fastapi", reason="needs the serve extra")
    uvicorn = pytest.importorskip("uvicorn", reason="needs the serve extra")
    calls: list[dict] = []

    def record(server, sockets=None) -> None:
        calls.append({"app": server.config.app, "sockets": [s.getsockname() for s in sockets],
                      "listening": [s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) for s in sockets]})

    monkeypatch.setattr(uvicorn.Server, "run", record)
    return calls


@pytest.mark.parametrize(("host", "warned"), [(None, False), ("::1", False), ("0.0.0.0", True)])
def test_loopback_unless_host_says_otherwise_and_then_a_warning(runner, served, tmp_path: Path, host: str | None,
                                                                warned: bool) -> None:
    if host == "::1" and not ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback")
    result = runner.invoke(main, ["serve", "--results", str(tmp_path), "--port", "0",
                                  *(["--host", host] if host else [])])
    assert result.exit_code == 0, result.output
    (call,) = served
    ((address, port, *_),) = call["sockets"]
    assert address == (host or "127.0.0.1") and port > 0 and call["listening"] == [1]  # bound before announced
    shown = f"[{address}]" if ":" in address else address
    announced = f"bench serve: {tmp_path.resolve()} on http://{shown}:{port}/ (Ctrl-C stops)"
    assert result.stderr.splitlines()[-1] == announced
    assert ("warning: serving on" in result.stderr) is warned
    if warned:
        assert f"anyone who can reach this address can read every run under {tmp_path}" in result.stderr


def test_the_app_answers_host_and_allowed_hosts_and_loopback_only(runner, served, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    result = runner.invoke(main, ["serve", "--results", str(tmp_path), "--port", "0", "--host", "0.0.0.0",
                                  "--allowed-host", "Evals.Example", "--allowed-host", "192.0.2.7"])
    assert result.exit_code == 0, result.output
    client = TestClient(served[0]["app"])
    for host in ("evals.example:8000", "192.0.2.7", "0.0.0.0:8000", "localhost:8000", "127.0.0.1"):
        assert client.get("/api/v1/evals/runs", headers={"Host": host}).status_code == 200, host
    for host in ("other.example", "192.0.2.8:8000", "testserver"):
        assert client.get("/api/v1/evals/runs", headers={"Host": host}).status_code == 400, host


@pytest.mark.parametrize("name", ["evals.example:8000", "http://evals.example", "*.example", ""])
def test_a_bad_allowed_host_is_an_error(runner, served, tmp_path: Path, name: str) -> None:
    result = runner.invoke(main, ["serve", "--results", str(tmp_path), "--allowed-host", name])
    assert result.exit_code == 2 and not served
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: --allowed-host {name!r}: ") and "Fix: give the name or address" in line


def test_a_port_in_use_is_one_error_line_before_anything_is_announced(runner, served, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(main, ["serve", "--results", str(tmp_path), "--port", str(port)])
    assert result.exit_code == 2 and not served
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: cannot listen on 127.0.0.1:{port}: the port is in use") and "--port" in line


def test_an_address_not_of_this_machine_is_one_error_line(runner, served, tmp_path: Path) -> None:
    result = runner.invoke(main, ["serve", "--results", str(tmp_path), "--host", "192.0.2.7", "--port", "0"])
    assert result.exit_code == 2 and not served
    (line,) = result.stderr.splitlines()  # no warning about 192.0.2.7 either: nothing was served on it
    assert line.startswith("error: cannot listen on 192.0.2.7:0: ") and "Fix: name an address of this machine" in line


def test_what_counts_as_loopback() -> None:
    assert [is_loopback(h) for h in ("127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]")] == [True] * 5
    assert [is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "example.invalid")] == [False] * 4


def test_serve_is_listed_with_its_options(runner) -> None:
    listing = runner.invoke(main, ["--help"])
    assert "serve" in listing.output
    helped = runner.invoke(main, ["serve", "--help"])
    assert helped.exit_code == 0
    for option in ("--results", "--host", "--port", "--allowed-host"):
        assert option in helped.output
