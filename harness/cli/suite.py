"""``bench compare --corpus A --corpus B ...``: a suite, the same systems on several collections
(:func:`harness.compare_suite`), written as one suite folder (:mod:`harness.suite.store`).

The terminal gets the suite tables (leaderboard, systems x collections, macro comparisons and each
pair's tally over the collections) and, with ``--full``, each collection's comparisons; progress
says which collection runs (``collection 2/3: cisi``). The folder is written before anything is
printed, and its path is printed first and last (``results: PATH``), as for one collection.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from harness.cli import RESULTS_KEY, ResultsFirstStdout, progress_shown
from harness.suite.run import compare_suite
from harness.core.options import RunOptions
from harness.core.record import CompareConfig
from harness.suite.report import check_suite_formats


def run_suite_command(ctx: click.Context, config: CompareConfig, retrievers: Sequence[Any], metrics: Sequence[Any],
                      out: Path, formats: Sequence[str], *, run: RunOptions, quiet: bool, full: bool,
                      stdout: ResultsFirstStdout) -> None:
    """Run the suite of ``config.corpus`` (several collections), write its folder and print its report."""
    check_suite_formats(formats)  # latex has no suite form: say so before any work

    def warn(message: str) -> None:
        click.echo(f"warning: {message}", err=True)

    def started(position: int, total: int, name: str) -> None:
        if not quiet:
            click.echo(f"collection {position}/{total}: {name}", err=True)

    with progress_shown(quiet) as progress:
        result = compare_suite(retrievers, list(config.corpus), metrics, on_collection=started,
                               baseline=config.baseline, **config.groups(), run=run, progress=progress,
                               reports=formats)  # each collection's folder too: the suite's report links them
    folder = result.write(out, command_line=["bench", *sys.argv[1:]], say=warn, reports=formats)
    ctx.meta[RESULTS_KEY] = folder
    for collection in result.collections:
        for warning in collection.warnings:
            warn(f"{collection.name}: {warning}")
    # where the results are, first and last, as every command that writes a results folder says it
    stdout.echo(f"results: {folder}" + ("" if full else " (report.txt there adds each collection's comparisons; "
                                                      "--full prints them here)"))
    stdout.echo(result.report(detail=full))
    stdout.echo("")
    stdout.echo(f"results: {folder}")
    stdout.finish(ctx, folder)
