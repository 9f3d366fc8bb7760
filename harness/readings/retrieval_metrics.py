"""The metrics card's ``retrievalMetrics`` object: five numbers per (system, query), rolled up per
system and per query facet, computed once by ``bench compare`` and stored for ``bench serve``.

One module, registered as an add-on is (docs/adding-a-reading.md): its compute step
(:func:`compute`), its three tables (``retrieval_metrics_summary.csv``,
``retrieval_metrics_facets.csv``, ``query_facets.csv``), its per-result lines
(``retrieval_metrics.jsonl``, :func:`result_lines`, which hold the run id), its record in the manifest
(:func:`manifest_entries`, ``retrieval_metrics``) and its part of ``bench serve`` (:data:`SERVE`:
the run's and each system's entries of ``/metrics``, the per-result objects of ``/results``, their
schema and the dashboard's panels). The per-query values are the comparison's table
``retrieval_metrics`` (``result.retrieval_metrics``), written as the ``.jsonl`` file only.

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
    The five card columns rolled up per query facet by the facets reading, as it rolls up the
    comparison's metrics (:class:`harness.core.readings.RollUp`, :data:`BY_FACET`: the comparison's
    facets, bootstrap, seed and confidence; none under 5 queries), with each query's cell per facet.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from corpora import InputFileError, Qrels, Run
from corpora.wording import counted
from harness.core.evaluation import evaluate, mean_over_queries
from harness.core.metrics import Metric, parse_metric
from harness.core.readings import RollUp, Reading, ReadingInputs, ServeResults, ServeView, register
from harness.engines.parallel import ChunkMapper
from harness.core.statistics import bootstrap_means, percentile_interval
from harness.core.options import BOOTSTRAP_SAMPLES, CONFIDENCE, RETRIEVAL_K, SEED, check_retrieval_k

if TYPE_CHECKING:
    from harness.core.record import CompareRecord

__all__ = ["BY_FACET", "CARD_METRICS", "DEFAULT_RETRIEVAL_K", "ROLLUP_FILE", "FACETS_FILE", "QUERY_FACETS_FILE",
           "RESULTS_FILE", "SERVE", "RetrievalMetrics", "card_metrics", "check_retrieval_k", "compute", "manifest_entries",
           "result_id", "result_lines", "retrieval_metrics", "rollup"]

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
    mean, ``<name>_ci_low``, ``<name>_ci_high`` (its rollup per facet is the facets reading's, :data:`BY_FACET`).
    """

    retrieval_k: int
    metrics: dict[str, Metric]
    per_query: pd.DataFrame
    rollup: pd.DataFrame


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


def retrieval_metrics(runs: Mapping[str, Run], qrels: Qrels, query_ids: Sequence[str], *,
                      retrieval_k: int = DEFAULT_RETRIEVAL_K, rel_threshold: int = 1,
                      n_samples: int = BOOTSTRAP_SAMPLES, seed: int = SEED,
                      confidence: float = CONFIDENCE, mapper: ChunkMapper | None = None) -> RetrievalMetrics:
    """The card's object for every system (label -> run) and evaluated query, and its rollup per system."""
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
    return RetrievalMetrics(retrieval_k, metrics, per_query, rollup(per_query, n_samples, seed, confidence, mapper))


def _number(name: str, value: float) -> float | int:
    return int(value) if name in _INTEGER else float(value)


def result_lines(per_query: pd.DataFrame, run_id: str, hashes: Mapping[str, str]) -> str:
    """``retrieval_metrics.jsonl``: one JSON object per (system, query) of the card's ``per_query``
    values (:attr:`RetrievalMetrics.per_query`), in its order::

        {"resultId": ..., "runId": ..., "system": ..., "queryId": ...,
         "retrievalMetrics": {"recallAtK": ..., "precisionAtK": ..., "ndcgAt10": ..., "mrr": ..., "hitAtK": ...}}

    Floats are written as Python's shortest repr, so they read back to the same bits.
    """
    names = list(CARD_METRICS)
    lines = []
    for system, query_id, *values in per_query[["system", "query_id", *names]].itertuples(index=False):
        if any(not math.isfinite(v) for v in values):
            raise ValueError(f"a card metric of {system!r} on query {query_id!r} is not finite")
        lines.append(json.dumps({
            "resultId": result_id(hashes, str(system), str(query_id)), "runId": run_id, "system": str(system),
            "queryId": str(query_id),
            "retrievalMetrics": {name: _number(name, v) for name, v in zip(names, values)},
        }))
    return "".join(f"{line}\n" for line in lines)


