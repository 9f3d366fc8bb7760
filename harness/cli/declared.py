"""Click options built from the option groups of :mod:`harness.core.options`, and the library's
parameter names turned back into flags for the terminal.

A default or a help text is declared once, on the group's field; :func:`option` makes the click
option of a field (its flag, default, type and help), so ``bench compare``, ``bench tune`` and
``bench gate`` cannot drift from :func:`harness.compare`. The library's errors name parameters in
backticks (```bootstrap_samples```, ```seed=0```, ```accept_edited=True```); :func:`as_flags` prints
them as the command's flags (``--bootstrap-samples``, ``--seed 0``, ``--accept-edited``), by the
table :func:`flags_of` makes of the command's options and :data:`LIBRARY_NAMES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import click

from harness.core.options import CONFIDENCES, FAMILIES, declared

__all__ = ["LIBRARY_NAMES", "as_flags", "flags_of", "help_values", "option", "take_groups"]


def option(group: type, name: str, *flags: str, **overrides: Any) -> Callable[[Callable[..., Any]], Any]:
    """The click option of ``group``'s field ``name``: its flag (unless ``flags`` are given), its
    default (shown) and its help; ``overrides`` are click's keywords (``type``, or a ``help`` that
    must say more for one command)."""
    default, text, flag = declared(group, name)
    settings: dict[str, Any] = {"default": default, "help": text.format(**help_values()) if "{" in text else text,
                                **overrides}
    shown = settings["default"]  # a command may show the value the group's None stands for (--split test)
    if shown is not None and not isinstance(shown, bool):
        settings.setdefault("show_default", True)
        settings.setdefault("type", type(shown))
    return click.option(*(flags or (flag,)), name, **settings)


def take_groups(options: dict[str, Any], *groups: type) -> list[Any]:
    """Each of ``groups`` made of the fields ``options`` holds by their own names, which are taken out
    of ``options``: a command's click options built by :func:`option` come back as the groups they
    were declared in (each checks its fields, so a mistake is an error naming the flag)."""
    return [group(**{f.name: options.pop(f.name) for f in fields(group) if f.name in options}) for group in groups]


def help_values() -> dict[str, object]:
    """The values the declared help texts name (``{families}``, ``{exact_up_to}``, ...), from their own
    declarations."""
    from harness.core.statistics import EXACT_UP_TO

    return {"families": "; ".join(f"{name} = {means}" for name, means in FAMILIES.items()),
            "exact_up_to": EXACT_UP_TO,
            "confidences": "; ".join(f"{name} = {means}" for name, means in CONFIDENCES.items())}


#: A command's parameter name -> the library parameter it is passed to, where the two differ
#: (``bench corpora show --format`` is ``load_dataset(format=...)``, ``bench gate --corpus-format``
#: too): the library's errors name the latter, and the terminal must still get the flag. A command
#: with an option of the library's own name keeps that one.
LIBRARY_NAMES = {"corpus_format": "format", "allow_unmatched": "allow_unmatched_judgments"}


def flags_of(command: click.Command | None) -> dict[str, str]:
    """Parameter name -> the flag that sets it (its first long one), for every option of ``command``,
    and for the library's name of one (:data:`LIBRARY_NAMES`). A group (``bench corpora``) has the
    flags of its subcommands as well: an error of ``bench corpora show`` reaches the group."""
    flags: dict[str, str] = {}
    for param in command.params if command is not None else []:
        if isinstance(param, click.Option) and param.name:
            long = [flag for flag in param.opts if flag.startswith("--")]
            if long:
                flags[param.name] = long[0]
    for own, library in LIBRARY_NAMES.items():
        if own in flags:
            flags.setdefault(library, flags[own])
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            for name, flag in flags_of(sub).items():
                flags.setdefault(name, flag)
    return flags


_NAMED = re.compile(r"`([a-z_][a-z0-9_]*)(?:=([^`]*))?`")
_QUOTED_WORD = re.compile(r"""(["'])([\w.@:,-]+)\1""")


def as_flags(message: str, flags: dict[str, str]) -> str:
    """``message`` with each ```name``` that ``flags`` knows as its flag, and ```name=value``` as
    ``--flag value`` (```name=True``` as the bare ``--flag``; a quoted word loses its quotes, which
    the shell does not need); other backticked text is left as it is.

    >>> as_flags("`seed` must be >= 0. Fix: pass e.g. `seed=0` (see `bench corpora`)", {"seed": "--seed"})
    '--seed must be >= 0. Fix: pass e.g. --seed 0 (see `bench corpora`)'
    >>> as_flags('pass `accept_edited=True` or `order="file"`',
    ...          {"accept_edited": "--accept-edited", "order": "--order"})
    'pass --accept-edited or --order file'
    """

    def flag(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(2)
        if name not in flags:
            return match.group(0)
        if value is None or value == "True":
            return flags[name]
        word = _QUOTED_WORD.fullmatch(value)
        return f"{flags[name]} {word.group(2) if word else value}"

    return _NAMED.sub(flag, message)

