"""The latency verdict (harness.engines.cost.compare_latency, the cost reading's latency_comparisons.csv):
paired over the sampled queries, it calls a system that sleeps 2 ms per query slower than one that
sleeps 1 ms, and two that sleep 1 ms each of one speed -- on an idle machine and beside a process
that keeps a core busy. The sleeps are the known truth; what is asserted is the verdict, never a time.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

from corpora import Corpus, Dataset, Qrels, Queries
from harness import compare
from harness.engines.cost import LATENCY_TOLERANCE, compare_latency
from harness.core.options import RunOptions, Statistics
from retrievers import Retriever

N_QUERIES = 40


class Sleeper(Retriever):
    """Sleeps ``ms`` milliseconds per query searched, then ranks the query's own document first."""

    name = "sleeper"

    def __init__(self, ms: float = 1.0, label: str = "sleeper"):
        self.ms = ms
        self.label = label

    def search(self, queries: Queries, k: int) -> dict[str, list[tuple[str, float]]]:
        time.sleep(self.ms / 1000 * len(queries))
        return {q: [(f"d{q[1:]}", 1.0)] for q in queries.ids}


def _dataset() -> Dataset:
    ids = [f"q{i}" for i in range(N_QUERIES)]
    corpus = Corpus([f"d{i}" for i in range(N_QUERIES)], [f"document {i}" for i in range(N_QUERIES)])
    return Dataset("sleepy", corpus, Queries(ids, [f"query {i}" for i in range(N_QUERIES)]),
                   Qrels({q: {f"d{q[1:]}": 1} for q in ids}), source="memory")


def _verdicts(*systems: Sleeper) -> dict[tuple[str, str], str]:
    result = compare(list(systems), _dataset(), ["mrr"], statistics=Statistics(bootstrap_samples=2000),
                     run=RunOptions(latency_queries=N_QUERIES, latency_rounds=3))
    table = result.table("latency_comparisons")
    return {(r.system_a, r.system_b): r.verdict for r in table.itertuples(index=False)}


@pytest.fixture(params=["idle", "loaded"])
def machine(request):
    """The machine as it is, or with one more process spinning on a core for the length of the test."""
    if request.param == "idle":
        yield "idle"
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield "loaded"
    finally:
        spinner.kill()
        spinner.wait()


def test_two_milliseconds_is_slower_than_one(machine) -> None:
    verdicts = _verdicts(Sleeper(2.0, "two"), Sleeper(1.0, "one"))
    assert verdicts == {("two", "one"): "slower"}, machine


def test_one_millisecond_against_one_is_no_clear_difference(machine) -> None:
    verdicts = _verdicts(Sleeper(1.0, "first"), Sleeper(1.0, "second"))
    assert verdicts == {("first", "second"): "no clear difference"}, machine


def test_faster_is_the_mirror_of_slower(machine) -> None:
    verdicts = _verdicts(Sleeper(1.0, "one"), Sleeper(2.0, "two"))
    assert verdicts == {("one", "two"): "faster"}, machine


# ----- the comparison itself, on latencies given -------------------------------------------------------


def test_a_constant_ratio_is_found_exactly_with_a_tight_interval() -> None:
    rng = np.random.default_rng(0)
    b = rng.uniform(0.001, 0.01, size=(3, 50))
    found = compare_latency("a", "b", 2 * b, b, 1000, 0, 0.95)
    assert found.ratio == pytest.approx(2.0) and found.ci_low == pytest.approx(2.0)
    assert found.verdict == "slower" and found.n_queries == 50 and found.tolerance == LATENCY_TOLERANCE


def test_a_difference_within_the_tolerance_is_no_clear_difference() -> None:
    b = np.full((3, 30), 0.002)
    found = compare_latency("a", "b", b * 1.03, b, 1000, 0, 0.95)  # 3% apart, every query alike
    assert found.ci_low > 1 and found.verdict == "no clear difference"


def test_rounds_that_disagree_widen_the_tolerance() -> None:
    b = np.full((3, 30), 0.002)
    a = b * np.array([[1.0], [1.5], [1.2]])  # rounds 1.0x, 1.5x, 1.2x: a noisy machine, median 1.2x
    found = compare_latency("a", "b", a, b, 1000, 0, 0.95)
    # the rounds stray from 1.2x by up to 1.5 / 1.2 = 1.25x: a 20% difference is inside that noise
    assert found.ratio == pytest.approx(1.2) and found.tolerance == pytest.approx(0.25)
    assert found.verdict == "no clear difference"


def test_same_seed_same_interval() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.001, 0.003, (3, 20)), rng.uniform(0.001, 0.003, (3, 20))
    assert compare_latency("a", "b", a, b, 500, 4, 0.95) == compare_latency("a", "b", a, b, 500, 4, 0.95)
