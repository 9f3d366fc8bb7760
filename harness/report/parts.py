"""The pieces every report page is built from, shared by the reports of a comparison
(:mod:`harness.report.html`, :mod:`harness.report.markdown`) and of a parameter search
(:mod:`harness.tuning.report`), so a table, an escape or the page frame is written once.

HTML: :func:`html_escape` (text and attribute values), :func:`html_cell` and :func:`html_table`
(cells carry ``data-*`` attributes naming what they show, for a test or a script to read back),
:func:`html_figure` (an inline SVG chart of :mod:`harness.report.plots` with its caption),
:func:`html_details`, :func:`html_section`, :func:`html_definitions`, and :func:`html_page`, the
self-contained page (its style sheet inline, nothing fetched). The provenance every results folder
shares: :func:`run_facts` (run id, time, command line, corpus, analyzer, depth, versions),
:func:`html_hashes`, :func:`html_metric_definitions` and :func:`html_remarks`.

Markdown: :func:`md_text` (Markdown's punctuation escaped), :func:`md_row` and :func:`md_details`.

Text: :func:`text_table` (columns padded to their widest cell).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from html import escape
from string import Template
from typing import Any

from corpora.wording import counted
from harness.report import plots

__all__ = ["PAGE_STYLE", "html_attributes", "html_cell", "html_definitions", "html_details", "html_escape",
           "html_figure", "html_hashes", "html_metric_definitions", "html_page", "html_remarks", "html_section",
           "html_table", "md_details", "md_row", "md_text", "run_facts", "text_table"]

#: The style sheet of every HTML report, inline in its ``<style>`` element.
PAGE_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       margin: 0 auto; max-width: 1240px; padding: 1rem 1.5rem 3rem; color: #1b1b1b; line-height: 1.4; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
h3 { font-size: 1.05rem; margin-top: 1.4rem; }
nav a { margin-right: 0.9rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.88rem; }
.wide { overflow-x: auto; max-width: 100%; }
th, td { padding: 0.2rem 0.55rem; border-bottom: 1px solid #e6e6e6; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.group-odd td { background: #fafafa; }
tr.significant td { background: #eef6ee; }
td.best { font-weight: bold; }
.up { color: #1a7f37; } .down { color: #cf222e; }
td.failed { background: #fff4e5; }
.category { color: #8a4b00; font-size: 0.8rem; }
.note, figcaption { color: #555; font-size: 0.85rem; }
figure { margin: 0.8rem 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(480px, 1fr)); gap: 0.4rem 1rem; }
.charts figure { margin: 0.3rem 0; }
table.comparisons th { white-space: normal; }
table.comparisons td:last-child { min-width: 12rem; }
svg { max-width: 100%; height: auto; }
svg * { stroke-linejoin: round; stroke-linecap: butt; }
details { margin: 0.4rem 0; }
summary { cursor: pointer; font-weight: 600; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.82rem; }
pre { background: #f6f8fa; padding: 0.6rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1rem; font-size: 0.88rem; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
"""

_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="retbench $version">
<title>$title</title>
<style>$style</style>
</head>
<body>
<header>
<h1>$title</h1>
$lead
<nav>$nav</nav>
</header>
<main>
$body
</main>
</body>
</html>
""")


# ----- HTML ---------------------------------------------------------------------------------------


def html_escape(value: object) -> str:
    """``value`` as text for an element or an attribute value (quotes escaped too)."""
    return escape(str(value), quote=True)


def html_attributes(attributes: dict[str, object]) -> str:
    return "".join(f' {name}="{html_escape(value)}"' for name, value in attributes.items())


def html_cell(text: str, *, header: bool = False, numeric: bool = False, classes: Sequence[str] = (),
              raw: bool = False, **data: object) -> str:
    """One table cell; ``data`` become ``data-*`` attributes (underscores as dashes); ``raw``: the
    text is HTML already."""
    tag = "th" if header else "td"
    names = [*(["num"] if numeric else []), *classes]
    attributes = {"class": " ".join(names)} if names else {}
    attributes.update({f"data-{k.replace('_', '-')}": v for k, v in data.items()})
    return f"<{tag}{html_attributes(attributes)}>{text if raw else html_escape(text)}</{tag}>"


def html_table(header: Sequence[str], rows: Iterable[str], *, numeric_from: int = 1, text: Sequence[int] = (),
               **attributes: object) -> str:
    """A table: ``header`` cells (numeric from column ``numeric_from`` on, except the columns
    ``text``), and rows already made (each ``<tr>...</tr>``)."""
    heads = "".join(html_cell(h, header=True, numeric=i >= numeric_from and i not in text)
                    for i, h in enumerate(header))
    names = {k.rstrip("_").replace("_", "-"): v for k, v in attributes.items()}  # class_ -> class
    return (f'<div class="wide"><table{html_attributes(names)}><thead><tr>{heads}</tr></thead><tbody>\n'
            + "\n".join(rows) + "\n</tbody></table></div>")


def html_figure(svg: str, caption: str = "") -> str:
    """A chart (a standalone SVG document of :mod:`harness.report.plots`) placed in the page, with its caption."""
    figcaption = f"<figcaption>{html_escape(caption)}</figcaption>" if caption else ""
    return f"<figure>{plots.inline_svg(svg)}{figcaption}</figure>"


def html_details(summary: str, body: str, *, open_: bool) -> str:
    return f"<details{' open' if open_ else ''}><summary>{html_escape(summary)}</summary>\n{body}\n</details>"


def html_section(key: str, heading: str, body: str) -> str:
    """A section of the page: its id ``key`` (the navigation links to it) and its ``<h2>``."""
    return f'<section id="{key}">\n<h2>{html_escape(heading)}</h2>\n{body}\n</section>'


def html_definitions(items: Iterable[tuple[str, str]]) -> str:
    """A definition list: each term escaped, each definition HTML already."""
    return "<dl>" + "".join(f"<dt>{html_escape(k)}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"


def html_page(*, title: str, lead: str, nav: str, body: str, version: str) -> str:
    """The whole page: ``title`` (text), ``lead``, ``nav`` and ``body`` (HTML), the generator's version."""
    return _PAGE.substitute(title=html_escape(title), lead=lead, nav=nav, body=body, style=PAGE_STYLE,
                            version=html_escape(version))


