"""A suite's reports are built as a single collection's: the HTML page has the same frame, style
sheet and navigation, the macro leaderboard, a forest plot of the macro differences with each
collection's difference beside it, the tables, and a link to each collection's own report; the
Markdown report has the same sections that are tables, and the same links. Headless Chromium
renders the page at 1280 pixels (skipped without Debian's chromium or matplotlib).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html import unescape
from html.parser import HTMLParser
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pytest

import harness.suite.html as suite_html
from harness import compare_suite
from harness.cli import main
from harness.core.readings import suite_readings
from harness.report.plots import INSTALL_HINT
from harness.suite.html import SECTIONS
from harness.suite.report import render_suite_report
from harness.suite.store import open_suite
from tests.test_suite import CLI_FAST, FAST, small_collection

needs_matplotlib = pytest.mark.skipif(find_spec("matplotlib") is None,
                                      reason="the HTML report's charts need the report extra (matplotlib)")
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None,
                                    reason="chromium is absent (Debian's chromium package; .ci/run installs it)")
METRICS = ["ndcg@10", "mrr"]


class Tags(HTMLParser):
    """Every start tag with its attributes and the id of the section it lies in."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str], str | None]] = []
        self.section: str | None = None

    def handle_starttag(self, tag, attrs):
        found = {k: v or "" for k, v in attrs}
        if tag == "section":
            self.section = found.get("id")
        self.tags.append((tag, found, self.section))

    def of(self, tag: str, section: str | None = None) -> list[dict[str, str]]:
        return [a for t, a, s in self.tags if t == tag and (section is None or s == section)]


def tags_of(text: str) -> Tags:
    parsed = Tags()
    parsed.feed(text)
    return parsed


@pytest.fixture(scope="module")
def suites(tmp_path_factory):
    """Two suites of the article and two small synthetic collections: one written with the reports
    (html when matplotlib is there, and md), so each collection's folder holds them too; one without."""
    root = tmp_path_factory.mktemp("suites")
    others = [str(small_collection(root / "fruit", seed=1)), str(small_collection(root / "veg", seed=3, n_queries=12))]
    reports = ["html", "md"] if find_spec("matplotlib") is not None else ["md"]
    with_reports = compare_suite("bm25,lsa,rrf", ["article", *others], METRICS, reports=reports, **FAST)
    bare = compare_suite("bm25,lsa", ["article", others[0]], METRICS, **FAST)
    return (with_reports.write(root / "with", command_line=["test"], reports=reports),
            bare.write(root / "bare", command_line=["test"]))


@needs_matplotlib
def test_the_html_page_has_the_nav_the_forest_plot_the_leaderboard_and_a_link_per_collection(suites):
    folder, _ = suites
    text = (folder / "report.html").read_text(encoding="utf-8")
    assert text == render_suite_report(open_suite(folder), "html")[1]  # a pure function of the folder
    page = tags_of(text)
    nav = re.search(r"<nav>(.*?)</nav>", text, re.S).group(1)
    # the registered readings' macro sections (the leaderboard) first, then the page's own
    sections = [*(reading.suite.anchor for reading in suite_readings()), *SECTIONS]
    assert sections[0] == "leaderboard"
    assert re.findall(r'href="#([^"]+)"', nav) == sections
    assert [a["id"] for a in page.of("section")] == sections
    assert "body { font-family" in text and "max-width: 1240px" in text  # the single report's style sheet
    # the forest plot, inline, in its section: a panel per metric, a row per pair
    assert len(page.of("svg", "differences")) == 1 and len(page.of("svg")) == 1
    differences = text[text.index('<section id="differences">'):text.index('<section id="collections-table">')]
    for label in ("bm25 − lsa", "lsa − rrf", *METRICS, "article", "fruit", "veg"):
        assert label in differences
    # the macro leaderboard: every row of suite_leaderboard.csv, as stored
    board = pd.read_csv(folder / "suite_leaderboard.csv", dtype={"system": str, "group": str})
    shown = re.findall(r'<td class="num" data-system="([^"]+)" data-metric="([^"]+)">([0-9.]+)</td>',
                       text[text.index('id="leaderboard-table"'):])
    assert {(s, m): float(v) for s, m, v in shown[:len(board)]} == pytest.approx(
        {(r.system, r.metric): round(r.mean, 4) for r in board.itertuples()})
    assert len(page.of("table", "collections-table")) == len(METRICS)
    assert all(a["class"] == "heat" for a in page.of("table", "collections-table"))
    # every collection linked to the report its folder holds
    links = [a["href"] for a in page.of("a", "collections")]
    collections = open_suite(folder).collections
    assert links == [f"{c['folder']}/report.html" for c in collections]
    for link in links:
        assert (folder / link).is_file() and "retbench report:" in (folder / link).read_text(encoding="utf-8")
    lead = text[text.index("<header>"):text.index("<nav>")]  # the lead names each collection, linked to the list
    assert re.findall(r'<a href="#collections">([^<]+)</a>', lead) == [c["name"] for c in collections]


def test_without_matplotlib_the_page_holds_the_tables_and_says_how_to_get_the_chart(suites, monkeypatch):
    _, bare = suites
    monkeypatch.setattr(suite_html, "find_spec", lambda name: None)
    text = render_suite_report(open_suite(bare), "html")[1]
    page = tags_of(text)
    assert page.of("svg") == [] and "The forest plot needs matplotlib" in text and INSTALL_HINT in unescape(text)
    assert [a["id"] for a in page.of("section")] == [*(r.suite.anchor for r in suite_readings()), *SECTIONS]
    assert len(page.of("table", "comparisons")) == len(METRICS)
    # written without --report, each collection's folder holds only report.txt: that is the link
    assert [a["href"] for a in page.of("a", "collections")] == ["collections/article/report.txt",
                                                                "collections/fruit/report.txt"]


