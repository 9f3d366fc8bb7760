"""MkDocs hook: the docstrings cross-reference in Sphinx's roles (:func:`compare`,
:class:`~harness.core.record.CompareRecord`), which Markdown renders as the role's name before the
code. Drop the role, and for ``~a.b.C`` keep the last name, as Sphinx shows it."""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|data|mod|exc|obj|const):<code>(~?)([^<]*)</code>")


def _shown(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: object) -> str:
    return _ROLE.sub(_shown, html)
