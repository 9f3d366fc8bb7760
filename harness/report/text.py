"""The text report of a comparison, as the article prints it, made from its results folder.

:func:`render_text` gives the whole report of a :class:`~harness.report.view.ReportView` (the
results folder keeps it as ``report.txt``; ``bench report --format text`` makes it again; a fresh
result's, :meth:`harness.comparison.CompareResult.report`, reads the folder it would write from
memory): the dataset's summary line, the systems, the means, the rank of the first
relevant document, the comparisons, effect size and power for the first metric, one table per facet
and the diagnosis, and the section of each registered reading with a text renderer
(:mod:`harness.readings`) where its order places it among them (:data:`PLACES`): the leaderboard
first, risk–coverage before the diagnosis, a reading added last. What it shows that no
table holds (that line, the queries' texts) the manifest's ``corpus`` records. With
``show_failures`` it abridges the diagnosis for a terminal: at most that many failed queries per
system, and at most :data:`SHOWN_DOCUMENTS` relevant documents per failed query, each cut counted
("… and 37 more"); with ``show_queries``, the rank table's first that many queries, the rest
counted. :func:`terminal_cut` says how much a terminal gets: everything up to
:data:`TERMINAL_QUERIES` queries, so a large collection's report still fits on a few screens.
"""

from __future__ import annotations

import math

import pandas as pd

from corpora.wording import counted
from harness.core.diagnosis import Failure
from harness.core.options import TUKEY, alpha_of
from harness.core.power import POWER
from harness.core.readings import Reading, failure_checks
from harness.core.statistics import EXACT_UP_TO, adjusted_label, correction_words, format_p
from harness.report.parts import text_table as _table
from harness.report.view import ReportView


__all__ = ["ABRIDGED_FAILURES", "ABRIDGED_QUERIES", "PLACES", "SHOWN_DOCUMENTS", "SHOWN_FAILURES", "TERMINAL_QUERIES",
           "failure_lines", "render_text", "terminal_cut"]

#: Where the report's own sections stand among the registered readings (their ``order``,
#: :class:`harness.core.readings.Reading`): a reading's section comes before the first own section
#: of a higher order (the means, then the diagnosis; one added, at 100, ends the report).
PLACES = {"means": 41, "diagnosis": 70}

#: Relevant documents listed under a failed query in the abridged report (the rest are counted).
SHOWN_DOCUMENTS = 3
#: Up to this many queries, the terminal gets every query of the rank table.
TERMINAL_QUERIES = 24
#: Queries of the rank table the terminal gets beyond :data:`TERMINAL_QUERIES` (the rest are counted).
ABRIDGED_QUERIES = 10
#: Failed queries per system the terminal's diagnosis gets, up to :data:`TERMINAL_QUERIES` queries.
SHOWN_FAILURES = 10
#: Failed queries per system the terminal's diagnosis gets beyond :data:`TERMINAL_QUERIES` queries.
ABRIDGED_FAILURES = 1


def terminal_cut(n_queries: int) -> tuple[int | None, int]:
    """(``show_queries``, ``show_failures``) of :func:`render_text` for a terminal, by the collection's
    number of queries: the whole rank table and :data:`SHOWN_FAILURES` failed queries per system up
    to :data:`TERMINAL_QUERIES` queries; beyond, :data:`ABRIDGED_QUERIES` rows and
    :data:`ABRIDGED_FAILURES` failed queries per system (``report.txt`` keeps them all)."""
    if n_queries <= TERMINAL_QUERIES:
        return None, SHOWN_FAILURES
    return ABRIDGED_QUERIES, ABRIDGED_FAILURES


def _means_table(view: ReportView) -> list[str]:
    rows = [[row["system"], *(f"{row[n]:.3f}" for n in view.metrics)] for _, row in view.summary.iterrows()]
    return _table(["system", *view.metrics], rows)


