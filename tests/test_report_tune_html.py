"""The HTML report of a tune folder: it parses, refers to nothing outside itself, shows the
numbers of tune.csv and the manifest (read back from its DOM), holds the grid chart, whose marks
sit on the chosen point (read back from the SVG's coordinates), is the same bytes every time, and
draws (headless Chromium renders it to a PNG).

Needs the ``report`` extra (matplotlib); the render needs Debian's ``chromium`` and skips with a
reason without it; the Cranfield case needs ``../shared/data``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("matplotlib", reason="the HTML report needs the report extra (pip install 'retbench[report]')")

from harness import tune  # noqa: E402
from harness.report import plots  # noqa: E402
from harness.cli import main  # noqa: E402
from harness.tuning.report import SECTIONS  # noqa: E402
from harness.core.options import Scoring, Statistics

ALPHA_GRID = "weighted(bm25,lsa,alpha=0:1:0.25)"
TWO_AXES = "weighted(bm25(k1=0.6|1.2|1.8),lsa,alpha=0.25|0.5|0.75)"  # axes alpha, then bm25.k1
CRANFIELD_GRID = "bm25(k1=0.9|1.2|1.5,b=0.5|0.75|0.9)"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
FETCHING = {"script", "link", "img", "iframe", "object", "embed", "audio", "video", "source", "base", "image"}
SVG = "{http://www.w3.org/2000/svg}"
CHOSEN, MEAN = "#d62728", "#1f77b4"


class Page(HTMLParser):
    """Checks that every element closes in order; keeps every attribute, the section ids and
    headings, the text of each cell with ``data-*`` attributes, and each inline ``<svg>`` whole."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self.stack: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.ids: list[str] = []
        self.cells: list[tuple[dict[str, str], str]] = []
        self.headings: list[str] = []
        self._cells: list[tuple[dict[str, str], int, list[str]]] = []  # (attributes, depth, text)
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = {k: v or "" for k, v in attrs}
        self.attributes.extend((tag, k, v) for k, v in attributes.items())
        if "id" in attributes:
            self.ids.append(attributes["id"])
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag in ("td", "th", "b") and any(k.startswith("data-") for k in attributes):
            self._cells.append((attributes, len(self.stack), []))
        if tag == "h2":
            self._heading = []

    def handle_startendtag(self, tag, attrs):
        self.attributes.extend((tag, k, v or "") for k, v in attrs)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        if self._cells and self._cells[-1][1] == len(self.stack):
            attributes, _, text = self._cells.pop()
            self.cells.append((attributes, " ".join("".join(text).split())))
        if tag == "h2" and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None
        self.stack.pop()

    def handle_data(self, data):
        for _, _, text in self._cells:
            text.append(data)
        if self._heading is not None:
            self._heading.append(data)

    def field(self, **wanted: str) -> dict[tuple[tuple[str, str], ...], str]:
        """The text of the cells whose data attributes include ``wanted``, keyed by all their data attributes."""
        found = {}
        for attributes, text in self.cells:
            data = {k[5:]: v for k, v in attributes.items() if k.startswith("data-")}
            if all(data.get(k) == v for k, v in wanted.items()):
                found[tuple(sorted(data.items()))] = text
        return found

    def svgs(self) -> list[ElementTree.Element]:
        """Each inline chart, parsed as SVG (the page leaves out the namespace; it is put back)."""
        return [ElementTree.fromstring(s.replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))
                for s in re.findall(r"<svg .*?</svg>", self.text, flags=re.S)]


def parse(text: str) -> Page:
    page = Page(text)
    page.feed(text)
    page.close()
    assert page.stack == [], f"unclosed: {page.stack}"
    return page


def check_offline(page: Page) -> None:
    """Nothing makes a browser fetch: no URL scheme, no src/href but to the page itself, no tag that loads."""
    assert not re.search(r"(?i)\b(?:https?|ftp|wss?|data):", page.text)
    for tag, name, value in page.attributes:
        if name in ("src", "href", "xlink:href", "action", "poster", "srcset"):
            assert value.startswith("#"), (tag, name, value)
    assert "@import" not in page.text.lower()
    assert not {tag for tag, _, _ in page.attributes} & FETCHING


