"""The Markdown report of a results folder: GitHub-flavoured, short enough for a pull-request
comment (:data:`MAX_CHARACTERS`, under GitHub's 65,536-character limit, for any run).

What it holds, in order:

1. a heading (corpus, systems, queries);
2. the means table: each system's mean per metric, the best in bold, and a marker against the
   reference of the metric (the baseline when the run had one, else the best system): ``▲``
   significantly better, ``▼`` significantly worse (Holm p <= alpha and the interval excludes 0);
3. the verdict lines: each system against the reference, per metric (mean difference
   ``system - reference``, interval, Holm p, verdict);
4. folded (``<details>``): the worst-hit queries (per system, the queries on the first metric that
   lost most against the reference), the failed queries by diagnosis category, and how the numbers
   were made (corpus and hashes, metric conventions, statistics, the command line).

No time, path or version that varies between machines is written (the run's time, the corpus
folder and the Python and library versions stay in the manifest and the HTML report), so the same
folder gives the same bytes everywhere. When a run is too large for the limit, the report sheds
detail in steps (fewer worst-hit queries, verdicts for the first metric only, then none) and at
last lists only as many systems as fit, saying how many it left out.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from harness.report.parts import md_details as _details
from harness.report.parts import md_row as _row
from harness.report.parts import md_text as _md
from corpora.wording import counted
from harness.report.view import ReportView, number, short_label
from harness.core.options import TUKEY
from harness.core.statistics import adjusted_label, correction_words, format_p

__all__ = ["MAX_CHARACTERS", "render_markdown"]

#: The longest report written, in characters (GitHub refuses a comment over 65,536).
MAX_CHARACTERS = 65_000
_UP, _DOWN = "▲", "▼"
def _label(system: str) -> str:
    return _md(short_label(system))


@dataclass(frozen=True)
class _Detail:
    """How much a report holds: worst-hit queries per system, the metrics with verdict lines, and
    the systems listed (None: all)."""

    worst: int
    verdict_metrics: str  # "all", "first" or "none"
    systems: int | None = None


_STEPS = (_Detail(5, "all"), _Detail(3, "all"), _Detail(3, "first"), _Detail(0, "first"), _Detail(0, "none"))


def _heading(view: ReportView) -> list[str]:
    corpus = view.corpus
    return [f"### retbench: {_md(corpus.get('name'))}, {counted(len(view.systems), 'system')} on "
            f"{counted(view.n_queries, 'query')}", ""]


def _reference_phrase(view: ReportView) -> str:
    if view.baseline is not None:
        return f"the baseline {_label(view.baseline)}"
    return "the best system of each metric"


def _adjusted(view: ReportView) -> str:
    """``Holm p`` or ``Tukey HSD p``, as the run's family adjusted them."""
    return adjusted_label(view.statistics.get("holm_family"))


def _means(view: ReportView, systems: Sequence[str]) -> list[str]:
    lines = [f"Mean over {counted(view.n_queries, 'query')}; **bold**: the best; {_UP}/{_DOWN}: significantly "
             "better/worse "
             f"than {_reference_phrase(view)} ({_adjusted(view)} ≤ {view.alpha:g} and the {view.level} paired bootstrap "
             "interval excludes 0).", ""]
    lines.append(_row(["system", *(_md(m) for m in view.metrics)]))
    lines.append(_row([":--", *(["--:"] * len(view.metrics))]))
    for system in systems:
        cells = [_label(system) + (" (baseline)" if system == view.baseline else "")]
        for metric in view.metrics:
            text = number(view.mean(system, metric))
            if system in view.best(metric):
                text = f"**{text}**"
            sign = view.marker(system, metric)
            cells.append(text + (f" {_UP}" if sign > 0 else f" {_DOWN}" if sign < 0 else ""))
        lines.append(_row(cells))
    left_out = len(view.systems) - len(systems)
    if left_out:
        lines += ["", f"… and {counted(left_out, 'more system')} in summary.csv (left out to keep this comment under "
                      f"{MAX_CHARACTERS:,} characters)."]
    return lines


def _verdicts(view: ReportView, metrics: Sequence[str], systems: Sequence[str]) -> list[str]:
    lines = []
    for metric in metrics:
        reference = view.reference(metric)
        for system in systems:
            row = None if system == reference else view.comparison(system, reference, metric)
            if row is None:
                continue
            _, difference, low, high = row.versus(reference)
            lines.append(f"- {_md(metric)}: {_label(system)} - {_label(reference)} {number(difference, sign=True)} "
                         f"[{number(low, sign=True)}, {number(high, sign=True)}], {_adjusted(view)} "
                         f"{format_p(row.comparison.p_adjusted, view.alpha)}: {_md(row.verdict)}")
    if not lines:
        return []
    against = (f"against the baseline {_label(view.baseline)}" if view.baseline is not None
               else "against the best system of each metric")
    adjusted = "Tukey HSD-adjusted" if _adjusted(view) == adjusted_label(TUKEY) else "Holm-adjusted"
    return ["", f"**Verdicts** {against} (mean difference, {view.level} paired bootstrap interval, {adjusted} "
                "randomisation p):", "", *lines]


