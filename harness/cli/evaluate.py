"""``bench evaluate``: score run files (TREC, or Parquet by the ``.parquet`` suffix) against TREC or
BEIR qrels, with trec_eval 10's semantics.

Which queries count (:func:`~harness.core.evaluation.trec_eval_queries`, the rule of
:func:`harness.evaluate` too): by default ``trec_eval -c``: every query of the qrels, a query the run
misses scoring 0, and so does one whose judgments are all non-relevant. ``--run-queries-only`` gives
plain trec_eval: the queries both in the run and in the qrels. Queries are listed in trec_eval's
order (query id, byte order); ``all`` holds the means (exactly rounded, see
:func:`~harness.core.evaluation.mean_over_queries`), and ``--format trec`` prints what trec_eval prints
for the same measures, line for line.

How scores are read: as trec_eval 10 reads them (doubles) by default; ``--order trec9`` as trec_eval
9.x and pytrec_eval do (single-precision floats, so doubles that round to the same float tie). When a
run's ranking depends on that choice, one warning line says in how many queries.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import click
import pandas as pd

from corpora import ParameterError, Qrels, Run
from corpora.run import TRAILING_FIELDS, RunFile
from corpora.run_pieces import NotStreamable, ScatteredRun, grouped_pieces, scattered_pieces
from corpora.run_order import RUN_ORDERS, SCORE_READINGS, SCORES_COMPARED_AS, reading_dependent_queries
from corpora.trec_io import QRELS_FORMATS, QrelsRules, read_qrels_file
from corpora.wording import counted
from harness.cli import PathParameter, warn
from harness.core.evaluation import COUNTS, evaluate, mean_over_queries, preview_ids, trec_eval_queries
from harness.core.metrics import Metric, metrics_help, parse_metrics, trec_eval_name, trec_eval_sort_key
from harness.core.condensed import DEFAULT_UNJUDGED, UNJUDGED_HELP, UNJUDGED_READINGS, evaluate_as_read

ALL = "all"
FORMATS: tuple[str, ...] = ("table", "csv", "json", "trec")
_TREC_NAME_WIDTH = 22  # trec_eval left-justifies measure names to 22 characters


@dataclass
class RunScores:
    """One run's per-query values (index ``query_id``, one column per metric name), trec_eval's
    counts per query (:data:`~harness.core.evaluation.COUNTS`), its ``runid``, notes and warnings."""

    label: str
    run_id: str
    per_query: pd.DataFrame
    counts: pd.DataFrame
    notes: list[str]
    warnings: list[str]

    @property
    def means(self) -> pd.Series:
        return pd.Series({name: mean_over_queries(self.per_query[name].to_numpy()) for name in self.per_query.columns},
                         dtype="float64")


def reading_warning(run_file: RunFile, order: str) -> str | None:
    """The warning for a run whose ranking depends on how its scores are read (trec_eval 10's
    doubles or 9.x's floats), or None: how many queries, and how to get the other reading."""
    return _reading_message(_reading_dependent(run_file.run, order), order)


def _reading_dependent(run: Run, order: str) -> list[str]:
    """The ids of the queries of ``run`` whose ranking the reading of the scores decides."""
    if order not in SCORE_READINGS:
        return []  # --order file: the scores decide nothing
    queries = reading_dependent_queries(run.offsets, run.scores, run.doc_ids, run.doc_index)
    return [run.query_ids[j] for j in queries.tolist()]


def _reading_message(query_ids: list[str], order: str) -> str | None:
    if not query_ids:
        return None
    ids = sorted(query_ids)  # trec_eval's order, as the output lists them
    if order == "trec":
        how, other = "as trec_eval 10 reads scores (doubles)", "--order trec9 gives trec_eval 9.x's and pytrec_eval's"
    else:
        how, other = "as trec_eval 9.x and pytrec_eval read scores (floats)", "--order trec gives trec_eval 10's"
    return (f"{counted(len(ids), 'query ranks', 'queries rank')} differently as trec_eval 10 and 9.x read their "
            "scores (values that differ "
            f"as doubles tie as single-precision floats): {preview_ids(ids)}; evaluated {how}, {other}")


def score_runs(qrels: Qrels, runs: Sequence[tuple[str, RunFile]], metrics: Sequence[Metric],
               rel_threshold: int = 1, depth: int | None = None, run_queries_only: bool = False,
               order: str = "trec", unjudged: str = DEFAULT_UNJUDGED) -> list[RunScores]:
    """Evaluate each (label, run file, read with ``order``) on its query set
    (:func:`~harness.core.evaluation.trec_eval_queries`), unjudged documents read as ``unjudged`` says
    (:data:`~harness.core.condensed.UNJUDGED_READINGS`)."""
    return [_score_pieces(qrels, label, [run_file], metrics, rel_threshold, depth, run_queries_only, order, unjudged)
            for label, run_file in runs]


def score_run_file(qrels: Qrels, path: Path, metrics: Sequence[Metric], rel_threshold: int = 1,
                   depth: int | None = None, run_queries_only: bool = False, order: str = "trec",
                   unjudged: str = DEFAULT_UNJUDGED, trailing_fields: str = "error") -> RunScores:
    """:func:`score_runs` of the run file at ``path``, read a piece of whole queries at a time where it
    can be (:mod:`corpora.run_pieces`: a TREC file, in one pass when each query's lines are consecutive,
    else in two), so that memory holds one piece, not the run; else read whole. A query's values
    depend only on its own lines and judgments, so the numbers are the same bits either way."""
    label = str(path)
    for pieces in (grouped_pieces, scattered_pieces):
        try:
            first_seen: list[str] | None = None if pieces is grouped_pieces else []
            read = pieces(path, order, trailing_fields, first_seen=first_seen)  # type: ignore[arg-type]
            return _score_pieces(qrels, label, read, metrics, rel_threshold, depth, run_queries_only, order, unjudged,
                                 first_seen)
        except ScatteredRun:
            continue
        except NotStreamable:
            break
    whole = RunFile.read(path, order, trailing_fields)  # type: ignore[arg-type]
    return score_runs(qrels, [(label, whole)], metrics, rel_threshold, depth, run_queries_only, order, unjudged)[0]


def _score_pieces(qrels: Qrels, label: str, pieces: Iterable[RunFile], metrics: Sequence[Metric], rel_threshold: int,
                  depth: int | None, run_queries_only: bool, order: str, unjudged: str,
                  first_seen: list[str] | None = None) -> RunScores:
    """One run's :class:`RunScores` from its pieces (each holding its queries whole), in file order
    (``first_seen``: the file's query ids in order of first appearance, where the pieces are not)."""
    judged = set(qrels)
    frames, run_query_ids, dependent, run_id = [], [], [], ""
    for piece in pieces:
        run = piece.run
        run_query_ids.extend(run.query_ids)
        run_id = piece.run_id
        in_qrels = [q for q in run.query_ids if q in judged]
        if in_qrels:
            frames.append(evaluate_as_read(evaluate, run, qrels, metrics, unjudged, in_qrels, rel_threshold, depth,
                                           counts=True))
        dependent.extend(_reading_dependent(run, order))
    in_file_order = run_query_ids if first_seen is None else first_seen  # filled once the pieces are read
    query_ids, notes = trec_eval_queries(qrels, in_file_order, rel_threshold, run_queries_only, label)
    evaluated = set(run_query_ids)
    missing = [q for q in query_ids if q not in evaluated]
    if missing:  # judged queries the run lacks: an empty ranking each
        frames.append(evaluate_as_read(evaluate, Run.from_mapping({}), qrels, metrics, unjudged, missing,
                                       rel_threshold, depth, counts=True))
    frame = pd.concat(frames).loc[query_ids] if len(frames) > 1 else frames[0].loc[query_ids]
    warning = _reading_message(dependent, order)
    return RunScores(label, run_id, frame[[m.name for m in metrics]], frame[list(COUNTS)], notes,
                     [warning] if warning else [])


# ----- output ---------------------------------------------------------------------------------


def to_frame(scores: Sequence[RunScores]) -> pd.DataFrame:
    """Columns ``run``, ``query_id``, one per metric; per-query rows then an ``all`` row per run."""
    parts = []
    for run in scores:
        per_query = run.per_query.reset_index()
        per_query.insert(0, "run", run.label)
        means = pd.DataFrame([{"run": run.label, "query_id": ALL, **run.means.to_dict()}])
        parts.extend([per_query, means])
    return pd.concat(parts, ignore_index=True)


def format_csv(scores: Sequence[RunScores]) -> str:
    return to_frame(scores).to_csv(index=False, lineterminator="\n")


def _trec_measures(metrics: Sequence[Metric]) -> list[tuple[str, str]]:
    """(column, printed name) in trec_eval's printing order: measures trec_eval knows under its
    own names, family by family and cutoffs ascending, each once; then the others as requested."""
    known: dict[str, str] = {}
    others: list[tuple[str, str]] = []
    for metric in metrics:
        trec_name = trec_eval_name(metric)
        if trec_name is None:
            others.append((metric.name, metric.name))
        else:
            known.setdefault(trec_name, metric.name)
    return [(known[t], t) for t in sorted(known, key=trec_eval_sort_key)] + others


def format_trec(scores: Sequence[RunScores], metrics: Sequence[Metric]) -> str:
    """trec_eval ``-q`` layout, ``measure<TAB>query<TAB>value`` with the name padded to 22: per
    query (trec_eval's order) ``num_ret``, ``num_rel``, ``num_rel_ret`` and each measure under
    trec_eval's name (4 decimals); then the ``all`` block: ``runid`` (the run's tag), ``num_q``, the
    counts summed and the means. Measures trec_eval does not have keep retbench's names."""
    lines = []

    def line(name: str, query: str, value: str) -> None:
        lines.append(f"{name:<{_TREC_NAME_WIDTH}}\t{query}\t{value}")

    for run in scores:
        measures = _trec_measures(metrics)
        values = run.per_query[[column for column, _ in measures]].to_numpy()
        counts = run.counts.to_numpy()
        for query_id, row, counted in zip(run.per_query.index, values, counts):
            for name, value in zip(COUNTS, counted):
                line(name, query_id, str(int(value)))
            for (_, printed), value in zip(measures, row):
                line(printed, query_id, f"{value:.4f}")
        line("runid", ALL, run.run_id)
        line("num_q", ALL, str(len(run.per_query)))
        for name, total in zip(COUNTS, counts.sum(axis=0) if len(counts) else [0] * len(COUNTS)):
            line(name, ALL, str(int(total)))
        means = run.means
        for column, printed in measures:
            line(printed, ALL, f"{means[column]:.4f}")
    return "\n".join(lines) + "\n"


def _json_value(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def format_json(scores: Sequence[RunScores], settings: dict[str, object]) -> str:
    document = {
        "settings": settings,
        "runs": [
            {
                "run": run.label,
                "n_queries": len(run.per_query),
                "means": {name: _json_value(v) for name, v in run.means.items()},
                "per_query": {str(q): {name: _json_value(v) for name, v in row.items()}
                              for q, row in run.per_query.to_dict(orient="index").items()},
                "notes": run.notes,
                "warnings": run.warnings,
            }
            for run in scores
        ],
    }
    return json.dumps(document, indent=2) + "\n"


def format_table(scores: Sequence[RunScores]) -> str:
    """Means per run, 4 decimals, one column per metric, plus the number of queries."""
    names = list(scores[0].per_query.columns)
    header = ["run", "queries", *names]
    rows = [[run.label, str(len(run.per_query)), *(f"{run.means[n]:.4f}" for n in names)] for run in scores]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             for r in [header, *rows]]
    return "\n".join(lines) + "\n"


# ----- the command ----------------------------------------------------------------------------


def _positive(name: str, value: int | None, minimum: int) -> None:
    if value is not None and value < minimum:
        raise ParameterError(name, "bench evaluate", f"an int >= {minimum}", value)


@click.command("evaluate")
@click.option("--qrels", "qrels_path", required=True, type=PathParameter(path_type=Path, dir_okay=False),
              help="Judgments: TREC qrels (`qid iter docid grade`) or BEIR qrels TSV "
                   "(`query-id<TAB>corpus-id<TAB>score`, header optional), told apart by content.")
@click.argument("runs", nargs=-1, required=True, type=PathParameter(path_type=Path, dir_okay=False))
@click.option("--metrics", "metrics_text", required=True,
              help=metrics_help())
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table: means per run; csv/json: per query and `all`; trec: trec_eval's -q layout and names.")
@click.option("--rel-threshold", type=int, default=1, show_default=True,
              help="Binary measures count grade >= N as relevant (trec_eval -l); graded measures keep the grades.")
@click.option("--depth", type=int, default=None, help="Keep the top N results per query after ordering (trec_eval -M).")
@click.option("--unjudged", type=click.Choice(list(UNJUDGED_READINGS)), default=DEFAULT_UNJUDGED, show_default=True,
              help=UNJUDGED_HELP)
@click.option("--run-queries-only", is_flag=True,
              help="Evaluate only the queries in both run and qrels (plain trec_eval) instead of every query of the "
                   "qrels, missing ones and ones without a relevant judgment scoring 0 (trec_eval -c).")
@click.option("--order", type=click.Choice(RUN_ORDERS), default="trec", show_default=True,
              help="trec: as trec_eval 10 ranks: score descending (scores compared as doubles), ties by doc id "
                   "descending, rank column ignored; trec9: the same with scores compared as single-precision "
                   "floats, as trec_eval 9.x and pytrec_eval (ir_measures, PyTerrier) do; file: as written "
                   "(lines, or Parquet rows).")
@click.option("--qrels-format", type=click.Choice(QRELS_FORMATS), default="auto", show_default=True,
              help="auto: TREC (4 fields) or BEIR (3 tab-separated fields, optional header) from the first line.")
@click.option("--trailing-fields", type=click.Choice(TRAILING_FIELDS), default="error", show_default=True,
              help="Run lines with fields after the tag: error (a doc id with a space would shift the score) or "
                   "ignore them, as trec_eval does.")
def command(qrels_path: Path, runs: tuple[Path, ...], metrics_text: str, output_format: str, rel_threshold: int,
            depth: int | None, run_queries_only: bool, order: str, qrels_format: str, trailing_fields: str,
            unjudged: str) -> None:
    """Score run files against TREC or BEIR qrels (trec_eval 10's semantics, vectorised).

    A RUN is a TREC run file, an MS MARCO TSV run (name ending in .tsv: qid, docid, rank; the
    score is minus the rank), or a Parquet file (name ending in .parquet) with the columns qid,
    docno, score (PyTerrier's) or query_id, doc_id, score, ranked by the same rules; any of them
    gzipped with .gz after the name.
    """
    metrics = parse_metrics(metrics_text)
    _positive("rel_threshold", rel_threshold, 0)
    _positive("depth", depth, 1)
    read = read_qrels_file(qrels_path, QrelsRules(layout=qrels_format))  # type: ignore[arg-type]
    for warning in read.warnings:  # a judgment repeated with the same grade counts once
        warn(warning)
    qrels = read.qrels
    scores = [score_run_file(qrels, path, metrics, rel_threshold, depth, run_queries_only, order, unjudged,
                             trailing_fields) for path in runs]
    if unjudged != DEFAULT_UNJUDGED:
        click.echo(f"note: unjudged documents ({unjudged}): {UNJUDGED_READINGS[unjudged]}", err=True)
    for run in scores:
        for warning in run.warnings:
            click.echo(f"warning: {run.label}: {warning}", err=True)
        for note in run.notes:
            click.echo(f"note: {run.label}: {note}", err=True)
    if output_format == "csv":
        click.echo(format_csv(scores), nl=False)
    elif output_format == "json":
        settings = {"qrels": str(qrels_path), "metrics": [m.name for m in metrics], "rel_threshold": rel_threshold,
                    "depth": depth, "run_queries_only": run_queries_only, "order": order, "unjudged": unjudged,
                    "scores_compared_as": SCORES_COMPARED_AS[order],
                    "qrels_format": qrels_format, "trailing_fields": trailing_fields,
                    "definitions": {m.name: m.describe() for m in metrics}}
        click.echo(format_json(scores, settings), nl=False)
    elif output_format == "trec":
        click.echo(format_trec(scores, metrics), nl=False)
    else:
        click.echo(format_table(scores), nl=False)
