"""The evals API's response shapes, as pydantic models: what ``/openapi.json`` documents.

The answers themselves are built by :mod:`harness.serve.store` as plain JSON (the server does not
re-validate stored numbers on every request); these models say what they hold, and the API tests
check every answer against them through schemathesis.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, create_model

import harness.readings  # noqa: F401  (registers the built-in readings, whose entries the schema lists)
from harness.core.readings import served

__all__ = ["ComparisonsResponse", "Message", "MetricsResponse", "ReadingEntry", "ReadingResponse", "ReadingsResponse", "Result", "ResultsPage", "RunsPage"]

#: A stored number: null for an empty cell, "inf" / "-inf" for an infinite one (JSON has no infinity).
Number = float | str | None


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


class FacetRollup(BaseModel):
    facet: str
    value: str
    nQueries: int
    retrievalMetrics: RetrievalMetricsObject
    intervals: CardIntervals | None = Field(description="null under the minimum queries of a cell (see note)")
    note: str | None


class _SystemCard(BaseModel):
    system: str
    nQueries: int
    retrievalMetrics: RetrievalMetricsObject
    intervals: CardIntervals | None
    byFacet: list[FacetRollup]


#: A system's entry of ``/metrics``: the card, then each registered reading's entry (its
#: :class:`~harness.core.readings.ServeView`'s model, null when the system has none), in registry order.
SystemMetrics = create_model("SystemMetrics", __base__=_SystemCard,
                             **{reading.serve.key: (reading.serve.model() | None, ...) for reading in served()})


class IntervalSettings(BaseModel):
    confidence: float | None
    bootstrapSamples: int | None
    seed: int | None
    method: str | None


class MetricsResponse(BaseModel):
    runId: str
    defaultRetrievalK: int
    metricNames: dict[str, str] = Field(description="card name -> the registry metric it is (recallAtK -> recall@10)")
    interval: IntervalSettings
    systems: list[SystemMetrics]


class RunSummary(BaseModel):
    id: str
    time: str | None
    corpus: str | None
    queries: int | None
    systems: list[str]
    metrics: list[str]
    defaultRetrievalK: int | None
    suite: str | None = Field(None, description="a collection of a suite: the suite's id (absent for a single run)")
    collection: str | None = Field(None, description="a collection of a suite: the collection's name in the suite")


class RunsPage(BaseModel):
    total: int
    offset: int
    limit: int
    items: list[RunSummary]


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


class ResultsPage(BaseModel):
    total: int
    offset: int
    limit: int
    items: list[Result]


class ComparisonsResponse(BaseModel):
    runId: str
    comparisons: list[dict[str, Number | int]]


class ReadingEntry(BaseModel):
    """A reading of the registry that the run holds (:data:`harness.core.readings.READINGS`)."""

    name: str
    file: str
    columns: str = Field(description="what each row holds, in words")


class ReadingsResponse(BaseModel):
    runId: str
    readings: list[ReadingEntry]


class ReadingResponse(BaseModel):
    runId: str
    reading: str
    rows: list[dict[str, Number | int]] = Field(description="the reading's rows as stored, keys camelCase")


class Message(BaseModel):
    detail: str
