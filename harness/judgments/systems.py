"""Per-system numbers of a results folder under two judgment sets: each system's metric under A and
B on the queries both judge (and Kendall's tau and tau_AP between the two rankings of the systems),
and the prediction-powered estimate of each system's mean (:mod:`harness.judgments.ppi`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from corpora import Qrels, RetbenchError
from harness.core.evaluation import evaluate
from harness.core.metrics import Metric
from harness.judgments.agreement import kendall_tau, tau_ap
from harness.judgments.pool import evaluated_queries
from harness.judgments.ppi import PPI_PLUS, PPIResult, ppi, ppi_stratified
from harness.store.read import ResultsFolder

__all__ = ["PPIBySystem", "SystemsUnderTwo", "ppi_by_system", "systems_under_two"]


@dataclass(frozen=True)
class SystemsUnderTwo:
    """Each system's mean ``metric`` under A and under B over the same ``n_queries`` queries (the
    folder's evaluated queries both judge), and the rank correlations of the two orders."""

    metric: str
    n_queries: int
    systems: list[str]
    under_a: list[float]
    under_b: list[float]
    kendall_tau: float
    tau_ap: float


def _values(folder: ResultsFolder, label: str, qrels: Qrels, metric: Metric, query_ids: list[str],
            rel_threshold: int) -> np.ndarray:
    """Per-query values of ``label``'s run on ``query_ids`` (a query without a relevant judgment scores 0)."""
    return evaluate(folder.run(label), qrels, [metric], query_ids, rel_threshold)[metric.name].to_numpy(dtype=float)


def systems_under_two(folder: ResultsFolder, a: Qrels, b: Qrels, metric: Metric, rel_threshold: int) -> SystemsUnderTwo:
    queries = [q for q in evaluated_queries(folder) if q in a and q in b]
    if not queries:
        raise RetbenchError(f"no query that results folder {folder.path} evaluated is judged in both judgment sets. "
                            "Fix: check the query ids of the qrels against the folder's")
    labels = folder.systems
    under_a = [float(_values(folder, s, a, metric, queries, rel_threshold).mean()) for s in labels]
    under_b = [float(_values(folder, s, b, metric, queries, rel_threshold).mean()) for s in labels]
    return SystemsUnderTwo(metric.name, len(queries), labels, under_a, under_b, kendall_tau(under_a, under_b),
                           tau_ap(under_a, under_b))


@dataclass(frozen=True)
class PPIBySystem:
    """Per system the PPI estimate of its mean metric over the folder's ``queries`` (N), and which of
    them each judgment set judges: the machine set B is read on all N (a query B does not judge scores
    0 there), the human set A corrects it on ``judged_by_human`` (n)."""

    queries: list[str]
    judged_by_human: list[str]
    judged_by_machine: list[str]
    by_system: dict[str, PPIResult]
    method: str = PPI_PLUS
    stratified_by: str | None = None

    def coverage(self, metric: str) -> str:
        """One line saying which queries each set judges and which the estimate uses."""
        big_n, n, machine = len(self.queries), len(self.judged_by_human), len(self.judged_by_machine)
        unjudged = big_n - machine
        machine_part = (f"B judges all {big_n}" if not unjudged else
                        f"B judges {machine} of them (the other {unjudged} score 0 under B: "
                        f"{_listed(sorted(set(self.queries) - set(self.judged_by_machine)))})")
        how = "PPI++ (the machine weighted by λ)" if self.method == PPI_PLUS else "plain PPI (λ = 1)"
        strata = f", stratified by {self.stratified_by}" if self.stratified_by else ""
        return (f"prediction-powered {metric} over the results folder's {big_n} evaluated queries: {machine_part}; "
                f"A judges {n} of them, which correct the estimate; {how}{strata}; 95%:")


def _listed(ids: list[str], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def ppi_by_system(folder: ResultsFolder, human: Qrels, machine: Mapping[str, Mapping[str, int]] | Qrels,
                  metric: Metric, rel_threshold: int, method: str = PPI_PLUS,
                  strata: tuple[str, Mapping[str, str]] | None = None) -> PPIBySystem:
    """Per system the PPI estimate of its mean ``metric`` over the folder's N evaluated queries, the
    human set A judging n of them (:class:`PPIBySystem`), by ``method`` (a key of
    :data:`harness.judgments.ppi.METHODS`); ``strata``: (a facet's name, query id -> its value) to
    stratify by (:func:`harness.judgments.ppi.ppi_stratified`; every evaluated query needs a value)."""
    queries = evaluated_queries(folder)
    judged_by_human = [q for q in queries if q in human]
    judged_by_machine = [q for q in queries if q in machine]
    machine_qrels = machine if isinstance(machine, Qrels) else Qrels(machine)
    if strata is not None:
        missing = [q for q in queries if q not in strata[1]]
        if missing:
            raise RetbenchError(f"{len(missing)} evaluated queries have no value of facet {strata[0]!r} (e.g. "
                                f"{_listed(missing, 3)}). Fix: stratify by a facet every query has, or leave it out")
    results = {}
    for label in folder.systems:
        machine_all = _values(folder, label, machine_qrels, metric, queries, rel_threshold)
        position = {q: j for j, q in enumerate(queries)}
        machine_on_human = machine_all[[position[q] for q in judged_by_human]]
        human_values = _values(folder, label, human, metric, judged_by_human, rel_threshold) if judged_by_human \
            else np.empty(0)
        judged = [position[q] for q in judged_by_human]
        if strata is None:
            results[label] = ppi(machine_all, human_values, machine_on_human, method=method, judged=judged)
        else:
            results[label] = ppi_stratified(machine_all, human_values, machine_on_human,
                                            [strata[1][q] for q in queries], method=method, judged=judged)
    return PPIBySystem(queries, judged_by_human, judged_by_machine, results, method,
                       strata[0] if strata is not None else None)
