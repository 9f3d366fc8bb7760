"""Risk–coverage: does a retriever know when it fails? Selective risk as queries are admitted by confidence.

Confidence of a query (:func:`query_confidence`, :func:`system_confidence`; the choices are the
``Readings`` option group's, :data:`harness.core.options.CONFIDENCES`)
    read off the run (``score``, the default, or ``margin``) or the retriever's own
    ``confidence(queries)``; ``-inf`` when there is none, so the query is admitted last. NaN is an error.
Risk of a query
    ``1 - value`` of the chosen metric (every retbench metric lies in [0, 1]).
The curve (:func:`risk_coverage_curve`)
    Queries sorted by confidence, highest first; queries of equal confidence enter together, so
    there is one point per distinct confidence c: ``coverage`` = share of the n queries with
    confidence >= c, ``risk`` = their mean risk (the selective risk), ``threshold`` = c.
AURC (:func:`aurc`)
    Geifman, Uziel and El-Yaniv (2019), *Bias-Reduced Uncertainty Estimation for Deep Neural
    Classifiers* (ICLR): the area under the risk–coverage curve, computed as the mean of the
    selective risk over the n coverage points 1/n, ..., n/n. With queries sorted by confidence
    descending, ``AURC = (1/n) sum_{i=1..n} R_i / i`` with ``R_i`` the risk summed over the first i
    queries. Ties: inside a group of equally confident queries no order is right, so each of its
    queries counts with the group's mean risk, which makes ``R_i / i`` the *expected* selective
    risk over every order of the tied queries (the risk sum rises linearly across a tie, as a ROC
    curve crosses a tie on a diagonal). At a group's end ``R_i / i`` is the curve's point exactly;
    without ties this is Geifman et al.'s AURC as is. Constant confidence gives the mean risk;
    any confidence that orders the queries by risk gives the oracle.
Oracle AURC (:func:`oracle_aurc`), E-AURC, random baseline, Kendall's tau
    Oracle: the AURC of the queries sorted by risk ascending (ties cannot change it). E-AURC =
    AURC - oracle AURC (Geifman et al.'s excess AURC: 0 is a perfect ranking of the failures). The
    random baseline is the mean risk, the expected AURC of a confidence unrelated to risk (and the
    selective risk at full coverage). ``kendall_tau`` is Kendall's tau-b between confidence and the
    metric value (:func:`kendall_tau_b`, equal to :func:`scipy.stats.kendalltau`): positive when
    confident queries score higher; NaN when either is constant.

The reading (one file, registered like any other: docs/adding-a-reading.md)
    :func:`compute` gives ``risk_coverage.csv`` (the curves) and ``risk_coverage_summary.csv`` (the
    summaries) from a comparison's per-query values and runs, as the ``Readings`` option group's
    ``risk_metric`` and ``confidence_from`` say; :func:`manifest_entries` is the manifest's record of
    how; :func:`text_section` and :func:`html_body` its sections of the reports; :func:`served`,
    :func:`served_model` and :func:`dashboard_section` its part of ``bench serve`` (``riskCoverage``
    in each system of ``/metrics``, and the dashboard's chart and table).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from corpora.wording import counted
from corpora import Queries, Run
from harness.core.options import CONFIDENCES, OWN_CONFIDENCE
from harness.core.readings import Reading, ReadingInputs, ServeView, register
from harness.errors import RetbenchError, UnknownNameError
from retrievers import Retriever, RetrieverFailed

# The reports' and the store's helpers are imported where a section is rendered or a folder checked, so
# that computing a comparison loads none.
if TYPE_CHECKING:
    from harness.core.record import CompareRecord
    from harness.report.view import ReportView

__all__ = ["CURVE_COLUMNS", "SUMMARY_COLUMNS", "RiskCoverage", "aurc", "compute", "dashboard_section", "html_body", "query_confidence", "system_confidence",
           "kendall_tau_b", "manifest_entries", "manifest_shape", "oracle_aurc", "risk_coverage", "risk_coverage_curve",
           "risk_coverage_svg", "served", "served_model", "summarise", "text_section"]

def query_confidence(run: Run, query_ids: Sequence[str], kind: str = "score") -> np.ndarray:
    """One confidence per query of ``query_ids`` (see :data:`CONFIDENCES`); ``-inf`` when there is none.

    >>> run = Run.from_mapping({"q1": [("a", 3.0), ("b", 2.5)], "q2": [("c", 1.0)], "q3": []})
    >>> query_confidence(run, ["q1", "q2", "q3", "q4"]).tolist()
    [3.0, 1.0, -inf, -inf]
    >>> query_confidence(run, ["q1", "q2"], "margin").tolist()
    [0.5, -inf]
    """
    if kind not in CONFIDENCES:
        raise UnknownNameError("confidence", kind, list(CONFIDENCES))
    needed = 1 if kind == "score" else 2
    position = {q: j for j, q in enumerate(run.query_ids)}
    rows = np.array([position.get(q, -1) for q in query_ids], dtype=np.int64)
    confidence = np.full(len(query_ids), -np.inf)
    if not len(run.query_ids):
        return confidence
    held = rows >= 0
    starts = np.where(held, run.offsets[np.maximum(rows, 0)], 0)
    lengths = np.where(held, run.offsets[np.maximum(rows, 0) + 1] - starts, 0)
    answered = lengths >= needed
    top = run.scores[starts[answered]]
    confidence[answered] = top if kind == "score" else top - run.scores[starts[answered] + 1]
    return confidence


def system_confidence(retriever: Retriever, run_confidence: np.ndarray, queries: Queries,
                      kind: str) -> tuple[np.ndarray, str]:
    """(one confidence per query, where it came from): the retriever's own ``confidence(queries)``
    when it defines one (checked: one finite-or-infinite number per query, in the order given), else
    ``run_confidence`` (read off its run as ``kind``)."""
    try:
        given = retriever.confidence(queries)  # the default (retrievers.protocols): None, none of its own
    except RetbenchError:
        raise
    except (Exception, SystemExit) as exc:  # the retriever's mistake (sys.exit too): named like one in fit or search
        raise RetrieverFailed(retriever.label, "confidence", exc) from exc
    if given is None:
        return run_confidence, kind
    try:
        values = np.asarray(given, dtype=np.float64)
    except (TypeError, ValueError):
        raise RetbenchError(f"retriever {retriever.label!r}: confidence(queries) returned a "
                            f"{type(given).__name__} that is not numbers. Fix: return one float per query, in the "
                            "order of queries.ids") from None
    if values.shape != (len(queries),):
        raise RetbenchError(f"retriever {retriever.label!r}: confidence(queries) returned shape {values.shape} for "
                            f"{counted(len(queries), 'query')}. Fix: return one float per query, in the order of "
                            "queries.ids")
    return values, OWN_CONFIDENCE


#: Columns of the curve (``risk_coverage.csv``).
CURVE_COLUMNS = ["system", "coverage", "risk", "threshold"]
#: Columns of the per-system summary.
SUMMARY_COLUMNS = ["system", "confidence", "risk_metric", "n_queries", "aurc", "oracle_aurc", "e_aurc",
                   "random_risk", "kendall_tau"]


def _checked(confidence: np.ndarray, risk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    confidence = np.asarray(confidence, dtype=np.float64)
    risk = np.asarray(risk, dtype=np.float64)
    if confidence.shape != risk.shape or confidence.ndim != 1 or len(risk) == 0:
        raise ValueError("confidence and risk must be 1-d arrays of the same non-zero length")
    if np.isnan(confidence).any() or not np.isfinite(risk).all():
        raise ValueError("confidence must not be NaN and risk must be finite")
    return confidence, risk


def _sorted_groups(confidence: np.ndarray, risk: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(confidence, risk) sorted by confidence descending (ties in input order), and the start of each tie group."""
    order = np.argsort(-confidence, kind="stable")
    sorted_confidence, sorted_risk = confidence[order], risk[order]
    starts = np.flatnonzero(np.r_[True, sorted_confidence[1:] != sorted_confidence[:-1]])
    return sorted_confidence, sorted_risk, starts


