"""The pool of a results folder: the (query, document) pairs in the top ``depth`` of any of its
systems that its judgments do not hold, for the queries it evaluated -- what an assessor should
judge next.

Per pair: how many systems retrieved it in their top ``depth`` (``n_systems``) and its best
(smallest, 1-based) rank among them (``best_rank``). Within a query the pairs come most retrieved
first, then best rank, then doc id; queries keep the folder's order (``per_query.csv``'s). Per
system, its ``holes``: how many of its top-``depth`` documents, over those queries, are unjudged.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from os import PathLike

import pandas as pd

from corpora import ParameterError, Run
from harness.store.read import ResultsFolder, one_comparison, open_results

__all__ = ["POOL_COLUMNS", "Pool", "pool", "pool_folder"]

#: The pool file's columns, in order (a TSV with this header).
POOL_COLUMNS: tuple[str, ...] = ("query_id", "doc_id", "n_systems", "best_rank")


@dataclass(frozen=True)
class Pool:
    """The unjudged pairs (``pairs``: :data:`POOL_COLUMNS`) and, per system, how many of its top
    ``depth`` are unjudged (``holes``) out of how many it returned there (``retrieved``)."""

    depth: int
    pairs: pd.DataFrame
    holes: dict[str, int]
    retrieved: dict[str, int]

    def to_tsv(self) -> str:
        """The pool file: a header, then one line per pair, tab-separated."""
        out = io.StringIO()
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(POOL_COLUMNS)
        writer.writerows(self.pairs[list(POOL_COLUMNS)].itertuples(index=False, name=None))
        return out.getvalue()


def pool(runs: Mapping[str, Run], judged: Mapping[str, Mapping[str, int]], query_ids: list[str], depth: int) -> Pool:
    """The pool of ``runs`` (system label -> :class:`~corpora.Run`) over ``query_ids`` against the
    judged pairs ``judged`` (query id -> {doc id: grade}, e.g. a :class:`~corpora.Qrels`), cut at
    ``depth`` (an int >= 1)."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ParameterError("depth", "pool", "an int >= 1", depth)
    found: dict[tuple[str, str], list[int]] = {}  # (query, doc) -> [systems, best rank]
    holes: dict[str, int] = {}
    retrieved: dict[str, int] = {}
    for label, run in runs.items():
        holes[label] = retrieved[label] = 0
        for query in query_ids:
            known = judged.get(query, {})
            for rank, doc in enumerate(run.ranking(query)[:depth], start=1):
                retrieved[label] += 1
                if doc in known:
                    continue
                holes[label] += 1
                entry = found.setdefault((query, doc), [0, rank])
                entry[0] += 1
                entry[1] = min(entry[1], rank)
    order = {q: j for j, q in enumerate(query_ids)}
    rows = sorted(((q, d, n, best) for (q, d), (n, best) in found.items()),
                  key=lambda row: (order[row[0]], -row[2], row[3], row[1]))
    pairs = pd.DataFrame(rows, columns=list(POOL_COLUMNS)).astype({"n_systems": "int64", "best_rank": "int64"})
    return Pool(depth, pairs, holes, retrieved)


def evaluated_queries(folder: ResultsFolder) -> list[str]:
    """The queries ``folder`` evaluated, in its order (``per_query.csv``'s)."""
    return list(dict.fromkeys(folder.per_query["query_id"].tolist()))


def pool_folder(path: str | PathLike[str] | ResultsFolder, depth: int, *, accept_edited: bool = False) -> Pool:
    """The pool of the results folder at ``path`` (read with :func:`~harness.store.read.open_results`,
    every file checked against the manifest's hashes): its systems' runs, its judgments
    (``qrels.txt``), its evaluated queries. A suite folder is refused, naming its collections' results
    folders (:func:`~harness.store.read.one_comparison`): each collection is pooled on its own, since
    a pool file is judged against one corpus."""
    folder = one_comparison(path if isinstance(path, ResultsFolder) else open_results(path, accept_edited=accept_edited))
    runs = {label: folder.run(label) for label in folder.systems}
    return pool(runs, folder.qrels, evaluated_queries(folder), depth)
