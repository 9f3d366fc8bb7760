"""The HTML report of a results folder: it parses, refers to nothing outside itself, holds every
section, shows the numbers of summary.csv and comparisons.csv (read back from its DOM), is the same
bytes every time, and draws its charts (headless Chromium renders it to a PNG).

Needs the ``report`` extra (matplotlib); the render needs Debian's ``chromium`` (``.ci/run``
installs it) and skips with a reason without it; the Cranfield case needs ``../shared/data``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib", reason="the HTML report needs the report extra (pip install 'retbench[report]')")

from harness import compare  # noqa: E402
from harness.cli import main  # noqa: E402
from harness.report.html import OPEN_QUERIES, SECTIONS  # noqa: E402
from harness.core.statistics import bootstrap_indices, percentile_interval  # noqa: E402
from harness.core.options import Loading, Statistics

ARTICLE_METRICS = ["hit@3", "recall@5", "mrr", "ndcg@5"]
CRANFIELD_METRICS = ["ndcg@10", "map", "recall@100", "mrr"]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
FETCHING = {"script", "link", "img", "iframe", "object", "embed", "audio", "video", "source", "base"}


class Page(HTMLParser):
    """Parses a page, checking that every element is closed in order, and keeps what the tests
    read: every tag and attribute, the ids, and the text of each cell with ``data-*`` attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: set[str] = set()
        self.ids: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []  # (tag, name, value)
        self.cells: list[tuple[dict[str, str], str]] = []
        self.texts: dict[str, str] = {}  # id -> the element's text
        self._open_cells: list[tuple[dict[str, str], list[str]]] = []
        self._open_ids: list[tuple[str, int, list[str]]] = []

    def _start(self, tag: str, attrs: list[tuple[str, str | None]]) -> dict[str, str]:
        attributes = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        self.attributes.extend((tag, k, v) for k, v in attributes.items())
        if "id" in attributes:
            self.ids.append(attributes["id"])
        return attributes

    def handle_starttag(self, tag, attrs):
        attributes = self._start(tag, attrs)
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag in ("td", "th") and any(k.startswith("data-") for k in attributes):
            self._open_cells.append((attributes, []))
        if tag in ("h1", "h2", "summary") or (tag == "section" and "id" in attributes):
            self._open_ids.append((attributes.get("id", tag), len(self.stack), []))

    def handle_startendtag(self, tag, attrs):
        self._start(tag, attrs)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        if tag in ("td", "th") and self._open_cells and len(self.stack) == self._depth_of_cell():
            attributes, text = self._open_cells.pop()
            self.cells.append((attributes, " ".join("".join(text).split())))
        if self._open_ids and self._open_ids[-1][1] == len(self.stack):
            key, _, text = self._open_ids.pop()
            self.texts.setdefault(key, " ".join("".join(text).split()))
        self.stack.pop()

    def _depth_of_cell(self) -> int:
        return max(i + 1 for i, t in enumerate(self.stack) if t in ("td", "th"))

    def handle_data(self, data):
        for _, text in self._open_cells:
            text.append(data)
        for _, _, text in self._open_ids:
            text.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    assert page.stack == [], f"unclosed: {page.stack}"
    return page


def assert_offline(text: str, page: Page) -> None:
    """Nothing in the page makes a browser fetch: no URL scheme, no protocol-relative or remote
    src/href, no @import, no url() but to an element of the page, no tag that loads a resource."""
    assert not re.search(r"(?i)\b(?:https?|ftp|wss?):", text)
    for tag, name, value in page.attributes:
        if name in ("src", "href", "xlink:href", "action", "poster", "srcset"):
            assert value.startswith("#"), (tag, name, value)
    assert "@import" not in text.lower()
    assert all(m.group(1) == "#" for m in re.finditer(r"url\(\s*['\"]?(.)", text)), "url() to something outside"
    assert not (page.tags & FETCHING), page.tags & FETCHING


def cell_values(page: Page, **wanted: str) -> dict[tuple[str, ...], str]:
    """The text of the cells whose data attributes include ``wanted``, keyed by their other data attributes."""
    found = {}
    for attributes, text in page.cells:
        data = {k[5:]: v for k, v in attributes.items() if k.startswith("data-")}
        if all(data.get(k.replace("_", "-")) == v for k, v in wanted.items()):
            found[tuple(sorted(data.items()))] = text
    return found


