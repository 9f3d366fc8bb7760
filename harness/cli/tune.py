"""``bench tune``: search a grid of parameters, with a cross-validated estimate of the result.

A thin adapter over :func:`harness.tune`: it reads the options, calls the library, writes the
results folder (before printing, so a reader that stops early or a stdout that cannot be written costs
nothing: the error names the folder) and prints the summary; the folder's path is printed after the
line on the collection, before the summary, and again last (``results: PATH``), as ``bench compare``
prints it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from corpora import ANALYZERS, FORMATS, Dataset, summary_line
from corpora.readers import DEFAULT_SPLIT
from harness.cli import RESULTS_KEY, PathParameter, ResultsFirstStdout, progress_shown
from harness.cli.declared import option, take_groups
from harness.core.metrics import metrics_help
from harness.core.options import Loading, RunOptions, Scoring, Statistics
from harness.report.formats import REPORT_FORMATS, parse_formats
from harness.store.folder import check_out
from harness.tuning.record import FOLDS
from harness.tuning.report import check_tune_formats, tune_formats
from harness.tuning.search import tune
from retrievers.grid import MAX_POINTS


@click.command("tune", short_help="Tune a retriever's parameters over a grid, with a cross-validated estimate "
                                   "of the tuned retriever.")
@click.argument("grid")
@click.option("--metric", default="ndcg@10", show_default=True,
              help="The one metric the parameters are chosen by; any of `bench compare --metrics`: "
                   + metrics_help().split(": ", 1)[1])
@click.option("--folds", type=int, default=FOLDS, show_default=True,
              help="Folds of the cross-validation over queries (>= 2): each fold is scored with the parameters "
                   "chosen on the others.")
@option(Statistics, "seed", help="Seed (>= 0) of the folds and of the bootstrap intervals.")
@click.option("--stratify", default=None, metavar="FACET",
              help="Deal the queries of each value of this query facet evenly over the folds (a numeric facet "
                   "with many values in quartiles).")
@option(Loading, "facets_file", "--facets", type=PathParameter(dir_okay=False, path_type=Path),
        help="A facets side file (query id + one column per facet; .csv, .tsv or .jsonl) added to the queries, "
             "for --stratify.")
@click.option("--max-points", type=int, default=MAX_POINTS, show_default=True,
              help="Refuse a grid with more points than this.")
@click.option("--corpus", default="article", show_default=True,
              help="A bundled corpus name (see `bench corpora`) or a corpus folder.")
@option(Loading, "format", type=click.Choice(list(FORMATS)))
@option(Loading, "split", default=DEFAULT_SPLIT)
@option(Loading, "allow_unmatched_judgments", is_flag=True, default=False)
@option(Scoring, "analyzer", type=click.Choice(list(ANALYZERS)))
@option(Scoring, "depth",
        help="Results per query for a metric without a cutoff (one with a cutoff k reads the top k).")
@option(Scoring, "rel_threshold")
@option(Statistics, "bootstrap_samples")
@option(Statistics, "confidence", help="Confidence of the bootstrap intervals, between 0.5 and 1.")
@click.option("--out", type=PathParameter(path_type=Path), default=Path("results"), show_default=True,
              help="Folder that receives a new results folder per run.")
@click.option("--cache-dir", type=PathParameter(file_okay=False, path_type=Path), default=None,
              help="Folder of the index cache (the shared BM25 postings and fitted children are kept there for the "
                   "next run on the same corpus) [default: $RETBENCH_CACHE_DIR, else the user cache directory].")
@click.option("--no-cache", is_flag=True, help="Fit from scratch; read and write no cache.")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress on stderr: no progress line (it only shows on a terminal; it counts grid points "
                   "done) and no informational logs of ir_datasets.")
@click.option("--report", "reports", default="",
              help="Also write these reports into the results folder, comma-separated: "
                   + "; ".join(f"{REPORT_FORMATS[n].name} = {REPORT_FORMATS[n].file}, {REPORT_FORMATS[n].description}"
                               for n in tune_formats())
                   + " (the same as `bench report` on the folder; the HTML draws the metric over the grid).")
@click.pass_context
def command(ctx: click.Context, grid: str, metric: str, folds: int, stratify: str | None, max_points: int,
            corpus: str, out: Path, cache_dir: Path | None, no_cache: bool, quiet: bool, reports: str,
            **options: Any) -> None:
    """Search GRID, a retriever spec with ranges a:b:step and lists x|y|z, e.g.
    "bm25(k1=0.6:1.8:0.2,b=0.3:0.9:0.1)", "weighted(bm25,lsa,alpha=0:1:0.1)" or "rrf(bm25,lsa,k=10|30|60)".

    Every grid point is scored on every query; k-fold cross-validation over queries then gives an
    honest estimate of the tuned retriever (each query scored with parameters chosen without it),
    printed next to the in-sample best (optimistic), the default parameters' score and the
    parameters chosen on all queries. tune.csv in the results folder has every point's mean per fold;
    `bench report` on the folder (or --report html,md) draws the metric over the grid.
    """
    # the options declared by the groups come back as the groups (each checks its fields)
    scoring, statistics, loading = take_groups(options, Scoring, Statistics, Loading)
    ctx.meta[RESULTS_KEY] = None  # for the Ctrl-C message: nothing written yet

    def warn(message: str) -> None:
        click.echo(f"warning: {message}", err=True)

    check_out(out, warn)  # an unusable --out is found now, not after the whole search
    formats = parse_formats(reports)
    check_tune_formats(formats)  # a format without a tune report, or a missing extra, too

    stdout = ResultsFirstStdout()

    def loaded(dataset: Dataset) -> None:
        stdout.echo(summary_line(dataset))

    cache: bool | Path = False if no_cache else (cache_dir if cache_dir is not None else True)
    with progress_shown(quiet) as progress:
        result = tune(grid, corpus, metric, folds=folds, stratify=stratify, max_points=max_points, scoring=scoring,
                      statistics=statistics, loading=loading, run=RunOptions(cache, on_loaded=loaded),
                      progress=progress)
    folder = result.write(out, command_line=["bench", *sys.argv[1:]], say=warn, reports=formats)
    ctx.meta[RESULTS_KEY] = folder
    for warning in result.warnings:
        warn(warning)
    stdout.echo(f"results: {folder}")  # before the report and again last, as bench compare
    stdout.echo(result.report())
    stdout.echo("")
    stdout.echo(f"results: {folder}")
    stdout.finish(ctx, folder)
