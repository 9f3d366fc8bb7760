"""Every chart of a results folder (and of a suite folder), drawn with matplotlib as SVG text: the one
module the HTML reports (:mod:`harness.report.html`, :mod:`harness.suite.report`) and the dashboard
draw their charts with, so all show the same.

Each ``*_svg`` function takes plain data (a results folder's tables, as
:mod:`harness.store.read` reads them, or arrays) and returns a standalone SVG document;
:func:`inline_svg` turns one into an element to place inside an HTML page. The charts:

* :func:`means_svg` - each system's mean per metric, with its interval (a dot and a bar);
* :func:`differences_svg` - one comparison's per-query differences ``a - b``, sorted, with the mean
  difference and its interval as a band;
* :func:`facet_bars_svg` - one facet: per value, each system's mean per metric, with its interval;
* :func:`categories_svg` - the failed queries of each system by diagnosis category;
* :func:`forest_svg` - a suite's macro comparisons: each pair's macro mean difference with its
  interval stratified by collection, and each collection's own difference beside it;
* :func:`tune_grid_svg` - a parameter search (``tune.csv``): the metric's mean over the grid, the
  point chosen and the default marked (a line over one axis, a heatmap over two, small multiples
  or profiles over more).

The output is a pure function of the data: the SVG ids are salted with the chart's own key
(``svg.hashsalt``), so the same data gives the same bytes and two charts of one page never share an
id; no date is written; text stays text (``svg.fonttype`` ``none``: smaller, and no font is
embedded or fetched). Large inputs are aggregated, not drawn point by point: a sorted difference
curve (or a reading's curve, :func:`sampled`) is drawn through at most :data:`MAX_POINTS` points.

A registered reading (:mod:`harness.readings`) draws its own chart with the same house style:
:func:`styled`, :func:`new_figure`, :func:`figure_svg`, :func:`sampled`, :func:`short_label`,
:func:`system_colors`, :data:`CHART_WIDTH` and :data:`REFERENCE_GREY`.

matplotlib is the optional ``report`` extra; it is imported when a chart is first drawn, and its
absence is a :class:`~corpora.RetbenchError` saying how to install it (:func:`require_matplotlib`).
"""

from __future__ import annotations

import functools
import io
import itertools
import math
import re
from collections.abc import Callable, Sequence
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from corpora import RetbenchError
from corpora.wording import counted

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.collections import QuadMesh
    from matplotlib.figure import Figure

__all__ = ["ANNOTATED_CELLS", "CHART_WIDTH", "GridAxes", "INSTALL_HINT", "MAX_PANELS", "MAX_POINTS", "REFERENCE_GREY",
           "categories_svg", "differences_svg", "facet_bars_svg", "figure_svg", "forest_svg", "inline_svg", "means_svg",
           "new_figure", "require_matplotlib", "sampled", "short_label", "styled", "system_colors", "tune_grid_svg"]

INSTALL_HINT = "pip install 'retbench[report]'"
#: Points a curve is drawn through at most; beyond, it is sampled at evenly spaced positions.
MAX_POINTS = 200
#: A grid of three axes or more is drawn as this many heatmaps at most (one per setting of the
#: leading axes); beyond, as one profile per axis.
MAX_PANELS = 12
#: A heatmap writes each cell's mean in it up to this many cells per panel.
ANNOTATED_CELLS = 64
_WIDTH = 7.2  # inches: one chart across the report's column
_SMALL_WIDTH = 5.0  # inches: a chart drawn many times, two side by side
_FONT = 9
_BAND = 0.25  # opacity of an interval band
_GREY = "#777777"
_RC = {"svg.fonttype": "none", "font.size": _FONT, "axes.titlesize": _FONT + 1, "axes.labelsize": _FONT,
       "legend.fontsize": _FONT - 1, "xtick.labelsize": _FONT - 1, "ytick.labelsize": _FONT - 1,
       "axes.spines.top": False, "axes.spines.right": False, "font.family": "sans-serif"}


def require_matplotlib(what: str = "the charts") -> None:
    """Raise a :class:`~corpora.RetbenchError` saying how to install matplotlib when it is absent."""
    if find_spec("matplotlib") is None:
        raise RetbenchError(f"{what} need matplotlib, which is not installed. Fix: {INSTALL_HINT}")


