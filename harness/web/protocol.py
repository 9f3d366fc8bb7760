"""How ``bench serve`` and ``bench judge`` speak HTTP: uvicorn's h11 protocol, with a time limit on each request.

uvicorn waits for a request's headers as long as the client takes, and after answering a request
whose body it never read (a GET that declared a ``Content-Length``) its keep-alive timer restarts
on every byte: a client that sends less than its ``Content-Length``, or trickles it, holds a
connection for ever. :class:`BoundedH11Protocol` gives each request :data:`REQUEST_TIME_LIMIT`
seconds, counted from the connection's start or the previous answer's end, to arrive whole
(headers and body, whether the application reads the body or answers without it): past it the
connection is closed. The application's own time to answer a whole request is not counted (a
large results folder may take a while). The other connections are served meanwhile (uvicorn's
event loop).

:func:`uvicorn_server` makes the server both commands run: it uses this protocol whatever parsers
are installed (never httptools), since the limit is written against h11's states. Everything else
about HTTP (parsing, ``Content-Length``, keep-alive, a HEAD answer without its body, 400 for a
malformed request) is uvicorn's and h11's.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["REQUEST_TIME_LIMIT", "BoundedH11Protocol", "uvicorn_server"]

#: Seconds a client has to send a whole request, from its connection (or the previous answer).
REQUEST_TIME_LIMIT = 10.0


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol; a connection whose request does not arrive within
    :data:`REQUEST_TIME_LIMIT` (read when the wait starts) is closed."""

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._answering():
            self._disarm()  # a whole request is in, body and all: the application answers at its own pace

    def on_response_complete(self) -> None:
        self._arm()  # before the next request, which may already be buffered (pipelined), is handled
        super().on_response_complete()
        if self._answering():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _answering(self) -> bool:
        """Whether a whole request (headers and body) is in and its answer is not yet complete."""
        cycle: Any = self.cycle
        return (cycle is not None and not cycle.response_complete
                and self.conn.their_state in (h11.DONE, h11.MUST_CLOSE))

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(REQUEST_TIME_LIMIT, self._drop)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _drop(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def uvicorn_server(app: Any, sock: socket.socket) -> uvicorn.Server:
    """A uvicorn server for ``app`` on the bound, listening ``sock``, speaking
    :class:`BoundedH11Protocol` and logging warnings only; run it with ``.run(sockets=[sock])``
    (it stops on Ctrl-C, or when its ``should_exit`` is set)."""
    host, port = sock.getsockname()[:2]
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", http=BoundedH11Protocol))
