"""What each grid point of a parameter search costs: ``tune_cost.csv`` (``bench tune``).

:func:`harness.tuning.search.tune` times every point as it scores it and keeps a :class:`PointCost`
per grid point (``TuneRecord.costs``); this module makes them the table the results folder stores
and the HTML report shows (:func:`cost_rows`), so the trade-off of ``k1``/``b`` or ``dims`` against
what a setting costs is visible beside its mean. Cheap by design: no single-query latency and no
memory high-water mark (``bench compare`` measures those for the setting chosen).

``tune_cost.csv`` (:data:`TUNE_COST_COLUMNS`), one row per grid point, in grid order
    ``fit_seconds`` and ``search_seconds`` are wall-clock times of the point's fit and of its batch
    search (every evaluated query in one call, at the search depth), ``queries_per_second`` the
    throughput of that search, ``index_bytes`` the bytes its fitted index holds with its children's
    (:func:`harness.engines.cost.index_size`); ``fit_from_cache`` says the point's own fit was a load
    from the index cache (``--cache``). An empty cell is unknown, never a guess. ``basis`` says
    how the point was run, which is what its times mean:

    * ``own``: fitted and searched on its own, as ``bench compare`` would;
    * ``shared children``: a fusion whose children are shared by the points (:mod:`retrievers.shared`):
      each child is fitted and searches once, at the first point that needs it, so that point's
      times carry the shared work and the later points' times only their own (the fusion);
      ``index_bytes`` counts every child the point holds;
    * ``sweep``: the grid ran through the retriever's :meth:`~retrievers.Retriever.sweep` shortcut,
      where no point is fitted: ``fit_seconds`` and ``index_bytes`` are unknown, and
      ``search_seconds`` is the time the sweep took to produce the point's run (the first point
      also builds the shared state: BM25's postings).

It is a measurement of one run on one machine: the only file of a tune folder whose bytes change
from run to run (with the manifest, which hashes it). ``tune.csv``, ``per_query.csv``,
``report.txt`` and the Markdown report hold no time; the HTML report, which already records the
search's seconds, shows the table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

__all__ = ["BASES", "TUNE_COST_COLUMNS", "TUNE_COST_FILE", "PointCost", "cost_table"]

#: The file of every grid point's cost.
TUNE_COST_FILE = "tune_cost.csv"
#: ``basis`` -> what a point's times mean (the manifest's ``cost.basis``).
BASES = {
    "own": "fitted and searched on its own",
    "shared children": "its children are shared with other points: each fitted and searched once, at the first "
                       "point that needs it, whose times carry that work",
    "sweep": "produced by the retriever's sweep shortcut: not fitted (fit time and index size unknown); the search "
             "time is the sweep's for this point, the first point also building the shared state",
}
#: The columns of tune_cost.csv and what each holds.
TUNE_COST_COLUMNS = {
    "point": "the grid point's number, 1-based, in grid order (as in tune.csv)",
    "system": "the point's label",
    "basis": "how the point was run: " + "; ".join(f"{k}: {v}" for k, v in BASES.items()),
    "fit_seconds": "wall-clock seconds of the point's fit (empty: unknown)",
    "fit_from_cache": "true: the point's own fit read its state from the index cache (its time is a load)",
    "index_bytes": "bytes its fitted index holds, its children's included (empty: unknown)",
    "n_queries": "the queries of the batch search (every evaluated query)",
    "search_seconds": "wall-clock seconds of the batch search of every evaluated query",
    "queries_per_second": "n_queries / search_seconds",
}


@dataclass(frozen=True)
class PointCost:
    """One grid point's measured cost (see the module docstring); None: unknown."""

    basis: str
    fit_seconds: float | None
    index_bytes: int | None
    search_seconds: float
    fit_from_cache: bool = False


def cost_table(labels: Sequence[str], costs: Sequence[PointCost], n_queries: int) -> pd.DataFrame:
    """``tune_cost.csv`` of the grid points ``labels`` (in grid order) and their ``costs``."""
    frame = pd.DataFrame({
        "point": range(1, len(labels) + 1), "system": list(labels), "basis": [c.basis for c in costs],
        "fit_seconds": [c.fit_seconds if c.fit_seconds is not None else math.nan for c in costs],
        "fit_from_cache": ["true" if c.fit_from_cache else "false" for c in costs],
        "index_bytes": pd.array([c.index_bytes for c in costs], dtype="Int64"),
        "n_queries": n_queries,
        "search_seconds": [c.search_seconds for c in costs],
        "queries_per_second": [n_queries / c.search_seconds if c.search_seconds > 0 else math.nan for c in costs],
    }, columns=list(TUNE_COST_COLUMNS))
    return frame
