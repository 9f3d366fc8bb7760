"""Issue 42, item 3 (the facets through the registry): the facet cells are the queries' own
(``Queries.cells``), which the rollup and ``bench tune --stratify`` both read; another reading's
per-query table is rolled up per facet by the facets reading when it declares a ``RollUp``, as the
metrics card does, and the card's rollup is that one; the core holds no facet module."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

import harness.readings  # noqa: F401 - the built-in readings, registered before a fixture copies the registry
from corpora import Corpus, Dataset, Qrels, Queries, RetbenchError, UnknownNameError
from corpora.cells import MISSING, cut
from harness import compare
from harness.core.options import Readings, Statistics
from harness.core.readings import READINGS, Reading, ReadingInputs, RollUp, register
from harness.readings.facets import facet_rollup, select_facets
from harness.readings.retrieval_metrics import BY_FACET, CARD_METRICS
from harness.store.read import open_results
from retrievers import FixedRun

ROOT = Path(__file__).resolve().parents[1]


def dataset() -> Dataset:
    corpus = Corpus(["A", "B", "C", "X"], ["alpha", "beta", "gamma", "chi"])
    ids = [f"q{i}" for i in range(12)]
    queries = Queries(ids, ["x"] * 12, {"kind": ["odd" if i % 2 else "even" for i in range(12)],
                                        "size": [i * 3 for i in range(12)]})
    qrels = Qrels({q: {"A": 2, "C": 1} if i % 2 else {"B": 1} for i, q in enumerate(ids)})
    return Dataset("twelve", corpus, queries, qrels, "<memory>")


SYSTEMS = {"one": FixedRun({f"q{i}": ["B", "X", "A", "C"] for i in range(12)}),
           "two": FixedRun({f"q{i}": ["A", "C", "B", "X"] for i in range(12)})}


def test_the_core_has_no_facet_module_and_the_cells_are_the_queries() -> None:
    assert importlib.util.find_spec("harness.core.facets") is None
    core = sorted(p.name for p in (ROOT / "harness" / "core").glob("*.py") if p.name != "__init__.py")
    assert len(core) <= 15, core  # issue 42: about 15 modules
    queries = dataset().queries
    cells = queries.cells("size", ["q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"])
    assert cells.kind == "quantiles" and cells.labels[0].startswith("q1 [0, ")
    assert cells == cut("size", dict(zip(queries.ids, queries.facets["size"])), cells.cell_of.keys())
    assert queries.cells("kind").cell_of["q3"] == "odd" and queries.cells("kind").labels == ["even", "odd"]
    with_missing = Queries(["a", "b"], ["x", "y"], {"t": ["u", None]})
    assert with_missing.cells("t").labels == ["u", MISSING]


def test_the_queries_cells_refuse_an_unknown_facet_or_query() -> None:
    queries = dataset().queries
    with pytest.raises(UnknownNameError, match="unknown facet 'typo'. Valid: kind, size"):
        queries.cells("typo")
    with pytest.raises(RetbenchError, match="have no facets. Fix: give them in a facets file"):
        Queries(["a"], ["x"]).cells("kind")
    with pytest.raises(ValueError, match="query ids not among the queries"):
        queries.cells("kind", ["q0", "nope"])


def test_the_rollup_and_the_folds_read_the_same_cells() -> None:
    queries = dataset().queries
    (selected,) = select_facets(queries, queries.ids, ["size"])
    assert selected == queries.cells("size", queries.ids)
    from harness.tuning import search

    source = Path(search.__file__).read_text(encoding="utf-8")
    assert "queries.cells(config.stratify" in source and "harness.readings" not in source


def test_the_cards_rollup_is_the_facets_readings_rollup_of_its_per_query_table(tmp_path: Path) -> None:
    assert READINGS["retrieval_metrics_summary"].rollup is BY_FACET
    assert BY_FACET.columns == tuple(CARD_METRICS) and BY_FACET.name in READINGS and BY_FACET.cells in READINGS
    result = compare(SYSTEMS, dataset(), ["mrr"], statistics=Statistics(bootstrap_samples=300, seed=4),
                     readings=Readings(retrieval_k=2))
    card = result.table("retrieval_metrics")
    expected = facet_rollup(card, result.dataset.queries, list(CARD_METRICS), n_samples=300, seed=4)
    pd.testing.assert_frame_equal(result.table(BY_FACET.name), expected)
    assert sorted(set(result.table(BY_FACET.name)["facet"])) == ["kind", "size"]
    cells = result.table(BY_FACET.cells)
    assert list(cells.columns) == ["query_id", "facet", "value"] and len(cells) == 2 * 12
    stored = open_results(result.write(tmp_path / "run")).table(BY_FACET.name)
    assert list(stored["facet"]) == list(expected["facet"]) and list(stored["value"]) == list(expected["value"])
    assert stored["mrr"].tolist() == expected["mrr"].tolist()


def ranks_compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    """An add-on's per-query table: each system's first relevant rank, as a number per query."""
    frame = inputs.per_query[["system", "query_id"]].copy()
    frame["first_rank"] = inputs.per_query["first_relevant_rank"].astype(float).fillna(0.0)
    return {"toy_ranks": frame}


TOY_ROLLUP = RollUp("toy_ranks", ("first_rank",), "toy_ranks_by_facet", "toy_ranks_by_facet.csv", order=120,
                    what="the first relevant rank")
TOY = Reading("toy_ranks_summary", "toy_ranks_summary.csv", ("system",), columns="system, mean first rank",
              compute=lambda inputs: {**ranks_compute(inputs), "toy_ranks_summary": pd.DataFrame(
                  {"system": list(SYSTEMS), "mean": [0.0, 0.0]})}, order=115, rollup=TOY_ROLLUP)


def test_an_add_on_declaring_a_rollup_gets_it_computed_stored_and_not_served(tmp_path: Path, registry) -> None:
    register(TOY)
    derived = READINGS["toy_ranks_by_facet"]
    assert derived.file == "toy_ranks_by_facet.csv" and derived.serve is None  # no entries: not served
    assert derived.columns == "facets.csv's layout over the first relevant rank"
    result = compare(SYSTEMS, dataset(), ["mrr"], statistics=Statistics(bootstrap_samples=200, seed=1),
                     readings=Readings(facets=["kind"], retrieval_k=2))
    expected = facet_rollup(result.table("toy_ranks"), result.dataset.queries, ["first_rank"], names=["kind"],
                            n_samples=200, seed=1)
    pd.testing.assert_frame_equal(result.table("toy_ranks_by_facet"), expected)
    assert list(expected["value"]) == ["even", "even", "odd", "odd"]
    folder = open_results(result.write(tmp_path / "run"))
    stored = folder.table("toy_ranks_by_facet")
    assert list(stored["facet"]) == ["kind"] * 4 and list(stored["n_queries"]) == [6] * 4


def test_a_second_served_rollup_is_refused(registry) -> None:
    second = RollUp("toy_ranks", ("first_rank",), "toy_served", "toy_served.csv", order=121,
                    entries=lambda row: {"firstRank": row["first_rank"]})
    with pytest.raises(ValueError, match="one rollup per facet \\(byFacet\\), reading 'retrieval_metrics_summary'"):
        register(Reading("toy_second", "toy_second.csv", ("system",), order=116, rollup=second))
