"""The statistics of a suite: one benchmark over several collections, averaged so that each
collection weighs the same (the BEIR convention).

The macro mean of system s on metric m is the mean over the K collections of its mean over each
collection's queries: ``macro = (1/K) sum_c (1/n_c) sum_q x_cq``. A macro difference a - b is the
same average of the per-query differences ``d_cq``, so it is a weighted sum of per-query
differences with weight ``w_cq = 1 / (K n_c)``: a query of a small collection weighs more.

Interval: a paired bootstrap stratified by collection. Each resample draws ``n_c`` queries with
replacement *within* each collection c (never across), takes each collection's mean and averages
them; the interval is the percentile interval of the sorted macro resamples
(:func:`harness.core.statistics.percentile_interval`). Collection k draws its rows from its own
stream, ``numpy.random.default_rng(SeedSequence(seed, spawn_key=(k,)))`` (the k-th child of the
seed), so adding a collection at the end never moves the others' resamples. The same resamples give
the comparisons' intervals and, resampled with them, every system's macro mean on every metric,
from which each registered reading's suite step computes its macro table
(:class:`harness.core.readings.SuiteInputs`).

p-value: the sign-flip randomisation test of :func:`harness.core.statistics.sign_flip_tests` on the
weighted differences ``w_cq d_cq`` (their sum is the macro difference). Under the null each query's
difference is symmetric about 0, so flipping each query's sign independently is a flip within its
collection: the test is stratified as the bootstrap is. Exact up to
:data:`~harness.core.statistics.EXACT_UP_TO` differing queries, else Monte Carlo. Holm adjusts within
``family`` as in ``bench compare``; with ``family="tukey"`` the randomised Tukey HSD permutes each
query's weighted scores ``w_cq x_cq`` across the systems (so within its collection) and reads the range
of their sums, the macro means. The verdicts are :attr:`harness.core.statistics.Comparison.verdict`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from corpora.wording import counted
from harness.core.options import Statistics
from harness.core.readings import SuiteInputs, suite_tables
from harness.core.statistics import (Comparison, _resampled_means, adjust_in_families, correction_of, over_stream,
                                     percentile_interval, sign_flip_tests)

__all__ = ["MACRO", "MICRO", "SuiteStatistics", "WINS_COLUMNS", "collection_stream", "macro_statistics",
           "stratified_resamples", "wins_ties_losses"]

#: The ``collection`` cell of the rows that average the collections' means (each collection weighs the same).
MACRO = "macro"
#: The ``collection`` cell of the rows that pool every query of every collection (a collection weighs its queries).
MICRO = "micro (all queries pooled)"
_DECIMALS = 12  # means compared to this many decimals, as every reading that ranks them does

#: Columns of the per-collection tally of a pair, appended to ``suite_comparisons.csv``.
WINS_COLUMNS = ["collections", "wins", "ties", "losses", "better_on", "worse_on"]


def collection_stream(seed: int, position: int) -> np.random.Generator:
    """The random stream of the ``position``-th collection's bootstrap rows (the seed's child of that
    position: independent of the other collections and of how many there are)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(position,)))


def _draw_rows(rng: np.random.Generator, rows: int, n_queries: int) -> np.ndarray:
    return rng.integers(0, n_queries, size=(rows, n_queries))


def stratified_resamples(tables: Sequence[np.ndarray], n_samples: int, seed: int) -> np.ndarray:
    """(n_samples x columns) macro means of resampled queries, in resample order (unsorted).

    ``tables[k]`` is collection k's (queries x columns) values. Resample r takes, in each collection,
    ``n_k`` rows drawn with replacement from :func:`collection_stream` ``(seed, k)``, the mean of
    each column over them, and the average of those means over the collections.
    """
    total: np.ndarray | None = None
    for position, table in enumerate(tables):
        table = np.asarray(table, dtype=np.float64)
        # the bootstrap's own averaging, a slice of rows at a time (bounded memory whatever the columns)
        chunks = over_stream(_resampled_means, table, collection_stream(seed, position), n_samples, table.shape[0],
                             _draw_rows)
        means = np.concatenate(chunks) if chunks else np.empty((0, table.shape[1]))
        total = means if total is None else total + means
    if total is None:
        raise ValueError("stratified_resamples needs at least one collection")
    return total / len(tables)


def _mean(column: np.ndarray) -> float:
    """Exactly rounded mean, as ``summary.csv``'s (``math.fsum / n``)."""
    return math.fsum(column.tolist()) / len(column)


@dataclass(frozen=True)
class SuiteStatistics:
    """The macro readings of a suite: ``comparisons`` (one :class:`Comparison` per pair and metric,
    the macro difference a - b over all the collections' queries) and ``tables``: reading name ->
    its macro table, from each registered reading's suite step (:class:`harness.core.readings.SuiteStep`)."""

    comparisons: list[Comparison]
    tables: dict[str, pd.DataFrame]


