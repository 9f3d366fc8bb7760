"""The evals API's response shapes, as pydantic models: what ``/openapi.json`` documents.

The answers themselves are built by :mod:`harness.serve.store` as plain JSON (the server does not
re-validate stored numbers on every request); these models say what they hold, and the API tests
check every answer against them through schemathesis.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model

import harness.readings  # noqa: F401  (registers the built-in readings, whose entries the schema lists)
from harness.core.readings import served, served_results

__all__ = ["ComparisonsResponse", "Message", "MetricsResponse", "ReadingEntry", "ReadingResponse", "ReadingsResponse", "Result", "ResultsPage", "RunsPage"]

#: A stored number: null for an empty cell, "inf" / "-inf" for an infinite one (JSON has no infinity).
Number = float | str | None


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    """A model's fields, in order, as :func:`pydantic.create_model` takes them (to join another model's)."""
    return {name: (info.annotation, info) for name, info in model.model_fields.items()}


def _entries() -> dict[str, Any]:
    """A system's entries of ``/metrics`` from each served reading: a view with a key is one entry
    (its model, null when the system has none); one without gives its model's fields."""
    fields: dict[str, Any] = {}
    for reading in served():
        view = reading.serve
        if view.model is None:  # a view without entries (a dashboard section only)
            continue
        if view.key:
            fields[view.key] = (view.model() | None, ...)
        else:
            fields.update(_fields(view.model()))
    return fields


def _run_fields(which: str) -> dict[str, Any]:
    """The run's entries of each served reading: ``run`` (of ``/metrics``) or ``listing`` (of ``/runs``)."""
    fields: dict[str, Any] = {}
    for reading in served():
        model = getattr(reading.serve, f"{which}_model")
        if model is not None:
            fields.update(_fields(model()))
    return fields


#: A system's entry of ``/metrics``: its label, then each served reading's entries (its
#: :class:`~harness.core.readings.ServeView`'s model), in the served order.
SystemMetrics = create_model("SystemMetrics", system=(str, ...), **_entries())

#: ``/metrics``: the run id, each served reading's run entries, and each system's entries.
MetricsResponse = create_model("MetricsResponse", runId=(str, ...), **_run_fields("run"),
                               systems=(list[SystemMetrics], ...))  # type: ignore[valid-type]


class _RunBase(BaseModel):
    id: str
    time: str | None
    corpus: str | None
    queries: int | None
    systems: list[str]
    metrics: list[str]


#: A run in the list of runs: its own entries, each served reading's (the card's cutoff), and its suite's.
RunSummary = create_model(
    "RunSummary", **_fields(_RunBase), **_run_fields("listing"),
    suite=(str | None, Field(None, description="a collection of a suite: the suite's id (absent for a single run)")),
    collection=(str | None, Field(None, description="a collection of a suite: the collection's name in the suite")))


class RunsPage(BaseModel):
    total: int
    offset: int
    limit: int
    items: list[RunSummary]  # type: ignore[valid-type]


def _result_model() -> Any:
    view = served_results()
    return view.model() if view is not None else dict[str, Any]


#: One per-result object of ``/results``: the model of the served reading that gives them (the metrics card's).
Result = _result_model()


class ResultsPage(BaseModel):
    total: int
    offset: int
    limit: int
    items: list[Result]  # type: ignore[valid-type]


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
