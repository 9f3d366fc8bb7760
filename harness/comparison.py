"""A finished comparison as a value: :class:`CompareResult`, and :class:`CompareConfig`, the record
of the options it was made with.

:func:`harness.compare` returns a :class:`CompareResult`; nothing is written until
:meth:`CompareResult.write` stores it as a results folder (:mod:`harness.results`), and
:meth:`CompareResult.report` is the text ``bench compare`` prints (:mod:`harness.report`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from corpora import DEFAULT_CORPUS, Dataset, Run, summary_line
from harness.diagnosis import DUPLICATE_VERSIONS, Failure
from harness.metrics import Metric
from harness.near_duplicates import DUPLICATE_COLUMNS
from harness.report import render
from harness.results import write_results
from harness.statistics import Comparison, describe_settings
from retrievers import Retriever

__all__ = ["DEFAULT_METRICS", "DEFAULT_SYSTEMS", "CompareConfig", "CompareResult", "SystemResult"]

#: ``bench compare``'s defaults: the article's four systems, and the metrics of a first look.
DEFAULT_SYSTEMS = "bm25,lsa,weighted,rrf"
DEFAULT_METRICS = "ndcg@10,recall@10,mrr,hit@10"


@dataclass
class CompareConfig:
    """The options of one comparison, as recorded in the results manifest (whose ``configuration``
    hash is computed from them, less where the data and the cache live) and as read from an
    experiment file. Not the library's input: :func:`harness.compare` takes objects and makes this
    record. ``format``, ``split`` and ``allow_unmatched_judgments`` say how the dataset was loaded;
    they are None when it was given as a :class:`~corpora.Dataset` already loaded.
    """

    corpus: str = DEFAULT_CORPUS
    systems: Sequence[str] | str = DEFAULT_SYSTEMS
    metrics: Sequence[str] | str = DEFAULT_METRICS
    format: str | None = None
    split: str | None = "test"
    allow_unmatched_judgments: bool | None = False  # see corpora.load_dataset
    depth: int = 1000
    rel_threshold: int = 1
    bootstrap_samples: int = 5000
    seed: int = 0
    confidence: float = 0.95  # of the bootstrap interval; alpha = 1 - confidence for every test
    permutations: int = 10_000  # Monte Carlo sign flips, used when more than 20 queries differ
    family: str = "metric"  # Holm family: a key of harness.statistics.FAMILIES
    baseline: str | None = None
    fail_rank: int = 3
    analyzer: str | None = None
    facets: Sequence[str] | str | None = None  # facets to roll up; None: every numeric one and those of <= 20 values
    facets_file: str | None = None  # a side file of query facets (query id + one column per facet)
    risk_metric: str | None = None  # risk = 1 - this metric; None: the first metric
    confidence_from: str = "score"  # a key of harness.risk_coverage.CONFIDENCES (a retriever's own wins)
    cache_dir: str | None = None  # None: $RETBENCH_CACHE_DIR, else the user cache directory
    cache: bool = True  # False (--no-cache): fitted indexes are neither read from nor written to disk


@dataclass
class SystemResult:
    """One system of a comparison: its label, the fitted retriever, its run and its timings."""

    label: str
    retriever: Retriever
    run: Run
    fit_seconds: float
    search_seconds: float


@dataclass
class CompareResult:
    """What :func:`harness.compare` found: per-query and mean scores, paired comparisons, the
    diagnosis of failed queries, and everything needed to store and re-score it.

    ``per_query`` has the columns ``system``, ``query_id``, one per metric and
    ``first_relevant_rank``; ``summary`` the columns ``system`` and one per metric (exactly rounded
    means over ``query_ids``). ``comparisons`` are :class:`~harness.statistics.Comparison`,
    ``failures`` :class:`~harness.diagnosis.Failure`.

    The readings beyond the means, each a DataFrame with the columns of its file: ``leaderboard``
    (:data:`harness.leaderboard.LEADERBOARD_COLUMNS`), ``power`` (``system_a``, ``system_b``,
    ``metric`` and :data:`harness.power.POWER_COLUMNS`, one row per comparison, in order; joined to
    the comparisons in ``comparisons.csv``), ``facets`` (:func:`harness.facets.facet_columns`),
    ``risk_coverage`` and ``risk_coverage_summary`` (:data:`harness.risk_coverage.CURVE_COLUMNS`,
    :data:`~harness.risk_coverage.SUMMARY_COLUMNS`); :attr:`duplicates` lists the near-duplicate
    pairs behind the ``duplicate versions`` failures. ``leaderboard_comparisons`` are the comparisons
    the tie groups rest on: ``comparisons`` itself with all pairs, every pair computed for the
    leaderboard with a ``baseline``.
    """

    config: CompareConfig
    dataset: Dataset
    metrics: list[Metric]
    systems: list[SystemResult]
    query_ids: list[str]
    excluded_query_ids: list[str]
    per_query: pd.DataFrame  # columns: system, query_id, metrics..., first_relevant_rank
    summary: pd.DataFrame  # columns: system, metrics...
    comparisons: list[Comparison]
    failures: list[Failure]
    analyzer: str
    leaderboard: pd.DataFrame
    leaderboard_comparisons: list[Comparison]
    power: pd.DataFrame
    facets: pd.DataFrame
    risk_coverage: pd.DataFrame
    risk_coverage_summary: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the manifest: worth knowing, not worth a warning

    @property
    def duplicates(self) -> pd.DataFrame:
        """``system`` and :data:`~harness.near_duplicates.DUPLICATE_COLUMNS`: one row per near-duplicate
        pair in the top ``fail_rank`` places of a query (``duplicates.csv``)."""
        rows = [[f.system, f.query_id, p.doc_a, p.doc_b, p.rank_a, p.rank_b, p.jaccard]
                for f in self.failures if f.category == DUPLICATE_VERSIONS for p in f.duplicates]
        return pd.DataFrame(rows, columns=["system", *DUPLICATE_COLUMNS])

    def duplicate_counts(self) -> dict[str, int]:
        """System label -> queries whose top ``fail_rank`` places hold near-duplicates (``duplicate
        versions`` failures), every system listed."""
        counts = {s.label: 0 for s in self.systems}
        for f in self.failures:
            if f.category == DUPLICATE_VERSIONS:
                counts[f.system] += 1
        return counts

    def statistics_record(self) -> dict[str, object]:
        """The manifest's ``statistics``: bootstrap, which randomisation test, flips, stream, alpha,
        Holm family, and the pairs compared (JSON-ready)."""
        config = self.config
        return {**describe_settings(config.bootstrap_samples, config.permutations, config.seed, config.confidence,
                                    config.family, self.comparisons),
                "pairs": "each system vs the baseline" if config.baseline else "all pairs",
                "baseline": config.baseline}

    def report(self, show_failures: int | None = None, *, heading: bool = True) -> str:
        """The report ``bench compare`` prints: the dataset's summary line (unless ``heading`` is
        False), the leaderboard, the means, the rank of the first relevant document, the
        comparisons, effect size and power, one table per facet, risk–coverage and the diagnosis.
        ``show_failures=None`` lists every failed query (``report.txt``); a number abridges the
        diagnosis to that many per system (the terminal's ``--show-failures``)."""
        body = render(self, show_failures)
        return f"{summary_line(self.dataset)}\n{body}" if heading else body

    def write(self, out: Path | str, *, command_line: Sequence[str] | None = None,
              say: Callable[[str], None] | None = None) -> Path:
        """Store the comparison as a new results folder under ``out`` (created if missing) and
        return its path; ``report.txt`` there is :meth:`report` whole. ``command_line`` is recorded
        in the manifest (default ``sys.argv``); ``say`` hears notes such as a removed stale staging
        folder (default: stderr). An unusable ``out`` is a :class:`~corpora.RetbenchError`."""
        arguments = {} if say is None else {"say": say}
        return write_results(self, Path(out), list(command_line) if command_line is not None else None,
                             report=self.report() + "\n", **arguments)
