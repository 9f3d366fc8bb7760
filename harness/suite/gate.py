"""``bench gate`` on two suite folders: is the candidate worse, over the collections, by more than a margin?

Collections are paired by their content (the hashes of documents, queries and judgments the suites'
manifests record); a collection of the baseline missing from the candidate is an error, and so is one
whose data differ. Within each collection the queries are paired as :func:`harness.gate` pairs them.

Macro verdict per metric: the rules of :mod:`harness.gating.rule` (regressed, dropped, inconclusive,
improved, gained, unchanged) applied to the macro difference (candidate - baseline, the mean of the
collections' mean differences), with the bootstrap stratified by collection and the stratified
sign-flip test of :mod:`harness.suite.statistics`; Holm across the gated metrics, as for one collection.

Per collection: :func:`harness.gate` on each, then Holm over the whole family of collections x metrics
(the more collections, the more chances of a chance drop); a collection's metric is listed as a drop
when its Holm p (over that family) is at most alpha and its interval lies below 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from corpora import RetbenchError
from corpora.wording import counted
from harness.core.inputs import resolve_metrics
from harness.core.options import Statistics
from harness.core.statistics import (Comparison, format_p, holm, percentile_interval, sign_flip_tests,
                                     smallest_adjusted_p, smallest_p_value)
from harness.gating.rule import DEFAULT_MARGIN, VERDICTS, GateResult, _beyond_margin, _verdict, check_options, gate
from harness.gating.sides import GateSide, pair_queries
from harness.suite.statistics import stratified_resamples
from harness.suite.store import SuiteFolder

__all__ = ["CollectionDrop", "MacroGate", "SuiteGateResult", "gate_suites", "render_suite_gate"]


@dataclass(frozen=True)
class MacroGate:
    """The gate on one metric's macro difference: its verdict, its comparison (candidate - baseline),
    the (1 - 2 alpha) interval, both sides' macro means."""

    metric: str
    verdict: str
    comparison: Comparison
    equivalence_low: float
    equivalence_high: float
    baseline_mean: float
    candidate_mean: float


@dataclass(frozen=True)
class CollectionDrop:
    """A collection whose metric dropped, by Holm over collections x metrics."""

    collection: str
    metric: str
    mean_diff: float
    ci_low: float
    ci_high: float
    p_adjusted: float
    verdict: str  # the collection's own gate verdict (Holm over its metrics)


@dataclass
class SuiteGateResult:
    baseline: str
    candidate: str
    metrics: list[MacroGate]
    collections: dict[str, GateResult]
    drops: list[CollectionDrop]
    margin: float
    confidence: float
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        found = {m.verdict for m in self.metrics}
        return next(v for v in VERDICTS if v in found)

    def failing(self, fail_on: Sequence[str] = ()) -> list[MacroGate]:
        return [m for m in self.metrics if m.verdict in {"regressed", *fail_on}]

    def exit_code(self, fail_on: Sequence[str] = ()) -> int:
        return 1 if self.failing(fail_on) else 0


def _key(entry: dict) -> tuple[str, str, str]:
    hashes = entry["hashes"]
    return hashes["documents"], hashes["queries"], hashes["judgments"]


