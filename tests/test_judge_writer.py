"""bench judge: a judgments file is one writer's. A second server on the same file (by any path) is
refused naming the first; the lock dies with a kill -9'd server; undo removes only a line this
server appended; a file grading one pair twice with two grades is not resumed; a pool file may
start with a byte order mark; HEAD is answered as GET, without the body. The sessions' own rules run
without the serve extra; the page's tests serve it as bench judge does (FastAPI, a real uvicorn
server in a thread) and skip without the extra."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from corpora import DEFAULT_ANALYZER, RetbenchError, get_analyzer, load_dataset
from harness.cli import main
from harness.judgments.judge_app import JudgingSession, read_pool
from harness.judgments.writer_lock import lock_path
from tests.conftest import start_judge

REPO = Path(__file__).resolve().parents[1]
# the bundled article corpus: its queries q01.. and documents (ids from corpora/bundled/article)
POOL = "query_id\tdoc_id\tn_systems\tbest_rank\nq01\tsso1\t4\t1\nq03\tmisc3\t4\t2\nq01\tmisc3\t1\t3\n"
PAIRS = [("q01", "sso1"), ("q03", "misc3"), ("q01", "misc3")]


@pytest.fixture(scope="module")
def article():
    return load_dataset("article")


@pytest.fixture
def pool_file(tmp_path) -> Path:
    path = tmp_path / "pool.tsv"
    path.write_text(POOL)
    return path


def _session(article, out: Path) -> JudgingSession:
    return JudgingSession(list(PAIRS), article, out, get_analyzer(DEFAULT_ANALYZER))


class _Served:
    """A judging page on a free port (bench judge's app, served by uvicorn in a thread), for one test."""

    def __init__(self, session: JudgingSession, port: int) -> None:
        self.session = session
        self.port = port
        session.announce(f"http://127.0.0.1:{port}/")  # as bench judge does once it has bound

    def request(self, method: str, path: str, body: dict | None = None, headers: dict | None = None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            sent = {"Content-Type": "application/json", "X-Judge-Token": self.session.token, **(headers or {})}
            connection.request(method, path, body=None if body is None else json.dumps(body), headers=sent)
            answer = connection.getresponse()
            return answer.status, answer.getheaders(), answer.read()
        finally:
            connection.close()


@pytest.fixture
def served(article, web_server) -> Iterator:
    from harness.judgments.judge_page import create_app

    started: list[_Served] = []

    def start(out: Path) -> _Served:
        session = _session(article, out)
        one = _Served(session, web_server(create_app(session)))
        started.append(one)
        return one

    yield start
    for one in started:
        one.session.close()


# ----- one writer per file ---------------------------------------------------------------------------


def test_a_second_server_on_the_same_file_by_any_path_is_refused_naming_the_first(served, runner, tmp_path,
                                                                                    pool_file):
    out = tmp_path / "judged.txt"
    out.write_text("q01 0 sso1 3\n")
    first = served(out)
    (tmp_path / "sub").mkdir()
    link = tmp_path / "sub" / "link.txt"
    link.symlink_to(out)
    expected = (f"error: {{}} is being written by another bench judge (pid {os.getpid()}, "
                f"http://127.0.0.1:{first.port}/; its lock: {lock_path(out)}). Fix: use that one, or stop it "
                "first: two writers of one file would mix their lines\n")
    for other in (out, tmp_path / "sub" / ".." / "judged.txt", link):
        done = runner.invoke(main, ["judge", str(pool_file), "--corpus", "article", "--out", str(other)])
        assert done.exit_code == 2, done.output
        assert done.output == expected.format(other)
    assert out.read_text() == "q01 0 sso1 3\n"  # the refused ones wrote nothing
    status, _, _ = first.request("POST", "/api/judge", {"query_id": "q03", "doc_id": "misc3", "grade": 1})
    assert status == 200  # the first one still writes


def test_the_lock_goes_with_the_session(article, tmp_path):
    out = tmp_path / "judged.txt"
    with _session(article, out):
        assert lock_path(out).exists()
        with pytest.raises(RetbenchError, match="is being written by another bench judge"):
            _session(article, out)
    assert not lock_path(out).exists()  # a clean end removes the lock file
    with _session(article, out) as again:
        assert again.state()["done"] == 0


def test_a_stale_lock_file_does_not_block(article, tmp_path):
    out = tmp_path / "judged.txt"
    lock_path(out).write_text("pid 999999999\naddress http://127.0.0.1:1/\n")  # left by a killed server
    with _session(article, out) as session:
        assert session.judge("q01", "sso1", 2)["done"] == 1
        assert lock_path(out).read_text().startswith(f"pid {os.getpid()}\n")
    assert out.read_text() == "q01 0 sso1 2\n"


def test_a_kill_9_server_never_blocks_the_next(pool_file, tmp_path):
    out = tmp_path / "judged.txt"
    process, url = start_judge(pool_file, out)
    try:
        refused = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "judge",
                                  str(pool_file), "--corpus", "article", "--out", str(out), "--port", "0"],
                                 cwd=REPO, capture_output=True, text=True, timeout=120,
                                 env={**os.environ, "PYTHONPATH": str(REPO)})
        assert refused.returncode == 2
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        assert f"another bench judge (pid {process.pid}, {url};" in refused.stderr
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        assert lock_path(out).exists()  # left behind by kill -9 ...
        process, again = start_judge(pool_file, out)  # ... and blocking nothing
        assert again.startswith("http://127.0.0.1:")
    finally:
        process.kill()
        process.wait(30)


