"""The HTML report of a results folder: one self-contained file to open in any browser, offline.

Everything is inside the file: the style sheet in a ``<style>`` element, every chart an inline SVG
drawn by :mod:`harness.report.plots`, and no reference to anything outside it (no script, font, image or
style sheet is fetched). Sections, in order (each an ``<h2>`` with an id, linked from the top):

1. ``leaderboard`` - per metric, the systems by mean with their group letters, mean rank and rank
   interval (a registered reading, :mod:`harness.readings.leaderboard`);
2. ``means`` - each system's mean per metric with its bootstrap interval, the best in bold, a
   marker against the reference (the baseline, or the best), and a chart of the intervals;
3. ``comparisons`` - each paired comparison: mean difference, interval, p, Holm p, test, effect
   size, wins/ties/losses, detectable difference, queries needed and the verdict;
4. ``differences`` - per comparison, its per-query differences sorted, the interval as a band;
5. ``first-relevant`` - the rank of the first relevant document per query and system, each failure
   with its diagnosis category; failures counted by category, and a chart of them;
6. ``facets`` - per facet, a table and bars of each value's means and intervals (a registered
   reading, :mod:`harness.readings.facets`);
7. ``risk-coverage`` - the curves, AURC in the legend, and the table of the summary (a registered
   reading, :mod:`harness.readings.risk_coverage`);
8. ``duplicates`` - near-duplicate documents found in the top places (a registered reading,
   :mod:`harness.readings.near_duplicates`);
9. each reading added to the registry with an HTML renderer, under its own id;
10. ``provenance`` - the run, versions, hashes, metric definitions, conventions, statistics
   settings, systems and their parameters, the command line and the re-scoring command.

At 1,000 queries and more it stays usable: the charts aggregate (:data:`harness.report.plots.MAX_POINTS`),
and the long tables fold (``<details>``): the first-relevant table is open up to
:data:`OPEN_QUERIES` queries, the comparisons and differences of the first metric are open and the
others folded once there are more than :data:`OPEN_COMPARISONS` comparisons.

Numbers are written as the text report writes them (means to 3 decimals, differences signed), so a
cell can be checked against ``summary.csv`` and ``comparisons.csv``; each number cell carries
``data-system``/``data-metric`` (or ``data-system-a``/``data-system-b``) attributes naming what it shows.
"""

from __future__ import annotations

import json

import pandas as pd

from harness.report import plots
from harness.report.parts import html_cell as _cell
from harness.report.parts import html_definitions as _definition_list
from harness.report.parts import html_details as _details
from harness.report.parts import html_escape as _e
from harness.report.parts import html_figure as _figure
from harness.report.parts import html_table as _table
from harness.report.parts import (html_hashes, html_metric_definitions, html_page, html_remarks, html_section,
                                  run_facts)
from corpora.wording import counted
from harness.report.view import ComparisonRow, ReportView, number
from harness.core.readings import Reading
from harness.core.statistics import adjusted_label, correction_words, format_p

__all__ = ["OPEN_COMPARISONS", "OPEN_QUERIES", "PARAMETER_CHARS", "PLACES", "SECTIONS", "render_html"]

#: The first-relevant-rank table is open up to this many queries, folded beyond.
OPEN_QUERIES = 50
#: Up to this many comparisons every metric's are open; beyond, only the first metric's.
OPEN_COMPARISONS = 30
#: Characters of a system's parameters shown (the manifest holds them whole).
PARAMETER_CHARS = 400
#: Section id -> its heading, in the order of the page.
SECTIONS = {
    "means": "Means",
    "comparisons": "Comparisons",
    "differences": "Per-query differences",
    "first-relevant": "First relevant document and diagnosis",
    "provenance": "Provenance",
}
#: Where each of the page's own sections stands among the registered readings (their ``order``,
#: :class:`harness.core.readings.Reading`): a reading's section (and link) comes before the first own
#: section of a higher order (the leaderboard first, the facets and risk–coverage after the
#: first-relevant section, one added at 100 before the provenance).
PLACES = {"means": 41, "comparisons": 42, "differences": 43, "first-relevant": 44, "provenance": 1000}
_UP, _DOWN = "▲", "▼"


def _section(key: str, body: str) -> str:
    return html_section(key, SECTIONS[key], body)


def _reading_section(reading: Reading, frame: pd.DataFrame, view: ReportView) -> str:
    """A registered reading's section: its own, else its renderer's body under its heading."""
    return reading.section("html", frame, view, lambda body: html_section(reading.html_id, reading.heading, body))


