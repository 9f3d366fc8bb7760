"""A regression gate: is a candidate worse than a stored baseline, by more than a margin that matters?

Paired by query. For each metric, ``d_i`` = candidate − baseline on query i (n paired queries; a
positive difference is a gain), and the statistics of ``bench compare`` (:mod:`harness.core.statistics`):
the paired bootstrap's sorted resampled means (``bootstrap_samples``, ``seed``), the sign-flip
randomisation p (exact up to 20 differing queries, else ``permutations`` Monte Carlo flips), Holm
across the metrics gated together, alpha = 1 − ``confidence``: the fields of the ``statistics``
group (:class:`~harness.core.options.Statistics`), whose ``family`` a gate does not take (its Holm
family is always the gated metrics). Two questions, two kinds of test:

against the margin
    a one-sided bootstrap test at alpha for each side. "The drop exceeds the margin" (H0: mean >=
    −margin) has p = the share of resampled means >= −margin; "the gain exceeds it" (H0: mean <=
    +margin) has p = the share <= +margin. Each is Holm-adjusted across the metrics (one family per
    side). For one metric, p <= alpha is exactly the (1 − 2·alpha) percentile interval of the same
    resamples (the 90% interval for the default 95%) lying wholly below −margin (above +margin).
against zero
    the two-sided difference test of ``bench compare``: Holm p <= alpha and the ``confidence``
    interval excludes 0 (:attr:`~harness.core.statistics.Comparison.significant`).

Verdicts, each the first rule that holds:

regressed
    the drop exceeds the margin: the one-sided test against −margin rejects (Holm p <= alpha).
improved
    the mirror: the gain exceeds the margin (one-sided test against +margin, Holm p <= alpha).
dropped
    a significant drop (the test against zero) that is not shown to exceed the margin: the candidate
    is worse, by less than the margin or by an amount the queries cannot place against it.
gained
    the mirror: a significant gain not shown to exceed the margin.
unchanged
    no significant difference, and equivalence within the margin by two one-sided tests (Schuirmann's
    TOST) at alpha: H0 "mean <= −margin" and H0 "mean >= +margin" both rejected, which is the
    (1 − 2·alpha) interval lying within [−margin, +margin]. No Holm step here: "every metric is
    unchanged" is an intersection-union claim, which needs none (Berger 1982). Runs that score the
    same on every query give the interval [0, 0]: unchanged, whatever the margin.
inconclusive
    none of these (nothing is significant, against zero or the margin, and no equivalence): the
    queries cannot tell. :mod:`harness.core.power` says how many would detect a difference the size of the
    margin (from zero) at 80% power, given the observed per-query spread (Sakai's topic set size
    design with the margin as the minimum detectable difference), and how many the observed
    difference would need.

So a candidate whose true drop lies within the margin is called regressed about alpha of the time
at most: the test's level at the boundary −margin (measured by simulation at 52 queries: 4.1-5.3%
at a drop of exactly the margin, about 7% on 15 queries, where the percentile bootstrap is a little
liberal; under 2% at half the margin; docs/gate.md has the table), whereas the rule before (a significant drop whose interval merely reached
below −margin) failed 20-47% of candidates whose true drop was half the margin. A drop that is real
but not shown to exceed the margin is *dropped*, which fails the gate only when asked
(``--fail-on dropped``). The gate's overall verdict is the first of :data:`VERDICTS` (regressed,
dropped, inconclusive, improved, gained, unchanged) that a metric has.

Refusing to compare different things (:mod:`harness.gating.sides`): the ``hashes`` of documents, queries
and judgments (as results manifests record them) must be equal wherever both sides know them, the two
sides must evaluate the same queries, with the same judgments on each (compared query by query, so a
TREC run file with its qrels is checked too), and must read those judgments the same way: the same
relevance threshold and the same reading of an unjudged document (trec_eval's or condensed;
:func:`~harness.gating.sides.check_same_reading`), since either changes the score of one ranking.
``allow_different_queries`` pairs the queries both sides evaluated instead and says how many each
side lost; it relaxes the queries hash and the whole-collection judgments hash (both cover every
query), never the documents hash nor the judgments of the paired queries. The configuration hash is
not compared: the candidate is meant to differ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike

import numpy as np

from corpora import RetbenchError
from corpora.wording import counted
from harness.core.evaluation import mean_over_queries
from harness.gating.sides import GateSide, check_judgments, check_same_data, check_same_reading, pair_queries
from harness.core.inputs import check_bootstrap_fits, check_groups, resolve_metrics
from harness.core.metrics import Metric
from harness.core.options import BOOTSTRAP_SAMPLES, FAMILY, Statistics
from harness.core.power import POWER, PowerAnalysis, paired_power, queries_needed
from harness.core.record import CompareRecord
from harness.core.statistics import (Comparison, bootstrap_means, holm, percentile_interval, sign_flip_tests,
                                smallest_adjusted_p, smallest_p_value)

__all__ = ["DEFAULT_MARGIN", "VERDICTS", "GateResult", "MetricGate", "QueryChange", "check_options", "gate"]

#: The verdicts, in the order the gate's overall verdict takes them (the first any metric has), each
#: with the test that decides it (see the module docstring).
VERDICTS: dict[str, str] = {
    "regressed": "the drop exceeds the margin: one-sided test against -margin at alpha (Holm), i.e. the "
                 "(1 - 2 alpha) interval lies below -margin",
    "dropped": "a significant drop (Holm p <= alpha, interval excludes 0) not shown to exceed the margin",
    "inconclusive": "none of the others: not enough queries to tell",
    "improved": "the gain exceeds the margin: one-sided test against +margin at alpha (Holm), i.e. the "
                "(1 - 2 alpha) interval lies above +margin",
    "gained": "a significant gain (Holm p <= alpha, interval excludes 0) not shown to exceed the margin",
    "unchanged": "no significant difference, and the (1 - 2 alpha) interval lies within [-margin, +margin] (two "
                 "one-sided tests at alpha)",
}
#: 0.01 in the metric's own units: one point of nDCG@10 or recall, the smallest change IR papers
#: commonly treat as worth reporting; a gate that flags less would flag noise on most collections.
DEFAULT_MARGIN = 0.01
@dataclass(frozen=True)
class QueryChange:
    """One query's value on both sides and the change, candidate − baseline; its text when known."""

    query_id: str
    baseline: float
    candidate: float
    text: str | None = None

    @property
    def difference(self) -> float:
        return self.candidate - self.baseline


