"""Collection rules for the whole checkout (``--doctest-modules`` imports every module of the packages),
and a closing summary of why tests were skipped.

The modules of the web applications (``bench serve``'s and ``bench judge``'s page, and the checks
and server protocol they share in ``harness/web``) import FastAPI, pydantic or uvicorn at the top, as
any FastAPI application does; without the ``serve`` extra they cannot be imported, so their doctests
are not collected then (the store, the dashboard, the judging session and the commands import without
it and stay collected; tests/test_serve*.py and the judging page's tests skip with the reason). Likewise the compiled BM25 search loop imports numba
(the ``fast`` extra); tests/test_compiled_search.py skips its exactness tests without it.
"""

from __future__ import annotations

from importlib.util import find_spec

#: The modules that import the ``serve`` extra's libraries at the top, by the library they need.
_NEEDS = {"fastapi": ["harness/serve/app.py", "harness/serve/schema.py", "harness/judgments/judge_page.py",
                      "harness/web/guards.py"],
          "uvicorn": ["harness/web/protocol.py"]}
collect_ignore = [module for library, modules in _NEEDS.items() if find_spec(library) is None for module in modules]
if find_spec("numba") is None:
    collect_ignore.append("retrievers/bm25/kernel.py")


def skip_reasons(reports: list) -> list[tuple[int, str]]:
    """(count, reason) of the skipped tests' reports, the most frequent first."""
    from collections import Counter

    reasons: Counter[str] = Counter()
    for report in reports:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    return sorted(((count, reason) for reason, count in reasons.items()), key=lambda item: (-item[0], item[1]))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Say why tests were skipped, one line per reason with its count: on a fresh clone most of the
    suite waits for an extra (``pip install 'retbench[...]'``) or the real collections, and a bare
    "166 skipped" does not say which (``pytest -rs`` lists every test)."""
    reasons = skip_reasons(terminalreporter.stats.get("skipped", []))
    if not reasons:
        return
    total = sum(count for count, _ in reasons)
    terminalreporter.section(f"{total} skipped: what would run them", sep="-")
    for count, reason in reasons:
        terminalreporter.write_line(f"{count:5d}  {reason}")