def risk_coverage_curve(confidence: np.ndarray, risk: np.ndarray) -> pd.DataFrame:
    """One row per distinct confidence, highest first: ``coverage``, ``risk`` (selective), ``threshold``.

    >>> risk_coverage_curve(np.array([0.9, 0.5, 0.5]), np.array([0.0, 1.0, 0.5])).values.tolist()
    [[0.3333333333333333, 0.0, 0.9], [1.0, 0.5, 0.5]]
    """
    confidence, risk = _checked(confidence, risk)
    sorted_confidence, sorted_risk, starts = _sorted_groups(confidence, risk)
    ends = np.r_[starts[1:], len(risk)]  # queries admitted once each group is in
    admitted_risk = np.cumsum(sorted_risk)[ends - 1]
    return pd.DataFrame({"coverage": ends / len(risk), "risk": admitted_risk / ends,
                         "threshold": sorted_confidence[starts]})


def aurc(confidence: np.ndarray, risk: np.ndarray) -> float:
    """Area under the risk–coverage curve, ties as the module docstring defines.

    >>> round(aurc(np.array([3.0, 2.0, 1.0]), np.array([0.0, 1.0, 1.0])), 6)  # (0 + 1/2 + 2/3) / 3
    0.388889
    >>> round(aurc(np.array([1.0, 1.0, 1.0]), np.array([0.0, 1.0, 1.0])), 6)  # one tie group: the mean risk
    0.666667
    """
    confidence, risk = _checked(confidence, risk)
    _, sorted_risk, starts = _sorted_groups(confidence, risk)
    sizes = np.diff(np.r_[starts, len(risk)])
    group_mean = np.add.reduceat(sorted_risk, starts) / sizes
    expected = np.repeat(group_mean, sizes)
    return float(np.mean(np.cumsum(expected) / np.arange(1, len(risk) + 1)))


