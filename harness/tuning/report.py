"""The reports of a parameter search's results folder (``bench tune``): HTML and Markdown.

Both show, from the folder alone (:class:`harness.tuning.view.TuneView`), what the printed summary
shows and what it cannot:

* the **estimate**: the cross-validated estimate with its interval, beside the in-sample best
  (labelled optimistic: chosen on the very queries it is scored on), the default parameters'
  score, what tuning buys over the default and the optimism (in-sample best - estimate), both with
  their paired intervals, and the parameters chosen on all queries;
* **per fold**, the point chosen on the other folds' queries, its training and held-out means;
* the **grid**: in HTML the chart of the metric over it (:func:`harness.report.plots.tune_grid_svg`) and
  every point's row of ``tune.csv`` (the :data:`TABLE_POINTS` best of a larger grid); in Markdown,
  a compact table of the :data:`TOP_POINTS` best points;
* the **cost** (HTML only: the Markdown holds no time): each point's fit time, index size and batch
  throughput from ``tune_cost.csv`` (:mod:`harness.tuning.cost`) beside its mean, the points on
  the Pareto front of mean against search time marked;
* the **provenance**: run, corpus, hashes, metric definition, folds, bootstrap settings and, in
  HTML, the grid's axes and the shortcut that ran.

Numbers are written as the printed summary writes them (3 decimals, differences signed), and each
HTML cell that shows one carries ``data-*`` attributes naming it (``data-field``; ``data-fold``;
``data-point`` and ``data-column`` for a cell of tune.csv, ``data-cost-point`` and
``data-cost-column`` for one of tune_cost.csv). The Markdown prints no time, path or
library version but retbench's, so the same folder gives the same bytes everywhere.

Which report formats a tune folder has (:data:`TUNE_RENDERERS`: ``html`` and ``md`` of
:data:`harness.report.formats.REPORT_FORMATS`, in the same files) is declared here, beside the
renderers: ``bench tune --report``, :meth:`harness.tuning.search.TuneResult.report` and ``bench
report`` on a tune folder (:func:`render_tune_report`) read it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from typing import Any

import pandas as pd

from corpora import InputFileError, RetbenchError

from harness.report import plots
from harness.report.parts import (html_cell, html_definitions, html_details, html_escape, html_figure, html_hashes,
                                  html_metric_definitions, html_page, html_remarks, html_section, html_table,
                                  md_details, md_row, md_text, run_facts)
from corpora.wording import counted
from harness.report.formats import REPORT_FORMATS, check_formats, parse_formats
from harness.report.view import number, short_label
from harness.store.read import ResultsFolder, open_results
from harness.tuning.view import TuneView, is_tune_folder

__all__ = ["OPEN_POINTS", "SECTIONS", "TABLE_POINTS", "TOP_POINTS", "TUNE_RENDERERS", "check_tune_formats",
           "render_tune_html", "render_tune_markdown", "render_tune_report", "tune_formats", "tune_report_files"]

#: Section id -> its heading, in the order of the HTML page.
SECTIONS = {
    "estimate": "Estimate",
    "grid": "The metric over the grid",
    "folds": "Per-fold choices",
    "points": "Every grid point",
    "cost": "What each point cost",
    "provenance": "Provenance",
}
#: The grid points' table is open up to this many points, folded beyond.
OPEN_POINTS = 50
#: The HTML lists every point up to this many, else the best this many (tune.csv has them all).
TABLE_POINTS = 1000
#: The best points the Markdown lists.
TOP_POINTS = 10


def _readings(view: TuneView) -> list[tuple[str, str, str, str, str]]:
    """(field, reading, value, interval, what it is): the rows of the estimate table, as the printed summary."""
    s = view.summary
    estimate, difference, optimism = s["cross_validated_estimate"], s["estimate_minus_default"], s["optimism"]
    best, default = s["in_sample_best"], s["default"]

    def bounds(entry: dict[str, Any], sign: bool) -> str:
        return f"[{number(entry['ci_low'], sign=sign)}, {number(entry['ci_high'], sign=sign)}]"

    off_grid = "" if default["point"] is not None else " (off the grid: scored on its own)"
    return [
        ("cross_validated_estimate", "cross-validated estimate", number(estimate["mean"]), bounds(estimate, False),
         "each query scored with parameters chosen on the other folds"),
        ("in_sample_best", "in-sample best (optimistic)", number(best["mean"]), "",
         f"{best['system']}: chosen on the queries it is scored on"),
        ("default", "default parameters", number(default["mean"]), "", f"{default['system']}{off_grid}"),
        ("estimate_minus_default", "estimate − default", number(difference["mean_diff"], sign=True),
         bounds(difference, True), "what tuning buys on new queries"),
        ("optimism", "optimism", number(optimism["mean_diff"], sign=True), bounds(optimism, True),
         "in-sample best − estimate"),
    ]


def _heading(view: TuneView) -> str:
    """``5 grid points (alpha 5), 14 queries in 3 folds (seed 0)``."""
    s = view.summary
    stratified = f", stratified by {s['stratify']}" if s.get("stratify") else ""
    return (f"{counted(int(s['grid_points']), 'grid point')} ({view.shape}), {counted(view.n_queries, 'query')} in "
            f"{counted(view.n_folds, 'fold')} (seed {s['seed']}{stratified})")


# ----- HTML -------------------------------------------------------------------------------------------


def _section(key: str, body: str) -> str:
    return html_section(key, SECTIONS[key], body)


def _estimate(view: TuneView) -> str:
    stats = view.statistics
    rows = ["<tr>" + "".join([html_cell(reading), html_cell(value, numeric=True, field=field),
                              html_cell(interval, numeric=True, field=f"{field}_interval"), html_cell(what)]) + "</tr>"
            for field, reading, value, interval, what in _readings(view)]
    table = html_table(["reading", view.metric, f"{view.level} interval", "what it is"], rows, numeric_from=1,
                       text=(3,), id="estimate-table")
    chosen = view.summary["chosen"]
    said = (f'<p>Chosen on all queries: <b data-field="chosen">{html_escape(view.setting(chosen["parameters"]))}</b> '
            f"→ <code>{html_escape(chosen['system'])}</code> (point {chosen['point']}): the parameters to use; the "
            "cross-validated estimate says what they will score on new queries.</p>")
    notes = "".join(f'<p class="note">note: {html_escape(n)}</p>' for n in view.summary.get("notes", []))
    note = (f'<p class="note">The cross-validated estimate scores each query with the parameters its fold chose on '
            "the other folds' queries, so no query helps choose the parameters it is scored with. The in-sample "
            "best is the best point's mean over the very queries it was chosen on: it overstates. "
            f"{view.level} paired bootstrap intervals over queries ({stats['bootstrap_samples']:,} resamples, seed "
            f"{stats['seed']}).</p>")
    return _section("estimate", note + table + said + notes)


def _grid(view: TuneView) -> str:
    svg = plots.tune_grid_svg(view.table, view.axes, view.metric, chosen=view.chosen_point,
                              default=view.default_point, fold_choices=view.fold_choices)
    if len(view.axes) == 1:
        default = ("here also the default" if view.default_point == view.chosen_point
                   else "the diamond the default" if view.default_point is not None else "")
        caption = (f"{view.metric} over {view.axes[0][0]}: the mean over all queries (line) and each fold's held-out "
                   "mean (faint), the fold's choice an open dot on it; the star is the setting chosen on all queries "
                   f"(the in-sample best){', ' + default if default else ''}.")
    else:
        caption = (f"{view.metric}'s mean over all queries at each grid point; the legend names the chosen setting "
                   "(the in-sample best) and the default, and how each is marked.")
    if view.default_point is None:
        caption += " The default lies off the grid: it is not drawn."
    return _section("grid", html_figure(svg, caption))


def _folds(view: TuneView) -> str:
    rows = []
    for entry in view.per_fold:
        fold = int(entry["fold"])
        rows.append("<tr>" + "".join([
            html_cell(str(fold), numeric=True), html_cell(str(entry["queries"]), numeric=True, fold=fold,
                                                          field="queries"),
            html_cell(str(entry["training_queries"]), numeric=True),
            html_cell(str(entry["chosen_point"]), numeric=True, fold=fold, field="chosen_point"),
            html_cell(entry["system"]), html_cell(view.setting(entry["parameters"])),
            html_cell(number(entry["train_mean"]), numeric=True, fold=fold, field="train_mean"),
            html_cell(number(entry["test_mean"]), numeric=True, fold=fold, field="test_mean")]) + "</tr>")
    note = ('<p class="note">Per fold, the point with the highest mean over the other folds\' queries (its training '
            "queries; ties go to the first point in grid order), and that point's mean over the fold's own queries, "
            "held out.</p>")
    table = html_table(["fold", "queries", "training queries", "chosen point", "system", "parameters", "train",
                        "held out"], rows, numeric_from=1, text=(4, 5), id="folds-table")
    return _section("folds", note + table)


def _points(view: TuneView) -> str:
    frame = view.table
    shown = frame if len(frame) <= TABLE_POINTS else view.best_points(TABLE_POINTS)
    axes = [name for name, _ in view.axes]
    folds = [f"{side}_{f + 1}" for f in range(view.n_folds) for side in ("train", "test")]
    rows = []
    for row in shown.to_dict("records"):
        point = int(row["point"])
        classes = ["best"] if point == view.chosen_point else []
        cells = [html_cell(str(point), numeric=True), html_cell(row["system"]),
                 *(html_cell(str(row[a]), numeric=True, point=point, column=a) for a in axes),
                 html_cell(number(row["mean"]), numeric=True, classes=classes, point=point, column="mean"),
                 *(html_cell(number(row[c]), numeric=True, point=point, column=c) for c in folds)]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = html_table(["point", "system", *axes, "mean", *folds], rows, numeric_from=2, id="points-table")
    which = (f"all {len(frame)}" if len(shown) == len(frame)
             else f"the {len(shown)} best of {len(frame)} (tune.csv has them all)")
    note = (f'<p class="note">tune.csv: each point\'s mean over all queries (bold: the chosen point), and per fold f '
            "its mean over the fold's training queries (train_f) and over its own (test_f).</p>")
    return _section("points", note + html_details(f"{which} grid points", table, open_=len(shown) <= OPEN_POINTS))


def _cost(view: TuneView) -> str:
    """tune_cost.csv beside each point's mean (the rows the points' table shows), the points on
    the Pareto front of mean against search time marked; empty for a folder without it."""
    from harness.readings.cost import pareto_front, size_text

    costs = view.costs
    if costs is None:
        return ""
    merged = view.table[["point", "system", "mean"]].merge(costs.drop(columns="system"), on="point")
    front = {int(merged["point"].iloc[i]) for i in pareto_front(list(merged["search_seconds"].astype(float)),
                                                                list(merged["mean"].astype(float)))}
    shown = view.best_points(TABLE_POINTS)["point"] if len(merged) > TABLE_POINTS else merged["point"]
    rows = []
    for row in merged[merged["point"].isin(set(shown))].to_dict("records"):
        point = int(row["point"])
        known = [pd.notna(row[c]) for c in ("fit_seconds", "queries_per_second")]
        fit = (f"{row['fit_seconds']:.3f}" + (" (cache)" if row["fit_from_cache"] == "true" else "")
               if known[0] else "unknown")
        cells = [html_cell(str(point), numeric=True), html_cell(short_label(str(row["system"]))),
                 html_cell(number(row["mean"]), numeric=True, classes=["best"] if point == view.chosen_point else []),
                 html_cell(fit, numeric=True, cost_point=point, cost_column="fit_seconds"),
                 html_cell(size_text(row["index_bytes"]), numeric=True, cost_point=point, cost_column="index_bytes"),
                 html_cell(f"{row['queries_per_second']:,.1f}" if known[1] else "unknown", numeric=True,
                           cost_point=point, cost_column="queries_per_second"),
                 html_cell("yes" if point in front else "", cost_point=point, cost_column="front"),
                 html_cell(str(row["basis"]))]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = html_table(["point", "system", view.metric, "fit s", "index", "queries/s", "Pareto front", "basis"], rows,
                       numeric_from=2, text=(6, 7), id="cost-table")
    entry = view.manifest.get("cost", {})
    bases = "; ".join(f"{k}: {v}" for k, v in entry.get("basis", {}).items())
    where = entry.get("machine", {}).get("cpu", "an unrecorded machine")
    note = (f'<p class="note">tune_cost.csv, measured on {html_escape(where)}: '
            f'{html_escape(entry.get("measured", ""))}. Basis: {html_escape(bases)}. The Pareto front: the points no '
            "other point beats on both mean and search time. Absolute times hold on this machine only; bench compare "
            "measures the chosen setting's latency.</p>")
    return _section("cost", note + html_details(f"{len(rows)} of {len(merged)} grid points", table,
                                                 open_=len(rows) <= OPEN_POINTS))


def _provenance(view: TuneView) -> str:
    m = view.manifest
    grid = m.get("grid", {})
    default = grid.get("default", {})
    run = html_definitions([
        *run_facts(m),
        ("grid", f"<code>{html_escape(view.grid_spec)}</code>: {html_escape(grid.get('order', ''))}"),
        ("axes", html_escape("; ".join(f"{a['name']} = {a.get('written', '')}: {', '.join(map(str, a['values']))}"
                                       for a in grid.get("axes", [])))),
        ("default", html_escape(f"{default.get('system')} (point {default.get('point')})"
                                if default.get("point") is not None
                                else f"{default.get('system')} (off the grid, scored on its own)")),
        ("shortcut", html_escape(grid.get("shortcut", ""))),
        ("search depth", html_escape(m.get("search_depth", ""))),
    ])
    cv = view.cross_validation
    strata = cv.get("strata")
    folds = html_definitions([
        ("folds", html_escape(f"{cv.get('folds')} (seed {cv.get('seed')})"
                              + (f", stratified by {strata['facet']}: {strata['cells']}" if strata else ""))),
        *((key, html_escape(cv.get(key, ""))) for key in ("stream", "choice", "estimate", "means")),
    ])
    stats = view.statistics
    statistics = html_definitions([
        ("bootstrap", html_escape(f"{stats.get('bootstrap_samples')} resamples, seed {stats.get('seed')}, "
                                  f"{stats.get('interval')}, confidence {stats.get('confidence')}")),
        ("stream", html_escape(stats.get("bootstrap_stream", ""))),
    ])
    seconds = html_definitions((k, html_escape(f"{v:.3f} s")) for k, v in m.get("seconds", {}).items())
    body = (f"{run}<h3>Hashes</h3>{html_hashes(m)}<h3>Metric</h3>{html_metric_definitions([view.metric_definition])}"
            f"<h3>Cross-validation</h3>{folds}<h3>Statistics</h3>{statistics}<h3>Seconds</h3>{seconds}"
            f"{html_remarks(m)}")
    return _section("provenance", body)


def render_tune_html(view: TuneView) -> str:
    """The whole HTML page of a tune folder (see the module docstring)."""
    plots.require_matplotlib("the HTML report's charts")
    corpus = view.corpus
    lead = (f"<p>tune <code>{html_escape(view.grid_spec)}</code> on {html_escape(corpus.get('name'))} by "
            f"{html_escape(view.metric)}: {html_escape(_heading(view))}; run "
            f"<code>{html_escape(view.manifest.get('run_id', ''))}</code>.</p>")
    warnings = view.manifest.get("warnings", [])
    if warnings:
        lead += "<ul>" + "".join(f'<li class="down">warning: {html_escape(w)}</li>' for w in warnings) + "</ul>"
    nav = "".join(f'<a href="#{key}">{html_escape(name)}</a>' for key, name in SECTIONS.items()
                  if key != "cost" or view.costs is not None)
    body = "\n".join(part for part in (section(view) for section in (_estimate, _grid, _folds, _points, _cost,
                                                                       _provenance)) if part)
    version = view.manifest.get("versions", {}).get("retbench", "")
    return html_page(title=f"retbench tune report: {corpus.get('name')}", lead=lead, nav=nav, body=body,
                     version=str(version))


# ----- Markdown ---------------------------------------------------------------------------------------


def _md_readings(view: TuneView) -> list[str]:
    lines = [md_row(["reading", md_text(view.metric), f"{view.level} interval", "what it is"]),
             md_row([":--", "--:", ":--", ":--"])]
    for field, reading, value, interval, what in _readings(view):
        if field == "cross_validated_estimate":
            reading, value = f"**{reading}**", f"**{value}**"
        lines.append(md_row([reading, value, interval, md_text(what)]))
    return lines


def _md_folds(view: TuneView) -> list[str]:
    lines = [md_row(["fold", "queries", "chosen on the other folds", "train", "held out"]),
             md_row(["--:", "--:", ":--", "--:", "--:"])]
    for entry in view.per_fold:
        lines.append(md_row([str(entry["fold"]), str(entry["queries"]), md_text(short_label(str(entry["system"]))),
                             number(entry["train_mean"]), number(entry["test_mean"])]))
    return lines


def _md_points(view: TuneView) -> list[str]:
    axes = [name for name, _ in view.axes]
    best = view.best_points(TOP_POINTS)
    lines = [md_row(["point", "system", *(md_text(a) for a in axes), "mean"]),
             md_row(["--:", ":--", *(["--:"] * len(axes)), "--:"])]
    for row in best.to_dict("records"):
        mean = number(row["mean"])
        if int(row["point"]) == view.chosen_point:
            mean = f"**{mean}**"
        lines.append(md_row([str(int(row["point"])), md_text(short_label(str(row["system"]))),
                             *(md_text(row[a]) for a in axes), mean]))
    return lines


def _md_conventions(view: TuneView) -> list[str]:
    m = view.manifest
    corpus = view.corpus
    stats = view.statistics
    cv = view.cross_validation
    metric = view.metric_definition
    hashes = ", ".join(f"{md_text(k)} `{str(v)[:12]}`" for k, v in m.get("hashes", {}).items())
    command = shlex.join(str(w) for w in m.get("command_line", []))
    body = [f"- Corpus {md_text(corpus.get('name'))}: {counted(corpus.get('documents'), 'document')}, "
            f"{counted(corpus.get('queries_evaluated'), 'query')} evaluated ({len(corpus.get('queries_excluded', []))} "
            f"excluded: no relevant judgment), {counted(corpus.get('judgments'), 'judgment')}; SHA-256 {hashes}.",
            f"- {md_text(metric.get('name'))}: {md_text(metric.get('definition', ''))}; relevant: grade ≥ "
            f"{metric.get('rel_threshold')} (trec\\_eval {md_text(metric.get('trec_eval'))}).",
            f"- Grid `{view.grid_spec.replace('`', chr(39))}`: {md_text(m.get('grid', {}).get('order', ''))}.",
            f"- Folds: {md_text(cv.get('choice', ''))}; estimate: {md_text(cv.get('estimate', ''))}.",
            f"- Intervals: {md_text(stats.get('interval', ''))}, {stats.get('bootstrap_samples'):,} resamples, seed "
            f"{stats.get('seed')}.",
            f"- Made by `{command.replace('`', chr(39))}` (retbench {md_text(m.get('versions', {}).get('retbench'))}); "
            "tune.csv in the results folder has every point's mean per fold."]
    return md_details("How these numbers were made", body)


def render_tune_markdown(view: TuneView) -> str:
    """The Markdown report of a tune folder (see the module docstring): no chart."""
    chosen = view.summary["chosen"]
    notes = [f"Note: {md_text(n)}" for n in view.summary.get("notes", [])]
    lines = [f"### retbench tune: `{view.grid_spec.replace('`', chr(39))}` on {md_text(view.corpus.get('name'))} by "
             f"{md_text(view.metric)}", "", f"{_heading(view)}.", "", *_md_readings(view), "",
             f"Chosen on all queries: **{md_text(view.setting(chosen['parameters']))}** "
             f"({md_text(short_label(str(chosen['system'])))}). The estimate scores each query with the parameters "
             "its fold chose on the other folds; the in-sample best is chosen on the very queries it is scored on, so "
             f"it overstates. {view.level} paired bootstrap intervals over queries.",
             *(["", *notes] if notes else []), "",
             "**Per fold**: the point with the best mean on the other folds' queries, and its mean on the fold's own.",
             "", *_md_folds(view), "",
             f"**Best points** by mean over all queries ({min(TOP_POINTS, len(view.table))} of {len(view.table)}; "
             "bold: the chosen one):", "", *_md_points(view), *_md_conventions(view)]
    return "\n".join(lines) + "\n"



#: Format name (a key of :data:`~harness.report.formats.REPORT_FORMATS`, whose file it is kept in) -> its
#: renderer of a tune folder; a format not here (latex, text: a table of compared systems) has none.
TUNE_RENDERERS: dict[str, Callable[[TuneView], str]] = {"html": render_tune_html, "md": render_tune_markdown}


def tune_formats() -> list[str]:
    """The formats that can report a tune folder, in the order of ``REPORT_FORMATS``."""
    return [name for name in REPORT_FORMATS if name in TUNE_RENDERERS]


def _not_for_tune(name: str, where: str) -> RetbenchError:
    return RetbenchError(f"{where}: the {name} report is not available for tune folders (it is a table of compared "
                         f"systems). Fix: use {' or '.join(tune_formats())}")


def check_tune_formats(formats: Sequence[str], *, parameter: str = "reports") -> None:
    """Raise now, before any work, when a format cannot report a tune folder (the error names
    ``parameter``, which was given the formats) or needs what is not installed (matplotlib)."""
    for name in formats:
        if name not in TUNE_RENDERERS:
            raise _not_for_tune(name, f"`{parameter}={name}`")
        check_formats([name])


def _renderers(results: ResultsFolder, names: Sequence[str]) -> Callable[[str], str]:
    """Format name -> its text, from one reading of the tune folder ``results``."""
    if not is_tune_folder(results):
        raise InputFileError(results.path, "is not a tune folder: bench tune did not write it",
                             fix="name a folder bench tune wrote, or report this one with bench report")
    for name in names:
        if name not in TUNE_RENDERERS:
            raise _not_for_tune(name, f"{results.path} (written by bench tune)")
    view = TuneView(results)
    return lambda name: TUNE_RENDERERS[name](view)


def render_tune_report(folder: ResultsFolder | str | PathLike[str], format: str) -> str:
    """The report of the tune folder ``folder`` in ``format`` (one of :func:`tune_formats`)."""
    (name,) = parse_formats([format])
    check_formats([name])
    results = folder if isinstance(folder, ResultsFolder) else open_results(folder)
    return _renderers(results, [name])(name)


def tune_report_files(folder: ResultsFolder | str | PathLike[str], formats: Sequence[str]) -> Mapping[str, str]:
    """File name inside the tune folder -> text, for each of ``formats``, from one reading of it."""
    names = parse_formats(formats)
    check_formats(names)
    results = folder if isinstance(folder, ResultsFolder) else open_results(folder)
    render = _renderers(results, names)
    return {REPORT_FORMATS[name].file: render(name) for name in names}
