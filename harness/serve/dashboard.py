"""The evals dashboard: HTML rendered on the server from the API's own answers, readable without
JavaScript, with no external asset (styles inline, the chart an inline SVG).

``/`` lists the runs (newest first, 50 a page); ``/runs/{id}`` shows one: the section of each
registered reading with a dashboard part, in the served order (:mod:`harness.readings`: the
metrics card's panel, a card per system with the five means and their intervals; the
risk–coverage chart with AURC and E-AURC; the card's facet rollups), the comparisons with their verdicts, and
the per-query table of the served per-result objects with each failure's diagnosis (100 rows a
page, filtered by system). Every number comes from
:class:`~harness.serve.store.RunStore`, the answers of ``/api/v1/evals``; each card's number also
carries the stored value in ``data-value``, so a reader (or a test) can match it to the API exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from harness.core.readings import served, served_results
from harness.serve.charts import INSTALL_HINT, inline_chart
from harness.serve.store import RunStore

__all__ = ["RUNS_PER_PAGE", "ROWS_PER_PAGE", "missing_page", "run_page", "runs_page"]

RUNS_PER_PAGE = 50
ROWS_PER_PAGE = 100
_API = "/api/v1/evals"
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:72rem;padding:0 1rem;
color:#1d1d1f;background:#fff;line-height:1.4}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.1rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ddd}
a{color:#0b57d0}table{border-collapse:collapse;font-size:.85rem;margin:.4rem 0}
th,td{padding:.2rem .55rem;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#666;font-size:.85rem}
.cards{display:flex;flex-wrap:wrap;gap:.8rem}.card{border:1px solid #d0d7de;border-radius:8px;padding:.6rem .9rem;
min-width:14rem}.card h3{margin:0 0 .4rem;font-size:1rem}.card dl{display:grid;grid-template-columns:auto auto;
gap:.1rem .8rem;margin:0}.card dt{color:#444}.card dd{margin:0;text-align:right;font-variant-numeric:tabular-nums}
.ci{color:#666;font-size:.8rem}.chart svg{max-width:100%;height:auto}.nav a{margin-right:.8rem}
"""


def _number(value: Any, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, str):  # "inf" / "-inf" as stored
        return value
    if isinstance(value, int):  # a count (hitAtK of one result)
        return str(value)
    return f"{value:.{digits}f}"