# ----- the reading: computed with the comparison, stored, served ----------------------------------

#: The comparison's table of the card's per-query values (written as RESULTS_FILE, not as a CSV file).
PER_QUERY_TABLE = "retrieval_metrics"
_SUMMARY, _FACETS, _QUERY_FACETS = "retrieval_metrics_summary", "retrieval_metrics_facets", "query_facets"
_INTERVALS = ("paired bootstrap percentile interval over the queries (the comparison's resamples, seed and "
              "confidence), every system and card name on the same resampled queries")


def compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    """The card over the comparison's systems and evaluated queries: its per-query values and its
    rollup per system, at the ``Readings`` group's ``retrieval_k``, the intervals as the ``statistics``
    group says (the facets reading rolls the per-query values up per facet, :data:`BY_FACET`)."""
    config = inputs.config
    statistics, readings = config.statistics, config.readings
    if inputs.qrels is None:
        raise ValueError("the metrics card scores the runs itself: its inputs need the judgments (qrels)")
    with inputs.progress.task("retrieval metrics"):
        card = retrieval_metrics({s.label: s.run for s in inputs.systems}, inputs.qrels, list(inputs.queries.ids),
                                 retrieval_k=readings.retrieval_k, rel_threshold=config.scoring.rel_threshold,
                                 n_samples=statistics.bootstrap_samples, seed=statistics.seed,
                                 confidence=statistics.confidence, mapper=inputs.mapper)
    return {PER_QUERY_TABLE: card.per_query, _SUMMARY: card.rollup}


def manifest_entries(record: CompareRecord) -> dict[str, Any]:
    """The manifest's ``retrieval_metrics``: the card's cutoff, each card name's metric, the files
    (None when the comparison has no card)."""
    if PER_QUERY_TABLE not in record.tables:
        return {"retrieval_metrics": None}
    k = record.config.readings.retrieval_k
    return {"retrieval_metrics": {
        "default_retrieval_k": k,
        "metrics": {name: metric.name for name, metric in card_metrics(k).items()},
        "result_id": "first 32 hex digits of SHA-256 over JSON [hashes.documents, hashes.queries, hashes.judgments, "
                     "hashes.configuration, system, query id]: the same on every rerun of the same inputs",
        "intervals": _INTERVALS,
        "files": {"results": RESULTS_FILE, "rollup": ROLLUP_FILE, "facets": FACETS_FILE,
                  "query_facets": QUERY_FACETS_FILE},
    }}


def manifest_shape() -> dict[str, Any]:
    """The shape :func:`manifest_entries` has, checked when a folder is opened: an object, or null."""
    from harness.store.read import Maybe

    return {"retrieval_metrics": Maybe(dict)}


def identified(record: CompareRecord, run_id: str, hashes: Mapping[str, str]) -> dict[str, str]:
    """The card's per-result lines, which hold the run id (none when the comparison has no card)."""
    if PER_QUERY_TABLE not in record.tables:
        return {}
    return {RESULTS_FILE: result_lines(record.tables[PER_QUERY_TABLE], run_id, hashes)}


# ----- bench serve: /metrics, /results and the dashboard ------------------------------------------


def _settings(folder: Any) -> dict[str, Any]:
    card = folder.manifest.get("retrieval_metrics")
    if not card:
        raise InputFileError(folder.path / "manifest.json", "has no retrieval_metrics entry: the run was made by a "
                             "bench compare before the metrics card was stored",
                             fix="run bench compare again to store the card's numbers")
    return card


def _card(row: Mapping[str, Any]) -> dict[str, Any]:
    return {name: (int(row[name]) if name == "hitAtK" and float(row[name]).is_integer() else row[name])
            for name in CARD_METRICS}