def oracle_aurc(risk: np.ndarray) -> float:
    """The AURC of a confidence that admits the queries by risk, lowest first.

    >>> round(oracle_aurc(np.array([1.0, 0.0, 1.0])), 6)  # (0 + 1/2 + 2/3) / 3
    0.388889
    """
    ordered = np.sort(np.asarray(risk, dtype=np.float64))
    return float(np.mean(np.cumsum(ordered) / np.arange(1, len(ordered) + 1)))


def _tied_pairs(sorted_values: np.ndarray, new_run: np.ndarray | None = None) -> int:
    """Pairs inside runs of equal values of a sorted array (``new_run``: where a run starts, if given)."""
    starts = np.flatnonzero(new_run if new_run is not None else np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    sizes = np.diff(np.r_[starts, len(sorted_values)]).astype(np.int64)
    return int((sizes * (sizes - 1) // 2).sum())


def _inversions(values: np.ndarray) -> int:
    """Pairs i < j with ``values[i] > values[j]`` (strictly), for non-negative integers, in O(n log^2 n).

    A bottom-up merge sort whose every level is vectorised: the blocks of a level are told apart by
    adding ``block * span`` to the values, so one global ``searchsorted`` counts, for every element of
    each right half, the elements of its left half above it, and one global sort merges the halves.

    >>> _inversions(np.array([2, 0, 1, 1])), _inversions(np.array([0, 1, 2]))
    (3, 0)
    """
    current = np.asarray(values, dtype=np.int64)
    n = len(current)
    span = int(current.max(initial=0)) + 1
    position = np.arange(n, dtype=np.int64)
    count = 0
    width = 1
    while width < n:
        block = position // (2 * width)
        keys = block * span + current
        left = (position % (2 * width)) < width
        left_keys = keys[left]  # sorted: each left half is sorted, and blocks increase
        right_block, right_keys = block[~left], keys[~left]
        block_end = np.searchsorted(left_keys, (right_block + 1) * span, side="left")
        count += int((block_end - np.searchsorted(left_keys, right_keys, side="right")).sum())
        current = np.sort(keys) - block * span  # each block keeps its positions, now merged
        width *= 2
    return count


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of paired samples, as :func:`scipy.stats.kendalltau` (the tests compare the two).

    ``(n_c - n_d) / sqrt((n_0 - n_x) (n_0 - n_y))``, with ``n_0 = n (n - 1) / 2`` pairs, ``n_x`` and
    ``n_y`` the pairs tied in x and in y, and ``n_c - n_d = n_0 - n_x - n_y + n_xy - 2 n_d`` (``n_xy``
    tied in both; ``n_d`` the discordant pairs, the inversions of y once sorted by x, then y). NaN
    when x or y is constant (or n < 2). -inf is a value like any other. Why not scipy: importing
    scipy.stats takes about a second, more than a comparison of the bundled corpus.

    >>> kendall_tau_b(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]))  # 2 concordant, 1 discordant
    0.3333333333333333
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(x)
    pairs = n * (n - 1) // 2
    order = np.lexsort((y, x))
    xs, ys = x[order], y[order]
    x_ties = _tied_pairs(xs)
    both_ties = _tied_pairs(xs, np.r_[True, (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])])
    y_ties = _tied_pairs(np.sort(y))
    if n < 2 or x_ties == pairs or y_ties == pairs:
        return math.nan
    discordant = _inversions(np.unique(ys, return_inverse=True)[1].ravel())
    concordant_minus_discordant = pairs - x_ties - y_ties + both_ties - 2 * discordant
    return concordant_minus_discordant / math.sqrt((pairs - x_ties) * (pairs - y_ties))


