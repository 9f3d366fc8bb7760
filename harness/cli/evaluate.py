"""``bench evaluate``: score TREC run files against TREC qrels, with trec_eval's semantics.

Which queries count (DESIGN.md): every query with at least one relevant judgment; a query the run
misses scores 0 (trec_eval ``-c``). ``--run-queries-only`` gives plain trec_eval instead: the
queries both in the run and in the qrels, judged non-relevant-only ones included.
Queries are listed in trec_eval's order (query id, byte order); ``all`` holds the means.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click
import pandas as pd

from corpora import ParameterError, RetbenchError, Run
from harness.evaluation import QrelsTable, evaluate
from harness.metrics import Metric, metric_names, parse_metrics
from harness.trec import RUN_ORDERS, read_qrels_table, read_run

ALL = "all"
FORMATS: tuple[str, ...] = ("table", "csv", "json", "trec")
_TREC_NAME_WIDTH = 22  # trec_eval left-justifies measure names to 22 characters


@dataclass
class RunScores:
    """One run's per-query values (index ``query_id``, one column per metric name) and notes."""

    label: str
    per_query: pd.DataFrame
    notes: list[str]

    @property
    def means(self) -> pd.Series:
        return self.per_query.mean(axis=0) if len(self.per_query) else self.per_query.sum(axis=0)


def _sorted_ids(ids: Sequence[str]) -> list[str]:
    # trec_eval orders query ids with strcmp; code-point order of str equals UTF-8 byte order.
    return sorted(ids)


def _preview(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(i) for i in list(ids)[:limit])
    return shown + (f" (and {len(ids) - limit} more)" if len(ids) > limit else "")


def select_queries(run: Run, qrels: QrelsTable, run_label: str, rel_threshold: int,
                   run_queries_only: bool) -> tuple[list[str], list[str]]:
    """The query ids to evaluate (trec_eval order) and notes on what was left out and why."""
    judged = qrels.query_order()
    judged_set = set(judged)
    in_run = [q for q in run.query_ids if q in judged_set]
    if not in_run:
        raise RetbenchError(
            f"{run_label}: none of the run's {len(run.query_ids)} queries ({_preview(run.query_ids)}) is judged in "
            f"{qrels.source}. Fix: check that the run and the qrels use the same query ids")
    notes = []
    unjudged = [q for q in run.query_ids if q not in judged_set]
    if unjudged:
        notes.append(f"{len(unjudged)} run queries have no judgments and are ignored: {_preview(unjudged)}")
    with_relevant = qrels.queries_with_relevant(rel_threshold)
    if run_queries_only:
        return _sorted_ids(in_run), notes
    relevant_set = set(with_relevant)
    excluded = [q for q in judged if q not in relevant_set]
    if excluded:
        notes.append(f"{len(excluded)} judged queries have no relevant document (grade >= {rel_threshold}) and are "
                     f"excluded: {_preview(excluded)}")
    in_run_set = set(run.query_ids)
    missing = [q for q in with_relevant if q not in in_run_set]
    if missing:
        notes.append(f"{len(missing)} queries are missing from the run and score 0: {_preview(missing)}")
    return _sorted_ids(with_relevant), notes


def score_runs(qrels: QrelsTable, runs: Sequence[tuple[str, Run]], metrics: Sequence[Metric], rel_threshold: int = 1,
               depth: int | None = None, run_queries_only: bool = False) -> list[RunScores]:
    """Evaluate each (label, run) on its query set; see the module docstring for which queries count."""
    if not qrels.queries_with_relevant(rel_threshold):
        raise RetbenchError(f"{qrels.source}: no query has a relevant judgment (grade >= {rel_threshold}). "
                            "Fix: check the qrels and --rel-threshold")
    scored = []
    for label, run in runs:
        query_ids, notes = select_queries(run, qrels, label, rel_threshold, run_queries_only)
        frame = evaluate(run, qrels, metrics, query_ids, rel_threshold, depth)
        scored.append(RunScores(label, frame[[m.name for m in metrics]], notes))
    return scored


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


def format_trec(scores: Sequence[RunScores]) -> str:
    """trec_eval ``-q`` layout: ``measure<TAB>query<TAB>value`` (name padded to 22, 4 decimals)."""
    lines = []
    for run in scores:
        lines.append(f"{'runid':<{_TREC_NAME_WIDTH}}\t{ALL}\t{run.label}")
        names = list(run.per_query.columns)
        values = run.per_query.to_numpy()
        for query_id, row in zip(run.per_query.index, values):
            lines.extend(f"{name:<{_TREC_NAME_WIDTH}}\t{query_id}\t{value:.4f}" for name, value in zip(names, row))
        lines.extend(f"{name:<{_TREC_NAME_WIDTH}}\t{ALL}\t{value:.4f}" for name, value in run.means.items())
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
@click.option("--qrels", "qrels_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="TREC qrels file: `qid iter docid grade` per line.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--metrics", "metrics_text", required=True,
              help="Comma-separated measures, e.g. ndcg@10,recall@100,mrr or trec_eval names (P_10, ndcg_cut_10). "
                   "Known: " + ", ".join(metric_names()))
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table: means per run; csv/json: per query and `all`; trec: trec_eval's -q layout.")
@click.option("--rel-threshold", type=int, default=1, show_default=True,
              help="Binary measures count grade >= N as relevant (trec_eval -l); graded measures keep the grades.")
@click.option("--depth", type=int, default=None, help="Keep the top N results per query after ordering (trec_eval -M).")
@click.option("--run-queries-only", is_flag=True,
              help="Evaluate only the queries in both run and qrels (plain trec_eval) instead of every query with "
                   "a relevant judgment, missing ones scoring 0 (trec_eval -c).")
@click.option("--order", type=click.Choice(RUN_ORDERS), default="trec", show_default=True,
              help="trec: score descending, ties by doc id descending, rank column ignored; file: as written.")
def command(qrels_path: Path, runs: tuple[Path, ...], metrics_text: str, output_format: str, rel_threshold: int,
            depth: int | None, run_queries_only: bool, order: str) -> None:
    """Score TREC run files against TREC qrels (trec_eval's semantics, vectorised)."""
    metrics = parse_metrics(metrics_text)
    _positive("rel_threshold", rel_threshold, 0)
    _positive("depth", depth, 1)
    qrels = read_qrels_table(qrels_path)
    labelled = [(str(path), read_run(path, order=order)) for path in runs]  # type: ignore[arg-type]
    scores = score_runs(qrels, labelled, metrics, rel_threshold, depth, run_queries_only)
    for run in scores:
        for note in run.notes:
            click.echo(f"note: {run.label}: {note}", err=True)
    if output_format == "csv":
        click.echo(format_csv(scores), nl=False)
    elif output_format == "json":
        settings = {"qrels": str(qrels_path), "metrics": [m.name for m in metrics], "rel_threshold": rel_threshold,
                    "depth": depth, "run_queries_only": run_queries_only, "order": order,
                    "definitions": {m.name: m.describe() for m in metrics}}
        click.echo(format_json(scores, settings), nl=False)
    elif output_format == "trec":
        click.echo(format_trec(scores), nl=False)
    else:
        click.echo(format_table(scores), nl=False)