def _figure(width: float, height: float, layout: str | None = "constrained") -> Figure:
    """A figure of that size in inches; ``layout=None`` keeps fixed margins (the constrained layout
    measures every label first, which is half the cost of a small chart drawn many times)."""
    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout=layout)


def _svg(figure: Figure, key: str) -> str:
    """The figure as a standalone SVG document, its ids salted with ``key``, without metadata."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({**_RC, "svg.hashsalt": f"retbench:{key}"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    # the metadata block names matplotlib's web site and the RDF vocabularies: nothing a chart needs
    return re.sub(r"\s*<metadata>.*?</metadata>", "", buffer.getvalue(), flags=re.S)


def _style(function: Callable[..., str]) -> Callable[..., str]:
    """Draw under the report's rc settings (font sizes, no top or right spine)."""
    @functools.wraps(function)
    def drawn(*args: Any, **kwargs: Any) -> str:
        require_matplotlib()
        import matplotlib

        with matplotlib.rc_context(_RC):
            return function(*args, **kwargs)

    return drawn


_REFERENCED = re.compile(r"""(?:href="#|url\(#)([^")]+)""")
_ID = re.compile(r'\s+id="([^"]*)"')


def inline_svg(svg: str) -> str:
    """A standalone SVG document as an element for an HTML page: no XML declaration or DOCTYPE, no
    namespace declarations (the HTML parser places ``<svg>`` in the SVG namespace itself),
    ``xlink:href`` written as ``href``, and only the ids that something in it refers to (matplotlib
    numbers every group ``figure_1``, ``axes_1``, ...; two charts on one page would repeat them).
    """
    text = re.sub(r"<\?xml[^>]*\?>\s*", "", svg)
    text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", text, flags=re.S)
    text = re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", text)
    text = text.replace("xlink:href=", "href=")
    used = set(_REFERENCED.findall(text))
    text = _ID.sub(lambda m: m.group(0) if m.group(1) in used else "", text)
    return text.strip()


def system_colors(systems: Sequence[str]) -> dict[str, str]:
    """One colour per system, in the run's order (matplotlib's ``tab10``, then ``tab20``), so a
    system has the same colour in every chart."""
    require_matplotlib()
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    palette = [to_hex(c) for c in colormaps["tab10"].colors]
    palette += [to_hex(c) for c in colormaps["tab20"].colors[1::2]]
    return {s: palette[i % len(palette)] for i, s in enumerate(systems)}


