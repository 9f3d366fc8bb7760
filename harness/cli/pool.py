"""``bench pool``: the unjudged (query, document) pairs in the top K of a results folder's systems,
written as a TSV for an assessor (``bench judge`` reads it); per system, how many holes it has.

``--out`` goes through :func:`corpora.output_files.write_output`, checked before the folder is read;
``--out -`` writes the pool to stdout, and the holes then go to stderr."""

from __future__ import annotations

from pathlib import Path

import click

from corpora.output_files import check_output, write_output
from corpora.wording import counted
from harness.cli import ACCEPT_EDITED_HELP, OutputPath, PathParameter
from harness.judgments.pool import DEFAULT_ORDER, ORDERS, pool_folder, systems_of_order


@click.command("pool")
@click.argument("results", type=PathParameter(path_type=Path))
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True,
              help="Look at the top K results of each system.")
@click.option("--out", "out", required=True, type=OutputPath(),
              help="The pool file to write (TSV: query_id, doc_id, n_systems, best_rank); - for stdout (the holes "
                   "then go to stderr).")
@click.option("--order", default=DEFAULT_ORDER, show_default=True, metavar="NAME",
              help="The order of the pairs in the pool file: " + "; ".join(f"{name} = {means}"
                                                                          for name, means in ORDERS.items()) + ".")
@click.option("--accept-edited", is_flag=True, help=ACCEPT_EDITED_HELP)
def command(results: Path, depth: int, out: Path, order: str, accept_edited: bool) -> None:
    """The unjudged (query, document) pairs in the top K of any system of the results folder
    RESULTS, for the queries it evaluated: the holes in its judgments.

    The pool file lists them query by query, the pairs most systems retrieved first (then the best
    rank, then the doc id), with n_systems and best_rank; `bench judge` reads it. With --order
    pair:A,B, the pairs whose grade could most move the mean difference of systems A and B come
    first, across queries, and the output says how wide a range that difference can still take. The output
    says per system how many of its top-K documents are unjudged.
    """
    where = check_output(out, "--out", dash=True)  # before the folder is read
    found = pool_folder(results, depth, accept_edited=accept_edited, order=order)
    write_output(out, found.to_tsv(), "--out", dash=True)
    to_stderr = where.stream == 1  # stdout holds the pool
    width = max(len(label) for label in found.holes)
    click.echo(f"holes (unjudged documents in each system's top {depth}):", err=to_stderr)
    for label, holes in found.holes.items():
        retrieved = found.retrieved[label]
        share = f"{holes / retrieved:.1%}" if retrieved else "-"
        click.echo(f"  {label:<{width}}  {holes} of {retrieved} ({share})", err=to_stderr)
    if found.unknown is not None:
        a, b = systems_of_order(found.order, list(found.holes))  # type: ignore[misc]
        click.echo(f"still unknown about {a} - {b}: their mean DCG@{depth} difference (binary gain) lies in a range "
                   f"{found.unknown:.4f} wide until the grades of these pairs are known, the most decisive first",
                   err=to_stderr)
    n_queries = found.pairs["query_id"].nunique()
    click.echo(f"{counted(len(found.pairs), 'unjudged pair')} in {counted(n_queries, 'query')} written to {out}",
               err=to_stderr)
