"""The HTML report of a suite folder: one self-contained page, made with the pieces and the style
sheet of a single collection's report (:mod:`harness.report.parts`, charts by
:mod:`harness.report.plots`), so both look alike. Sections, in order (each an ``<h2>`` with an id,
linked from the top):

1. each registered reading's macro table (:class:`harness.core.readings.SuiteStep`), under its id:
   ``leaderboard``, per metric, the systems by macro mean with their group letters, mean rank and
   rank interval over the stratified resamples (:mod:`harness.readings.leaderboard`);
2. ``differences`` - a forest plot of the macro comparisons: per metric and pair, the macro mean
   difference with its interval stratified by collection, and each collection's own difference beside it;
3. ``collections-table`` - per metric, the systems x collections heat table (each collection's column
   shaded from its lowest to its highest mean) with the macro and micro columns;
4. ``comparisons`` - per metric, the macro comparisons: difference, interval, Holm p, the collections
   won, tied and lost, the verdict and the tally sentence;
5. ``collections`` - each collection with its queries, documents and source, linked to its own
   report (:mod:`harness.suite.view` says which file that is, and relative to what);
6. ``provenance`` - the suite's id, time, command line, versions and statistics settings.

Without matplotlib the page is made all the same, with the tables, and says how to get the chart.
"""

from __future__ import annotations

import shlex
from importlib.util import find_spec

from corpora.wording import counted
from harness.core.statistics import adjusted_label, correction_words, format_p
from harness.report import plots
from harness.report.parts import (html_attributes, html_cell, html_definitions, html_escape, html_figure,
                                  html_page, html_section, html_table)
from harness.suite.statistics import MACRO, tally_sentence
from harness.core.readings import suite_readings
from harness.suite.view import (ReportLinks, SuiteView, collection_differences, heat_table, macro_sections,
                                report_links)

__all__ = ["SECTIONS", "render_html"]

#: The page's own sections: id -> heading, in the order of the page, after the registered readings'
#: (:func:`harness.suite.view.macro_sections`).
SECTIONS = {
    "differences": "Macro differences",
    "collections-table": "Means per collection",
    "comparisons": "Macro comparisons",
    "collections": "Collections",
    "provenance": "Provenance",
}

_e = html_escape


def _section(key: str, body: str) -> str:
    return html_section(key, SECTIONS[key], body)


def _significant(verdict: object) -> bool:
    """Whether a stored macro comparison is significant: its verdict says "A is better" exactly when
    the Holm p is at most alpha and the interval excludes 0."""
    return str(verdict).endswith(" is better")


def _differences(view: SuiteView) -> str:
    if view.comparisons.empty:
        return _section("differences", '<p class="note">One system: nothing to compare.</p>')
    note = (f'<p class="note">Per metric and pair, the macro mean difference a − b (black) with its {view.level} '
            "interval from a paired bootstrap stratified by collection (filled: significant, Holm p &le; "
            f"{view.alpha:g} and the interval excludes 0), and each collection's own difference of means beside "
            "it (a coloured marker per collection).</p>")
    if find_spec("matplotlib") is None:
        return _section("differences", note + '<p class="note">The forest plot needs matplotlib, which is not '
                                              f"installed: {_e(plots.INSTALL_HINT)}; the tables below hold "
                                              "its numbers.</p>")
    macro = view.comparisons.assign(significant=[_significant(v) for v in view.comparisons["verdict"]])
    svg = plots.forest_svg(macro, collection_differences(view), view.metrics, level=view.level, key="forest")
    return _section("differences", note + html_figure(svg, "Macro differences and each collection's difference."))


def _shade(value: float, low: float, high: float) -> str:
    share = 0.5 if high <= low else (value - low) / (high - low)
    return f"background:hsl(210,70%,{95 - 40 * share:.0f}%)"


def _heat(view: SuiteView) -> str:
    names = [name for name, _ in view.collections]
    parts = ['<p class="note">Each system\'s mean on each collection, the macro mean (each collection weighs the '
             "same) and the micro mean (every query weighs the same). Each collection's column is shaded from its "
             "lowest to its highest mean.</p>"]
    for metric in view.metrics:
        heat = heat_table(view, metric, micro=True)
        rows = []
        for system in heat.index:
            cells = [html_cell(system)]
            for column, value in heat.loc[system].items():
                style = _shade(value, heat[column].min(), heat[column].max()) if column in names else ""
                attributes = {"class": "num" + (" best" if column == MACRO and value == heat[MACRO].max() else ""),
                              **({"style": style} if style else {}), "data-system": system, "data-metric": metric,
                              "data-collection": column}
                cells.append(f"<td{html_attributes(attributes)}>{value:.4f}</td>")
            rows.append("<tr>" + "".join(cells) + "</tr>")
        parts.append(f"<h3>{_e(metric)}</h3>" + html_table(["system", *heat.columns], rows, class_="heat",
                                                             data_metric=metric))
    return _section("collections-table", "\n".join(parts))