def gate_suites(baseline: SuiteFolder, candidate: SuiteFolder, metrics: str | Sequence[str], *,
                margin: float = DEFAULT_MARGIN, statistics: Statistics = Statistics(),
                baseline_system: str | None = None, candidate_system: str | None = None,
                lost_most: int = 5) -> SuiteGateResult:
    """Gate the ``candidate`` suite against the ``baseline`` suite (see the module docstring); ``margin``,
    ``statistics`` and ``lost_most`` as for :func:`harness.gate` (a non-default ``statistics.family`` is
    refused: Holm runs across the gated metrics, and across collections x metrics for the drops)."""
    metric_list = resolve_metrics(metrics)
    check_options(margin, statistics, lost_most)
    confidence, bootstrap_samples = statistics.confidence, statistics.bootstrap_samples
    seed, permutations = statistics.seed, statistics.permutations
    after_by_key = {_key(e): e for e in candidate.collections}
    pairs = []
    for entry in baseline.collections:
        other = after_by_key.get(_key(entry))
        if other is None:
            same_name = any(e["name"] == entry["name"] for e in candidate.collections)
            what = (f"holds other documents, queries or judgments than the collection of that name in the candidate "
                    f"suite {candidate.path}" if same_name else f"is not in the candidate suite {candidate.path}")
            raise RetbenchError(f"collection {entry['name']!r} of the baseline suite {what}. Fix: gate suites run on "
                                "the same collections")
        pairs.append((entry, other))
    extra = [e["name"] for e in candidate.collections if _key(e) not in {_key(b) for b, _ in pairs}]
    notes = [f"collections only in the candidate, not gated: {', '.join(extra)}"] if extra else []

    per_collection: dict[str, GateResult] = {}
    tables = []
    for before_entry, after_entry in pairs:
        name = before_entry["name"]
        before = GateSide.from_results(baseline.collection(before_entry["folder"].split("/")[-1]), baseline_system)
        after = GateSide.from_results(candidate.collection(after_entry["folder"].split("/")[-1]), candidate_system)
        per_collection[name] = gate(before, after, metric_list, margin=margin, statistics=statistics,
                                    lost_most=lost_most)
        paired, _, _ = pair_queries(before, after, False)
        tables.append(np.column_stack([after.values(m)[0].loc[paired].to_numpy(np.float64)
                                       - before.values(m)[0].loc[paired].to_numpy(np.float64) for m in metric_list]))
        tables[-1] = np.column_stack([tables[-1], *[before.values(m)[0].loc[paired].to_numpy(np.float64)
                                                    for m in metric_list]])

    k, n_metrics = len(tables), len(metric_list)
    alpha = statistics.alpha
    resampled = np.sort(stratified_resamples([t[:, :n_metrics] for t in tables], bootstrap_samples, seed), axis=0)
    low, high = percentile_interval(resampled, confidence)
    eq_low, eq_high = percentile_interval(resampled, 1.0 - 2.0 * alpha)
    below, above = _beyond_margin(resampled, float(margin))
    below_adjusted, above_adjusted = holm(below), holm(above)
    weighted = np.concatenate([t[:, :n_metrics] / (k * t.shape[0]) for t in tables])
    p_values, tests = sign_flip_tests(weighted, permutations, seed)
    adjusted = holm(p_values)
    differing = np.count_nonzero(weighted, axis=0)
    smallest = [smallest_p_value(t, int(m), permutations) for t, m in zip(tests, differing)]
    best = smallest_adjusted_p(p_values, smallest)
    gates = []
    for i, metric in enumerate(metric_list):
        diff = float(np.mean([t[:, i].mean() for t in tables]))
        base = float(np.mean([t[:, n_metrics + i].mean() for t in tables]))
        comparison = Comparison("candidate", "baseline", metric.name, diff, float(low[i]), float(high[i]),
                                float(p_values[i]), float(adjusted[i]), len(weighted), int(differing[i]), tests[i],
                                alpha, float(best[i]), permutations)
        verdict = _verdict(comparison, float(below_adjusted[i]), float(above_adjusted[i]), float(eq_low[i]),
                           float(eq_high[i]), margin, bootstrap_samples)
        gates.append(MacroGate(metric.name, verdict, comparison, float(eq_low[i]), float(eq_high[i]), base,
                               base + diff))

    # per collection: Holm over every (collection, metric)
    cells = [(name, g) for name, result in per_collection.items() for g in result.metrics]
    family = holm([g.comparison.p_value for _, g in cells])
    drops = [CollectionDrop(name, g.metric, g.comparison.mean_diff, g.comparison.ci_low, g.comparison.ci_high,
                            float(p), g.verdict)
             for (name, g), p in zip(cells, family) if p <= alpha and g.comparison.ci_high < 0]
    return SuiteGateResult(str(baseline.path), str(candidate.path), gates, per_collection, drops, float(margin),
                           confidence, notes)


def render_suite_gate(result: SuiteGateResult, format: str = "text") -> str:
    """The suite gate as text (or Markdown, ``format="md"``): the macro verdict per metric, then each
    collection's verdicts and the drops by Holm over collections x metrics."""
    md = format == "md"
    alpha = 1.0 - result.confidence
    lines = [f"{'## ' if md else ''}suite gate: {result.verdict}",
             "", f"baseline {result.baseline}", f"candidate {result.candidate}",
             f"margin {result.margin:g}; macro = mean of the collections' means; interval stratified by collection", ""]
    header = ["metric", "verdict", "baseline", "candidate", "macro diff", "interval", "Holm p"]
    rows = [[g.metric, g.verdict, f"{g.baseline_mean:.4f}", f"{g.candidate_mean:.4f}",
             f"{g.comparison.mean_diff:+.4f}", f"[{g.comparison.ci_low:+.4f}, {g.comparison.ci_high:+.4f}]",
             format_p(g.comparison.p_adjusted, alpha)] for g in result.metrics]
    lines += _table(header, rows, md)
    lines += ["", "per collection (each collection's own verdicts):", *([""] if md else [])]
    names = list(result.collections)
    metrics = [g.metric for g in result.metrics]
    lines += _table(["collection", *metrics], [[n, *(m.verdict for m in result.collections[n].metrics)]
                                               for n in names], md)
    lines.append("")
    if result.drops:
        lines.append(f"drops (Holm over {counted(len(names), 'collection')} x {counted(len(metrics), 'metric')}, "
                     f"p <= {alpha:g}):")
        lines += [f"- {d.collection} {d.metric}: {d.mean_diff:+.4f} [{d.ci_low:+.4f}, {d.ci_high:+.4f}], Holm p "
                  f"{format_p(d.p_adjusted, alpha)}" for d in result.drops]
    else:
        lines.append(f"no collection dropped (Holm over {counted(len(names), 'collection')} x "
                     f"{counted(len(metrics), 'metric')})")
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines) + "\n"


def _table(header: list[str], rows: list[list[str]], md: bool) -> list[str]:
    if md:
        return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                *["| " + " | ".join(r) + " |" for r in rows]]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    return ["  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip() for line in [header, *rows]]