def check_numbers(page: Page, folder: Path) -> None:
    """The page shows the manifest's estimate, in-sample best, default, optimism and per-fold
    choices, and every row of tune.csv, as the printed summary writes them."""
    summary = json.loads((folder / "manifest.json").read_text())["summary"]
    shown = {dict(k)["field"]: v for k, v in page.field().items() if set(dict(k)) == {"field"}}
    estimate, difference, optimism = (summary[k] for k in ("cross_validated_estimate", "estimate_minus_default",
                                                            "optimism"))
    assert shown["cross_validated_estimate"] == f"{estimate['mean']:.3f}"
    assert shown["cross_validated_estimate_interval"] == f"[{estimate['ci_low']:.3f}, {estimate['ci_high']:.3f}]"
    assert shown["in_sample_best"] == f"{summary['in_sample_best']['mean']:.3f}"
    assert shown["default"] == f"{summary['default']['mean']:.3f}"
    assert shown["estimate_minus_default"] == f"{difference['mean_diff']:+.3f}"
    assert shown["estimate_minus_default_interval"] == f"[{difference['ci_low']:+.3f}, {difference['ci_high']:+.3f}]"
    assert shown["optimism"] == f"{optimism['mean_diff']:+.3f}"
    assert shown["optimism_interval"] == f"[{optimism['ci_low']:+.3f}, {optimism['ci_high']:+.3f}]"
    assert shown["chosen"] == ", ".join(f"{k}={v}" for k, v in summary["chosen"]["parameters"].items())
    for fold in summary["per_fold"]:
        cells = {dict(k)["field"]: v for k, v in page.field(fold=str(fold["fold"])).items()}
        assert cells == {"queries": str(fold["queries"]), "chosen_point": str(fold["chosen_point"]),
                         "train_mean": f"{fold['train_mean']:.3f}", "test_mean": f"{fold['test_mean']:.3f}"}
    table = pd.read_csv(folder / "tune.csv", dtype=str, keep_default_na=False)
    axes = table.columns[2:table.columns.get_loc("mean")]
    cells = {(dict(k)["point"], dict(k)["column"]): v for k, v in page.field().items() if "column" in dict(k)}
    assert len(cells) == table.shape[0] * (table.shape[1] - 2)
    for row in table.to_dict("records"):
        for column in table.columns[2:]:
            expected = row[column] if column in axes else f"{float(row[column]):.3f}"
            assert cells[(row["point"], column)] == expected, (row["point"], column)


def check_page(text: str, folder: Path) -> Page:
    page = parse(text)
    check_offline(page)
    assert len(page.ids) == len(set(page.ids)), "an id is used twice"
    assert page.headings == list(SECTIONS.values())
    check_numbers(page, folder)
    assert len(page.svgs()) == 1  # the grid chart
    return page


def chosen_row(folder: Path) -> dict[str, str]:
    """The row of tune.csv with the highest mean (the first of equals): the point chosen on all queries."""
    table = pd.read_csv(folder / "tune.csv", dtype=str, keep_default_na=False)
    return table.loc[table["mean"].astype(float).idxmax()].to_dict()


def texts(svg: ElementTree.Element) -> list[tuple[str, float, float]]:
    """Each text of a chart with its anchor point."""
    return [(t.text or "", float(t.get("x")), float(t.get("y"))) for t in svg.iter(f"{SVG}text")]


def cell_means(svg: ElementTree.Element) -> list[tuple[str, float, float]]:
    """The means written in a heatmap's cells: three decimals, centred (a colour bar's ticks start at their tick)."""
    return [(t.text or "", float(t.get("x")), float(t.get("y"))) for t in svg.iter(f"{SVG}text")
            if re.fullmatch(r"\d\.\d{3}", t.text or "") and "text-anchor: middle" in (t.get("style") or "")]


def markers(svg: ElementTree.Element, color: str) -> list[tuple[float, float]]:
    """The positions of the plotted markers of ``color``: a point is a <use> of its marker's shape,
    inside the group clipped to the plot area (the legend's samples are not clipped)."""
    return [(float(u.get("x")), float(u.get("y"))) for group in svg.iter(f"{SVG}g") if group.get("clip-path")
            for u in group.iter(f"{SVG}use") if f"fill: {color}" in (u.get("style") or "")]


