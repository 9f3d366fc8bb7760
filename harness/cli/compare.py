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

import contextlib
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from corpora import ANALYZERS, FORMATS, Dataset, RetbenchError, summary_line
from corpora.readers import DEFAULT_SPLIT
from harness.cli.declared import option
from harness.comparison import compare
from harness.core.options import Loading, Readings, RunOptions, Scoring, Statistics
from harness.cli import RESULTS_KEY, PathParameter, ResultsFirstStdout, progress_shown
from harness.core.condensed import DEFAULT_UNJUDGED, UNJUDGED_READINGS
from harness.engines import ENGINES, resolve_engine
from harness.cli.experiment import OptionKey, load_experiment
from harness.core.inputs import build_systems, resolve_metrics
from harness.core.metrics import metrics_help
from harness.core.record import DEFAULT_METRICS, DEFAULT_SYSTEMS, CompareConfig
from harness.report.text import ABRIDGED_FAILURES, ABRIDGED_QUERIES, SHOWN_FAILURES, TERMINAL_QUERIES, terminal_cut
from harness.report.formats import REPORT_FORMATS, check_formats, parse_formats
from harness.store.folder import check_out
from harness.core.options import CONFIDENCES, FAMILIES

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
                raise RetbenchError(f"{flag} is given {len(value)} times ({', '.join(map(repr, value))}). "
                                    f"Fix: give {flag} once")
            value = value[0]
        return super().process_value(ctx, value)


class _Corpora(_Once):
    """``--corpus``: once is one collection (a str); several are a suite (a tuple, in the order given)."""

    def process_value(self, ctx: click.Context, value: object) -> object:
        if isinstance(value, list) and len(value) > 1:
            parent = super()
            return tuple(parent.process_value(ctx, [one]) for one in value)
        return super().process_value(ctx, value)


def _judgments_only(ctx: click.Context, qrels: Path | None, queries: Path | None) -> Dataset | None:
    """``--qrels`` (and ``--queries``): the collection of judgments only they make; None without --qrels.
    Refused beside an explicit --corpus, a suite, or the options of loading a corpus."""
    if qrels is None:
        if queries is not None:
            raise RetbenchError("--queries is given without --qrels. Fix: add --qrels FILE (a collection's own "
                                "queries come with --corpus)")
        return None
    given = [f"--{name.replace('_', '-')}" for name in ("corpus", "format", "split", "allow_unmatched_judgments")
             if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)]
    if given:
        raise RetbenchError(f"--qrels is given with {', '.join(given)}. Fix: give --qrels (judgments only, runs "
                            "compared) or --corpus (a collection with its documents), not both")
    from corpora.judgments_only import load_judgments_only

    return load_judgments_only(qrels, queries)


@click.command("compare")
@click.option("--corpus", cls=_Corpora, default="article", show_default=True,
              help="A bundled corpus name (see `bench corpora`), a corpus folder, or irds:<dataset id> (ir_datasets, "
                   "the `irds` extra). Given several times: a suite, the same systems on each collection, written as "
                   "one suite folder with a macro average (docs/suites.md).")