def _comparisons(view: SuiteView) -> str:
    if view.comparisons.empty:
        return _section("comparisons", '<p class="note">One system: nothing to compare.</p>')
    parts = [f'<p class="note">Macro mean difference a − b with its {view.level} interval (paired bootstrap '
             f"stratified by collection, {view.bootstrap_samples} resamples); p from the stratified sign-flip test, "
             f"adjusted by {_e(correction_words(view.family))}; W/T/L: the collections on which a's mean is above, "
             "level with, below b's. Shaded rows are significant.</p>"]
    header = ["pair (a − b)", "macro diff", f"{view.level} interval", adjusted_label(view.family), "W/T/L", "verdict",
              "tally"]
    for metric in view.metrics:
        rows = []
        for r in view.comparisons[view.comparisons["metric"] == metric].itertuples(index=False):
            keys = {"system_a": r.system_a, "system_b": r.system_b, "metric": metric}
            rows.append(f'<tr class="{"significant" if _significant(r.verdict) else "plain"}">' + "".join([
                html_cell(f"{r.system_a} − {r.system_b}"),
                html_cell(f"{r.mean_diff:+.4f}", numeric=True, field="mean_diff", **keys),
                html_cell(f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]", numeric=True),
                html_cell(format_p(float(r.p_adjusted), view.alpha), numeric=True, field="p_adjusted", **keys),
                html_cell(f"{r.wins}/{r.ties}/{r.losses}", numeric=True),
                html_cell(str(r.verdict), field="verdict", **keys),
                html_cell(tally_sentence(r._asdict()))]) + "</tr>")
        parts.append(f"<h3>{_e(metric)}</h3>" + html_table(header, rows, text=(5, 6), class_="comparisons",
                                                             data_metric=metric))
    return _section("comparisons", "\n".join(parts))


def _collections(view: SuiteView, links: ReportLinks) -> str:
    rows = ["<tr>" + "".join([
        html_cell(f'<a href="{_e(links(entry, "html"))}">{_e(entry.name)}</a>', raw=True, collection=entry.name),
        html_cell(str(entry.queries), numeric=True), html_cell(str(entry.documents), numeric=True),
        html_cell(entry.source), html_cell(f"<code>{_e(entry.folder)}/</code>", raw=True),
        html_cell(entry.report_file("html"))]) + "</tr>" for entry in view.entries]
    note = ('<p class="note">Each collection\'s results folder lies in the suite folder, unchanged; each name links '
            "to the report it holds: <code>report.html</code> when the suite was written with "
            "<code>--report html</code>, else <code>report.txt</code> (<code>bench report SUITE/collections/NAME "
            "-o NAME.html</code> makes its HTML report).</p>")
    table = html_table(["collection", "queries", "documents", "source", "folder", "report"], rows, numeric_from=1,
                       text=(3, 4, 5), id="collections-list")
    return _section("collections", note + table)


def _provenance(view: SuiteView) -> str:
    m = view.manifest
    stats = m.get("statistics", {})
    facts = [
        ("suite id", _e(m.get("run_id", view.title))), ("time", _e(m.get("time", ""))),
        ("command line", f"<code>{_e(shlex.join(str(w) for w in m.get('command_line', [])))}</code>"),
        ("versions", _e(", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()))),
        ("statistics", _e(f"{stats.get('bootstrap_samples')} resamples, seed {stats.get('seed')}, confidence "
                          f"{stats.get('confidence')}, {stats.get('permutations')} permutations, "
                          f"{correction_words(stats.get('holm_family'))}" + (f", baseline {stats['baseline']}" if stats.get("baseline")
                                                           else ""))),
        *((name, _e(stats[name])) for name in ("macro", "micro", "interval", "randomisation_test",
                                               *(key for reading in suite_readings()
                                                 for key in reading.suite.record),  # type: ignore[union-attr]
                                               "tally") if name in stats),
    ]
    return _section("provenance", html_definitions(facts))


def render_html(view: SuiteView, links: ReportLinks | None = None) -> str:
    """The whole HTML page of a suite folder's view (see the module docstring); ``links``: where
    each collection's report is linked (default: relative to the suite folder,
    :func:`~harness.suite.view.report_links`)."""
    total = sum(n for _, n in view.collections)
    systems = ", ".join(view.systems)
    lead = (f"<p>{counted(len(view.systems), 'system')} ({_e(systems)}) on "
            f"{counted(len(view.collections), 'collection')} ("
            + ", ".join(f'<a href="#collections">{_e(name)}</a> ({n})' for name, n in view.collections)
            + f"), {counted(total, 'query')} in all; metrics {_e(', '.join(view.metrics))}; suite "
            f"<code>{_e(view.title)}</code>. Macro = the mean of the collections' means (each collection weighs "
            "the same); micro: every query weighs the same.</p>")
    readings = macro_sections(view, "html")
    headings = {**{reading.suite.anchor: reading.suite.title for reading, _ in readings},  # type: ignore[union-attr]
                **SECTIONS}
    nav = "".join(f'<a href="#{key}">{_e(name)}</a>' for key, name in headings.items())
    body = "\n".join([*(html_section(reading.suite.anchor, reading.suite.title,  # type: ignore[union-attr]
                                      reading.suite.render["html"](table, view))  # type: ignore[union-attr]
                         for reading, table in readings),
                       _differences(view), _heat(view), _comparisons(view), _collections(view, links or report_links()),
                       _provenance(view)])
    version = view.manifest.get("versions", {}).get("retbench", "")
    return html_page(title=f"retbench suite report: {view.title}", lead=lead, nav=nav, body=body, version=str(version))