# ----- sections ---------------------------------------------------------------------------------


def _marker(view: ReportView, system: str, metric: str) -> str:
    sign = view.marker(system, metric)
    if sign > 0:
        return f' <span class="up" title="significantly better than {_e(view.reference(metric))}">{_UP}</span>'
    if sign < 0:
        return f' <span class="down" title="significantly worse than {_e(view.reference(metric))}">{_DOWN}</span>'
    return ""


def _reference_note(view: ReportView) -> str:
    if view.baseline is not None:
        against = f"the baseline <b>{_e(view.baseline)}</b>"
    else:
        against = view.BEST_REFERENCE
    return (f"{_UP}/{_DOWN}: significantly better/worse than {against} "
            f"({adjusted_label(view.statistics.get('holm_family'))} &le; {view.alpha:g} and the "
            f"{view.level} paired interval excludes 0)")


def _means(view: ReportView) -> str:
    intervals = view.mean_intervals
    rows = []
    for row in intervals.to_dict("records"):
        system = str(row["system"])
        cells = [_cell(system)]
        for metric in view.metrics:
            text = (f'<span class="value">{number(row[metric])}</span>{_marker(view, system, metric)}'
                    f'\n<br><span class="note">[{number(row[f"{metric}_ci_low"])}, '
                    f'{number(row[f"{metric}_ci_high"])}]</span>')
            classes = ["best"] if system in view.best(metric) else []
            cells.append(_cell(text, numeric=True, classes=classes, raw=True, system=system, metric=metric))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note = (f'<p class="note">Mean over {counted(view.n_queries, "query")} and its {view.level} percentile bootstrap '
            'interval '
            f"(the run's {view.statistics['bootstrap_samples']} resamples of the queries, seed "
            f"{view.statistics['seed']}); bold: the best; {_reference_note(view)}.</p>")
    table = _table(["system", *view.metrics], rows, id="means-table")
    chart = _figure(plots.means_svg(intervals, view.metrics, level=view.level),
                    f"Each system's mean (dot) and {view.level} interval (bar), per metric.")
    return _section("means", note + table + chart)


def _comparison_row(view: ReportView, row: ComparisonRow) -> str:
    c, power = row.comparison, row.power
    needed = "--" if power.queries_needed is None else str(power.queries_needed)
    keys = {"system_a": c.system_a, "system_b": c.system_b, "metric": c.metric}
    cells = [
        _cell(f"{c.system_a} − {c.system_b}"),
        _cell(number(c.mean_diff, sign=True), numeric=True, field="mean_diff", **keys),
        _cell(f"[{number(c.ci_low, sign=True)}, {number(c.ci_high, sign=True)}]", numeric=True, field="interval",
              **keys),
        _cell(format_p(c.p_value, view.alpha), numeric=True, field="p_value", **keys),
        _cell(format_p(c.p_adjusted, view.alpha), numeric=True, field="p_adjusted", **keys),
        _cell(c.test),
        _cell(number(power.effect_size, 2, sign=True), numeric=True, field="effect_size", **keys),
        _cell(f"{power.wins}/{power.ties}/{power.losses}", numeric=True),
        _cell(number(power.detectable_difference), numeric=True, field="detectable_difference", **keys),
        _cell(needed, numeric=True, field="queries_needed", **keys),
        _cell(row.verdict, field="verdict", **keys),
    ]
    return f'<tr class="{"significant" if row.significant else "plain"}">' + "".join(cells) + "</tr>"


def _comparisons(view: ReportView) -> str:
    if not view.comparison_rows:
        return _section("comparisons", '<p class="note">One system: nothing to compare.</p>')
    stats = view.statistics
    test = stats["randomisation_test"]
    power = stats.get("power", {})
    note = (f'<p class="note">Mean difference a − b over {counted(view.n_queries, "query")} with its {view.level} '
            'paired '
            f"bootstrap interval ({stats['bootstrap_samples']} resamples, seed {stats['seed']}); p from the paired "
            f"sign-flip randomisation test (exact up to {test['exact_up_to']} differing queries, else "
            f"{test['permutations']} random flips), adjusted by {_e(correction_words(stats['holm_family']))}; "
            f"d<sub>z</sub> = mean / sd of the differences; detectable difference and queries needed: "
            f"{_e(power.get('test', 'paired t-test'))} at {power.get('power', 0.8):.0%} power. Shaded rows are "
            f"significant ({adjusted_label(stats['holm_family'])} &le; {view.alpha:g} and the interval excludes 0).</p>")
    header = ["comparison", "mean diff", f"{view.level} interval", "p", adjusted_label(stats["holm_family"]), "test", "d_z", "wins/ties/losses",
              "detectable", "queries needed", "verdict"]
    open_all = len(view.comparison_rows) <= OPEN_COMPARISONS
    parts = [note]
    for i, metric in enumerate(view.metrics):
        rows = [_comparison_row(view, r) for r in view.comparisons_of(metric)]
        table = _table(header, rows, numeric_from=1, text=(5, 10), class_="comparisons", data_metric=metric)
        parts.append(_details(f"{metric}: {counted(len(rows), 'comparison')}", table, open_=open_all or i == 0))
    return _section("comparisons", "\n".join(parts))


