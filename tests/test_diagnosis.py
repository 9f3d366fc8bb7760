"""Failure categories on hand-made cases."""

from __future__ import annotations

from corpora import Corpus, Qrels, Queries, Run, get_analyzer
from harness.core.diagnosis import LATE_RANK, MISSED, SURFACE_HOMONYMY, VOCABULARY_GAP, diagnose

CORPUS = Corpus(["d1", "d2", "d3", "d4"], ["refund policy details", "data export to csv", "backup restore date",
                                            "restore data"])
QUERIES = Queries(["q1", "q2", "q3", "q4", "q5"], ["money back", "my data yesterday", "restore backup",
                                                     "restore", "refund"])
QRELS = Qrels({"q1": {"d1": 2}, "q2": {"d3": 2}, "q3": {"d3": 1}, "q4": {"d3": 2}, "q5": {"d1": 1}})


def categories(run: dict) -> dict[str, str]:
    failures = diagnose("s", Run.from_mapping(run), CORPUS, QUERIES, QRELS, get_analyzer("article"),
                        QUERIES.ids, fail_rank=1)
    return {f.query_id: f.category for f in failures}


def test_each_category():
    run = {
        "q1": [],  # nothing shares a word, nothing found
        "q2": [("d2", 1.0)],  # d2 shares "data", the relevant d3 shares nothing
        "q3": [("d4", 2.0), ("d3", 1.0)],  # relevant at rank 2 > fail rank 1
        "q4": [("d2", 1.0)],  # relevant d3 shares "restore" but is not retrieved
        "q5": [("d1", 1.0)],  # found first: not a failure
    }
    assert categories(run) == {"q1": VOCABULARY_GAP, "q2": SURFACE_HOMONYMY, "q3": LATE_RANK, "q4": MISSED}


def test_first_result_and_shared_words_are_reported():
    failures = diagnose("s", Run.from_mapping({"q4": [("d2", 1.0)]}), CORPUS, QUERIES, QRELS,
                        get_analyzer("article"), ["q4"], fail_rank=3)
    (failure,) = failures
    assert failure.first_result == "d2"
    assert failure.shared_words == {"d3": ["restore"]}
    assert failure.rank is None


def test_a_non_relevant_first_result_sharing_no_word_is_still_a_vocabulary_gap():
    assert categories({"q1": [("d3", 0.5)]})["q1"] == VOCABULARY_GAP
