"""Hypothesis properties of the metrics, and per-query equality with pytrec_eval (trec_eval inside).

Generated cases: documents from a small pool so that rankings and judgments overlap; grades include
-1 (judged, never relevant) and queries judged all-0; some queries missing from the run, some from
the qrels; scores from a handful of float32-exact values (pytrec_eval stores scores as float32), so
ties are everywhere and trec_eval's tie-break (doc id descending) is exercised on every example.
Then the same with doubles that collide only as floats, where trec_eval 10 (doubles, our default)
and 9.x (floats, pytrec_eval, ``order="trec9"``) rank differently: each reading against pytrec_eval.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpora import Qrels, Run
from harness.core.evaluation import evaluate
from harness.core.metrics import METRICS, parse_metric, parse_metrics
from corpora.trec_io import run_from_arrays

DOCS = [f"d{i}" for i in range(12)] + ["D1", "d1x", "é"]
QUERIES = [f"q{i}" for i in range(6)]
SCORES = [-1.0, 0.0, 0.5, 1.0, 1.0, 2.25, 3.0]  # float32-exact; the repeat makes ties likelier
# distinct doubles, fewer distinct floats: 1 +- 1e-12, 0.1 and 0.1000000001, 0.5 + 1e-13 tie as floats
NEAR_TIES = [0.1, 0.1000000001, 0.5, 0.5 + 1e-13, 1.0, 1.0 + 1e-12, 1.0 - 1e-12, 2.25]
PROPERTY_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIGHTER_SETTINGS = settings(PROPERTY_SETTINGS, max_examples=100)


@dataclass
class Case:
    judgments: dict[str, dict[str, int]]
    rankings: dict[str, list[tuple[str, float]]]  # file order, not yet sorted
    rel_threshold: int

    def run(self, order: str = "trec") -> Run:
        rows = [(q, d, s) for q, pairs in self.rankings.items() for d, s in pairs]
        return run_from_arrays([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], order=order)

    def both(self) -> list[str]:
        """Queries judged and ranked: plain trec_eval's (and pytrec_eval's) query set."""
        return [q for q in self.judgments if q in self.rankings]


@st.composite
def cases(draw: st.DrawFn, scores: list[float] = SCORES) -> Case:
    judgments = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=5, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        judgments[q] = {d: draw(st.sampled_from([-1, 0, 0, 1, 1, 2, 3])) for d in docs}
    rankings = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=6, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
        rankings[q] = [(d, draw(st.sampled_from(scores))) for d in docs]
    return Case(judgments, rankings, draw(st.sampled_from([1, 1, 2])))


def families(k: int) -> list[str]:
    """One name per registered family (so a new metric is covered the day it is added)."""
    names = []
    for definition in METRICS.values():
        if definition.cutoff in ("none", "optional"):
            names.append(definition.base)
        if definition.cutoff in ("required", "optional"):
            names.append(f"{definition.base}@{k}")
    return names


# ----- the batch path equals the per-query specification --------------------------------------


@PROPERTY_SETTINGS
@given(case=cases(), k=st.sampled_from([1, 2, 3, 5, 10]), depth=st.sampled_from([None, 1, 4]))
def test_batch_equals_per_query_for_every_family(case: Case, k: int, depth: int | None) -> None:
    run = case.run()
    metrics = parse_metrics(families(k))
    query_ids = sorted(set(case.judgments) | set(case.rankings))
    frame = evaluate(run, Qrels(case.judgments), metrics, query_ids, case.rel_threshold, depth)
    for q in query_ids:
        ranking = run.ranking(q)[:depth] if depth is not None else run.ranking(q)
        judged = case.judgments.get(q, {})
        for metric in metrics:
            expected = metric.per_query(ranking, judged, case.rel_threshold)
            assert frame.loc[q, metric.name] == pytest.approx(expected, abs=1e-12), (q, metric.name)
            assert 0.0 <= frame.loc[q, metric.name] <= 1.0


@LIGHTER_SETTINGS
@given(case=cases(), seed=st.integers(0, 2**16))
def test_insertion_order_never_matters(case: Case, seed: int) -> None:
    rng = random.Random(seed)
    shuffled_rankings = dict(rng.sample(list(case.rankings.items()), len(case.rankings)))
    for q in shuffled_rankings:
        shuffled_rankings[q] = rng.sample(shuffled_rankings[q], len(shuffled_rankings[q]))
    shuffled_judgments = {q: dict(rng.sample(list(j.items()), len(j)))
                          for q, j in rng.sample(list(case.judgments.items()), len(case.judgments))}
    metrics = parse_metrics(families(3))
    query_ids = sorted(case.judgments)
    first = evaluate(case.run(), Qrels(case.judgments), metrics, query_ids, case.rel_threshold)
    again = evaluate(Case(shuffled_judgments, shuffled_rankings, case.rel_threshold).run(),
                     Qrels(shuffled_judgments), metrics, query_ids, case.rel_threshold)
    assert first.equals(again)


@LIGHTER_SETTINGS
@given(case=cases())
def test_the_ideal_ranking_scores_one(case: Case) -> None:
    for q, judged in case.judgments.items():
        positive = sorted((d for d, g in judged.items() if g > 0), key=lambda d: -judged[d])
        if not any(g >= case.rel_threshold for g in judged.values()):
            continue
        relevant = [d for d in positive if judged[d] >= case.rel_threshold]
        # graded measures need grade order; binary ones only relevant-first
        for name in ("ndcg", "ndcg_exp", f"ndcg@{len(positive)}"):
            assert parse_metric(name).per_query(positive, judged, case.rel_threshold) == pytest.approx(1.0)
        first_relevant = relevant + [d for d in positive if d not in relevant]
        for name in ("map", "rprec", "bpref", "mrr", f"recall@{len(relevant)}", f"precision@{len(relevant)}"):
            assert parse_metric(name).per_query(first_relevant, judged, case.rel_threshold) == pytest.approx(1.0)


# ----- equal to pytrec_eval -------------------------------------------------------------------

CUTOFFS = (1, 2, 3, 5, 10)
TREC_MEASURES = {"map", "map_cut", "Rprec", "bpref", "recip_rank", "P", "recall", "ndcg", "ndcg_cut", "success"}


def _trec_names() -> list[str]:
    names = []
    for measure in sorted(TREC_MEASURES):
        if measure in ("map_cut", "P", "recall", "ndcg_cut", "success"):
            names.extend(f"{measure}_{k}" for k in CUTOFFS)
        else:
            names.append(measure)
    return names


def _trec_eval_safe(case: Case) -> bool:
    """trec_eval (so pytrec_eval) mishandles a query whose judgments are *all* negative: its
    ``form_res_rels`` then keeps ``num_rel_levels`` and the ``rel_levels`` buffer of the previous
    query, and pytrec_eval reads stale memory (wrong values, a hang or a segmentation fault).
    Such queries are kept out of this comparison; ours score 0 (no relevant, no ideal gain)."""
    return all(any(g >= 0 for g in judged.values()) for judged in case.judgments.values())


@PROPERTY_SETTINGS
@given(case=cases().filter(_trec_eval_safe))
def test_per_query_values_equal_pytrec_eval(case: Case) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test dependency")
    cutoffs = ",".join(str(k) for k in CUTOFFS)
    requested = {m if m not in ("map_cut", "P", "recall", "ndcg_cut", "success") else f"{m}.{cutoffs}"
                 for m in TREC_MEASURES}
    evaluator = pytrec_eval.RelevanceEvaluator(case.judgments, requested, relevance_level=case.rel_threshold)
    theirs = evaluator.evaluate({q: dict(pairs) for q, pairs in case.rankings.items()})
    names = _trec_names()
    query_ids = case.both()
    ours = evaluate(case.run(), Qrels(case.judgments), parse_metrics(names), query_ids, case.rel_threshold)
    assert sorted(theirs) == sorted(query_ids)
    for q in query_ids:
        for name in names:
            assert math.isclose(ours.loc[q, name], theirs[q][name], rel_tol=0, abs_tol=1e-9), (q, name)
    # and a judged query the run misses scores 0 (trec_eval -c), where pytrec_eval has no row
    missing = [q for q in case.judgments if q not in case.rankings]
    if missing:
        zeros = evaluate(case.run(), Qrels(case.judgments), parse_metrics(names), missing, case.rel_threshold)
        assert (zeros[names].to_numpy() == 0).all()


def _pytrec_eval_values(case: Case, rankings: dict[str, dict[str, float]]) -> tuple[dict, list[str]]:
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is a test dependency")
    cutoffs = ",".join(str(k) for k in CUTOFFS)
    requested = {m if m not in ("map_cut", "P", "recall", "ndcg_cut", "success") else f"{m}.{cutoffs}"
                 for m in TREC_MEASURES}
    evaluator = pytrec_eval.RelevanceEvaluator(case.judgments, requested, relevance_level=case.rel_threshold)
    return evaluator.evaluate(rankings), _trec_names()


def _assert_equal(ours, theirs: dict, names: list[str], query_ids: list[str]) -> None:
    assert sorted(theirs) == sorted(query_ids)
    for q in query_ids:
        for name in names:
            assert math.isclose(ours.loc[q, name], theirs[q][name], rel_tol=0, abs_tol=1e-9), (q, name)


@PROPERTY_SETTINGS
@given(case=cases(NEAR_TIES).filter(_trec_eval_safe))
def test_the_trec9_reading_equals_pytrec_eval_on_doubles_that_tie_as_floats(case: Case) -> None:
    """pytrec_eval is given the doubles themselves and reads them as floats, as trec_eval 9.x does."""
    theirs, names = _pytrec_eval_values(case, {q: dict(pairs) for q, pairs in case.rankings.items()})
    ours = evaluate(case.run("trec9"), Qrels(case.judgments), parse_metrics(names), case.both(), case.rel_threshold)
    _assert_equal(ours, theirs, names, case.both())


@PROPERTY_SETTINGS
@given(case=cases(NEAR_TIES).filter(_trec_eval_safe))
def test_the_default_reading_ranks_by_doubles_as_trec_eval_10_does(case: Case) -> None:
    """trec_eval 10's ranking computed independently (sort by the double, ties by doc id descending),
    handed to pytrec_eval as one distinct float per rank, so its float reading cannot reorder it."""
    ranked = {q: sorted(pairs, key=lambda p: (p[1], p[0]), reverse=True) for q, pairs in case.rankings.items()}
    as_ranks = {q: {d: float(len(pairs) - i) for i, (d, _) in enumerate(pairs)} for q, pairs in ranked.items()}
    theirs, names = _pytrec_eval_values(case, as_ranks)
    run = case.run()
    assert {q: run.ranking(q) for q in run.query_ids} == {q: [d for d, _ in p] for q, p in ranked.items()}
    ours = evaluate(run, Qrels(case.judgments), parse_metrics(names), case.both(), case.rel_threshold)
    _assert_equal(ours, theirs, names, case.both())