def _power_lines(view: ReportView) -> list[str]:
    """Wins/ties/losses, d_z, Sakai's ES_E with its interval, the detectable difference and the queries
    needed, for the first metric."""
    first = view.metrics[0]
    shown = view.comparisons_of(first)
    if not shown:
        return []
    rows = []
    for row in shown:
        c, power = row.comparison, row.power
        needed = "--" if power.queries_needed is None else str(power.queries_needed)
        effect = "--" if math.isnan(power.effect_size) else f"{power.effect_size:+.2f}"
        detectable = "--" if math.isnan(power.detectable_difference) else f"{power.detectable_difference:.3f}"
        anova = "--" if math.isnan(power.effect_size_anova) else f"{power.effect_size_anova:+.2f}"
        if not math.isnan(power.effect_size_anova_low):
            anova += f" [{power.effect_size_anova_low:+.2f}, {power.effect_size_anova_high:+.2f}]"
        rows.append([f"{c.system_a} - {c.system_b}", f"{power.wins}/{power.ties}/{power.losses}", effect, anova,
                     detectable, needed])
    lines = [f"effect size and power on {first} (paired t-test, alpha {alpha_of(view.confidence):.2g}, {POWER:.0%} power; "
             "-- = none):"]
    lines.extend("  " + line for line in _table(["comparison", "wins/ties/losses", "d_z", "ES_E (all systems)",
                                                  "detectable diff", "queries needed"], rows))
    return lines


def _rank_table(view: ReportView, show_queries: int | None = None, width: int = 38) -> list[str]:
    """Rank of the first relevant document per query and system (-- when not found); the first
    ``show_queries`` queries when given, the rest counted on a last line."""
    labels = view.systems
    texts = view.query_texts
    ranks = view.first_relevant_ranks
    query_ids = view.query_ids
    shown = query_ids if show_queries is None else query_ids[:show_queries]
    rows = []
    for q in shown:
        text = " ".join(texts.get(q, "").split())
        text = text if len(text) <= width else text[: width - 1] + "…"
        cells = []
        for label in labels:
            value = ranks.at[q, label]
            cells.append("--" if pd.isna(value) else str(int(value)))
        rows.append([q, text, *cells])
    lines = _table(["query", "text", *labels], rows, right=set(range(2, 2 + len(labels))))
    if len(shown) < len(query_ids):
        more = counted(len(query_ids) - len(shown), "more query", "more queries")
        lines.append(f"… and {more} in report.txt and per_query.csv")
    return lines


def _comparison_lines(view: ReportView) -> list[str]:
    """The comparison table, then how to read it: alpha, the Holm family and the test behind each p."""
    level = round(view.confidence * 100)
    alpha = alpha_of(view.confidence)  # as the comparisons held it (the manifest's is rounded)
    compared = [row.comparison for row in view.comparison_rows]
    rows = [[f"{c.system_a} - {c.system_b}", c.metric, f"{c.mean_diff:+.3f}",
             f"[{c.ci_low:+.3f}, {c.ci_high:+.3f}]", format_p(c.p_value, alpha), format_p(c.p_adjusted, alpha),
             row.verdict] for c, row in zip(compared, view.comparison_rows)]
    family = view.statistics["holm_family"]
    lines = _table(["comparison", "metric", "mean diff", f"{level}% interval", "p", adjusted_label(family), "verdict"],
                   rows, right={2, 3, 4, 5})
    if not compared:
        return lines
    per_metric = len(compared) // max(1, len(view.metrics))
    def comparisons(n: int) -> str:
        return counted(n, "comparison")

    said = (f"the {comparisons(per_metric)} of each metric" if family == "metric"
            else f"all {comparisons(len(compared))}")
    exact = sum(c.test == "exact" for c in compared)
    sampled = len(compared) - exact
    tests = []
    if exact:
        tests.append(f"exact over all 2^m sign patterns of the m differing queries ({comparisons(exact)})")
    if sampled:
        tests.append(f"Monte Carlo, {view.statistics['randomisation_test']['permutations']} random sign flips, seed "
                     f"{view.statistics['seed']} ({comparisons(sampled)} with more than {EXACT_UP_TO} differing "
                     "queries)")
    family_line = (f"Holm family (--family {family}): {said}" if family != TUKEY else
                   f"adjusted by {correction_words(family)} (--family {family}), {view.statistics['randomisation_test']['permutations']} "
                   f"permutations, seed {view.statistics['seed']}")
    lines.append(f"alpha {alpha_of(view.confidence):.2g} (= 1 - confidence); {family_line}")
    lines.append(f"p: {'; '.join(tests)}")
    return lines


def failure_lines(failure: Failure, documents: int | None = None) -> list[str]:
    """The failed query, then each relevant document and the words it shares with the query
    (the first ``documents`` of them when given; a last line counts the rest)."""
    rank = f"rank {failure.rank}" if failure.rank is not None else "not found"
    first = failure.first_result or "none"
    query = " ".join(failure.query.split())  # a query's line breaks (Cranfield's) would show as \n
    lines = [f"  {failure.query_id} {query!r} -> {rank}, first result: {first}  [{failure.category}]"]
    check = next((c for c in failure_checks() if c.category == failure.category), None)
    if failure.evidence and check is not None and check.evidence is not None:  # a registered reading's rows
        lines.append("      " + check.evidence(failure.evidence))
    shared = list(failure.shared_words.items())
    for doc, words in shared[:documents]:
        shown = ", ".join(words) if words else "none"
        lines.append(f"      {doc} (grade {failure.grades[doc]}): words in common = {shown}")
    if documents is not None and len(shared) > documents:
        lines.append(f"      … and {len(shared) - documents} more relevant documents")
    return lines