def _worst_hit(view: ReportView, systems: Sequence[str], limit: int) -> list[str]:
    if limit <= 0 or len(view.systems) < 2:
        return []
    metric = view.metrics[0]
    reference = view.reference(metric)
    rows = []
    for system in systems:
        if system == reference:
            continue
        losses = view.losses(system, metric, limit)
        if not losses:
            rows.append(_row([_label(system), "(none lower)", "", "", ""]))
        for loss in losses:
            rows.append(_row([_label(system), _md(loss.query_id), number(loss.reference_value), number(loss.value),
                              number(loss.difference, sign=True)]))
    if not rows:
        return []
    body = [_row(["system", "query", _label(reference), "system's", "difference"]),
            _row([":--", ":--", "--:", "--:", "--:"]), *rows]
    return _details(f"Worst-hit queries: {metric}, the {limit} that lost most against {short_label(reference)}, "
                    "per system", body)


def _failures(view: ReportView, systems: Sequence[str]) -> list[str]:
    counts = view.category_counts.loc[list(systems)]
    used = [c for c in counts.columns if int(counts[c].sum())]
    fail_rank = view.manifest["diagnosis"]["fail_rank"]
    unavailable = [f"{_md(line)}." for line in view.unavailable]
    if not used:
        return _details("Failed queries: none", [f"No query failed (first relevant document missing or below rank "
                                                 f"{fail_rank}{view.failure_clauses('md')}).",
                                                 *unavailable])
    body = [f"First relevant document missing or below rank {fail_rank}{view.failure_clauses('md')}; "
            "every failed query is in diagnosis.csv.", *unavailable, "",
            _row(["system", *(_md(c) for c in used), "failed"]), _row([":--", *(["--:"] * (len(used) + 1))])]
    for system in systems:
        body.append(_row([_label(system), *(str(int(counts.loc[system, c])) for c in used),
                          str(int(counts.loc[system].sum()))]))
    return _details("Failed queries by diagnosis category", body)


def _registered(view: ReportView) -> list[str]:
    """A folded section per registered reading with a Markdown renderer (or its own section)."""
    lines: list[str] = []
    for reading, frame in view.registered("md"):
        text = reading.section("md", frame, view,
                               lambda body: "\n".join(_details(reading.heading, body.rstrip("\n").split("\n"))))
        lines += text.split("\n") if text else []
    return lines


def _conventions(view: ReportView) -> list[str]:
    m = view.manifest
    corpus = view.corpus
    stats = view.statistics
    test = stats.get("randomisation_test", {})
    hashes = ", ".join(f"{_md(k)} `{str(v)[:12]}`" for k, v in m.get("hashes", {}).items())
    body = [f"- Corpus {_md(corpus.get('name'))}: {counted(corpus.get('documents'), 'document')}, "
            f"{counted(corpus.get('queries_evaluated'), 'query')} evaluated ({len(corpus.get('queries_excluded', []))} "
            f"excluded: no relevant judgment), {counted(corpus.get('judgments'), 'judgment')}; SHA-256 {hashes}."]
    for d in m.get("metrics", []):
        definition = str(d.get("definition", ""))
        gain = f"; gain {d['gain']}" if d.get("gain") and "gain" not in definition else ""
        body.append(f"- {_md(d['name'])}: {_md(definition)}{_md(gain)}; relevant: grade ≥ "
                    f"{d.get('rel_threshold')} (trec\\_eval {_md(d.get('trec_eval'))}).")
    conventions = m.get("conventions", {})
    body.append(f"- Rankings: ordered by {_md(conventions.get('ties', ''))}; queries: "
                f"{_md(conventions.get('queries', ''))}.")
    body.append(f"- Statistics: paired bootstrap over queries, {stats.get('bootstrap_samples'):,} resamples, seed "
                f"{stats.get('seed')}, {view.level} percentile interval; paired sign-flip randomisation test, exact up "
                f"to {test.get('exact_up_to')} differing queries, else {test.get('permutations'):,} random flips; "
                f"{_md(correction_words(stats.get('holm_family')))}; {_md(stats.get('pairs', ''))}.")
    command = shlex.join(str(w) for w in m.get("command_line", []))
    body.append(f"- Made by `{command.replace('`', chr(39))}` (retbench {_md(m.get('versions', {}).get('retbench'))}); "
                "the results folder holds every number, the runs and the judgments.")
    return _details("How these numbers were made", body)


def _render(view: ReportView, detail: _Detail) -> str:
    systems = view.systems if detail.systems is None else view.systems[:detail.systems]
    verdict_metrics = {"all": view.metrics, "first": view.metrics[:1], "none": []}[detail.verdict_metrics]
    lines = [*_heading(view), *_means(view, systems), *_verdicts(view, verdict_metrics, systems),
             *_worst_hit(view, systems, detail.worst), *_failures(view, systems), *_registered(view),
             *_conventions(view)]
    return "\n".join(lines) + "\n"


def render_markdown(view: ReportView, limit: int = MAX_CHARACTERS) -> str:
    """The Markdown report (see the module docstring), at most ``limit`` characters."""
    for detail in _STEPS:
        text = _render(view, detail)
        if len(text) <= limit:
            return text
    # still too long: as many systems as fit, found by halving (the text grows with the systems)
    low, high = 1, len(view.systems)
    best = _render(view, _Detail(0, "none", 1))
    while low <= high:
        middle = (low + high) // 2
        text = _render(view, _Detail(0, "none", middle))
        if len(text) <= limit:
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best
