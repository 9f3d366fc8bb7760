"""``bench gate``: fail a CI job only when a candidate is worse than a stored baseline by more than a margin.

A thin adapter over :func:`harness.gating.rule.gate`. Each side is a results folder (``bench compare``'s,
with ``--system`` when it holds several) or a run file scored with ``--qrels`` (read with the
baseline folder's ``--rel-threshold`` and ``--unjudged`` unless given; TREC, MS MARCO's ``qid docid
rank`` TSV or Parquet by its suffix, gzipped for ``.gz``, by :meth:`corpora.run.RunFile.read`, the
reader of ``bench evaluate`` and ``run(PATH)``); or the candidate
is run now (``--corpus`` and ``--systems``) through :func:`harness.compare` and gated against the
stored baseline, which is refused as soon as the corpus is loaded if its hashes differ from the
baseline's. Exit status: 0, or 1 when a metric regressed (or has a verdict named by ``--fail-on``);
2 for an error (nothing is written then: a ``--junit`` file is written whole or not at all, through
:func:`corpora.output_files.write_output`, and checked before any work).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from corpora import ANALYZERS, FORMATS as CORPUS_FORMATS, Dataset, InputFileError, RetbenchError
from corpora.run import RunFile
from corpora.trec_io import read_qrels_file
from corpora.output_files import check_output, write_output
from harness.cli import ACCEPT_EDITED_HELP, OutputPath, PathParameter, progress_shown, warn
from harness.cli.declared import option, take_groups
from harness.core.options import CONFIDENCE, REL_THRESHOLD, Loading, Scoring, Statistics
from harness.gating.rule import DEFAULT_MARGIN, VERDICTS, check_options, gate
from harness.gating.sides import GateSide, check_same_data, data_hashes
from harness.core.inputs import resolve_metrics
from harness.gating.report import FORMATS, render, render_junit
from harness.core.condensed import DEFAULT_UNJUDGED, UNJUDGED_READINGS
from harness.core.metrics import metrics_help
from harness.store.write import QRELS_FILE
from harness.store.read import open_results

_CAN_ALSO_FAIL = [v for v in VERDICTS if v != "regressed"]  # regressed always fails


def _fail_on(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    names = tuple(n.strip() for n in (value or "").split(",") if n.strip())
    unknown = [n for n in names if n not in VERDICTS]
    if unknown:
        raise click.BadParameter(f"unknown verdict {unknown[0]!r}; valid: {', '.join(_CAN_ALSO_FAIL)}")
    return names


def _side(path: Path, system: str | None, qrels: Path | None, rel_threshold: int | None, unjudged: str | None,
          role: str, accept_edited: bool) -> GateSide:
    """A results folder, or a run file scored with ``--qrels``."""
    if not path.exists():
        raise InputFileError(path, f"the {role} does not exist", fix="name a results folder of bench compare or a "
                             "run file")
    if not path.is_file():
        return GateSide.from_results(open_results(path, accept_edited=accept_edited, say=warn), system)
    if qrels is None:
        raise RetbenchError(f"{role} {path} is a run file, which needs judgments to be scored. Fix: pass --qrels "
                            f"FILE (e.g. the baseline results folder's {QRELS_FILE})")
    run_file = RunFile.read(path)  # TREC, MS MARCO TSV or Parquet by its suffix, gzipped for .gz
    judgments = read_qrels_file(qrels)
    for warning in judgments.warnings:  # a judgment repeated with the same grade counts once
        warn(warning)
    return GateSide.from_run(run_file.run, judgments.qrels, name=str(path),
                             rel_threshold=REL_THRESHOLD if rel_threshold is None else rel_threshold,
                             unjudged=DEFAULT_UNJUDGED if unjudged is None else unjudged,
                             run_from=str(path), qrels_from=str(qrels))


def _latency_margin(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """``--latency-margin 20%`` (or ``0.2``) as a fraction > 0."""
    if value is None:
        return None
    text = value.strip()
    try:
        margin = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a share; write e.g. 20% or 0.2") from None
    if not 0 < margin < 100:
        raise click.BadParameter(f"{value!r} must be above 0; write e.g. 20% or 0.2")
    return margin


@click.command("gate")
@click.argument("baseline", type=PathParameter(path_type=Path))
@click.argument("candidate", type=PathParameter(path_type=Path), required=False)
@click.option("--metric", "metrics", required=True,
              help="The metric(s) to gate on; several are Holm-adjusted together. "
                   + metrics_help())
@click.option("--margin", type=float, default=DEFAULT_MARGIN, show_default=True,
              help="The smallest change that matters, in the metric's units (0.01 = one point of nDCG@10).")
@option(Statistics, "confidence",
        help="Confidence of the interval; tests run at alpha = 1 - confidence, the equivalence test on the "
             "(1 - 2 alpha) interval.")
@click.option("--latency-margin", callback=_latency_margin, default=None,
              help="Also fail (exit 1) when the candidate's p95 latency rose by more than this share over the "
                   "baseline's (20% or 0.2), as bench compare measured each on the same machine; no verdict when a "
                   "side's latency rounds disagree by more than the margin [default: off].")
@click.option("--system", default=None, help="The system to read from each side that holds several.")
@click.option("--baseline-system", default=None, help="The baseline's system (overrides --system).")
@click.option("--candidate-system", default=None, help="The candidate's system (overrides --system).")
@click.option("--qrels", type=PathParameter(path_type=Path, dir_okay=False), default=None,
              help="Judgments (TREC or BEIR qrels) that score a side given as a run file (TREC, MS MARCO TSV or "
                   "Parquet by its suffix; .gz too).")
@click.option("--rel-threshold", type=click.IntRange(min=0), default=None,
              help="Grade from which a judgment is relevant, for a run file [default: the results folder's, else 1].")
@click.option("--unjudged", type=click.Choice(list(UNJUDGED_READINGS)), default=None,
              help="How an unjudged document counts, for a run file: nonrelevant (trec_eval) or condensed "
                   "[default: the results folder's, else nonrelevant].")
@click.option("--corpus", default=None,
              help="Run the candidate now on this corpus (a bundled name or a folder), with --systems.")
@click.option("--systems", default=None, help="The candidate's retriever spec(s) when it is run now (see bench "
                                              "retrievers); with several, --candidate-system names the candidate.")
@option(Loading, "format", "--corpus-format", type=click.Choice(list(CORPUS_FORMATS)),
        help="Force the corpus layout when the candidate is run now.")
@option(Scoring, "analyzer", type=click.Choice(list(ANALYZERS)),
        help="Analyzer for the candidate's retrievers when it is run now.")
@option(Scoring, "depth", help="Results per query when the candidate is run now.")
@click.option("--no-cache", is_flag=True, help="Fit the candidate from scratch when it is run now.")
@click.option("--out", type=PathParameter(path_type=Path), default=None,
              help="Also store the candidate run now as a results folder here (e.g. the next baseline).")
@click.option("--allow-different-queries", is_flag=True,
              help="Pair the queries both sides evaluated (and say how many were dropped) instead of refusing.")
@click.option("--fail-on", callback=_fail_on, default=None,
              help=f"Verdicts that fail the gate besides regressed (comma-separated): {', '.join(_CAN_ALSO_FAIL)}.")
@click.option("--format", "output_format", type=click.Choice(list(FORMATS)), default="text", show_default=True,
              help="text for a terminal; md: GitHub-flavoured Markdown for a CI job summary ($GITHUB_STEP_SUMMARY).")
@click.option("--junit", type=OutputPath(), default=None,
              help="Also write a JUnit XML report: one testcase per metric, a failure when it fails the gate.")
@click.option("--show-worst", type=click.IntRange(min=0), default=5, show_default=True,
              help="Queries that lost most, listed per metric.")
@click.option("--accept-edited", is_flag=True, help=ACCEPT_EDITED_HELP)
@option(Statistics, "bootstrap_samples")
@option(Statistics, "seed")
@option(Statistics, "permutations")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress line and no informational logs of ir_datasets while the candidate runs.")
@click.pass_context
def command(ctx: click.Context, baseline: Path, candidate: Path | None, metrics: str, margin: float,
            system: str | None, baseline_system: str | None, candidate_system: str | None, qrels: Path | None,
            rel_threshold: int | None, unjudged: str | None, corpus: str | None, systems: str | None,
            no_cache: bool, out: Path | None, allow_different_queries: bool, fail_on: tuple[str, ...],
            output_format: str, junit: Path | None, show_worst: int, quiet: bool, accept_edited: bool,
            latency_margin: float | None, **options: Any) -> None:
    """Gate a CANDIDATE against a stored BASELINE, paired by query: regressed (worse by more than
    --margin; exit 1), dropped (significantly worse, not shown to be by more than the margin),
    inconclusive (with the queries it would need), improved, gained (the mirrors) or unchanged
    (equivalent within --margin).

    BASELINE and CANDIDATE are results folders of bench compare or run files (with --qrels: TREC,
    MS MARCO TSV or Parquet by suffix, .gz too);
    without CANDIDATE, --corpus and --systems run it now. Different documents, queries or judgments
    are refused (exit 2).
    """
    metric_list = resolve_metrics(metrics)  # the cheap checks first: a typo costs no loading
    # the options declared by the groups: the gate's statistics, and the depth, analyzer and corpus
    # layout of a candidate run now (--rel-threshold and --unjudged are the baseline's unless given)
    statistics, scoring, loading = take_groups(options, Statistics, Scoring, Loading)
    check_options(margin, statistics, show_worst, len(metric_list))
    read = {"the baseline": baseline, "the candidate": candidate, "the --qrels file": qrels}
    if junit is not None:
        check_output(junit, "--junit", inputs=read)  # never one of the files it gates
    if candidate is not None and systems is not None:
        raise RetbenchError("both a CANDIDATE and --systems were given. Fix: gate a stored candidate, or run one "
                            "now with --corpus and --systems, not both")
    if candidate is None and systems is None:
        raise RetbenchError("no candidate. Fix: name a CANDIDATE (a results folder or a run file), or run one now "
                            "with --corpus NAME --systems SPEC")
    if systems is not None and corpus is None:
        raise RetbenchError("--systems runs the candidate now, on a corpus that must be named. Fix: pass --corpus, "
                            "the baseline's corpus (a bundled name or folder)")
    if out is not None and systems is None:
        raise RetbenchError("--out stores a candidate run now. Fix: drop --out, or run the candidate with --corpus "
                            "and --systems")
    if qrels is not None and not baseline.is_file() and not (candidate is not None and candidate.is_file()):
        raise RetbenchError("--qrels scores a side given as a run file, and neither side is one (a results folder "
                            "carries its own qrels.txt). Fix: drop --qrels")
    before_system = baseline_system or system
    after_system = candidate_system or system
    if candidate is not None and _suite_pair(ctx, baseline, candidate, metrics, margin, statistics, before_system,
                                             after_system, show_worst, fail_on, output_format, accept_edited,
                                             {"--qrels": qrels, "--rel-threshold": rel_threshold, "--unjudged": unjudged,
                                              "--junit": junit, "--latency-margin": latency_margin,
                                              "--allow-different-queries": allow_different_queries or None}):
        return
    before = _side(baseline, before_system, qrels, rel_threshold, unjudged, "baseline", accept_edited)
    # a reading of the judgments given for a run file must be the baseline folder's (JUDGMENTS_READING)
    for flag, given, stored in (("--rel-threshold", rel_threshold, before.rel_threshold),
                                ("--unjudged", unjudged, before.unjudged)):
        if given is not None and before.folder is not None and given != stored:
            raise RetbenchError(f"{flag} {given}, but the baseline {baseline} was scored with {stored}. Fix: drop "
                                f"{flag}")
    threshold = rel_threshold if rel_threshold is not None else before.rel_threshold
    reading = unjudged if unjudged is not None else before.unjudged
    made_now = None
    if candidate is not None:
        after = _side(candidate, after_system, qrels, threshold, reading, "candidate", accept_edited)
    else:
        after, made_now = _run_candidate(before, corpus or "", systems or "", metrics, after_system,
                               replace(scoring, rel_threshold=threshold, unjudged=reading), loading, no_cache, out,
                               allow_different_queries, statistics, quiet)
    result = gate(before, after, metrics, margin=margin, statistics=statistics,
                  allow_different_queries=allow_different_queries, lost_most=show_worst)
    latency = _latency(before, after, made_now, latency_margin) if latency_margin is not None else None
    if junit is not None:
        write_output(junit, render_junit(result, fail_on), "--junit", inputs=read)
    click.echo(render(result, output_format), nl=False)
    if latency is not None:
        click.echo(("- " if output_format == "md" else "") + latency.message)
    ctx.exit(max(result.exit_code(fail_on), 1 if latency is not None and latency.fails else 0))


def _latency(before: GateSide, after: GateSide, made_now: Any, margin: float) -> Any:
    """``--latency-margin``: the candidate's p95 latency against the baseline's
    (:func:`harness.engines.cost.gate_latency`), each read from its results folder or the comparison just made."""
    from harness.engines.cost import gate_latency
    from harness.readings.cost import latency_of, same_machine

    sources = []
    for side, made in ((before, None), (after, made_now)):
        source = made if made is not None else side.folder
        if source is None:
            raise RetbenchError(f"--latency-margin reads the latency bench compare measured, and {side.name} is a run "
                                "file. Fix: give results folders, or drop --latency-margin")
        sources.append(latency_of(source, side.system))
    (base, base_machine), (cand, cand_machine) = sources
    return gate_latency(base, cand, margin, same_machine(base_machine, cand_machine))


def _suite_pair(ctx: click.Context, baseline: Path, candidate: Path, metrics: str, margin: float,
                statistics: Statistics, before_system: str | None, after_system: str | None, show_worst: int,
                fail_on: tuple[str, ...], output_format: str, accept_edited: bool, single_only: dict[str, object]) -> bool:
    """Two suite folders (bench compare with several --corpus): gate them (:mod:`harness.suite.gate`) and
    exit; False when neither side is a suite. One suite and one single folder is an error."""
    from harness.suite.gate import gate_suites, render_suite_gate
    from harness.suite.store import is_suite_folder, open_suite

    def suite(path: Path) -> bool:
        return path.is_dir() and (path / "manifest.json").is_file() and \
            is_suite_folder(open_results(path, accept_edited=accept_edited, say=warn))

    kinds = (suite(baseline), suite(candidate))
    if not any(kinds):
        return False
    if not all(kinds):
        one, other = (baseline, candidate) if kinds[0] else (candidate, baseline)
        raise RetbenchError(f"{one} is a suite folder and {other} is not. Fix: gate two suite folders, or one "
                            f"collection's folder of the suite ({one}/collections/NAME) against a single results folder")
    given = [flag for flag, value in single_only.items() if value is not None]
    if given:
        raise RetbenchError(f"{', '.join(given)} gate two results folders or run files, not two suites. Fix: drop "
                            f"{'them' if len(given) > 1 else 'it'}, or gate one collection of each suite "
                            "(SUITE/collections/NAME)")
    result = gate_suites(open_suite(baseline, accept_edited=accept_edited), open_suite(candidate,
                         accept_edited=accept_edited), metrics, margin=margin, statistics=statistics,
                         baseline_system=before_system, candidate_system=after_system, lost_most=show_worst)
    click.echo(render_suite_gate(result, "md" if output_format == "md" else "text"), nl=False)
    ctx.exit(result.exit_code(fail_on))
    return True


def _run_candidate(before: GateSide, corpus: str, systems: str, metrics: str, candidate_system: str | None,
                   scoring: Scoring, loading: Loading, no_cache: bool, out: Path | None, allow_different_queries: bool,
                   statistics: Statistics, quiet: bool) -> tuple[GateSide, Any]:
    """Run the candidate now (:func:`harness.compare`) with ``scoring`` and ``loading``, refusing other
    data as soon as it is loaded; its comparison (and an ``--out`` folder) takes the gate's resamples,
    seed and permutations, and the default confidence, as it always has (the gate reads only its
    per-query values). Returns the side and the comparison (whose cost ``--latency-margin`` reads)."""
    from harness.comparison import compare  # the retrievers load only when a candidate is run
    from harness.core.options import RunOptions
    from harness.core.inputs import build_systems
    from harness.store.folder import check_out

    def warn(message: str) -> None:
        click.echo(f"warning: {message}", err=True)

    if out is not None:
        check_out(out, warn)

    def loaded(dataset: Dataset) -> None:  # before any fitting: a different corpus costs nothing
        check_same_data(before.hashes, data_hashes(dataset), allow_different_queries=allow_different_queries)

    with progress_shown(quiet) as progress:
        result = compare(build_systems(systems, scoring.analyzer), corpus, metrics, scoring=scoring,
                         statistics=replace(statistics, confidence=CONFIDENCE), loading=loading,
                         run=RunOptions(not no_cache, on_loaded=loaded), progress=progress)
    for warning in result.warnings:
        warn(warning)
    if out is not None:
        folder = result.write(out, say=warn)
        click.echo(f"candidate results: {folder}", err=True)
    return GateSide.from_compare(result, candidate_system), result
