"""Vectorised evaluation: a whole run against its qrels in array operations.

The run is turned once into a dense (queries x depth) matrix of the grade found at each rank;
every measure is then a few column operations on it, so the cost grows linearly with the run's
size. Each batch function is tested equal to its per-query specification in ``harness.metrics``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from corpora import Qrels, Run
from harness.metrics import Metric

FIRST_RELEVANT_RANK = "first_relevant_rank"


@dataclass
class RankedGrades:
    """The run seen through the qrels, one row per evaluated query.

    ``grades[i, r]`` is the grade of the document at rank r+1 (0 when unjudged or past the end),
    ``judged[i, r]`` whether it has a judgment, ``retrieved[i, r]`` whether rank r+1 exists.
    ``ideal[i]`` holds the query's positive grades sorted descending (0-padded).
    """

    query_ids: list[str]
    grades: np.ndarray
    judged: np.ndarray
    retrieved: np.ndarray
    n_relevant: np.ndarray
    ideal: np.ndarray
    rel_threshold: int

    @property
    def relevant(self) -> np.ndarray:
        return self.judged & (self.grades >= self.rel_threshold)


def rank_grades(run: Run, qrels: Qrels, query_ids: Sequence[str], rel_threshold: int = 1,
                depth: int | None = None) -> RankedGrades:
    """Look every ranked (query, doc) up in the qrels at once (hash join on integer keys)."""
    query_ids = list(query_ids)
    n_queries = len(query_ids)
    position = pd.Index(query_ids)

    # qrels as flat arrays
    q_rows, q_docs, q_grades = [], [], []
    for q in query_ids:
        judged = qrels.get(q, {})
        q_rows.extend([q] * len(judged))
        q_docs.extend(judged.keys())
        q_grades.extend(judged.values())
    q_grades_arr = np.asarray(q_grades, dtype=np.int64)
    q_row_idx = position.get_indexer(q_rows) if q_rows else np.empty(0, dtype=np.int64)

    # run entries, restricted to evaluated queries and cut at depth
    lengths = run.lengths()
    run_rows = np.repeat(position.get_indexer(run.query_ids), lengths)
    ranks = np.arange(len(run.doc_index)) - np.repeat(run.offsets[:-1], lengths)
    keep = run_rows >= 0
    if depth is not None:
        keep &= ranks < depth
    run_rows, ranks, run_docs = run_rows[keep], ranks[keep], run.doc_index[keep]

    vocabulary = pd.Index(run.doc_ids)
    n_vocab = len(vocabulary) + 1
    q_doc_idx = vocabulary.get_indexer(q_docs) if q_docs else np.empty(0, dtype=np.int64)
    in_run = q_doc_idx >= 0
    qrel_keys = q_row_idx[in_run].astype(np.int64) * n_vocab + q_doc_idx[in_run]
    qrel_vals = q_grades_arr[in_run]
    order = np.argsort(qrel_keys, kind="stable")
    qrel_keys, qrel_vals = qrel_keys[order], qrel_vals[order]
    run_keys = run_rows.astype(np.int64) * n_vocab + run_docs
    found_at = np.searchsorted(qrel_keys, run_keys)
    found_at = np.minimum(found_at, max(len(qrel_keys) - 1, 0))
    is_judged = (qrel_keys[found_at] == run_keys) if len(qrel_keys) else np.zeros(len(run_keys), dtype=bool)
    entry_grades = np.where(is_judged, qrel_vals[found_at] if len(qrel_vals) else 0, 0)

    width = int(ranks.max()) + 1 if len(ranks) else 0
    grades = np.zeros((n_queries, width), dtype=np.int64)
    judged = np.zeros((n_queries, width), dtype=bool)
    retrieved = np.zeros((n_queries, width), dtype=bool)
    grades[run_rows, ranks] = entry_grades
    judged[run_rows, ranks] = is_judged
    retrieved[run_rows, ranks] = True

    n_relevant = np.bincount(q_row_idx[q_grades_arr >= rel_threshold], minlength=n_queries) \
        if len(q_grades_arr) else np.zeros(n_queries, dtype=np.int64)
    positive = q_grades_arr > 0
    counts = np.bincount(q_row_idx[positive], minlength=n_queries) if len(q_grades_arr) else np.zeros(n_queries, dtype=np.int64)
    ideal = np.zeros((n_queries, int(counts.max()) if n_queries and counts.size else 0), dtype=np.int64)
    if ideal.shape[1]:
        rows_p, grades_p = q_row_idx[positive], q_grades_arr[positive]
        order = np.lexsort((-grades_p, rows_p))
        rows_p, grades_p = rows_p[order], grades_p[order]
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        cols = np.arange(len(rows_p)) - starts[rows_p]
        ideal[rows_p, cols] = grades_p
    return RankedGrades(query_ids, grades, judged, retrieved, n_relevant, ideal, rel_threshold)


def _at(cumulative: np.ndarray, k: int | np.ndarray) -> np.ndarray:
    """cumulative[:, k-1], with ranks past the matrix reading the last column (0 if empty)."""
    n, width = cumulative.shape
    if width == 0:
        return np.zeros(n)
    index = np.minimum(np.asarray(k) - 1, width - 1)
    if np.ndim(index) == 0:
        return cumulative[:, int(index)] if index >= 0 else np.zeros(n)
    out = cumulative[np.arange(n), np.maximum(index, 0)].astype(np.float64)
    return np.where(index >= 0, out, 0.0)


def _safe_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(len(a))
    np.divide(a, b, out=out, where=b > 0)
    return out


def _discounts(width: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, width + 2))


def _dcg(grades: np.ndarray, k: int | None, exponential: bool) -> np.ndarray:
    top = grades[:, :k] if k is not None else grades
    gains = np.where(top > 0, (2.0**top - 1.0) if exponential else top.astype(np.float64), 0.0)
    return gains @ _discounts(top.shape[1]) if top.shape[1] else np.zeros(len(grades))


def batch_metric(metric: Metric, data: RankedGrades) -> np.ndarray:
    """The per-query values of ``metric`` for every row of ``data``."""
    relevant = data.relevant
    cumulative = np.cumsum(relevant, axis=1)
    k = metric.k
    base = metric.base
    if base == "hit":
        return (_at(cumulative, k) > 0).astype(np.float64)
    if base == "recall":
        return _safe_divide(_at(cumulative, k).astype(np.float64), data.n_relevant)
    if base == "precision":
        return _at(cumulative, k) / k
    if base == "mrr":
        limited = relevant[:, :k] if k is not None else relevant
        has = limited.any(axis=1)
        first = np.argmax(limited, axis=1) + 1 if limited.shape[1] else np.ones(len(limited), dtype=np.int64)
        return np.where(has, 1.0 / first, 0.0)
    if base in ("ndcg", "ndcg_exp"):
        exponential = base == "ndcg_exp"
        return _safe_divide(_dcg(data.grades, k, exponential), _dcg(data.ideal, k, exponential))
    if base == "map":
        limited = relevant[:, :k] if k is not None else relevant
        ranks = np.arange(1, limited.shape[1] + 1)
        precision_at_hits = np.where(limited, cumulative[:, : limited.shape[1]] / ranks, 0.0)
        return _safe_divide(precision_at_hits.sum(axis=1), data.n_relevant)
    if base == "rprec":
        return _safe_divide(_at(cumulative, data.n_relevant).astype(np.float64), data.n_relevant)
    raise KeyError(f"no batch path for metric {base!r}")  # the registry and this switch must agree


def first_relevant_ranks(data: RankedGrades) -> np.ndarray:
    """1-based rank of the first relevant document per row; 0 where there is none."""
    relevant = data.relevant
    if relevant.shape[1] == 0:
        return np.zeros(len(relevant), dtype=np.int64)
    return np.where(relevant.any(axis=1), np.argmax(relevant, axis=1) + 1, 0)


def evaluate(run: Run, qrels: Qrels, metrics: Sequence[Metric], query_ids: Sequence[str] | None = None,
             rel_threshold: int = 1, depth: int | None = None) -> pd.DataFrame:
    """Per-query values: one row per query (index ``query_id``), one column per metric name,
    plus ``first_relevant_rank`` (nullable int). Queries default to those with a relevant judgment;
    a query the run misses scores 0 (trec_eval ``-c``)."""
    if query_ids is None:
        query_ids = qrels.queries_with_relevant(rel_threshold)
    data = rank_grades(run, qrels, query_ids, rel_threshold, depth)
    columns = {m.name: batch_metric(m, data) for m in metrics}
    frame = pd.DataFrame(columns, index=pd.Index(list(query_ids), name="query_id"))
    ranks = first_relevant_ranks(data)
    frame[FIRST_RELEVANT_RANK] = pd.array(np.where(ranks > 0, ranks, 0), dtype="Int64")
    frame.loc[ranks == 0, FIRST_RELEVANT_RANK] = pd.NA
    return frame
