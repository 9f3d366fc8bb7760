"""One definition of "relevant" (``corpora.is_relevant``): grade >= rel_threshold and grade >= 0.

A negative grade is judged but never relevant, whatever the threshold: the binary metrics, the
evaluator's join, ``Qrels.relevant``/``queries_with_relevant`` and the diagnosis all agree, and a
negative ``--rel-threshold`` (which in trec_eval would make unjudged documents relevant) is refused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from corpora import Corpus, Qrels, Queries, RetbenchError, Run, get_analyzer, is_relevant
from harness import compare
from harness.core.diagnosis import diagnose
from harness.cli import main
from harness.core.evaluation import rank_grades
from harness.core.options import Scoring

GRADES = list(range(-3, 5))
THRESHOLDS = list(range(-2, 5))


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_the_rule_on_scalars_and_its_vectorised_form_agree(threshold: int) -> None:
    scalar = [is_relevant(g, threshold) for g in GRADES]
    assert scalar == [g >= threshold and g >= 0 for g in GRADES]
    assert is_relevant(np.array(GRADES, dtype=np.int64), threshold).tolist() == scalar


def test_the_evaluator_marks_relevant_entries_by_the_same_rule() -> None:
    grades = dict(zip("abcdefgh", GRADES))  # a: -3 ... h: 4, every one retrieved
    run = Run.from_mapping({"q": [(d, 10.0 - i) for i, d in enumerate(grades)]})
    for threshold in THRESHOLDS:
        data = rank_grades(run, Qrels({"q": grades}), ["q"], rel_threshold=threshold)
        assert data.entry_relevant.tolist() == [is_relevant(int(g), threshold) for g in data.entry_grades]
        assert int(data.n_relevant[0]) == sum(is_relevant(g, threshold) for g in GRADES)


@pytest.mark.parametrize("threshold", [-5, -1, 0, 1, 2])
def test_a_negative_grade_is_never_relevant_in_qrels(threshold: int) -> None:
    qrels = Qrels({"q1": {"unjudgeable": -1, "poor": 0, "good": 2}, "q2": {"unjudgeable": -1}})
    assert "unjudgeable" not in qrels.relevant("q1", threshold)
    assert qrels.relevant("q2", threshold) == {}
    assert "q2" not in qrels.queries_with_relevant(threshold)
    assert qrels.relevant("q1", threshold) == {d: g for d, g in qrels["q1"].items() if g >= max(threshold, 0)}


@pytest.mark.parametrize("threshold", [-1, 0, 1])
def test_a_negative_grade_is_never_a_relevant_document_in_the_diagnosis(threshold: int) -> None:
    corpus = Corpus(["d1", "d2"], ["refund policy", "refund money"])
    queries = Queries(["q1"], ["refund"])
    qrels = Qrels({"q1": {"d1": -1, "d2": 2}})
    run = Run.from_mapping({"q1": [("d1", 2.0), ("x", 1.5), ("y", 1.2), ("d2", 1.0)]})
    (failure,) = diagnose("s", run, corpus, queries, qrels, get_analyzer("article"), ["q1"], fail_rank=3,
                          rel_threshold=threshold)
    assert failure.rank == 4  # d1 at rank 1 is judged -1: not the first relevant document
    assert failure.grades == {"d2": 2} and list(failure.shared_words) == ["d2"]


def test_compare_refuses_a_negative_rel_threshold_before_any_work(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["compare", "--systems", "bm25", "--metrics", "mrr", "--rel-threshold", "-1",
                                       "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "--rel-threshold must be an int >= 0 (a grade). Got -1 instead. Fix:" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()
    with pytest.raises(RetbenchError, match="`rel_threshold` must be an int >= 0"):
        compare("bm25", "article", "mrr", scoring=Scoring(rel_threshold=-1))

