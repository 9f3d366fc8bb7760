"""``bench corpora``: list the bundled corpora; ``show`` and ``validate`` any corpus folder.

``show`` prints what a corpus holds: documents (and how many are empty), queries and their facets,
judgments with the grade histogram, queries without a relevant judgment (excluded from averages),
judgments of unknown documents or queries (counted and skipped), candidate pools, warnings.
``validate`` prints the same and exits 2 when the corpus cannot be evaluated (a load error: bad
bytes, a malformed line, a duplicate id or one that cannot be written to a TREC file, a grade that
is not a 64-bit integer, no usable judgment, or more than 5% of the judgments naming unknown ids
without ``--allow-unmatched-judgments``), 0 otherwise. The layout is detected from the folder
(``--format`` forces one of the registered layouts); ``docs/corpus-formats.md`` describes them.
PATH may also be an ``irds:<id>`` of the ir_datasets package, read as ``--corpus`` reads it.
"""

from __future__ import annotations

import click

from corpora import DEFAULT_CORPUS, FORMATS, bundled_names, describe, load_dataset
from corpora.bundled import bundled_description
from corpora.inspection import UNMATCHED_LIMIT, report_lines, summary_line
from corpora.model import Dataset
from corpora.readers import DEFAULT_SPLIT, SPLIT_HELP
from harness.cli.summaries import SummaryGroup, first_sentence, wrapped


@click.group("corpora", cls=SummaryGroup, invoke_without_command=True)
@click.pass_context
def command(ctx: click.Context) -> None:
    """List the bundled corpora (usable by name with --corpus); `show` or `validate` a corpus folder
    (or an ir_datasets id, irds:<id>)."""
    if ctx.invoked_subcommand is None:
        for name in bundled_names():
            default = " (default)" if name == DEFAULT_CORPUS else ""
            click.echo(f"{name}{default}")
            for line in wrapped(first_sentence(bundled_description(name))):
                click.echo(line)


def _corpus_options(function):
    function = click.option("--allow-unmatched-judgments", "allow_unmatched", is_flag=True,
                            help=f"Skip judgments of unknown documents or queries with a warning even when more "
                                 f"than {UNMATCHED_LIMIT:.0%} of them are unmatched or a query loses every relevant "
                                 "judgment (an error otherwise).")(function)
    function = click.option("--split", default=DEFAULT_SPLIT, show_default=True, help=SPLIT_HELP)(function)
    function = click.option("--format", "corpus_format", type=click.Choice(list(FORMATS)), default=None,
                            help="Force the layout instead of detecting it from the folder's files.")(function)
    return click.argument("corpus", metavar="PATH")(function)


def _load(corpus: str, corpus_format: str | None, split: str, allow_unmatched: bool) -> Dataset:
    # a RetbenchError reaches the `bench` group, which prints it and exits 2 like every command
    return load_dataset(corpus, format=corpus_format, split=split, allow_unmatched_judgments=allow_unmatched)


@command.command("show")
@_corpus_options
def show(corpus: str, corpus_format: str | None, split: str, allow_unmatched: bool) -> None:
    """Counts, grade histogram, excluded queries and skipped judgments of the corpus at PATH."""
    dataset = _load(corpus, corpus_format, split, allow_unmatched)
    for line in report_lines(describe(dataset)):
        click.echo(line)


@command.command("validate")
@_corpus_options
def validate(corpus: str, corpus_format: str | None, split: str, allow_unmatched: bool) -> None:
    """Check the corpus at PATH; exit 2 with the reason (file and line) when it cannot be used."""
    dataset = _load(corpus, corpus_format, split, allow_unmatched)
    for line in report_lines(describe(dataset)):
        click.echo(line)
    verdict = f"valid with {len(dataset.warnings)} warning(s)" if dataset.warnings else "valid"
    click.echo(f"{verdict}: {summary_line(dataset)}")
