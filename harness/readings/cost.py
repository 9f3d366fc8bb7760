"""What each retriever costs, beside what it finds: the cost reading (``efficiency.csv`` and
``latency_comparisons.csv``).

The numbers are measured where the systems are fitted and searched (:mod:`harness.engines.cost` says
how: the fit and the batch search, the peak memory of each, the index size, the latency of single
queries in rounds); this module makes them tables, records the machine and the protocol in the
manifest (``cost``), and shows them:

``efficiency.csv`` (:data:`EFFICIENCY_COLUMNS`), one row per system
    ``includes`` (the children whose cost a fusion's includes), the fit (``fit_seconds``,
    ``docs_per_second``, ``fit_from_cache``, ``fit_memory_bytes``), the index (``index_bytes``), the
    batch search (``search_seconds``, ``queries_per_second``, ``search_memory_bytes``) and the latency
    of single queries (``latency_p50_ms``, ``latency_p95_ms``, ``latency_p99_ms``: each percentile's
    median over the rounds; ``latency_p95_low_ms``/``latency_p95_high_ms``: the rounds' lowest and
    highest p95), and, for a system fitted and searched on an engine's workers (``--engine dask``),
    the workers' own compute seconds apart from the client's wall time (``worker_fit_seconds``,
    ``worker_search_seconds``: summed over the workers; ``worker_fit_slowest_seconds``,
    ``worker_search_slowest_seconds``: the worker that computed longest; :func:`worker_times`). An
    empty cell is unknown (an index a plugin does not declare, memory where it cannot be measured, a
    stored run's latency) or, in the workers' columns, nothing of the system ran on workers; never a
    guess.
``latency_comparisons.csv`` (:data:`LATENCY_COLUMNS`)
    The pairs of the comparisons (each system against the baseline, else every pair): the ratio of
    a's latency to b's, its interval and verdict (:func:`harness.engines.cost.compare_latency`).

Both are measurements of one run on one machine: they are the only files of a results folder that
change from run to run (with the manifest, which hashes them), and their section of the text report
is printed by ``bench compare`` but kept out of ``report.txt`` (``measured``). The HTML report draws
every metric against p95 latency and against index size with the Pareto front marked; Markdown and
LaTeX get the table; ``bench serve`` gives each system's ``cost`` and a section of the run's page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from html import escape
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from corpora.wording import counted
from harness.engines.cost import (LATENCY_TOLERANCE, LATENCY_VERDICTS, WARM_UP, SystemCost, compare_latency, machine,
                               memory_method)
from harness.core.readings import Reading, ReadingInputs, ServeView, SuiteInputs, SuiteStep, register
from harness.engines.cost import descendants
from retrievers.sharding import SHARDS_ATTRIBUTE

if TYPE_CHECKING:
    from harness.core.record import CompareRecord
    from harness.report.view import ReportView

__all__ = ["EFFICIENCY_COLUMNS", "LATENCY_COLUMNS", "WORKER_COLUMNS", "compute", "efficiency_frame", "latency_frame",
           "latency_of", "pareto_front", "same_machine", "worker_times"]

EFFICIENCY_COLUMNS = ["system", "includes", "n_documents", "fit_seconds", "docs_per_second", "fit_from_cache",
                      "fit_memory_bytes", "index_bytes", "n_queries", "search_seconds", "queries_per_second",
                      "search_memory_bytes", "latency_queries", "latency_rounds", "latency_p50_ms", "latency_p95_ms",
                      "latency_p99_ms", "latency_p95_low_ms", "latency_p95_high_ms", "worker_fit_seconds",
                      "worker_fit_slowest_seconds", "worker_search_seconds", "worker_search_slowest_seconds"]
#: The workers' columns (a system run on an engine's workers: :func:`worker_times`).
WORKER_COLUMNS = EFFICIENCY_COLUMNS[-4:]
_INTEGERS = ("n_documents", "fit_memory_bytes", "index_bytes", "n_queries", "search_memory_bytes", "latency_queries",
             "latency_rounds")
LATENCY_COLUMNS = ["system_a", "system_b", "ratio", "ci_low", "ci_high", "tolerance", "n_queries", "verdict"]


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else math.nan


def _latency_row(cost: SystemCost) -> dict[str, Any]:
    if cost.latencies is None or not cost.latencies.size:
        return {"latency_queries": pd.NA, "latency_rounds": pd.NA}
    ms = cost.latencies * 1000.0
    rounds = np.percentile(ms, [50, 95, 99], axis=1)  # (percentile, round)
    p50, p95, p99 = np.median(rounds, axis=1)
    return {"latency_queries": ms.shape[1], "latency_rounds": ms.shape[0], "latency_p50_ms": p50,
            "latency_p95_ms": p95, "latency_p99_ms": p99, "latency_p95_low_ms": rounds[1].min(),
            "latency_p95_high_ms": rounds[1].max()}


def worker_times(retriever: Any) -> dict[str, dict[str, float]]:
    """The seconds an engine's workers computed for ``retriever`` and the retrievers it includes, by
    step (``fit``, ``search``) and worker (:meth:`retrievers.sharding.FittedElsewhere.worker_seconds`:
    a fit shared by two systems, and every search it answered, count for each system that holds it);
    empty when none of them ran on workers."""
    placed = {id(found): found for one in (retriever, *descendants(retriever))
              if (found := one.__dict__.get(SHARDS_ATTRIBUTE)) is not None}
    total: dict[str, dict[str, float]] = {}
    for elsewhere in placed.values():
        for step, workers in elsewhere.worker_seconds().items():
            mine = total.setdefault(step, {})
            for worker, seconds in workers.items():
                mine[worker] = mine.get(worker, 0.0) + seconds
    return total


def _worker_row(retriever: Any) -> dict[str, Any]:
    times = worker_times(retriever) if retriever is not None else {}
    row: dict[str, Any] = {}
    for step in ("fit", "search"):
        workers = times.get(step)
        if workers:
            row[f"worker_{step}_seconds"] = sum(workers.values())
            row[f"worker_{step}_slowest_seconds"] = max(workers.values())
    return row


def efficiency_frame(systems: Sequence[Any]) -> pd.DataFrame:
    """``efficiency.csv`` of ``systems`` (each with its ``label`` and ``cost``; one without is left out)."""
    rows = []
    for system in systems:
        cost: SystemCost | None = system.cost
        if cost is None:
            continue
        rows.append({"system": system.label, "includes": ";".join(cost.children), "n_documents": cost.n_documents,
                     "fit_seconds": cost.fit_seconds, "docs_per_second": _rate(cost.n_documents, cost.fit_seconds),
                     "fit_from_cache": "true" if cost.fit_from_cache else "false",
                     "fit_memory_bytes": cost.fit_memory if cost.fit_memory is not None else pd.NA,
                     "index_bytes": cost.index_bytes if cost.index_bytes is not None else pd.NA,
                     "n_queries": cost.n_queries, "search_seconds": cost.search_seconds,
                     "queries_per_second": _rate(cost.n_queries, cost.search_seconds),
                     "search_memory_bytes": cost.search_memory if cost.search_memory is not None else pd.NA,
                     **_latency_row(cost), **_worker_row(getattr(system, "retriever", None))})
    frame = pd.DataFrame(rows, columns=EFFICIENCY_COLUMNS)
    for column in _INTEGERS:
        frame[column] = frame[column].astype("Int64")
    return frame


def latency_frame(systems: Sequence[Any], pairs: Sequence[tuple[str, str]], samples: int, seed: int,
                  confidence: float) -> pd.DataFrame:
    """``latency_comparisons.csv``: each of ``pairs`` whose systems both have latencies of the same queries."""
    costs = {s.label: s.cost for s in systems if s.cost is not None and s.cost.latencies is not None}
    rows = []
    for a, b in pairs:
        if a in costs and b in costs and costs[a].latency_query_ids == costs[b].latency_query_ids:
            found = compare_latency(a, b, costs[a].latencies, costs[b].latencies, samples, seed, confidence)
            rows.append({c: getattr(found, c) for c in LATENCY_COLUMNS})
    frame = pd.DataFrame(rows, columns=LATENCY_COLUMNS)
    frame["n_queries"] = frame["n_queries"].astype("Int64")
    return frame


def compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    """The two tables of a comparison's systems; the latency pairs are the comparisons' (each system
    against the baseline, else every pair), compared with the ``statistics`` group's resamples, seed
    and confidence."""
    config, labels = inputs.config, [s.label for s in inputs.systems]
    if config.baseline is not None:
        pairs = [(label, config.baseline) for label in labels if label != config.baseline]
    else:
        pairs = list(combinations(labels, 2))
    statistics = config.statistics
    return {"efficiency": efficiency_frame(inputs.systems),
            "latency_comparisons": latency_frame(inputs.systems, pairs, statistics.bootstrap_samples,
                                                 statistics.seed, statistics.confidence)}


def manifest_entries(record: CompareRecord) -> dict[str, Any]:
    """The manifest's ``cost``: the machine, how memory was measured, the latency protocol and what the
    verdicts mean. The same on every run on one machine (no time is in it)."""
    measured = [s.cost for s in record.systems if s.cost is not None and s.cost.latencies is not None]
    latency: dict[str, Any] = {"measured": bool(measured)}
    if measured:
        latency.update(queries=int(measured[0].latencies.shape[1]), rounds=int(measured[0].latencies.shape[0]),
                       warm_up=WARM_UP, sample=f"seeded (seed {record.config.statistics.seed}) among the evaluated "
                                                "queries",
                       protocol="each query searched alone (one query per search call) at the comparison's depth; "
                                "systems take turns query by query, the first rotating; garbage collection paused "
                                "while a round is timed",
                       percentiles="each round's p50/p95/p99; the table gives their median over the rounds and the "
                                   "rounds' lowest and highest p95",
                       comparison=f"paired over the sampled queries: geometric mean of the per-query ratios a/b "
                                  f"(each query's median over the rounds), bootstrap interval over the queries; "
                                  f"tolerance = max({LATENCY_TOLERANCE:g}, the rounds' own disagreement)",
                       verdicts=dict(LATENCY_VERDICTS))
    return {"cost": {
        "machine": machine(record.engine),
        "memory": memory_method(),
        "index": "bytes the fitted index holds (Retriever.index_bytes: retbench's retrievers count their arrays, "
                 "a plugin declares its own or is unknown); a fusion's includes its children's",
        "batch": "fit and search timed as bench compare runs them: search is every evaluated query in one call",
        "latency": latency,
        "isolation": "every system runs in this one process, one after another",
        **({"workers": _WORKERS} if any(worker_times(s.retriever) for s in record.systems) else {}),
    }}


#: How the workers' columns are measured (the manifest's ``cost.workers``, where a system ran on workers).
_WORKERS = ("worker_*_seconds: the compute time of the tasks of each fit and search of the system's retrievers placed "
            "on the engine's workers (its own and those it includes), read from the scheduler's task stream (transfers "
            "and queueing left out): summed over the workers, and for the worker that computed longest; fit_seconds "
            "and search_seconds are the client's wall time, waiting on the workers included")


def manifest_shape() -> dict[str, Any]:
    """The shape :func:`manifest_entries` has, checked when a folder is opened: an object, or absent."""
    from harness.store.read import Maybe

    return {"cost": Maybe(dict)}


# ----- shown --------------------------------------------------------------------------------------


def size_text(value: object) -> str:
    """Bytes as a short size (``12.3 MiB``); ``unknown`` for a missing value."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    size = float(value)  # type: ignore[arg-type]
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"  # pragma: no cover


