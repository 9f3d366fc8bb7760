"""The bootstrap draws numpy's exact stream, whatever the chunking, and reports its progress."""

from __future__ import annotations

import numpy as np
import pytest

import harness.core.statistics as statistics
from harness.core.statistics import bootstrap_indices, bootstrap_means


def reference_means(differences: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """The plainest form: one ``rng.integers`` call for every resample at once, then gather and mean."""
    rng = np.random.default_rng(seed)
    n = differences.shape[0]
    means = differences[rng.integers(0, n, size=(n_samples, n))].mean(axis=1)
    means.sort(axis=0)
    return means


@pytest.mark.parametrize("n_queries", [1, 2, 5, 14, 64, 333])
@pytest.mark.parametrize("cells", [7, 64, 1 << 20])
@pytest.mark.parametrize("columns", [1, 3])
def test_bootstrap_equals_the_plain_stream_for_any_block_size(monkeypatch, n_queries, cells, columns):
    monkeypatch.setattr(statistics, "_CHUNK_CELLS", cells)
    monkeypatch.setattr(statistics, "_SLICE", cells)  # rows averaged at once, too
    d = np.random.default_rng(n_queries).normal(size=(n_queries, columns))
    got = bootstrap_means(d, 701, seed=11)
    assert got.tobytes() == reference_means(d, 701, 11).tobytes()


def test_indices_are_numpys_integers_row_by_row(monkeypatch):
    monkeypatch.setattr(statistics, "_CHUNK_CELLS", 50)
    chunks = list(bootstrap_indices(9, 40, seed=3))
    assert [c.shape[1] for c in chunks] == [9] * len(chunks)
    np.testing.assert_array_equal(np.concatenate(chunks), np.random.default_rng(3).integers(0, 9, size=(40, 9)))


def test_progress_reaches_the_total():
    seen: list[tuple[int, int]] = []
    bootstrap_means(np.ones((30, 1)), 500, 0, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (500, 500)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
