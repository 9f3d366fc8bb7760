"""The facet rollup as a reading (``facets.csv``): each metric's mean and paired bootstrap interval per
facet value, per system, computed by :func:`harness.core.facets.facet_rollup` (the cells, buckets and
intervals, which the metrics card rolls up with too) from a comparison's per-query values and the
queries' facets, as the ``Readings`` option group's ``facets`` names them (None: every numeric facet
and every other with few distinct values).

One module, registered as an add-on is (docs/adding-a-reading.md): :func:`compute`, its record in
the manifest (:func:`manifest_entries`, ``facets``) and its text and HTML sections
(:func:`text_section`, :func:`html_body`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from harness.core.facets import MAX_VALUES, MIN_QUERIES, QUANTILE_BUCKETS, facet_rollup, select_facets
from harness.core.readings import Reading, ReadingInputs, register

# The reports' and the store's helpers are imported where a section is rendered or a folder checked, so
# that computing a comparison loads none.
if TYPE_CHECKING:
    from corpora import Dataset
    from harness.core.record import CompareConfig, CompareRecord
    from harness.report.view import ReportView

__all__ = ["check", "compute", "html_body", "manifest_entries", "manifest_shape", "text_section"]


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


register(Reading("facets", "facets.csv", ("system", "facet", "value", "note"), ("n_queries",),
                 columns="system, facet, value, n_queries, per metric its mean, <metric>_ci_low, <metric>_ci_high, "
                         "note",
                 compute=compute, check=check, record=manifest_entries, record_shape=manifest_shape,
                 sections={"text": text_section}, render={"html": html_body}, title="Facets", anchor="facets",
                 order=50))
