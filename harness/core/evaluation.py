"""Vectorised evaluation: a whole run against its qrels in flat array operations.

The run's (query, doc) entries are joined once with the judgments; every measure is then a few
``bincount`` reductions over the *judged* entries (:mod:`harness.core.batch_metrics`), so the cost grows
linearly with the run's size: no dense queries x depth matrix, no Python loop over queries or
documents. Each batch path is tested equal to its per-query specification in
:mod:`harness.core.metrics`, and to trec_eval on its own test suite.

Conventions (trec_eval's): an entry is *judged* when its (query, doc) has a qrels line; it is
*relevant* when :func:`~corpora.is_relevant` (judged with ``grade >= rel_threshold`` and
``grade >= 0``); negative grades are judged but never relevant, never non-relevant for bpref, and
gain nothing. The judgments come as :attr:`Qrels.arrays <corpora.Qrels.arrays>` and the run's doc
ids as their hashes (``Run.doc_hashes``), both computed once and kept on the objects.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from corpora import JudgmentArrays, Qrels, RetbenchError, Run, is_relevant
from corpora.id_hashes import group_salts, pair_hashes
from corpora.wording import counted
from harness.core.batch_metrics import _first_relevant, first_relevant_ranks
from harness.core.metrics import Metric, batch_metric
from harness.engines.parallel import ChunkMapper
from harness.core.ranked_grades import RankedGrades

__all__ = ["COUNTS", "FIRST_RELEVANT_RANK", "RankedGrades", "batch_metric", "evaluate", "evaluate_in_partitions",
           "first_relevant_ranks", "mean_over_queries", "preview_ids", "rank_grades", "trec_eval_queries"]

FIRST_RELEVANT_RANK = "first_relevant_rank"
#: trec_eval's per-query counts: retrieved (after the depth cut), relevant judged, relevant retrieved.
COUNTS: tuple[str, ...] = ("num_ret", "num_rel", "num_rel_ret")
_SLICE = 1 << 19  # run entries scanned at a time by the join


def preview_ids(ids: Sequence[str], limit: int = 5) -> str:
    """The first ``limit`` ids, quoted, and how many more: how messages name a list of queries.

    >>> preview_ids(["q1", "q2", "q3"], limit=2)
    "'q1', 'q2' (and 1 more)"
    """
    shown = ", ".join(repr(i) for i in list(ids)[:limit])
    return shown + (f" (and {len(ids) - limit} more)" if len(ids) > limit else "")


def trec_eval_queries(qrels: Qrels, run_query_ids: Sequence[str], rel_threshold: int = 1,
                      run_queries_only: bool = False, run_label: str = "run") -> tuple[list[str], list[str]]:
    """The queries evaluating a run counts, in trec_eval's order (query id, byte order), and notes
    on what was left out or scores 0: the one rule of ``bench evaluate`` and :func:`harness.evaluate`.

    By default trec_eval 10 ``-c``: every query of ``qrels`` counts; a query the run misses scores 0,
    and so does one whose judgments are all non-relevant (grade < ``rel_threshold``).
    ``run_queries_only`` gives plain trec_eval: the queries both judged and in the run. Run queries
    without a judgment are ignored (noted). Qrels without any relevant judgment, or a run none of
    whose queries is judged, are a :class:`~corpora.RetbenchError` (every number would be 0: the ids
    or the threshold are wrong, not the system); ``run_label`` names the run in it.

    >>> trec_eval_queries(Qrels({"q2": {"b": 0}, "q1": {"a": 1}}), ["q1"])[0]
    ['q1', 'q2']
    """
    if not qrels.queries_with_relevant(rel_threshold):
        raise RetbenchError(f"{qrels.source}: no query has a relevant judgment (grade >= {rel_threshold}). "
                            "Fix: check the qrels and the relevance threshold (`rel_threshold`)")
    judged = list(qrels)  # every judged query, in order of first appearance
    judged_set = set(judged)
    run_query_ids = [str(q) for q in run_query_ids]
    in_run = [q for q in run_query_ids if q in judged_set]
    if not in_run:
        raise RetbenchError(
            f"{run_label}: none of the run's {counted(len(run_query_ids), 'query')} ({preview_ids(run_query_ids)}) "
            "is judged in "
            f"{qrels.source}. Fix: check that the run and the qrels use the same query ids")
    notes = []
    unjudged = [q for q in run_query_ids if q not in judged_set]
    if unjudged:
        notes.append(f"{counted(len(unjudged), 'run query has', 'run queries have')} no judgments and "
                     f"{'is' if len(unjudged) == 1 else 'are'} ignored: {preview_ids(unjudged)}")
    scored = in_run if run_queries_only else judged
    relevant_set = set(qrels.queries_with_relevant(rel_threshold))
    no_relevant = [q for q in scored if q not in relevant_set]
    if no_relevant:
        notes.append(f"{counted(len(no_relevant), 'judged query has', 'judged queries have')} no relevant document "
                     f"(grade >= {rel_threshold}) and "
                     f"score 0: {preview_ids(no_relevant)}")
    if not run_queries_only:
        in_run_set = set(run_query_ids)
        missing = [q for q in judged if q not in in_run_set]
        if missing:
            notes.append(f"{counted(len(missing), 'query is', 'queries are')} missing from the run and score 0: "
                         f"{preview_ids(missing)}")
    # trec_eval orders query ids with strcmp; code-point order of str equals UTF-8 byte order.
    return sorted(scored), notes


def _judgment_arrays(qrels: Qrels | Mapping[str, Mapping[str, int]]) -> JudgmentArrays:
    return (qrels if isinstance(qrels, Qrels) else Qrels(qrels)).arrays


def _ranks_within_sorted_groups(rows: np.ndarray) -> np.ndarray:
    """1-based position of each element within its run of equal ``rows`` values (rows sorted)."""
    if not len(rows):
        return np.empty(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    lengths = np.diff(np.append(starts, len(rows)))
    return np.arange(1, len(rows) + 1, dtype=np.int64) - np.repeat(starts, lengths)


def _exact_join(entry_rows: np.ndarray, entry_docs: np.ndarray, judged_rows: np.ndarray,
                judged_docs: np.ndarray) -> np.ndarray:
    """The slow, obviously right join, for the (astronomically rare) qrels whose pair hashes collide."""
    position = {(r, d): j for j, (r, d) in enumerate(zip(judged_rows.tolist(), judged_docs.tolist()))}
    return np.fromiter((position.get(key, -1) for key in zip(entry_rows.tolist(), entry_docs.tolist())),
                       dtype=np.int64, count=len(entry_rows))


class _PairFilter:
    """Two bitmaps over (row, doc) pair hashes that rule out most non-judged entries cheaply.

    A byte map about 4x the number of judgments (a few MB: it stays in cache) on the low bits, then a
    bit map 32x the judgments on the high bits; together about 1 false positive in 100.
    """

    def __init__(self, judged_pairs: np.ndarray):
        self.low_mask = np.uint64((1 << min(24, max(10, (4 * len(judged_pairs)).bit_length()))) - 1)
        self.high_bits = min(30, max(13, (32 * len(judged_pairs)).bit_length()))
        self.low = np.zeros(int(self.low_mask) + 1, dtype=bool)
        self.low[(judged_pairs & self.low_mask).view(np.int64)] = True
        high = np.zeros(1 << self.high_bits, dtype=bool)
        high[self._high_slot(judged_pairs)] = True
        self.high = np.packbits(high, bitorder="little")

    def _high_slot(self, pairs: np.ndarray) -> np.ndarray:
        return (pairs >> np.uint64(64 - self.high_bits)).view(np.int64)

    def candidates(self, pairs: np.ndarray) -> np.ndarray:
        """Positions in ``pairs`` that may be judged (every judged one is among them)."""
        maybe = np.flatnonzero(self.low[(pairs & self.low_mask).view(np.int64)])
        slot = self._high_slot(pairs[maybe])
        return maybe[(self.high[slot >> 3] >> (slot & 7).astype(np.uint8)) & 1 == 1]


def _join(run: Run, run_rows: np.ndarray, judged_rows: np.ndarray, judged_docs: np.ndarray,
          judged_hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(run entry index, its query's position in the run, judgment index) for every retrieved
    (row, doc) that has a judgment, in entry order.

    A hash per (row, doc) pair: two bitmaps discard most entries, the survivors go through pandas'
    integer hash table, and every match is checked against the row and the doc id text, so a hash
    collision can never invent a judgment.
    """
    none = np.empty(0, dtype=np.int64)
    if not len(judged_rows) or not len(run.doc_index):
        return none, none, none
    judged_pairs = pair_hashes(judged_rows, judged_hashes)
    index = pd.Index(judged_pairs)
    if not index.is_unique:
        entry_rows = np.repeat(run_rows, run.lengths())
        found = _exact_join(entry_rows, run.doc_ids[run.doc_index], judged_rows, judged_docs)
        found[entry_rows < 0] = -1
        entries = np.flatnonzero(found >= 0)
        return entries, np.searchsorted(run.offsets, entries, side="right") - 1, found[entries]
    screen = _PairFilter(judged_pairs)
    doc_hashes = run.doc_hashes
    salts = group_salts(run_rows)
    maybe_parts, pair_parts = [], []
    # Scan the entries in slices: the temporaries stay a few MB, reused from one slice to the next
    # (fresh 100 MB arrays cost more in page faults than the arithmetic done on them).
    for start in range(0, len(run.doc_index), _SLICE):
        stop = min(start + _SLICE, len(run.doc_index))
        first, last = np.searchsorted(run.offsets, [start, stop], side="right") - 1
        bounds = np.clip(run.offsets[first:last + 2], start, stop)
        pairs = doc_hashes[run.doc_index[start:stop]]  # = pair_hashes(row, doc) of each entry
        pairs ^= np.repeat(salts[first:last + 1], np.diff(bounds))
        maybe = screen.candidates(pairs)
        maybe_parts.append(maybe + start)
        pair_parts.append(pairs[maybe])
    maybe = np.concatenate(maybe_parts)
    judgment = index.get_indexer(np.concatenate(pair_parts))
    hit = judgment >= 0
    entries, judgment = maybe[hit], judgment[hit].astype(np.int64)
    block = np.searchsorted(run.offsets, entries, side="right") - 1
    same_row = judged_rows[judgment] == run_rows[block]
    entries, block, judgment = entries[same_row], block[same_row], judgment[same_row]
    same_doc = judged_docs[judgment] == run.doc_ids[run.doc_index[entries]]
    return entries[same_doc], block[same_doc], judgment[same_doc]