def check_numbers(page: Page, folder: Path) -> None:
    """The page shows summary.csv's means, comparisons.csv's numbers and verdicts, and
    risk_coverage_summary.csv's AURCs, as the text report writes them."""
    summary = pd.read_csv(folder / "summary.csv", dtype={"system": str})
    metrics = [c for c in summary.columns if c != "system"]
    means = {(a["data-system"], a["data-metric"]): text for a, text in page.cells
             if "data-metric" in a and a.get("class", "").startswith("num") and "data-field" not in a
             and "data-facet" not in a and text[:1].isdigit() and "[" in text}
    assert len(means) == len(summary) * len(metrics)
    for row in summary.to_dict("records"):
        for metric in metrics:
            assert means[(row["system"], metric)].startswith(f"{row[metric]:.3f}")
    board = pd.read_csv(folder / "leaderboard.csv", dtype={"system": str})
    shown = {(a["data-system"], a["data-metric"]): t for a, t in page.cells if "data-metric" in a and "[" not in t
             and "data-field" not in a and "data-facet" not in a}
    groups = {(a["data-system"], a["data-metric"]): t for a, t in page.cells if a.get("data-field") == "group"}
    for row in board.itertuples(index=False):
        assert shown[(row.system, row.metric)] == f"{row.mean:.3f}"
        assert groups[(row.system, row.metric)] == str(row.group)  # the letters of leaderboard.csv
    alpha = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["statistics"]["alpha"]
    comparisons = pd.read_csv(folder / "comparisons.csv", dtype={"system_a": str, "system_b": str},
                              keep_default_na=False)
    fields = {}
    for attributes, text in page.cells:
        if "data-system-a" in attributes:
            fields[(attributes["data-system-a"], attributes["data-system-b"], attributes["data-metric"],
                    attributes["data-field"])] = text
    assert len({k[:3] for k in fields}) == len(comparisons)
    for c in comparisons.itertuples(index=False):
        key = (c.system_a, c.system_b, c.metric)
        assert fields[(*key, "mean_diff")] == f"{c.mean_diff:+.3f}"
        assert fields[(*key, "interval")] == f"[{c.ci_low:+.3f}, {c.ci_high:+.3f}]"
        # 3 decimals, '< 0.001' below (Cranfield's Monte Carlo p of 1/10001), more digits near alpha
        for field, p in (("p_value", c.p_value), ("p_adjusted", c.p_adjusted)):
            shown = fields[(*key, field)]
            assert shown == "< 0.001" if p < 0.001 else (float(shown) == pytest.approx(p, abs=5e-4)
                                                        and (float(shown) <= alpha) == (p <= alpha))
        assert fields[(*key, "effect_size")] == f"{float(c.effect_size):+.2f}"
        assert fields[(*key, "detectable_difference")] == f"{float(c.detectable_difference):.3f}"
        assert fields[(*key, "queries_needed")] == (str(c.queries_needed) if c.queries_needed != "" else "--")
        assert fields[(*key, "verdict")] == c.verdict
    risk = pd.read_csv(folder / "risk_coverage_summary.csv", dtype={"system": str})
    aurc = {a["data-system"]: t for a, t in page.cells if a.get("data-field") == "aurc"}
    assert aurc == {r.system: f"{r.aurc:.3f}" for r in risk.itertuples(index=False)}


def check_page(text: str, folder: Path) -> Page:
    page = parse(text)
    assert_offline(text, page)
    assert len(page.ids) == len(set(page.ids)), "an id is used twice"
    for key, heading in SECTIONS.items():
        assert page.texts[key].startswith(heading), key
    check_numbers(page, folder)
    return page


@pytest.fixture(scope="module")
def article_folder(tmp_path_factory) -> Path:
    result = compare(["bm25", "lsa", "weighted", "rrf"], "article", ARTICLE_METRICS)
    return result.write(tmp_path_factory.mktemp("article"), command_line=["bench", "compare"], reports=["html"])


def test_the_article_html_is_offline_whole_and_shows_the_stored_numbers(article_folder) -> None:
    text = (article_folder / "report.html").read_text(encoding="utf-8")
    page = check_page(text, article_folder)
    # means, the 16 comparisons whose systems differ somewhere (8 are identical), failure categories, risk-coverage, cost
    assert text.count("<svg") == 1 + 16 + 1 + 1 + 1  # ... and the cost chart (each metric against latency and size)
    assert text.count("identical on every query, every difference 0 (no chart)") == 8
    # a mean's interval is the percentile bootstrap of its per-query values, on the run's resamples
    values = pd.read_csv(article_folder / "per_query.csv", dtype={"query_id": str})
    ndcg = values.loc[values.system == "lsa", "ndcg@5"].to_numpy()
    means = np.sort(np.concatenate([ndcg[rows].mean(axis=1) for rows in bootstrap_indices(len(ndcg), 5000, 0)]))
    low, high = percentile_interval(means[:, None], 0.95)
    (cell,) = [t for a, t in page.cells if a.get("data-system") == "lsa" and a.get("data-metric") == "ndcg@5"
               and "[" in t]
    assert cell == f"0.679 [{low[0]:.3f}, {high[0]:.3f}]"


