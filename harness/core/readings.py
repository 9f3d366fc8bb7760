"""What a comparison reads beyond its means: the paired comparisons, the leaderboard, effect sizes and
power, the facet rollup and risk–coverage, gathered for :func:`harness.compare` from its per-query
values and runs as its configuration's option groups say (:func:`read_comparison`). Each reading is
computed by its own module (:mod:`harness.core.statistics`, :mod:`harness.core.leaderboard`,
:mod:`harness.core.power`, :mod:`harness.core.facets`, :mod:`harness.core.risk_coverage`); this one
decides what they are given:

* the leaderboard's tie groups read the run's comparisons and nothing else (the same tests, Holm
  family and verdicts as ``comparisons.csv``): with a ``baseline`` only the pairs with it are
  compared, and the pairs without it are not separated (:mod:`harness.core.leaderboard`). Its ranks use
  the comparisons' resamples (the same index stream, drawn once for every metric).
* a system's confidence per query (risk–coverage) is the retriever's own, when it defines a
  ``confidence(queries)`` method (:data:`OWN_CONFIDENCE`), else the one ``confidence_from`` reads off
  its run (a key of :data:`harness.core.risk_coverage.CONFIDENCES`).

The registry (:data:`READINGS`) declares every reading a results folder stores once: its name, its
CSV file, the columns read back as text or integers, what the rows hold, the table it is from a
finished comparison and, for a reading the reports show by the registry, a renderer per report
format. The writer (:mod:`harness.store.write`), the folder reader (:mod:`harness.store.read`,
whose :data:`~harness.store.read.TABLES` it is), the reports and the server iterate over it, and
the manifest hashes each file it lists. A new reading is one module that calls :func:`register`
(docs/adding-a-reading.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from corpora import Queries, RetbenchError
from corpora.progress import Progress
from corpora.wording import counted
from harness.engines.parallel import ChunkMapper
from harness.core.facets import facet_rollup
from harness.core.leaderboard import leaderboards
from harness.core.power import POWER_COLUMNS, power_table
from harness.core.risk_coverage import query_confidence, risk_coverage
from harness.core.retrieval_metrics import FACETS_FILE, QUERY_FACETS_FILE, ROLLUP_FILE
from harness.core.statistics import COMPARISON_COLUMNS, Comparison, compare_systems
from retrievers import Retriever, RetrieverFailed

if TYPE_CHECKING:
    from harness.core.record import CompareConfig, CompareRecord, SystemResult

__all__ = ["DIAGNOSIS_COLUMNS", "OWN_CONFIDENCE", "PER_QUERY", "READINGS", "Reading", "Readings", "Render",
           "read_comparison", "reading_frames", "register", "rendered", "system_confidence"]

#: The summary's ``confidence`` when a retriever's own ``confidence(queries)`` gave it.
OWN_CONFIDENCE = "retriever"


@dataclass(frozen=True)
class Readings:
    """The readings of one comparison; see :class:`harness.comparison.CompareResult` for each."""

    comparisons: list[Comparison]
    leaderboard: pd.DataFrame
    power: pd.DataFrame
    facets: pd.DataFrame
    risk_coverage: pd.DataFrame
    risk_coverage_summary: pd.DataFrame


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


def read_comparison(config: CompareConfig, systems: Sequence[SystemResult], queries: Queries,
                    per_query: pd.DataFrame, *, progress: Progress | None = None,
                    mapper: ChunkMapper | None = None) -> Readings:
    """Every reading of one comparison (see the module docstring for what each is given), as
    ``config``'s groups say: its ``statistics`` (the resamples, seed, confidence, permutations and
    Holm family of the comparisons and of every interval), its ``readings`` (the facets, the risk
    metric, the confidence) and its ``baseline`` (the pairs compared).

    ``systems``: each system's label, retriever and run; ``queries``: the evaluated queries, in
    evaluation order, with their facets (what the retrievers searched); ``per_query``: their values
    (``system``, ``query_id``, one column per metric of ``config.metrics``). ``mapper``: where the
    chunks of the bootstrap run (None: here).
    """
    tasks = progress if progress is not None else Progress()
    statistics, readings = config.statistics, config.readings
    names, labels, query_ids = list(config.metrics), [s.label for s in systems], list(queries.ids)
    if config.baseline is not None:
        pairs = [(label, config.baseline) for label in labels if label != config.baseline]
    else:
        pairs = list(combinations(labels, 2))
    values = {label: {name: per_query.loc[per_query.system == label, name].to_numpy(dtype=np.float64)
                      for name in names} for label in labels}
    with tasks.task("bootstrap", statistics.bootstrap_samples) as task:
        comparisons = compare_systems(values, pairs, names, statistics.bootstrap_samples, statistics.seed,
                                      statistics.confidence, task.update, statistics.permutations,
                                      statistics.family, mapper)
    with tasks.task("leaderboard"):
        board = leaderboards(per_query, names, comparisons, statistics.bootstrap_samples, statistics.seed,
                             statistics.confidence, mapper)
    power = power_table(per_query, comparisons)
    with tasks.task("facets"):
        facet_frame = facet_rollup(per_query, queries, names,
                                   names=list(readings.facets) if readings.facets is not None else None,
                                   n_samples=statistics.bootstrap_samples, seed=statistics.seed,
                                   confidence=statistics.confidence)
    confidences: dict[str, np.ndarray] = {}
    kinds: dict[str, str] = {}
    kind = readings.confidence_from
    for system in systems:
        confidences[system.label], kinds[system.label] = system_confidence(
            system.retriever, query_confidence(system.run, query_ids, kind), queries, kind)
    curve, summary = risk_coverage(per_query, readings.risk_metric or names[0], confidences, kinds)
    return Readings(comparisons, board, power, facet_frame, curve, summary)


# ----- the registry: every reading a results folder stores, declared once ------------------------

#: Renders one reading's section of a report: (its frame, the report's view) -> text; the view is
#: :class:`harness.report.view.ReportView` for every format (``text``, ``html``, ``md``, ``latex``).
Render = Callable[[pd.DataFrame, Any], str]


@dataclass(frozen=True)
class Reading:
    """One reading as a results folder stores it, declared once for the writer
    (:mod:`harness.store.write`), the folder reader (:mod:`harness.store.read`), the reports
    (:mod:`harness.report`) and the server (:mod:`harness.serve.store`).

    ``name``: the key of :data:`READINGS` and the attribute (or ``table(name)``) a reader gets it
    by; ``file``: its CSV file inside a results folder; ``text``: the columns read back as strings,
    ``integers``: those read back as nullable integers (every other column is a float; both must be
    present); ``columns``: what each row holds, in words (the writer's file list says it);
    ``frame``: the table from a finished comparison (:class:`~harness.core.record.CompareRecord`),
    or None when that comparison has none (the metrics card when it is off), so no file is written;
    ``render``: report format (``text``, ``html``, ``md``, ``latex``) -> the renderer of its section
    (:data:`Render`), for a reading the reports show by the registry (the built-in readings have their
    own places in each report and declare none), under the heading ``title`` (default: ``name``)."""

    name: str
    file: str
    text: tuple[str, ...]
    integers: tuple[str, ...] = ()
    columns: str = ""
    frame: Callable[[CompareRecord], pd.DataFrame | None] | None = field(default=None, repr=False, compare=False)
    render: Mapping[str, Render] = field(default_factory=dict, repr=False, compare=False)
    title: str = ""

    @property
    def heading(self) -> str:
        """The heading of its section in a report: ``title``, else ``name``."""
        return self.title or self.name

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"reading name {self.name!r} is not an identifier (it is an attribute of a results folder)")
        if "/" in self.file or not self.file.endswith(".csv"):
            raise ValueError(f"reading {self.name!r}: file {self.file!r} must be a CSV file name inside the folder")


#: Reading name -> its declaration, in the order a folder lists its files. :func:`register` adds one.
READINGS: dict[str, Reading] = {}

#: The reading the folder reader keeps as text (ids stay ids) besides parsing it (:mod:`harness.store.read`).
PER_QUERY = "per_query"


def register(reading: Reading) -> Reading:
    """Add ``reading`` to :data:`READINGS` (the one line a new reading needs) and return it; a name
    or a file already declared by another reading is a ``ValueError``."""
    for other in READINGS.values():
        if other.name != reading.name and other.file == reading.file:
            raise ValueError(f"reading {reading.name!r}: file {reading.file!r} is already reading {other.name!r}'s")
    if reading.name in READINGS and READINGS[reading.name] != reading:
        raise ValueError(f"a reading named {reading.name!r} is already registered")
    READINGS[reading.name] = reading
    return reading


def rendered(format: str) -> list[Reading]:
    """The registered readings with a renderer for report ``format``, in registry order."""
    return [reading for reading in READINGS.values() if format in reading.render]


def reading_frames(record: CompareRecord) -> dict[str, pd.DataFrame]:
    """Reading name -> its table from ``record``, for every registered reading the record has."""
    frames = {}
    for reading in READINGS.values():
        frame = reading.frame(record) if reading.frame is not None else None
        if frame is not None:
            frames[reading.name] = frame
    return frames


DIAGNOSIS_COLUMNS = ["system", "query_id", "category", "rank", "first_result", "shared_words"]


def _comparisons_frame(record: CompareRecord) -> pd.DataFrame:
    """The comparisons' own columns, then their effect size and power (one row each, in order)."""
    rows = [{c: getattr(comp, c) for c in COMPARISON_COLUMNS} for comp in record.comparisons]
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    power = record.power.reset_index(drop=True)
    keys = ["system_a", "system_b", "metric"]
    if len(power) != len(frame) or not frame[keys].equals(power[keys]):
        raise ValueError("result.power does not hold one row per comparison, in the comparisons' order")
    return pd.concat([frame, power[POWER_COLUMNS]], axis=1)


def _diagnosis_frame(record: CompareRecord) -> pd.DataFrame:
    rows = [
        {"system": f.system, "query_id": f.query_id, "category": f.category,
         "rank": f.rank if f.rank is not None else pd.NA, "first_result": f.first_result or "",
         "shared_words": f.shared_words_text()}
        for f in record.failures
    ]
    frame = pd.DataFrame(rows, columns=DIAGNOSIS_COLUMNS)
    frame["rank"] = frame["rank"].astype("Int64")
    return frame


def _card(part: str) -> Callable[[CompareRecord], pd.DataFrame | None]:
    """The metrics card's table ``part`` (``rollup``, ``facets``, ``query_facets``), None when the card is off."""
    return lambda record: None if record.retrieval is None else getattr(record.retrieval, part)


for _reading in (
    Reading("summary", "summary.csv", ("system",), columns="system, one column per metric as requested",
            frame=lambda record: record.summary),
    Reading(PER_QUERY, "per_query.csv", ("system", "query_id"), ("first_relevant_rank",),
            columns="system, query_id, one column per metric, first_relevant_rank (empty when none)",
            frame=lambda record: record.per_query),
    Reading("comparisons", "comparisons.csv", ("system_a", "system_b", "metric", "test", "verdict"),
            ("n_queries", "n_differing", "wins", "ties", "losses", "queries_needed"),
            columns="system_a, system_b, metric, mean_diff (a - b), ci_low, ci_high, p_value, p_adjusted, n_queries, "
                    "n_differing, test, verdict, then wins, ties, losses, effect_size, detectable_difference, "
                    "queries_needed", frame=_comparisons_frame),
    Reading("leaderboard", "leaderboard.csv", ("metric", "group", "system"),
            columns="metric, group (letters), system, mean, rank, mean_rank, rank_ci_low, rank_ci_high",
            frame=lambda record: record.leaderboard),
    Reading("facets", "facets.csv", ("system", "facet", "value", "note"), ("n_queries",),
            columns="system, facet, value, n_queries, per metric its mean, <metric>_ci_low, <metric>_ci_high, note",
            frame=lambda record: record.facets),
    Reading("risk_coverage", "risk_coverage.csv", ("system",), columns="system, coverage, risk, threshold",
            frame=lambda record: record.risk_coverage),
    Reading("risk_coverage_summary", "risk_coverage_summary.csv", ("system", "confidence", "risk_metric"),
            ("n_queries",), columns="system, confidence, risk_metric, n_queries, aurc, oracle_aurc, e_aurc, "
                                    "random_risk, kendall_tau", frame=lambda record: record.risk_coverage_summary),
    Reading("diagnosis", "diagnosis.csv", ("system", "query_id", "category", "first_result", "shared_words"),
            ("rank",), columns=", ".join(DIAGNOSIS_COLUMNS), frame=_diagnosis_frame),
    Reading("duplicates", "duplicates.csv", ("system", "query_id", "doc_a", "doc_b"), ("rank_a", "rank_b"),
            columns="system, query_id, doc_a, doc_b, rank_a, rank_b, jaccard", frame=lambda record: record.duplicates),
    # the metrics card's stored rollups (harness.core.retrieval_metrics), which bench serve answers from
    Reading("retrieval_metrics_summary", ROLLUP_FILE, ("system",), ("n_queries",),
            columns="per system: system, n_queries, per card name its mean, <name>_ci_low, <name>_ci_high",
            frame=_card("rollup")),
    Reading("retrieval_metrics_facets", FACETS_FILE, ("system", "facet", "value", "note"), ("n_queries",),
            columns="facets.csv's layout over the five card names", frame=_card("facets")),
    Reading("query_facets", QUERY_FACETS_FILE, ("query_id", "facet", "value"),
            columns="query_id, facet, value: the cell of each evaluated query in each rolled-up facet",
            frame=_card("query_facets")),
):
    register(_reading)
