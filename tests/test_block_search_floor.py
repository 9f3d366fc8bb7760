"""block_search keeps per query only what can still reach its top k (a floor at its k-th best so
far); the TREC splitter takes a row's line end without a search when lines and rows are as many."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from corpora.field_columns import split_fields
from retrievers import dense_blocks
from retrievers.dense_blocks import block_scores, block_search
from retrievers.ranking import top_k_rows


def _reference(queries: np.ndarray, docs: np.ndarray, tie_rank: np.ndarray, k: int, min_score: float):
    idx, values = top_k_rows(block_scores(queries, docs, 32, 8, np.float64), k, tie_rank, min_score)
    return idx, values


@pytest.mark.parametrize("k", [1, 7, 40, 500])
@pytest.mark.parametrize("min_score", [-np.inf, 0.3])
def test_ranking_group_by_group_with_a_floor_is_the_ranking_of_the_whole_matrix(k, min_score, monkeypatch) -> None:
    rng = np.random.default_rng(3)
    distinct = rng.normal(size=(9, 5))
    distinct /= np.linalg.norm(distinct, axis=1, keepdims=True)
    docs = distinct[rng.integers(0, len(distinct), 450)].astype(np.float32)  # ties everywhere, across groups
    queries = rng.normal(size=(20, 5))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    tie_rank = rng.permutation(len(docs))
    monkeypatch.setattr(dense_blocks, "RANK_CELLS", 8 * 32 * 2)  # groups of 2 blocks: 8 groups
    hits = block_search(queries, docs, tie_rank, k, min_score, 32, 8, np.float64)
    idx, values = _reference(queries, docs, tie_rank, k, min_score)
    assert any(len(i) for i in idx)
    for q in range(len(queries)):
        found = slice(hits.offsets[q], hits.offsets[q + 1])
        assert_array_equal(hits.docs[found], idx[q])
        assert_array_equal(hits.scores[found], values[q])


def test_a_blank_line_and_no_final_line_end_still_split_into_their_rows() -> None:
    fields = split_fields(b"a Q0 d 1 1.5 t\n\nb Q0 e 1 2.5 t", 6, keep=(0, 4))
    assert fields is not None
    assert list(fields.text(0)) == ["a", "b"]
    assert list(fields.decimals(4)) == [1.5, 2.5]


@pytest.mark.parametrize("text", [b"a Q0 d\n1 1.0 t\n", b"a Q0 d 1 1.0\nt b Q0 e 1 2.0 t\n"])
def test_six_fields_over_two_lines_are_no_row(text: bytes) -> None:
    assert split_fields(text, 6, keep=(0,)) is None
