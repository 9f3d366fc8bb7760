"""The fast bootstrap draws numpy's exact stream: blocks side by side, Lemire's rare skips included."""

from __future__ import annotations

import numpy as np
import pytest

import harness.statistics as statistics
from harness.statistics import bootstrap_indices, bootstrap_means


def reference_means(differences: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """The previous implementation: one ``rng.integers`` call per chunk, then gather and mean."""
    rng = np.random.default_rng(seed)
    n = differences.shape[0]
    means = differences[rng.integers(0, n, size=(n_samples, n))].mean(axis=1)
    means.sort(axis=0)
    return means


@pytest.mark.parametrize("n_queries", [1, 2, 5, 14, 64, 333])
@pytest.mark.parametrize("cells", [7, 64, 1 << 20])
def test_bootstrap_equals_the_plain_stream_for_any_block_size(monkeypatch, n_queries, cells):
    monkeypatch.setattr(statistics, "_CHUNK_CELLS", cells)
    monkeypatch.setattr(statistics, "_THREADS_ABOVE", 0)  # threads even on tiny inputs
    d = np.random.default_rng(n_queries).normal(size=(n_queries, 3))
    got = bootstrap_means(d, 701, seed=11)
    assert got.tobytes() == reference_means(d, 701, 11).tobytes()


@pytest.mark.parametrize("n_queries", [3 * 2**29 + 7, 2**31 - 1, 1_000_003])
def test_blocks_reproduce_rejections(n_queries):
    """A range near 2**32 rejects up to a quarter of the words: blocks must still line up."""
    state = np.random.default_rng(5).bit_generator.state
    threshold = (2**32 - n_queries) % n_queries
    blocks = [statistics._draw_block(state, start, 20_000, n_queries, threshold) for start in range(0, 100_000, 20_000)]
    stream = np.concatenate(blocks)
    np.testing.assert_array_equal(stream, np.random.default_rng(5).integers(0, n_queries, size=len(stream)))


def test_indices_are_numpys_integers_row_by_row(monkeypatch):
    monkeypatch.setattr(statistics, "_CHUNK_CELLS", 50)
    chunks = list(bootstrap_indices(9, 40, seed=3))
    assert [c.shape[1] for c in chunks] == [9] * len(chunks)
    np.testing.assert_array_equal(np.concatenate(chunks), np.random.default_rng(3).integers(0, 9, size=(40, 9)))


def test_a_numpy_that_draws_otherwise_falls_back_to_its_own_stream(monkeypatch):
    monkeypatch.setattr(statistics, "_check_stream", lambda n, seed: False)
    d = np.random.default_rng(0).normal(size=(20, 1))
    assert bootstrap_means(d, 300, 4).tobytes() == reference_means(d, 300, 4).tobytes()


def test_progress_reaches_the_total():
    seen: list[tuple[int, int]] = []
    bootstrap_means(np.ones((30, 1)), 500, 0, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (500, 500)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
