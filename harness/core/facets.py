"""Metrics rolled up per query facet: each system's mean over the queries of one facet value.

Which facets (:func:`select_facets`)
    ``names`` picks them, in that order. By default every facet of the queries, in their order,
    that is *numeric* or has at most :data:`MAX_VALUES` (20) distinct values among the evaluated
    queries; so free text (TREC descriptions) and identifiers (Cranfield's ``original_id``) stay
    out unless named.
Cells (:func:`facet_cells`)
    A facet is numeric when every value present is a number (``int`` or ``float``, not a boolean;
    text that looks like a number is text: CSV cells are text, see :mod:`corpora.facets`). A
    numeric facet with more distinct values than ``buckets`` (default :data:`QUANTILE_BUCKETS`, 4:
    quartiles) is cut into quantile buckets; any other facet has one cell per value. Bucket edges
    are the quantiles at 0, 1/B, ..., 1 of the evaluated queries' values, each the smallest value
    with at least that share of the values at or below it (numpy's ``inverted_cdf``), so every edge
    is a value that occurs; equal edges merge. Bucket i holds ``edge[i-1] <= x < edge[i]``, the
    last one also its upper edge, so no bucket is empty, and its label is ``q<i> [low, high)``
    (``q4 [17, 40]`` for the last), numbers written with 6 significant digits. A missing value
    (``None``, NaN, empty text) is the cell :data:`MISSING`, shown last. Value cells are labelled
    by their text (numbers as in bucket labels) and ordered by number for a numeric facet, else
    by text.
Numbers per (system, facet, value)
    ``n_queries``, and for each metric the mean over the cell's queries, ``math.fsum / n`` (exactly
    rounded, so it equals the mean of ``per_query.csv``'s rows of those queries to the last bit), and
    a paired bootstrap percentile interval: the cell's queries, in evaluation order, are resampled
    with :func:`harness.core.statistics.bootstrap_indices` (``n_samples`` resamples from ``seed``; every
    cell uses the run's seed), each resample is averaged for every system and metric at once, so
    all systems of a cell see the same resampled queries, and :func:`harness.core.statistics.percentile_interval`
    reads the bounds. A cell with fewer than ``min_queries`` (:data:`MIN_QUERIES`, 5) queries has
    no interval (NaN, written empty) and its ``note`` says why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from corpora import Queries
from harness.errors import ParameterError, RetbenchError, UnknownNameError
from harness.core.statistics import bootstrap_indices, percentile_interval
from harness.core.options import BOOTSTRAP_SAMPLES, CONFIDENCE, FACET_MAX_VALUES, FACET_MIN_QUERIES, SEED

__all__ = ["MAX_VALUES", "MIN_QUERIES", "MISSING", "QUANTILE_BUCKETS", "FacetCells", "facet_cells", "facet_columns",
           "facet_rollup", "select_facets"]

#: A non-numeric facet with more distinct values than this is left out unless named.
MAX_VALUES = FACET_MAX_VALUES
#: Quantile buckets a numeric facet is cut into by default (quartiles).
QUANTILE_BUCKETS = 4
#: Cells with fewer queries than this get no interval.
MIN_QUERIES = FACET_MIN_QUERIES
#: The cell of the queries without a value.
MISSING = "(missing)"
#: How a facet is cut into cells.
KINDS = {"values": "one cell per value", "quantiles": "quantile buckets of a numeric facet"}


@dataclass(frozen=True)
class FacetCells:
    """One facet cut into cells: ``labels`` in display order, ``cell_of`` query id -> label."""

    name: str
    kind: str  # a key of KINDS
    labels: list[str]
    cell_of: dict[str, str]


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or \
        (isinstance(value, str) and not value.strip())


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)) \
        and math.isfinite(float(value))


def _number_text(value: float) -> str:
    """``2017`` -> ``'2017'``, ``0.125`` -> ``'0.125'``, ``1/3`` -> ``'0.333333'`` (6 significant digits)."""
    return f"{float(value):.6g}"


def quantile_edges(values: np.ndarray, buckets: int) -> np.ndarray:
    """The distinct bucket edges of ``values``: quantiles at 0, 1/B, ..., 1, each a value that occurs.

    >>> quantile_edges(np.array([1, 2, 3, 4, 5, 6, 7, 8]), 4).tolist()
    [1.0, 2.0, 4.0, 6.0, 8.0]
    >>> quantile_edges(np.array([0, 0, 0, 0, 0, 0, 1, 2, 3, 9, 10]), 4).tolist()  # equal edges merge
    [0.0, 3.0, 10.0]
    """
    edges = np.quantile(np.asarray(values, dtype=np.float64), np.linspace(0.0, 1.0, buckets + 1),
                        method="inverted_cdf")
    return np.unique(edges)


def facet_cells(name: str, values: Mapping[str, object], query_ids: Sequence[str],
                buckets: int = QUANTILE_BUCKETS) -> FacetCells:
    """Cut one facet into cells over ``query_ids`` (see the module docstring for the rules).

    >>> cells = facet_cells("popularity", {"a": 1, "b": 5, "c": 9, "d": 12, "e": 40, "f": None},
    ...                     ["a", "b", "c", "d", "e", "f"], buckets=2)
    >>> cells.kind, cells.labels
    ('quantiles', ['q1 [1, 9)', 'q2 [9, 40]', '(missing)'])
    >>> [cells.cell_of[q] for q in "abcdef"]
    ['q1 [1, 9)', 'q1 [1, 9)', 'q2 [9, 40]', 'q2 [9, 40]', 'q2 [9, 40]', '(missing)']
    """
    present = {q: values.get(q) for q in query_ids if not _is_missing(values.get(q))}
    missing = [q for q in query_ids if q not in present]
    numeric = bool(present) and all(_is_number(v) for v in present.values())
    cell_of: dict[str, str] = {}
    if numeric and len({float(v) for v in present.values()}) > buckets:
        kind = "quantiles"
        numbers = np.array([float(v) for v in present.values()])
        edges = quantile_edges(numbers, buckets)
        labels = [f"q{i} [{_number_text(edges[i - 1])}, {_number_text(edges[i])}{']' if i == len(edges) - 1 else ')'}"
                  for i in range(1, len(edges))]
        which = np.searchsorted(edges[1:-1], numbers, side="right")
        cell_of = {q: labels[int(w)] for q, w in zip(present, which)}
    elif numeric:
        kind = "values"
        labels = [_number_text(v) for v in sorted({float(v) for v in present.values()})]
        cell_of = {q: _number_text(v) for q, v in present.items()}
    else:
        kind = "values"
        cell_of = {q: _number_text(v) if _is_number(v) else str(v) for q, v in present.items()}
        labels = sorted(set(cell_of.values()))
    if missing:
        labels = [*labels, MISSING]
        cell_of.update({q: MISSING for q in missing})
    return FacetCells(name, kind, labels, {q: cell_of[q] for q in query_ids})


def _check_int(value: object, parameter: str, lowest: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
        raise ParameterError(parameter, "the facet rollup", f"an int >= {lowest}", value)


def select_facets(queries: Queries, query_ids: Sequence[str], names: Sequence[str] | None = None,
                  max_values: int = MAX_VALUES, buckets: int = QUANTILE_BUCKETS) -> list[FacetCells]:
    """The facets to roll up, cut into cells over ``query_ids`` (the evaluated queries).

    ``names``: those facets, in that order (an unknown name is an error that lists the facets);
    ``None``: every numeric facet and every other facet with at most ``max_values`` distinct values.
    """
    _check_int(max_values, "max_values", 1)
    _check_int(buckets, "buckets", 2)
    by_id = {name: dict(zip(queries.ids, column)) for name, column in queries.facets.items()}
    known = set(queries.ids)
    absent = [q for q in query_ids if q not in known]
    if absent:
        raise ValueError(f"query ids not among the queries: {absent[:5]}")
    if names is not None:
        if not queries.facets and names:
            raise RetbenchError(f"facet {names[0]!r} was asked for, but the queries ({queries.source}) have no facets. "
                                "Fix: give them in a facets file (query id + one column per facet)")
        for name in names:
            if name not in by_id:
                raise UnknownNameError("facet", name, list(queries.facets))
        return [facet_cells(name, by_id[name], query_ids, buckets) for name in dict.fromkeys(names)]
    chosen = []
    for name, values in by_id.items():
        cells = facet_cells(name, values, query_ids, buckets)
        present = [cell for cell in cells.labels if cell != MISSING]
        if present and (cells.kind == "quantiles" or len(present) <= max_values):
            chosen.append(cells)
    return chosen


def facet_columns(metrics: Sequence[str]) -> list[str]:
    """The columns of the rollup (and of ``facets.csv``), in order.

    >>> facet_columns(["mrr"])
    ['system', 'facet', 'value', 'n_queries', 'mrr', 'mrr_ci_low', 'mrr_ci_high', 'note']
    """
    per_metric = [column for m in metrics for column in (m, f"{m}_ci_low", f"{m}_ci_high")]
    return ["system", "facet", "value", "n_queries", *per_metric, "note"]


def _aligned(per_query: pd.DataFrame, metrics: Sequence[str]) -> tuple[list[str], list[str], np.ndarray]:
    """(systems, query ids, values[query, system, metric]) from ``per_query``'s long rows."""
    systems = list(dict.fromkeys(per_query["system"]))
    first = per_query[per_query["system"] == systems[0]]
    query_ids = [str(q) for q in first["query_id"]]
    values = np.empty((len(query_ids), len(systems), len(metrics)))
    for j, system in enumerate(systems):
        rows = per_query[per_query["system"] == system]
        if [str(q) for q in rows["query_id"]] != query_ids:
            raise ValueError(f"per_query: system {system!r} is not evaluated on the same queries, in the same order, "
                             f"as {systems[0]!r}")
        values[:, j, :] = rows[list(metrics)].to_numpy(dtype=np.float64)
    return systems, query_ids, values