# ----- undo: only this session's lines -----------------------------------------------------------


def test_two_undo_presses_leave_the_judgments_the_file_held(served, tmp_path):
    out = tmp_path / "judged.txt"
    out.write_text("q01 0 sso1 3\nq03 0 misc3 0\n")
    page = served(out)
    for _ in range(2):
        status, _, body = page.request("POST", "/api/undo", {})
        answer = json.loads(body)
        assert status == 409
        assert answer["detail"] == ("nothing to undo: this session has judged nothing yet (the 2 judgment(s) the "
                                   "file held before are kept; edit judged.txt to change an earlier judgment)")
        assert answer["state"]["done"] == 2 and answer["state"]["undoable"] == 0
    assert out.read_text() == "q01 0 sso1 3\nq03 0 misc3 0\n"


def test_undo_removes_this_sessions_lines_then_stops(served, tmp_path):
    out = tmp_path / "judged.txt"
    out.write_text("q01 0 sso1 3")  # an earlier judgment, its newline missing
    page = served(out)
    status, _, body = page.request("POST", "/api/judge", {"query_id": "q03", "doc_id": "misc3", "grade": 1})
    assert status == 200 and json.loads(body)["state"]["undoable"] == 1
    assert out.read_text() == "q01 0 sso1 3\nq03 0 misc3 1\n"
    status, _, body = page.request("POST", "/api/undo", {})
    assert status == 200 and json.loads(body)["state"]["done"] == 1
    assert out.read_bytes() == b"q01 0 sso1 3\n"  # the earlier line whole, no NUL byte
    status, _, _ = page.request("POST", "/api/undo", {})
    assert status == 409
    assert out.read_bytes() == b"q01 0 sso1 3\n"


def test_undo_never_truncates_what_another_program_wrote(article, tmp_path):
    out = tmp_path / "judged.txt"
    with _session(article, out) as session:
        session.judge("q01", "sso1", 2)
        with open(out, "ab") as other:
            other.write(b"q03 0 misc3 1\n")  # not through this server
        with pytest.raises(LookupError, match="no longer ends with the line this session wrote last"):
            session.undo()
        assert out.read_text() == "q01 0 sso1 2\nq03 0 misc3 1\n"
        out.write_text("q01 0 sso1 2")  # shortened by an editor: never padded back
        with pytest.raises(LookupError, match="undo refused, nothing removed"):
            session.undo()
        assert out.read_bytes() == b"q01 0 sso1 2"


