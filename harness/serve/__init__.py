"""``bench serve``: the metrics card's evals API and its dashboard, read-only over results folders.

:mod:`harness.serve.store` reads the folders into JSON-ready answers (no web framework needed);
:mod:`harness.serve.app` is the FastAPI application (the ``serve`` extra) that answers
``/api/v1/evals/...`` from it, and :mod:`harness.serve.dashboard` renders the HTML pages at ``/``.
Every number served is one ``bench compare`` stored; nothing is re-computed.
"""

from __future__ import annotations

__all__: list[str] = []