def _differences(view: ReportView) -> str:
    if not view.comparison_rows:
        return _section("differences", '<p class="note">One system: nothing to compare.</p>')
    open_all = len(view.comparison_rows) <= OPEN_COMPARISONS
    parts = [f'<p class="note">Each comparison query by query: the differences a − b sorted (red: a lower, green: a '
             f"higher), the mean difference as a line and its {view.level} interval as a band.</p>"]
    for i, metric in enumerate(view.metrics):
        charts = []
        for j, row in enumerate(view.comparisons_of(metric)):
            c = row.comparison
            if c.n_differing == 0:  # a chart of zeros says nothing the verdict does not
                charts.append(f'<figure><p class="note">{_e(c.system_a)} − {_e(c.system_b)}, {_e(metric)}: identical '
                              "on every query, every difference 0 (no chart).</p></figure>")
                continue
            svg = plots.differences_svg(view.differences(row), c.mean_diff, c.ci_low, c.ci_high, system_a=c.system_a,
                                        system_b=c.system_b, metric=metric, level=view.level,
                                        key=f"differences-{i}-{j}")
            charts.append(_figure(svg, row.verdict))
        body = '<div class="charts">' + "\n".join(charts) + "</div>"
        parts.append(_details(f"{metric}: {counted(len(charts), 'comparison')}", body, open_=open_all or i == 0))
    return _section("differences", "\n".join(parts))


def _first_relevant(view: ReportView) -> str:
    ranks = view.first_relevant_ranks
    categories = view.failure_categories
    fail_rank = view.manifest["diagnosis"]["fail_rank"]
    failed_any = 0
    rows = []
    for query in view.query_ids:
        cells = [_cell(query)]
        failed = False
        for system in view.systems:
            rank = ranks.loc[query, system]
            text = "--" if pd.isna(rank) else str(int(rank))
            category = categories.get((system, query))
            if category is None:  # no data attributes: the row and column say what it is, and 1,000s of rows add up
                cells.append(_cell(text, numeric=True))
            else:
                failed = True
                cells.append(_cell(f'{_e(text)} <span class="category">{_e(category)}</span>', numeric=True,
                                   classes=["failed"], raw=True))
        failed_any += failed
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = _table(["query", *view.systems], rows, id="first-relevant-table")
    summary = (f"{counted(view.n_queries, 'query')}, {failed_any} failed by at least one system "
               "(-- = no relevant document "
               "retrieved)")
    counts = view.category_counts
    count_rows = ["<tr>" + _cell(system) + "".join(
        _cell(str(int(counts.loc[system, c])), numeric=True, system=system, category=c) for c in counts.columns)
        + _cell(str(int(counts.loc[system].sum())), numeric=True) + "</tr>" for system in view.systems]
    count_table = _table(["system", *counts.columns, "failed"], count_rows, id="diagnosis-counts")
    legend = "".join(f"<dt>{_e(name)}</dt><dd>{_e(meaning)}</dd>" for name, meaning in view.categories.items())
    note = (f'<p class="note">A query fails when its first relevant document is missing or below rank {fail_rank}'
            f"{view.failure_clauses('html')}; its category is the first that applies:</p>")
    unavailable = "".join(f'<p class="note">{_e(line)}</p>' for line in view.unavailable)
    parts = [note, unavailable, f"<dl>{legend}</dl>", count_table]
    if int(counts.to_numpy().sum()):
        parts.append(_figure(plots.categories_svg(counts), "Failed queries per system, by category."))
    parts.append(_details(summary, table, open_=view.n_queries <= OPEN_QUERIES))
    return _section("first-relevant", "\n".join(parts))


