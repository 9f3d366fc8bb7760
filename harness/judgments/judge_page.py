"""``bench judge``'s page: a FastAPI application over a :class:`~harness.judgments.judge_app.JudgingSession`,
run by uvicorn as ``bench serve``'s is (the ``serve`` extra).

``GET /`` is the page (the query, the document with the query's words highlighted, the grade scale,
the progress; keys 0–3 and ``u``), ``GET /api/state`` the session's state; ``POST /api/judge``
(``{"query_id", "doc_id", "grade"}``: the shown pair) records a grade and ``POST /api/undo`` takes
this session's last one back, each answering the next state, or an error as ``{"detail", "state"}``
(400 for a malformed write, 409 for a pair no longer shown or nothing to undo, 500 when the file
cannot be written). HEAD is answered wherever GET is, without the body (uvicorn).

Its defences are :mod:`harness.web.guards`', shared with ``bench serve``: a ``Host`` that is not a
loopback name is answered 400 (DNS rebinding); a write needs the session's token, a JSON body of at
most :data:`MAX_BODY` bytes (413 past it, unread), no other origin and no cross-site fetch (415 or
403). Each request must arrive whole within :data:`harness.web.protocol.REQUEST_TIME_LIMIT`
seconds (:class:`~harness.web.protocol.BoundedH11Protocol`). ``bench judge`` binds it to
127.0.0.1 only.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse

from harness.judgments.judge_app import GRADE_SCALE, JudgingSession
from harness.web.guards import BodyLimit, HostCheck, NoStore, write_guard
from harness.web.hosts import AllowedHosts

__all__ = ["MAX_BODY", "create_app", "page"]

#: The largest request body a write may carry (a judgment is under 200 bytes).
MAX_BODY = 65536

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bench judge</title>
<meta name="judge-token" content="__TOKEN__">
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:1.5rem auto;padding:0 1rem;color:#222}
#progress{color:#555} #query{font-size:1.3rem;font-weight:600;margin:.5rem 0 1rem}
#doc{border:1px solid #ccc;border-radius:6px;padding:1rem;white-space:pre-wrap;line-height:1.45}
#doc-title{font-weight:600;margin-bottom:.5rem} mark{background:#ffe066}
#grades{display:flex;gap:.5rem;margin:1rem 0;flex-wrap:wrap} #grades button{padding:.6rem .9rem;font-size:1rem}
#message{color:#b00} .meta{color:#777;font-size:.9rem}
</style></head><body>
<div id="progress">loading…</div>
<div class="meta">query <span id="query-id"></span> · document <span id="doc-id"></span></div>
<div id="query"></div>
<div id="doc"><div id="doc-title"></div><div id="doc-text"></div></div>
<div id="grades">__BUTTONS__<button id="undo" data-undo="1">u · undo</button></div>
<div id="message"></div>
<p class="meta">Keys 0–3 record the grade of the shown pair and show the next; u undoes the last judgment.</p>
<script>
const token = document.querySelector('meta[name="judge-token"]').content;
let shown = null, busy = false;
function render(state) {
  document.getElementById('progress').textContent = state.done + ' of ' + state.total + ' judged';
  shown = state.pair;
  const finished = shown === null;
  document.getElementById('query').textContent = finished ? 'Every pair of the pool is judged.' : shown.query;
  document.getElementById('query-id').textContent = finished ? '' : shown.query_id;
  document.getElementById('doc-id').textContent = finished ? '' : shown.doc_id;
  document.getElementById('doc-title').innerHTML = finished ? '' : shown.title_html;
  document.getElementById('doc-text').innerHTML = finished ? '' : shown.text_html;
  document.body.dataset.ready = '1';
}
async function call(path, body) {
  if (busy) return;
  busy = true;
  try {
    const answer = await fetch(path, {method: body === undefined ? 'GET' : 'POST',
      headers: {'Content-Type': 'application/json', 'X-Judge-Token': token},
      body: body === undefined ? undefined : JSON.stringify(body)});
    const data = await answer.json();
    document.getElementById('message').textContent = answer.ok ? '' : data.detail;
    if (data.state) render(data.state);
  } catch (e) {
    document.getElementById('message').textContent = 'the judging server does not answer: ' + e;
  } finally { busy = false; }
}
function judge(grade) { if (shown) call('/api/judge', {query_id: shown.query_id, doc_id: shown.doc_id, grade: grade}); }
document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (/^[0-3]$/.test(event.key)) { judge(Number(event.key)); event.preventDefault(); }
  else if (event.key === 'u') { call('/api/undo', {}); event.preventDefault(); }
});
document.getElementById('grades').addEventListener('click', (event) => {
  const button = event.target.closest('button'); if (!button) return;
  if (button.dataset.undo) call('/api/undo', {}); else judge(Number(button.dataset.grade));
  button.blur();
});
call('/api/state');
</script></body></html>
"""


