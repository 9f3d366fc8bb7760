"""``bench pool``: the unjudged (query, document) pairs in the top K of a results folder's systems,
written as a TSV for an assessor (``bench judge`` reads it); per system, how many holes it has."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli import ACCEPT_EDITED_HELP, PathParameter, write_atomically
from harness.judgments.pool import pool_folder


@click.command("pool")
@click.argument("results", type=PathParameter(path_type=Path))
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True,
              help="Look at the top K results of each system.")
@click.option("--out", "out", required=True, type=PathParameter(path_type=Path, dir_okay=False),
              help="The pool file to write (TSV: query_id, doc_id, n_systems, best_rank).")
@click.option("--accept-edited", is_flag=True, help=ACCEPT_EDITED_HELP)
def command(results: Path, depth: int, out: Path, accept_edited: bool) -> None:
    """The unjudged (query, document) pairs in the top K of any system of the results folder
    RESULTS, for the queries it evaluated: the holes in its judgments.

    The pool file lists them query by query, the pairs most systems retrieved first (then the best
    rank, then the doc id), with n_systems and best_rank; `bench judge` reads it. The output says
    per system how many of its top-K documents are unjudged.
    """
    found = pool_folder(results, depth, accept_edited=accept_edited)
    write_atomically(out, found.to_tsv(), "--out")
    width = max(len(label) for label in found.holes)
    click.echo(f"holes (unjudged documents in each system's top {depth}):")
    for label, holes in found.holes.items():
        retrieved = found.retrieved[label]
        share = f"{holes / retrieved:.1%}" if retrieved else "-"
        click.echo(f"  {label:<{width}}  {holes} of {retrieved} ({share})")
    n_queries = found.pairs["query_id"].nunique()
    click.echo(f"{len(found.pairs)} unjudged pairs in {n_queries} queries written to {out}")
