"""bench judge: the judging page in a real browser (Playwright driving the system's chromium, no
browser download): key presses, buttons, undo, kill -9 and resume; and its defences against
cross-site writes, and its one-line errors, without a browser. bench judge needs the serve extra:
these tests skip without it (tests/test_judge_needs_serve.py checks the refusal then)."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import signal
import urllib.error
import urllib.request
from urllib.parse import urlsplit
from pathlib import Path

import pytest

from harness.cli import main
from tests.conftest import start_judge

CHROMIUM = Path("/usr/bin/chromium")
# the bundled article corpus: its queries q01.. and documents (ids from corpora/bundled/article)
POOL = "query_id\tdoc_id\tn_systems\tbest_rank\nq01\tsso1\t4\t1\nq03\tmisc3\t4\t2\nq01\tmisc3\t1\t3\n"


def _needs_the_serve_extra() -> None:
    pytest.importorskip("fastapi", reason="bench judge needs the serve extra")
    pytest.importorskip("uvicorn", reason="bench judge needs the serve extra")


@pytest.fixture
def pool_file(tmp_path) -> Path:
    path = tmp_path / "pool.tsv"
    path.write_text(POOL)
    return path


def _post(url: str, body: dict, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_no_cross_site_request_can_write(pool_file, tmp_path):
    out = tmp_path / "judged.txt"
    process, url = start_judge(pool_file, out)
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            token = re.search(r'name="judge-token" content="([^"]+)"', answer.read().decode()).group(1)
        pair = {"query_id": "q01", "doc_id": "sso1", "grade": 2}
        good = {"Content-Type": "application/json", "X-Judge-Token": token}
        assert _post(url + "api/judge", pair, {"Content-Type": "application/json"}) == 403  # no token
        assert _post(url + "api/judge", pair, {**good, "Content-Type": "text/plain"}) == 415  # a form's type
        assert _post(url + "api/judge", pair, {**good, "Origin": "http://evil.example"}) == 403
        assert _post(url + "api/judge", pair, {**good, "Sec-Fetch-Site": "cross-site"}) == 403
        assert _post(url + "api/judge", pair, {**good, "Host": "evil.example"}) == 400  # DNS rebinding
        bad_length = http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port, timeout=10)
        bad_length.putrequest("POST", "/api/judge")
        for name, value in {**good, "Content-Length": "lots"}.items():
            bad_length.putheader(name, value)
        bad_length.endheaders()
        assert bad_length.getresponse().status == 400  # answered, not a traceback and a dropped connection
        bad_length.close()
        assert not out.exists() or out.read_text() == ""
        assert _post(url + "api/judge", pair, good) == 200
        assert out.read_text() == "q01 0 sso1 2\n"
        assert _post(url + "api/judge", pair, good) == 409  # no longer the shown pair
    finally:
        process.kill()
        process.wait()


def test_bad_pool_and_corpus_are_one_line_errors(tmp_path, runner, pool_file):
    _needs_the_serve_extra()  # without it, every one is the install hint
    bad = tmp_path / "bad.tsv"
    bad.write_text("query\tdocument\nq01\tsso1\n")
    unknown = tmp_path / "unknown.tsv"
    unknown.write_text("query_id\tdoc_id\nq01\tnot-a-doc\n")
    judged = tmp_path / "judged.txt"
    judged.write_text("q01 0 sso1\n")
    for args in (["judge", str(tmp_path / "missing.tsv"), "--corpus", "article", "--out", str(tmp_path / "o")],
                 ["judge", str(bad), "--corpus", "article", "--out", str(tmp_path / "o")],
                 ["judge", str(unknown), "--corpus", "article", "--out", str(tmp_path / "o")],
                 ["judge", str(pool_file), "--corpus", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")],
                 ["judge", str(pool_file), "--corpus", "article", "--out", str(judged)]):
        done = runner.invoke(main, args)
        assert done.exit_code == 2, done.output
        assert "Traceback" not in done.output and "Fix:" in done.output


def test_judging_in_a_browser_keys_buttons_undo_kill_and_resume(pool_file, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        pytest.skip("no chromium at /usr/bin/chromium (Debian's chromium package)")
    out = tmp_path / "judged.txt"
    process, url = start_judge(pool_file, out)
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                 args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(url)
            progress = page.locator("#progress")
            sync_api.expect(progress).to_have_text("0 of 3 judged")
            assert "Pro plan cost" in page.locator("#query").inner_text()
            assert page.locator("#doc-text mark").count() >= 1  # a query term highlighted
            for grade in range(4):
                assert page.locator(f'button[data-grade="{grade}"]').is_visible()
            page.keyboard.press("2")
            sync_api.expect(progress).to_have_text("1 of 3 judged")
            assert out.read_text() == "q01 0 sso1 2\n"  # durable before the next pair showed
            sync_api.expect(page.locator("#doc-id")).to_have_text("misc3")
            page.keyboard.press("u")  # undo: the file loses the line, the pair is back
            sync_api.expect(progress).to_have_text("0 of 3 judged")
            assert out.read_text() == ""
            sync_api.expect(page.locator("#doc-id")).to_have_text("sso1")
            page.keyboard.press("3")
            sync_api.expect(progress).to_have_text("1 of 3 judged")
            page.locator('button[data-grade="0"]').click()  # a mouse does the same
            sync_api.expect(progress).to_have_text("2 of 3 judged")
            assert out.read_text() == "q01 0 sso1 3\nq03 0 misc3 0\n"
            process.send_signal(signal.SIGKILL)  # kill -9: nothing judged may be lost
            process.wait()
            assert out.read_text() == "q01 0 sso1 3\nq03 0 misc3 0\n"
            process, url = start_judge(pool_file, out)
            page.goto(url)
            sync_api.expect(progress).to_have_text("2 of 3 judged")  # resumed at the first unjudged pair
            sync_api.expect(page.locator("#query-id")).to_have_text("q01")
            sync_api.expect(page.locator("#doc-id")).to_have_text("misc3")
            page.keyboard.press("1")
            sync_api.expect(progress).to_have_text("3 of 3 judged")
            sync_api.expect(page.locator("#query")).to_have_text("Every pair of the pool is judged.")
            browser.close()
        assert out.read_text() == "q01 0 sso1 3\nq03 0 misc3 0\nq01 0 misc3 1\n"
    finally:
        process.kill()
        process.wait()