def macro_statistics(values: Sequence[Mapping[str, Mapping[str, np.ndarray]]], systems: Sequence[str],
                     metrics: Sequence[str], pairs: Sequence[tuple[str, str]],
                     statistics: Statistics = Statistics(), collections: Sequence[Any] = ()) -> SuiteStatistics:
    """The macro comparisons and the registered readings' macro tables of a suite (see the module docstring).

    ``values[k][system][metric]``: collection k's per-query values, every system on the same queries
    in the same order. ``pairs``: the (a, b) compared, a - b. ``statistics``: the resamples, seed,
    confidence, permutations and multiple-comparison family, as for each collection's comparison.
    ``collections``: what the suite keeps of each (given to the readings' suite steps).
    """
    n_samples, seed, confidence = statistics.bootstrap_samples, statistics.seed, statistics.confidence
    permutations, family = statistics.permutations, statistics.family
    n_collections = len(values)
    columns = [(a, b, m) for m in metrics for a, b in pairs]
    tables = []
    weighted = []
    scaled: dict[str, dict[str, list[np.ndarray]]] = {s: {m: [] for m in metrics} for s in systems}
    for collection in values:
        differences = [collection[a][m] - collection[b][m] for a, b, m in columns]
        levels = [collection[s][m] for m in metrics for s in systems]
        table = np.column_stack([*differences, *levels]).astype(np.float64)
        tables.append(table)
        weighted.append(table[:, :len(columns)] / (n_collections * table.shape[0]))
        for s in systems:
            for m in metrics:
                scaled[s][m].append(np.asarray(collection[s][m], dtype=np.float64) / (n_collections * table.shape[0]))
    resampled = stratified_resamples(tables, n_samples, seed)
    observed = np.array([math.fsum(_mean(t[:, i]) for t in tables) / n_collections for i in range(tables[0].shape[1])])

    comparisons: list[Comparison] = []
    if columns:
        ordered = np.sort(resampled[:, :len(columns)], axis=0)
        low, high = percentile_interval(ordered, confidence)
        flips = np.concatenate(weighted)
        p_values, tests = sign_flip_tests(flips, permutations, seed)
        differing = np.count_nonzero(flips, axis=0)
        joined = {s: {m: np.concatenate(parts) for m, parts in by_metric.items()} for s, by_metric in scaled.items()}
        adjusted, best = adjust_in_families(p_values, tests, differing, permutations, columns, metrics, family,
                                            joined, seed)
        alpha = statistics.alpha
        n_queries = flips.shape[0]
        comparisons = [
            Comparison(a, b, m, float(observed[i]), float(low[i]), float(high[i]), float(p_values[i]),
                       float(adjusted[i]), n_queries, int(differing[i]), tests[i], alpha, float(best[i]), permutations,
                       correction_of(family))
            for i, (a, b, m) in enumerate(columns)]

    levels = [len(columns) + k * len(systems) for k in range(len(metrics))]  # each metric's first system column
    inputs = SuiteInputs(list(systems), list(metrics),
                         {m: observed[at:at + len(systems)] for m, at in zip(metrics, levels)},
                         {m: resampled[:, at:at + len(systems)] for m, at in zip(metrics, levels)},
                         comparisons, statistics, list(collections))
    return SuiteStatistics(comparisons, suite_tables(inputs))


def wins_ties_losses(summaries: Sequence[pd.DataFrame], collection_comparisons: Sequence[Sequence[Comparison]],
                     pairs: Sequence[tuple[str, str]], metrics: Sequence[str]) -> pd.DataFrame:
    """Per pair and metric, over the collections: ``wins`` (a's mean above b's, to 12 decimals),
    ``ties``, ``losses``, and ``better_on`` / ``worse_on``: the collections whose own comparison
    (its verdict, ``comparisons.csv``) calls a better / worse. One row per (metric, pair), in
    the macro comparisons' order; columns system_a, system_b, metric, then :data:`WINS_COLUMNS`."""
    rows = []
    for m in metrics:
        for a, b in pairs:
            wins = ties = losses = better = worse = 0
            for summary, comparisons in zip(summaries, collection_comparisons):
                by_system = summary.set_index("system")[m]
                left, right = round(float(by_system[a]), _DECIMALS), round(float(by_system[b]), _DECIMALS)
                wins += left > right
                ties += left == right
                losses += left < right
                for c in comparisons:
                    if c.metric == m and {c.system_a, c.system_b} == {a, b} and c.significant:
                        winner = c.system_a if c.mean_diff > 0 else c.system_b
                        better += winner == a
                        worse += winner == b
            rows.append({"system_a": a, "system_b": b, "metric": m, "collections": len(summaries), "wins": wins,
                         "ties": ties, "losses": losses, "better_on": better, "worse_on": worse})
    return pd.DataFrame(rows, columns=["system_a", "system_b", "metric", *WINS_COLUMNS])


def tally_sentence(row: Mapping[str, object]) -> str:
    """A pair's tally in words, the system that wins more collections first:
    ``bm25 beats lsa on 3 of 4 collections (significantly on 2); lsa wins 1 (significantly on 0), 0 tied``."""
    a, b = str(row["system_a"]), str(row["system_b"])
    n = row.get("n_collections", row.get("collections"))
    wins, losses = int(row["wins"]), int(row["losses"])  # type: ignore[call-overload]
    better, worse = row["better_on"], row["worse_on"]
    if losses > wins:
        a, b, wins, losses, better, worse = b, a, losses, wins, worse, better
    return (f"{a} beats {b} on {wins} of {counted(n, 'collection')} (significantly on {better}); {b} wins {losses} "
            f"(significantly on {worse}), {row['ties']} tied")
