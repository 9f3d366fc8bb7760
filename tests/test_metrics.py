"""The metric definitions, pinned by the seeds' worked examples and by hand-derived cases.

Every case is checked twice: with the per-query function (the specification) and through the
batch evaluator that ``bench`` uses.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from corpora import Qrels, RetbenchError, Run
from corpora.errors import ParameterError, UnknownNameError
from harness.core import metrics as m
from harness.core.evaluation import evaluate
from harness.core.metrics import METRICS, metric_names, parse_metric, parse_metrics

# The article's example (seed 000): a answers (grade 2), b and c help (grade 1).
ARTICLE_QRELS = {"a": 2, "b": 1, "c": 1}
A_FIRST = ["a", "x", "y", "b", "z"]
A_THIRD = ["x", "y", "a", "b", "z"]
NOTHING = ["x", "y", "z", "w", "v"]

# Seed 001's worked example: A=3, B=2, C=1, the retriever returns B, X, A, C.
SEED_QRELS = {"A": 3, "B": 2, "C": 1}
SEED_RANKING = ["B", "X", "A", "C"]


def batch(name: str, ranking: list[str], judgments: dict[str, int], rel_threshold: int = 1) -> float:
    """The value the batch evaluator gives one query."""
    run = Run.from_mapping({"q": [(d, float(len(ranking) - i)) for i, d in enumerate(ranking)]})
    frame = evaluate(run, Qrels({"q": judgments}), [parse_metric(name)], ["q"], rel_threshold)
    return float(frame.loc["q", name])


def both(name: str, ranking: list[str], judgments: dict[str, int], rel_threshold: int = 1) -> float:
    spec = parse_metric(name).per_query(ranking, judgments, rel_threshold)
    assert batch(name, ranking, judgments, rel_threshold) == pytest.approx(spec, abs=1e-12)
    return spec


@pytest.mark.parametrize(("ranking", "hit3", "recall5", "rr", "ndcg5"), [
    (A_FIRST, 1, 0.67, 1.00, 0.776),
    (A_THIRD, 1, 0.67, 0.33, 0.457),
    (NOTHING, 0, 0.00, 0.00, 0.000),
])
def test_the_articles_metric_examples(ranking: list[str], hit3: int, recall5: float, rr: float, ndcg5: float) -> None:
    assert both("hit@3", ranking, ARTICLE_QRELS) == hit3
    assert round(both("recall@5", ranking, ARTICLE_QRELS), 2) == recall5
    assert round(both("mrr", ranking, ARTICLE_QRELS), 2) == rr
    assert round(both("ndcg@5", ranking, ARTICLE_QRELS), 3) == ndcg5


def test_ndcg_equals_scikit_learn_on_the_full_universe_only() -> None:
    """The article's check: scikit-learn agrees when given every document (0.456949); given only
    the five retrieved it forgets c and inflates nDCG to 0.543791, a number we never report."""
    universe = ["a", "b", "c", "x", "y", "z", "w", "v"]
    truth = np.array([[ARTICLE_QRELS.get(d, 0) for d in universe]])
    scores = np.array([[5 - A_THIRD.index(d) if d in A_THIRD else 0 for d in universe]])
    full = ndcg_score(truth, scores, k=5)
    ours = both("ndcg@5", A_THIRD, ARTICLE_QRELS)
    assert round(full, 6) == 0.456949
    assert math.isclose(ours, full, rel_tol=1e-12)
    only_retrieved = ndcg_score(np.array([[ARTICLE_QRELS.get(d, 0) for d in A_THIRD]]), np.array([[5, 4, 3, 2, 1]]), k=5)
    assert round(only_retrieved, 6) == 0.543791
    assert round(ours, 6) != round(only_retrieved, 6)


def test_seed_001_worked_example() -> None:
    assert round(both("ndcg_exp@4", SEED_RANKING, SEED_QRELS), 3) == 0.738
    assert both("recall@4", SEED_RANKING, SEED_QRELS) == 1.0
    assert both("precision@4", SEED_RANKING, SEED_QRELS) == 0.75
    assert both("hit@4", SEED_RANKING, SEED_QRELS) == 1.0
    assert both("mrr", SEED_RANKING, SEED_QRELS) == 1.0
    # DCG 6.931 and IDCG 9.393, as the seed derives them
    assert round(m.dcg([2, 0, 3, 1], gain="exp"), 3) == 6.931
    assert round(m.dcg([3, 2, 1], gain="exp"), 3) == 9.393


def test_linear_and_exponential_gain_differ_as_documented() -> None:
    linear = both("ndcg@4", SEED_RANKING, SEED_QRELS)
    exponential = both("ndcg_exp@4", SEED_RANKING, SEED_QRELS)
    # linear: DCG = 2 + 3/2 + 1/log2(5); IDCG = 3 + 2/log2(3) + 1/2
    assert linear == pytest.approx((2 + 1.5 + 1 / math.log2(5)) / (3 + 2 / math.log2(3) + 0.5))
    assert exponential != pytest.approx(linear)


def test_cutoff_measures_divide_by_k_not_by_retrieved() -> None:
    assert both("precision@10", ["a", "b"], {"a": 1, "b": 1}) == 0.2  # trec_eval P_10
    assert both("judged@4", ["a", "x"], {"a": 0}) == 0.25


def test_average_precision_and_r_precision() -> None:
    qrels = {"a": 1, "b": 1, "c": 1, "n": 0}
    ranking = ["a", "n", "b", "x", "c"]
    assert both("map", ranking, qrels) == pytest.approx((1 / 1 + 2 / 3 + 3 / 5) / 3)
    assert both("map@3", ranking, qrels) == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert both("rprec", ranking, qrels) == pytest.approx(2 / 3)  # R = 3: a, n, b


def test_bpref_by_hand() -> None:
    qrels = {"a": 1, "b": 2, "c": 1, "n1": 0, "n2": 0, "n3": 0, "u": -1}
    ranking = ["n1", "a", "u", "x", "n2", "b"]  # u: grade -1 (skipped), x: unjudged (skipped)
    # R = 3, N = 3: a has 1 judged non-relevant above it, b has 2
    assert both("bpref", ranking, qrels) == pytest.approx(((1 - 1 / 3) + (1 - 2 / 3)) / 3)
    assert both("bpref", ["a", "b"], {"a": 1, "b": 1}) == 1.0  # no judged non-relevant at all


def test_negative_grades_are_judged_but_never_relevant_and_gain_nothing() -> None:
    qrels = {"a": -1, "b": 1}
    ranking = ["a", "b"]
    assert both("mrr", ranking, qrels) == 0.5
    assert both("recall@1", ranking, qrels) == 0.0
    assert both("judged@2", ranking, qrels) == 1.0
    assert both("ndcg", ranking, qrels) == pytest.approx(1 / math.log2(3))
    assert both("mrr", ranking, qrels, rel_threshold=0) == 0.5  # even a threshold of 0 keeps -1 out


def test_rel_threshold_moves_binary_measures_but_not_graded_gains() -> None:
    qrels = {"a": 1, "b": 2}
    ranking = ["a", "b"]
    assert both("mrr", ranking, qrels, rel_threshold=2) == 0.5
    assert both("recall@1", ranking, qrels, rel_threshold=2) == 0.0
    assert both("ndcg", ranking, qrels, rel_threshold=2) == both("ndcg", ranking, qrels)


def test_a_query_without_relevant_documents_scores_zero() -> None:
    for name in ("hit@3", "recall@3", "precision@3", "mrr", "ndcg", "ndcg_exp@3", "map", "rprec", "bpref"):
        assert both(name, ["a", "b"], {"a": 0}) == 0.0


@pytest.mark.parametrize(("name", "base", "k"), [
    ("ndcg@10", "ndcg", 10), ("ndcg", "ndcg", None), ("ndcg_cut_10", "ndcg", 10), ("P_5", "precision", 5),
    ("P@5", "precision", 5), ("recall_100", "recall", 100), ("map", "map", None), ("map_cut_20", "map", 20),
    ("Rprec", "rprec", None), ("bpref", "bpref", None), ("recip_rank", "mrr", None), ("success_1", "hit", 1),
    ("success@5", "hit", 5), ("judged@10", "judged", 10), ("mrr@10", "mrr", 10),
])
def test_names_and_trec_eval_aliases_keep_the_spelling_requested(name: str, base: str, k: int | None) -> None:
    metric = parse_metric(name)
    assert (metric.name, metric.base, metric.k) == (name, base, k)


def test_every_listed_name_parses() -> None:
    for name in metric_names():
        parse_metric(name.replace("@k", "@3").replace("_K", "_3"))
    assert set(METRICS) <= {n.split("@")[0] for n in metric_names()}


@pytest.mark.parametrize(("text", "error"), [
    ("ndgc@5", UnknownNameError), ("hit", ParameterError), ("ndcg@0", ParameterError), ("ndcg@x", ParameterError),
    ("rprec@5", ParameterError), ("P_0", ParameterError),
])
def test_bad_names_are_clear_errors(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse_metric(text)


def test_unknown_name_lists_the_registry() -> None:
    with pytest.raises(UnknownNameError) as caught:
        parse_metric("ndgc@5")
    for name in metric_names():
        assert name in str(caught.value)


def test_parse_metrics_reports_every_problem_and_drops_repeats() -> None:
    with pytest.raises(RetbenchError) as caught:
        parse_metrics("ndgc@5,hit,mrr")
    assert "ndgc@5" in str(caught.value) and "'k'" in str(caught.value)
    assert [x.name for x in parse_metrics("mrr, ndcg@5,mrr")] == ["mrr", "ndcg@5"]
    with pytest.raises(ParameterError):
        parse_metrics(" , ")


def test_the_join_gives_the_same_values_whatever_its_slice_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluator scans run entries in slices; slice edges inside and between queries (and
    empty rankings) must not change a value."""
    from harness.core import evaluation
    from corpora.trec_io import run_from_arrays

    rng = np.random.default_rng(7)
    rows = [(f"q{q}", f"d{d}", float(rng.integers(0, 5))) for q in range(40) if q % 7
            for d in rng.choice(60, int(rng.integers(1, 25)), replace=False)]
    run = run_from_arrays([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    run = Run(["empty", *run.query_ids, "empty2"], run.doc_ids, np.concatenate([[0], run.offsets, [run.offsets[-1]]]),
              run.doc_index, run.scores)
    judgments = {f"q{q}": {f"d{d}": int(rng.integers(-1, 4)) for d in rng.choice(60, 15, replace=False)}
                 for q in range(45)}
    metrics = parse_metrics("ndcg@10,map,mrr,recall@5,bpref,P_3")
    query_ids = sorted(judgments) + ["empty"]
    expected = evaluate(run, Qrels(judgments), metrics, query_ids)
    for size in (1, 3, 7, 64):
        monkeypatch.setattr(evaluation, "_SLICE", size)
        assert evaluate(run, Qrels(judgments), metrics, query_ids).equals(expected)
    assert expected["map"].sum() > 0


# ----- exponential gain past the float range (issue 11): an error naming the grade, never inf/nan ----
@pytest.mark.filterwarnings("error")  # the batch path's numpy overflow warning used to leak
@pytest.mark.parametrize(("judgments", "grade"), [
    ({"a": 2000, "b": 1}, 2000),             # 2^2000 - 1 is past the largest float on its own
    ({"a": 2**62}, 2**62),                   # computing 2**(2**62) exactly would never finish
    ({"a": 1023, "b": 1023, "c": 1023}, 1023),  # each gain fits; their discounted sum does not
])
def test_ndcg_exp_past_the_float_range_names_the_grade(judgments: dict[str, int], grade: int) -> None:
    ranking = sorted(judgments)
    with pytest.raises(RetbenchError, match=rf"ndcg_exp: grade {grade} .* larger than the largest float"):
        parse_metric("ndcg_exp@5").per_query(ranking, judgments)
    with pytest.raises(RetbenchError, match=rf"ndcg_exp: grade {grade} of query 'q' .*Fix: use ndcg@k"):
        batch("ndcg_exp@5", ranking, judgments)


def test_ndcg_exp_just_inside_the_float_range_is_exact() -> None:
    # 2^1023 (1 + 1/log2(3)) ~ 1.46e308 still fits: in ideal order nDCG is 1; with the grade-1023
    # document second it is (1 + G/log2(3)) / (G + 1/log2(3)) = 1/log2(3) to double precision
    assert both("ndcg_exp@2", ["a", "b"], {"a": 1023, "b": 1023}) == 1.0
    assert both("ndcg_exp@2", ["b", "a"], {"a": 1023, "b": 1}) == pytest.approx(1 / math.log2(3), rel=1e-12)


@pytest.mark.filterwarnings("error")
def test_bench_evaluate_with_a_grade_of_2000_exits_2_naming_it(tmp_path) -> None:
    from click.testing import CliRunner

    from harness.cli import main

    (tmp_path / "qrels").write_text("q1 0 a 2000\nq1 0 b 1\n", encoding="utf-8")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["evaluate", "--qrels", str(tmp_path / "qrels"), str(tmp_path / "run"),
                                       "--metrics", "ndcg_exp@5"])
    assert result.exit_code == 2
    assert "error: ndcg_exp: grade 2000 of query 'q1'" in result.stderr and "Traceback" not in result.output
    assert "RuntimeWarning" not in result.output