@dataclass(frozen=True)
class MetricGate:
    """The gate on one metric. ``comparison`` is candidate − baseline (its interval at the gate's
    confidence, its Holm p against zero across the gated metrics); ``equivalence_low``/``high`` the
    (1 − 2·alpha) interval of the same resamples; ``margin_p`` the Holm-adjusted p of the one-sided
    test against the margin on ``margin_side`` ("below" −margin or "above" +margin: the side whose
    raw p is smaller, see the module docstring); ``power`` the paired effect size, detectable
    difference and queries needed for the observed difference (:func:`harness.core.power.paired_power`);
    ``queries_needed_for_margin`` the queries that detect a difference of the margin at 80% power;
    ``n_lost`` how many paired queries scored lower in the candidate, ``lost_most`` the first of
    them by loss (as many as asked for)."""

    metric: str
    verdict: str
    comparison: Comparison
    equivalence_low: float
    equivalence_high: float
    margin: float
    margin_p: float
    margin_side: str
    baseline_mean: float
    candidate_mean: float
    power: PowerAnalysis
    queries_needed_for_margin: int | None
    baseline_values_from: str
    candidate_values_from: str
    lost_most: list[QueryChange]
    n_lost: int = 0
    bootstrap_samples: int = BOOTSTRAP_SAMPLES  # the resamples margin_p counts over

    @property
    def margin_p_text(self) -> str:
        """``margin_p`` to 4 decimals; one below what the resamples can show prints as a bound
        (``< 0.0002`` of 5,000 resamples, none of which crossed the margin), never ``0.0000``."""
        if self.margin_p * self.bootstrap_samples < 1.0 - 1e-9 or self.margin_p < 5e-5:
            return f"< {max(1.0 / self.bootstrap_samples, 1e-4):.4f}"
        return f"{self.margin_p:.4f}"

    @property
    def reason(self) -> str:
        """Why this verdict, in numbers: the test that decided it."""
        c, m, alpha = self.comparison, self.margin, _shown(self.comparison.alpha)
        interval = f"{_percent(1.0 - c.alpha)} interval [{c.ci_low:+.4f}, {c.ci_high:+.4f}]"
        equivalence = (f"{_percent(1.0 - 2.0 * c.alpha)} interval [{self.equivalence_low:+.4f}, "
                       f"{self.equivalence_high:+.4f}]")
        bound = f"-{m:g}" if self.margin_side == "below" else f"+{m:g}"
        beyond = f"one-sided Holm p {self.margin_p_text}"
        if self.verdict in ("regressed", "improved"):
            return f"{equivalence} lies {self.margin_side} {bound}; {beyond}" + (
                "" if self.margin_p_text.startswith("<") else f" <= {alpha}")
        if self.verdict in ("dropped", "gained"):
            kind = "drop" if self.verdict == "dropped" else "gain"
            found = f"a significant {kind} ({interval} excludes 0; Holm p {c.p_adjusted:.4f} <= {alpha})"
            if -m <= self.equivalence_low and self.equivalence_high <= m:
                return f"{found}, within the margin: {equivalence} lies within ±{m:g}"
            return f"{found}, not shown to exceed the margin: {equivalence} reaches past {bound} ({beyond})"
        if self.verdict == "unchanged":
            if c.n_differing == 0:
                return "identical on every query"
            return f"{equivalence} lies within ±{m:g}; no significant difference (Holm p {c.p_adjusted:.4f})"
        return (f"{equivalence} is not within ±{m:g}, and nothing is significant (Holm p {c.p_adjusted:.4f} against "
                f"0, {beyond} against {bound}); {self.needed_text}")

    @property
    def needed_text(self) -> str:
        """How many queries would tell: the margin's, then the observed difference's."""
        margin = (f"about {self.queries_needed_for_margin} queries would detect a difference of {self.margin:g}"
                  if self.queries_needed_for_margin is not None else "no number of queries detects a 0 margin")
        observed = (f"{self.power.queries_needed} the observed {self.comparison.mean_diff:+.4f}"
                    if self.power.queries_needed is not None else "none the observed difference of 0")
        return f"{margin} at {POWER:.0%} power with this per-query spread ({observed})"


