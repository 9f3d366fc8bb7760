"""The judging page on the shared web stack (harness.web), through a real uvicorn server: the checks
it shares with bench serve (Host), and those of a server that writes (a body over the limit without
a Content-Length, Origin on another port, the headers that keep it out of caches and frames, a
malformed write). Skipped without the serve extra."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import pytest

from corpora import DEFAULT_ANALYZER, get_analyzer, load_dataset
from harness.judgments.judge_app import JudgingSession

pytest.importorskip("fastapi", reason="the judging page needs the serve extra")
pytest.importorskip("uvicorn", reason="the judging page needs the serve extra")

from harness.judgments.judge_page import MAX_BODY, create_app  # noqa: E402


@pytest.fixture
def page(tmp_path: Path, web_server):
    session = JudgingSession([("q01", "sso1"), ("q03", "misc3")], load_dataset("article"), tmp_path / "judged.txt",
                             get_analyzer(DEFAULT_ANALYZER))
    port = web_server(create_app(session))

    def request(method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            sent = {"Content-Type": "application/json", "X-Judge-Token": session.token, **(headers or {})}
            connection.request(method, path, body=body, headers=sent)
            answer = connection.getresponse()
            return answer.status, answer.headers, answer.read()
        finally:
            connection.close()

    yield session, port, request
    session.close()


def test_a_host_that_is_not_loopback_is_answered_400_naming_it(page) -> None:
    _, _, request = page
    status, _, body = request("GET", "/api/state", headers={"Host": "evil.example"})
    assert status == 400
    assert json.loads(body)["detail"].startswith("bench judge does not answer to Host 'evil.example': it answers to "
                                                 "loopback names only")


def test_a_chunked_body_over_the_limit_is_413_and_nothing_is_written(page, tmp_path: Path) -> None:
    session, _, request = page
    big = json.dumps({"query_id": "q01", "doc_id": "sso1", "grade": 2, "pad": "x" * MAX_BODY}).encode()
    # an iterable body: http.client sends it chunked, with no Content-Length
    status, headers, body = request("POST", "/api/judge", body=iter([big[:1000], big[1000:]]))
    assert status == 413 and headers["Connection"] == "close"
    assert f"at most {MAX_BODY} bytes" in json.loads(body)["detail"]
    assert not (tmp_path / "judged.txt").exists()
    small = json.dumps({"query_id": "q01", "doc_id": "sso1", "grade": 2}).encode()
    status, _, _ = request("POST", "/api/judge", body=iter([small]))
    assert status == 200 and (tmp_path / "judged.txt").read_text() == "q01 0 sso1 2\n"  # under it: written


def test_origin_must_be_this_page_on_its_own_port(page, tmp_path: Path) -> None:
    _, port, request = page
    pair = json.dumps({"query_id": "q01", "doc_id": "sso1", "grade": 1}).encode()
    for origin in (f"http://127.0.0.1:{port + 1}", "http://127.0.0.1", "null", "http://evil.example:" + str(port)):
        status, _, body = request("POST", "/api/judge", body=pair, headers={"Origin": origin})
        assert status == 403, origin
        assert json.loads(body)["detail"] == f"write from another origin refused ({origin})"
    assert not (tmp_path / "judged.txt").exists()
    status, _, _ = request("POST", "/api/judge", body=pair, headers={"Origin": f"http://localhost:{port}"})
    assert status == 200


def test_every_answer_is_kept_out_of_caches_and_frames(page) -> None:
    _, _, request = page
    for method, path in (("GET", "/"), ("GET", "/api/state"), ("HEAD", "/"), ("GET", "/nowhere"),
                         ("POST", "/api/undo")):
        _, headers, _ = request(method, path, body=b"{}" if method == "POST" else None)
        assert (headers["Cache-Control"], headers["X-Content-Type-Options"], headers["X-Frame-Options"]) == (
            "no-store", "nosniff", "DENY"), (method, path)


def test_a_malformed_write_is_400_with_the_state_and_other_methods_405(page, tmp_path: Path) -> None:
    _, _, request = page
    for body, said in ((b"[1]", "the body is not a JSON object"), (b"{", "the body is not a JSON object"),
                       (b'{"query_id": "q01", "doc_id": "sso1", "grade": true}', "grade must be an integer"),
                       (b'{"query_id": "q01", "doc_id": "sso1", "grade": 7}', "grade must be one of [0, 1, 2, 3]")):
        status, _, answer = request("POST", "/api/judge", body=body)
        assert status == 400 and json.loads(answer)["detail"] == said, body
    assert json.loads(answer)["state"]["done"] == 0
    for method in ("PUT", "DELETE", "PATCH"):
        assert request(method, "/api/judge", body=b"{}")[0] == 405
    assert not (tmp_path / "judged.txt").exists()
