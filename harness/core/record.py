"""What a comparison found, as plain data: :class:`CompareRecord`, its systems
(:class:`SystemResult`) and :class:`CompareConfig`, the record of the options it was made with.

The surfaces that store or show a comparison (:mod:`harness.store.write`, :mod:`harness.report.text`)
read this data; :class:`harness.comparison.CompareResult`, a layer above them, adds the methods that
call them, so the imports run one way: comparison -> report, store -> record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from corpora import DEFAULT_CORPUS, Dataset, Run
from harness.core.diagnosis import DUPLICATE_VERSIONS, Failure
from harness.core.metrics import Metric
from harness.core.near_duplicates import DUPLICATE_COLUMNS
from harness.core.condensed import DEFAULT_UNJUDGED
from harness.core.options import (BOOTSTRAP_SAMPLES, CONFIDENCE, CONFIDENCE_FROM, DEPTH, FAIL_RANK, FAMILY, PERMUTATIONS,
                                  REL_THRESHOLD, SEED)
from harness.core.retrieval_metrics import DEFAULT_RETRIEVAL_K, RetrievalMetrics
from harness.core.statistics import Comparison, describe_settings
from retrievers import Retriever

__all__ = ["DEFAULT_METRICS", "DEFAULT_SYSTEMS", "CompareConfig", "CompareRecord", "SystemResult"]

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
    depth: int = DEPTH
    rel_threshold: int = REL_THRESHOLD
    bootstrap_samples: int = BOOTSTRAP_SAMPLES
    seed: int = SEED
    confidence: float = CONFIDENCE  # of the bootstrap interval; alpha = 1 - confidence for every test
    permutations: int = PERMUTATIONS  # Monte Carlo sign flips, used when more than 20 queries differ
    family: str = FAMILY  # Holm family: a key of harness.core.statistics.FAMILIES
    baseline: str | None = None
    fail_rank: int = FAIL_RANK
    analyzer: str | None = None
    facets: Sequence[str] | str | None = None  # facets to roll up; None: every numeric one and those of <= 20 values
    facets_file: str | None = None  # a side file of query facets (query id + one column per facet)
    risk_metric: str | None = None  # risk = 1 - this metric; None: the first metric
    confidence_from: str = CONFIDENCE_FROM  # a key of harness.core.risk_coverage.CONFIDENCES (a retriever's own wins)
    retrieval_k: int = DEFAULT_RETRIEVAL_K  # cutoff of the metrics card's recallAtK, precisionAtK and hitAtK
    cache_dir: str | None = None  # None: $RETBENCH_CACHE_DIR, else the user cache directory
    cache: bool = True  # False (--no-cache): fitted indexes are neither read from nor written to disk
    unjudged: str = DEFAULT_UNJUDGED  # how an unjudged document counts: harness.core.condensed.UNJUDGED_READINGS


@dataclass
class SystemResult:
    """One system of a comparison: its label, the fitted retriever, its run and its timings."""

    label: str
    retriever: Retriever
    run: Run
    fit_seconds: float
    search_seconds: float


@dataclass
class CompareRecord:
    """What :func:`harness.compare` found (the data of a :class:`~harness.comparison.CompareResult`):
    per-query and mean scores, paired comparisons, the diagnosis of failed queries, and everything
    needed to store and re-score it.

    ``per_query`` has the columns ``system``, ``query_id``, one per metric and
    ``first_relevant_rank``; ``summary`` the columns ``system`` and one per metric (exactly rounded
    means over ``query_ids``). ``comparisons`` are :class:`~harness.core.statistics.Comparison`,
    ``failures`` :class:`~harness.core.diagnosis.Failure`.

    The readings beyond the means, each a DataFrame with the columns of its file: ``leaderboard``
    (:data:`harness.core.leaderboard.LEADERBOARD_COLUMNS`), ``power`` (``system_a``, ``system_b``,
    ``metric`` and :data:`harness.core.power.POWER_COLUMNS`, one row per comparison, in order; joined to
    the comparisons in ``comparisons.csv``), ``facets`` (:func:`harness.core.facets.facet_columns`),
    ``risk_coverage`` and ``risk_coverage_summary`` (:data:`harness.core.risk_coverage.CURVE_COLUMNS`,
    :data:`~harness.core.risk_coverage.SUMMARY_COLUMNS`); :attr:`duplicates` lists the near-duplicate
    pairs behind the ``duplicate versions`` failures; the leaderboard's tie groups rest on
    ``comparisons`` alone. ``retrieval`` holds the metrics card's five numbers per system
    and query (:mod:`harness.core.retrieval_metrics`), whatever ``metrics`` are, with their rollups.
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
    power: pd.DataFrame
    facets: pd.DataFrame
    risk_coverage: pd.DataFrame
    risk_coverage_summary: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the manifest: worth knowing, not worth a warning
    #: the metrics card's retrievalMetrics per (system, query) at ``config.retrieval_k``, and its rollups
    retrieval: RetrievalMetrics | None = None
    #: where the work ran (:meth:`harness.engines.EngineRecord.describe`): the manifest's ``engine``
    engine: dict[str, Any] = field(default_factory=lambda: {"name": "local"})

    @property
    def duplicates(self) -> pd.DataFrame:
        """``system`` and :data:`~harness.core.near_duplicates.DUPLICATE_COLUMNS`: one row per near-duplicate
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