@dataclass(frozen=True)
class GateResult:
    """What :func:`gate` found: one :class:`MetricGate` per metric, over ``n_queries`` paired queries."""

    baseline: str
    candidate: str
    metrics: list[MetricGate]
    n_queries: int
    margin: float
    confidence: float
    bootstrap_samples: int
    seed: int
    permutations: int
    dropped_from_baseline: list[str] = field(default_factory=list)
    dropped_from_candidate: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """The first of :data:`VERDICTS` (in its order) that any metric has."""
        found = {m.verdict for m in self.metrics}
        return next(v for v in VERDICTS if v in found)

    def failing(self, fail_on: Sequence[str] = ()) -> list[MetricGate]:
        """The metrics that fail the gate: regressed ones, and those whose verdict is in ``fail_on``."""
        failing = {"regressed", *fail_on}
        return [m for m in self.metrics if m.verdict in failing]

    def exit_code(self, fail_on: Sequence[str] = ()) -> int:
        """1 when a metric fails the gate (:meth:`failing`), else 0."""
        return 1 if self.failing(fail_on) else 0


def _percent(level: float) -> str:
    return f"{level * 100:.10g}%"


def _shown(alpha: float) -> str:
    return f"{round(alpha, 12):g}"  # 1 - 0.95 is 0.050000000000000044: show 0.05


