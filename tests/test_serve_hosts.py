"""bench serve answers only to its own names (issue 30): a request addressed to any other host, by
any method, on any route (the API, the dashboard, /openapi.json, /docs, a path that is not there),
is a 400 before anything is read, so a web page cannot read the runs through DNS rebinding. HEAD is
answered wherever GET is, with GET's status and headers, and every 405 says ``Allow: GET, HEAD``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.web.hosts import AllowedHosts, host_name

pytest.importorskip("fastapi", reason="bench serve needs the serve extra: pip install 'retbench[serve]'")
pytest.importorskip("httpx", reason="FastAPI's test client needs httpx (the test extra)")

from fastapi.testclient import TestClient  # noqa: E402

from corpora import Corpus, Dataset, Qrels, Queries  # noqa: E402
from harness import compare  # noqa: E402
from harness.serve.app import API, create_app  # noqa: E402
from retrievers import FixedRun  # noqa: E402
from harness.core.options import Readings, Statistics

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")
REFUSED = ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil.example:80",
           "0x7f000001", "127.1", "localhost.", "[::2]", "[::1", "::1", "a b", "", "testserver")
ANSWERED = ("localhost", "LocalHost:1", "127.0.0.1", "127.0.0.1:8000", "127.45.6.7:65535", "[::1]", "[::1]:8000",
            "[0:0::1]:80")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> tuple[Path, str]:
    """A folder holding one small results folder, and its run id."""
    root = tmp_path_factory.mktemp("hosts")
    corpus = Corpus(["A", "B", "C", "X"], ["alpha", "beta", "gamma", "chi"])
    dataset = Dataset("hosts", corpus, Queries(["q1", "q2"], ["a", "b"]), Qrels({"q1": {"A": 2}, "q2": {"B": 1}}),
                      "<memory>")
    folder = compare({"fixed": FixedRun({"q1": ["B", "A"], "q2": ["X"]})}, dataset, ["mrr"],
                     readings=Readings(retrieval_k=4), statistics=Statistics(bootstrap_samples=20)).write(root)
    return root, folder.name


def routes(run_id: str) -> list[str]:
    return [f"{API}/runs", f"{API}/runs/{run_id}", f"{API}/runs/{run_id}/metrics", f"{API}/runs/{run_id}/results",
            f"{API}/runs/{run_id}/comparisons", "/", f"/runs/{run_id}", "/openapi.json", "/docs", "/redoc",
            "/no/such/path", f"{API}/runs/nope"]


def ask(client: TestClient, method: str, path: str, host: str):
    return client.request(method, path, headers={"Host": host})


def test_any_other_host_is_refused_for_every_method_and_route(served) -> None:
    root, run_id = served
    client = TestClient(create_app(root))
    asked = [(host, method) for host in REFUSED for method in ("GET", "OPTIONS")]
    asked += [(host, method) for host in ("evil.example:8000", "") for method in METHODS]
    for host, method in asked:
        for path in routes(run_id):
                answer = ask(client, method, path, host)
                assert answer.status_code == 400, (host, method, path, answer.status_code)
                assert "allow" not in answer.headers  # refused before ReadOnly's 405 could answer
                if method != "HEAD":
                    detail = answer.json()["detail"]
                    assert detail.startswith("bench serve does not answer to ") and "Fix:" in detail
                    assert run_id not in answer.text and str(root) not in answer.text and len(answer.text) < 400


def test_loopback_names_are_answered_on_any_port(served) -> None:
    root, run_id = served
    client = TestClient(create_app(root))
    for host in ANSWERED:
        listed = ask(client, "GET", f"{API}/runs", host)
        assert listed.status_code == 200, host
        assert [run["id"] for run in listed.json()["items"]] == [run_id]
        assert ask(client, "GET", "/openapi.json", host).status_code == 200
        assert ask(client, "POST", f"{API}/runs", host).status_code == 405  # answered: read-only, not refused


def test_allowed_hosts_are_answered_too_and_nothing_else(served) -> None:
    root, run_id = served
    client = TestClient(create_app(root, allowed_hosts=["Evals.Example", "192.0.2.7", "[2001:db8::1]"]))
    for host in ("evals.example", "EVALS.example:8443", "192.0.2.7:80", "[2001:db8:0::1]:8000", *ANSWERED):
        assert ask(client, "GET", f"{API}/runs/{run_id}", host).status_code == 200, host
    for host in ("other.example", "sub.evals.example", "192.0.2.8", "evals.example.evil", *REFUSED):
        assert ask(client, "GET", f"{API}/runs/{run_id}", host).status_code == 400, host


def test_a_request_without_exactly_one_host_header_is_refused(served) -> None:
    """The test client always sends one Host: the app is driven as an ASGI server would drive it."""
    root, _ = served
    app = create_app(root)

    def status(headers: list[tuple[bytes, bytes]]) -> int:
        sent: list[dict] = []
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.0", "method": "GET", "scheme": "http",
                 "path": f"{API}/runs", "raw_path": f"{API}/runs".encode(), "query_string": b"", "root_path": "",
                 "headers": headers, "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}

        async def receive() -> dict:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict) -> None:
            sent.append(message)

        asyncio.run(app(scope, receive, send))
        return sent[0]["status"]

    assert status([(b"host", b"127.0.0.1:8000")]) == 200
    assert status([]) == 400
    assert status([(b"host", b"127.0.0.1"), (b"host", b"evil.example")]) == 400
    assert status([(b"host", b"127.0.0.1"), (b"host", b"127.0.0.1")]) == 400


def test_head_is_answered_wherever_get_is_with_gets_headers(served) -> None:
    root, run_id = served
    client = TestClient(create_app(root), base_url="http://127.0.0.1:8000")
    for path in routes(run_id):
        got, head = client.get(path), client.head(path)
        assert head.status_code == got.status_code != 405, path
        assert head.content == b""
        for name in ("content-type", "content-length"):
            assert head.headers.get(name) == got.headers.get(name), (path, name)
        assert "allow" not in head.headers and "allow" not in got.headers
    assert client.get(f"{API}/runs").status_code == 200 and client.get("/docs").status_code == 404


def test_every_405_allows_get_and_head(served) -> None:
    root, run_id = served
    client = TestClient(create_app(root), base_url="http://localhost")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in root.rglob("*"))
    for method in set(METHODS) - {"GET", "HEAD"}:
        for path in routes(run_id):
            answer = client.request(method, path, content=b"{}")
            assert answer.status_code == 405, (method, path)
            assert answer.headers["allow"] == "GET, HEAD"
            assert "read-only" in answer.json()["detail"]
    assert sorted((p.name, p.stat().st_mtime_ns) for p in root.rglob("*")) == before  # nothing written


def test_what_a_name_to_allow_may_be(tmp_path: Path) -> None:
    assert [host_name(n) for n in ("Evals.Example", "192.0.2.7", "[::1]", "0:0::1", "my_host-1")] == \
        ["evals.example", "192.0.2.7", "::1", "::1", "my_host-1"]
    for bad in ("evals.example:8000", "http://evals.example", "*.example", "*", "evals.example/x", "", "a..b", "-a."):
        with pytest.raises(ValueError, match="is not a host name or address"):
            host_name(bad)
    with pytest.raises(ValueError, match="is not a host name or address"):
        create_app(tmp_path, allowed_hosts=["evals.example:8000"])
    assert not AllowedHosts().allows(None) and AllowedHosts().allows("127.0.0.1")
