"""The metrics card's ``retrievalMetrics`` object: five numbers per (system, query), rolled up per
system and per query facet, computed once by ``bench compare`` and stored for ``bench serve``.

The object (the card's names, its values from the metric registry, :data:`CARD_METRICS`)
    ``recallAtK`` = ``recall@k``, ``precisionAtK`` = ``precision@k``, ``hitAtK`` = ``hit@k`` (0 or 1,
    stored as an integer), ``mrr`` = ``mrr`` (1 / rank of the first relevant document, uncut: the
    card's ``mrr(ranked, qrels)`` has no cutoff), and ``ndcgAt10`` = ``ndcg_exp@10`` (exponential
    gain ``2^grade - 1``, always at 10 whatever k). k is ``--retrieval-k`` (the card's
    ``defaultRetrievalK``, :data:`DEFAULT_RETRIEVAL_K` = 10), independent of ``--metrics``. Each
    value is :func:`harness.core.evaluation.evaluate` over the system's run, the evaluated queries and
    the comparison's ``rel_threshold`` -- the registry's batch path, never a second implementation --
    so ``ndcgAt10`` equals ``per_query.csv``'s ``ndcg_exp@10`` to the last bit when both are there.
``resultId`` (:func:`result_id`)
    32 hex digits: the first 128 bits of SHA-256 over the manifest's hashes of the documents,
    queries, judgments and configuration, the system label and the query id. The same inputs give
    the same id on every rerun (the run id holds the time, so the result id does not use it), and a
    change to any input that can move the number gives another.
Rollup per system (:func:`rollup`)
    ``n_queries`` and, per card name, the exactly rounded mean (``math.fsum / n``, as
    ``summary.csv``) with its paired bootstrap percentile interval: one resampling of the queries
    (:func:`harness.core.statistics.bootstrap_means`, the comparison's resamples, seed and confidence)
    shared by every system and card name.
Rollup per facet
    :func:`harness.core.facets.facet_rollup` over the five card columns, with the comparison's facets,
    bootstrap, seed and confidence (``facets.csv``'s rules: none under 5 queries).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from corpora import Qrels, Queries, Run
from harness.core.evaluation import evaluate, mean_over_queries
from harness.core.facets import facet_rollup, select_facets
from harness.core.metrics import Metric, parse_metric
from harness.engines.parallel import ChunkMapper
from harness.core.statistics import bootstrap_means, percentile_interval
from harness.core.options import BOOTSTRAP_SAMPLES, CONFIDENCE, RETRIEVAL_K, SEED, check_retrieval_k

__all__ = ["CARD_METRICS", "DEFAULT_RETRIEVAL_K", "ROLLUP_FILE", "FACETS_FILE", "QUERY_FACETS_FILE", "RESULTS_FILE",
           "RetrievalMetrics", "card_metrics", "check_retrieval_k", "result_id", "result_lines", "retrieval_metrics",
           "rollup"]

#: The card's ``defaultRetrievalK``: the cutoff of recall, precision and hit when none is given
#: (declared with the other options, :data:`harness.core.options.RETRIEVAL_K`).
DEFAULT_RETRIEVAL_K = RETRIEVAL_K
#: Card name -> the registry's metric name (``{k}``: the retrieval cutoff), in the card's order.
CARD_METRICS = {
    "recallAtK": "recall@{k}",
    "precisionAtK": "precision@{k}",
    "ndcgAt10": "ndcg_exp@10",
    "mrr": "mrr",
    "hitAtK": "hit@{k}",
}
#: Card names whose value is a count (written as an integer, not a float).
_INTEGER = ("hitAtK",)
#: Files of the results folder (``harness.store.write`` writes them; ``bench serve`` reads them).
RESULTS_FILE = "retrieval_metrics.jsonl"
ROLLUP_FILE = "retrieval_metrics_summary.csv"
FACETS_FILE = "retrieval_metrics_facets.csv"
QUERY_FACETS_FILE = "query_facets.csv"


def card_metrics(retrieval_k: int = DEFAULT_RETRIEVAL_K) -> dict[str, Metric]:
    """Card name -> the registry's :class:`~harness.core.metrics.Metric` at cutoff ``retrieval_k``.

    >>> {name: m.name for name, m in card_metrics(4).items()}
    {'recallAtK': 'recall@4', 'precisionAtK': 'precision@4', 'ndcgAt10': 'ndcg_exp@10', 'mrr': 'mrr', 'hitAtK': 'hit@4'}
    """
    k = check_retrieval_k(retrieval_k)
    return {card: parse_metric(name.format(k=k)) for card, name in CARD_METRICS.items()}


def result_id(hashes: Mapping[str, str], system: str, query_id: str) -> str:
    """A result's id: 32 hex digits of SHA-256 over the data and configuration hashes, the system
    label and the query id (see the module docstring).

    >>> result_id({"documents": "d", "queries": "q", "judgments": "j", "configuration": "c"}, "bm25", "q01")
    'd6d698901028226c85a76dbeb45cab82'
    """
    key = [hashes.get(name, "") for name in ("documents", "queries", "judgments", "configuration")]
    digest = hashlib.sha256(json.dumps([*key, system, query_id]).encode("utf-8")).hexdigest()
    return digest[:32]


@dataclass(frozen=True)
class RetrievalMetrics:
    """The card's numbers for one comparison.

    ``per_query``: ``system``, ``query_id`` and one column per card name (systems in order, each
    on the evaluated queries in order); ``rollup``: per system, ``n_queries`` and per card name its
    mean, ``<name>_ci_low``, ``<name>_ci_high``; ``facets``: :func:`harness.core.facets.facet_rollup`'s
    columns over the card names; ``query_facets``: ``query_id``, ``facet``, ``value`` -- the cell
    each evaluated query falls in for every rolled-up facet (what a filter by facet reads).
    """

    retrieval_k: int
    metrics: dict[str, Metric]
    per_query: pd.DataFrame
    rollup: pd.DataFrame
    facets: pd.DataFrame
    query_facets: pd.DataFrame


def rollup(per_query: pd.DataFrame, n_samples: int, seed: int, confidence: float,
           mapper: ChunkMapper | None = None) -> pd.DataFrame:
    """Per system: ``n_queries``, then per card name the exact mean and its paired bootstrap interval
    (every system and card name on the same resampled queries)."""
    names = list(CARD_METRICS)
    systems = list(dict.fromkeys(per_query["system"]))
    columns = ["system", "n_queries", *[c for n in names for c in (n, f"{n}_ci_low", f"{n}_ci_high")]]
    if not systems:
        return pd.DataFrame(columns=columns)
    blocks = [per_query.loc[per_query["system"] == s, names].to_numpy(dtype=np.float64) for s in systems]
    values = np.concatenate(blocks, axis=1)  # queries x (system, card name)
    low, high = percentile_interval(bootstrap_means(values, n_samples, seed, mapper=mapper), confidence)
    rows = []
    for j, system in enumerate(systems):
        row: list[object] = [system, blocks[j].shape[0]]
        for i, name in enumerate(names):
            at = j * len(names) + i
            row += [mean_over_queries(blocks[j][:, i]), float(low[at]), float(high[at])]
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def retrieval_metrics(runs: Mapping[str, Run], qrels: Qrels, query_ids: Sequence[str], queries: Queries, *,
                      retrieval_k: int = DEFAULT_RETRIEVAL_K, rel_threshold: int = 1,
                      facets: Sequence[str] | None = None, n_samples: int = BOOTSTRAP_SAMPLES, seed: int = SEED,
                      confidence: float = CONFIDENCE, mapper: ChunkMapper | None = None) -> RetrievalMetrics:
    """The card's object for every system (label -> run) and evaluated query, and its rollups.

    ``queries`` holds the facets (the dataset's queries); ``facets`` picks them as ``bench compare``'s
    ``--facets`` does (None: the default selection).
    """
    metrics = card_metrics(retrieval_k)
    names = list(metrics)
    frames = []
    for system, run in runs.items():
        frame = evaluate(run, qrels, list(metrics.values()), query_ids, rel_threshold)
        frame = frame[[m.name for m in metrics.values()]].set_axis(names, axis=1).reset_index()
        frame.insert(0, "system", system)
        frames.append(frame)
    per_query = (pd.concat(frames, ignore_index=True) if frames
                 else pd.DataFrame(columns=["system", "query_id", *names]))
    facet_frame = facet_rollup(per_query, queries, names, names=facets, n_samples=n_samples, seed=seed,
                               confidence=confidence)
    cells = [[q, facet.name, facet.cell_of[q]] for facet in select_facets(queries, query_ids, facets)
             for q in query_ids]
    return RetrievalMetrics(retrieval_k, metrics, per_query, rollup(per_query, n_samples, seed, confidence, mapper),
                            facet_frame, pd.DataFrame(cells, columns=["query_id", "facet", "value"]))


def _number(name: str, value: float) -> float | int:
    return int(value) if name in _INTEGER else float(value)


def result_lines(data: RetrievalMetrics, run_id: str, hashes: Mapping[str, str]) -> str:
    """``retrieval_metrics.jsonl``: one JSON object per (system, query), in ``per_query``'s order::

        {"resultId": ..., "runId": ..., "system": ..., "queryId": ...,
         "retrievalMetrics": {"recallAtK": ..., "precisionAtK": ..., "ndcgAt10": ..., "mrr": ..., "hitAtK": ...}}

    Floats are written as Python's shortest repr, so they read back to the same bits.
    """
    names = list(CARD_METRICS)
    lines = []
    for system, query_id, *values in data.per_query[["system", "query_id", *names]].itertuples(index=False):
        if any(not math.isfinite(v) for v in values):
            raise ValueError(f"a card metric of {system!r} on query {query_id!r} is not finite")
        lines.append(json.dumps({
            "resultId": result_id(hashes, str(system), str(query_id)), "runId": run_id, "system": str(system),
            "queryId": str(query_id),
            "retrievalMetrics": {name: _number(name, v) for name, v in zip(names, values)},
        }))
    return "".join(f"{line}\n" for line in lines)