@dataclass(frozen=True)
class RiskCoverage:
    """One system's risk–coverage numbers (the last six of :data:`SUMMARY_COLUMNS`)."""

    n_queries: int
    aurc: float
    oracle_aurc: float
    e_aurc: float
    random_risk: float
    kendall_tau: float


def summarise(confidence: np.ndarray, values: np.ndarray) -> RiskCoverage:
    """AURC, oracle AURC, E-AURC, random baseline and Kendall's tau-b from per-query confidence and metric values."""
    values = np.asarray(values, dtype=np.float64)
    confidence, risk = _checked(confidence, 1.0 - values)
    area, oracle = aurc(confidence, risk), oracle_aurc(risk)
    return RiskCoverage(len(risk), area, oracle, area - oracle, float(np.mean(risk)), kendall_tau_b(confidence, values))


def risk_coverage(per_query: pd.DataFrame, metric: str, confidences: Mapping[str, np.ndarray],
                  kinds: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The curves (:data:`CURVE_COLUMNS`) and summaries (:data:`SUMMARY_COLUMNS`) of every system.

    ``per_query``: ``system``, ``query_id`` and the ``metric`` column (``per_query.csv``);
    ``confidences[system]``: one value per row of that system, in ``per_query``'s order;
    ``kinds[system]``: where that confidence came from (a key of :data:`CONFIDENCES`, or the
    retriever's own), written in the summary's ``confidence`` column (default ``"given"``).
    Systems in ``per_query``'s order; a system without a confidence is an error.
    """
    curves, summaries = [], []
    for system in dict.fromkeys(per_query["system"]):
        values = per_query.loc[per_query["system"] == system, metric].to_numpy(dtype=np.float64)
        if system not in confidences:
            raise ValueError(f"no confidence given for system {system!r}")
        confidence = np.asarray(confidences[system], dtype=np.float64)
        if confidence.shape != values.shape:
            raise RetbenchError(f"system {system!r}: {counted(confidence.size, 'confidence')} for "
                                f"{counted(values.size, 'query')}. "
                                "Fix: return one confidence per query, in the order of the queries given")
        if np.isnan(confidence).any():
            raise RetbenchError(f"system {system!r}: a confidence is NaN (query "
                                f"{per_query.loc[per_query['system'] == system, 'query_id'].iloc[int(np.argmax(np.isnan(confidence)))]!r}). "
                                "Fix: give every query a number (-inf for 'no confidence at all')")
        curve = risk_coverage_curve(confidence, 1.0 - values)
        curve.insert(0, "system", system)
        curves.append(curve)
        kind = (kinds or {}).get(system, "given")
        summaries.append({"system": system, "confidence": kind, "risk_metric": metric,
                          **asdict(summarise(confidence, values))})
    curve_frame = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=CURVE_COLUMNS)
    return curve_frame[CURVE_COLUMNS], pd.DataFrame(summaries, columns=SUMMARY_COLUMNS)


# ----- the reading: computed, recorded, shown -------------------------------------------------------


def compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    """The curves and summaries of a comparison's systems: risk = 1 - the ``Readings`` group's
    ``risk_metric`` (None: the first metric), each system's confidence its retriever's own when it
    defines ``confidence(queries)``, else the one ``confidence_from`` reads off its run."""
    readings = inputs.config.readings
    kind, query_ids = readings.confidence_from, list(inputs.queries.ids)
    confidences: dict[str, np.ndarray] = {}
    kinds: dict[str, str] = {}
    for system in inputs.systems:
        confidences[system.label], kinds[system.label] = system_confidence(
            system.retriever, query_confidence(system.run, query_ids, kind), inputs.queries, kind)
    curve, summary = risk_coverage(inputs.per_query, readings.risk_metric or list(inputs.config.metrics)[0],
                                   confidences, kinds)
    return {"risk_coverage": curve, "risk_coverage_summary": summary}


def manifest_entries(record: CompareRecord) -> dict[str, Any]:
    """The manifest's ``risk_coverage``: the risk, each system's confidence and what each kind means, the ties."""
    summary = record.table("risk_coverage_summary")
    return {"risk_coverage": {
        "risk": f"1 - {record.config.readings.risk_metric}",
        "confidence": dict(zip(summary["system"], summary["confidence"])),
        "confidences": {**CONFIDENCES, OWN_CONFIDENCE: "the retriever's own confidence(queries)"},
        "ties": "queries of equal confidence enter together; AURC counts each with its group's mean risk "
                "(the expectation over the orders of the tied queries)",
    }}


def manifest_shape() -> dict[str, Any]:
    """The shape :func:`manifest_entries` has, checked when a folder is opened: an object, or absent."""
    from harness.store.read import Maybe

    return {"risk_coverage": Maybe(dict)}


def text_section(summary: pd.DataFrame, view: ReportView) -> str:
    """The text report's section, heading included: one line per system (AURC, the oracle's, E-AURC,
    the random baseline and Kendall's tau); nothing when no system has a curve."""
    from harness.report.parts import text_table

    if summary.empty:
        return ""
    sources = sorted(set(summary["confidence"]))
    said = "; ".join(f"{s} = {CONFIDENCES.get(s, 'its own confidence(queries)')}" for s in sources)
    rows = [[row.system, row.confidence, f"{row.aurc:.3f}", f"{row.oracle_aurc:.3f}", f"{row.e_aurc:.3f}",
             f"{row.random_risk:.3f}", "--" if math.isnan(row.kendall_tau) else f"{row.kendall_tau:+.3f}"]
            for row in summary.itertuples(index=False)]
    lines = [f"risk–coverage (risk = 1 - {summary['risk_metric'].iloc[0]}; confidence: {said}; equal confidences "
             "enter together; lower AURC is better, E-AURC = AURC - oracle):"]
    lines.extend("  " + line for line in text_table(["system", "confidence", "AURC", "oracle", "E-AURC", "random",
                                                      "Kendall tau"], rows, right={2, 3, 4, 5, 6}))
    return "\n".join(lines)


def risk_coverage_svg(curve: pd.DataFrame, summary: pd.DataFrame, *, key: str = "risk-coverage") -> str:
    """The curve of each system (``risk_coverage.csv``): the mean risk of the queries admitted, most
    confident first, against the share admitted; one line per system, its AURC
    (``risk_coverage_summary.csv``) in the legend, and the random baseline (the mean risk) dotted.
    A standalone SVG document, drawn as every chart of the reports is (:mod:`harness.report.plots`)."""
    from harness.report import plots

    def draw() -> str:
        systems = [str(s) for s in summary["system"]]
        colors = plots.system_colors(systems)
        figure = plots.new_figure(plots.CHART_WIDTH, 3.2)
        ax = figure.add_subplot()
        for row in summary.itertuples(index=False):
            mine = curve[curve["system"] == row.system]
            x, y = plots.sampled(mine["coverage"].to_numpy(dtype=float), mine["risk"].to_numpy(dtype=float))
            # a point per group of equal confidence, joined: nothing is drawn below the first group's coverage
            ax.plot(x, y, color=colors[str(row.system)], linewidth=1.4, marker="o" if len(x) <= 30 else None,
                    markersize=3,
                    label=f"{plots.short_label(str(row.system))} (AURC {row.aurc:.3f}, E-AURC {row.e_aurc:.3f})")
        if not summary.empty:
            ax.axhline(float(summary["random_risk"].iloc[0]), color=plots.REFERENCE_GREY, linewidth=0.8,
                       linestyle=":", label="random (mean risk)")
            metric = str(summary["risk_metric"].iloc[0])
            ax.set_ylabel(f"risk = 1 − {metric}")
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(bottom=0.0)
        ax.set_xlabel("coverage (share of the queries admitted, most confident first)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        ax.grid(color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
        return plots.figure_svg(figure, key)

    return plots.styled(draw)()


def html_body(summary: pd.DataFrame, view: ReportView) -> str:
    """The HTML report's section: how the risk and the confidence were read, the curves with each
    system's AURC in the legend, and the table of the summary."""
    from harness.report.parts import html_cell, html_escape, html_figure, html_table
    from harness.report.view import number

    if summary.empty:
        return '<p class="note">No risk–coverage was computed.</p>'
    setting = view.manifest["risk_coverage"]
    sources = setting.get("confidences", {})
    said = "; ".join(f"{html_escape(name)} = {html_escape(sources.get(name, name))}"
                     for name in dict.fromkeys(summary["confidence"]))
    note = (f'<p class="note">Risk = {html_escape(setting["risk"])}; confidence: {said}. Queries are admitted most '
            f"confident first ({html_escape(setting.get('ties', ''))}); lower AURC is better, E-AURC = AURC − oracle "
            "AURC, random = the mean risk (a confidence unrelated to risk).</p>")
    chart = html_figure(risk_coverage_svg(view.folder.table("risk_coverage"), summary))
    rows = ["<tr>" + "".join([
        html_cell(r.system), html_cell(r.confidence),
        html_cell(number(r.aurc), numeric=True, system=r.system, field="aurc"),
        html_cell(number(r.oracle_aurc), numeric=True), html_cell(number(r.e_aurc), numeric=True),
        html_cell(number(r.random_risk), numeric=True), html_cell(number(r.kendall_tau, sign=True), numeric=True)])
        + "</tr>" for r in summary.itertuples(index=False)]
    table = html_table(["system", "confidence", "AURC", "oracle", "E-AURC", "random", "Kendall tau"], rows,
                       numeric_from=2, id="risk-coverage-table")
    return note + chart + table


def served(folder: Any, system: str) -> dict[str, Any] | None:
    """``/metrics``'s ``riskCoverage`` of ``system``: its summary's numbers and its curve (columns), or
    None when it has none."""
    summary = folder.table("risk_coverage_summary")
    mine = summary[summary["system"] == system]
    if not len(mine):
        return None
    curve = folder.table("risk_coverage")
    points = curve[curve["system"] == system]
    (numbers,) = mine.drop(columns=["system"]).to_dict("records")
    return {**numbers, "curve": {c: list(points[c]) for c in ("coverage", "risk", "threshold")}}


@cache
def served_model() -> type:
    """The pydantic model of ``riskCoverage`` (what ``/openapi.json`` documents)."""
    from pydantic import BaseModel, Field

    number = float | str | None  # a stored number: null when empty, "inf" / "-inf" when infinite

    class Curve(BaseModel):
        """The risk–coverage curve, one point per distinct confidence, highest first (columns)."""

        coverage: list[float]
        risk: list[float]
        threshold: list[number] = Field(description='the confidence; "-inf" for queries with no result')

    class RiskCoverage(BaseModel):
        confidence: str
        riskMetric: str
        nQueries: int
        aurc: float
        oracleAurc: float
        eAurc: float
        randomRisk: float
        kendallTau: number
        curve: Curve

    return RiskCoverage


def dashboard_section(metrics: Mapping[str, Any], number: Callable[[Any], str],
                      chart: Callable[[Callable[[], str]], str]) -> str:
    """The dashboard's section from the ``/metrics`` answer: the curves with AURC and E-AURC, and the table."""
    systems = [s for s in metrics["systems"] if s["riskCoverage"] is not None]
    if not systems:
        return ""
    curve = pd.concat([pd.DataFrame({"system": s["system"], **{c: s["riskCoverage"]["curve"][c]
                                                               for c in ("coverage", "risk")}}) for s in systems])
    summary = pd.DataFrame([{"system": s["system"], "risk_metric": s["riskCoverage"]["riskMetric"],
                             "aurc": s["riskCoverage"]["aurc"], "e_aurc": s["riskCoverage"]["eAurc"],
                             "random_risk": s["riskCoverage"]["randomRisk"]} for s in systems])

    def draw() -> str:
        return risk_coverage_svg(curve, summary)

    rows = "".join(
        f'<tr><td>{escape(s["system"])}</td><td>{escape(s["riskCoverage"]["confidence"])}</td>'
        + "".join(f'<td class="n">{number(s["riskCoverage"][k])}</td>'
                  for k in ("aurc", "oracleAurc", "eAurc", "randomRisk", "kendallTau")) + "</tr>"
        for s in systems)
    metric = escape(systems[0]["riskCoverage"]["riskMetric"])
    return (f'<h2 id="risk-coverage">Risk–coverage (risk = 1 − {metric})</h2>{chart(draw)}'
            '<table><thead><tr><th>system</th><th>confidence</th><th class="n">AURC</th><th class="n">oracle</th>'
            '<th class="n">E-AURC</th><th class="n">random</th><th class="n">Kendall tau</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>")


register(Reading("risk_coverage", "risk_coverage.csv", ("system",), columns="system, coverage, risk, threshold",
                 compute=compute, order=60))
register(Reading("risk_coverage_summary", "risk_coverage_summary.csv", ("system", "confidence", "risk_metric"),
                 ("n_queries",), columns="system, confidence, risk_metric, n_queries, aurc, oracle_aurc, e_aurc, "
                                         "random_risk, kendall_tau",
                 record=manifest_entries, sections={"text": text_section}, render={"html": html_body},
                 record_shape=manifest_shape, title="Risk–coverage", anchor="risk-coverage", order=61,
                 serve=ServeView("riskCoverage", served, served_model, dashboard_section)))
