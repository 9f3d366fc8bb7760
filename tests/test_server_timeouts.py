"""Every server drops a client that does not send its whole request in time: one that sends less than
its Content-Length, or trickles its headers a byte at a time, is closed within the time limit (1 s
here), while a normal request is served meanwhile. Both run on one stack (harness.web: FastAPI apps,
uvicorn with BoundedH11Protocol): the judging page in a thread, as bench judge serves it; bench serve
as the command runs it, in a subprocess. Both need the serve extra (skipped without it)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from corpora import DEFAULT_ANALYZER, get_analyzer, load_dataset
from harness.judgments.judge_app import JudgingSession

REPO = Path(__file__).resolve().parents[1]
LIMIT = 1.0  # the servers' time limit in these tests
DROPPED_WITHIN = 6.0  # seconds a dropped client may wait to see it: the limit, and room for a slow machine


def _connect(port: int) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.settimeout(0.2)
    return client


def _closed(client: socket.socket) -> bool:
    """Whether the server has closed ``client`` (what it answered before is skipped)."""
    try:
        return client.recv(65536) == b""
    except socket.timeout:
        return False
    except ConnectionError:
        return True


def _wait_dropped(client: socket.socket, trickle: bytes = b"") -> float:
    """Seconds until the server drops ``client``, sending ``trickle`` a byte at a time meanwhile
    (a client that keeps the connection busy); fails past DROPPED_WITHIN."""
    began = time.monotonic()
    position = 0
    while time.monotonic() - began < DROPPED_WITHIN:
        if _closed(client):
            return time.monotonic() - began
        if trickle:
            try:
                client.sendall(trickle[position % len(trickle):position % len(trickle) + 1])
            except OSError:
                return time.monotonic() - began
            position += 1
    raise AssertionError(f"the server still holds the connection after {DROPPED_WITHIN} s")


def _get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as answer:
        answer.read()
        return answer.status


def _slow_clients(port: int, path: str, url: str) -> None:
    """Two slow clients, a normal request served while they hang, both dropped in time."""
    short_body = _connect(port)
    trickler = _connect(port)
    try:
        short_body.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           "Content-Length: 100\r\n\r\n{\"a\":".encode())
        trickler.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHo")
        assert _get(url) == 200  # served while both hang
        assert _wait_dropped(short_body, trickle=b" ") < DROPPED_WITHIN  # its body, a byte now and then
        assert _wait_dropped(trickler, trickle=b"X-Slow: 1\r\n") < DROPPED_WITHIN
        assert _get(url) == 200  # and still serving
    finally:
        short_body.close()
        trickler.close()


def test_the_judging_page_drops_a_slow_client(tmp_path, web_server, monkeypatch):
    from harness.judgments.judge_page import create_app
    from harness.web import protocol

    monkeypatch.setattr(protocol, "REQUEST_TIME_LIMIT", LIMIT)
    pool = [("q01", "sso1")]
    session = JudgingSession(pool, load_dataset("article"), tmp_path / "judged.txt", get_analyzer(DEFAULT_ANALYZER))
    try:
        port = web_server(create_app(session))
        _slow_clients(port, "/api/state", f"http://127.0.0.1:{port}/api/state")
        # a write whose body stops short: dropped, nothing written
        post = _connect(port)
        try:
            post.sendall(f"POST /api/judge HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         f"X-Judge-Token: {session.token}\r\nContent-Length: 60\r\n\r\n{{\"query_id\":".encode())
            assert _wait_dropped(post) < DROPPED_WITHIN
        finally:
            post.close()
        assert not (tmp_path / "judged.txt").exists()
    finally:
        session.close()


def test_bench_serve_drops_a_slow_client(tmp_path):
    pytest.importorskip("uvicorn", reason="bench serve needs the serve extra")
    pytest.importorskip("fastapi", reason="bench serve needs the serve extra")
    code = (f"import harness.web.protocol as protocol\nprotocol.REQUEST_TIME_LIMIT = {LIMIT}\n"
            "from harness.cli import main\nmain()")
    process = subprocess.Popen([sys.executable, "-c", code, "serve", "--results", str(tmp_path), "--port", "0"],
                               cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        line = process.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found is not None, line + (process.stderr.read() if process.poll() is not None else "")
        port = int(found.group(1))
        for _ in range(100):  # uvicorn starts accepting just after the line is printed
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        _slow_clients(port, "/api/v1/evals/runs", f"http://127.0.0.1:{port}/api/v1/evals/runs")
    finally:
        process.kill()
        process.wait(30)
        process.stderr.close()
