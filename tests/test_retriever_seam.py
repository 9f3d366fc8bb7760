"""The public seam: what ``retrievers`` exports, what ``search`` may return, and how it is checked."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import pytest

from corpora import Corpus, Queries, RetbenchError, Run
from retrievers import FixedRun, Retriever, ScoreRetriever, as_run

CORPUS = Corpus(["d1", "d2", "d3"], ["red apple", "green apple", "blue sky"])
QUERIES = Queries(["q1", "q2"], ["apple", "sky"])


def test_a_mapping_is_reindexed_on_the_corpus_in_query_order() -> None:
    run = as_run({"q2": [("d3", 0.5)], "q1": [("d2", 2.0), ("d1", 1.0)]}, CORPUS, QUERIES, "mine")
    assert isinstance(run, Run)
    assert run.query_ids == ["q1", "q2"]
    assert run.items("q1") == [("d2", 2.0), ("d1", 1.0)]
    assert run.items("q2") == [("d3", 0.5)]


def test_a_run_over_other_doc_ids_is_reindexed_on_the_corpus() -> None:
    theirs = Run.from_mapping({"q1": [("d3", 3.0), ("d1", 1.0)]})
    run = as_run(theirs, CORPUS, QUERIES, "mine")
    assert list(run.doc_ids) == CORPUS.ids
    assert run.items("q1") == [("d3", 3.0), ("d1", 1.0)]

def test_a_query_left_out_gets_an_empty_ranking() -> None:
    run = as_run({"q1": [("d1", 1.0)]}, CORPUS, QUERIES, "mine")
    assert run.items("q2") == []


def test_the_ranking_is_kept_as_returned_not_resorted() -> None:
    run = as_run({"q1": [("d1", 0.1), ("d2", 0.9)]}, CORPUS, QUERIES, "mine")
    assert run.ranking("q1") == ["d1", "d2"]


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"q1": [("zzz", 1.0)]}, "retriever 'mine': query 'q1': doc id 'zzz' is not in the corpus"),
        ({"q1": [("d1", 1.0), ("d1", 0.5)]}, "retriever 'mine': query 'q1': doc id 'd1' is ranked twice"),
        ({"q1": [("d1", math.nan)]}, "retriever 'mine': query 'q1': the score of doc id 'd1' is nan; "
                                      "scores must be finite numbers. Fix:"),
        ({"q1": [("d1", "high")]},
         "retriever 'mine': query 'q1': the score of doc id 'd1' is not a number: 'high' (str)"),
        # a string is not a score even when it reads as one: score() refuses it too
        ({"q1": [("d1", "1.0")]}, "the score of doc id 'd1' is not a number: '1.0' (str)"),
        ({"q1": [("d1", np.str_("1.0"))]}, "(str_); scores must be finite numbers"),
        ({"q1": [("d1", math.inf)]}, "the score of doc id 'd1' is inf; scores must be finite numbers"),
        ({"q1": [("d2", 1.0), ("d1", -math.inf)]}, "the score of doc id 'd1' is -inf; scores must be finite"),
        ({"q1": [("d1", 1 + 2j)]}, "the score of doc id 'd1' is not a number: (1+2j) (complex)"),
        ({"q1": [("d1", None)]}, "the score of doc id 'd1' is not a number: None (NoneType)"),
        ({"q1": ["d1"]}, "retriever 'mine': query 'q1': expected (doc id, score) pairs, got 'd1'"),
        ({"q1": 3}, "retriever 'mine': query 'q1': expected a list of (doc id, score) pairs, got int"),
        ({"q9": [("d1", 1.0)]}, "retriever 'mine': search returned unknown query id(s) ['q9']"),
        ([("d1", 1.0)], "retriever 'mine': search returned list; expected a Run or a mapping"),
    ],
)
def test_bad_results_are_errors_naming_the_retriever(result: object, message: str) -> None:
    with pytest.raises(RetbenchError) as caught:
        as_run(result, CORPUS, QUERIES, "mine")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([1.0, math.inf], "the score of doc id 'd2' is inf"),
        ([math.nan, 1.0], "the score of doc id 'd1' is nan"),
        ([1.0, -math.inf], "the score of doc id 'd2' is -inf"),
    ],
)
def test_a_run_object_is_held_to_the_same_score_rule_as_a_mapping(scores: list[float], message: str) -> None:
    theirs = Run.from_mapping({"q1": list(zip(["d1", "d2"], scores))})
    with pytest.raises(RetbenchError, match="scores must be finite numbers") as caught:
        as_run(theirs, CORPUS, QUERIES, "mine")
    assert f"retriever 'mine': query 'q1': {message}" in str(caught.value)


def test_a_query_answered_twice_in_a_run_is_an_error() -> None:
    twice = Run(["q1", "q1"], ["d1", "d2"], np.array([0, 1, 2]), np.array([0, 1]), np.array([1.0, 1.0]))
    with pytest.raises(RetbenchError, match=r"retriever 'mine': search returned query id\(s\) \['q1'\] twice"):
        as_run(twice, CORPUS, QUERIES, "mine")


@pytest.mark.parametrize("as_object", [False, True], ids=["mapping", "Run"])
def test_a_ranking_longer_than_k_keeps_its_first_k_in_the_order_returned(as_object: bool) -> None:
    # unsorted on purpose: the harness evaluates the order returned, so the cut keeps that order too
    mapping = {"q1": [("d2", 0.1), ("d3", 0.9), ("d1", 0.5)], "q2": [("d3", 1.0)]}
    result = Run.from_mapping(mapping) if as_object else mapping
    heard: list[str] = []
    run = as_run(result, CORPUS, QUERIES, "mine", k=2, note=heard.append)
    assert run.items("q1") == [("d2", 0.1), ("d3", 0.9)]
    assert run.items("q2") == [("d3", 1.0)]
    assert heard == ["retriever 'mine' returned more than the 2 results asked for in 1 of 2 queries (up to 3); "
                     "each ranking was cut to its first 2, in the order returned, as every retriever's is"]


def test_every_pair_is_checked_even_beyond_k() -> None:
    with pytest.raises(RetbenchError, match="doc id 'zzz' is not in the corpus"):
        as_run({"q1": [("d1", 1.0), ("zzz", 0.5)]}, CORPUS, QUERIES, "mine", k=1)


def test_a_ranking_within_k_is_not_noted() -> None:
    heard: list[str] = []
    run = as_run({"q1": [("d1", 1.0)]}, CORPUS, QUERIES, "mine", k=1, note=heard.append)
    assert run.items("q1") == [("d1", 1.0)] and heard == []


class Matrix(ScoreRetriever):
    """Returns the matrix it was given, whatever the queries."""

    name = "matrix-test"

    def __init__(self, matrix: object = None):
        self._matrix = matrix  # not a parameter the label shows

    def non_default_params(self) -> dict:
        return {}

    def score(self, queries: Queries) -> object:
        return self._matrix


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        (np.array([["1.0", "0", "0"], ["0", "0", "1"]]), "not a number: np.str_('1.0') (str_)"),
        (np.array([[1.0, None, 0.0], [0.0, 0.0, 1.0]], dtype=object), "not a number: None (NoneType)"),
        (np.array([[1j, 0, 0], [0, 0, 1]]), "not a number"),
    ],
)
def test_score_refuses_what_is_not_a_number_as_search_does(matrix: np.ndarray, message: str) -> None:
    with pytest.raises(RetbenchError, match="scores must be finite numbers") as caught:
        Matrix(matrix).fit(CORPUS).search(QUERIES, 10)
    assert "retriever 'matrix-test': score returned a value that is " in str(caught.value)
    assert message.split(": ")[0] in str(caught.value)


def test_score_still_takes_numbers_of_any_kind() -> None:
    numbers = np.array([[1, 0, 0], [0, 0, 2]], dtype=object)  # Python ints in an object array
    run = Matrix(numbers).fit(CORPUS).search(QUERIES, 10)
    assert run.items("q1") == [("d1", 1.0)] and run.items("q2") == [("d3", 2.0)]


class Overlap(ScoreRetriever):
    """Counts the query words a document contains (a score matrix; search is inherited)."""

    name = "overlap-test"

    def __init__(self, boost: float = 1.0):
        self._boost = boost  # deliberately not stored under its own name

    def score(self, queries: Queries) -> np.ndarray:
        docs = [set(t.split()) for t in self.corpus.texts]
        return np.array([[self._boost * len(set(q.split()) & d) for d in docs] for q in queries.texts])


def test_a_score_retriever_only_writes_score() -> None:
    run = Overlap().fit(CORPUS).search(QUERIES, k=10)
    # zero scores are not results; ties break by doc id ascending
    assert run.items("q1") == [("d1", 1.0), ("d2", 1.0)]
    assert run.items("q2") == [("d3", 1.0)]


def test_labels_show_parameters_even_when_init_does_not_store_them() -> None:
    assert Overlap().label == "overlap-test"
    assert Overlap(boost=2.0).label == "overlap-test(boost=2.0)"
    assert Overlap(2.0).get_params() == {"boost": 2.0}


def test_fixed_run_is_the_fake_for_tests() -> None:
    retriever = FixedRun({"q1": ["d3", "d1"]}).fit(CORPUS)
    run = as_run(retriever.search(QUERIES, 1), CORPUS, QUERIES, retriever.label)
    assert run.ranking("q1") == ["d3"]
    assert run.ranking("q2") == []


def test_a_retriever_must_implement_search() -> None:
    class Incomplete(Retriever):
        name = "incomplete"

    with pytest.raises(TypeError):
        Incomplete()


# ----- what score returns is checked ---------------------------------------------------------------

class Returns(ScoreRetriever):
    """score returns whatever the test hands it (the cell values of the matrix)."""

    name = "returns"
    matrix: object = None  # set by the test, not a parameter (it would show in the label)

    def score(self, queries: Queries) -> object:
        return self.matrix


def returning(matrix: object) -> Returns:
    retriever = Returns()
    retriever.matrix = matrix
    return retriever


def ranked(matrix: object, k: int = 3) -> Run:
    return returning(matrix).fit(CORPUS).search(QUERIES, k)


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        # one column short: the last document could never be found
        (np.ones((2, 2)), "retriever 'returns': score returned a matrix of shape (2, 2), expected (2, 3)"),
        (np.ones((1, 3)), "score returned a matrix of shape (1, 3), expected (2, 3)"),
        (np.ones(3), "score returned a matrix of shape (3,), expected (2, 3)"),
        (sp.csr_matrix(np.ones((2, 4))), "score returned a matrix of shape (2, 4), expected (2, 3)"),
        (np.array([[1.0, 2.0, 3.0], [4.0, np.nan, 6.0]]),
         "retriever 'returns': score of doc 'd2' for query 'q2' is nan; scores must be finite numbers, or -inf"),
        (np.array([[1.0, np.inf, np.nan], [1.0, 1.0, 1.0]]), "score of doc 'd2' for query 'q1' is inf"),
        (sp.csr_matrix(np.array([[0.0, 0.0, 0.0], [0.0, 0.0, np.nan]])), "score of doc 'd3' for query 'q2' is nan"),
        ([[1, 2, 3], [4, 5, "high"]], "retriever 'returns': score returned list, not a matrix of numbers"),
        (np.array([["1", "2", "3"], ["4", "5", "high"]]), "score returned a value that is not a number:"),
        (None, "score returned NoneType, not a matrix of numbers"),
    ],
)
def test_a_score_matrix_of_the_wrong_shape_or_with_nan_or_inf_is_an_error(matrix: object, message: str) -> None:
    with pytest.raises(RetbenchError) as caught:
        ranked(matrix)
    assert message in str(caught.value)


def test_minus_infinity_means_never_a_result_and_is_allowed() -> None:
    run = ranked(np.array([[-np.inf, 2.0, 1.0], [-np.inf, -np.inf, -np.inf]]))
    assert run.items("q1") == [("d2", 2.0), ("d3", 1.0)]
    assert run.items("q2") == []


def test_a_fusion_names_the_child_whose_scores_are_bad() -> None:
    from retrievers.fusion import Weighted

    fused = Weighted(returning(np.array([[1.0, np.nan, 0.0], [0.0, 0.0, 1.0]])), Overlap()).fit(CORPUS)
    with pytest.raises(RetbenchError, match="retriever 'returns': score of doc 'd2' for query 'q1' is nan"):
        fused.search(QUERIES, 3)


def test_an_exception_in_a_retriever_names_it_and_the_method_and_keeps_the_original() -> None:
    from retrievers.base import RetrieverFailed

    class Divides(Overlap):
        def score(self, queries: Queries) -> np.ndarray:
            return super().score(queries) * (1 // 0)

    with pytest.raises(RetrieverFailed) as caught:
        Divides(boost=2.0).fit(CORPUS).search(QUERIES, 3)
    assert str(caught.value) == ("retriever 'overlap-test(boost=2.0)' failed in score: ZeroDivisionError: "
                                 "integer division or modulo by zero. Fix: correct the retriever's score")
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


# ----- the optional protocols and the run context ---------------------------------------------


class Bare(Retriever):
    """Implements nothing optional."""

    name = "bare"

    def fit(self, corpus):
        self.seen = corpus
        return super().fit(corpus)

    def search(self, queries, k):
        return {q: [] for q in queries.ids}


def test_a_plugins_methods_are_its_own_and_every_optional_protocol_has_a_default() -> None:
    from retrievers.base import offers
    from retrievers.protocols import PROTOCOLS

    assert Bare.fit is Bare.__dict__["fit"] and Bare.search is Bare.__dict__["search"]  # nothing wraps them
    bare = Bare()
    assert [name for name in PROTOCOLS if offers(bare, name)] == []
    assert bare.confidence(QUERIES) is None and Bare.sweep([bare], CORPUS, QUERIES, 3) is None
    assert Bare.unavailable_reason() is None and bare.children == () and bare.shard_unit == 1
    assert bare.prepare_queries(QUERIES) is QUERIES
    built = []
    state = bare.fitted_state("bare", {}, CORPUS, lambda: built.append(1) or {"a": np.arange(2)}, lambda s: True)
    assert built == [1] and state["a"].tolist() == [0, 1]  # no cache in the default context: built


def test_the_harness_call_hands_over_the_context_for_the_call_only() -> None:
    from corpora.progress import Progress
    from retrievers import RunContext, fit_retriever
    from retrievers.cache import IndexCache

    seen = []

    class Looks(Bare):
        def fit(self, corpus):
            seen.append(self.run_context)
            return super().fit(corpus)

    context = RunContext(cache=IndexCache(None), progress=Progress(lambda *a: None))
    retriever = fit_retriever(Looks(), CORPUS, context)
    assert seen == [context] and retriever.run_context is Retriever.run_context  # given for the call, then let go
    retriever.fit(CORPUS)  # by hand: the default context, no cache
    assert seen[1].cache is None


def test_no_context_variable_is_left_in_the_product() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    holders = [str(p.relative_to(root)) for package in ("corpora", "retrievers", "harness")
               for p in (root / package).rglob("*.py") if "ContextVar" in p.read_text(encoding="utf-8")]
    assert holders == []
