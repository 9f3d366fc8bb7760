"""Metrics rolled up per query facet (``facets.csv``): each system's mean over the queries of one
facet value, with a paired bootstrap interval, from a comparison's per-query values and the queries'
facets, as the ``Readings`` option group's ``facets`` names them (None: every numeric facet and
every other with few distinct values); and the same rollup of any other reading's per-query table
that declares one (:class:`harness.core.readings.RollUp`: the metrics card's five numbers).

Which facets (:func:`select_facets`)
    ``names`` picks them, in that order. By default every facet of the queries, in their order,
    that is *numeric* or has at most :data:`MAX_VALUES` (20) distinct values among the evaluated
    queries; so free text (TREC descriptions) and identifiers (Cranfield's ``original_id``) stay
    out unless named.
Cells
    The queries' own (:meth:`corpora.Queries.cells`, :mod:`corpora.cells`): one cell per value, or
    quantile buckets (quartiles) of a numeric facet with more distinct values, missing values last.
Numbers per (system, facet, value)
    ``n_queries``, and for each metric the mean over the cell's queries, ``math.fsum / n`` (exactly
    rounded, so it equals the mean of ``per_query.csv``'s rows of those queries to the last bit), and
    a paired bootstrap percentile interval: the cell's queries, in evaluation order, are resampled
    with :func:`harness.core.statistics.bootstrap_indices` (``n_samples`` resamples from ``seed``; every
    cell uses the run's seed), each resample is averaged for every system and metric at once, so
    all systems of a cell see the same resampled queries, and :func:`harness.core.statistics.percentile_interval`
    reads the bounds. A cell with fewer than ``min_queries`` (:data:`MIN_QUERIES`, 5) queries has
    no interval (NaN, written empty) and its ``note`` says why.

One module, registered as an add-on is (docs/adding-a-reading.md): :func:`compute`, its record in
the manifest (:func:`manifest_entries`, ``facets``), its text and HTML sections
(:func:`text_section`, :func:`html_body`), and the readings of another reading's rollup
(:func:`rollup_readings`: its compute step, its tables, its entries in ``bench serve``'s
``/metrics`` (``byFacet``) and its dashboard table).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from corpora import Queries
from corpora.cells import MISSING, QUANTILE_BUCKETS, FacetCells
from harness.errors import ParameterError
from harness.core.options import BOOTSTRAP_SAMPLES, CONFIDENCE, FACET_MAX_VALUES, FACET_MIN_QUERIES, SEED
from harness.core.readings import READINGS, Reading, ReadingInputs, ServeView, register
from harness.core.statistics import bootstrap_indices, percentile_interval

# The reports' and the store's helpers are imported where a section is rendered or a folder checked, so
# that computing a comparison loads none.
if TYPE_CHECKING:
    from corpora import Dataset
    from harness.core.record import CompareConfig, CompareRecord
    from harness.report.view import ReportView

__all__ = ["MAX_VALUES", "MIN_QUERIES", "check", "compute", "facet_columns", "facet_rollup", "html_body",
           "manifest_entries", "manifest_shape", "rollup_readings", "select_facets", "text_section"]

#: A non-numeric facet with more distinct values than this is left out unless named.
MAX_VALUES = FACET_MAX_VALUES
#: Cells with fewer queries than this get no interval.
MIN_QUERIES = FACET_MIN_QUERIES


def _check_int(value: object, parameter: str, lowest: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
        raise ParameterError(parameter, "the facet rollup", f"an int >= {lowest}", value)


def select_facets(queries: Queries, query_ids: Sequence[str], names: Sequence[str] | None = None,
                  max_values: int = MAX_VALUES, buckets: int = QUANTILE_BUCKETS) -> list[FacetCells]:
    """The facets to roll up, cut into cells over ``query_ids`` (the evaluated queries).

    ``names``: those facets, in that order (an unknown name is an error that lists the facets);
    ``None``: every numeric facet and every other facet with at most ``max_values`` distinct values.
    """
    _check_int(max_values, "max_values", 1)
    _check_int(buckets, "buckets", 2)
    known = set(queries.ids)
    absent = [q for q in query_ids if q not in known]
    if absent:
        raise ValueError(f"query ids not among the queries: {absent[:5]}")
    if names is not None:
        for name in names:  # each name checked before any is cut, as the queries' cells check one
            if name not in queries.facets:
                queries.cells(name, [], buckets)
        return [queries.cells(name, query_ids, buckets) for name in dict.fromkeys(names)]
    chosen = []
    for name in queries.facets:
        cells = queries.cells(name, query_ids, buckets)
        present = [cell for cell in cells.labels if cell != MISSING]
        if present and (cells.kind == "quantiles" or len(present) <= max_values):
            chosen.append(cells)
    return chosen


def facet_columns(metrics: Sequence[str]) -> list[str]:
    """The columns of the rollup (and of ``facets.csv``), in order.

    >>> facet_columns(["mrr"])
    ['system', 'facet', 'value', 'n_queries', 'mrr', 'mrr_ci_low', 'mrr_ci_high', 'note']
    """
    per_metric = [column for m in metrics for column in (m, f"{m}_ci_low", f"{m}_ci_high")]
    return ["system", "facet", "value", "n_queries", *per_metric, "note"]


def _aligned(per_query: pd.DataFrame, metrics: Sequence[str]) -> tuple[list[str], list[str], np.ndarray]:
    """(systems, query ids, values[query, system, metric]) from ``per_query``'s long rows."""
    systems = list(dict.fromkeys(per_query["system"]))
    first = per_query[per_query["system"] == systems[0]]
    query_ids = [str(q) for q in first["query_id"]]
    values = np.empty((len(query_ids), len(systems), len(metrics)))
    for j, system in enumerate(systems):
        rows = per_query[per_query["system"] == system]
        if [str(q) for q in rows["query_id"]] != query_ids:
            raise ValueError(f"per_query: system {system!r} is not evaluated on the same queries, in the same order, "
                             f"as {systems[0]!r}")
        values[:, j, :] = rows[list(metrics)].to_numpy(dtype=np.float64)
    return systems, query_ids, values


