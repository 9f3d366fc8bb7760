"""How a gate's result is shown: plain text for a terminal, GitHub-flavoured Markdown for a CI job
summary (``$GITHUB_STEP_SUMMARY``), and JUnit XML for CI systems that read test reports.

Every form starts from the same verdict line and numbers (:class:`~harness.gating.rule.GateResult`); the
interval is drawn against the margin on an ASCII number line (:func:`number_line`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.etree import ElementTree

from corpora.wording import counted
from harness.gating.rule import VERDICTS, GateResult, MetricGate

__all__ = ["FORMATS", "number_line", "render", "render_junit", "render_markdown", "render_text", "verdict_line"]

_LINE_WIDTH = 61  # columns of the number line (odd, so 0 has a column of its own in the middle)
_TEXT_WIDTH = 50  # characters of a query's text shown beside a query that lost


def _nice_extent(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at least ``value`` (a round end for the number line)."""
    if value <= 0 or not math.isfinite(value):
        return 0.01
    power = 10.0 ** math.floor(math.log10(value))
    return next(step * power for step in (1.0, 2.0, 2.5, 5.0, 10.0) if step * power >= value * (1 - 1e-12))


def number_line(gate: MetricGate, width: int = _LINE_WIDTH) -> list[str]:
    """The difference (candidate − baseline) against the margin, four lines of ``width`` columns:

    ``-E ... 0 ... +E`` (a symmetric scale whose end E is round and holds everything drawn); the axis,
    ``=`` inside [−margin, +margin] with ``|`` at its edges and ``+`` at 0; the gate's interval
    ``[---*---]`` (``*`` the mean difference); the (1 − 2·alpha) interval ``(---)``, which the tests
    against the margin read. A line's label follows it.
    """
    c = gate.comparison
    values = [c.ci_low, c.ci_high, gate.equivalence_low, gate.equivalence_high, c.mean_diff, gate.margin]
    extent = _nice_extent(max(abs(v) for v in values) * 1.05)

    def column(x: float) -> int:
        return max(0, min(width - 1, round((x + extent) / (2 * extent) * (width - 1))))

    middle = column(0.0)
    axis = ["-"] * width
    for i in range(column(-gate.margin), column(gate.margin) + 1):
        axis[i] = "="
    axis[column(-gate.margin)] = axis[column(gate.margin)] = "|"
    axis[middle] = "+"

    def interval(low: float, high: float, ends: str, mean: float | None) -> str:
        cells = [" "] * width
        left, right = column(low), column(high)
        for i in range(left, right + 1):
            cells[i] = "-"
        if left == right and mean is None:  # a point: both ends side by side
            left = min(left, width - 2)
            cells[left], cells[left + 1] = ends[0], ends[1]
        elif left != right:
            cells[left], cells[right] = ends[0], ends[1]
        if mean is not None:
            cells[column(mean)] = "*"
        return "".join(cells)

    left_label, right_label = f"{-extent:+.3g}", f"{extent:+.3g}"
    scale = [" "] * width
    scale[:len(left_label)] = left_label
    scale[width - len(right_label):] = right_label
    scale[middle] = "0"
    level = round((1 - c.alpha) * 100, 6)
    equivalence = round((1 - 2 * c.alpha) * 100, 6)
    return ["".join(scale),
            "".join(axis) + f"  margin ±{gate.margin:g}",
            interval(c.ci_low, c.ci_high, "[]", c.mean_diff) + f"  {level:g}% interval, * = mean difference",
            interval(gate.equivalence_low, gate.equivalence_high, "()", None) + f"  {equivalence:g}% interval "
                                                                                "(tests against the margin)"]


def verdict_line(result: GateResult) -> str:
    """One line: the gate's verdict, then each metric's, and what was paired."""
    each = "; ".join(f"{m.metric} {m.verdict} ({m.comparison.mean_diff:+.4f})" for m in result.metrics)
    paired = counted(result.n_queries, "paired query", "paired queries")
    return f"gate: {result.verdict.upper()} -- {each}; {paired}, margin ±{result.margin:g}"


def _holm_note(result: GateResult) -> str:
    n = len(result.metrics)
    return "Holm across the metric" if n == 1 else \
        f"Holm across the {n} metrics (one family against 0, one for each side of the margin)"


def _rules(result: GateResult) -> list[str]:
    alpha = round(1 - result.confidence, 12)
    return [f"alpha {alpha:g} (= 1 - confidence), {_holm_note(result)}; paired bootstrap {result.bootstrap_samples} "
            f"resamples, seed {result.seed}; against 0 the sign-flip test (exact up to 20 differing queries, else "
            f"{result.permutations} flips) with the {_level(result.confidence)} interval; against the margin the "
            "one-sided bootstrap test (the share of resampled means on the near side of the margin)",
            *(f"{name}: {meaning}" for name, meaning in VERDICTS.items()),
            f"the gate's verdict is the first of {', '.join(VERDICTS)} that a metric has"]


def _row(m: MetricGate) -> list[str]:
    c = m.comparison
    needed = "" if m.verdict != "inconclusive" or m.queries_needed_for_margin is None else \
        str(m.queries_needed_for_margin)
    return [m.metric, m.verdict, f"{m.baseline_mean:.4f}", f"{m.candidate_mean:.4f}", f"{c.mean_diff:+.4f}",
            f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]", f"[{m.equivalence_low:+.4f}, {m.equivalence_high:+.4f}]",
            f"{c.p_adjusted:.4f}", m.margin_p_text, needed]


def _level(confidence: float) -> str:
    return f"{round(confidence * 100, 6):g}%"