def outlines(svg: ElementTree.Element, color: str) -> list[tuple[float, float, float, float]]:
    """The closed, unfilled rectangles stroked in ``color``: (left, top, right, bottom)."""
    boxes = []
    for path in svg.iter(f"{SVG}path"):
        style, d = path.get("style") or "", path.get("d") or ""
        if f"stroke: {color}" in style and "fill: none" in style and d.rstrip().endswith("z"):
            numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", d)]
            xs, ys = numbers[0::2], numbers[1::2]
            boxes.append((min(xs), min(ys), max(xs), max(ys)))
    return boxes


@pytest.fixture(scope="module")
def alpha_folder(tmp_path_factory) -> Path:
    result = tune(ALPHA_GRID, "article", "ndcg@5", folds=3)
    return result.write(tmp_path_factory.mktemp("alpha"), command_line=["bench", "tune"], reports=["html"])


@pytest.fixture(scope="module")
def two_axes_folder(tmp_path_factory) -> Path:
    result = tune(TWO_AXES, "article", "ndcg@5", folds=3, statistics=Statistics(bootstrap_samples=1000))
    return result.write(tmp_path_factory.mktemp("two"), command_line=["bench", "tune"], reports=["html", "md"])


def test_the_alpha_grid_html_is_offline_and_shows_the_stored_numbers(alpha_folder) -> None:
    page = check_page((alpha_folder / "report.html").read_text(encoding="utf-8"), alpha_folder)
    assert "in-sample best (optimistic)" in page.text


def test_the_line_chart_stars_the_chosen_point_on_the_mean_curve(alpha_folder) -> None:
    """One axis: the mean curve's points (in the axis's order), and the chosen star drawn on the
    one of the chosen alpha, labelled; the legend names its setting and mean from tune.csv."""
    (svg,) = parse((alpha_folder / "report.html").read_text(encoding="utf-8")).svgs()
    chosen = chosen_row(alpha_folder)
    values = json.loads((alpha_folder / "manifest.json").read_text())["grid"]["axes"][0]["values"]
    curve = sorted(markers(svg, MEAN))
    assert len(curve) == len(values) == 5
    at = curve[values.index(chosen["alpha"])]
    stars = markers(svg, CHOSEN)
    assert any(abs(x - at[0]) < 1e-6 and abs(y - at[1]) < 1e-6 for x, y in stars)
    assert not any(abs(x - other[0]) < 1e-6 and abs(y - other[1]) < 1e-6 for other in curve if other != at
                   for x, y in stars)
    (label,) = [(x, y) for text, x, y in texts(svg) if text == "chosen"]
    assert abs(label[0] - at[0]) < 1e-6 and label[1] < at[1]  # above the star (SVG's y grows downwards)
    legend = f"chosen on all queries (the in-sample best): alpha={chosen['alpha']}, {float(chosen['mean']):.3f}"
    assert any(text.startswith(legend) for text, _, _ in texts(svg))


def test_the_heatmap_outlines_the_chosen_cell(two_axes_folder) -> None:
    """Two axes: each cell's mean is written in it; the red outline holds exactly one of them, the
    chosen point's mean, and the legend names the chosen setting."""
    page = check_page((two_axes_folder / "report.html").read_text(encoding="utf-8"), two_axes_folder)
    (svg,) = page.svgs()
    chosen = chosen_row(two_axes_folder)
    table = pd.read_csv(two_axes_folder / "tune.csv")
    written = cell_means(svg)
    assert sorted(t for t, _, _ in written) == sorted(f"{m:.3f}" for m in table["mean"])
    (box,) = outlines(svg, CHOSEN)
    inside = [t for t, x, y in written if box[0] < x < box[2] and box[1] < y < box[3]]
    assert inside == [f"{float(chosen['mean']):.3f}"]
    legend = f"chosen on all queries (the in-sample best): alpha={chosen['alpha']}, bm25.k1={chosen['bm25.k1']}"
    assert any(text.startswith(legend) for text, _, _ in texts(svg))


