"""The checks ``bench serve`` and ``bench judge`` put in front of their FastAPI applications.

For both servers
    :class:`HostCheck` (ASGI middleware) answers 400 to a request whose ``Host`` header is not one
    the server answers to (:class:`harness.web.hosts.AllowedHosts`: DNS rebinding), before anything
    else, whatever the method and path.

For a server that writes (``bench judge``), so that no other site can make a browser write
    :class:`BodyLimit` (ASGI middleware) answers 413 to a body over its limit, unread, and closes
    the connection (uvicorn has no such setting); :func:`write_guard` makes the FastAPI dependency a
    write route declares: the write must carry the session's random token (in the page, which
    another site cannot read) in an ``X-Judge-Token`` header, a JSON body (``Content-Type:
    application/json``, which a cross-site form cannot send without a preflight the server never
    grants), from no other origin (``Origin``, when sent, must be a loopback one on the server's
    own port) and not cross-site (``Sec-Fetch-Site``, when sent, must be ``same-origin`` or
    ``none``); otherwise 415 or 403. :class:`NoStore` adds the headers that keep a writing page out
    of caches and frames.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse

from harness.web.hosts import AllowedHosts, is_loopback

__all__ = ["TOKEN_HEADER", "BodyLimit", "HostCheck", "NoStore", "write_guard"]

#: The header a write carries the session's token in.
TOKEN_HEADER = "X-Judge-Token"

_Scope = dict[str, Any]


def _header(scope: _Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope["headers"] if key == name]


class HostCheck:
    """ASGI middleware: a request whose ``Host`` header ``hosts`` does not allow gets 400, before
    anything else; its JSON ``detail`` is ``explain(shown)``, where ``shown`` names what was sent
    (``Host 'evil.example'``, ``no Host header``, ``several Host headers``)."""

    def __init__(self, app: Any, hosts: AllowedHosts, explain: Callable[[str], str]):
        self.app = app
        self.hosts = hosts
        self.explain = explain

    async def __call__(self, scope: _Scope, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            named = _header(scope, b"host")
            header = named[0].decode("latin-1") if len(named) == 1 else None
            if not self.hosts.allows(header):
                if scope["type"] == "websocket":  # closed before it is accepted: the server answers 403
                    await send({"type": "websocket.close", "code": 1008})
                    return
                shown = "no Host header" if not named else f"Host {header[:80]!r}" if header else "several Host headers"
                await JSONResponse({"detail": self.explain(shown)}, status_code=400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """ASGI middleware: a request whose body is over ``limit`` bytes gets 413 and its connection is
    closed (``Connection: close``), its body unread. A declared ``Content-Length`` is judged before
    anything is read; a body without one (chunked) is read up to the limit first."""

    def __init__(self, app: Any, limit: int):
        self.app = app
        self.limit = limit

    async def _too_large(self, scope: _Scope, receive: Any, send: Any, declared: str | None) -> None:
        size = f", not {declared}" if declared is not None else ""
        response = JSONResponse({"detail": f"a request's body is at most {self.limit} bytes{size}"},
                                status_code=413, headers={"Connection": "close"})
        await response(scope, receive, send)

    async def __call__(self, scope: _Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared:  # h11 has answered 400 to one that is not a number
            if int(declared[0]) > self.limit:
                await self._too_large(scope, receive, send, declared[0].decode("latin-1"))
                return
            await self.app(scope, receive, send)
            return
        if not _header(scope, b"transfer-encoding"):
            await self.app(scope, receive, send)  # no body
            return
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._too_large(scope, receive, send, None)
                return
            if message["type"] != "http.request" or not message.get("more_body", False):
                break

        async def replay() -> dict[str, Any]:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


class NoStore:
    """ASGI middleware: every answer says not to cache it (``Cache-Control: no-store``), not to
    guess its type (``X-Content-Type-Options: nosniff``), and not to show it in a frame
    (``X-Frame-Options: DENY``, against clickjacking a page whose keys write)."""

    HEADERS = ((b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"))

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: _Scope, receive: Any, send: Any) -> None:
        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers if scope["type"] == "http" else send)


def write_guard(token: str) -> Callable[[Request], None]:
    """The FastAPI dependency of a write route: it raises :class:`~fastapi.HTTPException` (415 or
    403, its ``detail`` saying why) unless the request may write (see the module docstring)."""

    expected = token.encode("utf-8")

    def check(request: Request) -> None:
        content_type = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise HTTPException(415, "a write must be JSON (Content-Type: application/json)")
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise HTTPException(403, f"cross-site write refused (Sec-Fetch-Site: {site})")
        origin = request.headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            server = request.scope.get("server") or (None, None)
            try:
                port = parts.port
            except ValueError:
                port = None
            if parts.hostname is None or not is_loopback(parts.hostname) or port != server[1]:
                raise HTTPException(403, f"write from another origin refused ({origin})")
        sent = (request.headers.get(TOKEN_HEADER) or "").encode("latin-1")  # as the header came
        if not secrets.compare_digest(sent, expected):
            raise HTTPException(403, "a write must carry this session's token (reload the page)")

    return check