def rank_grades(run: Run, qrels: Qrels | Mapping[str, Mapping[str, int]], query_ids: Sequence[str], rel_threshold: int = 1,
                depth: int | None = None) -> RankedGrades:
    """Join the run with the judgments of ``query_ids`` (rankings cut at ``depth``, trec_eval ``-M``)."""
    query_ids = [str(q) for q in query_ids]
    row_of = {q: i for i, q in enumerate(query_ids)}
    if len(row_of) != len(query_ids):
        raise ValueError("query_ids must be unique")
    n_queries = len(query_ids)
    table = _judgment_arrays(qrels)

    # judgments of the evaluated queries
    row_of_table_query = np.array([row_of.get(q, -1) for q in table.query_vocabulary.tolist()], dtype=np.int64)
    judged_rows = row_of_table_query[table.query_codes] if len(table) else np.empty(0, dtype=np.int64)
    in_scope = np.flatnonzero(judged_rows >= 0)
    judged_rows, judged_grades = judged_rows[in_scope], table.grades[in_scope]

    # retrieved entries of the evaluated queries that have a judgment, within depth
    run_rows = np.array([row_of.get(q, -1) for q in run.query_ids], dtype=np.int64)
    lengths = run.lengths()
    kept = np.minimum(lengths, depth) if depth is not None else lengths
    n_retrieved = np.zeros(n_queries, dtype=np.int64)
    in_run = run_rows >= 0
    np.add.at(n_retrieved, run_rows[in_run], kept[in_run])
    entries, block, judgment = _join(run, run_rows, judged_rows, table.doc_ids[in_scope],
                                     table.doc_hashes[in_scope])
    ranks = entries - run.offsets[block] + 1
    keep = ranks <= kept[block]
    rows, ranks, grades = run_rows[block][keep], ranks[keep], judged_grades[judgment[keep]]

    relevant = is_relevant(judged_grades, rel_threshold)
    n_relevant = np.bincount(judged_rows[relevant], minlength=n_queries)
    n_nonrelevant = np.bincount(judged_rows[(judged_grades >= 0) & ~relevant], minlength=n_queries)

    positive = judged_grades > 0
    ideal_rows, ideal_grades = judged_rows[positive], judged_grades[positive]
    order = np.lexsort((-ideal_grades, ideal_rows))
    ideal_rows, ideal_grades = ideal_rows[order], ideal_grades[order]
    return RankedGrades(query_ids, rows, ranks, grades, n_retrieved, n_relevant, n_nonrelevant, ideal_rows,
                        _ranks_within_sorted_groups(ideal_rows), ideal_grades, rel_threshold)