@click.option("--qrels", type=PathParameter(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Instead of --corpus: a qrels file alone, a collection without document texts, on which run files "
                   "(run(PATH)) and their fusions are compared (docs/own-runs.md); what needs the texts is said "
                   "to be unavailable.")
@click.option("--queries", type=PathParameter(exists=True, dir_okay=False, path_type=Path), default=None,
              help="With --qrels: the queries' texts and facets (JSON Lines or CSV with id and text) [default: the "
                   "judged queries, each query's id as its text].")
@option(Loading, "format", type=click.Choice(list(FORMATS)))
@option(Loading, "split", default=DEFAULT_SPLIT)
@option(Loading, "allow_unmatched_judgments", is_flag=True, default=False)
@click.option("--systems", default=DEFAULT_SYSTEMS, show_default=True,
              help="Comma-separated retriever specs, e.g. bm25,lsa(dims=50),rrf(bm25,lsa) or my.module:MyRetriever "
                   "(see `bench retrievers`).")
@click.option("--metrics", default=DEFAULT_METRICS, show_default=True,
              help=metrics_help())
@click.option("--out", type=PathParameter(path_type=Path), default=Path("results"),
              show_default=True, help="Folder that receives a new results folder per run.")
@option(Scoring, "depth")
@option(Scoring, "rel_threshold")
@option(Scoring, "unjudged", type=click.Choice(list(UNJUDGED_READINGS)))
@option(Statistics, "bootstrap_samples")
@option(Statistics, "seed")
@option(Statistics, "confidence")
@option(Statistics, "permutations")
@option(Statistics, "family", type=click.Choice(list(FAMILIES)))
@click.option("--baseline", default=None, help="Compare every system with this one instead of all pairs.")
@option(Readings, "fail_rank")
@option(Scoring, "analyzer", type=click.Choice(list(ANALYZERS)))
@option(Readings, "facets")
@option(Loading, "facets_file", type=PathParameter(dir_okay=False, path_type=Path))
@option(Readings, "risk_metric")
@option(Readings, "confidence_from", type=click.Choice(list(CONFIDENCES)))
@option(Readings, "retrieval_k")
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
@option(RunOptions, "timeout", type=click.FloatRange(min=0, min_open=True))
@option(RunOptions, "latency_queries", type=click.IntRange(min=0))
@option(RunOptions, "latency_rounds", type=click.IntRange(min=1))
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
def command(ctx: click.Context, out: Path, config_file: Path | None, no_cache: bool, engine: str,
            scheduler: str | None, workers: int | None, timeout: float | None, latency_queries: int,
            latency_rounds: int, quiet: bool,
            show_failures: int | None, full: bool, reports: str, qrels: Path | None, queries: Path | None,
            **options: Any) -> None:
    """Compare retrievers on a corpus: means, ranks, paired bootstrap and diagnosis.

    The defaults compare the article's four systems on its bundled corpus. Every run writes a new
    results folder under --out (report.txt there holds the whole report) and prints its path before
    the report and again last. On a collection of more than two dozen queries the printed report is
    abridged (--full prints it whole).
    """
    # ``options``: what CompareConfig records, by its own names (corpus, systems, metrics, baseline,
    # cache_dir and the fields of the option groups, whose click options are built from them)
    options.update(cache=not no_cache, **{key: str(options[key]) if options[key] is not None else None
                                          for key in ("facets_file", "cache_dir")})
    untouched = CompareConfig().flat()
    for key, value in ctx.meta.get(_FILE_FIELDS, {}).items():
        # fields no option sets (cache): the file's value, unless an option changed it
        if options.get(key, untouched[key]) == untouched[key]:
            options[key] = value
    config = CompareConfig.from_options(options)  # each group checks its fields: a mistake names the flag
    judged = _judgments_only(ctx, qrels, queries)  # --qrels: a collection without texts, read before any work
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
    retrievers = build_systems(config.systems, config.scoring.analyzer)
    cache = False if not config.cache else (Path(config.cache_dir) if config.cache_dir else True)
    runner, owned = resolve_engine(engine, scheduler, workers)  # the Dask wiring stays out of compare()
    if isinstance(config.corpus, tuple):  # several collections: a suite
        from harness.cli.suite import run_suite_command
        with contextlib.closing(runner) if owned else contextlib.nullcontext():
            return run_suite_command(ctx, config, retrievers, metric_list, out, formats,
                                     run=RunOptions(cache, timeout, runner, latency_queries=latency_queries,
                                                    latency_rounds=latency_rounds),
                                     quiet=quiet, full=full, stdout=stdout)
    with progress_shown(quiet) as progress, contextlib.closing(runner) if owned else contextlib.nullcontext():
        groups = config.groups()
        if judged is not None:  # loaded already: the loading options of a corpus stay unset (refused if given)
            groups["loading"] = replace(groups["loading"], split=None, allow_unmatched_judgments=None)
        dataset = judged if judged is not None else config.corpus
        result = compare(retrievers, dataset, metric_list, baseline=config.baseline, **groups,
                         run=RunOptions(cache, timeout, runner, loaded, latency_queries, latency_rounds),
                         progress=progress)
        with progress.task("writing results"):  # a million-line run per system takes a while too
            folder = result.write(out, command_line=["bench", *sys.argv[1:]], say=warn, reports=formats)
    ctx.meta[RESULTS_KEY] = folder
    for warning in result.warnings:  # after writing: a closed stderr (2>&1 | head) must not cost the results
        click.echo(f"warning: {warning}", err=True)
    show_queries, failures_shown = (None, None) if full else terminal_cut(len(result.query_ids))
    abridged = show_queries is not None and show_queries < len(result.query_ids)
    # the first lines say where everything is, and how to see here what the terminal leaves out
    stdout.echo(f"results: {folder}" + (" (report.txt there holds the whole report; --full prints it here)"
                                        if abridged else ""))
    unjudged = config.scoring.unjudged
    if unjudged != DEFAULT_UNJUDGED:
        stdout.echo(f"unjudged documents ({unjudged}): {UNJUDGED_READINGS[unjudged]}")
    stdout.echo(result.report(show_failures=show_failures if show_failures is not None else failures_shown,
                              show_queries=show_queries, heading=False, measured=True))
    stdout.echo("")
    stdout.echo(f"results: {folder}")
    stdout.finish(ctx, folder)