def _intervals(row: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    bounds = {name: {"low": row[f"{name}_ci_low"], "high": row[f"{name}_ci_high"]} for name in CARD_METRICS}
    return None if all(pd.isna(b["low"]) for b in bounds.values()) else bounds


def served_run(folder: Any) -> dict[str, Any]:
    """``/metrics``' run entries: the cutoff, the metric behind each card name and the interval's settings."""
    card = _settings(folder)
    statistics = folder.manifest.get("statistics", {})
    return {
        "defaultRetrievalK": card["default_retrieval_k"],
        "metricNames": card["metrics"],
        "interval": {"confidence": statistics.get("confidence"), "bootstrapSamples": statistics.get("bootstrap_samples"),
                     "seed": statistics.get("seed"), "method": card.get("intervals")},
    }


def served(folder: Any, system: str) -> dict[str, Any]:
    """``/metrics``' entries of ``system``: its queries and the five means with their intervals (the
    same per facet value follow, from the facets reading's rollup of :data:`BY_FACET`)."""
    _settings(folder)
    rollup = folder.table(_SUMMARY)
    (row,) = rollup[rollup["system"] == system].to_dict("records")
    return {"nQueries": int(row["n_queries"]), **_values(row)}


def _values(row: Mapping[str, Any]) -> dict[str, Any]:
    """A rollup row's served entries: the five means and their intervals."""
    return {"retrievalMetrics": _card(row), "intervals": _intervals(row)}


def served_listing(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The run's entry in the list of runs: its card's cutoff."""
    card = manifest.get("retrieval_metrics") or {}
    return {"defaultRetrievalK": card.get("default_retrieval_k")}


def served_results(folder: Any, annotate: Callable[[str, str], Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``/results``: each stored per-result line, with the run's entries of that result (``annotate``)
    and the cell of its query in each rolled-up facet."""
    _settings(folder)
    path = folder.verified(RESULTS_FILE)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputFileError(path, "file not found", fix="run bench compare again to store the card's numbers") from None
    items = []
    for number, line in enumerate(lines, 1):
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputFileError(path, f"is not JSON lines ({exc.msg})", line=number,
                                 fix="restore the file bench compare wrote") from None
    cells = folder.table(_QUERY_FACETS)
    facets: dict[str, dict[str, str]] = {}
    for query_id, facet, value in cells.itertuples(index=False, name=None):
        facets.setdefault(query_id, {})[facet] = value
    for item in items:
        item.update(annotate(item["system"], item["queryId"]))
        item["facets"] = facets.get(item["queryId"], {})
    return items


@cache  # one class of each: the schema names each model once
def _models() -> dict[str, type]:
    """The pydantic models of the card's entries (what ``/openapi.json`` documents)."""
    from pydantic import BaseModel, Field

    class RetrievalMetricsObject(BaseModel):
        """The metrics card's object (a mean over queries in a rollup; hitAtK is 0 or 1 per result)."""

        recallAtK: float
        precisionAtK: float
        ndcgAt10: float = Field(description="nDCG@10 with exponential gain 2^grade - 1 (the registry's ndcg_exp@10)")
        mrr: float
        hitAtK: float

    class Interval(BaseModel):
        low: float | None
        high: float | None

    class CardIntervals(BaseModel):
        """Paired bootstrap percentile interval of each of the five means."""

        recallAtK: Interval
        precisionAtK: Interval
        ndcgAt10: Interval
        mrr: Interval
        hitAtK: Interval

    class SystemCard(BaseModel):
        nQueries: int
        retrievalMetrics: RetrievalMetricsObject
        intervals: CardIntervals | None

    class IntervalSettings(BaseModel):
        confidence: float | None
        bootstrapSamples: int | None
        seed: int | None
        method: str | None

    class RunCard(BaseModel):
        defaultRetrievalK: int
        metricNames: dict[str, str] = Field(description="card name -> the registry metric it is (recallAtK -> recall@10)")
        interval: IntervalSettings

    class Listing(BaseModel):
        defaultRetrievalK: int | None

    class Diagnosis(BaseModel):
        category: str
        rank: int | None
        firstResult: str | None
        sharedWords: str | None

    class Result(BaseModel):
        resultId: str
        runId: str
        system: str
        queryId: str
        retrievalMetrics: RetrievalMetricsObject
        firstRelevantRank: int | None
        diagnosis: Diagnosis | None
        facets: dict[str, str]

    return {"system": SystemCard, "run": RunCard, "listing": Listing, "result": Result,
            "values": RetrievalMetricsObject, "intervals": CardIntervals}


def _rolled_up_fields() -> dict[str, Any]:
    """The pydantic fields of a rollup cell's values (:func:`_values`) as bench serve documents them."""
    from pydantic import Field

    models = _models()
    return {"retrievalMetrics": (models["values"], ...),
            "intervals": (models["intervals"] | None,
                          Field(description="null under the minimum queries of a cell (see note)"))}


def _interval(bounds: Mapping[str, Any] | None, name: str, number: Callable[[Any], str]) -> str:
    if bounds is None or bounds[name]["low"] is None:
        return ""
    low, high = bounds[name]["low"], bounds[name]["high"]
    return f'<span class="ci" data-low="{low!r}" data-high="{high!r}">[{number(low)}, {number(high)}]</span>'


def dashboard_section(metrics: Mapping[str, Any], number: Callable[[Any], str],
                      chart: Callable[[Callable[[], str]], str]) -> str:
    """The dashboard's panel from the ``/metrics`` answer: a card per system (the five means with
    their intervals)."""
    cards = []
    for system in metrics["systems"]:
        values = system["retrievalMetrics"]
        rows = "".join(
            f'<dt>{name}</dt><dd data-metric="{name}" data-value="{values[name]!r}">{number(values[name])} '
            f'{_interval(system["intervals"], name, number)}</dd>' for name in CARD_METRICS)
        cards.append(f'<section class="card" data-system="{escape(system["system"])}"><h3>{escape(system["system"])}'
                     f'</h3><dl>{rows}</dl><p class="muted">{counted(system["nQueries"], "query")}</p></section>')
    names = ", ".join(f"{card} = {escape(metric)}" for card, metric in metrics["metricNames"].items())
    interval = metrics["interval"]
    level = f"{interval['confidence']:.0%}" if isinstance(interval.get("confidence"), float) else "the"
    return (f'<h2 id="retrieval-metrics">Retrieval metrics (k = {metrics["defaultRetrievalK"]})</h2>'
            f'<p class="muted">Mean over the queries; {level} paired bootstrap interval in brackets '
            f'({interval.get("bootstrapSamples")} resamples, seed {interval.get("seed")}). {names}.</p>'
            f'<div class="cards">{"".join(cards)}</div>')


def _shown(cell: Mapping[str, Any], name: str, number: Callable[[Any], str]) -> str:
    """A rollup cell's value of card name ``name`` on the dashboard: the mean and its interval."""
    return f'{number(cell["retrievalMetrics"][name])} {_interval(cell["intervals"], name, number)}'


#: The card's part of ``bench serve``: first among the served readings' entries.
SERVE = ServeView(
    "", served, lambda: _models()["system"], dashboard_section, run=served_run, run_model=lambda: _models()["run"],
    listing=served_listing, listing_model=lambda: _models()["listing"],
    results=ServeResults(served_results, lambda: _models()["result"], tuple(CARD_METRICS),
                         lambda item: item["retrievalMetrics"]),
    describe="Per system: the card's retrievalMetrics with intervals", order=0)
#: The card's five numbers rolled up per query facet by the facets reading (its tables, ``bench serve``
#: entries and dashboard table), with each evaluated query's cell per facet (what ``/results`` filters by).
BY_FACET = RollUp(PER_QUERY_TABLE, tuple(CARD_METRICS), _FACETS, FACETS_FILE, _QUERY_FACETS, QUERY_FACETS_FILE,
                   order=91, what="the five card names", entries=_values, model=_rolled_up_fields, shown=_shown)

register(Reading(_SUMMARY, ROLLUP_FILE, ("system",), ("n_queries",),
                 columns="per system: system, n_queries, per card name its mean, <name>_ci_low, <name>_ci_high",
                 compute=compute, record=manifest_entries, record_shape=manifest_shape, files=identified,
                 resampled=lambda n_systems, n_metrics: n_systems * len(CARD_METRICS), serve=SERVE, order=90,
                 rollup=BY_FACET))
