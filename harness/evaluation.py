"""Vectorised evaluation: a whole run against its qrels in flat array operations.

The run's (query, doc) entries are joined once with the judgments; every measure is then a few
``bincount`` reductions over the entries, so the cost grows linearly with the run's size (no dense
queries x depth matrix, no Python loop over queries). Each batch path is tested equal to its
per-query specification in :mod:`harness.metrics`, and to trec_eval on its own test suite.

Conventions (trec_eval's): an entry is *judged* when its (query, doc) has a qrels line; it is
*relevant* when judged with ``grade >= rel_threshold`` (and ``grade >= 0``); negative grades are
judged but never relevant, never non-relevant for bpref, and gain nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from corpora import Qrels, Run
from harness.metrics import Metric

FIRST_RELEVANT_RANK = "first_relevant_rank"


@dataclass(frozen=True)
class QrelsTable:
    """Judgments as three parallel arrays (query id, doc id, integer grade): the evaluator's fast
    input form, and what :func:`harness.trec.read_qrels_table` returns. Converts to and from
    :class:`~corpora.Qrels`; (query, doc) pairs are unique."""

    query_ids: np.ndarray
    doc_ids: np.ndarray
    grades: np.ndarray
    source: str = "<memory>"

    @classmethod
    def from_qrels(cls, qrels: Qrels | Mapping[str, Mapping[str, int]]) -> QrelsTable:
        queries = [q for q, docs in qrels.items() for _ in docs]
        docs = [d for judged in qrels.values() for d in judged]
        grades = [g for judged in qrels.values() for g in judged.values()]
        return cls(np.asarray(queries, dtype=object), np.asarray(docs, dtype=object),
                   np.asarray(grades, dtype=np.int64), getattr(qrels, "source", "<memory>"))

    def __len__(self) -> int:
        return len(self.grades)

    def to_qrels(self) -> Qrels:
        judgments: dict[str, dict[str, int]] = {}
        for q, d, g in zip(self.query_ids.tolist(), self.doc_ids.tolist(), self.grades.tolist()):
            judgments.setdefault(q, {})[d] = g
        return Qrels(judgments, source=self.source)

    def query_order(self) -> list[str]:
        """Every judged query id, in order of first appearance."""
        return [str(q) for q in pd.unique(self.query_ids)]

    def queries_with_relevant(self, rel_threshold: int = 1) -> list[str]:
        """Query ids with at least one judgment ``grade >= max(rel_threshold, 0)``, first-appearance order."""
        keep = self.grades >= max(rel_threshold, 0)
        return [str(q) for q in pd.unique(self.query_ids[keep])]


def _as_table(qrels: Qrels | QrelsTable | Mapping[str, Mapping[str, int]]) -> QrelsTable:
    return qrels if isinstance(qrels, QrelsTable) else QrelsTable.from_qrels(qrels)


@dataclass
class RankedGrades:
    """The run seen through the qrels, for the evaluated queries (rows, in ``query_ids`` order).

    Flat per-entry arrays hold only the *judged* retrieved entries (``rows``, 1-based ``ranks``,
    ``entry_grades``); per-row arrays hold ``n_retrieved`` (after the depth cut), ``n_relevant``
    (judged ``grade >= rel_threshold``) and ``n_nonrelevant`` (judged ``0 <= grade < rel_threshold``).
    ``ideal_rows``/``ideal_ranks``/``ideal_grades`` are each query's positive grades sorted
    descending, the ideal ranking of nDCG. The dense views (``grades``, ``judged``, ``retrieved``,
    ``relevant``, ``ideal``) are built on demand for small inputs and tests.
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
        """Per judged entry: ``grade >= rel_threshold`` and ``grade >= 0``."""
        if "relevant" not in self._cache:
            self._cache["relevant"] = (self.entry_grades >= self.rel_threshold) & (self.entry_grades >= 0)
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