def _resampled_interval(cell: np.ndarray, n_samples: int, seed: int,
                        confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds of the resampled means of every column of ``cell`` (queries x columns),
    every column averaged over the same resampled queries."""
    means = np.empty((n_samples, cell.shape[1]))
    done = 0
    for rows in bootstrap_indices(cell.shape[0], n_samples, seed):
        means[done:done + len(rows)] = cell[rows].mean(axis=1)
        done += len(rows)
    means.sort(axis=0)
    return percentile_interval(means, confidence)


def facet_rollup(per_query: pd.DataFrame, queries: Queries, metrics: Sequence[str], *,
                 names: Sequence[str] | None = None, n_samples: int = BOOTSTRAP_SAMPLES, seed: int = SEED,
                 confidence: float = CONFIDENCE, buckets: int = QUANTILE_BUCKETS, max_values: int = MAX_VALUES,
                 min_queries: int = MIN_QUERIES) -> pd.DataFrame:
    """Each system's metrics per facet value, with paired bootstrap intervals (see the module docstring).

    ``per_query`` holds one row per (system, query): ``system``, ``query_id`` and a column per
    metric, every system on the same queries in the same order (``per_query.csv``). Returns the
    columns of :func:`facet_columns`, rows by facet (selection order), value (display order), then
    system (``per_query``'s order). No facet to roll up: no row.
    """
    _check_int(n_samples, "n_samples", 1)
    _check_int(min_queries, "min_queries", 1)
    systems, query_ids, values = _aligned(per_query, metrics)
    position = {q: i for i, q in enumerate(query_ids)}
    rows: list[list[object]] = []
    for facet in select_facets(queries, query_ids, names, max_values, buckets):
        for label in facet.labels:
            members = [position[q] for q in query_ids if facet.cell_of[q] == label]
            cell = values[members]  # queries x systems x metrics, evaluation order
            n = len(members)
            if n >= min_queries:
                low, high = _resampled_interval(cell.reshape(n, -1), n_samples, seed, confidence)
                low, high = low.reshape(len(systems), len(metrics)), high.reshape(len(systems), len(metrics))
                note = ""
            else:
                low = high = np.full((len(systems), len(metrics)), np.nan)
                note = f"fewer than {min_queries} queries: no interval"
            for j, system in enumerate(systems):
                row: list[object] = [system, facet.name, label, n]
                for k in range(len(metrics)):
                    row += [math.fsum(cell[:, j, k].tolist()) / n, float(low[j, k]), float(high[j, k])]
                rows.append([*row, note])
    return pd.DataFrame(rows, columns=facet_columns(metrics))


def check(config: CompareConfig, dataset: Dataset) -> None:
    """A facet the ``Readings`` group names that the loaded queries lack is an error before anything is fitted."""
    facets = config.readings.facets
    if facets:
        select_facets(dataset.queries, dataset.queries.ids, list(facets))


def compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    """The rollup of every metric of the comparison over the facets its ``Readings`` group names,
    its intervals as its ``statistics`` group says."""
    statistics, facets = inputs.config.statistics, inputs.config.readings.facets
    with inputs.progress.task("facets"):
        frame = facet_rollup(inputs.per_query, inputs.queries, list(inputs.config.metrics),
                             names=list(facets) if facets is not None else None,
                             n_samples=statistics.bootstrap_samples, seed=statistics.seed,
                             confidence=statistics.confidence)
    return {"facets": frame}


def manifest_entries(record: CompareRecord) -> dict[str, Any]:
    """The manifest's ``facets``: the side file, the facets rolled up and asked for, the default choice,
    the buckets and the minimum queries for an interval."""
    config = record.config
    return {"facets": {
        "file": config.loading.facets_file, "rolled_up": list(dict.fromkeys(record.table("facets")["facet"])),
        "asked": list(config.readings.facets) if config.readings.facets is not None else None,
        "default": f"every numeric facet and every other with at most {MAX_VALUES} distinct values",
        "quantile_buckets": QUANTILE_BUCKETS, "min_queries_for_an_interval": MIN_QUERIES,
    }}


def manifest_shape() -> dict[str, Any]:
    """The shape :func:`manifest_entries` has, checked when a folder is opened: an object, or absent."""
    from harness.store.read import Maybe

    return {"facets": Maybe(dict)}


def text_section(frame: pd.DataFrame, view: ReportView) -> str:
    """The text report's section: one table per facet, each value's queries, then per system each
    metric's mean and interval; nothing when no facet was rolled up."""
    from harness.report.parts import text_table

    names = view.metrics
    level = round(view.confidence * 100)
    lines: list[str] = []
    for facet in dict.fromkeys(frame["facet"]):
        rows = []
        previous = None
        for row in frame[frame["facet"] == facet].to_dict("records"):
            cells = []
            for name in names:
                low, high = row[f"{name}_ci_low"], row[f"{name}_ci_high"]
                bounds = "(too few queries)" if pd.isna(low) else f"[{low:.3f}, {high:.3f}]"
                cells.append(f"{row[name]:.3f} {bounds}")
            first = row["value"] != previous  # the value and its query count once, above its systems
            rows.append([str(row["value"]) if first else "", str(row["n_queries"]) if first else "", row["system"],
                         *cells])
            previous = row["value"]
        lines.append(f"facet {facet}: mean [{level}% paired bootstrap interval] per value; under "
                     f"{MIN_QUERIES} queries, no interval:")
        lines.extend("  " + line for line in text_table(["value", "queries", "system", *names], rows, right={1}))
        lines.append("")
    return "\n".join(lines[:-1])


def html_body(frame: pd.DataFrame, view: ReportView) -> str:
    """The HTML report's section: per facet, a table and bars of each value's means and intervals."""
    from harness.report import plots
    from harness.report.parts import html_cell, html_escape, html_figure, html_table
    from harness.report.view import number

    if frame.empty:
        return ('<p class="note">No facet was rolled up (the queries carry none, or --facets '
                "named none; --facets-file adds facets from a side file).</p>")
    minimum = view.manifest["facets"].get("min_queries_for_an_interval", MIN_QUERIES)
    parts = [f'<p class="note">Per facet value, each system\'s mean over the value\'s queries and its {view.level} '
             f"paired bootstrap interval (none under {minimum} queries).</p>"]
    for k, facet in enumerate(dict.fromkeys(str(f) for f in frame["facet"])):
        rows = []
        for row in frame[frame["facet"] == facet].to_dict("records"):
            cells = [html_cell(str(row["value"])), html_cell(str(row["n_queries"]), numeric=True),
                     html_cell(str(row["system"]))]
            for metric in view.metrics:
                low, high = row[f"{metric}_ci_low"], row[f"{metric}_ci_high"]
                bounds = "" if pd.isna(low) else f" [{number(low)}, {number(high)}]"
                cells.append(html_cell(f"{number(row[metric])}{bounds}", numeric=True, system=row["system"],
                                       metric=metric, facet=facet, value=row["value"]))
            rows.append("<tr>" + "".join(cells) + "</tr>")
        table = html_table(["value", "queries", "system", *view.metrics], rows, numeric_from=3, class_="facet",
                           data_facet=facet)
        chart = html_figure(plots.facet_bars_svg(frame, facet, view.metrics, view.systems, level=view.level,
                                                 key=f"facet-{k}"))
        parts.append(f"<h3>{html_escape(facet)}</h3>\n{table}\n{chart}")
    return "\n".join(parts)


# ----- another reading's per-query table rolled up (RollUp): computed, stored, served -------------


def _serve_order(owner: Reading) -> float:
    return owner.serve.order if owner.serve is not None and owner.serve.order is not None else owner.order


def rollup_readings(owner: Reading) -> list[Reading]:
    """The readings of ``owner``'s rollup (its :class:`~harness.core.readings.RollUp`): the rollup
    (``facets.csv``'s layout over its columns, the comparison's facets, resamples, seed and confidence),
    computed from the table its compute step gave, and each evaluated query's cell in each rolled-up facet;
    in ``bench serve``, when the rollup says how its values are served (``entries``), each system's
    ``byFacet`` (after the owner's entries) and a dashboard table -- of one reading only, since a
    system has one ``byFacet`` (a second is a ``ValueError``)."""
    by = owner.rollup
    if by is None:
        raise ValueError(f"reading {owner.name!r} declares no rollup by facet")
    if by.entries is not None:
        other = next((r.name for r in READINGS.values() if r.name != owner.name and r.rollup is not None
                      and r.rollup.entries is not None and r.rollup.name in READINGS), None)
        if other is not None:
            raise ValueError(f"reading {owner.name!r}: bench serve shows one rollup per facet (byFacet), reading "
                             f"{other!r}'s; give this RollUp no entries")

    def compute_rollup(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
        frame = inputs.tables.get(by.table)
        if frame is None:  # the owner computed no per-query table (the metrics card is off)
            return {}
        statistics, facets = inputs.config.statistics, inputs.config.readings.facets
        names = list(facets) if facets is not None else None
        tables = {by.name: facet_rollup(frame, inputs.queries, list(by.columns), names=names,
                                        n_samples=statistics.bootstrap_samples, seed=statistics.seed,
                                        confidence=statistics.confidence)}
        if by.cells:
            query_ids = list(inputs.queries.ids)
            cells = [[q, facet.name, facet.cell_of[q]] for facet in select_facets(inputs.queries, query_ids, names)
                     for q in query_ids]
            tables[by.cells] = pd.DataFrame(cells, columns=["query_id", "facet", "value"])
        return tables

    def served(folder: Any, system: str) -> dict[str, Any]:
        frame = folder.table(by.name)
        entries = by.entries or (lambda row: {})  # given: a rollup without entries is not served
        return {"byFacet": [{"facet": cell["facet"], "value": cell["value"], "nQueries": int(cell["n_queries"]),
                             **entries(cell), "note": cell["note"] or None}
                            for cell in frame[frame["system"] == system].to_dict("records")]}

    models: list[type] = []  # one class: the schema names each model once

    def model() -> type:
        if not models:
            from pydantic import create_model

            fields = dict(by.model()) if by.model is not None else {}
            cell = create_model("FacetRollup", facet=(str, ...), value=(str, ...), nQueries=(int, ...), **fields,
                                note=(str | None, ...))
            models.append(create_model("FacetRollups", byFacet=(list[cell], ...)))  # type: ignore[valid-type]
        return models[0]

    def page(metrics: Mapping[str, Any], number: Callable[[Any], str], chart: Callable[[Callable[[], str]], str]) -> str:
        shown = by.shown or (lambda cell, column, number: "")
        rows = []
        for system in metrics["systems"]:
            for cell in system["byFacet"]:
                rows.append((cell["facet"], cell["value"], system["system"], cell["nQueries"], "".join(
                    f'<td class="n">{shown(cell, n, number)}</td>' for n in by.columns), cell["note"] or ""))
        if not rows:
            return ('<h2 id="facets">Facet rollups</h2><p class="muted">No facet was rolled up (the queries carry '
                    "none, or <code>--facets ''</code>).</p>")
        rows.sort(key=lambda r: (r[0], r[1]))  # facet, value; systems keep the run's order (a stable sort)
        head = "".join(f'<th class="n">{n}</th>' for n in by.columns)
        body = "".join(f"<tr><td>{escape(f)}</td><td>{escape(v)}</td><td>{escape(s)}</td><td class=\"n\">{n}</td>"
                       f'{cells}<td class="muted">{escape(note)}</td></tr>' for f, v, s, n, cells, note in rows)
        return (f'<h2 id="facets">Facet rollups</h2><table><thead><tr><th>facet</th><th>value</th><th>system</th>'
                f'<th class="n">queries</th>{head}<th>note</th></tr></thead><tbody>{body}</tbody></table>')

    view = ServeView("", served, model, page, describe="byFacet", order=_serve_order(owner), page_order=by.order)
    readings = [Reading(by.name, by.file, ("system", "facet", "value", "note"), ("n_queries",),
                        columns=f"facets.csv's layout over {by.what or ', '.join(by.columns)}", compute=compute_rollup,
                        order=by.order, serve=view if by.entries is not None else None)]
    if by.cells:
        readings.append(Reading(by.cells, by.cells_file, ("query_id", "facet", "value"),
                                columns="query_id, facet, value: the cell of each evaluated query in each rolled-up "
                                        "facet", order=by.order + 1))
    return readings


register(Reading("facets", "facets.csv", ("system", "facet", "value", "note"), ("n_queries",),
                 columns="system, facet, value, n_queries, per metric its mean, <metric>_ci_low, <metric>_ci_high, "
                         "note",
                 compute=compute, check=check, record=manifest_entries, record_shape=manifest_shape,
                 sections={"text": text_section}, render={"html": html_body}, title="Facets", anchor="facets",
                 order=50, rolls_up=rollup_readings))
