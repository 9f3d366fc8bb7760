"""Every chart of a results folder, drawn with matplotlib as SVG text: the one module the HTML
report (:mod:`harness.report_html`) and the dashboard draw their charts with, so both show the same.

Each ``*_svg`` function takes plain data (a results folder's tables, as
:mod:`harness.results_reader` reads them, or arrays) and returns a standalone SVG document;
:func:`inline_svg` turns one into an element to place inside an HTML page. The charts:

* :func:`means_svg` - each system's mean per metric, with its interval (a dot and a bar);
* :func:`differences_svg` - one comparison's per-query differences ``a - b``, sorted, with the mean
  difference and its interval as a band;
* :func:`facet_bars_svg` - one facet: per value, each system's mean per metric, with its interval;
* :func:`risk_coverage_svg` - the risk–coverage curve of every system, its AURC in the legend;
* :func:`categories_svg` - the failed queries of each system by diagnosis category.

The output is a pure function of the data: the SVG ids are salted with the chart's own key
(``svg.hashsalt``), so the same data gives the same bytes and two charts of one page never share an
id; no date is written; text stays text (``svg.fonttype`` ``none``: smaller, and no font is
embedded or fetched). Large inputs are aggregated, not drawn point by point: a sorted difference
curve or a risk–coverage curve is drawn through at most :data:`MAX_POINTS` points.

matplotlib is the optional ``report`` extra; it is imported when a chart is first drawn, and its
absence is a :class:`~corpora.RetbenchError` saying how to install it (:func:`require_matplotlib`).
"""

from __future__ import annotations

import functools
import io
import math
import re
from collections.abc import Callable, Sequence
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from corpora import RetbenchError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["INSTALL_HINT", "MAX_POINTS", "categories_svg", "differences_svg", "facet_bars_svg", "inline_svg",
           "means_svg", "require_matplotlib", "risk_coverage_svg", "system_colors"]

INSTALL_HINT = "pip install 'retbench[report]'"
#: Points a curve is drawn through at most; beyond, it is sampled at evenly spaced positions.
MAX_POINTS = 200
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
    (:attr:`harness.report_view.ReportView.mean_intervals`; an empty bound draws no bar).
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
    ax.set_xlabel(f"share of the {n} queries, sorted by difference")
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
def risk_coverage_svg(curve: pd.DataFrame, summary: pd.DataFrame, *, key: str = "risk-coverage") -> str:
    """The risk–coverage curve of each system (``risk_coverage.csv``): the mean risk of the queries
    admitted, most confident first, against the share admitted; one line per system, its AURC
    (``risk_coverage_summary.csv``) in the legend, and the random baseline (the mean risk) dotted."""
    systems = [str(s) for s in summary["system"]]
    colors = system_colors(systems)
    figure = _figure(_WIDTH, 3.2)
    ax = figure.add_subplot()
    for row in summary.itertuples(index=False):
        mine = curve[curve["system"] == row.system]
        x, y = _sampled(mine["coverage"].to_numpy(dtype=float), mine["risk"].to_numpy(dtype=float))
        # a point per group of equal confidence, joined: nothing is drawn below the first group's coverage
        ax.plot(x, y, color=colors[str(row.system)], linewidth=1.4, marker="o" if len(x) <= 30 else None,
                markersize=3, label=f"{_short(str(row.system))} (AURC {row.aurc:.3f}, E-AURC {row.e_aurc:.3f})")
    if not summary.empty:
        ax.axhline(float(summary["random_risk"].iloc[0]), color=_GREY, linewidth=0.8, linestyle=":",
                   label="random (mean risk)")
        metric = str(summary["risk_metric"].iloc[0])
        ax.set_ylabel(f"risk = 1 − {metric}")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("coverage (share of the queries admitted, most confident first)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.grid(color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
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
