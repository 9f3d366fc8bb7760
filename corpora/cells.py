"""How a query facet is cut into cells: which queries fall in which value (or quantile bucket) of a
facet. The cells are data of the queries (:meth:`corpora.Queries.cells`), read by every grouping of
queries by facet: the facet rollups of a comparison and the folds ``bench tune --stratify`` deals.

Cells (:func:`cut`)
    A facet is numeric when every value present is a number (``int`` or ``float``, not a boolean;
    text that looks like a number is text: CSV cells are text, see :mod:`corpora.facets`). A
    numeric facet with more distinct values than ``buckets`` (default :data:`QUANTILE_BUCKETS`, 4:
    quartiles) is cut into quantile buckets; any other facet has one cell per value. Bucket edges
    are the quantiles at 0, 1/B, ..., 1 of the given queries' values, each the smallest value
    with at least that share of the values at or below it (numpy's ``inverted_cdf``), so every edge
    is a value that occurs; equal edges merge. Bucket i holds ``edge[i-1] <= x < edge[i]``, the
    last one also its upper edge, so no bucket is empty, and its label is ``q<i> [low, high)``
    (``q4 [17, 40]`` for the last), numbers written with 6 significant digits. A missing value
    (``None``, NaN, empty text) is the cell :data:`MISSING`, shown last. Value cells are labelled
    by their text (numbers as in bucket labels) and ordered by number for a numeric facet, else
    by text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["KINDS", "MISSING", "QUANTILE_BUCKETS", "FacetCells", "cut", "quantile_edges"]

#: Quantile buckets a numeric facet is cut into by default (quartiles).
QUANTILE_BUCKETS = 4
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


def cut(name: str, values: Mapping[str, object], query_ids: Sequence[str],
        buckets: int = QUANTILE_BUCKETS) -> FacetCells:
    """Cut one facet (``values``: query id -> value) into cells over ``query_ids`` (see the module
    docstring for the rules).

    >>> cells = cut("popularity", {"a": 1, "b": 5, "c": 9, "d": 12, "e": 40, "f": None},
    ...             ["a", "b", "c", "d", "e", "f"], buckets=2)
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