def _resampled_interval(cell: np.ndarray, n_samples: int, seed: int,
                        confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds of the resampled means of every column of ``cell`` (queries x columns),
    every column averaged over the same resampled queries."""
    means = np.empty((n_samples, cell.shape[1]))
    done = 0
    for rows in bootstrap_indices(cell.shape[0], n_samples, seed):
        means[done:done + len(rows)] = cell[rows].mean(axis=1)
        done += len(rows)
    means.sort(axis=0)
    return percentile_interval(means, confidence)


def facet_rollup(per_query: pd.DataFrame, queries: Queries, metrics: Sequence[str], *,
                 names: Sequence[str] | None = None, n_samples: int = BOOTSTRAP_SAMPLES, seed: int = SEED,
                 confidence: float = CONFIDENCE, buckets: int = QUANTILE_BUCKETS, max_values: int = MAX_VALUES,
                 min_queries: int = MIN_QUERIES) -> pd.DataFrame:
    """Each system's metrics per facet value, with paired bootstrap intervals (see the module docstring).

    ``per_query`` holds one row per (system, query): ``system``, ``query_id`` and a column per
    metric, every system on the same queries in the same order (``per_query.csv``). Returns the
    columns of :func:`facet_columns`, rows by facet (selection order), value (display order), then
    system (``per_query``'s order). No facet to roll up: no row.
    """
    _check_int(n_samples, "n_samples", 1)
    _check_int(min_queries, "min_queries", 1)
    systems, query_ids, values = _aligned(per_query, metrics)
    position = {q: i for i, q in enumerate(query_ids)}
    rows: list[list[object]] = []
    for facet in select_facets(queries, query_ids, names, max_values, buckets):
        for label in facet.labels:
            members = [position[q] for q in query_ids if facet.cell_of[q] == label]
            cell = values[members]  # queries x systems x metrics, evaluation order
            n = len(members)
            if n >= min_queries:
                low, high = _resampled_interval(cell.reshape(n, -1), n_samples, seed, confidence)
                low, high = low.reshape(len(systems), len(metrics)), high.reshape(len(systems), len(metrics))
                note = ""
            else:
                low = high = np.full((len(systems), len(metrics)), np.nan)
                note = f"fewer than {min_queries} queries: no interval"
            for j, system in enumerate(systems):
                row: list[object] = [system, facet.name, label, n]
                for k in range(len(metrics)):
                    row += [math.fsum(cell[:, j, k].tolist()) / n, float(low[j, k]), float(high[j, k])]
                rows.append([*row, note])
    return pd.DataFrame(rows, columns=facet_columns(metrics))