def test_the_markdown_report_has_the_sections_and_links_each_collections_report(suites):
    folder, _ = suites
    text = (folder / "report.md").read_text(encoding="utf-8")
    for heading in ("## Leaderboard (macro)", "## Means per collection", "## Macro comparisons", "## Collections"):
        assert f"\n{heading}\n" in text
    assert "[Collections](#collections)" in text
    links = re.findall(r"\]\((collections/[^)]+)\)", text)
    assert links == [f"{c['folder']}/report.md" for c in open_suite(folder).collections]
    assert all((folder / link).is_file() for link in links)
    board = pd.read_csv(folder / "suite_leaderboard.csv", dtype={"system": str, "group": str})
    for r in board.itertuples():
        assert f"| {r.metric} | {r.group} | {r.system} | {r.mean:.4f} |" in text.replace("\\@", "@")


def test_a_report_written_elsewhere_links_through_the_path_to_the_suite(suites, runner, tmp_path):
    _, bare = suites
    out = tmp_path / "elsewhere" / "suite.md"
    out.parent.mkdir()
    done = runner.invoke(main, ["report", str(bare), "-o", str(out)])
    assert done.exit_code == 0, done.output
    links = re.findall(r"\]\(([^)#]+)\)", out.read_text(encoding="utf-8"))
    assert len(links) == 2 and all(not Path(link).is_absolute() for link in links)
    assert all((out.parent / link).resolve().is_file() for link in links)
    printed = runner.invoke(main, ["report", str(bare), "--format", "md"])
    assert "](collections/fruit/report.txt)" in printed.output


def test_bench_compare_with_report_md_writes_each_collections_report_md(runner, tmp_path):
    other = small_collection(tmp_path / "fruit", seed=2)
    done = runner.invoke(main, ["compare", "--corpus", "article", "--corpus", str(other), "--systems", "bm25,lsa",
                                "--metrics", "mrr", "--out", str(tmp_path / "out"), "--report", "md", *CLI_FAST])
    assert done.exit_code == 0, done.output
    (suite,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    for name in ("article", "fruit"):
        collection = suite / "collections" / name
        assert "report.md" in json.loads((collection / "manifest.json").read_text())["files"]
        assert f"](collections/{name}/report.md)" in (suite / "report.md").read_text(encoding="utf-8")


def test_the_served_suite_page_links_each_collections_run_page(suites):
    pytest.importorskip("fastapi", reason="bench serve needs the serve extra")
    from fastapi.testclient import TestClient

    from harness.serve.app import create_app

    _, bare = suites
    client = TestClient(create_app(bare.parent), base_url="http://127.0.0.1")
    page = client.get(f"/suites/{bare.name}")
    assert page.status_code == 200
    links = [a["href"] for a in tags_of(page.text).of("a", "collections")]
    assert links == [f"/runs/{bare.name}~article", f"/runs/{bare.name}~fruit"]
    assert all(client.get(link).status_code == 200 for link in links)


#: Run in the page after it loads: the page's height and width, the forest plot's box and the links.
_PROBE = """<script>
const box = document.querySelector("#differences svg").getBoundingClientRect();
const out = document.createElement("pre");
out.id = "retbench-probe";
out.textContent = JSON.stringify({height: document.documentElement.scrollHeight,
  scroll_width: document.documentElement.scrollWidth,
  plot: [box.left, box.top, box.right, box.bottom],
  links: Array.from(document.querySelectorAll("#collections a")).map(a => a.href)});
document.body.appendChild(out);
</script>"""
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@needs_matplotlib
@needs_chromium
def test_chromium_shows_the_forest_plot_and_the_links_at_1280_pixels(suites, tmp_path):
    import matplotlib.image

    folder, _ = suites
    probe = folder.parent / "probe.html"  # beside the suite folder, so its links resolve as the page's
    probe.write_text((folder / "report.html").read_text(encoding="utf-8").replace(
        "</body>", _PROBE + "</body>").replace('href="collections/', f'href="{folder.name}/collections/'),
        encoding="utf-8")
    try:
        done = subprocess.run(["chromium", *_FLAGS, f"--user-data-dir={tmp_path / 'probe'}", "--window-size=1280,900",
                               "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=180)
    finally:
        probe.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(unescape(re.search(r'<pre id="retbench-probe">(.*?)</pre>', done.stdout, re.S).group(1)))
    assert measured["scroll_width"] <= 1280  # nothing runs past a 1280-pixel window
    assert 1500 < measured["height"] < 8000
    assert [Path(unquote(link.removeprefix("file://"))) for link in measured["links"]] == [
        folder / c["folder"] / "report.html" for c in open_suite(folder).collections]
    left, top, right, bottom = measured["plot"]
    assert right - left > 500 and bottom - top > 150  # drawn at a readable size

    png = tmp_path / "suite.png"
    done = subprocess.run(["chromium", *_FLAGS, f"--user-data-dir={tmp_path / 'shot'}", f"--screenshot={png}",
                           f"--window-size=1280,{measured['height']}", (folder / "report.html").as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]
    image = matplotlib.image.imread(str(png))[..., :3]
    assert image.shape[0] == measured["height"] and image.shape[1] == 1280
    plot = image[int(top):int(bottom), int(left):int(right)]
    spread = plot.max(axis=2) - plot.min(axis=2)
    assert (spread > 0.25).mean() > 0.003  # the collections' coloured markers
    assert (plot.max(axis=2) < 0.3).mean() > 0.01  # the black macro bars, dots, axes and labels
    below = image[int(bottom) + 400:, :]
    assert (below.min(axis=2) < 0.9).mean() > 0.005  # the tables under the plot are drawn too
