"""Duplicate versions (``harness.readings.near_duplicates``): two near-identical versions of one document in a
query's top places are reported; dissimilar documents, a version below the fail rank, and records
with too little text to tell (a shared title alone, a short text) are not."""

from __future__ import annotations

import numpy as np
import pytest

from corpora import Corpus, Queries, Run
from harness.readings.near_duplicates import DUPLICATE_COLUMNS, MIN_BODY_WORDS, jaccard_of_pairs, near_duplicates, shingle_matrix, shingles
from retrievers.bm25 import BM25

POLICY = ("Refund policy. You can ask for your money back within 30 days of purchase by writing to the billing "
          "team from the account page. Refunds are paid to the card you used and take five to seven working days "
          "to arrive. Annual plans are refunded for the months you have not used, and monthly plans for the "
          "current month only.")  # 60 words, 59 word pairs, 56 distinct ("to the", "used and", "for the" twice)
# the 2025 version: one word replaced ("30" -> "14"): 2 of the 56 pairs change on each side, Jaccard 54 / 58
POLICY_2025 = POLICY.replace("within 30 days", "within 14 days")
EXPORT = ("Export your notes. Open the settings page, choose export, and download every notebook as a zip file of "
          "markdown documents with their attachments.")
PASSWORD = "Reset a forgotten password from the sign-in page; a link is sent to your e-mail address."


def corpus() -> Corpus:
    return Corpus(["refund-2024", "refund-2025", "export", "password"], [POLICY, POLICY_2025, EXPORT, PASSWORD])


def test_the_versions_are_near_duplicates_by_hand() -> None:
    a, b = shingles(POLICY), shingles(POLICY_2025)
    assert (len(a), len(b), len(a & b), len(a | b)) == (56, 56, 54, 58)
    m = shingle_matrix([POLICY, POLICY_2025, EXPORT])
    assert jaccard_of_pairs(m, np.array([0, 0]), np.array([1, 2])).tolist() == [54 / 58, 0.0]


def test_a_query_retrieving_both_versions_in_its_top_three_is_reported() -> None:
    run = Run.from_mapping({
        "q-refund": [("refund-2025", 9.0), ("export", 5.0), ("refund-2024", 4.0), ("password", 1.0)],
        "q-export": [("export", 9.0), ("password", 2.0), ("refund-2024", 1.0), ("refund-2025", 0.5)],
        "q-empty": [],
    })
    found = near_duplicates(run, corpus())
    assert list(found.columns) == DUPLICATE_COLUMNS
    assert found.values.tolist() == [["q-refund", "refund-2025", "refund-2024", 1, 3, 54 / 58]]
    # q-export has both versions at ranks 3 and 4: below the fail rank of 3, above one of 4
    assert near_duplicates(run, corpus(), fail_rank=4)["query_id"].tolist() == ["q-refund", "q-export"]
    # only the queries asked for, in that order
    assert near_duplicates(run, corpus(), ["q-export", "missing"], fail_rank=4)["query_id"].tolist() == ["q-export"]
    # a stricter threshold than 54/58 = 0.931 finds nothing
    assert near_duplicates(run, corpus(), threshold=0.95).empty


def test_dissimilar_documents_and_empty_texts_are_not_duplicates() -> None:
    docs = Corpus(["export", "password", "empty-1", "empty-2", "same-words"],
                  [EXPORT, PASSWORD, "", "", " ".join(reversed(EXPORT.split()))])
    run = Run.from_mapping({"q": [("export", 3.0), ("password", 2.0), ("same-words", 1.5)],
                            "q-empty": [("empty-1", 1.0), ("empty-2", 0.5)]})
    # the same words in reverse order share no word pair with the original
    assert near_duplicates(run, docs).empty


def test_bm25_retrieves_both_versions_and_the_pair_is_found() -> None:
    docs = corpus()
    queries = Queries(["q1", "q2"], ["how many days to get my money back", "export notebooks as markdown"])
    run = BM25().fit(docs).search(queries, 3)
    assert set(run.ranking("q1")[:2]) == {"refund-2024", "refund-2025"}
    found = near_duplicates(run, docs, queries.ids)
    assert found[["query_id", "rank_a", "rank_b"]].values.tolist() == [["q1", 1, 2]]
    assert {found.loc[0, "doc_a"], found.loc[0, "doc_b"]} == {"refund-2024", "refund-2025"}


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="threshold in"):
        near_duplicates(Run.from_mapping({}), corpus(), threshold=0.0)


# CACM's case: an algorithm and a later remark on it, two different papers, both title-only records
ALGORITHM_TITLE = "Algorithm 62: A set of associate Legendre polynomials of the second kind"


def test_two_title_only_records_sharing_a_title_are_not_duplicates() -> None:
    docs = Corpus(["algorithm", "remark", "other"], ["", "", ""],
                  titles=[ALGORITHM_TITLE, ALGORITHM_TITLE, "Compiling matrix operations"])
    run = Run.from_mapping({"q": [("algorithm", 2.0), ("remark", 1.0), ("other", 0.5)]})
    assert jaccard_of_pairs(shingle_matrix(docs.full_texts), np.array([0]), np.array([1])).tolist() == [1.0]
    assert near_duplicates(run, docs).empty  # identical shingles, but a title is all they have


def test_two_records_with_the_same_substantial_body_are_duplicates_whatever_their_titles() -> None:
    docs = Corpus(["copy-1", "copy-2", "remark"], [POLICY, POLICY, "Corrections to the algorithm above."],
                  titles=["Refund policy", "Refunds (copy)", ALGORITHM_TITLE])
    run = Run.from_mapping({"q": [("copy-1", 3.0), ("remark", 2.0), ("copy-2", 1.0)]})
    found = near_duplicates(run, docs)
    assert found[["doc_a", "doc_b", "rank_a", "rank_b"]].values.tolist() == [["copy-1", "copy-2", 1, 3]]
    assert 0.9 <= found.loc[0, "jaccard"] < 1.0  # the titles differ, the 60-word bodies do not


def test_a_short_text_pair_is_not_a_duplicate_even_when_identical() -> None:
    short = " ".join(POLICY.split()[:MIN_BODY_WORDS - 1])  # one word short of enough to tell
    enough = " ".join(POLICY.split()[:MIN_BODY_WORDS])
    docs = Corpus(["s1", "s2", "e1", "e2"], [short, short, enough, enough])
    run = Run.from_mapping({"short": [("s1", 2.0), ("s2", 1.0)], "enough": [("e1", 2.0), ("e2", 1.0)]})
    assert near_duplicates(run, docs)["query_id"].tolist() == ["enough"]
    # without the minimum the short pair would be flagged: the minimum, not the Jaccard, decides
    assert near_duplicates(run, docs, min_body_words=0)["query_id"].tolist() == ["short", "enough"]