def evaluate(run: Run, qrels: Qrels | Mapping[str, Mapping[str, int]], metrics: Sequence[Metric], query_ids: Sequence[str] | None = None,
             rel_threshold: int = 1, depth: int | None = None, counts: bool = False) -> pd.DataFrame:
    """Per-query values: one row per query (index ``query_id``), one column per metric name,
    plus ``first_relevant_rank`` (nullable int), and with ``counts`` trec_eval's :data:`COUNTS`.
    Queries default to those with a relevant judgment, in qrels order (``bench compare``'s rule;
    :func:`trec_eval_queries` is ``bench evaluate``'s); a query the run misses scores 0 (trec_eval
    ``-c``), and so does a query without a relevant judgment."""
    if not isinstance(qrels, Qrels):
        qrels = Qrels(qrels)
    if query_ids is None:
        query_ids = qrels.queries_with_relevant(rel_threshold)
    data = rank_grades(run, qrels, query_ids, rel_threshold, depth)
    columns = {m.name: batch_metric(m, data) for m in metrics}
    frame = pd.DataFrame(columns, index=pd.Index(list(data.query_ids), name="query_id", dtype=object))
    ranks = _first_relevant(data, None)
    frame[FIRST_RELEVANT_RANK] = pd.array(np.where(ranks > 0, ranks, 0), dtype="Int64")
    frame.loc[ranks == 0, FIRST_RELEVANT_RANK] = pd.NA
    if counts:
        frame["num_ret"] = data.n_retrieved
        frame["num_rel"] = data.n_relevant
        frame["num_rel_ret"] = np.bincount(data.rows[data.entry_relevant], minlength=data.n_queries)
    return frame


