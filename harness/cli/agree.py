"""``bench agree``: how far two judgment sets agree (Cohen's kappa, Krippendorff's alpha, the
confusion matrix), how far the systems of a results folder move between them (Kendall's tau,
tau_AP), and with ``--ppi`` the prediction-powered estimate of each system's mean from a machine
set corrected by a human subset (PPI++ unless ``--ppi-method ppi``; stratified by a facet with
``--stratify``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from corpora import RetbenchError
from corpora.trec_io import read_qrels_file
from corpora.wording import counted
from harness.cli import ACCEPT_EDITED_HELP, PathParameter, warn
from harness.core.inputs import resolve_metrics
from harness.judgments.agreement import agreement
from harness.judgments.ppi import METHODS, PPI_PLUS, Z_95
from harness.judgments.systems import ppi_by_system, systems_under_two
from harness.store.read import one_comparison, open_results


def _number(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _shown(value: float) -> str:
    return "undefined" if math.isnan(value) else f"{value:.4f}"


def _facet_values(folder: object, facet: str) -> tuple[str, dict[str, str]]:
    """(facet, query id -> its cell) from the results folder's ``query_facets.csv``."""
    # query_facets is a table of the metrics card, a registered reading: the registry must hold it before
    # the folder can read it (imported here, so bench agree without --stratify does not pay for it)
    import harness.readings  # noqa: F401
    cells = folder.table("query_facets")  # type: ignore[attr-defined]
    chosen = cells[cells["facet"] == facet]
    if chosen.empty:
        known = sorted(set(cells["facet"]))
        raise RetbenchError(f"the results folder has no query facet {facet!r} (it has: {', '.join(known) or 'none'}). "
                            "Fix: name one of them, or run bench compare with --facets-file to add facets")
    return facet, dict(zip(chosen["query_id"], chosen["value"].astype(str)))


@click.command("agree")
@click.argument("qrels_a", type=PathParameter(path_type=Path, dir_okay=False))
@click.argument("qrels_b", type=PathParameter(path_type=Path, dir_okay=False))
@click.option("--results", type=PathParameter(path_type=Path), default=None,
              help="A results folder: each system's metric under A and under B, and the rank correlations.")
@click.option("--metric", default="ndcg@10", show_default=True, help="The metric of --results and --ppi.")
@click.option("--rel-threshold", type=int, default=None,
              help="Grades >= this are relevant [default: the results folder's, else 1].")
@click.option("--ppi", "with_ppi", is_flag=True,
              help="A is the human (gold) set on a subset of the queries, B the machine set (a query B does not "
                   "judge scores 0 under it): per system, the prediction-powered estimate of the metric's mean over "
                   "the folder's queries and its 95% interval (needs --results).")
@click.option("--ppi-method", type=click.Choice(list(METHODS)), default=PPI_PLUS, show_default=True,
              help="With --ppi: " + "; ".join(f"{name} = {means}" for name, means in METHODS.items()) + ".")
@click.option("--stratify", "stratify_by", default=None, metavar="FACET",
              help="With --ppi: estimate within each value of this query facet of the results folder "
                   "(query_facets.csv), each with its own λ, and combine them by their shares of the queries.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: a report; json: cohen_kappa, krippendorff_alpha, the confusion matrix, kendall_tau, tau_ap, "
                   "per-system values and PPI entries.")
