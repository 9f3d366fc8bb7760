"""Collection rules for the whole checkout (``--doctest-modules`` imports every module of the packages).

The modules of ``bench serve``'s web application import FastAPI and pydantic at the top, as any
FastAPI application does; without the ``serve`` extra they cannot be imported, so their doctests are
not collected then (the store, the dashboard and the command import without it and stay collected;
tests/test_serve*.py skip with the reason). Likewise the compiled BM25 search loop imports numba
(the ``fast`` extra); tests/test_compiled_search.py skips its exactness tests without it.
"""

from __future__ import annotations

from importlib.util import find_spec

collect_ignore = [] if find_spec("fastapi") is not None else ["harness/serve/app.py", "harness/serve/schema.py"]
if find_spec("numba") is None:
    collect_ignore.append("retrievers/bm25/kernel.py")
