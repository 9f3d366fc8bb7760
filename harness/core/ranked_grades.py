"""The run seen through the qrels: the flat arrays every batch measure reduces.

Built by :func:`harness.core.evaluation.rank_grades` (the join); read by :mod:`harness.core.batch_metrics`.
Its own module so that neither of the two needs the other to name it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from corpora import is_relevant


@dataclass
class RankedGrades:
    """The run seen through the qrels, for the evaluated queries (rows, in ``query_ids`` order).

    Flat per-entry arrays hold only the *judged* retrieved entries, grouped by row and in rank order
    (``rows``, 1-based ``ranks``, ``entry_grades``); per-row arrays hold ``n_retrieved`` (after the
    depth cut), ``n_relevant`` (judged ``grade >= rel_threshold``) and ``n_nonrelevant`` (judged
    ``0 <= grade < rel_threshold``). ``ideal_rows``/``ideal_ranks``/``ideal_grades`` are each
    query's positive grades sorted descending: nDCG's ideal ranking. The dense views (``grades``,
    ``judged``, ``retrieved``, ``relevant``, ``ideal``) are built on demand, for small inputs and tests.
    """

    query_ids: list[str]
    rows: np.ndarray
    ranks: np.ndarray
    entry_grades: np.ndarray
    n_retrieved: np.ndarray
    n_relevant: np.ndarray
    n_nonrelevant: np.ndarray
    ideal_rows: np.ndarray
    ideal_ranks: np.ndarray
    ideal_grades: np.ndarray
    rel_threshold: int
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def entry_relevant(self) -> np.ndarray:
        """Per judged entry: :func:`~corpora.is_relevant` (``grade >= rel_threshold`` and ``grade >= 0``)."""
        if "relevant" not in self._cache:
            self._cache["relevant"] = is_relevant(self.entry_grades, self.rel_threshold)
        return self._cache["relevant"]

    def _dense(self, values: np.ndarray, dtype: type) -> np.ndarray:
        width = int(self.n_retrieved.max()) if self.n_queries else 0
        out = np.zeros((self.n_queries, width), dtype=dtype)
        out[self.rows, self.ranks - 1] = values
        return out

    @property
    def grades(self) -> np.ndarray:
        """Dense (queries x depth): grade at each rank, 0 when unjudged or past the end."""
        return self._dense(self.entry_grades, np.int64)

    @property
    def judged(self) -> np.ndarray:
        return self._dense(np.ones(len(self.rows), dtype=bool), bool)

    @property
    def relevant(self) -> np.ndarray:
        return self._dense(self.entry_relevant, bool)

    @property
    def retrieved(self) -> np.ndarray:
        width = int(self.n_retrieved.max()) if self.n_queries else 0
        return np.arange(width)[None, :] < self.n_retrieved[:, None]

    @property
    def ideal(self) -> np.ndarray:
        width = int(self.ideal_ranks.max()) if len(self.ideal_ranks) else 0
        out = np.zeros((self.n_queries, width), dtype=np.int64)
        out[self.ideal_rows, self.ideal_ranks - 1] = self.ideal_grades
        return out
