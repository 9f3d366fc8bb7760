"""The listings a newcomer reads first (`bench corpora`, `bench retrievers`, the command lists of
`bench --help` and of every group's `--help`) give each item a whole sentence, never one cut at a
fixed width ("...in 8 topics, 14", "over the chosen analyzer; it can be"). Every listed item is
checked, so a new corpus, retriever or command is covered without touching this file."""

from __future__ import annotations

import re

import click
import pytest

from corpora import bundled_names
from harness.cli import main
from harness.cli.summaries import first_sentence
from retrievers import available
from retrievers.registry import broken_plugins


def assert_whole_sentence(text: str, item: str) -> None:
    assert text, f"{item}: no summary"
    assert re.search(r"[.!?]$", text), f"{item}: ends mid-sentence: {text!r}"
    assert not text.endswith("...") and "…" not in text, f"{item}: cut: {text!r}"
    for opening, closing in ("()", "[]"):
        assert text.count(opening) == text.count(closing), f"{item}: an unclosed {opening}: {text!r}"
    assert text.count("`") % 2 == 0 and text.count('"') % 2 == 0, f"{item}: an unclosed quote: {text!r}"


def blocks(output: str) -> dict[str, list[str]]:
    """An unindented line -> the indented lines under it."""
    found: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        if not line.startswith(" "):
            current = line
            found[current] = []
        elif current is not None:
            found[current].append(line.strip())
    return found


def test_bench_corpora_gives_every_bundled_corpus_a_whole_sentence(runner) -> None:
    result = runner.invoke(main, ["corpora"])
    assert result.exit_code == 0, result.output
    listed = blocks(result.stdout)
    assert [head.split()[0] for head in listed] == bundled_names()
    for head, lines in listed.items():
        assert_whole_sentence(" ".join(lines), head)


def test_bench_retrievers_gives_every_retriever_a_whole_sentence(runner) -> None:
    result = runner.invoke(main, ["retrievers"])
    assert result.exit_code == 0, result.output
    listed = blocks(result.stdout)
    names = [head.split("(")[0].split()[0] for head in listed]
    assert names == [*available(), *broken_plugins()]
    for head, lines in listed.items():
        if head.endswith("(broken plugin)"):
            continue
        summary = []
        for line in lines:  # the summary comes first; then where a plugin comes from, or why it cannot run
            if line.startswith(("from ", "not available here: ")):
                break
            summary.append(line)
        assert_whole_sentence(" ".join(summary), head)


def every_group() -> list[tuple[str, click.Group]]:
    groups: list[tuple[str, click.Group]] = []

    def walk(path: str, command: click.Command) -> None:
        if isinstance(command, click.Group):
            groups.append((path, command))
            context = click.Context(command)
            for name in command.list_commands(context):
                walk(f"{path} {name}", command.get_command(context, name))

    walk("bench", main)
    return groups


@pytest.mark.parametrize(("path", "group"), every_group(), ids=[path for path, _ in every_group()])
def test_every_command_list_of_help_gives_whole_sentences(runner, path: str, group: click.Group) -> None:
    result = runner.invoke(main, [*path.split()[1:], "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    section = result.stdout.split("\nCommands:\n", 1)[1]
    entries: dict[str, list[str]] = {}
    name = None
    for line in section.splitlines():
        if not line.strip():
            break
        match = re.match(r"  (\S+)(\s{2,}(.*))?$", line)
        if match:  # a command: its name, then its summary (a long name puts it on the next line)
            name = match.group(1)
            entries[name] = [match.group(3) or ""]
        else:
            entries[name].append(line.strip())
    context = click.Context(group)
    assert list(entries) == [c for c in group.list_commands(context) if not group.get_command(context, c).hidden]
    for command, lines in entries.items():
        assert_whole_sentence(" ".join(" ".join(lines).split()), f"{path} {command}")


@pytest.mark.parametrize(("text", "sentence"), [
    ("Okapi BM25 over the chosen analyzer; it can be\nfitted in shards (:mod:`retrievers.bm25_shards`). More.",
     "Okapi BM25 over the chosen analyzer; it can be fitted in shards (`retrievers.bm25_shards`)."),
    ("Ranks by ``k`` terms, e.g. BM25. Then more.", "Ranks by `k` terms, e.g. BM25."),
    ("Uses :class:`~retrievers.bm25.BM25`.\n\nA second paragraph.", "Uses `BM25`."),
    ("k1 = 1.2 by default, an idf (Lucene's) weighting", "k1 = 1.2 by default, an idf (Lucene's) weighting"),
    ("Is it? Yes.", "Is it?"),
    ("", ""),
])
def test_first_sentence_takes_the_sentence_whole(text: str, sentence: str) -> None:
    assert first_sentence(text) == sentence
