"""docs/commands.md's table names the commands bench has, and only options they take: each row's
first cell is a command line (``bench VERB ...``) whose verb is a command of ``bench`` and whose
``--flags`` are options of that command; every command of ``bench`` has a row."""

from __future__ import annotations

import re
from pathlib import Path

import click

from harness.cli import main

REPO = Path(__file__).resolve().parents[1]
TABLE = REPO.joinpath("docs", "commands.md").read_text(encoding="utf-8").split("\n## Commands\n")[1].split("\n## ")[0]


def rows() -> list[tuple[str, list[str]]]:
    """(verb, the --flags the row's command line names), for each row of the table."""
    found = []
    for line in re.findall(r"^\| `(bench .+?)` \|", TABLE, re.M):
        words = line.split()
        found.append((words[1], re.findall(r"--[a-z][a-z-]*", line)))
    return found


def options(verb: str) -> set[str]:
    command = main.get_command(click.Context(main), verb)
    assert command is not None, f"the table names 'bench {verb}', which bench does not have"
    return {name for parameter in command.params for name in getattr(parameter, "opts", [])}


def test_every_row_names_a_command_and_its_options() -> None:
    assert len(rows()) >= 10
    for verb, flags in rows():
        taken = options(verb)
        assert set(flags) <= taken, (verb, sorted(set(flags) - taken))


def test_every_command_has_a_row() -> None:
    assert set(main.list_commands(click.Context(main))) <= {verb for verb, _ in rows()}
