"""Issue 42, item 3 (the metrics card through the registry): an add-on reading with a ``ServeView``
reaches ``/metrics``, the list of runs and the dashboard as the card does, without the server naming
it; a reading's ``files`` are written and hashed beside the manifest, its ``resampled`` columns
bound the bootstrap check, its ``check`` runs before anything is fitted; the card's own entries are
the same with or without an add-on beside them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import harness.readings  # noqa: F401 - the built-in readings, registered before a fixture copies the registry
from corpora import Corpus, Dataset, Qrels, Queries, RetbenchError
from harness import compare
from harness.core.api import bootstrap_columns
from harness.core.options import Readings, Statistics
from harness.core.readings import Reading, ReadingInputs, ServeView, register, served
from harness.readings.retrieval_metrics import CARD_METRICS, RESULTS_FILE
from harness.store.folder import FILES_KEY, file_hash
from retrievers import FixedRun

API = "/api/v1/evals"
LOCAL = "http://127.0.0.1:8000"


def dataset() -> Dataset:
    corpus = Corpus(["A", "B", "C", "X"], ["alpha", "beta", "gamma", "chi"])
    queries = Queries([f"q{i}" for i in range(6)], ["x"] * 6)
    qrels = Qrels({f"q{i}": {"A": 2, "C": 1} if i % 2 else {"B": 1} for i in range(6)})
    return Dataset("six", corpus, queries, qrels, "<memory>")


SYSTEMS = {"one": FixedRun({f"q{i}": ["B", "X", "A", "C"] for i in range(6)}),
           "two": FixedRun({f"q{i}": ["A", "C", "B", "X"] for i in range(6)})}


def depth_compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    """Per system, how many queries the judgments hold (the inputs carry the qrels now)."""
    assert inputs.qrels is not None
    rows = [[s.label, len(inputs.queries), sum(len(inputs.qrels[q]) for q in inputs.queries.ids)]
            for s in inputs.systems]
    return {"judged_depth": pd.DataFrame(rows, columns=["system", "n_queries", "judged"])}


def depth_value(folder, system: str) -> dict | None:
    table = folder.table("judged_depth")
    mine = table[table["system"] == system]
    return None if mine.empty else {"judged_total": int(mine["judged"].iloc[0])}


def depth_model() -> type:
    from pydantic import BaseModel

    class JudgedDepth(BaseModel):
        judgedTotal: int

    return JudgedDepth


def depth_page(metrics, number, chart) -> str:
    totals = ", ".join(f"{s['system']}={s['judgedDepth']['judgedTotal']}" for s in metrics["systems"])
    return f'<h2 id="judged-depth">Judged depth</h2><p>{totals}</p>'


ADD_ON = Reading("judged_depth", "judged_depth.csv", ("system",), ("n_queries", "judged"),
                 columns="system, n_queries, judged", compute=depth_compute,
                 files=lambda record, run_id, hashes: {"judged_depth.txt": f"{run_id}\n"},
                 resampled=lambda n_systems, n_metrics: 1000 * n_systems,
                 serve=ServeView("judgedDepth", depth_value, depth_model, depth_page,
                                 run=lambda folder: {"judgedNote": "judgments per evaluated query, summed"}))



def write(tmp_path: Path, name: str) -> Path:
    result = compare(SYSTEMS, dataset(), ["mrr"], statistics=Statistics(bootstrap_samples=200),
                     readings=Readings(retrieval_k=2))
    return result.write(tmp_path / name)


def test_the_card_is_served_first_and_the_server_names_no_reading() -> None:
    views = served()
    assert views[0].name == "retrieval_metrics_summary" and views[0].serve.key == ""
    assert views[0].serve.results is not None and views[0].serve.results.columns == tuple(CARD_METRICS)
    for module in ("app", "dashboard", "schema", "store"):
        source = (Path(harness.readings.__file__).parents[1] / "serve" / f"{module}.py").read_text(encoding="utf-8")
        assert "CARD_METRICS" not in source and "harness.readings.retrieval_metrics" not in source


def test_an_add_on_with_a_serve_view_reaches_metrics_and_the_dashboard(tmp_path: Path, registry) -> None:
    pytest.importorskip("fastapi", reason="bench serve needs the serve extra: pip install 'retbench[serve]'")
    pytest.importorskip("httpx", reason="FastAPI's test client needs httpx (the test extra)")
    from fastapi.testclient import TestClient

    from harness.serve.app import create_app

    plain = write(tmp_path / "plain", "run")
    without = TestClient(create_app(plain), base_url=LOCAL).get(f"{API}/runs/{plain.name}/metrics").json()
    register(ADD_ON)
    added = write(tmp_path / "added", "run")
    with_add_on = TestClient(create_app(added), base_url=LOCAL).get(f"{API}/runs/{added.name}/metrics").json()
    # the add-on's entries: its run entry beside the card's, and one per system after the card's
    assert with_add_on["judgedNote"] == "judgments per evaluated query, summed"
    assert [s["judgedDepth"] for s in with_add_on["systems"]] == [{"judgedTotal": 9}, {"judgedTotal": 9}]
    assert list(with_add_on["systems"][0])[:6] == ["system", "nQueries", "retrievalMetrics", "intervals", "byFacet",
                                                    "riskCoverage"]
    # the card's entries are the same with the add-on beside them (the run id and this run's measured cost aside)
    for answer in (with_add_on, without):
        answer.pop("runId")
        answer.pop("judgedNote", None)
        for system in answer["systems"]:
            system.pop("judgedDepth", None)
            assert system.pop("cost")["fitSeconds"] >= 0
    assert with_add_on == without
    page = TestClient(create_app(added), base_url=LOCAL).get(f"/runs/{added.name}").text
    assert '<h2 id="judged-depth">Judged depth</h2><p>one=9, two=9</p>' in page
    assert page.index('id="retrieval-metrics"') < page.index('id="judged-depth"') < page.index('id="comparisons"')
    # the card's facet rollups keep their place, after risk–coverage (a section-only view of its own)
    assert page.index('id="risk-coverage"') < page.index('id="facets"') < page.index('id="judged-depth"')


def test_a_readings_files_are_written_beside_the_manifest_and_hashed(tmp_path: Path, registry) -> None:
    register(ADD_ON)
    folder = write(tmp_path, "run")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert (folder / "judged_depth.txt").read_text(encoding="utf-8") == f"{manifest['run_id']}\n"
    assert manifest[FILES_KEY]["judged_depth.txt"] == file_hash(folder / "judged_depth.txt")
    assert manifest[FILES_KEY][RESULTS_FILE] == file_hash(folder / RESULTS_FILE)  # the card's, the same way


def test_resampled_columns_bound_the_bootstrap_check(registry) -> None:
    assert bootstrap_columns(3, 1) == 3 * len(CARD_METRICS)  # the card's rollup: every system on five names
    register(ADD_ON)
    assert bootstrap_columns(3, 1) == 3000


def test_a_readings_check_runs_before_anything_is_fitted(registry) -> None:
    fitted = []

    def refuse(config, data) -> None:
        raise RetbenchError("the add-on cannot read this dataset. Fix: none")

    class Watching(FixedRun):
        def fit(self, corpus):
            fitted.append(corpus)
            return super().fit(corpus)

    register(Reading("refusing", "refusing.csv", ("system",), check=refuse))
    with pytest.raises(RetbenchError, match="add-on cannot read"):
        compare({"w": Watching({"q0": ["A"]})}, dataset(), ["mrr"], statistics=Statistics(bootstrap_samples=50))
    assert fitted == []


def test_the_card_is_a_table_of_the_comparison() -> None:
    result = compare(SYSTEMS, dataset(), ["mrr"], statistics=Statistics(bootstrap_samples=50),
                     readings=Readings(retrieval_k=2))
    card = result.table("retrieval_metrics")
    assert list(card.columns) == ["system", "query_id", *CARD_METRICS]
    assert len(card) == 12
    assert list(result.retrieval_metrics_summary["system"]) == ["one", "two"]