def _sampled(x: np.ndarray, y: np.ndarray, limit: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` points of a curve, at evenly spaced positions (the first and last kept)."""
    if len(x) <= limit:
        return x, y
    keep = np.unique(np.linspace(0, len(x) - 1, limit).round().astype(int))
    return x[keep], y[keep]


@_style
def means_svg(intervals: pd.DataFrame, metrics: Sequence[str], *, level: str = "95%", key: str = "means") -> str:
    """Each system's mean on each metric, a dot, with its interval, a bar: one panel per metric.

    ``intervals``: ``system``, then per metric its mean and ``<metric>_ci_low``, ``<metric>_ci_high``
    (:attr:`harness.report.view.ReportView.mean_intervals`; an empty bound draws no bar).
    """
    systems = [str(s) for s in intervals["system"]]
    colors = system_colors(systems)
    columns = min(len(metrics), 4)
    rows = math.ceil(len(metrics) / columns)
    height = rows * (0.5 + 0.28 * len(systems))
    figure = _figure(_WIDTH, max(1.6, height))
    axes = figure.subplots(rows, columns, squeeze=False, sharey=True)
    positions = np.arange(len(systems))[::-1]
    for i, metric in enumerate(metrics):
        ax: Axes = axes[i // columns][i % columns]
        means = intervals[metric].to_numpy(dtype=float)
        low = intervals[f"{metric}_ci_low"].to_numpy(dtype=float)
        high = intervals[f"{metric}_ci_high"].to_numpy(dtype=float)
        for y, system, mean, lo, hi in zip(positions, systems, means, low, high):
            if not (math.isnan(lo) or math.isnan(hi)):
                ax.plot([lo, hi], [y, y], color=colors[system], linewidth=2.2, alpha=0.55, solid_capstyle="butt")
            ax.plot([mean], [y], "o", color=colors[system], markersize=5)
        ax.set_title(metric)
        ax.set_yticks(positions, [_short(s) for s in systems])
        ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
    for j in range(len(metrics), rows * columns):
        axes[j // columns][j % columns].set_visible(False)
    figure.suptitle(f"mean, {level} bootstrap interval over queries", fontsize=_FONT)
    return _svg(figure, key)


def _short(label: str, limit: int = 28) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"


@_style
def differences_svg(differences: np.ndarray, mean: float, low: float, high: float, *, system_a: str,
                    system_b: str, metric: str, level: str = "95%", key: str = "differences") -> str:
    """One comparison, query by query: the differences ``system_a - system_b`` sorted ascending
    (bars up to :data:`MAX_POINTS` queries, else the sorted curve, filled to 0, through that many
    evenly spaced quantiles), the mean difference as a line and its interval as a band."""
    values = np.sort(np.asarray(differences, dtype=float))
    n = len(values)
    figure = _figure(_SMALL_WIDTH, 2.4, layout=None)
    figure.subplots_adjust(left=0.14, right=0.98, bottom=0.19, top=0.76)
    ax = figure.add_subplot()
    ax.axhspan(low, high, color="#1f77b4", alpha=_BAND, linewidth=0)
    ax.axhline(0.0, color=_GREY, linewidth=0.8)
    share = (np.arange(n) + 0.5) / max(n, 1)  # the x axis is the share of queries, whatever n
    if n <= MAX_POINTS:
        colors = np.where(values < 0, "#d62728", np.where(values > 0, "#2ca02c", _GREY))
        ax.bar(share, values, width=1.0 / max(n, 1), color=colors, linewidth=0)
    else:
        x, y = _sampled(share, values)
        ax.fill_between(x, y, 0.0, where=y < 0, color="#d62728", linewidth=0, interpolate=True)
        ax.fill_between(x, y, 0.0, where=y > 0, color="#2ca02c", linewidth=0, interpolate=True)
        ax.plot(x, y, color="#333333", linewidth=0.6)
    ax.axhline(mean, color="#1f77b4", linewidth=1.4)
    if not np.any(values) and low == high == 0.0:  # identical on every query: a readable axis around 0
        ax.set_ylim(-0.1, 0.1)
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel(f"share of the {counted(n, 'query')}, sorted by difference")
    ax.set_ylabel(f"{metric} difference")
    ax.set_title(f"{_short(system_a, 30)} − {_short(system_b, 30)}, {metric}\nmean {mean:+.3f} (line), {level} "
                 f"interval [{low:+.3f}, {high:+.3f}] (band)", loc="left")
    return _svg(figure, key)


@_style
def facet_bars_svg(facets: pd.DataFrame, facet: str, metrics: Sequence[str], systems: Sequence[str], *,
                   level: str = "95%", key: str = "facet") -> str:
    """One facet of ``facets.csv``: for each metric a panel of grouped bars, a group per value and
    a bar per system (its mean over the value's queries), with the interval as a whisker where the
    cell has one (none under the minimum number of queries)."""
    rows = facets[facets["facet"] == facet]
    values = list(dict.fromkeys(str(v) for v in rows["value"]))
    colors = system_colors(systems)
    figure = _figure(_WIDTH, 1.0 + 1.9 * len(metrics))
    axes = figure.subplots(len(metrics), 1, squeeze=False)
    width = 0.8 / max(len(systems), 1)
    for i, metric in enumerate(metrics):
        ax: Axes = axes[i][0]
        for j, system in enumerate(systems):
            mine = rows[rows["system"] == system].set_index("value")
            means = np.array([float(mine.loc[v, metric]) for v in values])
            low = np.array([float(mine.loc[v, f"{metric}_ci_low"]) for v in values])
            high = np.array([float(mine.loc[v, f"{metric}_ci_high"]) for v in values])
            x = np.arange(len(values)) - 0.4 + width * (j + 0.5)
            ax.bar(x, means, width=width * 0.92, color=colors[system], label=_short(system) if i == 0 else None)
            has = ~(np.isnan(low) | np.isnan(high))
            if has.any():
                ax.errorbar(x[has], means[has], yerr=[means[has] - low[has], high[has] - means[has]], fmt="none",
                            ecolor="#333333", elinewidth=0.8, capsize=2)
        ax.set_xticks(np.arange(len(values)), [_short(v, 20) for v in values])
        ax.set_ylabel(metric)
        ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
    axes[0][0].set_title(f"facet {_short(facet, 40)}: mean per value, {level} interval (none under the minimum "
                         "queries)", loc="left")
    axes[0][0].legend(loc="lower left", bbox_to_anchor=(1.0, 0.0), frameon=False)
    return _svg(figure, key)


@_style
def categories_svg(counts: pd.DataFrame, *, key: str = "categories") -> str:
    """Failed queries per system (rows of ``counts``) stacked by diagnosis category (its columns)."""
    systems = [str(s) for s in counts.index]
    figure = _figure(_WIDTH, 0.8 + 0.3 * len(systems))
    ax = figure.add_subplot()
    positions = np.arange(len(systems))[::-1]
    left = np.zeros(len(systems))
    from matplotlib import colormaps

    palette = colormaps["Set2"].colors
    for i, category in enumerate(counts.columns):
        widths = counts[category].to_numpy(dtype=float)
        ax.barh(positions, widths, left=left, color=palette[i % len(palette)], label=str(category), height=0.7)
        left += widths
    ax.set_yticks(positions, [_short(s) for s in systems])
    ax.set_xlabel("failed queries")
    ax.legend(loc="lower left", bbox_to_anchor=(1.0, 0.0), frameon=False)
    return _svg(figure, key)


_MARKERS = "o^sDvP*Xhp<>"


@_style
def forest_svg(macro: pd.DataFrame, collections: pd.DataFrame, metrics: Sequence[str], *, level: str = "95%",
               key: str = "forest") -> str:
    """A suite's macro comparisons as a forest plot: one panel per metric, one row per pair ``a − b``;
    the macro mean difference is a black dot with its interval stratified by collection as a bar (a
    significant one, Holm p <= alpha and the interval clear of 0, filled; else hollow), and each
    collection's own difference of means a small coloured marker on the same row, in the legend's
    order (a colour and a shape per collection).

    ``macro``: ``system_a, system_b, metric, mean_diff, ci_low, ci_high`` and ``significant``
    (``suite_comparisons.csv`` with the verdict read); ``collections``: ``system_a, system_b, metric,
    collection, difference``, a row per collection and comparison.
    """
    names = list(dict.fromkeys(str(c) for c in collections["collection"]))
    colors = system_colors(names)
    pairs = list(dict.fromkeys(zip(macro["system_a"].astype(str), macro["system_b"].astype(str))))
    columns = min(len(metrics), 3)
    rows = math.ceil(len(metrics) / columns)
    height = rows * (0.7 + 0.42 * len(pairs)) + 0.25 * math.ceil(len(names) / 5) + 0.4
    figure = _figure(_WIDTH, max(2.0, height))
    axes = figure.subplots(rows, columns, squeeze=False, sharey=True)
    positions = {pair: y for pair, y in zip(pairs, np.arange(len(pairs))[::-1])}
    # each collection a fixed offset inside the row, below or above the macro bar and clear of it, so
    # that markers at one value stay apart and none hides behind the bar
    below, above = -(-len(names) // 2), len(names) // 2
    offsets = [*np.linspace(-0.36, -0.16, below), *np.linspace(0.16, 0.36, above)]
    for i, metric in enumerate(metrics):
        ax: Axes = axes[i // columns][i % columns]
        ax.axvline(0.0, color=_GREY, linewidth=0.8)
        mine = collections[collections["metric"] == metric]
        for k, name in enumerate(names):
            rows_of = mine[mine["collection"] == name]
            y = [positions[(str(a), str(b))] + offsets[k] for a, b in zip(rows_of["system_a"], rows_of["system_b"])]
            ax.plot(rows_of["difference"].to_numpy(dtype=float), y, linestyle="none",
                    marker=_MARKERS[k % len(_MARKERS)], markersize=4, color=colors[name], alpha=0.85, zorder=3,
                    label=_short(name) if i == 0 else None)
        for row in macro[macro["metric"] == metric].itertuples(index=False):
            y = positions[(str(row.system_a), str(row.system_b))]
            ax.plot([row.ci_low, row.ci_high], [y, y], color="#222222", linewidth=2.4, solid_capstyle="butt")
            ax.plot([row.mean_diff], [y], "o", markersize=6.5, color="#222222",
                    markerfacecolor="#222222" if row.significant else "white", markeredgewidth=1.4)
        ax.set_title(metric)
        ax.set_yticks(list(positions.values()), [f"{_short(a, 20)} − {_short(b, 20)}" for a, b in positions])
        ax.set_ylim(-0.6, len(pairs) - 0.4)
        ax.set_xlabel("difference a − b")
        ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
    for j in range(len(metrics), rows * columns):
        axes[j // columns][j % columns].set_visible(False)
    from matplotlib.lines import Line2D

    macro_mark = Line2D([], [], color="#222222", linewidth=2.4, marker="o", markersize=6.5,
                        markerfacecolor="#222222", label=f"macro, {level} interval stratified by collection")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend([macro_mark, *handles], [macro_mark.get_label(), *labels], loc="outside lower center",
                  ncol=min(len(names) + 1, 5), frameon=False)
    figure.suptitle("macro mean difference (black; filled: significant) and each collection's (markers)",
                    fontsize=_FONT)
    return _svg(figure, key)


# ----- a parameter search over its grid ------------------------------------------------------------

_CHOSEN = "#d62728"
_DEFAULT = "#ff7f0e"
_MEAN = "#1f77b4"
#: A grid's axes: each swept parameter's name (its tune.csv column) and values, in grid order.
GridAxes = Sequence[tuple[str, Sequence[object]]]


def _grid_cells(frame: pd.DataFrame, axes: GridAxes) -> dict[int, tuple[int, ...]]:
    """Point number -> its cell: the position of each of its axis values among the axis's values
    (compared as text, as tune.csv and the manifest both write them)."""
    positions = [{str(v): i for i, v in enumerate(values)} for _, values in axes]
    cells = {}
    for row in frame.to_dict("records"):
        try:
            cells[int(row["point"])] = tuple(p[str(row[name])] for p, (name, _) in zip(positions, axes))
        except KeyError as missing:
            raise RetbenchError(f"tune table: point {row['point']} has {missing} off the grid's axes. Fix: make the "
                                "folder again with bench tune") from None
    return cells


def _cube(frame: pd.DataFrame, cells: dict[int, tuple[int, ...]], shape: tuple[int, ...], column: str) -> np.ndarray:
    """A column of the table laid out over the grid (NaN where no point was stored)."""
    cube = np.full(shape, np.nan)
    for point, value in zip(frame["point"], frame[column]):
        cube[cells[int(point)]] = float(value)
    return cube


def _positions(values: Sequence[object]) -> tuple[np.ndarray, bool]:
    """Where an axis's values go on a line chart: at their own numbers when all are numbers, else
    evenly spaced (the flag says which)."""
    try:
        return np.array([float(str(v)) for v in values]), True
    except ValueError:
        return np.arange(len(values), dtype=float), False


def _ticks(values: Sequence[object], limit: int = 15) -> tuple[np.ndarray, list[str]]:
    """Tick positions and labels of a categorical axis: every value, or every k-th past ``limit``."""
    step = max(1, math.ceil(len(values) / limit))
    keep = np.arange(0, len(values), step)
    return keep, [_short(str(values[i]), 10) for i in keep]


def _setting(axes: GridAxes, cell: tuple[int, ...]) -> str:
    return ", ".join(f"{name}={values[i]}" for (name, values), i in zip(axes, cell))


def _outline(ax: Axes, column: int, row: int, color: str, dashed: bool = False) -> None:
    """A cell's outline, over a white halo so it shows on any colour of the map."""
    from matplotlib.patches import Rectangle

    corner = (column - 0.5, row - 0.5)
    # not clipped: a cell at the map's edge keeps its whole outline
    ax.add_patch(Rectangle(corner, 1, 1, fill=False, edgecolor="white", linewidth=4.0, clip_on=False))
    ax.add_patch(Rectangle(corner, 1, 1, fill=False, edgecolor=color, linewidth=2.0, clip_on=False,
                           linestyle=(0, (2.5, 1.5)) if dashed else "solid"))


def _heatmap(ax: Axes, means: np.ndarray, rows: tuple[str, Sequence[object]], columns: tuple[str, Sequence[object]],
             low: float, high: float, annotate: bool) -> QuadMesh:
    """The means of two axes as coloured cells (first axis up, second across), each cell's mean
    written in it when ``annotate``."""
    mesh = ax.pcolormesh(np.arange(means.shape[1] + 1) - 0.5, np.arange(means.shape[0] + 1) - 0.5,
                         np.ma.masked_invalid(means), cmap="viridis", vmin=low, vmax=high, shading="flat",
                         edgecolors="face", linewidth=0.3)  # edges in the cell's colour: no seams between cells
    for axis, (name, values), set_ticks in ((ax.xaxis, columns, ax.set_xticks), (ax.yaxis, rows, ax.set_yticks)):
        set_ticks(*_ticks(values))
        axis.set_label_text(name)
    if annotate:
        for (r, c), value in np.ndenumerate(means):
            if not math.isnan(value):  # light text on the dark end of viridis, dark on the light end
                shade = "white" if (value - low) < 0.6 * (high - low) else "black"
                ax.text(c, r, f"{value:.3f}", ha="center", va="center", color=shade, fontsize=_FONT - 3)
    ax.set_xlim(-0.5, means.shape[1] - 0.5)
    ax.set_ylim(-0.5, means.shape[0] - 0.5)
    return mesh


def _marks_legend(figure: Figure, chosen: str, default: str | None, folds: bool, outlines: bool) -> None:
    """The legend of a map's marks, below the chart: cell outlines (``outlines``) or the profiles'
    star and diamond, named with their settings."""
    from matplotlib.lines import Line2D

    def mark(color: str, marker: str, dashed: bool) -> dict[str, object]:
        if outlines:
            return {"color": color, "linewidth": 2.0, "linestyle": (0, (2.5, 1.5)) if dashed else "solid"}
        return {"color": color, "marker": marker, "linestyle": "none", "markersize": 9 if marker == "*" else 6}

    handles = [Line2D([], [], label=chosen, **mark(_CHOSEN, "*", False))]
    if default is not None:
        handles.append(Line2D([], [], label=default, **mark(_DEFAULT, "D", True)))
    if folds:
        handles.append(Line2D([], [], color="black", marker="v", markerfacecolor="white", linestyle="none",
                              label="chosen by a fold (on its training queries)"))
    figure.legend(handles=handles, loc="outside lower center", ncols=1, frameon=False)


def _line(figure: Figure, frame: pd.DataFrame, cells: dict[int, tuple[int, ...]], axes: GridAxes, metric: str,
          chosen: int, default: int | None, fold_choices: Sequence[int], labels: dict[str, str]) -> None:
    """One axis: the mean over all queries as a line, each fold's held-out mean faint, the fold's
    own choice on it, the default and the chosen point marked and labelled."""
    name, values = axes[0]
    x, numeric = _positions(values)
    shape = (len(values),)
    ax = figure.add_subplot()
    for f in range(_fold_count(frame)):
        ax.plot(x, _cube(frame, cells, shape, f"test_{f + 1}"), color=_GREY, linewidth=0.8, alpha=0.5,
                label="held-out mean of each fold" if f == 0 else None)
    if fold_choices:
        xs = [x[cells[p][0]] for p in fold_choices]
        ys = [float(frame.loc[frame["point"] == p, f"test_{f + 1}"].iloc[0]) for f, p in enumerate(fold_choices)]
        ax.plot(xs, ys, "o", markerfacecolor="white", markeredgecolor="#555555", markersize=5, linestyle="none",
                label="each fold's choice (on its training queries), held out")
    means = _cube(frame, cells, shape, "mean")
    ax.plot(x, means, color=_MEAN, linewidth=1.8, marker="o" if len(values) <= 50 else None, markersize=3.5,
            label="mean over all queries")
    if default is not None and default != chosen:
        at = cells[default][0]
        ax.plot([x[at]], [means[at]], "D", color=_DEFAULT, markersize=7, linestyle="none", label=labels["default"])
        ax.annotate("default", (x[at], means[at]), textcoords="offset points", xytext=(0, -14), ha="center",
                    color=_DEFAULT)
    at = cells[chosen][0]
    ax.plot([x[at]], [means[at]], "*", color=_CHOSEN, markersize=14, linestyle="none", label=labels["chosen"])
    ax.annotate("chosen", (x[at], means[at]), textcoords="offset points", xytext=(0, 9), ha="center", color=_CHOSEN)
    if not numeric:
        ax.set_xticks(*_ticks(values))
    ax.set_xlabel(name)
    ax.set_ylabel(metric)
    ax.grid(color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(f"{metric} over {name}", loc="left")
    figure.legend(loc="outside lower center", ncols=1, frameon=False)


def _fold_count(frame: pd.DataFrame) -> int:
    return sum(1 for column in frame.columns if re.fullmatch(r"test_\d+", str(column)))


def _range(means: np.ndarray) -> tuple[float, float]:
    """The colour scale: the means' range (widened a little when every mean is equal)."""
    low, high = float(np.nanmin(means)), float(np.nanmax(means))
    return (low - 0.005, high + 0.005) if high - low < 1e-9 else (low, high)


def _maps(figure: Figure, cube: np.ndarray, axes: GridAxes, metric: str, chosen: tuple[int, ...],
          default: tuple[int, ...] | None, folds: set[tuple[int, ...]]) -> None:
    """Two axes or more: a heatmap of the last two per setting of the leading ones (one panel for
    two axes), on one colour scale."""
    leading = axes[:-2]
    settings = list(itertools.product(*(range(len(values)) for _, values in leading)))
    columns = min(len(settings), 3)
    rows = math.ceil(len(settings) / columns)
    low, high = _range(cube)
    cells = cube.shape[-1] * cube.shape[-2]
    annotate = cells <= (ANNOTATED_CELLS if len(settings) == 1 else ANNOTATED_CELLS // 2)
    panels = figure.subplots(rows, columns, squeeze=False)
    mesh: QuadMesh | None = None
    for k, setting in enumerate(settings):
        ax: Axes = panels[k // columns][k % columns]
        mesh = _heatmap(ax, cube[setting], axes[-2], axes[-1], low, high, annotate)
        if leading:
            ax.set_title(_setting(leading, setting), fontsize=_FONT)
        for cell in sorted(folds):
            if cell[:-2] == setting:
                ax.plot(cell[-1] - 0.3, cell[-2] + 0.28, marker="v", color="black", markerfacecolor="white",
                        markersize=4.5, linestyle="none")
        if default is not None and default[:-2] == setting and default != chosen:
            _outline(ax, default[-1], default[-2], _DEFAULT, dashed=True)
        if chosen[:-2] == setting:
            _outline(ax, chosen[-1], chosen[-2], _CHOSEN)
    for k in range(len(settings), rows * columns):
        panels[k // columns][k % columns].set_visible(False)
    bar = figure.colorbar(mesh, ax=panels, label=f"{metric}, mean over all queries", shrink=0.9)
    bar.solids.set_rasterized(False)  # matplotlib embeds a long bar as a PNG; the page keeps to vectors and text
    bar.solids.set_edgecolor("face")  # and, as vectors, no seams between its bands


def _profiles(figure: Figure, cube: np.ndarray, axes: GridAxes, metric: str, chosen: tuple[int, ...],
              default: tuple[int, ...] | None) -> None:
    """Many axes: per axis, each value's best mean over every setting of the other axes, the
    chosen value starred and the default's diamond-marked."""
    columns = min(len(axes), 3)
    rows = math.ceil(len(axes) / columns)
    panels = figure.subplots(rows, columns, squeeze=False)
    for k, (name, values) in enumerate(axes):
        ax: Axes = panels[k // columns][k % columns]
        others = tuple(i for i in range(len(axes)) if i != k)
        best = np.nanmax(cube, axis=others)
        x, numeric = _positions(values)
        ax.plot(x, best, color=_MEAN, linewidth=1.6, marker="o" if len(values) <= 50 else None, markersize=3)
        if default is not None and default != chosen:
            ax.plot([x[default[k]]], [best[default[k]]], "D", color=_DEFAULT, markersize=6)
        ax.plot([x[chosen[k]]], [best[chosen[k]]], "*", color=_CHOSEN, markersize=12)
        if not numeric:
            ax.set_xticks(*_ticks(values))
        ax.set_xlabel(name)
        ax.grid(color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
    for k in range(len(axes), rows * columns):
        panels[k // columns][k % columns].set_visible(False)
    panels[0][0].set_ylabel(f"best {metric}")


@_style
def tune_grid_svg(tune_frame: pd.DataFrame, axes: GridAxes, metric: str, *,
                  chosen: int, default: int | None = None, fold_choices: Sequence[int] = (),
                  key: str = "tune-grid") -> str:
    """A parameter search's metric over its grid, from ``tune.csv`` (``tune_frame``: ``point``,
    a column per axis, ``mean``, ``train_<f>``/``test_<f>`` per fold).

    ``axes``: each swept parameter's name (its tune.csv column) and values, in grid order; a point's
    axis values are matched to them as text. ``chosen``, ``default`` and ``fold_choices`` are point
    numbers (tune.csv's ``point``, 1-based): the setting chosen on all queries (which is the
    in-sample best: the highest ``mean``), the default setting when it is a grid point, and each
    fold's choice.

    * One axis: the mean over all queries against the axis (at the values' own numbers when all
      are numbers), each fold's held-out mean (``test_<f>``) as a faint line with the fold's choice
      as an open dot on it, the default a diamond and the chosen point a star, both labelled.
    * Two axes: a heatmap of the mean (first axis up, second across; each cell's mean written in
      it up to :data:`ANNOTATED_CELLS` cells), the chosen cell outlined solid, the default dashed,
      a cell some fold chose flagged by a small triangle; the legend names each mark.
    * Three axes or more: the same heatmap of the last two axes for each setting of the others,
      on one colour scale, up to :data:`MAX_PANELS` panels; past that, one profile per axis (each
      value's best mean over every setting of the other axes), the chosen value starred.
    """
    if not axes:
        raise RetbenchError("a grid chart needs at least one swept axis. Fix: pass the grid's axes")
    cells = _grid_cells(tune_frame, axes)
    shape = tuple(len(values) for _, values in axes)
    if chosen not in cells or (default is not None and default not in cells) or any(p not in cells
                                                                                   for p in fold_choices):
        raise RetbenchError(f"grid chart: a marked point is not in the tune table (chosen {chosen}, default "
                            f"{default}, folds {list(fold_choices)}). Fix: pass point numbers of tune.csv")
    chosen_mean = float(tune_frame.loc[tune_frame["point"] == chosen, "mean"].iloc[0])
    labels = {"chosen": f"chosen on all queries (the in-sample best): {_setting(axes, cells[chosen])}, "
                        f"{chosen_mean:.3f}"}
    if default is not None and default != chosen:
        default_mean = float(tune_frame.loc[tune_frame["point"] == default, "mean"].iloc[0])
        labels["default"] = f"default: {_setting(axes, cells[default])}, {default_mean:.3f}"
    elif default is not None:
        labels["chosen"] += ", also the default"
    if len(axes) == 1:
        figure = _figure(_WIDTH, 3.6)
        _line(figure, tune_frame, cells, axes, metric, chosen, default, fold_choices, labels)
        return _svg(figure, key)
    cube = _cube(tune_frame, cells, shape, "mean")
    panels = math.prod(shape[:-2])
    default_cell = cells[default] if default is not None else None
    if panels <= MAX_PANELS:
        rows = math.ceil(panels / min(panels, 3))
        height = (2.4 if panels > 1 else max(2.6, min(5.5, 0.32 * shape[-2] + 1.4))) * rows + 0.9
        figure = _figure(_WIDTH if panels > 1 else _SMALL_WIDTH + 1.2, height)
        _maps(figure, cube, axes, metric, cells[chosen], default_cell, {cells[p] for p in fold_choices})
        what = "mean over all queries" + (f", per setting of {', '.join(n for n, _ in axes[:-2])}"
                                          if panels > 1 else "")
    else:
        figure = _figure(_WIDTH, 2.4 * math.ceil(len(axes) / 3) + 0.9)
        _profiles(figure, cube, axes, metric, cells[chosen], default_cell)
        what = f"each value's best mean over the other axes ({panels} settings of the leading axes: too many to map)"
    figure.suptitle(f"{metric} over the grid: {what}", fontsize=_FONT)
    mapped = panels <= MAX_PANELS
    _marks_legend(figure, labels["chosen"], labels.get("default"), bool(fold_choices) and mapped, mapped)
    return _svg(figure, key)


# ----- what the chart of a registered reading (harness.readings) is drawn with ----------------------

#: The width of a chart across the report's column (inches).
CHART_WIDTH = _WIDTH
#: The colour of a reference line (a random baseline, a zero).
REFERENCE_GREY = _GREY
#: Draw under the report's rc settings: ``styled(draw)(...)`` (see :func:`_style`).
styled = _style
#: A figure of a size in inches (see :func:`_figure`).
new_figure = _figure
#: A figure as a standalone SVG document, its ids salted with a key (see :func:`_svg`).
figure_svg = _svg
#: At most :data:`MAX_POINTS` points of a curve (see :func:`_sampled`).
sampled = _sampled
#: A label cut to a length, with an ellipsis (see :func:`_short`).
short_label = _short
