"""One-sentence summaries for the listings: ``bench corpora``, ``bench retrievers`` and the command
lists of ``--help``.

A listing shows the first sentence of an item's description whole, wrapped to the width ``--help``
uses, never a line cut at a fixed width: a summary that stops mid-sentence ("14", "it can be")
reads as a bug. The sentence ends at the first ``.``, ``!`` or ``?`` followed by a space and a
capital letter (or an opening bracket or quote), or at the end of the first paragraph; ``e.g.``
and the like do not end it. Sphinx markup is shown as plain backquoted names
(``:mod:`~a.b``` -> ```b```, ````x```` -> ```x```).
"""

from __future__ import annotations

import inspect
import re

import click

__all__ = ["SummaryGroup", "first_sentence", "listing_width", "wrapped"]

#: Abbreviations whose full stop does not end a sentence.
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf")
_END = re.compile(r"[.!?](?=\s+[A-Z(\[`'\"])")
_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def _plain(text: str) -> str:
    """Sphinx roles and double-backquoted literals as single-backquoted names."""
    def role(match: re.Match[str]) -> str:  # ~ keeps only the last part of the dotted name, as Sphinx shows it
        target = match.group(2)
        return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"

    text = _ROLE.sub(role, text)
    return _LITERAL.sub(r"`\1`", text)


def first_sentence(text: str | None) -> str:
    """The first sentence of ``text``'s first paragraph, on one line, Sphinx markup made plain
    (empty for no text)."""
    if not text:
        return ""
    paragraph = inspect.cleandoc(text).split("\n\n")[0]
    paragraph = _plain(" ".join(paragraph.split()))
    for match in _END.finditer(paragraph):
        before = paragraph[: match.start()].rsplit(" ", 1)[-1].lower()
        if before.lstrip("(") not in _ABBREVIATIONS:
            return paragraph[: match.end()]
    return paragraph


def listing_width() -> int:
    """The width ``--help`` wraps its text to (the terminal's, at most 80 columns)."""
    return click.HelpFormatter().width


def wrapped(text: str, indent: str = "    ") -> list[str]:
    """``text`` wrapped to :func:`listing_width`, each line indented by ``indent``."""
    wrapped_text = click.wrap_text(text, width=listing_width(), initial_indent=indent, subsequent_indent=indent)
    return wrapped_text.splitlines()


class SummaryGroup(click.Group):
    """A command group whose ``--help`` lists each command with the first sentence of its help,
    whole (click cuts it at about 45 characters with ``...``), unless the command sets ``short_help``."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            rows.append((name, command.short_help or first_sentence(command.help)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