def _parameters(parameters: object) -> str:
    """A system's parameters as JSON, cut at :data:`PARAMETER_CHARS` (a fixed run's rankings are
    parameters too, and would fill the page)."""
    text = json.dumps(parameters, sort_keys=True)
    if len(text) <= PARAMETER_CHARS:
        return text
    return f"{text[:PARAMETER_CHARS]}… ({len(text):,} characters in all: see manifest.json)"


def _provenance(view: ReportView) -> str:
    m = view.manifest
    stats = view.statistics
    run = _definition_list([
        *run_facts(m),
        ("re-score", f"<code>{_e(m.get('rescore', {}).get('command', ''))}</code> "
                     f"<span class=\"note\">({_e(m.get('rescore', {}).get('note', ''))})</span>"),
    ])
    hashes = html_hashes(m)
    metrics = html_metric_definitions(m.get("metrics", []))
    conventions = _definition_list((k, _e(v)) for k, v in m.get("conventions", {}).items())
    test = stats.get("randomisation_test", {})
    statistics = _definition_list([
        ("bootstrap", _e(f"{stats.get('bootstrap_samples')} resamples, seed {stats.get('seed')}, "
                         f"{stats.get('interval')}, confidence {stats.get('confidence')}")),
        ("test", _e(f"paired sign-flip randomisation: exact up to {test.get('exact_up_to')} differing queries "
                    f"({test.get('exact')}), else Monte Carlo with {test.get('permutations')} flips; "
                    f"comparisons by test: {test.get('comparisons_by_test')}")),
        ("correction", _e(f"{correction_words(stats.get('holm_family'))} (--family {stats.get('holm_family')}); "
                          f"alpha {stats.get('alpha')}")),
        ("pairs", _e(f"{stats.get('pairs')}" + (f" (baseline {stats['baseline']})" if stats.get("baseline") else ""))),
    ])
    systems = _table(["system", "class", "parameters", "run file", "fit s", "search s"], [
        "<tr>" + "".join([_cell(s["label"]), _cell(s.get("class", "")),
                          _cell(f"<code>{_e(_parameters(s.get('parameters', {})))}</code>", raw=True),
                          _cell(s.get("run_file", "")), _cell(f"{s.get('fit_seconds', 0):.3f}", numeric=True),
                          _cell(f"{s.get('search_seconds', 0):.3f}", numeric=True)]) + "</tr>"
        for s in m.get("systems", [])], numeric_from=4, id="systems")
    remarks = html_remarks(m)
    body = (f"{run}<h3>Hashes</h3>{hashes}<h3>Metrics</h3>{metrics}<h3>Conventions</h3>{conventions}"
            f"<h3>Statistics</h3>{statistics}<h3>Systems</h3>{systems}{remarks}")
    return _section("provenance", body)


def render_html(view: ReportView) -> str:
    """The whole HTML page (see the module docstring for its sections)."""
    plots.require_matplotlib("the HTML report's charts")
    corpus = view.corpus
    title = f"retbench report: {corpus.get('name')}"
    lead = (f"<p>{counted(len(view.systems), 'system')} ({_e(', '.join(view.systems))}) on "
            f"{counted(view.n_queries, 'query')} and "
            f"{counted(corpus.get('documents'), 'document')}; metrics {_e(', '.join(view.metrics))}; run "
            f"<code>{_e(view.manifest.get('run_id', ''))}</code>.</p>")
    warnings = view.manifest.get("warnings", [])
    if warnings:
        lead += "<ul>" + "".join(f'<li class="down">warning: {_e(w)}</li>' for w in warnings) + "</ul>"
    own = {"means": _means, "comparisons": _comparisons, "differences": _differences,
           "first-relevant": _first_relevant, "provenance": _provenance}
    # (order, own sections first at equal order, key, heading, section): the page's and the readings', merged
    parts = [(PLACES[key], 0, key, heading, lambda key=key: own[key](view)) for key, heading in SECTIONS.items()]
    parts += [(reading.order, 1, reading.html_id, reading.heading,
               lambda reading=reading, frame=frame: _reading_section(reading, frame, view))
              for reading, frame in view.registered("html")]
    parts.sort(key=lambda part: part[:2])  # stable: readings of one order keep the registry's
    nav = "".join(f'<a href="#{key}">{_e(heading)}</a>' for _, _, key, heading, _ in parts)
    body = "\n".join(section() for *_, section in parts)
    version = view.manifest.get("versions", {}).get("retbench", "")
    return html_page(title=title, lead=lead, nav=nav, body=body, version=str(version))
