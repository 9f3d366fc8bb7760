"""A live ``bench serve`` on 127.0.0.1 and a free port, loaded by headless Chromium (issue 15): the
DOM it builds shows the same five numbers per system as the API, and its screenshot is not blank.

Chromium is Debian's package (``.ci/run`` installs it); without it, or without the serve extra, the
test skips and says why. The browser reaches only the loopback server: networking features that
would call out (QUIC, background networking, component updates, sync) are switched off.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from harness.readings.retrieval_metrics import CARD_METRICS

pytest.importorskip("fastapi", reason="bench serve needs the serve extra: pip install 'retbench[serve]'")
pytest.importorskip("uvicorn", reason="bench serve needs the serve extra: pip install 'retbench[serve]'")

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and os.access(p, os.X_OK)), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 (a loopback address of our own)
        return answer.read()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``bench serve`` in a process of its own, on a free loopback port, until the module's tests end."""
    from click.testing import CliRunner

    from harness.cli import main

    root = tmp_path_factory.mktemp("live")
    made = CliRunner().invoke(main, ["compare", "--no-cache", "-q", "--out", str(root), "--bootstrap-samples", "300"])
    assert made.exit_code == 0, made.output
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", "from harness.cli import main; main()", "serve",
                                "--results", str(root), "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                get(f"{base}/api/v1/evals/runs")
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"bench serve ended: {process.stderr.read().decode()}")
                time.sleep(0.1)
        else:
            pytest.fail("bench serve did not answer within 20 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_port_in_use_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    """The real process, not the test runner: uvicorn's own log and exit code 3 never show."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "serve", "--results",
                               str(tmp_path), "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: cannot listen on 127.0.0.1:{port}: the port is in use") and "--port" in line


def test_the_live_server_refuses_other_hosts(server: str) -> None:
    port = int(server.rsplit(":", 1)[1])
    for host, status in ((f"127.0.0.1:{port}", 200), (f"localhost:{port}", 200), (f"evil.example:{port}", 400),
                         ("evil.example", 400)):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.putrequest("GET", "/api/v1/evals/runs", skip_host=True)
            connection.putheader("Host", host)
            connection.endheaders()
            answer = connection.getresponse()
            body = answer.read()
        finally:
            connection.close()
        assert answer.status == status, (host, body)
        assert (b'"items"' in body) is (status == 200)


def chromium(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian's chromium package; .ci/run installs it)")
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *arguments],
                          capture_output=True, timeout=120, check=False)


def test_the_api_answers_on_loopback(server: str) -> None:
    runs = json.loads(get(f"{server}/api/v1/evals/runs"))
    assert runs["total"] == 1 and runs["items"][0]["systems"] == ["bm25", "lsa", "weighted", "rrf"]


def test_chromium_shows_the_apis_five_numbers_per_system(server: str, tmp_path: Path) -> None:
    run_id = json.loads(get(f"{server}/api/v1/evals/runs"))["items"][0]["id"]
    metrics = json.loads(get(f"{server}/api/v1/evals/runs/{run_id}/metrics"))
    dumped = chromium(tmp_path, "--dump-dom", f"{server}/runs/{run_id}")
    assert dumped.returncode == 0, dumped.stderr.decode()[-2000:]
    dom = dumped.stdout.decode()
    assert len(metrics["systems"]) == 4
    for system in metrics["systems"]:
        card = re.search(rf'<section class="card" data-system="{re.escape(system["system"])}">(.*?)</section>', dom,
                         flags=re.S)
        assert card is not None, system["system"]
        shown = {name: (float(value), text) for name, value, text in
                 re.findall(r'data-metric="(\w+)" data-value="([^"]+)">([0-9.]+) ', card.group(1))}
        assert list(shown) == list(CARD_METRICS)
        for name, value in system["retrievalMetrics"].items():
            assert shown[name] == (value, f"{value:.3f}"), (system["system"], name)


def test_the_screenshot_is_not_blank(server: str, tmp_path: Path) -> None:
    matplotlib_image = pytest.importorskip("matplotlib.image", reason="reading the PNG needs matplotlib (serve extra)")
    run_id = json.loads(get(f"{server}/api/v1/evals/runs"))["items"][0]["id"]
    shot = tmp_path / "run.png"
    taken = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,1600", f"{server}/runs/{run_id}")
    assert taken.returncode == 0 and shot.is_file(), taken.stderr.decode()[-2000:]
    pixels = matplotlib_image.imread(shot)[:, :, :3]
    drawn = (pixels < 0.94).any(axis=2).mean()  # share of pixels that are not (near) white
    assert drawn > 0.03, f"only {drawn:.1%} of the screenshot is drawn"
    assert len({tuple(p) for p in pixels[::16, ::16].reshape(-1, 3).round(2).tolist()}) > 20  # text, cards, chart
