"""Reports of a suite: the text ``bench compare`` prints (and ``report.txt`` keeps), and the Markdown
and HTML ``bench report`` makes of a suite folder. Each shows the suite first: the macro leaderboard,
a systems x collections table per metric with the macro column (a heat table in HTML, each
collection's column shaded from its lowest to its highest mean), the macro comparisons with their
verdicts, and each pair's tally over the collections. Per-collection detail follows only where
asked (text ``detail``); each collection's own reports are those of its results folder.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from corpora import RetbenchError
from corpora.wording import counted
from harness.core.statistics import format_p
from harness.suite.statistics import MACRO, MICRO, tally_sentence

__all__ = ["SUITE_FORMATS", "SuiteView", "check_suite_formats", "render_suite_report", "render_text"]


@dataclass(frozen=True)
class SuiteView:
    """What every suite report reads, from a :class:`~harness.suite.run.SuiteResult` or a suite folder."""

    collections: list[tuple[str, int]]  # (name, queries evaluated)
    systems: list[str]
    metrics: list[str]
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    leaderboard: pd.DataFrame
    alpha: float
    bootstrap_samples: int
    title: str = "suite"


def view_of_result(result) -> SuiteView:  # noqa: ANN001 (a SuiteResult; not imported: the run imports this)
    return SuiteView([(c.name, c.queries_evaluated) for c in result.collections], result.systems, result.metrics,
                     result.summary, result.comparisons, result.leaderboard, 1.0 - result.options["confidence"],
                     result.options["bootstrap_samples"])


def view_of_folder(suite) -> SuiteView:  # noqa: ANN001 (a SuiteFolder)
    statistics = suite.manifest["statistics"]
    return SuiteView([(c["name"], int(c["queries_evaluated"])) for c in suite.collections], suite.systems,
                     suite.metrics, suite.summary(), suite.comparisons(), suite.leaderboard(),
                     float(statistics["alpha"]), int(statistics["bootstrap_samples"]), title=suite.manifest["run_id"])


def _heat(view: SuiteView, metric: str) -> pd.DataFrame:
    """systems x (collections..., macro) of ``metric``."""
    rows = view.summary[view.summary["collection"] != MICRO]
    table = rows.pivot(index="system", columns="collection", values=metric)
    return table.loc[view.systems, [name for name, _ in view.collections] + [MACRO]]


def _aligned(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    return ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() for line in [header, *rows]]


def _comparison_cells(view: SuiteView, row: pd.Series) -> list[str]:
    return [f"{row.system_a} - {row.system_b}", f"{row.mean_diff:+.4f}", f"[{row.ci_low:+.4f}, {row.ci_high:+.4f}]",
            format_p(float(row.p_adjusted), view.alpha), f"{row.wins}/{row.ties}/{row.losses}", str(row.verdict)]


#: Up to this many collections, a metric's table has one column per collection; beyond, one row each.
_WIDE = 6

_COMPARISON_HEADER = ["pair (a - b)", "macro diff", "interval", "Holm p", "W/T/L", "verdict"]


def render_text(result, *, detail: bool = False) -> str:  # noqa: ANN001 (a SuiteResult)
    """The suite's text report (see the module docstring); ``detail`` adds each collection's
    comparisons."""
    view = view_of_result(result)
    total = sum(n for _, n in view.collections)
    lines = [f"suite of {counted(len(view.collections), 'collection')}, {counted(total, 'query')}: "
             + ", ".join(f"{name} ({n})" for name, n in view.collections),
             "macro = mean of the collections' means (each collection weighs the same); intervals from a bootstrap "
             f"stratified by collection ({view.bootstrap_samples} resamples)", ""]
    for metric in view.metrics:
        board = view.leaderboard[view.leaderboard["metric"] == metric]
        lines.append(f"leaderboard, {metric} (macro)")
        lines += _aligned(["group", "system", "macro", "mean rank", "rank interval"],
                          [[r.group, r.system, f"{r.mean:.4f}", f"{r.mean_rank:.2f}",
                            f"[{r.rank_ci_low:g}, {r.rank_ci_high:g}]"] for r in board.itertuples()])
        lines.append("")
        heat = _heat(view, metric)
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
            lines += _aligned(_COMPARISON_HEADER, [_comparison_cells(view, r) for r in compared.itertuples()])
            lines += [f"  {tally_sentence(r._asdict())}" for r in compared.itertuples()]
            lines.append("")
    if detail:
        for collection in result.collections:
            lines.append(f"collection {collection.name}: comparisons "
                         f"({counted(collection.queries_evaluated, 'query')}; its "
                         f"folder's report.txt holds the whole report)")
            lines += _aligned(["pair (a - b)", "metric", "diff", "interval", "Holm p", "verdict"],
                              [[f"{c.system_a} - {c.system_b}", c.metric, f"{c.mean_diff:+.4f}",
                                f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]", format_p(c.p_adjusted, c.alpha), c.verdict]
                               for c in collection.comparisons])
            lines.append("")
    return "\n".join(lines).rstrip("\n")


def render_markdown(view: SuiteView) -> str:
    total = sum(n for _, n in view.collections)
    out = [f"# Suite {view.title}", "",
           f"{counted(len(view.collections), 'collection')}, {counted(total, 'query')}. Macro = the mean of the "
           "collections' means (each "
           "collection weighs the same); intervals from a paired bootstrap stratified by collection, p from a "
           "stratified sign-flip test, Holm-adjusted.", ""]
    for metric in view.metrics:
        heat = _heat(view, metric)
        out += [f"## {metric}", "", "| system | " + " | ".join(heat.columns) + " |",
                "|---|" + "---:|" * len(heat.columns)]
        best = heat.max(axis=0)
        for system in heat.index:
            cells = [f"**{v:.4f}**" if round(v, 12) == round(best[c], 12) else f"{v:.4f}"
                     for c, v in heat.loc[system].items()]
            out.append(f"| {system} | " + " | ".join(cells) + " |")
        board = view.leaderboard[view.leaderboard["metric"] == metric]
        out += ["", "| group | system | macro | mean rank | rank interval |", "|---|---|---:|---:|---|"]
        out += [f"| {r.group} | {r.system} | {r.mean:.4f} | {r.mean_rank:.2f} | [{r.rank_ci_low:g}, "
                f"{r.rank_ci_high:g}] |" for r in board.itertuples()]
        compared = view.comparisons[view.comparisons["metric"] == metric]
        if len(compared):
            out += ["", "| " + " | ".join(_COMPARISON_HEADER) + " |", "|---|---:|---|---:|---|---|"]
            out += ["| " + " | ".join(c.replace("|", "\\|") for c in _comparison_cells(view, r)) + " |"
                    for r in compared.itertuples()]
        out.append("")
    return "\n".join(out)


def _shade(value: float, low: float, high: float) -> str:
    share = 0.5 if high <= low else (value - low) / (high - low)
    return f"background:hsl(210,70%,{95 - 40 * share:.0f}%)"


def render_html(view: SuiteView) -> str:
    e = html.escape
    total = sum(n for _, n in view.collections)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Suite {e(view.title)}</title>"
             "<style>body{font-family:sans-serif;max-width:1280px;margin:auto}table{border-collapse:collapse;"
             "margin:1em 0}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}"
             "td:first-child,th:first-child{text-align:left}</style></head><body>",
             f"<h1>Suite {e(view.title)}</h1><p>{counted(len(view.collections), 'collection')}, "
             f"{counted(total, 'query')}. "
             "Macro = the mean "
             "of the collections' means (each collection weighs the same); intervals from a paired bootstrap "
             "stratified by collection, p from a stratified sign-flip test, Holm-adjusted. Each column of the heat "
             "table is shaded from its lowest to its highest mean.</p>"]
    for metric in view.metrics:
        heat = _heat(view, metric)
        parts.append(f"<h2>{e(metric)}</h2><table class='heat'><tr><th>system</th>"
                     + "".join(f"<th>{e(str(c))}</th>" for c in heat.columns) + "</tr>")
        for system in heat.index:
            cells = "".join(f"<td style='{_shade(v, heat[c].min(), heat[c].max())}'>{v:.4f}</td>"
                            for c, v in heat.loc[system].items())
            parts.append(f"<tr><td>{e(system)}</td>{cells}</tr>")
        parts.append("</table>")
        board = view.leaderboard[view.leaderboard["metric"] == metric]
        parts.append("<table class='leaderboard'><tr><th>group</th><th>system</th><th>macro</th><th>mean rank</th>"
                     "<th>rank interval</th></tr>" + "".join(
                         f"<tr><td>{e(r.group)}</td><td>{e(r.system)}</td><td>{r.mean:.4f}</td><td>{r.mean_rank:.2f}"
                         f"</td><td>[{r.rank_ci_low:g}, {r.rank_ci_high:g}]</td></tr>" for r in board.itertuples())
                     + "</table>")
        compared = view.comparisons[view.comparisons["metric"] == metric]
        if len(compared):
            parts.append("<table class='comparisons'><tr>" + "".join(f"<th>{e(h)}</th>" for h in _COMPARISON_HEADER)
                         + "</tr>" + "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in _comparison_cells(view, r))
                                             + "</tr>" for r in compared.itertuples()) + "</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


#: Format name -> (file, renderer) of the reports a suite folder has.
SUITE_FORMATS = {"html": ("report.html", render_html), "md": ("report.md", render_markdown)}


def check_suite_formats(formats: Sequence[str]) -> None:
    for name in formats:
        if name not in SUITE_FORMATS:
            raise RetbenchError(f"the {name} report is not available for a suite. Fix: use "
                                f"{' or '.join(SUITE_FORMATS)}")


def render_suite_report(suite, format: str) -> tuple[str, str]:  # noqa: ANN001 (a SuiteFolder)
    """(file name, text) of the suite folder's report in ``format``."""
    check_suite_formats([format])
    file, render = SUITE_FORMATS[format]
    return file, render(view_of_folder(suite))