def run_facts(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """The provenance lines of any results folder, as (term, HTML): run id, time, command line,
    corpus, analyzer, depth and versions."""
    m = manifest
    corpus = m.get("corpus", {})
    excluded = corpus.get("queries_excluded", [])
    return [
        ("run id", html_escape(m.get("run_id", ""))), ("time", html_escape(m.get("time", ""))),
        ("command line", f"<code>{html_escape(shlex.join(str(w) for w in m.get('command_line', [])))}</code>"),
        ("corpus", html_escape(f"{corpus.get('name')}: {counted(corpus.get('documents'), 'document')}, "
                               f"{counted(corpus.get('queries'), 'query')} ({corpus.get('queries_evaluated')} "
                               f"evaluated, {len(excluded)} excluded), {counted(corpus.get('judgments'), 'judgment')}; "
                               f"from {corpus.get('source')}")),
        # a search run without --analyzer records none: each retriever used its own default
        ("analyzer", html_escape(m.get("analyzer") or "each retriever's default")),
        ("depth", html_escape(m.get("depth", ""))),
        ("versions", html_escape(", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()))),
    ]


def html_hashes(manifest: dict[str, Any]) -> str:
    """The table of the manifest's SHA-256 hashes, each with what it covers where the manifest says."""
    definitions = manifest.get("hash_definitions", {})
    return html_table(["hash", "SHA-256", "of"], [
        "<tr>" + html_cell(k) + html_cell(f"<code>{html_escape(v)}</code>", raw=True)
        + html_cell(definitions.get(k, "")) + "</tr>"
        for k, v in manifest.get("hashes", {}).items()], numeric_from=99, id="hashes")


def html_metric_definitions(entries: Iterable[dict[str, Any]]) -> str:
    """The table of metric definitions (the manifest's entries: name, definition, gain, cutoff,
    rel_threshold, trec_eval)."""
    return html_table(["metric", "definition", "gain", "cutoff", "relevant from grade", "trec_eval"], [
        "<tr>" + "".join(html_cell(str(v if v is not None else "--")) for v in (
            d["name"], d.get("definition"), d.get("gain"), d.get("cutoff"), d.get("rel_threshold"), d.get("trec_eval")))
        + "</tr>" for d in entries], numeric_from=99, id="metric-definitions")


def html_remarks(manifest: dict[str, Any]) -> str:
    """The manifest's warnings and notes as a list under a heading (nothing when there are none)."""
    said = [*manifest.get("warnings", []), *manifest.get("notes", [])]
    if not said:
        return ""
    return "<h3>Warnings and notes</h3><ul>" + "".join(f"<li>{html_escape(w)}</li>" for w in said) + "</ul>"


# ----- Markdown -----------------------------------------------------------------------------------

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def md_text(text: object) -> str:
    """Text for a Markdown line or table cell: Markdown's punctuation backslash-escaped (so ``|``
    cannot end a cell nor ``_`` start emphasis), and newlines as spaces."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def md_details(summary: str, body: list[str]) -> list[str]:
    """A folded block: ``summary`` (plain text) shown, the ``body`` lines inside."""
    return ["", f"<details><summary>{escape(summary)}</summary>", "", *body, "", "</details>"]


def text_table(header: Sequence[str], rows: Sequence[Sequence[object]], right: set[int] | None = None) -> list[str]:
    """A plain-text table, one line per row after the ``header``: each column as wide as its widest
    cell, the columns ``right`` (default: every column but the first) right-aligned, two spaces between."""
    right = right if right is not None else set(range(1, len(header)))
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[object]) -> str:
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(header), *(line(r) for r in rows)]
