"""How unjudged documents count: trec_eval's reading (an unjudged document is non-relevant, the
default) or Sakai's condensed lists (each ranking is scored after its unjudged documents are
removed, so a system is neither punished nor rewarded for what nobody judged).

Sakai, "Alternatives to bpref", SIGIR 2007. ``judged@k`` measures the holes themselves, so it is
always computed on the ranking as returned, whichever reading scores the other metrics; so is
``first_relevant_rank`` (a rank in the ranking the system returned).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from corpora import Qrels, RetbenchError, Run

__all__ = ["DEFAULT_UNJUDGED", "UNJUDGED_HELP", "UNJUDGED_READINGS", "check_unjudged", "condense", "evaluate_as_read"]

#: How an unjudged document counts -> what the manifest and the output say about it.
UNJUDGED_READINGS: dict[str, str] = {
    "nonrelevant": "an unjudged document counts as non-relevant (trec_eval)",
    "condensed": "unjudged documents are removed from each ranking before it is scored (Sakai's condensed lists); "
                 "judged@k and first_relevant_rank read the ranking as returned",
}
DEFAULT_UNJUDGED = "nonrelevant"
#: The help of every command's ``--unjudged``.
UNJUDGED_HELP = ("How an unjudged document counts: nonrelevant (trec_eval) or condensed (removed from each ranking "
                 "before scoring, Sakai's condensed lists; judged@k still reads the ranking as returned).")
#: Metrics that read the holes themselves: computed on the ranking as returned under every reading.
_ON_RANKING_AS_RETURNED = ("judged",)


def check_unjudged(unjudged: object) -> str:
    """``unjudged`` when it is a key of :data:`UNJUDGED_READINGS`; otherwise a one-line error."""
    if unjudged not in UNJUDGED_READINGS:
        raise RetbenchError(f"`unjudged` must be one of {', '.join(map(repr, UNJUDGED_READINGS))}. Got {unjudged!r} "
                            f"instead. Fix: pass `unjudged={DEFAULT_UNJUDGED!r}` (trec_eval) or `'condensed'`")
    return str(unjudged)


def condense(run: Run, qrels: Mapping[str, Mapping[str, int]]) -> Run:
    """``run`` with every document its query's judgments do not hold removed, order kept (a
    negative grade is a judgment: it stays).

    >>> condense(Run.from_mapping({"q1": [("a", 3.0), ("x", 2.0), ("b", 1.0)]}), {"q1": {"a": 0, "b": 1}}).ranking("q1")
    ['a', 'b']
    """
    queries, docs = run.entry_columns()
    keep = np.fromiter((d in qrels.get(q, ()) for q, d in zip(queries.tolist(), docs.tolist())), dtype=bool,
                       count=len(docs))
    kept_per_query = np.add.reduceat(keep.astype(np.int64), run.offsets[:-1]) if len(keep) else None
    lengths = run.lengths()
    if kept_per_query is not None:
        kept_per_query = np.where(lengths > 0, kept_per_query, 0)  # reduceat repeats a value for empty slices
    else:
        kept_per_query = np.zeros(len(run.query_ids), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(kept_per_query)])
    hashes = run._doc_hashes  # noqa: SLF001 -- the vocabulary is unchanged, so are its hashes
    return Run(run.query_ids, run.doc_ids, offsets, run.doc_index[keep], run.scores[keep], doc_hashes=hashes)


def evaluate_as_read(evaluate: Callable[..., pd.DataFrame], run: Run, qrels: Qrels, metrics: Sequence,
                     unjudged: str, *args: object, **kwargs: object) -> pd.DataFrame:
    """``evaluate(run, qrels, metrics, *args, **kwargs)`` (a per-query evaluator of
    :mod:`harness.core.evaluation`) under the reading ``unjudged``: with ``"condensed"`` every
    metric but ``judged@k`` (and trec_eval's counts, which then describe the condensed ranking) is
    taken from the condensed run."""
    frame = evaluate(run, qrels, metrics, *args, **kwargs)
    if unjudged == DEFAULT_UNJUDGED:
        return frame
    scored = [m for m in metrics if m.base not in _ON_RANKING_AS_RETURNED]
    if scored:
        condensed = evaluate(condense(run, qrels), qrels, scored, *args, **kwargs)
        for column in condensed.columns:
            if column != "first_relevant_rank":
                frame[column] = condensed[column].to_numpy()
    return frame
