"""Click options built from the option groups of :mod:`harness.core.options`, and the library's
parameter names turned back into flags for the terminal.

A default or a help text is declared once, on the group's field; :func:`option` makes the click
option of a field (its flag, default, type and help), so ``bench compare``, ``bench tune`` and
``bench gate`` cannot drift from :func:`harness.compare`. The library's errors name parameters in
backticks (```bootstrap_samples``` and ```seed=0```); :func:`as_flags` prints them as the command's
flags (``--bootstrap-samples``, ``--seed 0``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import click

from harness.core.options import Loading, Readings, Scoring, Statistics, declared
from harness.core.record import CompareConfig

__all__ = ["as_flags", "flags_of", "help_values", "option", "option_groups"]


def option(group: type, name: str, *flags: str, **overrides: Any) -> Callable[[Callable[..., Any]], Any]:
    """The click option of ``group``'s field ``name``: its flag (unless ``flags`` are given), its
    default (shown) and its help; ``overrides`` are click's keywords (``type``, or a ``help`` that
    must say more for one command)."""
    default, text, flag = declared(group, name)
    settings: dict[str, Any] = {"default": default, "help": text.format(**help_values()) if "{" in text else text}
    if default is not None and not isinstance(default, bool):
        settings["show_default"] = True
        settings["type"] = type(default)
    settings.update(overrides)
    return click.option(*(flags or (flag,)), name, **settings)


def help_values() -> dict[str, object]:
    """The values the declared help texts name (``{families}``, ``{exact_up_to}``, ...), from their own
    declarations."""
    from harness.core.facets import MAX_VALUES, MIN_QUERIES
    from harness.core.risk_coverage import CONFIDENCES
    from harness.core.statistics import EXACT_UP_TO, FAMILIES

    return {"families": "; ".join(f"{name} = {means}" for name, means in FAMILIES.items()),
            "exact_up_to": EXACT_UP_TO, "max_values": MAX_VALUES, "min_queries": MIN_QUERIES,
            "confidences": "; ".join(f"{name} = {means}" for name, means in CONFIDENCES.items())}


def flags_of(command: click.Command | None) -> dict[str, str]:
    """Parameter name -> the flag that sets it (its first long one), for every option of ``command``."""
    flags: dict[str, str] = {}
    for param in command.params if command is not None else []:
        if isinstance(param, click.Option) and param.name:
            long = [flag for flag in param.opts if flag.startswith("--")]
            if long:
                flags[param.name] = long[0]
    return flags


_NAMED = re.compile(r"`([a-z_][a-z0-9_]*)(?:=([^`]*))?`")


def as_flags(message: str, flags: dict[str, str]) -> str:
    """``message`` with each ```name``` that ``flags`` knows as its flag, and ```name=value``` as
    ``--flag value``; other backticked text is left as it is.

    >>> as_flags("`seed` must be >= 0. Fix: pass e.g. `seed=0` (see `bench corpora`)", {"seed": "--seed"})
    '--seed must be >= 0. Fix: pass e.g. --seed 0 (see `bench corpora`)'
    """

    def flag(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(2)
        if name not in flags:
            return match.group(0)
        return flags[name] if value is None else f"{flags[name]} {value}"

    return _NAMED.sub(flag, message)


def option_groups(config: CompareConfig) -> dict[str, object]:
    """The option groups of :func:`harness.compare` (all but ``run``) as a command's config holds them."""
    return dict(scoring=Scoring(config.depth, config.rel_threshold, config.analyzer, config.unjudged),
                statistics=Statistics(config.bootstrap_samples, config.seed, config.confidence, config.permutations,
                                      config.family),
                readings=Readings(config.fail_rank, config.facets, config.risk_metric, config.confidence_from,
                                  config.retrieval_k),
                loading=Loading(config.format, config.split, config.allow_unmatched_judgments, config.facets_file))
