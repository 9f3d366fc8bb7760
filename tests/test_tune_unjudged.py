"""``tune`` and the unjudged reading: a search scores an unjudged document as non-relevant
(trec_eval), so ``scoring=Scoring(unjudged="condensed")`` is refused in one line before any work,
never accepted and silently dropped (issue 42: tuning/search.py did not read it)."""

from __future__ import annotations

import pytest

from corpora import RetbenchError
from harness import RunOptions, Scoring, Statistics, tune

FAST = {"statistics": Statistics(bootstrap_samples=50)}


def test_a_condensed_reading_is_refused_before_loading() -> None:
    loaded = []
    with pytest.raises(RetbenchError) as refused:
        tune("bm25(k1=0.9|1.2)", "article", "mrr", scoring=Scoring(unjudged="condensed"),
             run=RunOptions(on_loaded=loaded.append), **FAST)
    message = str(refused.value)
    assert "\n" not in message
    assert message == ("tune scores an unjudged document as non-relevant (trec_eval), and `scoring.unjudged` is "
                       "'condensed'. Fix: leave scoring.unjudged out, or score the chosen parameters with "
                       "compare(..., scoring=Scoring(unjudged='condensed'))")
    assert loaded == []  # nothing was loaded, let alone searched


def test_the_default_reading_is_what_tune_scores_with() -> None:
    default = tune("bm25(k1=0.9|1.2)", "article", "mrr", **FAST)
    explicit = tune("bm25(k1=0.9|1.2)", "article", "mrr", scoring=Scoring(unjudged="nonrelevant"), **FAST)
    assert default.summary() == explicit.summary()
    assert default.table().equals(explicit.table())
