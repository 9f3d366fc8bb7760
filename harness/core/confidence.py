"""A system's confidence per query: how sure a retriever is of each answer, read off its run or given
by the retriever itself. What risk–coverage admits queries by (:mod:`harness.readings.risk_coverage`),
and what the ``Readings`` option group's ``confidence_from`` names (:mod:`harness.core.options`).

Confidences read off a run (:data:`CONFIDENCES`, :func:`query_confidence`)
    ``score``: the top result's score (the default); ``margin``: the top score minus the second's.
    A query with no result has confidence ``-inf`` (so does one with fewer than two results under
    ``margin``: there is no margin to measure), so it is admitted last.
A retriever's own (:func:`system_confidence`)
    a retriever that defines ``confidence(queries)`` gives one number per query instead
    (:data:`OWN_CONFIDENCE`); NaN is an error where the confidences are read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from corpora import Queries, RetbenchError, Run
from corpora.wording import counted
from harness.errors import UnknownNameError
from retrievers import Retriever, RetrieverFailed

__all__ = ["CONFIDENCES", "OWN_CONFIDENCE", "query_confidence", "system_confidence"]

#: Confidences read off a run (``--confidence-from``-style choices read this registry).
CONFIDENCES = {
    "score": "the top result's score",
    "margin": "the top result's score minus the second's",
}
#: The summary's ``confidence`` when a retriever's own ``confidence(queries)`` gave it.
OWN_CONFIDENCE = "retriever"


def query_confidence(run: Run, query_ids: Sequence[str], kind: str = "score") -> np.ndarray:
    """One confidence per query of ``query_ids`` (see :data:`CONFIDENCES`); ``-inf`` when there is none.

    >>> run = Run.from_mapping({"q1": [("a", 3.0), ("b", 2.5)], "q2": [("c", 1.0)], "q3": []})
    >>> query_confidence(run, ["q1", "q2", "q3", "q4"]).tolist()
    [3.0, 1.0, -inf, -inf]
    >>> query_confidence(run, ["q1", "q2"], "margin").tolist()
    [0.5, -inf]
    """
    if kind not in CONFIDENCES:
        raise UnknownNameError("confidence", kind, list(CONFIDENCES))
    needed = 1 if kind == "score" else 2
    position = {q: j for j, q in enumerate(run.query_ids)}
    rows = np.array([position.get(q, -1) for q in query_ids], dtype=np.int64)
    confidence = np.full(len(query_ids), -np.inf)
    if not len(run.query_ids):
        return confidence
    held = rows >= 0
    starts = np.where(held, run.offsets[np.maximum(rows, 0)], 0)
    lengths = np.where(held, run.offsets[np.maximum(rows, 0) + 1] - starts, 0)
    answered = lengths >= needed
    top = run.scores[starts[answered]]
    confidence[answered] = top if kind == "score" else top - run.scores[starts[answered] + 1]
    return confidence


def system_confidence(retriever: Retriever, run_confidence: np.ndarray, queries: Queries,
                      kind: str) -> tuple[np.ndarray, str]:
    """(one confidence per query, where it came from): the retriever's own ``confidence(queries)``
    when it defines one (checked: one finite-or-infinite number per query, in the order given), else
    ``run_confidence`` (read off its run as ``kind``)."""
    try:
        given = retriever.confidence(queries)  # the default (retrievers.protocols): None, none of its own
    except RetbenchError:
        raise
    except (Exception, SystemExit) as exc:  # the retriever's mistake (sys.exit too): named like one in fit or search
        raise RetrieverFailed(retriever.label, "confidence", exc) from exc
    if given is None:
        return run_confidence, kind
    try:
        values = np.asarray(given, dtype=np.float64)
    except (TypeError, ValueError):
        raise RetbenchError(f"retriever {retriever.label!r}: confidence(queries) returned a "
                            f"{type(given).__name__} that is not numbers. Fix: return one float per query, in the "
                            "order of queries.ids") from None
    if values.shape != (len(queries),):
        raise RetbenchError(f"retriever {retriever.label!r}: confidence(queries) returned shape {values.shape} for "
                            f"{counted(len(queries), 'query')}. Fix: return one float per query, in the order of "
                            "queries.ids")
    return values, OWN_CONFIDENCE