#: Run entries per partition of :func:`evaluate_in_partitions` at most (about: partitions hold whole
#: queries), so that the process sending them to an engine's workers holds one small one at a time.
PARTITION_ENTRIES = 1 << 17


def evaluate_in_partitions(run: Run, qrels: Qrels, metrics: Sequence[Metric], query_ids: Sequence[str],
                           rel_threshold: int = 1, mapper: ChunkMapper | None = None) -> pd.DataFrame:
    """:func:`evaluate`, cut into contiguous partitions of ``query_ids`` that run on an engine's
    workers through ``mapper`` (:mod:`harness.engines.parallel`): ``mapper.partitions`` of them, or more
    when the run has more than :data:`PARTITION_ENTRIES` entries per partition; each partition's run
    is made when the mapper asks for it. Without a mapper, one call as :func:`evaluate`.

    A query's values depend only on its own entries and judgments, taken in the same order in a
    partition as in the whole, so the frame is the same bit for bit.
    """
    query_ids = [str(q) for q in query_ids]
    # at least one partition per worker, and small enough that sending one holds little here
    wanted = max(mapper.partitions, -(-len(run.scores) // PARTITION_ENTRIES)) if mapper is not None else 1
    parts = min(wanted, len(query_ids))
    if parts <= 1:
        return evaluate(run, qrels, metrics, query_ids, rel_threshold)
    bounds = [len(query_ids) * p // parts for p in range(parts + 1)]
    pieces = [query_ids[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    frames = mapper.map(_evaluate_partition, _Partitions(run, qrels, pieces),  # type: ignore[union-attr]
                        (list(metrics), rel_threshold))
    return pd.concat(frames)


class _Partitions(Sequence):
    """The partitions' items, each made when it is asked for: a mapper that sends them one at a time
    never holds every partition's run at once."""

    def __init__(self, run: Run, qrels: Qrels, pieces: list[list[str]]):
        self.run, self.qrels, self.pieces = run, qrels, pieces

    def __len__(self) -> int:
        return len(self.pieces)

    def __getitem__(self, n: Any) -> Any:
        if isinstance(n, slice):
            return [self[j] for j in range(*n.indices(len(self)))]
        piece = self.pieces[n]
        return _PartitionRun.of(_run_of(self.run, piece)), _qrels_of(self.qrels, piece), piece


def _evaluate_partition(shared: tuple[list[Metric], int],
                        item: tuple[_PartitionRun, Qrels, list[str]]) -> pd.DataFrame:
    metrics, rel_threshold = shared
    shipped, qrels, query_ids = item
    return evaluate(shipped.run(), qrels, metrics, query_ids, rel_threshold)


class _PartitionRun:
    """A partition's run as it travels to a worker: its doc ids joined into one string (when no id
    holds the separator) rather than an array of string objects, which a pickler copies and
    memoises one by one (at a million ids, several times the ids' own memory on the sender)."""

    SEPARATOR = "\n"

    def __init__(self, query_ids: list[str], doc_ids: str | np.ndarray, n_docs: int, offsets: np.ndarray,
                 doc_index: np.ndarray, scores: np.ndarray, doc_hashes: np.ndarray):
        self.parts = (query_ids, doc_ids, n_docs, offsets, doc_index, scores, doc_hashes)

    @classmethod
    def of(cls, run: Run) -> _PartitionRun:
        ids: str | np.ndarray = run.doc_ids
        if run.doc_ids.dtype == object and len(run.doc_ids):
            joined = cls.SEPARATOR.join(run.doc_ids.tolist())
            if joined.count(cls.SEPARATOR) == len(run.doc_ids) - 1:  # no id holds it: split gives them back
                ids = joined
        return cls(run.query_ids, ids, len(run.doc_ids), run.offsets, run.doc_index, run.scores, run.doc_hashes)

    def run(self) -> Run:
        query_ids, doc_ids, n_docs, offsets, doc_index, scores, doc_hashes = self.parts
        ids = doc_ids.split(self.SEPARATOR) if isinstance(doc_ids, str) else doc_ids
        if len(ids) != n_docs:
            raise ValueError("a partition's doc ids did not travel whole")
        return Run(query_ids, ids, offsets, doc_index, scores, doc_hashes)


def _run_of(run: Run, query_ids: list[str]) -> Run:
    """The rankings of ``query_ids`` that ``run`` holds, over only the doc ids they use (less to ship)."""
    position = {q: j for j, q in enumerate(run.query_ids)}
    rows = [position[q] for q in query_ids if q in position]
    starts, stops = run.offsets[rows], run.offsets[np.array(rows, dtype=np.int64) + 1]
    entries = np.concatenate([np.arange(a, b) for a, b in zip(starts.tolist(), stops.tolist())]) if rows \
        else np.empty(0, dtype=np.int64)
    used, doc_index = np.unique(run.doc_index[entries], return_inverse=True)
    offsets = np.concatenate([[0], np.cumsum(stops - starts)]).astype(np.int64)
    return Run([run.query_ids[r] for r in rows], run.doc_ids[used], offsets, doc_index.reshape(-1),
               run.scores[entries], run.doc_hashes[used])


def _qrels_of(qrels: Qrels, query_ids: list[str]) -> Qrels:
    """The judgments of ``query_ids``, in the order ``qrels`` holds them."""
    table = qrels.arrays
    keep = np.isin(table.query_ids, np.array(query_ids, dtype=object))
    return Qrels.from_arrays(table.query_ids[keep], table.doc_ids[keep], table.grades[keep])


def mean_over_queries(values: Iterable[float]) -> float:
    """The mean of per-query values as ``math.fsum(values) / n``: the sum is exactly rounded, so
    the mean does not depend on the order of the queries (``bench compare`` and ``bench evaluate``
    list them in different orders and must print the same bits). NaN when there is no value.

    >>> mean_over_queries([0.1] * 10), sum([0.1] * 10) / 10
    (0.1, 0.09999999999999999)
    """
    values = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64)
    return math.fsum(values.tolist()) / len(values) if len(values) else math.nan
