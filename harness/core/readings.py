"""What a comparison reads beyond its means and pairwise tests: the leaderboard, effect sizes and power,
the facet rollup and risk–coverage, gathered for :func:`harness.compare` from its per-query values,
runs and comparisons. Each reading is computed by its own module (:mod:`harness.core.leaderboard`,
:mod:`harness.core.power`, :mod:`harness.core.facets`, :mod:`harness.core.risk_coverage`); this one decides what
they are given:

* the leaderboard's tie groups read the run's comparisons and nothing else (the same tests, Holm
  family and verdicts as ``comparisons.csv``): with a ``baseline`` only the pairs with it are
  compared, and the pairs without it are not separated (:mod:`harness.core.leaderboard`). Its ranks use
  the comparisons' resamples (the same index stream, drawn once for every metric).
* a system's confidence per query (risk–coverage) is the retriever's own, when it defines a
  ``confidence(queries)`` method (:data:`OWN_CONFIDENCE`), else the one ``confidence_from`` reads off
  its run (a key of :data:`harness.core.risk_coverage.CONFIDENCES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from corpora import Queries, RetbenchError, Run
from corpora.progress import Progress
from harness.core.parallel import ChunkMapper
from harness.core.facets import facet_rollup
from harness.core.leaderboard import leaderboards
from harness.core.power import power_table
from harness.core.risk_coverage import query_confidence, risk_coverage
from harness.core.statistics import Comparison
from retrievers import Retriever, RetrieverFailed

__all__ = ["OWN_CONFIDENCE", "Readings", "read_comparison", "system_confidence"]

#: The summary's ``confidence`` when a retriever's own ``confidence(queries)`` gave it.
OWN_CONFIDENCE = "retriever"


@dataclass(frozen=True)
class Readings:
    """The readings of one comparison; see :class:`harness.core.result.CompareResult` for each."""

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
                            f"{len(queries)} queries. Fix: return one float per query, in the order of queries.ids")
    return values, OWN_CONFIDENCE


def read_comparison(*, labels: Sequence[str], retrievers: Sequence[Retriever], runs: Sequence[Run],
                    queries: Queries, facet_queries: Queries, query_ids: Sequence[str], per_query: pd.DataFrame,
                    names: Sequence[str], comparisons: list[Comparison], bootstrap_samples: int, seed: int,
                    confidence: float, facets: Sequence[str] | None, risk_metric: str,
                    confidence_from: str, progress: Progress | None = None,
                    mapper: ChunkMapper | None = None) -> Readings:
    """Every reading of one comparison (see the module docstring for what each is given).

    ``queries``: the evaluated queries, in ``query_ids`` order (what the retrievers searched);
    ``facet_queries``: the dataset's queries with their facets; ``comparisons``: the run's (those
    written to ``comparisons.csv``); the statistics options are the comparison's.
    """
    tasks = progress if progress is not None else Progress()
    with tasks.task("leaderboard"):
        board = leaderboards(per_query, names, comparisons, bootstrap_samples, seed, confidence, mapper)
    power = power_table(per_query, comparisons)
    with tasks.task("facets"):
        facet_frame = facet_rollup(per_query, facet_queries, names, names=facets, n_samples=bootstrap_samples,
                                   seed=seed, confidence=confidence)
    confidences: dict[str, np.ndarray] = {}
    kinds: dict[str, str] = {}
    for label, retriever, run in zip(labels, retrievers, runs):
        confidences[label], kinds[label] = system_confidence(
            retriever, query_confidence(run, query_ids, confidence_from), queries, confidence_from)
    curve, summary = risk_coverage(per_query, risk_metric, confidences, kinds)
    return Readings(board, power, facet_frame, curve, summary)
