"""``bench compare``: run retrievers over a corpus, score, compare and diagnose them.

A thin adapter over :func:`harness.compare`: it reads the options (and an experiment file), turns
the specs and metric names into objects, calls the library, writes the result and prints its report.

The results folder is written before the report is printed, so neither a reader that stops early
(``bench compare | head -3``) nor a stdout that cannot be written (``> /dev/full``: an error that
names the folder), nor a Ctrl-C while printing costs the results; its path is printed
before the report and again after it. The terminal gets the report with the diagnosis abridged
(``--show-failures``) and, on a collection of more than two dozen queries, the rank table too
(:func:`harness.report.text.terminal_cut`); ``report.txt`` in the results folder keeps it whole, and
``--full`` prints it whole.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from corpora import ANALYZERS, DEFAULT_ANALYZER, FORMATS, Dataset, RetbenchError, summary_line
from corpora.analyzers import describe_analyzers
from corpora.inspection import UNMATCHED_LIMIT
from corpora.readers import DEFAULT_SPLIT
from harness.core.api import compare
from harness.cli import RESULTS_KEY, SPLIT_HELP, PathParameter, ResultsFirstStdout, progress_shown
from harness.judgments.condensed import DEFAULT_UNJUDGED, UNJUDGED_HELP, UNJUDGED_READINGS
from harness.engines import ENGINES
from harness.core.experiment import OptionKey, load_experiment
from harness.core.facets import MAX_VALUES, MIN_QUERIES
from harness.core.inputs import build_systems, resolve_metrics
from harness.core.metrics import metrics_help
from harness.core.record import DEFAULT_METRICS, DEFAULT_SYSTEMS, CompareConfig
from harness.report.text import ABRIDGED_FAILURES, ABRIDGED_QUERIES, SHOWN_FAILURES, TERMINAL_QUERIES, terminal_cut
from harness.report.formats import REPORT_FORMATS, check_formats, parse_formats
from harness.store.folder import check_out
from harness.core.retrieval_metrics import DEFAULT_RETRIEVAL_K
from harness.core.risk_coverage import CONFIDENCES
from harness.core.statistics import EXACT_UP_TO, FAMILIES

#: ``ctx.meta`` key of the experiment file's values for ``CompareConfig`` fields that no option sets.
_FILE_FIELDS = "retbench.experiment_fields"
_CONFIG_PARAMETER = "config_file"


def file_keys(command: click.Command) -> dict[str, click.Option]:
    """The keys an experiment file may use for options: every long option of ``command`` with
    underscores (``--no-cache`` -> ``no_cache``) -> its option; ``--config`` itself excluded."""
    keys: dict[str, click.Option] = {}
    for param in command.params:
        if isinstance(param, click.Option) and param.name != _CONFIG_PARAMETER:
            for flag in param.opts:
                if flag.startswith("--"):
                    keys[flag[2:].replace("-", "_")] = param
    return keys


def _accepts(option: click.Option) -> OptionKey:
    """What the file may give for ``option``: the TOML types of its click type, and its choices or range."""
    if option.is_flag:
        kinds: tuple[type, ...] = (bool,)
    elif isinstance(option.type, click.types.IntParamType):
        kinds = (int,)
    elif isinstance(option.type, click.types.FloatParamType):
        kinds = (float, int)
    else:
        kinds = (str,)

    def check(value: object) -> None:
        try:
            option.type.convert(value, option, None)
        except click.BadParameter as exc:
            raise ValueError(exc.message) from None

    # a path is read from the file's folder later, so checking it against the working directory
    # here could be wrong; click checks the resolved path like any other default
    return OptionKey(kinds, None if isinstance(option.type, click.Path) else check)


def _read_experiment(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    """``--config``: the file's values become the defaults of the options (the command line wins).

    Eager, so it runs before the other options read their defaults. Values for ``CompareConfig``
    fields that no option sets wait in ``ctx.meta`` for the command.
    """
    if path is None:
        return None
    keys = file_keys(ctx.command)
    from_file = load_experiment(path, {key: _accepts(option) for key, option in keys.items()})
    defaults = dict(ctx.default_map or {})
    fields: dict[str, object] = {}
    for key, value in from_file.items():
        option = keys.get(key)
        if option is None:
            fields[key] = value
        else:  # a list of specs is the comma-separated option, as typed on the command line
            defaults[option.name] = ",".join(value) if isinstance(value, list) else value
    ctx.default_map = defaults
    ctx.meta[_FILE_FIELDS] = fields
    return path


class _Once(click.Option):
    """An option that may be given once: the parser keeps every occurrence (click keeps only the
    last), so a second one is an error rather than a silent choice."""

    def add_to_parser(self, parser, ctx: click.Context) -> None:  # noqa: ANN001 (click's private parser)
        parser.add_option(obj=self, opts=self.opts, dest=self.name, action="append", nargs=self.nargs)

    def process_value(self, ctx: click.Context, value: object) -> object:
        if isinstance(value, list):
            if len(value) > 1:
                flag = self.opts[0]
                raise RetbenchError(
                    f"{flag} is given {len(value)} times ({', '.join(map(repr, value))}): several collections in one "
                    f"run are not supported yet. Fix: run bench compare once per collection, each with one {flag}")
            value = value[0]
        return super().process_value(ctx, value)


@click.command("compare")
@click.option("--corpus", cls=_Once, default="article", show_default=True,
              help="A bundled corpus name (see `bench corpora`), a corpus folder, or irds:<dataset id> (ir_datasets, the `irds` extra).")
@click.option("--format", "corpus_format", type=click.Choice(list(FORMATS)), default=None,
              help="Force the corpus layout instead of detecting it from the folder's files.")
@click.option("--split", default=DEFAULT_SPLIT, show_default=True, help=SPLIT_HELP)
@click.option("--allow-unmatched-judgments", is_flag=True,
              help=f"Skip judgments of unknown documents or queries with a warning even when more than "
                   f"{UNMATCHED_LIMIT:.0%} are unmatched or a query loses every relevant judgment (an error otherwise).")
@click.option("--systems", default=DEFAULT_SYSTEMS, show_default=True,
              help="Comma-separated retriever specs, e.g. bm25,lsa(dims=50),rrf(bm25,lsa) or my.module:MyRetriever "
                   "(see `bench retrievers`).")
@click.option("--metrics", default=DEFAULT_METRICS, show_default=True,
              help=metrics_help())
@click.option("--out", type=PathParameter(path_type=Path), default=Path("results"),
              show_default=True, help="Folder that receives a new results folder per run.")
@click.option("--depth", type=int, default=1000, show_default=True, help="Results each retriever returns per query.")
@click.option("--rel-threshold", type=int, default=1, show_default=True,
              help="Binary metrics count grade >= this as relevant.")
@click.option("--unjudged", type=click.Choice(list(UNJUDGED_READINGS)), default=DEFAULT_UNJUDGED, show_default=True,
              help=UNJUDGED_HELP)
@click.option("--bootstrap-samples", type=int, default=5000, show_default=True,
              help="Resamples of the paired bootstrap interval.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed (>= 0) of the bootstrap and of the Monte Carlo randomisation test.")
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="Confidence of the bootstrap interval, between 0.5 and 1; tests run at alpha = 1 - confidence.")
@click.option("--permutations", type=int, default=10_000, show_default=True,
              help=f"Random sign flips of the randomisation test when more than {EXACT_UP_TO} queries differ "
                   "(up to that, all sign patterns are enumerated exactly).")
@click.option("--family", type=click.Choice(list(FAMILIES)), default="metric", show_default=True,
              help="Holm family: " + "; ".join(f"{name} = {means}" for name, means in FAMILIES.items()) + ".")
@click.option("--baseline", default=None, help="Compare every system with this one instead of all pairs.")
@click.option("--fail-rank", type=int, default=3, show_default=True,
              help="Diagnose queries whose first relevant document is missing or below this rank.")
@click.option("--analyzer", type=click.Choice(list(ANALYZERS)), default=None,
              help=f"Analyzer for every retriever that takes one [default: {DEFAULT_ANALYZER}]. "
                   f"{describe_analyzers()}.")
@click.option("--facets", default=None,
              help=f"Comma-separated query facets to roll up into facets.csv ('' for none) [default: every numeric "
                   f"facet, in quantile buckets, and every other with at most {MAX_VALUES} values]; a cell of fewer "
                   f"than {MIN_QUERIES} queries gets no interval.")
@click.option("--facets-file", type=PathParameter(dir_okay=False, path_type=Path), default=None,
              help="A side file of query facets (.csv, .tsv or .jsonl: a query id column, then one column per facet) "
                   "added to the corpus's queries.")
@click.option("--risk-metric", default=None,
              help="Risk-coverage reads risk as 1 - this metric, one of --metrics [default: the first].")
@click.option("--confidence-from", type=click.Choice(list(CONFIDENCES)), default="score", show_default=True,
              help="A system's confidence per query: " + "; ".join(f"{name} = {means}" for name, means in
                                                                   CONFIDENCES.items())
                   + " (a retriever with its own confidence(queries) method uses that).")
@click.option("--retrieval-k", type=int, default=DEFAULT_RETRIEVAL_K, show_default=True,
              help="Cutoff k of the metrics card's recallAtK, precisionAtK and hitAtK, written for every system "
                   "and query to retrieval_metrics.jsonl (with mrr and ndcgAt10, exponential gain at 10) whatever "
                   "--metrics says.")
@click.option("--config", _CONFIG_PARAMETER, type=PathParameter(dir_okay=False, path_type=Path), default=None,
              is_eager=True, callback=_read_experiment,
              help="A TOML experiment file with any of these long options as keys (no_cache = true); "
                   "options given here override it.")
@click.option("--cache-dir", type=PathParameter(file_okay=False, path_type=Path), default=None,
              help="Folder of the index cache, where fitted retrievers are kept for the next run on the same "
                   "corpus [default: $RETBENCH_CACHE_DIR, else the user cache directory].")
@click.option("--no-cache", is_flag=True, help="Fit every retriever from scratch; read and write no cache.")
@click.option("--engine", type=click.Choice(list(ENGINES)), default="local", show_default=True,
              help="Where the work runs: " + "; ".join(f"{name} = {cls.description}" for name, cls in ENGINES.items())
                   + ". The results are the same bytes whatever the engine (docs/scale-out.md).")
@click.option("--scheduler", default=None,
              help="With --engine dask: the address of a running Dask scheduler, e.g. tcp://HOST:8786.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="With --engine dask and no --scheduler: worker processes of a local cluster started for the run "
                   "[default: one per core].")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds each retriever's fit, and then its search, may take; a step past it stops the run with "
                   "an error naming the retriever and the step (exit 2, no results folder) [default: no limit].")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress on stderr: no progress line (it only shows on a terminal) and no "
                   "informational logs of ir_datasets.")
@click.option("--show-failures", type=click.IntRange(min=0), default=None,
              help=f"Failed queries printed per system in the diagnosis (the rest are counted); report.txt in "
                   f"the results folder holds them all [default: {SHOWN_FAILURES}; {ABRIDGED_FAILURES} beyond "
                   f"{TERMINAL_QUERIES} queries; all with --full].")
@click.option("--full", is_flag=True,
              help=f"Print the report whole, as report.txt holds it: beyond {TERMINAL_QUERIES} queries the "
                   f"terminal otherwise gets the first {ABRIDGED_QUERIES} queries of the rank table (per_query.csv "
                   "holds them all) and a shorter diagnosis.")
@click.option("--report", "reports", default="",
              help="Also write these reports into the results folder, comma-separated: "
                   + "; ".join(f"{f.name} = {f.file}, {f.description}" for f in REPORT_FORMATS.values())
                   + " (the same as `bench report` on the folder).")
@click.pass_context
def command(ctx: click.Context, corpus: str, corpus_format: str | None, split: str,
            allow_unmatched_judgments: bool, systems: str, metrics: str,
            out: Path, depth: int, rel_threshold: int, bootstrap_samples: int, seed: int, confidence: float,
            permutations: int, family: str, baseline: str | None,
            fail_rank: int, analyzer: str | None, facets: str | None, facets_file: Path | None,
            risk_metric: str | None, confidence_from: str, retrieval_k: int, config_file: Path | None,
            cache_dir: Path | None, no_cache: bool, engine: str, scheduler: str | None, workers: int | None,
            timeout: float | None, quiet: bool, show_failures: int | None, full: bool, reports: str,
            unjudged: str) -> None:
    """Compare retrievers on a corpus: means, ranks, paired bootstrap and diagnosis.

    The defaults compare the article's four systems on its bundled corpus. Every run writes a new
    results folder under --out (report.txt there holds the whole report) and prints its path before
    the report and again last. On a collection of more than two dozen queries the printed report is
    abridged (--full prints it whole).
    """
    options = dict(corpus=corpus, systems=systems, metrics=metrics, format=corpus_format, split=split,
                   allow_unmatched_judgments=allow_unmatched_judgments,
                   depth=depth, rel_threshold=rel_threshold, bootstrap_samples=bootstrap_samples,
                   seed=seed, confidence=confidence, permutations=permutations, family=family,
                   baseline=baseline, fail_rank=fail_rank, analyzer=analyzer, facets=facets,
                   facets_file=str(facets_file) if facets_file is not None else None, risk_metric=risk_metric,
                   confidence_from=confidence_from, retrieval_k=retrieval_k,
                   cache_dir=str(cache_dir) if cache_dir is not None else None, cache=not no_cache,
                   unjudged=unjudged)
    untouched = CompareConfig()
    for key, value in ctx.meta.get(_FILE_FIELDS, {}).items():
        # fields no option sets (confidence, cache): the file's value, unless an option changed it
        if options.get(key, getattr(untouched, key)) == getattr(untouched, key):
            options[key] = value
    config = CompareConfig(**options)
    ctx.meta[RESULTS_KEY] = None  # for the Ctrl-C message: nothing written yet

    def warn(message: str) -> None:
        click.echo(f"warning: {message}", err=True)

    check_out(out, warn)  # an unusable --out is found now, not after the whole run
    formats = parse_formats(reports)
    check_formats(formats)  # a missing extra too
    stdout = ResultsFirstStdout()

    def loaded(dataset: Dataset) -> None:  # printed while the systems fit: `| head -1` leaves early
        stdout.echo(summary_line(dataset))

    # the options as objects; harness.compare checks the rest before loading the corpus
    metric_list = resolve_metrics(config.metrics)
    retrievers = build_systems(config.systems, config.analyzer)
    cache = False if not config.cache else (Path(config.cache_dir) if config.cache_dir else True)
    with progress_shown(quiet) as progress:
        result = compare(retrievers, config.corpus, metric_list, baseline=config.baseline, depth=config.depth,
                         rel_threshold=config.rel_threshold, bootstrap_samples=config.bootstrap_samples, seed=config.seed,
                         confidence=config.confidence, permutations=config.permutations, family=config.family,
                         fail_rank=config.fail_rank, analyzer=config.analyzer, facets=config.facets,
                         facets_file=config.facets_file, risk_metric=config.risk_metric,
                         confidence_from=config.confidence_from, retrieval_k=config.retrieval_k, cache=cache,
                         progress=progress, format=config.format,
                         split=config.split, allow_unmatched_judgments=config.allow_unmatched_judgments,
                         on_loaded=loaded, engine=engine, scheduler=scheduler, workers=workers, timeout=timeout,
                         unjudged=config.unjudged)
    folder = result.write(out, command_line=["bench", *sys.argv[1:]], say=warn, reports=formats)
    ctx.meta[RESULTS_KEY] = folder
    for warning in result.warnings:  # after writing: a closed stderr (2>&1 | head) must not cost the results
        click.echo(f"warning: {warning}", err=True)
    show_queries, failures_shown = (None, None) if full else terminal_cut(len(result.query_ids))
    abridged = show_queries is not None and show_queries < len(result.query_ids)
    # the first lines say where everything is, and how to see here what the terminal leaves out
    stdout.echo(f"results: {folder}" + (" (report.txt there holds the whole report; --full prints it here)"
                                        if abridged else ""))
    if config.unjudged != DEFAULT_UNJUDGED:
        stdout.echo(f"unjudged documents ({config.unjudged}): {UNJUDGED_READINGS[config.unjudged]}")
    stdout.echo(result.report(show_failures=show_failures if show_failures is not None else failures_shown,
                              show_queries=show_queries, heading=False))
    stdout.echo("")
    stdout.echo(f"results: {folder}")
    stdout.finish(ctx, folder)
