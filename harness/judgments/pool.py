"""The pool of a results folder: the (query, document) pairs in the top ``depth`` of any of its
systems that its judgments do not hold, for the queries it evaluated -- what an assessor should
judge next.

Per pair: how many systems retrieved it in their top ``depth`` (``n_systems``) and its best
(smallest, 1-based) rank among them (``best_rank``). Per system, its ``holes``: how many of its
top-``depth`` documents, over those queries, are unjudged.

The order the pairs are written in (:data:`ORDERS`, ``bench pool --order``):

``systems`` (the default)
    within a query, the pairs most retrieved first, then best rank, then doc id; queries keep the
    folder's order (``per_query.csv``'s).
``pair:A,B``
    what is still unknown about the comparison of systems A and B, the pairs that could move it most
    first (after Carterette, Allan and Sitaraman 2006, "Minimal test collections for retrieval
    evaluation", SIGIR): a pair's *impact* is how much the mean difference of DCG@depth (binary gain;
    the rank discount ``1 / log2(rank + 1)`` of nDCG) between A and B over the N queries would move if
    the document turned out relevant, ``|disc_A(rank) - disc_B(rank)| / N`` with ``disc = 0`` outside
    a system's top ``depth``. A document both rank alike cannot move the difference, one only A (or
    only B) ranks high moves it most. Pairs by impact, highest first, across queries, then as
    ``systems`` orders them. The sum of the unjudged pairs' impacts (:func:`unknown_difference`) is
    the width of the range the mean difference can still take, whatever the grades (a pair A ranks
    higher can only raise it, one B ranks higher only lower it, so from where it stands it moves at
    most that far, and less when the pairs pull both ways): judging in this order shrinks it fastest
    (``benchmarks/pool_order.py``).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike

import pandas as pd

from corpora import ParameterError, RetbenchError, Run, UnknownNameError
from harness.store.read import ResultsFolder, one_comparison, open_results

__all__ = ["DEFAULT_ORDER", "ORDERS", "POOL_COLUMNS", "Pool", "pair_impacts", "pool", "pool_folder", "systems_of_order",
           "unknown_difference"]

#: How the pool file's pairs may be ordered (``bench pool --order``); the module docstring says how.
ORDERS = {
    "systems": "within each query, the pairs most systems retrieved first (queries in the folder's order)",
    "pair:A,B": "the pairs that could most move the mean DCG difference of systems A and B first, across queries",
}
DEFAULT_ORDER = "systems"

#: The pool file's columns, in order (a TSV with this header).
POOL_COLUMNS: tuple[str, ...] = ("query_id", "doc_id", "n_systems", "best_rank")


@dataclass(frozen=True)
class Pool:
    """The unjudged pairs (``pairs``: :data:`POOL_COLUMNS`, in ``order``) and, per system, how many of
    its top ``depth`` are unjudged (``holes``) out of how many it returned there (``retrieved``); for a
    ``pair:A,B`` order, ``unknown`` is the width of the range A - B's mean DCG@depth difference can
    still take (:func:`unknown_difference`), else None."""

    depth: int
    pairs: pd.DataFrame
    holes: dict[str, int]
    retrieved: dict[str, int]
    order: str = DEFAULT_ORDER
    unknown: float | None = None

    def to_tsv(self) -> str:
        """The pool file: a header, then one line per pair, tab-separated."""
        out = io.StringIO()
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(POOL_COLUMNS)
        writer.writerows(self.pairs[list(POOL_COLUMNS)].itertuples(index=False, name=None))
        return out.getvalue()


def _discount(rank: int) -> float:
    return 1.0 / math.log2(rank + 1.0)


def systems_of_order(order: str, labels: Sequence[str]) -> tuple[str, str] | None:
    """The two systems a ``pair:A,B`` order names (None for ``systems``); labels may hold commas
    (``weighted(bm25,lsa)``), so the split is the one comma whose both sides are labels.

    >>> systems_of_order("pair:bm25,rrf(bm25,lsa)", ["bm25", "lsa", "rrf(bm25,lsa)"])
    ('bm25', 'rrf(bm25,lsa)')
    """
    if order == DEFAULT_ORDER:
        return None
    if not isinstance(order, str):
        raise ParameterError("order", "pool", "a str, 'systems' or 'pair:A,B'", order)
    if not order.startswith("pair:"):
        raise UnknownNameError("pool order", order, list(ORDERS))
    named = order[len("pair:"):]
    splits = [(named[:i], named[i + 1:]) for i, c in enumerate(named) if c == ","]
    found = [(a, b) for a, b in splits if a in labels and b in labels]
    if len(found) != 1 or found[0][0] == found[0][1]:
        raise RetbenchError(f"the pool order {order!r} does not name two different systems of the results folder "
                            f"(its systems: {', '.join(labels)}). Fix: write pair:A,B with two of them, e.g. "
                            f"pair:{labels[0]},{labels[-1]}")
    return found[0]


def pair_impacts(runs: Mapping[str, Run], a: str, b: str, query_ids: Sequence[str],
                 depth: int) -> dict[tuple[str, str], float]:
    """(query, doc) -> its impact on the mean DCG@depth difference of ``a`` and ``b`` (module
    docstring), for every document either ranks in its top ``depth`` (0 for one both rank alike).

    >>> runs = {"A": Run.from_mapping({"q": [("x", 2.0), ("y", 1.0)]}), "B": Run.from_mapping({"q": [("y", 1.0)]})}
    >>> {pair: round(value, 4) for pair, value in pair_impacts(runs, "A", "B", ["q"], 2).items()}
    {('q', 'x'): 1.0, ('q', 'y'): 0.3691}
    """
    impacts: dict[tuple[str, str], float] = {}
    for query in query_ids:
        ranks: dict[str, list[float]] = {}
        for side, label in enumerate((a, b)):
            for rank, doc in enumerate(runs[label].ranking(query)[:depth], start=1):
                ranks.setdefault(doc, [0.0, 0.0])[side] = _discount(rank)
        for doc, (on_a, on_b) in ranks.items():
            impacts[(query, doc)] = abs(on_a - on_b) / len(query_ids)
    return impacts


def unknown_difference(runs: Mapping[str, Run], judged: Mapping[str, Mapping[str, int]], a: str, b: str,
                       query_ids: Sequence[str], depth: int) -> float:
    """The width of the range the mean DCG@depth difference of ``a`` and ``b`` (binary gain) can still
    take with the grades of the unjudged documents they rank: the sum of those pairs' impacts
    (:func:`pair_impacts`)."""
    return math.fsum(value for (query, doc), value in pair_impacts(runs, a, b, query_ids, depth).items()
                     if doc not in judged.get(query, {}))


def pool(runs: Mapping[str, Run], judged: Mapping[str, Mapping[str, int]], query_ids: list[str], depth: int,
         order: str = DEFAULT_ORDER) -> Pool:
    """The pool of ``runs`` (system label -> :class:`~corpora.Run`) over ``query_ids`` against the
    judged pairs ``judged`` (query id -> {doc id: grade}, e.g. a :class:`~corpora.Qrels`), cut at
    ``depth`` (an int >= 1), its pairs in ``order`` (:data:`ORDERS`: ``"systems"``, or ``"pair:A,B"``
    naming two of the runs)."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ParameterError("depth", "pool", "an int >= 1", depth)
    pair = systems_of_order(order, list(runs))
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
    order_of = {q: j for j, q in enumerate(query_ids)}
    rows = sorted(((q, d, n, best) for (q, d), (n, best) in found.items()),
                  key=lambda row: (order_of[row[0]], -row[2], row[3], row[1]))
    unknown = None
    if pair is not None:  # a stable sort: equal impacts keep the systems order
        impacts = pair_impacts(runs, pair[0], pair[1], query_ids, depth)
        rows.sort(key=lambda row: -impacts.get((row[0], row[1]), 0.0))
        unknown = math.fsum(impacts.get((q, d), 0.0) for q, d, _, _ in rows)
    pairs = pd.DataFrame(rows, columns=list(POOL_COLUMNS)).astype({"n_systems": "int64", "best_rank": "int64"})
    return Pool(depth, pairs, holes, retrieved, order, unknown)


def evaluated_queries(folder: ResultsFolder) -> list[str]:
    """The queries ``folder`` evaluated, in its order (``per_query.csv``'s)."""
    return list(dict.fromkeys(folder.per_query["query_id"].tolist()))


def pool_folder(path: str | PathLike[str] | ResultsFolder, depth: int, *, accept_edited: bool = False,
                order: str = DEFAULT_ORDER) -> Pool:
    """The pool of the results folder at ``path`` (read with :func:`~harness.store.read.open_results`,
    every file checked against the manifest's hashes): its systems' runs, its judgments
    (``qrels.txt``), its evaluated queries. A suite folder is refused, naming its collections' results
    folders (:func:`~harness.store.read.one_comparison`): each collection is pooled on its own, since
    a pool file is judged against one corpus. ``order``: as :func:`pool`'s."""
    folder = one_comparison(path if isinstance(path, ResultsFolder) else open_results(path, accept_edited=accept_edited))
    systems_of_order(order, folder.systems)  # a wrong name before the runs are read
    runs = {label: folder.run(label) for label in folder.systems}
    return pool(runs, folder.qrels, evaluated_queries(folder), depth, order)