def _header(result: GateResult) -> list[str]:
    return ["metric", "verdict", "baseline", "candidate", "difference", f"{_level(result.confidence)} interval",
            f"{_level(2 * result.confidence - 1)} interval", "Holm p vs 0", "vs margin", "queries needed"]


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
            for r in [header, *rows]]


def _sources(result: GateResult) -> list[str]:
    lines = [f"baseline:  {result.baseline}", f"candidate: {result.candidate}"]
    for m in result.metrics:
        lines.append(f"values of {m.metric}: baseline {m.baseline_values_from}; candidate {m.candidate_values_from}")
    return lines


def _lost_heading(m: MetricGate) -> str:
    """How many queries lost, and how many of them are listed."""
    lost = f"{m.n_lost} of the {counted(m.comparison.n_queries, 'paired query', 'paired queries')} lost on {m.metric}"
    if m.n_lost == 0:
        return f"no query lost on {m.metric}"
    if not m.lost_most:
        return f"{lost} (none listed)"
    return f"{lost}; the {len(m.lost_most)} that lost most (baseline -> candidate):"


def _lost_lines(m: MetricGate) -> list[str]:
    if not m.lost_most:
        return [_lost_heading(m)]
    width = max(len(change.query_id) for change in m.lost_most)
    return [_lost_heading(m),
            *(f"  {change.query_id:<{width}}  {change.baseline:.4f} -> {change.candidate:.4f}  "
              f"({change.difference:+.4f}){_quoted(change.text)}" for change in m.lost_most)]


def _quoted(text: str | None, width: int = _TEXT_WIDTH) -> str:
    """A query's text, on one line, cut to ``width`` characters; nothing when unknown."""
    if not text:
        return ""
    text = " ".join(text.split())
    return f"  {text if len(text) <= width else text[:width - 1] + '…'!r}"


def render_text(result: GateResult) -> str:
    """The terminal report: the verdict line first, then the table, each metric's number line and
    reason, the queries that lost most, where the values came from and the rules."""
    lines = [verdict_line(result), ""]
    lines += _aligned(_header(result), [_row(m) for m in result.metrics])
    for m in result.metrics:
        lines += ["", f"{m.metric}: {m.verdict}: {m.reason}", *number_line(m), *_lost_lines(m)]
    lines += ["", *_sources(result), *(f"note: {note}" for note in result.notes), *_rules(result)]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(result: GateResult) -> str:
    """GitHub-flavoured Markdown for a job summary: a heading with the verdict, one table row per
    metric, the number lines in a text block, the queries that lost most as a table, the sources."""
    lines = [f"### retbench gate: **{result.verdict}**", "", _cell(verdict_line(result)), ""]
    header = _header(result)
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(_cell(cell) for cell in _row(m)) + " |" for m in result.metrics]
    for m in result.metrics:
        lines += ["", f"**{_cell(m.metric)}**: {m.verdict}: {_cell(m.reason)}", "", "```text", *number_line(m), "```"]
        lines += ["", _cell(_lost_heading(m))]
        if m.lost_most:
            lines += ["", "| query | baseline | candidate | change | text |", "|---|---:|---:|---:|---|",
                      *(f"| {_cell(c.query_id)} | {c.baseline:.4f} | {c.candidate:.4f} | {c.difference:+.4f} | "
                        f"{_cell(_quoted(c.text).strip())} |" for c in m.lost_most)]
    lines += ["", *(f"- {_cell(line)}" for line in [*_sources(result), *result.notes, *_rules(result)])]
    return "\n".join(lines) + "\n"


def render_junit(result: GateResult, fail_on: Sequence[str] = ()) -> str:
    """JUnit XML as CI systems read it (the Ant/Jenkins schema): ``testsuites`` holding one
    ``testsuite`` (``tests``, ``failures``, ``errors``), one ``testcase`` per metric (``name`` the
    metric, ``classname`` ``retbench.gate``), with a ``failure`` (``message``, ``type`` the verdict)
    when the metric fails the gate (regressed, or a verdict in ``fail_on``), and its reason and
    number line in ``system-out``."""
    failing = {m.metric for m in result.failing(fail_on)}
    counts = {"tests": str(len(result.metrics)), "failures": str(len(failing)), "errors": "0", "skipped": "0",
              "time": "0"}
    suites = ElementTree.Element("testsuites", {"name": "bench gate", **counts})
    suite = ElementTree.SubElement(suites, "testsuite", {"name": "bench gate", **counts})
    properties = ElementTree.SubElement(suite, "properties")
    for name, value in (("baseline", result.baseline), ("candidate", result.candidate),
                        ("verdict", result.verdict), ("paired_queries", str(result.n_queries)),
                        ("margin", f"{result.margin:g}"), ("confidence", f"{result.confidence:g}")):
        ElementTree.SubElement(properties, "property", {"name": name, "value": value})
    for m in result.metrics:
        case = ElementTree.SubElement(suite, "testcase", {"name": m.metric, "classname": "retbench.gate", "time": "0"})
        message = f"{m.verdict}: {m.comparison.mean_diff:+.4f}; {m.reason}"
        if m.metric in failing:
            failure = ElementTree.SubElement(case, "failure", {"message": message, "type": m.verdict})
            failure.text = "\n".join(_lost_lines(m))
        out = ElementTree.SubElement(case, "system-out")
        out.text = "\n".join([message, *number_line(m)])
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


#: ``bench gate --format``: name -> renderer of a :class:`~harness.gating.rule.GateResult`.
FORMATS = {"text": render_text, "md": render_markdown}


def render(result: GateResult, format: str = "text") -> str:
    """The report in ``format`` (a key of :data:`FORMATS`)."""
    return FORMATS[format](result)
