"""What a parameter search found, as plain data: :class:`TuneRecord` and :class:`TuneConfig`.

:mod:`harness.tuning.results` stores and prints it; :class:`harness.tuning.search.TuneResult` adds the methods
that call it, so the imports run one way (tuning -> tune_results -> tune_record).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from corpora import Dataset
from harness.tuning.cross_validation import CrossValidation
from harness.tuning.cost import PointCost
from harness.core.metrics import Metric
from harness.core.options import BOOTSTRAP_SAMPLES, CONFIDENCE, DEPTH, REL_THRESHOLD, SEED
from retrievers.grid import MAX_POINTS, Grid

__all__ = ["FOLDS", "Estimate", "TuneConfig", "TuneRecord"]

#: ``bench tune``'s folds of the cross-validation over queries.
FOLDS = 5


@dataclass(frozen=True)
class TuneConfig:
    """The options of one search, as the manifest records them (its ``configuration`` hash covers
    them, less where the data and the cache live)."""

    grid: str
    corpus: str
    metric: str
    folds: int = FOLDS
    seed: int = SEED
    stratify: str | None = None
    facets: str | None = None  # the facets side file (tune's loading.facets_file)
    max_points: int = MAX_POINTS
    depth: int = DEPTH
    rel_threshold: int = REL_THRESHOLD
    bootstrap_samples: int = BOOTSTRAP_SAMPLES
    confidence: float = CONFIDENCE
    analyzer: str | None = None
    format: str | None = None
    split: str | None = None
    allow_unmatched_judgments: bool | None = None
    cache: bool = False
    cache_dir: str | None = None


@dataclass(frozen=True)
class Estimate:
    """A mean over queries with its paired bootstrap percentile interval."""

    value: float
    low: float
    high: float


@dataclass
class TuneRecord:
    """A finished search: every grid point's per-query values, the cross-validation over them, and
    the numbers next to it (see :mod:`harness.tuning.cross_validation` for what each one means).

    ``labels[p]`` and ``point_parameters[p]`` name point ``p`` (grid order); ``values[p, q]`` is its
    metric on ``query_ids[q]``; ``default_point`` is the grid point that is the default setting
    (None when the default lies off the grid and was evaluated on its own; ``default_values``
    either way). ``strata`` holds each
    query's cell of the ``stratify`` facet, ``stratum_labels`` the cells in order.
    """

    config: TuneConfig
    grid: Grid
    dataset: Dataset
    metric: Metric
    labels: list[str]
    point_parameters: list[dict[str, str]]  # per point: axis name -> value, as the spec holds it
    query_ids: list[str]
    excluded_query_ids: list[str]
    values: np.ndarray
    cv: CrossValidation
    default_label: str
    default_point: int | None
    default_values: np.ndarray
    estimate: Estimate
    estimate_minus_default: Estimate
    optimism: Estimate
    search_depth: int
    shortcut: str
    seconds: dict[str, float] = field(default_factory=dict)
    strata: list[str] | None = None
    stratum_labels: list[str] | None = None
    warnings: list[str] = field(default_factory=list)
    costs: list[PointCost] | None = None  # per grid point (harness.tuning.cost); None: not measured

    @property
    def n_points(self) -> int:
        return len(self.labels)