def check_options(margin: float, statistics: Statistics = Statistics(), lost_most: int = 5, n_metrics: int = 1) -> None:
    """Each option of :func:`gate` in its domain, else a :class:`~corpora.RetbenchError` naming the
    parameter: ``statistics`` a :class:`~harness.core.options.Statistics` (which checked its own
    fields when it was made, as for :func:`harness.compare`), its resamples under compare's memory bound (:func:`~harness.core.inputs.check_bootstrap_fits`: one resampled mean
    difference per gated metric, ``n_metrics``), but its ``family``, which must stay the default (a
    gate's Holm family is the gated metrics)."""
    check_groups(statistics=(statistics, Statistics))
    number = isinstance(margin, (int, float)) and not isinstance(margin, bool)
    if not (number and math.isfinite(margin) and margin >= 0):
        raise RetbenchError(f"`margin` must be a finite number >= 0, in the metric's units. Got {margin!r} instead. "
                            f"Fix: pass e.g. `margin={DEFAULT_MARGIN}` (one point of nDCG)")
    check_bootstrap_fits(statistics.bootstrap_samples, n_metrics, f"{n_metrics} metric(s)", "gate fewer metrics")
    if statistics.family != FAMILY:
        raise RetbenchError(f"`statistics.family` is {statistics.family!r}, which a gate does not take: its Holm "
                            f"adjustment always runs across the gated metrics. Fix: leave `statistics.family` at "
                            f"its default ({FAMILY!r})")
    if isinstance(lost_most, bool) or not isinstance(lost_most, int) or lost_most < 0:
        raise RetbenchError(f"`lost_most` must be an int >= 0. Got {lost_most!r} instead. Fix: pass e.g. "
                            "`lost_most=5` (0 lists none)")


def _as_side(side: GateSide | CompareRecord | str | PathLike[str]) -> GateSide:
    if isinstance(side, GateSide):
        return side
    if isinstance(side, CompareRecord):
        return GateSide.from_compare(side)
    return GateSide.from_results(side)


def _spread(differences: np.ndarray) -> float:
    """The sample standard deviation (ddof 1) as :func:`harness.core.power.paired_power` takes it."""
    if len(differences) < 2:
        return math.nan
    return 0.0 if differences.min() == differences.max() else float(np.std(differences, ddof=1))


def _needed_for_margin(differences: np.ndarray, margin: float, alpha: float) -> int | None:
    spread = _spread(differences)
    if math.isnan(spread) or margin == 0.0:
        return None
    return queries_needed(math.inf if spread == 0.0 else margin / spread, alpha)