def _known(value: object) -> bool:
    return not (value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)))


def _fixed(value: object, digits: int = 1) -> str:
    return f"{float(value):,.{digits}f}" if _known(value) else "unknown"  # type: ignore[arg-type]


def _seconds(value: object) -> str:
    return f"{float(value):.3f}" if _known(value) else "unknown"  # type: ignore[arg-type]


def _latency(row: Any, column: str) -> str:
    value = getattr(row, column)
    return f"{float(value):.2f}" if _known(value) else "--"


def table_rows(frame: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The cost table every format shows: header and cells (sizes and rates readable, unknown said)."""
    header = ["system", "fit s", "docs/s", "index", "fit memory", "search memory", "queries/s", "p50 ms", "p95 ms",
              "p99 ms", "p95 rounds"]
    rows = []
    for row in frame.itertuples(index=False):
        fit = _seconds(row.fit_seconds) + (" (cache)" if row.fit_from_cache == "true" else "")
        spread = (f"{float(row.latency_p95_low_ms):.2f}–{float(row.latency_p95_high_ms):.2f}"
                  if _known(row.latency_p95_low_ms) else "--")
        label = str(row.system) + (f" (incl. {row.includes.replace(';', ', ')})"
                                   if isinstance(row.includes, str) and row.includes else "")
        rows.append([label, fit, _fixed(row.docs_per_second, 0), size_text(row.index_bytes),
                     size_text(row.fit_memory_bytes), size_text(row.search_memory_bytes),
                     _fixed(row.queries_per_second, 1), _latency(row, "latency_p50_ms"),
                     _latency(row, "latency_p95_ms"), _latency(row, "latency_p99_ms"), spread])
    return header, rows


def _verdict_lines(view: ReportView) -> list[str]:
    if not view.folder.holds(READING_PAIRS.file):
        return []
    pairs = view.folder.table(READING_PAIRS.name)
    return [f"{r.system_a} vs {r.system_b}: latency x{r.ratio:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}] -> {r.verdict}"
            for r in pairs.itertuples(index=False)]


#: What "incl." means in a row of the cost table (said wherever a fusion's row names its children).
INCLUDES_NOTE = ("incl. = a fusion's index size and latency count those children; a child fitted and searched for "
                 "an earlier row is not timed again in the fusion's fit and search")


def _protocol(view: ReportView, frame: pd.DataFrame | None = None) -> str:
    """How the latency was measured, and what "incl." means when a row of ``frame`` names children."""
    latency = view.manifest.get("cost", {}).get("latency", {})
    if not latency.get("measured"):
        said = "latency not measured"
    else:
        said = (f"latency: {counted(latency.get('queries'), 'query')} searched one at a time, "
                f"{counted(latency.get('rounds'), 'round')} after a warm-up; p95 rounds = the rounds' lowest–highest "
                "p95")
    includes = frame is not None and frame["includes"].map(lambda cell: isinstance(cell, str) and bool(cell)).any()
    return f"{said}; {INCLUDES_NOTE}" if includes else said


def text_section(frame: pd.DataFrame, view: ReportView) -> str:
    """The terminal's cost table and the latency verdicts (the times of this run on this machine)."""
    from harness.report.parts import text_table

    if frame.empty:
        return ""
    header, rows = table_rows(frame)
    lines = [f"cost on this machine ({_protocol(view, frame)}; unknown = not measurable, never guessed):"]
    lines.extend("  " + line for line in text_table(header, rows))
    lines.extend("  " + line for line in _verdict_lines(view))
    return "\n".join(lines)


def pareto_front(cost: Sequence[float], quality: Sequence[float]) -> list[int]:
    """Indices of the points no other point beats on both (lower or equal cost and higher quality, or
    lower cost and equal or higher quality), by cost ascending.

    >>> pareto_front([1.0, 2.0, 3.0, 0.5], [0.5, 0.7, 0.6, 0.1])
    [3, 0, 1]
    """
    order = sorted(range(len(cost)), key=lambda i: (cost[i], -quality[i]))
    front, best = [], -math.inf
    for i in order:
        if quality[i] > best:
            front.append(i)
            best = quality[i]
    return front


def cost_svg(efficiency: pd.DataFrame, summary: pd.DataFrame, metrics: Sequence[str], *, key: str = "cost") -> str:
    """Each metric against p95 latency (left) and against index size (right), one point per system
    with a known cost, the Pareto front (the systems nothing beats on both) joined and filled; ann-benchmarks'
    picture. A standalone SVG document (:mod:`harness.report.plots`)."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from harness.report import plots

    readable = {"latency_p95_ms": FuncFormatter(lambda value, _: f"{value:.3g}"),
                "index_bytes": FuncFormatter(lambda value, _: size_text(value))}

    def draw() -> str:
        merged = summary.merge(efficiency, on="system")
        systems = [str(s) for s in merged["system"]]
        colors = plots.system_colors(systems)
        shown = list(metrics)[: plots.MAX_PANELS // 2]
        figure = plots.new_figure(plots.CHART_WIDTH, 2.4 * len(shown))
        axes = figure.subplots(len(shown), 2, squeeze=False)
        for r, metric in enumerate(shown):
            for c, (column, label) in enumerate((("latency_p95_ms", "p95 latency (ms, log)"),
                                                 ("index_bytes", "index size (bytes, log)"))):
                ax = axes[r][c]
                known = merged[merged[column].notna()]
                x = known[column].to_numpy(dtype=float)
                y = known[metric].to_numpy(dtype=float)
                names = [str(s) for s in known["system"]]
                front = pareto_front(list(x), list(y))
                for i, name in enumerate(names):
                    on_front = i in front
                    ax.scatter([x[i]], [y[i]], s=36, color=colors[name] if on_front else "white",
                               edgecolors=colors[name], linewidths=1.4, zorder=3)
                if len(front) > 1:
                    ax.step(x[front], y[front], where="post", color=plots.REFERENCE_GREY, linewidth=0.9,
                            linestyle="--", zorder=2)
                if len(x) and (x > 0).all():
                    ax.set_xscale("log")
                    low, high = float(x.min()), float(x.max())
                    ax.set_xlim(low / 1.25, high * 1.25)
                    ax.set_xticks(np.geomspace(low, high, 3) if high > low else [low])  # three readable ticks
                    ax.xaxis.set_major_formatter(readable[column])
                    ax.xaxis.set_minor_formatter(NullFormatter())
                ax.set_xlabel(label)
                ax.set_ylabel(metric)
                ax.grid(color="#e5e5e5", linewidth=0.6)
                ax.set_axisbelow(True)
                if not len(x):
                    ax.text(0.5, 0.5, "unknown for every system", transform=ax.transAxes, ha="center",
                            color=plots.REFERENCE_GREY)
        handles = [Line2D([], [], marker="o", linestyle="", color=colors[name], label=plots.short_label(name))
                   for name in systems]
        handles += [Line2D([], [], color=plots.REFERENCE_GREY, linestyle="--", label="Pareto front (filled)"),
                    Line2D([], [], marker="o", linestyle="", markerfacecolor="white", color=plots.REFERENCE_GREY,
                           label="beaten on both (hollow)")]
        figure.legend(handles=handles, loc="outside lower center", ncols=min(4, len(handles)), frameon=False)
        return plots.figure_svg(figure, key)

    return plots.styled(draw)()


def html_body(frame: pd.DataFrame, view: ReportView) -> str:
    """The HTML report's section: how it was measured, the chart with the Pareto front, the table and
    the latency verdicts."""
    from harness.report.parts import html_cell, html_escape, html_figure, html_table

    if frame.empty:
        return '<p class="note">No cost was measured.</p>'
    setting = view.manifest.get("cost", {})
    where = setting.get("machine", {})
    note = (f'<p class="note">Measured on {html_escape(where.get("cpu", "an unrecorded machine"))} '
            f'({html_escape(where.get("usable_cores", "?"))} usable cores); {html_escape(_protocol(view, frame))}. Memory: '
            f'{html_escape(setting.get("memory", ""))}. Absolute times hold on this machine only; filled points '
            "are on the Pareto front (nothing is both cheaper and better).</p>")
    chart = html_figure(cost_svg(frame, view.summary, view.metrics),
                        "each metric against p95 latency and against index size; systems with an unknown cost are "
                        "left out of that panel")
    header, rows = table_rows(frame)
    cells = ["<tr>" + "".join(html_cell(cell, numeric=i > 0) for i, cell in enumerate(row)) + "</tr>"
             for row in rows]
    table = html_table(header, cells, numeric_from=1, id="cost-table")
    verdicts = _verdict_lines(view)
    listed = ("<ul>" + "".join(f"<li>{html_escape(line)}</li>" for line in verdicts) + "</ul>") if verdicts else ""
    return note + chart + table + listed


def md_body(frame: pd.DataFrame, view: ReportView) -> str:
    """Markdown: the table and the verdicts."""
    from harness.report.parts import md_row, md_text

    header, rows = table_rows(frame)
    lines = [md_text(f"On this machine; {_protocol(view, frame)}."), "", md_row(header),
             md_row(["---"] + ["---:"] * (len(header) - 1)), *(md_row([md_text(c) for c in row]) for row in rows)]
    lines += [""] + [f"- {md_text(line)}" for line in _verdict_lines(view)]
    return "\n".join(lines)


def latex_body(frame: pd.DataFrame, view: ReportView) -> str:
    """LaTeX: a booktabs table of the cost."""
    from harness.report.latex import tex

    header, rows = table_rows(frame)
    return "\n".join([r"\begin{table}[t]", r"\centering", r"\small",
                      rf"\caption{{What each system cost on this machine ({tex(_protocol(view, frame))}).}}",
                      r"\label{tab:retbench-cost}", r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
                      r"\toprule", " & ".join(tex(h) for h in header) + r" \\", r"\midrule",
                      *(" & ".join(tex(c) for c in row) + r" \\" for row in rows), r"\bottomrule",
                      r"\end{tabular}", r"\end{table}"])


# ----- bench gate --latency-margin ------------------------------------------------------------------


def latency_of(source: Any, system: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(``system``'s row of the cost table, or None when it has none; the machine it was measured on)
    from a results folder (:class:`~harness.store.read.ResultsFolder`) or a comparison just made
    (:class:`~harness.core.record.CompareRecord`): what :func:`harness.engines.cost.gate_latency` compares."""
    if hasattr(source, "holds"):
        frame = source.table(READING.name) if source.holds(READING.file) else None
        where = source.manifest.get("cost", {}).get("machine", {})
    else:
        frame = source.tables.get(READING.name)
        where = machine(source.engine)
    if frame is None:
        return None, where
    mine = frame[frame["system"] == system]
    return (mine.iloc[0].to_dict() if len(mine) else None), where


def same_machine(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two machine records name the same CPU, cores and BLAS threads (the times compare)."""
    keys = ("cpu", "cores", "usable_cores", "blas")
    return bool(a) and bool(b) and all(a.get(k) == b.get(k) for k in keys)


# ----- bench serve --------------------------------------------------------------------------------

_SERVED = {"fit_seconds": "fitSeconds", "index_bytes": "indexBytes", "queries_per_second": "queriesPerSecond",
           "latency_p50_ms": "latencyP50Ms", "latency_p95_ms": "latencyP95Ms", "latency_p99_ms": "latencyP99Ms"}


def served(folder: Any, system: str) -> dict[str, Any] | None:
    """``/metrics``'s ``cost`` of ``system``: its fit time, index size, throughput and latency
    percentiles (null when unknown), or None when the folder holds no cost."""
    if not folder.holds(READING.file):
        return None
    frame = folder.table(READING.name)
    mine = frame[frame["system"] == system]
    if not len(mine):
        return None
    (row,) = mine.to_dict("records")
    return {key: (None if not _known(row[column]) else
                  int(row[column]) if column == "index_bytes" else float(row[column]))
            for column, key in _SERVED.items()}


@cache
def served_model() -> type:
    """The pydantic model of ``cost`` (what ``/openapi.json`` documents)."""
    from pydantic import BaseModel, Field

    class Cost(BaseModel):
        fitSeconds: float | None
        indexBytes: int | None = Field(description="null: unknown")
        queriesPerSecond: float | None
        latencyP50Ms: float | None = Field(description="null: not measured")
        latencyP95Ms: float | None
        latencyP99Ms: float | None

    return Cost


def dashboard_section(metrics: Mapping[str, Any], number: Callable[[Any], str],
                      chart: Callable[[Callable[[], str]], str]) -> str:
    """The run page's section: each system's latency percentiles, throughput and index size."""
    systems = [s for s in metrics["systems"] if s.get("cost") is not None]
    if not systems:
        return ""

    def cell(value: Any, digits: int = 2) -> str:
        return "unknown" if value is None else f"{value:.{digits}f}"

    rows = "".join(
        f'<tr><td>{escape(s["system"])}</td>'
        f'<td class="n" data-value="{s["cost"]["latencyP50Ms"]}">{cell(s["cost"]["latencyP50Ms"])}</td>'
        f'<td class="n" data-value="{s["cost"]["latencyP95Ms"]}">{cell(s["cost"]["latencyP95Ms"])}</td>'
        f'<td class="n">{cell(s["cost"]["latencyP99Ms"])}</td><td class="n">{cell(s["cost"]["queriesPerSecond"], 1)}</td>'
        f'<td class="n">{escape(size_text(s["cost"]["indexBytes"]))}</td>'
        f'<td class="n">{cell(s["cost"]["fitSeconds"], 3)}</td></tr>' for s in systems)
    return ('<h2 id="cost">Cost (this run\'s machine)</h2><table><thead><tr><th>system</th><th class="n">p50 ms</th>'
            '<th class="n">p95 ms</th><th class="n">p99 ms</th><th class="n">queries/s</th><th class="n">index</th>'
            f'<th class="n">fit s</th></tr></thead><tbody>{rows}</tbody></table>')


# ----- suites: the table per collection and a macro row -------------------------------------------

#: The suite table's measured columns (each collection's, then their mean: the macro row).
SUITE_COLUMNS = ["fit_seconds", "index_bytes", "queries_per_second", "latency_p50_ms", "latency_p95_ms",
                 "latency_p99_ms"]


def suite_table(inputs: SuiteInputs) -> pd.DataFrame:
    """``suite_efficiency.csv`` (shown in the suite's Markdown and HTML reports; its text report, like
    ``report.txt``, holds no time): each collection's cost of each system (its results folder's table),
    then a ``macro`` row per system, the mean over the collections (each weighing the same, as the
    macro means do; empty where a collection's is unknown)."""
    from harness.store.read import open_results

    rows = []
    for collection in inputs.collections:
        folder = open_results(collection.folder)
        if not folder.holds(READING.file):
            continue
        frame = folder.table(READING.name)
        for row in frame.itertuples(index=False):
            rows.append({"collection": collection.name, "system": row.system,
                         **{c: float(getattr(row, c)) if _known(getattr(row, c)) else math.nan
                            for c in SUITE_COLUMNS}})
    table = pd.DataFrame(rows, columns=["collection", "system", *SUITE_COLUMNS])
    macro = [{"collection": "macro", "system": system,
              **{c: float(mine[c].mean()) if mine[c].notna().all() else math.nan for c in SUITE_COLUMNS}}
             for system in inputs.systems if len(mine := table[table["system"] == system])]
    return pd.concat([table, pd.DataFrame(macro, columns=table.columns)], ignore_index=True)


def _suite_rows(table: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    header = ["collection", "system", "fit s", "index", "queries/s", "p50 ms", "p95 ms", "p99 ms"]
    rows = [[str(r.collection), str(r.system), _seconds(r.fit_seconds), size_text(r.index_bytes),
             _fixed(r.queries_per_second, 1), _latency(r, "latency_p50_ms"), _latency(r, "latency_p95_ms"),
             _latency(r, "latency_p99_ms")] for r in table.itertuples(index=False)]
    return header, rows


def suite_markdown(table: pd.DataFrame, view: Any) -> str:
    """The suite's Markdown section: the cost table."""
    from harness.report.parts import md_row, md_text

    header, rows = _suite_rows(table)
    return "\n".join([md_row(header), md_row(["---", "---"] + ["---:"] * (len(header) - 2)),
                      *(md_row([md_text(c) for c in row]) for row in rows)])


def suite_html(table: pd.DataFrame, view: Any) -> str:
    """The suite's HTML section: the cost table."""
    from harness.report.parts import html_cell, html_table

    header, rows = _suite_rows(table)
    cells = ["<tr>" + "".join(html_cell(c, numeric=i > 1) for i, c in enumerate(row)) + "</tr>" for row in rows]
    return html_table(header, cells, numeric_from=2, id="suite-cost-table")


SUITE = SuiteStep("suite_efficiency.csv", suite_table,
                  record={"cost": "each collection's efficiency table, and per system the mean over the collections "
                                  "(macro); times of the machine in each collection's manifest"},
                  title="Cost (per collection and macro)", anchor="cost",
                  render={"md": suite_markdown, "html": suite_html}, key="cost")


READING = register(Reading(
    "efficiency", "efficiency.csv", ("system", "includes", "fit_from_cache"), _INTEGERS,
    columns=", ".join(EFFICIENCY_COLUMNS), compute=compute, record=manifest_entries, record_shape=manifest_shape,
    sections={"text": text_section}, render={"html": html_body, "md": md_body, "latex": latex_body},
    title="Cost", anchor="cost", order=95, measured=True, suite=SUITE,
    serve=ServeView("cost", served, served_model, dashboard_section)))
READING_PAIRS = register(Reading(
    "latency_comparisons", "latency_comparisons.csv", ("system_a", "system_b", "verdict"), ("n_queries",),
    columns=", ".join(LATENCY_COLUMNS), order=96, measured=True))
