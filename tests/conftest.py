"""Shared fixtures: the CLI runner, a fresh interpreter and the location of the real collections.

The real collections (Cranfield, CISI, trec_eval's own test suite, ...) are looked for in the folder
the environment variable ``RETBENCH_DATA`` names, else in ``../shared/data`` beside the repository
(:data:`SHARED_DATA`); a test that needs one and does not find it skips with :func:`absent`'s
reason, which names the folder it looked in.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]


def data_root() -> Path:
    """The folder of the real collections: ``$RETBENCH_DATA`` (a relative path is read from the
    working directory), else ``../shared/data`` beside the repository."""
    named = os.environ.get("RETBENCH_DATA", "").strip()
    return Path(named).expanduser().resolve() if named else REPO.parent / "shared" / "data"


#: Where the real collections are looked for (:func:`data_root`, read once when the tests load).
SHARED_DATA = data_root()


def absent(path: Path) -> str:
    """The skip reason of a test that needs ``path`` (:data:`SHARED_DATA` or a folder in it) and
    does not find it: the path looked at, and how to point the tests elsewhere."""
    return (f"{path} is absent (a fresh clone has no real collections; set RETBENCH_DATA to the folder "
            f"that holds them, default ../shared/data beside the repository)")


def real_data(*names: str) -> Path:
    """``SHARED_DATA / names...``, or skip the calling test with :func:`absent`'s reason."""
    path = SHARED_DATA.joinpath(*names)
    if not path.exists():
        pytest.skip(absent(path))
    return path


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Keep every test's index and embedding cache out of the user's real cache folder."""
    monkeypatch.setenv("RETBENCH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "retbench-cache"))


def groups_contradicting_verdicts(folder: Path) -> list[str]:
    """Every place where ``folder``'s leaderboard.csv groups contradict its comparisons.csv: a pair
    whose verdict says one is better but that shares a letter, a pair whose verdict does not that
    shares none, or a pair never compared that shares none (untested pairs are not separated). []
    when they agree; both files are read as text, the verdicts as written."""
    import pandas as pd

    from harness.readings.leaderboard import group_letters

    board = pd.read_csv(folder / "leaderboard.csv", dtype=str, keep_default_na=False)
    comparisons = pd.read_csv(folder / "comparisons.csv", dtype=str, keep_default_na=False)
    letters = {(row.metric, row.system): set(group_letters(row.group)) for row in board.itertuples(index=False)}
    problems, compared = [], set()
    for c in comparisons.itertuples(index=False):
        a, b = letters.get((c.metric, c.system_a)), letters.get((c.metric, c.system_b))
        if a is None or b is None:
            problems.append(f"{c.metric}: {c.system_a} - {c.system_b} is not on the leaderboard")
            continue
        compared.add((c.metric, frozenset((c.system_a, c.system_b))))
        better = c.verdict in (f"{c.system_a} is better", f"{c.system_b} is better")
        if better == bool(a & b):
            problems.append(f"{c.metric}: {c.system_a} {sorted(a)} and {c.system_b} {sorted(b)} "
                            f"{'share' if better else 'share no'} letter, verdict {c.verdict!r}")
    for metric, rows in board.groupby("metric", sort=False):
        systems = rows["system"].tolist()
        for i, x in enumerate(systems):
            for y in systems[i + 1:]:
                if (metric, frozenset((x, y))) not in compared and not letters[metric, x] & letters[metric, y]:
                    problems.append(f"{metric}: {x} and {y} were not compared but share no letter")
    return problems


def _results_folders(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("leaderboard.csv") if (p.parent / "comparisons.csv").is_file())


def _check_groups(root: Path, checked: set[Path]) -> None:
    """Assert :func:`groups_contradicting_verdicts` finds nothing in each results folder under ``root``
    not checked before; a folder a test broke on purpose (a file or column missing) is skipped."""
    for folder in _results_folders(root):
        if folder in checked:
            continue
        checked.add(folder)
        headers = [set((folder / name).read_text(encoding="utf-8").partition("\n")[0].split(","))
                   for name in ("leaderboard.csv", "comparisons.csv")]
        if not {"metric", "group", "system"} <= headers[0] or \
                not {"metric", "system_a", "system_b", "verdict"} <= headers[1]:
            continue
        problems = groups_contradicting_verdicts(folder)
        assert not problems, f"{folder}: the tie groups contradict the verdicts:\n" + "\n".join(problems)


_CHECKED: set[Path] = set()


@pytest.fixture
def groups_contradicting() -> object:
    """:func:`groups_contradicting_verdicts`, for a test that checks a folder itself."""
    return groups_contradicting_verdicts


@pytest.fixture(autouse=True)
def groups_match_verdicts(request):
    """After each test, every results folder it wrote under its ``tmp_path`` has tie groups that agree
    with its verdicts (:func:`groups_contradicting_verdicts`)."""
    # asked for before the test runs, so that tmp_path is still there when this fixture ends
    root = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if root is not None:
        _check_groups(root, _CHECKED)


@pytest.fixture(autouse=True, scope="session")
def groups_match_verdicts_everywhere(tmp_path_factory):
    """At the end of the session, the same for every folder under the session's temporary root (the
    folders module- and session-scoped fixtures wrote)."""
    yield
    _check_groups(tmp_path_factory.getbasetemp(), _CHECKED)


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
def web_server():
    """``start(app)``: ``app`` served by a real uvicorn server (:func:`harness.web.protocol.uvicorn_server`,
    as ``bench serve`` and ``bench judge`` run theirs) on 127.0.0.1 in a thread; returns its port.
    Each is stopped when the test ends. The test skips without the serve extra."""
    pytest.importorskip("fastapi", reason="the web stack needs the serve extra")
    pytest.importorskip("uvicorn", reason="the web stack needs the serve extra")
    import socket
    import threading
    import time

    from harness.web.protocol import uvicorn_server

    started = []

    def start(app) -> int:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        server = uvicorn_server(app, sock)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        started.append((server, thread, sock))
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        return sock.getsockname()[1]

    yield start
    for server, thread, sock in started:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture
def shared_data() -> Path:
    """:data:`SHARED_DATA`; the test skips, naming the folder, where it is absent."""
    return real_data()


#: Manifest entries that differ between two runs of the same inputs: when, how it was called, where
#: it ran and how long it took (engines change where work runs, never a result).
VOLATILE_MANIFEST_KEYS = ("time", "run_id", "command_line", "engine", "cost", "steps")  # cost: the machine, engine included
#: The cost reading's files: this run's times (harness.readings.cost), never the same twice.
TIMED_FILES = ("efficiency.csv", "latency_comparisons.csv")
VOLATILE_SYSTEM_KEYS = ("fit_seconds", "search_seconds")


def _same_results(first: Path, second: Path) -> None:
    """Assert that two results folders hold the same bytes in every file, but for the run id (in
    the folder name, and the lines of retrieval_metrics.jsonl), the manifest's volatile entries and
    the cost reading's files (:data:`TIMED_FILES`, which must be there).
    The manifest's ``files`` must hold each file's SHA-256 (a file holding the run id differs in
    its hash too, so they are checked against the files rather than against each other)."""
    import hashlib
    import json

    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in files:
        a, b = (first / name).read_bytes(), (second / name).read_bytes()
        if name.name in TIMED_FILES:
            continue
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


def start_judge(pool: Path, out: Path) -> tuple[subprocess.Popen, str]:
    """``bench judge POOL --corpus article --out OUT`` in a child process on a free port, and the
    page's address (its first line on stdout); skips without the serve extra. The caller kills it."""
    pytest.importorskip("fastapi", reason="bench judge needs the serve extra")
    pytest.importorskip("uvicorn", reason="bench judge needs the serve extra")
    process = subprocess.Popen([sys.executable, "-c", "from harness.cli import main; main()", "judge", str(pool),
                                "--corpus", "article", "--out", str(out), "--port", "0"], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:\d+/", line)
    if match is None:
        process.kill()
        raise AssertionError(f"no address in {line!r}: {process.stderr.read()}")
    return process, match.group(0)


_COST_SECTIONS = (
    re.compile(r"\n\n<details><summary>Cost</summary>.*?</details>", re.S),  # Markdown
    re.compile(r"\\begin\{table\}\[t\]\n\\centering\n\\small\n\\caption\{What each system cost.*?\\end\{table\}\n", re.S),
    re.compile(r"\n\ncost on this machine .*?(?=\n\nresults: |\Z)", re.S),  # the terminal's text
)


def without_cost(text: str) -> str:
    """A report less the cost reading's section: the times of its own run, which no other run repeats
    (harness.readings.cost; every other line of two runs' reports is the same)."""
    for section in _COST_SECTIONS:
        text = section.sub("", text)
    return text


def without_cost_tables(result):
    """``result`` as a folder written before the cost reading would hold it: no efficiency.csv, no
    latency_comparisons.csv (so that its reports are the same bytes on every run, for golden files)."""
    for name in ("efficiency", "latency_comparisons"):
        result.tables.pop(name, None)
    return result


@pytest.fixture
def registry():
    """The readings registry as it is, restored after the test: a reading registered inside leaves with it."""
    from harness.core.readings import READINGS

    before = dict(READINGS)
    yield READINGS
    READINGS.clear()
    READINGS.update(before)
