"""Metrics per facet value (``harness.readings.facets``) over the queries' cells (``corpora.cells``):
cells, means equal to per_query's, paired intervals.

The interval checks re-draw the bootstrap with plain numpy (``default_rng(seed).integers(0, n)`` row by
row, the stream ``bootstrap_indices`` documents), so they test the pairing, not the helper against itself.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from corpora import Queries, RetbenchError, UnknownNameError, load_dataset, load_facets_file, with_facets
from harness import compare
from corpora.cells import MISSING, cut
from harness.readings.facets import facet_columns, facet_rollup, select_facets
from harness.core.options import Statistics
from tests.conftest import real_data


def numpy_interval(cell: np.ndarray, n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """95% percentile bounds of resampled column means (queries x columns), all columns on the same resamples."""
    rows = np.random.default_rng(seed).integers(0, cell.shape[0], size=(n_samples, cell.shape[0]))
    means = np.sort(cell[rows].mean(axis=1), axis=0)
    low = int(math.floor(n_samples * 0.025 + 1e-9))
    return means[low], means[n_samples - 1 - low]


def per_query_frame(values: dict[str, list[float]], query_ids: list[str], metric: str = "mrr") -> pd.DataFrame:
    return pd.DataFrame([{"system": s, "query_id": q, metric: v} for s, column in values.items()
                         for q, v in zip(query_ids, column)])


# ----- a hand-sized example ---------------------------------------------------------------------------
QUERIES = Queries([f"q{i}" for i in range(1, 9)], ["x"] * 8,
                  {"type": ["a", "a", "a", "a", "a", "b", "b", None]})
VALUES = {"one": [1.0, 0.5, 0.0, 1.0, 0.25, 1.0, 0.0, 0.5], "two": [0.5, 0.5, 1.0, 0.0, 0.25, 0.0, 1.0, 1.0]}


def test_cell_means_intervals_and_the_small_cell_note() -> None:
    frame = facet_rollup(per_query_frame(VALUES, QUERIES.ids), QUERIES, ["mrr"], n_samples=400, seed=3)
    assert list(frame.columns) == facet_columns(["mrr"])
    assert frame[["system", "value", "n_queries"]].values.tolist() == [
        ["one", "a", 5], ["two", "a", 5], ["one", "b", 2], ["two", "b", 2], ["one", MISSING, 1], ["two", MISSING, 1]]
    # means by hand: one a = (1 + .5 + 0 + 1 + .25) / 5 = .55; two a = 2.25 / 5 = .45; one b = .5; two b = .5
    assert frame["mrr"].tolist() == [0.55, 0.45, 0.5, 0.5, 0.5, 1.0]
    # cell a (5 queries) has an interval; both systems resampled with the same rows of the same stream
    cell = np.array([VALUES["one"][:5], VALUES["two"][:5]]).T
    low, high = numpy_interval(cell, 400, 3)
    assert frame.loc[0, ["mrr_ci_low", "mrr_ci_high"]].tolist() == [low[0], high[0]]
    assert frame.loc[1, ["mrr_ci_low", "mrr_ci_high"]].tolist() == [low[1], high[1]]
    assert frame.loc[:1, "note"].tolist() == ["", ""]
    # cells b and (missing) are too small: no interval, and the note says why
    assert frame.loc[2:, ["mrr_ci_low", "mrr_ci_high"]].isna().all().all()
    assert set(frame.loc[2:, "note"]) == {"fewer than 5 queries: no interval"}
    # written as a CSV the missing bounds are empty cells
    assert "one,type,b,2,0.5,,,fewer than 5 queries: no interval" in frame.to_csv(index=False)


def test_same_inputs_and_seed_give_the_same_bytes() -> None:
    frame = per_query_frame(VALUES, QUERIES.ids)
    first = facet_rollup(frame, QUERIES, ["mrr"], n_samples=300, seed=1).to_csv(index=False)
    assert facet_rollup(frame, QUERIES, ["mrr"], n_samples=300, seed=1).to_csv(index=False) == first
    assert facet_rollup(frame, QUERIES, ["mrr"], n_samples=300, seed=2).to_csv(index=False) != first


def test_quantile_buckets_of_a_numeric_facet() -> None:
    values = {"a": 3, "b": 12, "c": 12, "d": 40, "e": 7, "f": 25, "g": 1, "h": 18, "i": None}
    ids = list(values)
    cells = cut("popularity", values, ids)
    # sorted: 1 3 7 12 12 18 25 40; edges at shares 0, 1/4, 1/2, 3/4, 1: the smallest value with at least
    # that share at or below it -> 1, 3 (2/8), 12 (5/8 >= 1/2), 18 (6/8 >= 3/4), 40; a value on an edge
    # opens the bucket above it (18 is in q4), the top edge closes the last one
    assert cells.kind == "quantiles"
    assert cells.labels == ["q1 [1, 3)", "q2 [3, 12)", "q3 [12, 18)", "q4 [18, 40]", MISSING]
    assert cells.cell_of == {"a": "q2 [3, 12)", "b": "q3 [12, 18)", "c": "q3 [12, 18)", "d": "q4 [18, 40]",
                             "e": "q2 [3, 12)", "f": "q4 [18, 40]", "g": "q1 [1, 3)", "h": "q4 [18, 40]", "i": MISSING}


def test_value_cells_order_and_labels() -> None:
    # few numeric values: one cell each, in numeric order (10 after 9); floats with 6 significant digits
    cells = cut("level", {"a": 10, "b": 9, "c": 2.5, "d": 10.0}, ["a", "b", "c", "d"])
    assert (cells.kind, cells.labels) == ("values", ["2.5", "9", "10"])
    assert cells.cell_of["d"] == "10"
    # text in text order; an empty string and NaN are missing; booleans are values, not numbers
    cells = cut("type", {"a": "b", "b": "", "c": "a", "d": float("nan"), "e": True}, list("abcde"))
    assert cells.labels == ["True", "a", "b", MISSING] and cells.cell_of["b"] == cells.cell_of["d"] == MISSING
    # text that looks like a number stays text (CSV cells): "10" sorts before "9"
    assert cut("n", {"a": "9", "b": "10"}, ["a", "b"]).labels == ["10", "9"]


def test_default_selection_skips_free_text_and_keeps_numbers() -> None:
    n = 30
    ids = [f"q{i}" for i in range(n)]
    queries = Queries(ids, ["x"] * n, {
        "description": [f"text {i}" for i in range(n)],  # 30 distinct texts: left out
        "popularity": list(range(n)),  # numeric: quartiles
        "type": ["a", "b", "c"] * 10,
        "original_id": [str(i) for i in range(n)],  # identifiers written as text: left out
    })
    chosen = select_facets(queries, ids)
    assert [(c.name, c.kind) for c in chosen] == [("popularity", "quantiles"), ("type", "values")]
    # counted over the evaluated queries only: on 20 of them the descriptions are few enough
    assert "description" in [c.name for c in select_facets(queries, ids[:20])]
    # named facets come in the order named, whatever their size
    assert [c.name for c in select_facets(queries, ids, ["type", "description"])] == ["type", "description"]
    with pytest.raises(UnknownNameError, match="unknown facet 'typo'. Valid: description, popularity, type, original_id"):
        select_facets(queries, ids, ["typo"])
    with pytest.raises(RetbenchError, match="have no facets. Fix: give them in a facets file"):
        select_facets(Queries(ids, ["x"] * n), ids, ["type"])


def test_a_facet_side_file_on_the_bundled_corpus(tmp_path: Path) -> None:
    result = compare("bm25,lsa,weighted,rrf", "article", "hit@3,recall@5,mrr,ndcg@5",
                     statistics=Statistics(bootstrap_samples=500))
    path = tmp_path / "facets.csv"
    kinds = ["price", "account", "export", "account", "price", "account", "export"] * 2
    popularity = [5, 80, 12, 40, 3, 7, 66, 21, 9, 30, 2, 55, 14, 1]
    path.write_text("query_id,kind,popularity\n" + "".join(
        f"{q},{k},{p}\n" for q, k, p in zip(result.query_ids, kinds, popularity)), encoding="utf-8")
    dataset = with_facets(result.dataset, load_facets_file(path, result.dataset.queries.ids), source=str(path))
    metrics = [m.name for m in result.metrics]
    frame = facet_rollup(result.per_query, dataset.queries, metrics, n_samples=500, seed=0)
    assert list(frame["facet"].unique()) == ["kind", "popularity"]
    # sorted: 1 2 3 5 7 9 12 14 21 30 40 55 66 80; quartile edges: the 4th (4/14 >= 1/4), 7th and 11th values
    assert list(frame.loc[frame.facet == "popularity", "value"].unique()) == [
        "q1 [1, 5)", "q2 [5, 12)", "q3 [12, 40)", "q4 [40, 80]"]
    assert_cells_are_per_query_means(frame, result.per_query, dataset.queries, metrics)


def assert_cells_are_per_query_means(frame: pd.DataFrame, per_query: pd.DataFrame, queries: Queries,
                                     metrics: list[str]) -> None:
    """Every cell's mean is the mean of per_query's rows of its queries, to the last bit."""
    for facet in frame["facet"].unique():
        cells = select_facets(queries, list(per_query["query_id"].unique()), [facet])[0]
        for row in frame[frame.facet == facet].to_dict("records"):
            members = [q for q, label in cells.cell_of.items() if label == row["value"]]
            rows = per_query[(per_query.system == row["system"]) & per_query.query_id.isin(members)]
            assert row["n_queries"] == len(rows) == len(members)
            for metric in metrics:
                assert row[metric] == math.fsum(rows[metric]) / len(rows)


@pytest.fixture(scope="module")
def csfcube_compare():
    return compare("bm25,lsa", str(real_data("csfcube")), "ndcg@10,map", statistics=Statistics(bootstrap_samples=300))


def test_csfcube_rolls_up_its_three_facets(csfcube_compare) -> None:
    result = csfcube_compare
    metrics = [m.name for m in result.metrics]
    frame = facet_rollup(result.per_query, result.dataset.queries, metrics, n_samples=300, seed=0)
    assert list(frame["facet"].unique()) == ["facet", "year", "paper_type"]
    assert list(frame.loc[frame.facet == "facet", "value"].unique()) == ["background", "method", "result"]
    for facet in ("facet", "year", "paper_type"):  # every query in exactly one cell of each facet
        assert frame[(frame.facet == facet) & (frame.system == "bm25")]["n_queries"].sum() == 50
    assert_cells_are_per_query_means(frame, result.per_query, result.dataset.queries, metrics)
    # the method cell's interval: both systems on the same resampled queries, in evaluation order
    method = [q for q, f in zip(result.dataset.queries.ids, result.dataset.queries.facets["facet"]) if f == "method"]
    order = [q for q in result.query_ids if q in set(method)]
    cell = np.column_stack([result.per_query.set_index("query_id").query("system == @s").loc[order, "ndcg@10"]
                            for s in ("bm25", "lsa")])
    low, high = numpy_interval(cell, 300, 0)
    got = frame[(frame.facet == "facet") & (frame.value == "method")]
    assert got["ndcg@10_ci_low"].tolist() == low.tolist() and got["ndcg@10_ci_high"].tolist() == high.tolist()


def test_per_query_rows_must_share_their_queries() -> None:
    frame = per_query_frame(VALUES, QUERIES.ids)
    with pytest.raises(ValueError, match="not evaluated on the same queries"):
        facet_rollup(frame.iloc[:-1], QUERIES, ["mrr"], n_samples=10)


def test_loaded_bundled_corpus_has_no_facets_and_so_no_rows() -> None:
    dataset = load_dataset("article")
    frame = per_query_frame({"one": [0.5] * len(dataset.queries)}, dataset.queries.ids)
    assert facet_rollup(frame, dataset.queries, ["mrr"], n_samples=10).empty