def page(token: str) -> str:
    """The page's HTML, carrying ``token`` (a write sends it back)."""
    buttons = "".join(f'<button data-grade="{g}" title="{html.escape(meaning)}">{g} · {html.escape(meaning)}</button>'
                      for g, meaning in GRADE_SCALE.items())
    return _PAGE.replace("__TOKEN__", token).replace("__BUTTONS__", buttons)


def _not_answered(shown: str) -> str:
    return (f"bench judge does not answer to {shown}: it answers to loopback names only (localhost, 127.0.0.1, "
            "[::1]). Fix: open it at the address bench judge printed, http://127.0.0.1:PORT/")


def _grade(document: dict[str, Any]) -> int:
    grade = document.get("grade")
    if isinstance(grade, bool) or not isinstance(grade, int):
        raise ValueError("grade must be an integer")
    return grade


def create_app(session: JudgingSession) -> FastAPI:
    """The judging page's application over ``session`` (see the module docstring); it answers to
    loopback host names only."""
    app = FastAPI(title="bench judge", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(NoStore)
    app.add_middleware(BodyLimit, limit=MAX_BODY)
    app.add_middleware(HostCheck, hosts=AllowedHosts(), explain=_not_answered)  # added last: runs first
    judging_html = page(session.token)  # the session's token never changes: the page is made once

    @app.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
    def judging_page() -> HTMLResponse:
        return HTMLResponse(judging_html)

    @app.api_route("/api/state", methods=["GET", "HEAD"])
    def state() -> JSONResponse:
        return JSONResponse({"state": session.state()})

    async def write(request: Request, action: Callable[[dict[str, Any]], dict[str, Any]]) -> JSONResponse:
        try:
            document = json.loads(await request.body() or b"{}")
            if not isinstance(document, dict):
                raise ValueError("not an object")
        except ValueError:
            return JSONResponse({"detail": "the body is not a JSON object"}, status_code=400)
        try:  # a write is fsynced before it is answered: in a worker thread
            answer = await run_in_threadpool(action, document)
        except ValueError as exc:
            return JSONResponse({"detail": str(exc), "state": session.state()}, status_code=400)
        except LookupError as exc:
            return JSONResponse({"detail": str(exc.args[0]), "state": session.state()}, status_code=409)
        except OSError as exc:
            return JSONResponse({"detail": f"the judgments file cannot be written ({exc.strerror or exc})",
                                 "state": session.state()}, status_code=500)
        return JSONResponse({"state": answer})

    guard = [Depends(write_guard(session.token))]

    @app.post("/api/judge", dependencies=guard)
    async def judge(request: Request) -> JSONResponse:
        return await write(request, lambda document: session.judge(
            str(document.get("query_id")), str(document.get("doc_id")), _grade(document)))

    @app.post("/api/undo", dependencies=guard)
    async def undo(request: Request) -> JSONResponse:
        return await write(request, lambda _: session.undo())

    return app