def test_the_html_is_a_pure_function_of_the_folder(runner, two_axes_folder, tmp_path) -> None:
    again = runner.invoke(main, ["report", str(two_axes_folder), "-o", str(tmp_path / "again.html")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again.html").read_bytes() == (two_axes_folder / "report.html").read_bytes()
    markdown = runner.invoke(main, ["report", str(two_axes_folder), "--format", "md"])
    assert markdown.stdout == (two_axes_folder / "report.md").read_text(encoding="utf-8")


def test_bench_tune_report_html_writes_what_bench_report_makes(runner, tmp_path) -> None:
    result = runner.invoke(main, ["tune", ALPHA_GRID, "--metric", "ndcg@5", "--folds", "3", "--out",
                                  str(tmp_path / "out"), "--no-cache", "-q", "--report", "html,md"])
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "out").iterdir()
    later = runner.invoke(main, ["report", str(folder)])
    assert later.exit_code == 0 and later.stdout == (folder / "report.html").read_text(encoding="utf-8")
    check_page(later.stdout, folder)


def test_cranfield_3x3_html_is_offline_and_marks_the_chosen_cell(shared_data, tmp_path) -> None:
    result = tune(CRANFIELD_GRID, shared_data / "cranfield", "ndcg@10", folds=5, scoring=Scoring(analyzer="english"))
    folder = result.write(tmp_path, command_line=["bench", "tune"], reports=["html"])
    page = check_page((folder / "report.html").read_text(encoding="utf-8"), folder)
    (svg,) = page.svgs()
    chosen = chosen_row(folder)
    (box,) = outlines(svg, CHOSEN)
    inside = [t for t, x, y in cell_means(svg) if box[0] < x < box[2] and box[1] < y < box[3]]
    assert inside == [f"{float(chosen['mean']):.3f}"]
    assert (chosen["k1"], chosen["b"]) == ("1.5", "0.75")  # the README's 7 x 7 grid agrees: k1 at its largest


def test_the_page_draws_the_chart_of_tune_csv_the_same_bytes_every_time(two_axes_folder) -> None:
    manifest = json.loads((two_axes_folder / "manifest.json").read_text())
    axes = [(a["name"], a["values"]) for a in manifest["grid"]["axes"]]
    table = pd.read_csv(two_axes_folder / "tune.csv", dtype={name: str for name, _ in axes})
    summary = manifest["summary"]

    def chart() -> str:
        return plots.tune_grid_svg(table, axes, "ndcg@5", chosen=summary["chosen"]["point"],
                                   default=summary["default"]["point"],
                                   fold_choices=[f["chosen_point"] for f in summary["per_fold"]])

    first = chart()
    assert first == chart()
    assert plots.inline_svg(first) in (two_axes_folder / "report.html").read_text(encoding="utf-8")


def saturated_share(png: Path, rows: int) -> float:
    """The share of clearly coloured pixels in the first ``rows`` rows (a chart's lines and cells;
    text is grey or black)."""
    import matplotlib.image

    image = matplotlib.image.imread(str(png))[:rows, :, :3]
    spread = image.max(axis=2) - image.min(axis=2)
    return float((spread > 0.25).mean())


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is absent (Debian's chromium package; "
                                                             ".ci/run installs it)")
def test_chromium_draws_the_grid_chart(two_axes_folder, tmp_path) -> None:
    """Rendered, the page's heatmap colours about 5% of the first 1,400 rows; the same page with
    its <svg> removed about 0.2% (the links)."""
    def rendered(name: str, text: str) -> float:
        html, png = tmp_path / f"{name}.html", tmp_path / f"{name}.png"
        html.write_text(text, encoding="utf-8")
        done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                               "--no-first-run", "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
                               "--window-size=1280,1400", html.as_uri()], capture_output=True, text=True, timeout=180)
        assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]
        return saturated_share(png, 1400)

    page = (two_axes_folder / "report.html").read_text(encoding="utf-8")
    drawn, bare = rendered("page", page), rendered("bare", re.sub(r"<svg .*?</svg>", "", page, flags=re.S))
    assert drawn > 0.01 and bare < 0.005, (drawn, bare)
