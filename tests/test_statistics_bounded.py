"""The paired statistics hold a chunk of resamples at a time, never queries x resamples: what the
bootstrap, the randomisation test and the leaderboard's ranks allocate stays near one chunk
(harness.core.statistics._CHUNK_CELLS cells) plus their outputs, far below the matrix a direct
computation would hold (benchmarks/statistics_scale.py measures it at MS MARCO dev's 101k queries)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd

from harness.core import statistics
from harness.core.statistics import bootstrap_means, randomisation_p_values
from harness.readings.leaderboard import leaderboards

QUERIES, RESAMPLES, COLUMNS = 20_000, 2_000, 3
#: Bytes a resample x query matrix of int64 indices (or float64 signs) would take: 320 MB.
WHOLE = QUERIES * RESAMPLES * 8
#: One chunk's cells, as int64, times the few temporaries of a chunk (gathered values, means).
CHUNK = statistics._CHUNK_CELLS * 8


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _differences() -> np.ndarray:
    return np.random.default_rng(1).normal(0.01, 0.2, size=(QUERIES, COLUMNS))


def test_the_bootstrap_holds_one_chunk_and_its_means():
    differences = _differences()
    peak = _peak(lambda: bootstrap_means(differences, RESAMPLES, seed=0))
    assert peak < 4 * CHUNK + 2 * RESAMPLES * COLUMNS * 8
    assert 4 * CHUNK + 2 * RESAMPLES * COLUMNS * 8 < WHOLE / 4  # the bound says something


def test_the_randomisation_test_holds_one_chunk_of_flips():
    differences = _differences()
    peak = _peak(lambda: randomisation_p_values(differences, RESAMPLES, seed=0))
    assert peak < 4 * CHUNK < WHOLE / 4


def test_the_leaderboard_ranks_hold_one_chunk_per_system():
    systems = 4
    rng = np.random.default_rng(2)
    per_query = pd.DataFrame({"system": np.repeat([f"s{j}" for j in range(systems)], QUERIES),
                              "query_id": np.tile(np.arange(QUERIES), systems),
                              "ndcg@10": rng.random(QUERIES * systems)})
    peak = _peak(lambda: leaderboards(per_query, ["ndcg@10"], [], n_samples=RESAMPLES, seed=0))
    assert peak < 2 * systems * CHUNK + 4 * RESAMPLES * systems * 8 + 16 * QUERIES * systems
    assert 2 * systems * CHUNK + 4 * RESAMPLES * systems * 8 + 16 * QUERIES * systems < systems * WHOLE / 4