def render_text(view: ReportView, show_failures: int | None = None, show_queries: int | None = None,
                heading: bool = True, measured: bool = False) -> str:
    """The report as ``bench compare`` prints it, of the results folder ``view`` reads: the
    dataset's summary line (unless ``heading`` is False), then the body. ``show_failures=None``
    gives every failed query with every relevant document (``report.txt``); a number abridges the
    diagnosis to that many failed queries per system, the rest counted and left to ``report.txt``
    and ``diagnosis.csv``. ``show_queries=None`` gives the rank table whole; a number, its first
    that many queries, the rest counted and left to ``report.txt`` and ``per_query.csv``.
    ``measured``: also the sections of the readings measured on the run's machine (the cost), which
    the terminal shows and ``report.txt`` leaves out (:attr:`harness.core.readings.Reading.measured`)."""
    out: list[str] = [view.dataset_line] if heading else []
    pools = "; each query ranks its candidate pool" if view.pooled else ""
    systems = ", ".join(label if spec == label else f"{label} [{spec}]" for label, spec in view.systems_as_run)
    out.append(f"systems: {systems}; analyzer {view.analyzer}; depth {view.depth}{pools}")
    out.append("")
    for lines in _sections(view, below=PLACES["means"], measured=measured):
        out += [*lines, ""]
    out.extend(_means_table(view))
    out.append("")
    out.append("rank of the first relevant document (-- = not found):")
    out.extend("  " + line for line in _rank_table(view, show_queries))
    if view.comparison_rows:
        out.append("")
        pairs = "vs baseline " + view.baseline if view.baseline else "all pairs"
        out.append(f"paired bootstrap over queries ({view.statistics['bootstrap_samples']} resamples, seed "
                   f"{view.statistics['seed']}; {pairs}; p from a sign-flip randomisation test):")
        out.extend("  " + line for line in _comparison_lines(view))
        out.append("")
        out.extend(_power_lines(view))
    for lines in _sections(view, PLACES["means"], PLACES["diagnosis"], measured):
        out += ["", *lines]
    out.append("")
    fail_rank = view.fail_rank
    out.append(f"diagnosis (first relevant document missing or below rank {fail_rank}"
               f"{view.failure_clauses('text')}):")
    out.extend(f" {line}" for line in view.unavailable)
    by_system: dict[str, list[Failure]] = {}
    for f in view.failures:
        by_system.setdefault(f.system, []).append(f)
    for system in view.systems:
        failures = by_system.get(system, [])
        tallies = "" if view.unavailable else "".join(
            ", " + check.tally.format(count=sum(f.category == check.category for f in failures), fail_rank=fail_rank)
            for check in failure_checks() if check.tally)
        out.append(f" {system}: {counted(len(failures), 'failed query', 'failed queries')}{tallies}")
        shown = failures if show_failures is None else failures[:show_failures]
        documents = None if show_failures is None else SHOWN_DOCUMENTS
        for f in shown:
            out.extend(failure_lines(f, documents))
        if len(shown) < len(failures):
            out.append(f"  … and {len(failures) - len(shown)} more in report.txt and diagnosis.csv")
    for lines in _sections(view, PLACES["diagnosis"], measured=measured):
        out += ["", *lines]
    return "\n".join(out)


def _sections(view: ReportView, low: float = -math.inf, below: float = math.inf,
              measured: bool = False) -> list[list[str]]:
    """The lines of each registered reading's text section whose order is in [``low``, ``below``), in
    registry order, a measured reading's only when ``measured``; an empty section (the facets when
    none was rolled up) is left out."""
    sections = (_reading_lines(reading, frame, view) for reading, frame in view.registered("text")
                if low <= reading.order < below and (measured or not reading.measured))
    return [lines for lines in sections if lines]


def _reading_lines(reading: Reading, frame: pd.DataFrame, view: ReportView) -> list[str]:
    """A registered reading's section: its own (heading included; nothing when empty), else its
    renderer's text under ``heading:``."""
    text = reading.section("text", frame, view, lambda body: f"{reading.heading}:\n" + body.rstrip("\n"))
    return text.split("\n") if text else []