def test_the_html_is_a_pure_function_of_the_folder(runner, article_folder, tmp_path) -> None:
    again = runner.invoke(main, ["report", str(article_folder), "-o", str(tmp_path / "again.html")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again.html").read_bytes() == (article_folder / "report.html").read_bytes()


def test_cranfield_html_is_offline_whole_and_shows_the_stored_numbers(shared_data, tmp_path) -> None:
    result = compare(["bm25", "lsa", "weighted", "rrf"], shared_data / "cranfield", CRANFIELD_METRICS)
    folder = result.write(tmp_path, command_line=["bench", "compare"], reports=["html"])
    text = (folder / "report.html").read_text(encoding="utf-8")
    check_page(text, folder)
    assert 225 > OPEN_QUERIES
    assert "<details><summary>225 queries" in text  # the first-relevant table folds
    assert len(text.encode()) < 2_000_000


def saturated_share(png: Path) -> float:
    """The share of pixels in a clear colour (a chart's lines, bars and bands; text is grey or black)."""
    import matplotlib.image

    image = matplotlib.image.imread(str(png))[..., :3]
    spread = image.max(axis=2) - image.min(axis=2)
    return float((spread > 0.25).mean())


def test_the_facet_tables_show_facets_csv(tmp_path) -> None:
    topics = tmp_path / "topics.csv"
    topics.write_text("query_id,topic\n" + "".join(f"q{i:02d},{'billing' if i % 3 else 'data'}\n" for i in range(1, 15)))
    result = compare(["bm25", "rrf"], "article", ["ndcg@5", "mrr"], loading=Loading(facets_file=topics),
                     statistics=Statistics(bootstrap_samples=500))
    folder = result.write(tmp_path / "out", command_line=["bench", "compare"], reports=["html"])
    text = (folder / "report.html").read_text(encoding="utf-8")
    page = check_page(text, folder)
    facets = pd.read_csv(folder / "facets.csv", dtype=str, keep_default_na=False)
    shown = {(a["data-system"], a["data-value"], a["data-metric"]): t for a, t in page.cells if "data-facet" in a}
    assert len(shown) == len(facets) * 2
    for row in facets.to_dict("records"):
        for metric in ("ndcg@5", "mrr"):
            bounds = (f" [{float(row[metric + '_ci_low']):.3f}, {float(row[metric + '_ci_high']):.3f}]"
                      if row[metric + "_ci_low"] else "")
            assert shown[(row["system"], row["value"], metric)] == f"{float(row[metric]):.3f}{bounds}"
    assert "facet topic: mean per value" in text  # the bars


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is absent (Debian's chromium package; "
                                                             ".ci/run installs it)")
def test_chromium_renders_the_charts(article_folder, tmp_path) -> None:
    """Rendered, the article's page is over 9,000 pixels tall and its charts colour about 1.3% of the
    first 9,000 rows; with every <svg> removed the same page colours 0.07% (links, markers, shading)."""
    png = tmp_path / "report.png"
    done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                           "--no-first-run", "--disable-background-networking", "--disable-component-update",
                           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
                           "--window-size=1280,9000", (article_folder / "report.html").as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]
    assert saturated_share(png) > 0.005


#: Run in the page after it loads: open every folded section, then report the page's widths and each
#: table cell whose right edge passes the viewport or the box its table scrolls in (a cell cut off).
_MEASURE = """<script>
for (const details of document.querySelectorAll("details")) details.open = true;
const width = window.innerWidth;
const cut = [];
for (const cell of document.querySelectorAll("td, th")) {
  const right = cell.getBoundingClientRect().right;
  const box = cell.closest("table").parentElement.getBoundingClientRect().right;
  if (right > Math.min(width, box) + 0.5) {
    cut.push([cell.closest("section").id, cell.textContent.slice(0, 60), Math.round(right)]);
  }
}
const out = document.createElement("pre");
out.id = "retbench-measured";
out.textContent = JSON.stringify({width: width, scroll_width: document.documentElement.scrollWidth, cut: cut});
document.body.appendChild(out);
</script>"""


def measured_in_chromium(page: Path, tmp_path: Path, width: int) -> dict:
    """:data:`_MEASURE`'s findings on ``page`` (a copy with the script added) laid out ``width`` pixels wide."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                           "--no-first-run", "--disable-background-networking", "--disable-component-update",
                           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},900",
                           "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="retbench-measured">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    from html import unescape

    return json.loads(unescape(found.group(1)))


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is absent (Debian's chromium package; "
                                                             ".ci/run installs it)")
def test_every_table_fits_a_1280_pixel_window(article_folder, tmp_path) -> None:
    """The comparisons table (eleven columns, the verdict last) ran 5 pixels past its column at
    1280 pixels, so its box scrolled and cut the verdicts off at the right edge."""
    measured = measured_in_chromium(article_folder / "report.html", tmp_path, 1280)
    assert measured["width"] == 1280
    assert measured["scroll_width"] <= 1280
    assert measured["cut"] == []
