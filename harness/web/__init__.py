"""The web stack ``bench serve`` and ``bench judge`` share: FastAPI applications run by uvicorn.

:mod:`~harness.web.hosts` decides which ``Host`` headers a server answers (plain Python);
:mod:`~harness.web.guards` holds the checks in front of the applications (the ``Host`` allow-list,
and for a server that writes: the body limit, the token, JSON, ``Origin`` and ``Sec-Fetch-Site``);
:mod:`~harness.web.protocol` is the HTTP protocol with a time limit on each request, and the
uvicorn server both commands run. Everything but :mod:`~harness.web.hosts` needs the ``serve``
extra (FastAPI, uvicorn).

A low layer: it imports nothing of ``harness`` but this package, so the applications of
:mod:`harness.serve` and :mod:`harness.judgments` both build on it.
"""

from __future__ import annotations

__all__: list[str] = []