@click.option("--accept-edited", is_flag=True, help=ACCEPT_EDITED_HELP)
def command(qrels_a: Path, qrels_b: Path, results: Path | None, metric: str, rel_threshold: int | None,
            with_ppi: bool, ppi_method: str, stratify_by: str | None, output_format: str, accept_edited: bool) -> None:
    """How far the judgment sets QRELS_A and QRELS_B agree, on the pairs both judge: Cohen's kappa
    on relevance, Krippendorff's alpha (ordinal) on the grades, the confusion matrix.

    With --results, each system's metric under A and under B on the queries both judge, and
    Kendall's tau and tau_AP between the two orders of the systems. With --ppi, per system the
    prediction-powered estimate of the metric's mean over the folder's N queries: PPI++, λ times the
    mean of M_B over N + the mean of (M_A - λ M_B) over the n queries A judges, λ chosen from the
    data and printed (--ppi-method ppi: λ = 1), with its 95% interval, beside the human-only and
    machine-only estimates. A query without a relevant judgment scores 0.
    """
    if with_ppi and results is None:
        raise RetbenchError("--ppi estimates each system's metric, so it needs the systems. Fix: add --results FOLDER")
    if stratify_by is not None and not with_ppi:
        raise RetbenchError("--stratify stratifies the PPI estimate. Fix: add --ppi, or leave --stratify out")
    if not with_ppi and click.get_current_context().get_parameter_source("ppi_method") not in (
            None, click.core.ParameterSource.DEFAULT):
        raise RetbenchError("--ppi-method picks the PPI estimator. Fix: add --ppi, or leave --ppi-method out")
    resolved = resolve_metrics(metric)
    if len(resolved) != 1:
        raise RetbenchError(f"--metric {metric!r} names {len(resolved)} metrics. Fix: name one, e.g. --metric ndcg@10")
    metric_object = resolved[0]
    if rel_threshold is not None and rel_threshold < 0:
        raise RetbenchError(f"--rel-threshold {rel_threshold} is negative. Fix: pass a grade >= 0, e.g. 1")
    read_a, read_b = read_qrels_file(qrels_a), read_qrels_file(qrels_b)
    for warning in read_a.warnings + read_b.warnings:  # a judgment repeated with the same grade counts once
        warn(warning)
    a, b = read_a.qrels, read_b.qrels
    folder = one_comparison(open_results(results, accept_edited=accept_edited)) if results is not None else None
    threshold = rel_threshold if rel_threshold is not None else (folder.rel_threshold if folder else 1)
    found = agreement(a, b, threshold)
    under = systems_under_two(folder, a, b, metric_object, threshold) if folder is not None else None
    strata = _facet_values(folder, stratify_by) if stratify_by is not None and folder is not None else None
    estimated = ppi_by_system(folder, a, b, metric_object, threshold, ppi_method, strata) \
        if with_ppi and folder is not None else None

    if output_format == "json":
        document: dict[str, object] = {
            "qrels_a": str(qrels_a), "qrels_b": str(qrels_b), "rel_threshold": threshold, "n_pairs": found.n_pairs,
            "cohen_kappa": _number(found.cohen_kappa), "krippendorff_alpha": _number(found.krippendorff_alpha),
            "relevance_agreement": found.relevance_agreement,
            "confusion": {"grades": found.grades, "rows": "grade in A", "columns": "grade in B",
                          "counts": found.confusion.tolist()},
            "kendall_tau": _number(under.kendall_tau) if under else None,
            "tau_ap": _number(under.tau_ap) if under else None,
        }
        if under is not None:
            document["metric"] = under.metric
            document["n_queries_judged_in_both"] = under.n_queries
            document["systems"] = [{"system": s, "a": x, "b": y}
                                   for s, x, y in zip(under.systems, under.under_a, under.under_b)]
        if estimated is not None:
            document["ppi"] = {"n_human": len(estimated.judged_by_human), "n_queries": len(estimated.queries),
                               "n_machine": len(estimated.judged_by_machine), "queries": estimated.queries,
                               "judged_by_human": estimated.judged_by_human,
                               "judged_by_machine": estimated.judged_by_machine, "z": Z_95,
                               "method": estimated.method, "stratified_by": estimated.stratified_by,
                               "systems": [{"system": s,
                                            "lambda": dict(r.lambdas) if estimated.stratified_by else r.lambdas[0][1],
                                            **r.to_dict()}
                                           for s, r in estimated.by_system.items()]}
        click.echo(json.dumps(document, indent=2))
        return

    click.echo(f"pairs judged in both: {found.n_pairs}")
    click.echo(f"relevance (grade >= {threshold}): same call on {found.relevance_agreement:.1%} of them; "
               f"Cohen's kappa {_shown(found.cohen_kappa)}")
    click.echo(f"grades: Krippendorff's alpha (ordinal) {_shown(found.krippendorff_alpha)}")
    click.echo("confusion (rows: grade in A, columns: grade in B):")
    width = max(6, *(len(str(c)) + 1 for c in found.confusion.ravel()))
    click.echo("      " + "".join(f"{'B=' + str(g):>{width}}" for g in found.grades))
    for grade, row in zip(found.grades, found.confusion.tolist()):
        click.echo(f"{'A=' + str(grade):<6}" + "".join(f"{c:>{width}}" for c in row))
    if under is not None:
        click.echo(f"{under.metric} over the {counted(under.n_queries, 'query')} judged in both:")
        label_width = max(len(s) for s in under.systems)
        click.echo(f"  {'system':<{label_width}}  {'A':>8}  {'B':>8}")
        for s, x, y in zip(under.systems, under.under_a, under.under_b):
            click.echo(f"  {s:<{label_width}}  {x:>8.4f}  {y:>8.4f}")
        click.echo(f"systems ordered by A and by B: Kendall's tau {_shown(under.kendall_tau)}, "
                   f"tau_AP {_shown(under.tau_ap)}")
    if estimated is not None:
        click.echo(estimated.coverage(metric_object.name))
        for s, r in estimated.by_system.items():
            click.echo(f"  {s}: {r.method} {r.ppi.mean:.4f} [{r.ppi.low:.4f}, {r.ppi.high:.4f}] ({r.lambda_text()})  "
                       f"human only {r.human.mean:.4f} [{r.human.low:.4f}, {r.human.high:.4f}]  "
                       f"machine only {r.machine.mean:.4f} [{r.machine.low:.4f}, {r.machine.high:.4f}]")
