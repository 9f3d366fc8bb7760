"""``bench judge``'s judging page: one (query, document) pair of a pool at a time, graded 0–3 with a
key press or a button, each judgment made durable before the next pair is shown.

The judgments file is a TREC qrels file (``qid 0 docid grade``), appended one line per judgment,
flushed and fsynced before the answer leaves, so a ``kill -9`` loses nothing that was shown as
done. It has one writer: a session locks it (:class:`~harness.judgments.writer_lock.WriterLock`)
and a second session on the same file, by any path, is refused, naming the first. Undo truncates
away the last line this session appended (also fsynced), and only after checking that the file
still ends with exactly that line: the judgments the file held before the session are never
undone. Restarted on the same file, the page resumes at the first pair of the pool the file does
not judge; a file that grades one pair twice with two grades is refused, as ``bench agree`` and
``bench evaluate`` refuse it (:class:`corpora.trec_io.QrelsBuilder`'s one rule for repeats).

Served on loopback only, by the standard library's threading HTTP server. Defences, as ``bench
serve``'s and more since it writes: a request whose ``Host`` is not a loopback name is answered 400
(DNS rebinding, :mod:`harness.serve.hosts`); a write (POST) must carry the session's random token
(in the page, which another site cannot read) in an ``X-Judge-Token`` header, with a JSON body
(``Content-Type: application/json``, which a cross-site form cannot send without a preflight this
server never grants) of at most :data:`MAX_BODY` bytes, from no other origin (``Origin``, when
sent, must be the page's own) and not cross-site (``Sec-Fetch-Site``, when sent, must be
``same-origin`` or ``none``); otherwise 403/413/415. A client gets :data:`CLIENT_TIME_LIMIT`
seconds to send each whole request (headers and body, however slowly it trickles them; between
requests too): then its connection is dropped, while the others are served meanwhile.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from corpora import Dataset, InputFileError, RetbenchError
from corpora.input_files import MAX_JUDGMENT_LINE, decode_utf8, read_input_bytes, refuse_nul_bytes
from corpora.number_grammar import parse_grade
from corpora.trec_io import QrelsBuilder
from harness.judgments.writer_lock import WriterLock
from harness.serve.hosts import AllowedHosts, is_loopback

__all__ = ["CLIENT_TIME_LIMIT", "GRADE_SCALE", "MAX_BODY", "JudgingSession", "make_server", "read_pool"]

#: Seconds a client has to send a whole request (its headers and its body) before its connection is
#: dropped: a client that sends less than its ``Content-Length``, or trickles its bytes, holds a
#: thread no longer than this. :func:`make_server` takes another value.
CLIENT_TIME_LIMIT = 10.0
#: The largest request body a write may carry (a judgment is under 200 bytes).
MAX_BODY = 65536

#: The grades an assessor gives, with what each means (TREC's graded scale).
GRADE_SCALE: dict[int, str] = {
    0: "Not relevant: nothing useful for the query",
    1: "Marginally relevant: on the topic, but does not answer it",
    2: "Relevant: answers part of the query",
    3: "Highly relevant: answers the query fully",
}
_POOL_FIX = "give the TSV bench pool wrote (a header with query_id and doc_id, then one pair per line)"
_JUDGMENTS_FIX = ("give a qrels file this page wrote (`qid 0 docid grade` per line), or a new file name to start "
                  "afresh")


def read_pool(path: Path) -> list[tuple[str, str]]:
    """The (query id, doc id) pairs of a pool file, in order; a pair listed twice is kept once.

    Read as every input file is (:func:`corpora.input_files.read_input_bytes`: a device or a folder
    is refused, a line is at most 1 MiB), as UTF-8 with or without a byte order mark.
    """
    raw = read_input_bytes(path, max_line=MAX_JUDGMENT_LINE, what="a pool file")
    refuse_nul_bytes(path, raw)
    text = decode_utf8(path, raw)
    rows = list(csv.reader(text.splitlines(), delimiter="\t"))
    if not rows:
        raise InputFileError(path, "is empty", fix=_POOL_FIX)
    header = rows[0]
    if "query_id" not in header or "doc_id" not in header:
        raise InputFileError(path, f"its header {header!r} has no query_id and doc_id columns", line=1, fix=_POOL_FIX)
    q_col, d_col = header.index("query_id"), header.index("doc_id")
    pairs: dict[tuple[str, str], None] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) != len(header) or not row[q_col] or not row[d_col]:
            raise InputFileError(path, f"expected {len(header)} tab-separated fields with a query_id and a doc_id, "
                                 f"got {row!r}", line=number, fix=_POOL_FIX)
        pairs.setdefault((row[q_col], row[d_col]), None)
    if not pairs:
        raise InputFileError(path, "holds no pair to judge", fix=_POOL_FIX)
    return list(pairs)


@dataclass(frozen=True)
class _Line:
    query_id: str
    doc_id: str
    grade: int


@dataclass(frozen=True)
class _Appended:
    """A line this session appended: where it starts in the file, and its bytes."""

    start: int
    data: bytes


def _read_judgments(path: Path) -> tuple[list[_Line], list[str]]:
    """The judgments of an existing judgments file, in file order, and the warnings reading gave.

    Read as ``bench agree`` and ``bench evaluate`` read it: a pair judged twice follows
    :class:`~corpora.trec_io.QrelsBuilder`'s rule (two grades are an error naming both lines; the same
    grade again counts once, with a warning), so a file this page resumes is one they accept. Blank lines and ``#`` comments are skipped; a
    last line without its newline is complete (the newline is added before the next judgment).
    """
    if not path.exists():
        return [], []
    raw = read_input_bytes(path, max_line=MAX_JUDGMENT_LINE, what="a qrels file")
    refuse_nul_bytes(path, raw)
    builder = QrelsBuilder()
    lines = []
    for number, text in enumerate(decode_utf8(path, raw).split("\n"), start=1):
        if not text.strip() or text.startswith("#"):
            continue
        fields = text.split()
        if len(fields) != 4:
            raise InputFileError(path, f"expected `qid 0 docid grade`, got {text.strip()!r}", line=number,
                                 fix=_JUDGMENTS_FIX)
        grade = parse_grade(path, number, fields[3])
        builder.add(fields[0], fields[2], grade, path, number)
        lines.append(_Line(fields[0], fields[2], grade))
    return lines, builder.warnings(str(path))


def _highlight(text: str, terms: set[str], analyze: Callable[[str], Sequence[str]]) -> str:
    """``text`` as HTML, each word whose analyzed form is a query term in ``<mark>``."""
    parts = []
    for piece in re.split(r"(\w+)", text):
        escaped = html.escape(piece)
        if piece and re.fullmatch(r"\w+", piece) and terms.intersection(analyze(piece)):
            escaped = f"<mark>{escaped}</mark>"
        parts.append(escaped)
    return "".join(parts)


@dataclass
class JudgingSession:
    """The state of one judging session: the pool, the documents, the judgments file.

    The session holds the judgments file's writer lock from construction until :meth:`close` (or
    the process's end); use it as a context manager, or call :meth:`close`. A second session on the
    same file meanwhile is a :class:`~corpora.RetbenchError` naming this one. :attr:`warnings` are
    what reading the existing file gave.
    """

    pool: list[tuple[str, str]]
    dataset: Dataset
    out: Path
    analyze: Callable[[str], Sequence[str]]
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self._queries = dict(zip(self.dataset.queries.ids, self.dataset.queries.texts))
        self._docs = self.dataset.corpus.index_of()
        for number, (query, doc) in enumerate(self.pool, start=2):
            if query not in self._queries:
                raise RetbenchError(f"pool pair {number - 1} (query {query!r}) names a query the corpus "
                                    f"{self.dataset.name!r} does not hold. Fix: give the `corpus` the pool was made "
                                    "from")
            if doc not in self._docs:
                raise RetbenchError(f"pool pair {number - 1} (document {doc!r}) names a document the corpus "
                                    f"{self.dataset.name!r} does not hold. Fix: give the `corpus` the pool was made "
                                    "from")
        folder = self.out.parent if str(self.out.parent) else Path(".")
        if not folder.is_dir():
            raise RetbenchError(f"`out` {self.out}: its folder {folder} does not exist. Fix: create it, or name a "
                                "file in an existing folder")
        if self.out.is_dir():
            raise RetbenchError(f"`out` {self.out} is a folder. Fix: name a file")
        self._closed = False
        self._writer = WriterLock(self.out, "bench judge")  # before reading: no one else appends meanwhile
        try:
            self._lines, self.warnings = _read_judgments(self.out)
        except BaseException:
            self._writer.close()
            raise
        self._earlier = len(self._lines)  # the file's judgments from before this session
        self._appended: list[_Appended] = []  # this session's lines still in the file, oldest first

    def close(self) -> None:
        """Let the judgments file go (its lock); the session writes no more. Again: nothing."""
        with self._lock:
            self._closed = True
            self._writer.close()

    def __enter__(self) -> JudgingSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def announce(self, address: str) -> None:
        """Record the address the session is served at in its lock, for a refused second server to name."""
        self._writer.record(address)

    # ----- state ---------------------------------------------------------------------------------

    def _judged(self) -> set[tuple[str, str]]:
        return {(line.query_id, line.doc_id) for line in self._lines}

    def current(self) -> tuple[str, str] | None:
        """The first pair of the pool the judgments file does not judge (None: all are judged)."""
        judged = self._judged()
        return next((pair for pair in self.pool if pair not in judged), None)

    def state(self) -> dict[str, Any]:
        judged = self._judged()
        done = sum(pair in judged for pair in self.pool)
        pair = self.current()
        shown = None
        if pair is not None:
            query_text = self._queries[pair[0]]
            terms = set(self.analyze(query_text))
            j = self._docs[pair[1]]
            corpus = self.dataset.corpus
            title = corpus.titles[j] if corpus.titles else ""
            shown = {"query_id": pair[0], "doc_id": pair[1], "query": query_text,
                     "title_html": _highlight(title or "", terms, self.analyze),
                     "text_html": _highlight(corpus.texts[j], terms, self.analyze)}
        last = self._lines[-1] if self._lines else None
        return {"done": done, "total": len(self.pool), "pair": shown, "undoable": len(self._appended),
                "last": {"query_id": last.query_id, "doc_id": last.doc_id, "grade": last.grade} if last else None}

    # ----- writes ----------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise LookupError("this session is closed: it writes no more (restart bench judge)")

    def judge(self, query_id: str, doc_id: str, grade: int) -> dict[str, Any]:
        """Record ``grade`` for the shown pair (which must be ``(query_id, doc_id)``: a stale page or a
        repeated key cannot judge another one), durably, and return the next state."""
        with self._lock:
            self._check_open()
            if grade not in GRADE_SCALE:
                raise ValueError(f"grade must be one of {sorted(GRADE_SCALE)}")
            if self.current() != (query_id, doc_id):
                raise LookupError("that pair is not the one shown now")
            line = f"{query_id} 0 {doc_id} {grade}\n".encode("utf-8")
            new_file = not self.out.exists()
            with open(self.out, "a+b") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size:
                    handle.seek(size - 1)
                    if handle.read(1) != b"\n":
                        line = b"\n" + line  # the last line lacked its newline: it stays whole
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            if new_file:
                _fsync_folder(self.out)
            start = size + (1 if line.startswith(b"\n") else 0)
            self._appended.append(_Appended(start, line[start - size:]))
            self._lines.append(_Line(query_id, doc_id, grade))
            return self.state()

    def undo(self) -> dict[str, Any]:
        """Remove the last judgment this session appended (truncated away and fsynced); its pair is
        shown again. Nothing from before the session, nor a file whose end is no longer that line
        (another program wrote to it), is ever truncated: :class:`LookupError` says why."""
        with self._lock:
            self._check_open()
            if not self._appended:
                kept = f"the {self._earlier} judgment(s) the file held before are kept; " if self._earlier else ""
                raise LookupError(f"nothing to undo: this session has judged nothing yet ({kept}edit "
                                  f"{self.out.name} to change an earlier judgment)")
            last = self._appended[-1]
            end = last.start + len(last.data)
            try:
                handle = open(self.out, "r+b")
            except FileNotFoundError:
                raise LookupError(f"{self.out.name} is gone: nothing to undo") from None
            with handle:
                size = os.fstat(handle.fileno()).st_size
                handle.seek(last.start)
                if size != end or handle.read(len(last.data)) != last.data:
                    raise LookupError(f"{self.out.name} no longer ends with the line this session wrote last "
                                      "(another program changed it): undo refused, nothing removed. Fix: edit the "
                                      "file by hand, then restart bench judge")
                handle.truncate(last.start)
                handle.flush()
                os.fsync(handle.fileno())
            self._appended.pop()
            self._lines.pop()
            return self.state()


def _fsync_folder(path: Path) -> None:
    """Make a new file's name durable too (its folder's entry)."""
    try:
        descriptor = os.open(path.parent if str(path.parent) else ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


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
    document.getElementById('message').textContent = answer.ok ? '' : data.error;
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
    buttons = "".join(f'<button data-grade="{g}" title="{html.escape(meaning)}">{g} · {html.escape(meaning)}</button>'
                      for g, meaning in GRADE_SCALE.items())
    return _PAGE.replace("__TOKEN__", token).replace("__BUTTONS__", buttons)


class _DeadlineReader(io.RawIOBase):
    """A connection's bytes, each read given only the time left until :attr:`deadline`: a client
    that trickles its request a byte at a time is dropped as surely as one that stops sending."""

    def __init__(self, connection: socket.socket, limit: float) -> None:
        self._connection = connection
        self.limit = limit
        self.deadline = time.monotonic() + limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the client did not send its request in time")
        self._connection.settimeout(left)
        try:
            return self._connection.recv_into(buffer)
        finally:
            self._connection.settimeout(self.limit)  # an answer's writes get the whole limit each


class _Handler(BaseHTTPRequestHandler):
    server: _JudgeServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        self.timeout = self.server.client_time_limit  # the base class sets it on the connection
        super().setup()
        self.rfile.close()  # the base class's reader, replaced by one under a deadline
        self._reader = _DeadlineReader(self.connection, self.server.client_time_limit)
        self.rfile = io.BufferedReader(self._reader)
        self._head = False

    def handle_one_request(self) -> None:
        # Each request (and the wait for it, on a kept-alive connection) gets the whole limit; a read
        # past it raises TimeoutError, which the base class answers by closing the connection.
        self._reader.deadline = time.monotonic() + self._reader.limit
        self._head = False
        super().handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- the base class's name
        pass  # the terminal shows the URL and errors, not every request

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        if self.close_connection:
            self.send_header("Connection", "close")  # the client learns it, rather than finding the socket shut
        self.end_headers()
        if not self._head:
            self.wfile.write(body)

    def _json(self, status: int, document: dict[str, Any]) -> None:
        self._send(status, json.dumps(document).encode("utf-8"), "application/json")

    def _host_allowed(self) -> bool:
        hosts = self.headers.get_all("Host") or []
        if not self.server.hosts.allows(hosts[0] if len(hosts) == 1 else None):
            self._json(400, {"error": "this server answers only to loopback host names"})
            return False
        return True

    def do_GET(self) -> None:  # noqa: N802 -- http.server's name
        if not self._host_allowed():
            return
        path = urlsplit(self.path).path
        if path == "/":
            self._send(200, page(self.server.session.token).encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/api/state":
            self._json(200, {"state": self.server.session.state()})
        else:
            self._json(404, {"error": "not found"})

    def do_HEAD(self) -> None:  # noqa: N802 -- http.server's name
        """As GET, without the body (the headers, Content-Length included, are GET's)."""
        self._head = True
        self.do_GET()

    def _write_refused(self) -> tuple[int, str] | None:
        """Why a write is refused (status, reason), or None: see the module docstring."""
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return 415, "a write must be JSON (Content-Type: application/json)"
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            return 403, f"cross-site write refused (Sec-Fetch-Site: {site})"
        origin = self.headers.get("Origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.hostname is None or not is_loopback(parts.hostname) or parts.port != self.server.server_port:
                return 403, f"write from another origin refused ({origin})"
        if not secrets.compare_digest(self.headers.get("X-Judge-Token") or "", self.server.session.token):
            return 403, "a write must carry this session's token (reload the page)"
        return None

    def do_POST(self) -> None:  # noqa: N802 -- http.server's name
        if not self._host_allowed():
            return
        refused = self._write_refused()
        declared = self.headers.get("Content-Length") or "0"
        if not declared.isdigit():
            self.close_connection = True  # the body's end is unknown: read none of it
            self._json(400, {"error": f"Content-Length {declared!r} is not a number of bytes"})
            return
        length = int(declared)
        if length > MAX_BODY:
            self.close_connection = True  # its body is not read: the connection cannot carry another request
            self._json(413, {"error": f"a write's body is at most {MAX_BODY} bytes, not {length}"})
            return
        body = self.rfile.read(length) if length > 0 else b""
        if len(body) < length:  # the client closed its side before the end of its body
            self.close_connection = True
            return
        if refused is not None:
            self._json(refused[0], {"error": refused[1]})
            return
        try:
            document = json.loads(body or b"{}")
            if not isinstance(document, dict):
                raise ValueError("not an object")
        except ValueError:
            self._json(400, {"error": "the body is not a JSON object"})
            return
        session = self.server.session
        path = urlsplit(self.path).path
        try:
            if path == "/api/judge":
                grade = document.get("grade")
                if isinstance(grade, bool) or not isinstance(grade, int):
                    raise ValueError("grade must be an integer")
                state = session.judge(str(document.get("query_id")), str(document.get("doc_id")), grade)
            elif path == "/api/undo":
                state = session.undo()
            else:
                self._json(404, {"error": "not found"})
                return
        except ValueError as exc:
            self._json(400, {"error": str(exc), "state": session.state()})
            return
        except LookupError as exc:
            self._json(409, {"error": str(exc.args[0]), "state": session.state()})
            return
        except OSError as exc:
            self._json(500, {"error": f"the judgments file cannot be written ({exc.strerror or exc})",
                             "state": session.state()})
            return
        self._json(200, {"state": state})

    def _not_allowed(self) -> None:
        if self._host_allowed():
            self._json(405, {"error": "method not allowed"})

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed  # noqa: N815 -- http.server's names


class _JudgeServer(ThreadingHTTPServer):
    daemon_threads = True  # a thread per connection: a slow client never holds up another

    def __init__(self, address: tuple[str, int], session: JudgingSession, client_time_limit: float):
        self.session = session
        self.hosts = AllowedHosts()
        self.client_time_limit = client_time_limit
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # a client that went away (or was dropped) is no error of the server's
        super().handle_error(request, client_address)


def make_server(session: JudgingSession, port: int, host: str = "127.0.0.1", *,
                client_time_limit: float = CLIENT_TIME_LIMIT) -> _JudgeServer:
    """The judging server on ``host`` (a loopback address) and ``port`` (0: any free one); a client
    has ``client_time_limit`` seconds to send each whole request. The session's lock records its
    address (see :class:`JudgingSession`)."""
    if not is_loopback(host):
        raise RetbenchError(f"the judging page listens on loopback only, not {host!r}. Fix: use 127.0.0.1")
    if not client_time_limit > 0:
        raise ValueError(f"client_time_limit must be > 0 seconds, not {client_time_limit!r}")
    try:
        server = _JudgeServer((host, port), session, client_time_limit)
    except OSError as exc:
        raise RetbenchError(f"cannot listen on {host}:{port}: {exc.strerror or exc}. Fix: choose another `port` "
                            "(`port=0` takes a free one)") from None
    session.announce(f"http://{host}:{server.server_port}/")
    return server