def _vocabulary_codes(run: Run, doc_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes of the run's entries and of ``doc_ids`` in one shared vocabulary (-1: not in the run)."""
    vocabulary = pd.Index(run.doc_ids)
    entry_docs = run.doc_index
    if not vocabulary.is_unique:
        codes, vocabulary = pd.factorize(run.doc_ids)
        entry_docs = codes[run.doc_index]
        vocabulary = pd.Index(vocabulary)
    judged_docs = vocabulary.get_indexer(doc_ids) if len(doc_ids) else np.empty(0, dtype=np.int64)
    return entry_docs, judged_docs, len(vocabulary)


def _join(entry_rows: np.ndarray, entry_docs: np.ndarray, judged_rows: np.ndarray, judged_docs: np.ndarray,
          n_docs: int) -> np.ndarray:
    """For each run entry, the index of its judgment, or -1.

    Most documents are judged for at most one query, so a doc-major lookup resolves them with one
    gather and one comparison; entries whose document is judged for several queries fall back to a
    hash join on (row, doc) keys.
    """
    found = np.full(len(entry_rows), -1, dtype=np.int64)
    usable = judged_docs >= 0
    judgment_index = np.flatnonzero(usable)
    if not len(judgment_index) or not len(entry_rows):
        return found
    per_doc = np.bincount(judged_docs[usable], minlength=n_docs)
    one_judgment = np.full(n_docs, -1, dtype=np.int64)
    one_judgment[judged_docs[judgment_index]] = judgment_index
    counts = per_doc[entry_docs]
    single = np.flatnonzero(counts == 1)
    candidate = one_judgment[entry_docs[single]]
    hit = judged_rows[candidate] == entry_rows[single]
    found[single[hit]] = candidate[hit]
    several = np.flatnonzero(counts > 1)
    if len(several):
        multi = judgment_index[per_doc[judged_docs[judgment_index]] > 1]
        keys = pd.Index(judged_rows[multi] * np.int64(n_docs) + judged_docs[multi])
        position = keys.get_indexer(entry_rows[several] * np.int64(n_docs) + entry_docs[several])
        matched = position >= 0
        found[several[matched]] = multi[position[matched]]
    return found


def rank_grades(run: Run, qrels: Qrels | QrelsTable, query_ids: Sequence[str], rel_threshold: int = 1,
                depth: int | None = None) -> RankedGrades:
    """Join the run with the judgments of ``query_ids`` (cut at ``depth``, trec_eval ``-M``)."""
    query_ids = [str(q) for q in query_ids]
    position = pd.Index(query_ids)
    if not position.is_unique:
        raise ValueError("query_ids must be unique")
    n_queries = len(query_ids)
    table = _as_table(qrels)

    judged_rows = position.get_indexer(table.query_ids) if len(table) else np.empty(0, dtype=np.int64)
    in_scope = judged_rows >= 0
    judged_rows, judged_grades = judged_rows[in_scope].astype(np.int64), table.grades[in_scope]
    entry_docs, judged_docs, n_docs = _vocabulary_codes(run, table.doc_ids[in_scope])

    lengths = run.lengths()
    run_rows = position.get_indexer(run.query_ids)
    entry_rows = np.repeat(run_rows, lengths).astype(np.int64)
    ranks = np.arange(1, len(entry_docs) + 1, dtype=np.int64) - np.repeat(run.offsets[:-1], lengths)
    keep = entry_rows >= 0
    if depth is not None:
        keep &= ranks <= depth
    if not keep.all():
        entry_rows, ranks, entry_docs = entry_rows[keep], ranks[keep], entry_docs[keep]
    n_retrieved = np.bincount(entry_rows, minlength=n_queries)

    found = _join(entry_rows, entry_docs, judged_rows, judged_docs, n_docs)
    judged_entries = np.flatnonzero(found >= 0)
    rows, entry_ranks = entry_rows[judged_entries], ranks[judged_entries]
    grades = judged_grades[found[judged_entries]]

    relevant = (judged_grades >= rel_threshold) & (judged_grades >= 0)
    n_relevant = np.bincount(judged_rows[relevant], minlength=n_queries)
    nonrelevant = (judged_grades >= 0) & ~relevant
    n_nonrelevant = np.bincount(judged_rows[nonrelevant], minlength=n_queries)

    positive = judged_grades > 0
    ideal_rows, ideal_grades = judged_rows[positive], judged_grades[positive]
    order = np.lexsort((-ideal_grades, ideal_rows))
    ideal_rows, ideal_grades = ideal_rows[order], ideal_grades[order]
    ideal_ranks = _ranks_within_sorted_groups(ideal_rows)
    return RankedGrades(query_ids, rows, entry_ranks, grades, n_retrieved, n_relevant, n_nonrelevant,
                        ideal_rows, ideal_ranks, ideal_grades, rel_threshold)


# ----- the batch path of each measure (specification: the per-query functions in harness.metrics)


def _ranks_within_sorted_groups(rows: np.ndarray) -> np.ndarray:
    """1-based position of each element within its run of equal ``rows`` values (rows sorted)."""
    if not len(rows):
        return np.empty(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    lengths = np.diff(np.concatenate([starts, [len(rows)]]))
    return np.arange(1, len(rows) + 1, dtype=np.int64) - np.repeat(starts, lengths)


def _per_row(data: RankedGrades, mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Sum over the judged entries selected by ``mask`` of ``weights`` (or 1), per row."""
    rows = data.rows[mask]
    w = None if weights is None else weights[mask]
    return np.bincount(rows, weights=w, minlength=data.n_queries).astype(np.float64)


def _divide(a: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), a.shape)
    out = np.zeros(len(a))
    np.divide(a, b, out=out, where=b > 0)
    return out


def _within(data: RankedGrades, mask: np.ndarray, k: int | None) -> np.ndarray:
    return mask if k is None else mask & (data.ranks <= k)


def _first_relevant(data: RankedGrades, k: int | None) -> np.ndarray:
    selected = _within(data, data.entry_relevant, k)
    first = np.full(data.n_queries, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, data.rows[selected], data.ranks[selected])
    return np.where(first == np.iinfo(np.int64).max, 0, first)


def _gains(grades: np.ndarray, exponential: bool) -> np.ndarray:
    positive = np.maximum(grades, 0).astype(np.float64)
    return np.exp2(positive) - 1.0 if exponential else positive


def _ndcg(data: RankedGrades, k: int | None, exponential: bool) -> np.ndarray:
    in_top = _within(data, np.ones(len(data.rows), dtype=bool), k)
    dcg = _per_row(data, in_top, _gains(data.entry_grades, exponential) / np.log2(data.ranks + 1.0))
    ideal_top = data.ideal_ranks <= k if k is not None else np.ones(len(data.ideal_ranks), dtype=bool)
    ideal_weights = _gains(data.ideal_grades[ideal_top], exponential) / np.log2(data.ideal_ranks[ideal_top] + 1.0)
    ideal = np.bincount(data.ideal_rows[ideal_top], weights=ideal_weights, minlength=data.n_queries)
    return _divide(dcg, ideal)


def _running_count(data: RankedGrades, mask: np.ndarray) -> np.ndarray:
    """Per judged entry: how many entries of its row up to and including it satisfy ``mask``.

    Judged entries of one row are contiguous and in rank order (the run's layout)."""
    if not len(mask):
        return np.empty(0, dtype=np.int64)
    total = np.cumsum(mask)
    starts = np.concatenate([[True], data.rows[1:] != data.rows[:-1]])
    start_index = np.maximum.accumulate(np.where(starts, np.arange(len(mask)), 0))
    before = total[start_index] - mask[start_index]
    return total - before


def _average_precision(data: RankedGrades, k: int | None) -> np.ndarray:
    relevant = data.entry_relevant
    found = _running_count(data, relevant)
    return _divide(_per_row(data, _within(data, relevant, k), found / data.ranks), data.n_relevant)


def _bpref(data: RankedGrades) -> np.ndarray:
    relevant = data.entry_relevant
    nonrelevant = (data.entry_grades >= 0) & ~relevant
    above = _running_count(data, nonrelevant)
    r = data.n_relevant[data.rows]
    cap = np.minimum(data.n_nonrelevant, data.n_relevant)[data.rows]
    penalty = _divide(np.minimum(above, r).astype(np.float64), cap)
    return _divide(_per_row(data, relevant, 1.0 - penalty), data.n_relevant)


def batch_metric(metric: Metric, data: RankedGrades) -> np.ndarray:
    """The per-query values of ``metric`` for every row of ``data`` (float64, one per query)."""
    k, base = metric.k, metric.base
    relevant = data.entry_relevant
    if base == "hit":
        return (_per_row(data, _within(data, relevant, k)) > 0).astype(np.float64)
    if base == "recall":
        return _divide(_per_row(data, _within(data, relevant, k)), data.n_relevant)
    if base == "precision":
        return _per_row(data, _within(data, relevant, k)) / k
    if base == "judged":
        return _per_row(data, _within(data, np.ones(len(data.rows), dtype=bool), k)) / k
    if base == "mrr":
        first = _first_relevant(data, k)
        return _divide(np.ones(data.n_queries), first.astype(np.float64))
    if base in ("ndcg", "ndcg_exp"):
        return _ndcg(data, k, base == "ndcg_exp")
    if base == "map":
        return _average_precision(data, k)
    if base == "rprec":
        return _divide(_per_row(data, relevant & (data.ranks <= data.n_relevant[data.rows])), data.n_relevant)
    if base == "bpref":
        return _bpref(data)
    raise KeyError(f"no batch path for metric {base!r}")  # the registry and this switch must agree


def first_relevant_ranks(data: RankedGrades) -> np.ndarray:
    """1-based rank of the first relevant document per row; 0 where there is none."""
    return _first_relevant(data, None)


def evaluate(run: Run, qrels: Qrels | QrelsTable, metrics: Sequence[Metric], query_ids: Sequence[str] | None = None,
             rel_threshold: int = 1, depth: int | None = None) -> pd.DataFrame:
    """Per-query values: one row per query (index ``query_id``), one column per metric name,
    plus ``first_relevant_rank`` (nullable int). Queries default to those with a relevant judgment,
    in qrels order; a query the run misses scores 0 (trec_eval ``-c``)."""
    table = _as_table(qrels)
    if query_ids is None:
        query_ids = table.queries_with_relevant(rel_threshold)
    data = rank_grades(run, table, query_ids, rel_threshold, depth)
    columns = {m.name: batch_metric(m, data) for m in metrics}
    frame = pd.DataFrame(columns, index=pd.Index(list(data.query_ids), name="query_id", dtype=object))
    ranks = first_relevant_ranks(data)
    frame[FIRST_RELEVANT_RANK] = pd.array(np.where(ranks > 0, ranks, 0), dtype="Int64")
    frame.loc[ranks == 0, FIRST_RELEVANT_RANK] = pd.NA
    return frame
