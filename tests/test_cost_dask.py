"""A system run on a Dask engine reports its workers' times apart from the client's (issue 44, item 1):
efficiency.csv's worker columns and the manifest's ``cost.workers``, on a LocalCluster of 2 worker
processes as tests/test_engine_dask.py runs it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed: pip install 'retbench[dask]'")

from harness import compare  # noqa: E402
from harness.core.options import RunOptions  # noqa: E402
from harness.engines import DaskEngine  # noqa: E402
from harness.readings.cost import WORKER_COLUMNS  # noqa: E402

METRICS = ["ndcg@5"]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as connected:
        yield connected


@pytest.fixture(scope="module")
def dask_folder(client, tmp_path_factory):
    result = compare("bm25,lsa,rrf(bm25,lsa),weighted(bm25,lsa,alpha=0.3)", "article", METRICS,
                     run=RunOptions(engine=DaskEngine(client=client), latency_queries=4, latency_rounds=1))
    return result.write(tmp_path_factory.mktemp("dask"))


def frame(folder) -> pd.DataFrame:
    return pd.read_csv(folder / "efficiency.csv", keep_default_na=False, na_values=[""]).set_index("system")


def test_systems_on_the_workers_report_the_workers_fit_and_search_apart_from_the_client(dask_folder) -> None:
    table = frame(dask_folder)
    for system in ("bm25", "lsa"):  # bm25 in shards on both workers, lsa whole on one
        row = table.loc[system]
        assert row[WORKER_COLUMNS].notna().all(), row
        for step in ("fit", "search"):
            summed, slowest = row[f"worker_{step}_seconds"], row[f"worker_{step}_slowest_seconds"]
            assert 0 < slowest <= summed
    # lsa is fitted whole on one worker: its slowest worker did all of its fit
    assert table.loc["lsa", "worker_fit_slowest_seconds"] == table.loc["lsa", "worker_fit_seconds"]
    # the client's fit waited on the workers' compute and more (sending, scheduling, collecting)
    assert table.loc["lsa", "fit_seconds"] >= table.loc["lsa", "worker_fit_slowest_seconds"]


def test_a_fusion_on_the_client_includes_its_childrens_worker_times(dask_folder) -> None:
    table = frame(dask_folder)
    fusions = [system for system in table.index if system not in ("bm25", "lsa")]
    assert len(fusions) == 2
    for fusion in fusions:
        assert table.loc[fusion, "includes"] == "bm25;lsa"
        fitted = table.loc[fusion, "worker_fit_seconds"]
        assert fitted == pytest.approx(table.loc["bm25", "worker_fit_seconds"] + table.loc["lsa", "worker_fit_seconds"])


def test_the_manifest_says_how_the_workers_times_were_measured(dask_folder) -> None:
    cost = json.loads((dask_folder / "manifest.json").read_text())["cost"]
    assert "task stream" in cost["workers"] and "client's wall time" in cost["workers"]
    assert cost["machine"]["engine"]["name"] == "dask"


def test_a_local_run_has_no_worker_times(tmp_path) -> None:
    folder = compare("bm25", "article", METRICS, run=RunOptions(latency_queries=0)).write(tmp_path)
    table = frame(folder)
    assert table[WORKER_COLUMNS].isna().all().all()
    assert "workers" not in json.loads((folder / "manifest.json").read_text())["cost"]