def test_a_closed_session_writes_no_more(article, tmp_path):
    out = tmp_path / "judged.txt"
    session = _session(article, out)
    session.close()
    with pytest.raises(LookupError, match="closed"):
        session.judge("q01", "sso1", 2)
    assert not out.exists()


# ----- resume -------------------------------------------------------------------------------------


def test_resume_refuses_a_pair_graded_twice_with_two_grades(runner, tmp_path, pool_file, article):
    pytest.importorskip("fastapi", reason="bench judge needs the serve extra (its absence is the error otherwise)")
    pytest.importorskip("uvicorn", reason="bench judge needs the serve extra")
    out = tmp_path / "judged.txt"
    out.write_text("q01 0 sso1 3\nq03 0 misc3 0\nq01 0 sso1 1\n")
    done = runner.invoke(main, ["judge", str(pool_file), "--corpus", "article", "--out", str(out)])
    assert done.exit_code == 2
    assert done.output.count("\n") == 1
    assert done.output.startswith(f"error: {out}:3: query 'q01', document 'sso1' is judged 1 here but 3 at line 1")
    assert "Fix:" in done.output
    assert not lock_path(out).exists()  # refused: the lock went with it
    out.write_text("q01 0 sso1 3\nq03 0 misc3 0\n")
    with _session(article, out) as session:  # fixed by hand: resumes
        assert session.current() == ("q01", "misc3")


def test_resume_reads_an_exact_repeat_as_agree_and_evaluate_do(article, tmp_path):
    out = tmp_path / "judged.txt"
    out.write_text("q01 0 sso1 3\nq01 0 sso1 3\n")
    with _session(article, out) as session:
        assert session.state()["done"] == 1
        assert session.warnings == [f"{out}: 1 judgment line(s) repeat an earlier (query, document) pair with the "
                                    "same grade; each pair counts once"]


# ----- the pool file, HEAD, the body's size ----------------------------------------------------------


def test_a_pool_file_may_start_with_a_byte_order_mark(tmp_path):
    path = tmp_path / "pool.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + POOL.encode())
    assert read_pool(path) == PAIRS


def test_a_device_as_the_pool_is_refused_not_read(tmp_path):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this system")
    with pytest.raises(RetbenchError, match="is a device"):
        read_pool(Path("/dev/zero"))


def test_head_is_answered_as_get_without_a_body(served, tmp_path):
    page = served(tmp_path / "judged.txt")
    for path in ("/", "/api/state"):
        get_status, get_headers, get_body = page.request("GET", path)
        get_headers = {name.lower(): value for name, value in get_headers}  # header names are any case
        connection = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
        try:
            connection.request("HEAD", path)
            head = connection.getresponse()
            assert head.status == get_status == 200
            assert head.read() == b""
            assert head.getheader("Content-Length") == str(len(get_body)) == get_headers["content-length"]
            assert head.getheader("Content-Type") == get_headers["content-type"]
            connection.request("GET", "/api/state")  # the same connection: no stray body bytes in the way
            assert json.loads(connection.getresponse().read())["state"]["total"] == 3
        finally:
            connection.close()


def test_a_body_larger_than_a_write_needs_is_refused_unread(served, tmp_path):
    from harness.judgments.judge_page import MAX_BODY

    page = served(tmp_path / "judged.txt")
    connection = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
    try:
        connection.putrequest("POST", "/api/judge")
        for name, value in {"Content-Type": "application/json", "X-Judge-Token": page.session.token,
                            "Content-Length": str(MAX_BODY + 1)}.items():
            connection.putheader(name, value)
        connection.endheaders()
        answer = connection.getresponse()
        assert answer.status == 413
        assert answer.getheader("Connection") == "close"
    finally:
        connection.close()
    assert not (tmp_path / "judged.txt").exists()
