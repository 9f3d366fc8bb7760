"""MkDocs hook: two pieces of markup that GitHub and the docstrings write one way and Python-Markdown
renders another.

* The docstrings cross-reference in Sphinx's roles (:func:`compare`,
  :class:`~harness.core.record.CompareRecord`), which Markdown renders as the role's name before the
  code: drop the role, and for ``~a.b.C`` keep the last name, as Sphinx shows it.
* A table cell's code escapes its pipes (`html\\|md`), as GitHub needs; Python-Markdown keeps the
  backslash inside the code: drop it there.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|data|mod|exc|obj|const):<code>(~?)([^<]*)</code>")
_CODE = re.compile(r"<code>[^<]*\\\|[^<]*</code>")


def _shown(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: object) -> str:
    html = _ROLE.sub(_shown, html)
    return _CODE.sub(lambda match: match.group(0).replace("\\|", "|"), html)