def _document(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>{body}</body></html>\n")


def _pager(total: int, offset: int, size: int, base: str, extra: dict[str, str] | None = None) -> str:
    links = []
    if offset > 0:
        links.append(f'<a href="{base}?{urlencode({**(extra or {}), "offset": max(0, offset - size)})}">previous</a>')
    if offset + size < total:
        links.append(f'<a href="{base}?{urlencode({**(extra or {}), "offset": offset + size})}">next</a>')
    shown = f"{min(total, offset + 1)}–{min(total, offset + size)} of {total}"
    return f'<p class="nav muted">{shown} {" ".join(links)}</p>'


def runs_page(runs: list[dict[str, Any]], offset: int = 0) -> str:
    """The list of runs, newest first."""
    rows = "".join(
        f'<tr><td><a href="/runs/{quote(r["id"], safe="")}">{escape(r["id"])}</a></td><td>{escape(r["time"] or "")}</td>'
        f'<td>{escape(r["corpus"] or "")}</td><td class="n">{r["queries"] if r["queries"] is not None else ""}</td>'
        f'<td>{escape(", ".join(r["systems"]))}</td><td>{escape(", ".join(r["metrics"]))}</td>'
        f'<td class="n">{r["defaultRetrievalK"] if r["defaultRetrievalK"] is not None else ""}</td></tr>'
        for r in runs[offset:offset + RUNS_PER_PAGE])
    body = (f"<h1>retbench evals</h1><p class=\"muted\">Results folders written by <code>bench compare</code>, "
            f"newest first; the same data as <a href=\"{_API}/runs\">{_API}/runs</a>. "
            f"<a href=\"/suites\">suites</a> (several collections).</p>"
            + (f'<table><thead><tr><th>run</th><th>time</th><th>corpus</th><th class="n">queries</th><th>systems</th>'
               f'<th>metrics</th><th class="n">k</th></tr></thead><tbody>{rows}</tbody></table>'
               if runs else "<p>No results folder here yet: run <code>bench compare --out</code> into this folder.</p>")
            + _pager(len(runs), offset, RUNS_PER_PAGE, "/"))
    return _document("retbench evals", body)


def suites_page(suites: list[dict[str, Any]]) -> str:
    """The suites (bench compare with several --corpus), newest first; each links to its report."""
    rows = "".join(
        f'<tr><td><a href="/suites/{quote(s["id"], safe="")}">{escape(s["id"])}</a></td><td>{escape(s["time"] or "")}'
        f'</td><td>{escape(", ".join(s["collections"]))}</td><td>{escape(", ".join(s["systems"]))}</td>'
        f'<td>{escape(", ".join(s["metrics"]))}</td></tr>' for s in suites)
    body = (f"<h1>retbench suites</h1><p class=\"muted\">Suite folders (several collections), newest first; the same "
            f"data as <a href=\"{_API}/suites\">{_API}/suites</a>. <a href=\"/\">all runs</a></p>"
            + (f"<table><thead><tr><th>suite</th><th>time</th><th>collections</th><th>systems</th><th>metrics</th>"
               f"</tr></thead><tbody>{rows}</tbody></table>" if suites else "<p>No suite folder here.</p>"))
    return _document("retbench suites", body)


def missing_page(message: str) -> str:
    """A 404 page: what is missing, and the way back."""
    return _document("not found", f'<h1>Not found</h1><p>{escape(message)}</p><p><a href="/">all runs</a></p>')


def _chart(draw: Callable[[], str]) -> str:
    """A chart that ``draw`` makes (an SVG document of :mod:`harness.report.plots`) inline, or how to
    install matplotlib (:func:`harness.serve.charts.inline_chart`)."""
    chart = inline_chart(draw)
    return (f'<div class="chart">{chart}</div>' if chart is not None
            else f'<p class="muted">The chart needs matplotlib: {escape(INSTALL_HINT)}</p>')


def _readings(metrics: dict[str, Any]) -> str:
    """The section of each registered reading with a dashboard part (:mod:`harness.readings`), in the served
    order, or where its view's ``page_order`` places it."""
    pages = [(view.page_order if view.page_order is not None else view.order if view.order is not None
              else reading.order, view) for reading in served() if (view := reading.serve) is not None
             and view.page is not None]
    pages.sort(key=lambda page: page[0])  # stable: equal places keep the served order
    return "".join(view.page(metrics, _number, _chart) for _, view in pages)  # type: ignore[misc]


def _comparisons(comparisons: list[dict[str, Any]]) -> str:
    rows = "".join(
        f'<tr><td>{escape(c["systemA"])} − {escape(c["systemB"])}</td><td>{escape(c["metric"])}</td>'
        f'<td class="n">{_number(c["meanDiff"])}</td><td class="n">[{_number(c["ciLow"])}, {_number(c["ciHigh"])}]</td>'
        f'<td class="n">{_number(c["pValue"])}</td><td class="n">{_number(c["pAdjusted"])}</td>'
        f'<td>{escape(str(c["verdict"]))}</td></tr>' for c in comparisons)
    return ('<h2 id="comparisons">Comparisons</h2><table><thead><tr><th>comparison</th><th>metric</th>'
            '<th class="n">mean diff</th><th class="n">interval</th><th class="n">p</th><th class="n">Holm p</th>'
            f"<th>verdict</th></tr></thead><tbody>{rows}</tbody></table>")


def _per_query(items: list[dict[str, Any]], run_id: str, offset: int, system: str | None,
               systems: list[str]) -> str:
    shown = [i for i in items if system is None or i["system"] == system]
    base = f"/runs/{quote(run_id, safe='')}"
    filters = " ".join([f'<a href="{base}#per-query">all</a>'] + [
        f'<a href="{base}?{urlencode({"system": s})}#per-query">{escape(s)}</a>' for s in systems])
    view = served_results()
    columns = view.columns if view is not None else ()
    head = "".join(f'<th class="n">{n}</th>' for n in columns)
    rows = []
    for item in shown[offset:offset + ROWS_PER_PAGE]:
        values = view.cells(item) if view is not None else {}
        diagnosis = item["diagnosis"]
        why = "" if diagnosis is None else (f'{escape(diagnosis["category"])}'
                                             f'{" (first result " + escape(diagnosis["firstResult"]) + ")" if diagnosis["firstResult"] else ""}')
        rank = item["firstRelevantRank"]
        rows.append(f'<tr><td>{escape(item["system"])}</td><td>{escape(item["queryId"])}</td>'
                    + "".join(f'<td class="n">{_number(values[n])}</td>' for n in columns)
                    + f'<td class="n">{rank if rank is not None else "--"}</td><td>{why}</td></tr>')
    extra = {"system": system} if system is not None else {}
    return (f'<h2 id="per-query">Per query</h2><p class="nav muted">system: {filters}</p>'
            f'<table><thead><tr><th>system</th><th>query</th>{head}<th class="n">first relevant</th>'
            f'<th>diagnosis</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            + _pager(len(shown), offset, ROWS_PER_PAGE, base, extra))


def run_page(store: RunStore, run_id: str, offset: int = 0, system: str | None = None) -> str:
    """One run: the registered readings' sections (the metrics card's panel first, its facet rollups
    after risk–coverage), the comparisons and the per-query table."""
    summary = store.summary(run_id)  # the manifest's entries, checked for their shape
    metrics = store.metrics(run_id)
    systems = [s["system"] for s in metrics["systems"]]
    api = f"{_API}/runs/{quote(run_id, safe='')}"
    body = (f'<p class="nav"><a href="/">all runs</a> <a href="{api}">manifest</a> <a href="{api}/metrics">metrics</a>'
            f' <a href="{api}/results">results</a> <a href="{api}/comparisons">comparisons</a></p>'
            f"<h1>{escape(run_id)}</h1><p class=\"muted\">{escape(str(summary['corpus'] or ''))}: "
            f"{escape(str(summary['queries'] or ''))} queries evaluated; {escape(str(summary['time'] or ''))}; "
            f"systems {escape(', '.join(systems))}</p>"
            + _readings(metrics) + _comparisons(store.comparisons(run_id))
            + _per_query(store.results(run_id), run_id, offset, system, systems))
    return _document(f"{run_id} - retbench evals", body)
