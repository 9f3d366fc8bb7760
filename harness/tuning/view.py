"""What the reports of a parameter search show, read from its results folder alone.

``bench report`` on a folder ``bench tune`` wrote (its manifest's ``kind`` is ``tune``), the
reports ``bench tune --report`` writes into it and :meth:`harness.tuning.search.TuneResult.report` all
start from a :class:`TuneView`: the manifest's grid, metric and summary (the numbers the printed
summary shows, each fold's choice among them) and ``tune.csv``. Nothing is recomputed but the
order of the best points, so a report of a past folder equals the one written with it.

The two agree or the folder is refused: tune.csv holds every grid point once, numbered 1 to n in
grid order, and the point chosen on all queries is its first point of the highest ``mean`` (the
rule :mod:`harness.tuning.cross_validation` chose it by).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import pandas as pd

from corpora import InputFileError
from corpora.wording import counted
from harness.core.options import level_text
from harness.store.read import MANIFEST_FILE, ResultsFolder, Table, read_table
from harness.tuning.cost import TUNE_COST_FILE
from harness.tuning.results import TUNE_FILE, TUNE_KIND

__all__ = ["TuneView", "is_tune_folder"]

_AGAIN = "make the folder again with bench tune"


def is_tune_folder(folder: ResultsFolder) -> bool:
    """Whether ``bench tune`` wrote ``folder`` (its manifest says so)."""
    return folder.manifest.get("kind") == TUNE_KIND


class TuneView:
    """The numbers of one tune folder, as the reports show them."""

    def __init__(self, folder: ResultsFolder) -> None:
        self.folder = folder
        self.manifest = folder.manifest

    def _entry(self, *keys: str) -> Any:
        """The manifest's ``keys[0]`` (then ``keys[1]`` inside it, ...); a missing one names the file."""
        value: Any = self.manifest
        for depth, key in enumerate(keys):
            if not isinstance(value, dict) or key not in value:
                raise InputFileError(self.folder.path / MANIFEST_FILE, f"has no {'.'.join(keys[:depth + 1])!r} entry",
                                     fix=_AGAIN)
            value = value[key]
        return value

    # ----- the search ------------------------------------------------------------------------

    @cached_property
    def axes(self) -> list[tuple[str, list[str]]]:
        """Each swept parameter's name (its tune.csv column) and values, in grid order."""
        return [(str(a["name"]), [str(v) for v in a["values"]]) for a in self._entry("grid", "axes")]

    @property
    def grid_spec(self) -> str:
        return str(self._entry("grid", "spec"))

    @property
    def shape(self) -> str:
        """The grid's shape as the printed summary writes it: ``k1 7 x b 7``."""
        return " x ".join(f"{name} {len(values)}" for name, values in self.axes)

    @property
    def metric(self) -> str:
        return str(self._entry("metric", "name"))

    @property
    def metric_definition(self) -> dict[str, Any]:
        return dict(self._entry("metric"))

    @property
    def summary(self) -> dict[str, Any]:
        """The manifest's ``summary``: every number the printed summary shows."""
        return dict(self._entry("summary"))

    @property
    def corpus(self) -> dict[str, Any]:
        return dict(self._entry("corpus"))

    @property
    def statistics(self) -> dict[str, Any]:
        return dict(self._entry("statistics"))

    @property
    def cross_validation(self) -> dict[str, Any]:
        return dict(self._entry("cross_validation"))

    @property
    def level(self) -> str:
        """The intervals' level as written: ``95%``."""
        return level_text(float(self.statistics["confidence"]))

    @property
    def n_queries(self) -> int:
        return int(self.summary["queries"])

    @property
    def n_folds(self) -> int:
        return int(self.summary["folds"])

    @property
    def per_fold(self) -> list[dict[str, Any]]:
        """Per fold: its queries, training queries, chosen point, system, parameters, train and held-out means."""
        return list(self.summary["per_fold"])

    @property
    def chosen_point(self) -> int:
        """The point chosen on all queries (the in-sample best), 1-based."""
        return int(self.summary["chosen"]["point"])

    @property
    def default_point(self) -> int | None:
        """The default setting's point, 1-based, or None when the default lies off the grid."""
        point = self.summary["default"]["point"]
        return None if point is None else int(point)

    @property
    def fold_choices(self) -> list[int]:
        return [int(f["chosen_point"]) for f in self.per_fold]

    def setting(self, parameters: dict[str, Any]) -> str:
        """A point's parameters as written: ``k1=1.8, b=0.7``."""
        return ", ".join(f"{k}={v}" for k, v in parameters.items())

    # ----- tune.csv ----------------------------------------------------------------------------

    @cached_property
    def table(self) -> pd.DataFrame:
        """``tune.csv``: ``point`` (an integer), ``system`` and the axis columns as text (a value is
        matched as the spec wrote it), ``mean`` and each fold's ``train_<f>``/``test_<f>`` as floats."""
        path = self.folder.verified(TUNE_FILE)
        names = tuple(name for name, _ in self.axes)
        frame = read_table(path, Table(TUNE_FILE, ("system", *names), ("point",)))
        points = [int(p) for p in frame["point"]]
        expected = int(self._entry("grid", "points"))
        if points != list(range(1, expected + 1)):
            raise InputFileError(path, f"holds points {points[:3]}... ({counted(len(points), 'row')}), not 1 to "
                                 f"{expected} in "
                                 "grid order as its manifest says", fix=_AGAIN)
        missing = [c for c in ("mean", *(f"{s}_{f + 1}" for f in range(self.n_folds) for s in ("train", "test")))
                   if c not in frame.columns]
        if missing:
            raise InputFileError(path, f"has no {', '.join(map(repr, missing))} column", fix=_AGAIN)
        first_best = int(frame["point"].iloc[int(frame["mean"].to_numpy().argmax())])
        if first_best != self.chosen_point:
            raise InputFileError(path, f"its first point of the highest mean is {first_best}, but its manifest says "
                                 f"point {self.chosen_point} was chosen", fix=_AGAIN)
        return frame

    @cached_property
    def costs(self) -> pd.DataFrame | None:
        """``tune_cost.csv`` (:mod:`harness.tuning.cost`), one row per grid point in grid order, or
        None for a folder written before tune measured cost."""
        if not self.folder.holds(TUNE_COST_FILE):
            return None
        path = self.folder.verified(TUNE_COST_FILE)
        frame = read_table(path, Table(TUNE_COST_FILE, ("system", "basis", "fit_from_cache"),
                                       ("point", "index_bytes", "n_queries")))
        if [int(p) for p in frame["point"]] != [int(p) for p in self.table["point"]]:
            raise InputFileError(path, f"does not hold the points of {TUNE_FILE} in its order", fix=_AGAIN)
        return frame

    def best_points(self, limit: int) -> pd.DataFrame:
        """The ``limit`` rows of tune.csv with the highest mean (equal means in grid order)."""
        return self.table.sort_values(["mean", "point"], ascending=[False, True], kind="stable").head(limit)