def _beyond_margin(resampled: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column of sorted resampled means: the one-sided bootstrap p that the mean lies below
    −margin (the share of resamples >= −margin) and above +margin (the share <= +margin)."""
    n = resampled.shape[0]
    return (np.count_nonzero(resampled >= -margin, axis=0) / n, np.count_nonzero(resampled <= margin, axis=0) / n)


def _rejects(p: float, alpha: float, n_samples: int) -> bool:
    """``p <= alpha`` for a bootstrap p (a count over ``n_samples``), with the rounding
    :func:`~harness.core.statistics.percentile_interval` uses for its index (``1 - 0.9`` is
    0.09999999999999998, and 100 of 1,000 resamples must reject at it as the 80% interval does)."""
    return p * n_samples <= alpha * n_samples + 1e-9


def _verdict(c: Comparison, below: float, above: float, low: float, high: float, margin: float,
             n_samples: int) -> str:
    """The verdict of one metric from its Holm-adjusted one-sided p-values against the margin
    (``below``, ``above``), its test against zero (``c``) and its (1 − 2·alpha) interval."""
    if _rejects(below, c.alpha, n_samples):
        return "regressed"
    if _rejects(above, c.alpha, n_samples):
        return "improved"
    if c.significant:
        return "dropped" if c.mean_diff < 0 else "gained"
    if -margin <= low and high <= margin:
        return "unchanged"
    return "inconclusive"


def gate(baseline: GateSide | CompareRecord | str | PathLike[str], candidate: GateSide | CompareRecord | str | PathLike[str],
         metrics: str | Sequence[str | Metric], *, margin: float = DEFAULT_MARGIN,
         statistics: Statistics = Statistics(), allow_different_queries: bool = False,
         lost_most: int = 5) -> GateResult:
    """Gate ``candidate`` against ``baseline`` on ``metrics``; see the module docstring for the rules.

    Each side is a :class:`GateSide` (:meth:`GateSide.from_results`, :meth:`GateSide.from_run`,
    :meth:`GateSide.from_compare`), a results folder's path (holding one system) or a comparison of
    one system. ``margin`` is in the metric's units (0.01 = one point of nDCG); ``statistics``
    (:class:`~harness.core.options.Statistics`) holds the bootstrap's resamples, the seed, the
    confidence and the randomisation test's permutations, as for :func:`harness.compare` (its
    ``family`` must stay the default: the gate's Holm family is the gated metrics); ``lost_most`` is how
    many of the queries that lost most to keep per metric. Data that differ are a
    :class:`~corpora.RetbenchError` naming what differs.

    >>> from corpora import Qrels
    >>> qrels = Qrels({f"q{i}": {"a": 1} for i in range(8)})
    >>> same = {f"q{i}": [("a", 1.0)] for i in range(8)}
    >>> gate(GateSide.from_run(same, qrels), GateSide.from_run(same, qrels), "mrr").verdict
    'unchanged'
    """
    metric_list = resolve_metrics(metrics)
    check_options(margin, statistics, lost_most, len(metric_list))
    confidence, bootstrap_samples = statistics.confidence, statistics.bootstrap_samples
    seed, permutations = statistics.seed, statistics.permutations
    before, after = _as_side(baseline), _as_side(candidate)
    check_same_reading(before, after)
    notes = [*before.notes, *after.notes,
             *check_same_data(before.hashes, after.hashes, allow_different_queries=allow_different_queries)]
    paired, only_baseline, only_candidate = pair_queries(before, after, allow_different_queries)
    check_judgments(before, after, paired)
    if only_baseline or only_candidate:
        notes.append(f"--allow-different-queries: {counted(len(paired), 'query')} paired; dropped "
                     f"{len(only_baseline)} only in the "
                     f"baseline and {len(only_candidate)} only in the candidate")

    columns, sources = [], []
    for metric in metric_list:
        (b, b_from), (a, a_from) = before.values(metric), after.values(metric)
        columns.append((b.loc[paired].to_numpy(np.float64), a.loc[paired].to_numpy(np.float64)))
        sources.append((b_from, a_from))
    differences = np.column_stack([a - b for b, a in columns])
    alpha = statistics.alpha
    resampled = bootstrap_means(differences, bootstrap_samples, seed)
    low, high = percentile_interval(resampled, confidence)
    equivalence_low, equivalence_high = percentile_interval(resampled, 1.0 - 2.0 * alpha)
    below, above = _beyond_margin(resampled, float(margin))
    below_adjusted, above_adjusted = holm(below), holm(above)  # one family per side
    p_values, tests = sign_flip_tests(differences, permutations, seed)
    adjusted = holm(p_values)
    differing = np.count_nonzero(differences, axis=0)
    smallest = [smallest_p_value(t, int(m), permutations) for t, m in zip(tests, differing)]
    best_adjusted = smallest_adjusted_p(p_values, smallest)
    means = differences.mean(axis=0)

    texts = {**before.query_texts, **after.query_texts}
    gates = []
    for i, metric in enumerate(metric_list):
        comparison = Comparison("candidate", "baseline", metric.name, float(means[i]), float(low[i]), float(high[i]),
                                float(p_values[i]), float(adjusted[i]), len(paired), int(differing[i]), tests[i],
                                alpha, float(best_adjusted[i]), permutations)
        b, a = columns[i]
        changes = sorted((QueryChange(q, float(x), float(y), texts.get(q)) for q, x, y in zip(paired, b, a) if y < x),
                         key=lambda change: (change.difference, change.query_id))
        low_i, high_i = float(equivalence_low[i]), float(equivalence_high[i])
        verdict = _verdict(comparison, float(below_adjusted[i]), float(above_adjusted[i]), low_i, high_i, margin,
                           bootstrap_samples)
        side = "below" if below[i] < above[i] else "above"
        margin_p = float(below_adjusted[i] if side == "below" else above_adjusted[i])
        gates.append(MetricGate(
            metric.name, verdict, comparison, low_i, high_i, float(margin), margin_p, side, mean_over_queries(b),
            mean_over_queries(a), paired_power(differences[:, i], alpha), _needed_for_margin(differences[:, i], margin, alpha),
            sources[i][0], sources[i][1], changes[:lost_most], len(changes), bootstrap_samples))
    return GateResult(before.name, after.name, gates, len(paired), float(margin), confidence, bootstrap_samples, seed,
                      permutations, only_baseline, only_candidate, notes)
