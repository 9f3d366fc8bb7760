"""Reports of a suite: the text ``bench compare`` prints (and ``report.txt`` keeps), and the Markdown
and HTML (:mod:`harness.suite.html`) ``bench report`` makes of a suite folder, each from a
:class:`~harness.suite.view.SuiteView`. Each shows the suite first: each registered reading's macro
table (:class:`harness.core.readings.SuiteStep`: the macro leaderboard), a systems x collections table per metric with the macro column, the macro comparisons with their verdicts,
and each pair's tally over the collections. Per-collection detail follows only where asked (text
``detail``); each collection's own reports are those of its results folder, which the Markdown and
HTML reports link (:mod:`harness.suite.view` says which file, relative to what).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pandas as pd

from corpora import RetbenchError
from corpora.wording import counted
from harness.core.statistics import adjusted_label, correction_words, format_p
from harness.report.parts import md_row, md_text
from harness.suite.html import render_html
from harness.suite.statistics import MICRO, tally_sentence
from harness.suite.view import (ReportLinks, SuiteView, heat_table, macro_sections, report_links, view_of_folder,
                                view_of_result)

__all__ = ["SUITE_FORMATS", "SuiteView", "check_suite_formats", "render_markdown", "render_suite_report",
           "render_text"]


def _aligned(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    return ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() for line in [header, *rows]]


def _comparison_cells(view: SuiteView, row: pd.Series) -> list[str]:
    return [f"{row.system_a} - {row.system_b}", f"{row.mean_diff:+.4f}", f"[{row.ci_low:+.4f}, {row.ci_high:+.4f}]",
            format_p(float(row.p_adjusted), view.alpha), f"{row.wins}/{row.ties}/{row.losses}", str(row.verdict)]


#: Up to this many collections, a metric's table has one column per collection; beyond, one row each.
_WIDE = 6

def _comparison_header(view: SuiteView) -> list[str]:
    return ["pair (a - b)", "macro diff", "interval", adjusted_label(view.family), "W/T/L", "verdict"]


def render_text(result, *, detail: bool = False) -> str:  # noqa: ANN001 (a SuiteResult)
    """The suite's text report (see the module docstring); ``detail`` adds each collection's
    comparisons."""
    view = view_of_result(result)
    total = sum(n for _, n in view.collections)
    lines = [f"suite of {counted(len(view.collections), 'collection')}, {counted(total, 'query')}: "
             + ", ".join(f"{name} ({n})" for name, n in view.collections),
             "macro = mean of the collections' means (each collection weighs the same); intervals from a bootstrap "
             f"stratified by collection ({view.bootstrap_samples} resamples)", ""]
    sections = macro_sections(view, "text")
    for metric in view.metrics:
        for reading, table in sections:  # each registered reading's lines heading the metric's block
            text = reading.suite.render["text"](table, view, metric)  # type: ignore[union-attr]
            if text:
                lines += [*text.split("\n"), ""]
        heat = heat_table(view, metric)
        micro = view.summary[view.summary["collection"] == MICRO].set_index("system")[metric]
        lines.append(f"{metric} per collection")
        if len(view.collections) <= _WIDE:
            lines += _aligned(["system", *heat.columns, "micro"],
                              [[s, *(f"{v:.4f}" for v in heat.loc[s]), f"{micro[s]:.4f}"] for s in heat.index])
        else:  # many collections: one row each, so the table grows down, not across
            counts = dict(view.collections)
            lines += _aligned(["collection", "queries", *heat.index],
                              [[c, str(counts.get(c, sum(counts.values()))), *(f"{v:.4f}" for v in heat[c])]
                               for c in heat.columns] + [["micro", str(sum(counts.values())),
                                                          *(f"{micro[s]:.4f}" for s in heat.index)]])
        lines.append("")
        compared = view.comparisons[view.comparisons["metric"] == metric]
        if len(compared):
            lines.append(f"macro comparisons, {metric} (W/T/L: collections won, tied, lost by a)")
            lines += _aligned(_comparison_header(view), [_comparison_cells(view, r) for r in compared.itertuples()])
            lines += [f"  {tally_sentence(r._asdict())}" for r in compared.itertuples()]
            lines.append("")
    if detail:
        for collection in result.collections:
            lines.append(f"collection {collection.name}: comparisons "
                         f"({counted(collection.queries_evaluated, 'query')}; its "
                         f"folder's report.txt holds the whole report)")
            lines += _aligned(["pair (a - b)", "metric", "diff", "interval", adjusted_label(view.family), "verdict"],
                              [[f"{c.system_a} - {c.system_b}", c.metric, f"{c.mean_diff:+.4f}",
                                f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]", format_p(c.p_adjusted, c.alpha), c.verdict]
                               for c in collection.comparisons])
            lines.append("")
    return "\n".join(lines).rstrip("\n")


#: The Markdown report's own sections (heading -> its anchor on GitHub), in order, after the
#: registered readings' (:func:`harness.suite.view.macro_sections`).
_MD_SECTIONS = {"Means per collection": "means-per-collection", "Macro comparisons": "macro-comparisons",
                "Collections": "collections"}


def _md_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as dashes.

    >>> _md_anchor("Leaderboard (macro)")
    'leaderboard-macro'
    """
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def render_markdown(view: SuiteView, links: ReportLinks | None = None) -> str:
    """The Markdown report of a suite folder's view: the sections of the HTML page that are tables
    (no chart), each collection linked to its own report (``links`` as :func:`harness.suite.html.render_html`'s)."""
    links = links or report_links()
    total = sum(n for _, n in view.collections)
    sections = macro_sections(view, "md")
    headings = {**{reading.suite.title: _md_anchor(reading.suite.title) for reading, _ in sections},  # type: ignore[union-attr]
                **_MD_SECTIONS}
    out = [f"# Suite {md_text(view.title)}", "",
           f"{counted(len(view.collections), 'collection')}, {counted(total, 'query')}. Macro = the mean of the "
           "collections' means (each "
           "collection weighs the same); intervals from a paired bootstrap stratified by collection, p from a "
           f"stratified sign-flip test, adjusted by {md_text(correction_words(view.family))}.", "",
           " · ".join(f"[{heading}](#{anchor})" for heading, anchor in headings.items())]
    for reading, table in sections:
        out += ["", f"## {reading.suite.title}", "", reading.suite.render["md"](table, view)]  # type: ignore[union-attr]
    out += ["", "## Means per collection", "", "The best of each column in bold; micro: every query weighs the same."]
    for metric in view.metrics:
        heat = heat_table(view, metric, micro=True)
        out += ["", f"### {md_text(metric)}", "", md_row(["system", *(md_text(c) for c in heat.columns)]),
                "|---|" + "---:|" * len(heat.columns)]
        best = heat.max(axis=0)
        for system in heat.index:
            cells = [f"**{v:.4f}**" if round(v, 12) == round(best[c], 12) else f"{v:.4f}"
                     for c, v in heat.loc[system].items()]
            out.append(md_row([md_text(system), *cells]))
    if not view.comparisons.empty:
        out += ["", "## Macro comparisons", "", "W/T/L: the collections on which a's mean is above, level with, "
                "below b's."]
        for metric in view.metrics:
            compared = view.comparisons[view.comparisons["metric"] == metric]
            out += ["", f"### {md_text(metric)}", "", md_row(_comparison_header(view)), "|---|---:|---|---:|---|---|"]
            out += [md_row([md_text(c) for c in _comparison_cells(view, r)]) for r in compared.itertuples()]
            out += [""] + [f"* {md_text(tally_sentence(r._asdict()))}" for r in compared.itertuples()]
    if view.entries:
        out += ["", "## Collections", "", "Each collection's results folder lies in the suite folder, unchanged; each "
                "name links to the report it holds (`report.md` when the suite was written with `--report md`, else "
                "`report.txt`).", "", md_row(["collection", "queries", "documents", "source", "report"]),
                "|---|---:|---:|---|---|"]
        out += [md_row([f"[{md_text(e.name)}]({links(e, 'md')})", str(e.queries), str(e.documents), md_text(e.source),
                        f"`{e.folder}/{e.report_file('md')}`"]) for e in view.entries]
    out.append("")
    return "\n".join(out)


#: Format name -> (file, renderer) of the reports a suite folder has.
SUITE_FORMATS: dict[str, tuple[str, Callable[[SuiteView, ReportLinks | None], str]]] = {
    "html": ("report.html", render_html), "md": ("report.md", render_markdown)}


def check_suite_formats(formats: Sequence[str]) -> None:
    for name in formats:
        if name not in SUITE_FORMATS:
            raise RetbenchError(f"the {name} report is not available for a suite. Fix: use "
                                f"{' or '.join(SUITE_FORMATS)}")


def render_suite_report(suite, format: str, *,  # noqa: ANN001 (a SuiteFolder)
                        links: ReportLinks | None = None) -> tuple[str, str]:
    """(file name, text) of the suite folder's report in ``format``; ``links``: where each
    collection's own report is linked (default: relative to the suite folder, as the report kept in
    it reads them; :func:`harness.suite.view.report_links`)."""
    check_suite_formats([format])
    file, render = SUITE_FORMATS[format]
    return file, render(view_of_folder(suite), links)
