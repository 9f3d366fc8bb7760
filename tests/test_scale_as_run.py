"""as_run's vectorised path for Run results equals its item-by-item path, errors included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpora import Corpus, Queries, RetbenchError, Run
from retrievers.output import _run_on_corpus, as_run

CORPUS = Corpus([f"d{j}" for j in range(12)], [f"text {j}" for j in range(12)])
QUERIES = Queries(["q1", "q2", "q3", "q4"], ["a", "b", "c", "d"])


def _slow(run: Run) -> dict:
    """The item-by-item path, reached by handing as_run a mapping."""
    return as_run(run.to_mapping(), CORPUS, QUERIES, "x").to_mapping()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(QUERIES.ids), unique=True),
       st.lists(st.lists(st.sampled_from(CORPUS.ids), unique=True, max_size=12), min_size=4, max_size=4),
       st.booleans())
def test_fast_path_equals_the_slow_one(query_ids, rankings, corpus_vocabulary):
    mapping = {q: [(d, float(len(r) - i)) for i, d in enumerate(r)] for q, r in zip(query_ids, rankings)}
    run = Run.from_mapping(mapping)
    if corpus_vocabulary:  # the layout retrievers return: doc ids are the corpus's, in order
        position = CORPUS.index_of()
        doc_index = np.array([position[d] for r in rankings[:len(query_ids)] for d in r], dtype=np.int64)
        run = Run(run.query_ids, CORPUS.ids, run.offsets, doc_index, run.scores)
    fast = _run_on_corpus(run, CORPUS, QUERIES)
    assert fast is not None
    assert fast.to_mapping() == _slow(run)
    assert fast.query_ids == QUERIES.ids


@pytest.mark.parametrize("mapping, message", [
    ({"q9": [("d1", 1.0)]}, "unknown query"),
    ({"q1": [("nope", 1.0)]}, "not in the corpus"),
    ({"q1": [("d1", 1.0), ("d1", 0.5)]}, "ranked twice"),
    ({"q1": [("d1", float("nan"))]}, "is nan; scores must be finite numbers"),
])
def test_mistakes_still_get_the_precise_message(mapping, message):
    run = Run.from_mapping(mapping)
    assert _run_on_corpus(run, CORPUS, QUERIES) is None
    with pytest.raises(RetbenchError, match=message):
        as_run(run, CORPUS, QUERIES, "mine")
