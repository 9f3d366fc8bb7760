"""bench serve's evals API and dashboard through FastAPI's test client (issue 15): the numbers served
are the numbers stored, the card's worked example comes back through the API, unknown ids and paths
outside the folder are 404s, writes are 405s, and the dashboard shows the API's numbers."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("fastapi", reason="bench serve needs the serve extra: pip install 'retbench[serve]'")
pytest.importorskip("httpx", reason="FastAPI's test client needs httpx (the test extra)")

from fastapi.testclient import TestClient  # noqa: E402

from corpora import Corpus, Dataset, Qrels, Queries  # noqa: E402
from harness import compare  # noqa: E402
from harness.cli import main  # noqa: E402
from harness.readings.retrieval_metrics import CARD_METRICS  # noqa: E402
from harness.serve.app import create_app  # noqa: E402
from retrievers import FixedRun  # noqa: E402
from harness.core.options import Readings, Statistics

API = "/api/v1/evals"
LOCAL = "http://127.0.0.1:8000"  # the test client's own host, testserver, is not one bench serve answers to
CARD = list(CARD_METRICS)
METRICS = "recall@10,precision@10,ndcg_exp@10,mrr,hit@10"  # the card's five under the registry's names
BILLING = {"q01", "q02", "q07", "q11", "q14"}


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Path:
    """A folder holding one results folder of the bundled corpus (four systems, a topic facet)."""
    from click.testing import CliRunner

    root = tmp_path_factory.mktemp("served")
    topics = root.parent / "topics.csv"
    topics.write_text("query_id,topic\n" + "".join(
        f"q{i:02d},{'billing' if f'q{i:02d}' in BILLING else 'other'}\n" for i in range(1, 15)))
    result = CliRunner().invoke(main, ["compare", "--metrics", METRICS, "--facets-file", str(topics), "--no-cache",
                                       "-q", "--out", str(root), "--bootstrap-samples", "500"])
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture(scope="module")
def client(served: Path) -> TestClient:
    return TestClient(create_app(served), base_url=LOCAL)


def only_run(served: Path) -> Path:
    (folder,) = [p for p in served.iterdir() if p.is_dir()]
    return folder


def table(path: Path) -> pd.DataFrame:
    """A CSV file as written: ids as text, numbers through Python's float (exact for any repr)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in frame.columns:
        try:
            frame[column] = [float(v) if v else math.nan for v in frame[column]]
        except ValueError:
            pass  # a text column
    return frame


def stored_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "retrieval_metrics.jsonl").read_text().splitlines()]


def test_metrics_are_the_stored_lines_and_the_summary_means(client: TestClient, served: Path) -> None:
    folder = only_run(served)
    answer = client.get(f"{API}/runs/{folder.name}/metrics")
    assert answer.status_code == 200
    body = answer.json()
    assert body["defaultRetrievalK"] == 10 and body["runId"] == folder.name
    assert body["metricNames"] == dict(zip(CARD, METRICS.split(",")))
    summary = table(folder / "summary.csv").set_index("system")
    rollup = table(folder / "retrieval_metrics_summary.csv").set_index("system")
    lines = stored_lines(folder)
    assert [s["system"] for s in body["systems"]] == ["bm25", "lsa", "weighted", "rrf"]
    for system in body["systems"]:
        label, served_values = system["system"], system["retrievalMetrics"]
        mine = [x["retrievalMetrics"] for x in lines if x["system"] == label]
        assert system["nQueries"] == len(mine) == 14
        for card, metric in zip(CARD, METRICS.split(",")):
            assert served_values[card] == math.fsum(m[card] for m in mine) / 14  # the stored lines' mean
            assert served_values[card] == summary.loc[label, metric]  # summary.csv's mean, to the bit
            assert system["intervals"][card] == {"low": rollup.loc[label, f"{card}_ci_low"],
                                                 "high": rollup.loc[label, f"{card}_ci_high"]}
        assert served_values["ndcgAt10"] == summary.loc[label, "ndcg_exp@10"]


def test_results_are_the_stored_lines_paged_and_filtered(client: TestClient, served: Path) -> None:
    folder = only_run(served)
    lines = stored_lines(folder)
    per_query = table(folder / "per_query.csv")
    every = client.get(f"{API}/runs/{folder.name}/results", params={"limit": 1000}).json()
    assert every["total"] == len(lines) == 56
    for item, line, (_, row) in zip(every["items"], lines, per_query.iterrows()):
        assert {k: item[k] for k in line} == line  # the stored object, unchanged
        assert item["retrievalMetrics"]["ndcgAt10"] == row["ndcg_exp@10"]
        rank = None if pd.isna(row["first_relevant_rank"]) else int(row["first_relevant_rank"])
        assert item["firstRelevantRank"] == rank
    page = client.get(f"{API}/runs/{folder.name}/results", params={"offset": 50, "limit": 4}).json()
    assert (page["total"], page["offset"], page["limit"]) == (56, 50, 4)
    assert [i["resultId"] for i in page["items"]] == [x["resultId"] for x in lines[50:54]]
    lsa = client.get(f"{API}/runs/{folder.name}/results", params={"system": "lsa"}).json()
    assert lsa["total"] == 14 and {i["system"] for i in lsa["items"]} == {"lsa"}
    q02 = client.get(f"{API}/runs/{folder.name}/results", params={"query": "q02", "system": "bm25"}).json()
    (item,) = q02["items"]
    assert item["diagnosis"]["category"] == "vocabulary gap" and item["firstRelevantRank"] is None
    billing = client.get(f"{API}/runs/{folder.name}/results", params={"facet": "topic:billing", "limit": 1000}).json()
    assert billing["total"] == 4 * 5 and {i["queryId"] for i in billing["items"]} == BILLING
    assert all(i["facets"] == {"topic": "billing"} for i in billing["items"])
    bad = client.get(f"{API}/runs/{folder.name}/results", params={"facet": "topic"})
    assert bad.status_code == 400 and "NAME:VALUE" in bad.json()["detail"]
    assert client.get(f"{API}/runs/{folder.name}/results", params={"limit": 0}).status_code == 422


def test_facets_risk_coverage_and_comparisons_are_the_stored_files(client: TestClient, served: Path) -> None:
    folder = only_run(served)
    body = client.get(f"{API}/runs/{folder.name}/metrics").json()
    facets = table(folder / "retrieval_metrics_facets.csv")
    risk = table(folder / "risk_coverage_summary.csv").set_index("system")
    curve = table(folder / "risk_coverage.csv")
    for system in body["systems"]:
        label = system["system"]
        mine = facets[facets["system"] == label]
        assert [(c["facet"], c["value"], c["nQueries"]) for c in system["byFacet"]] == \
            list(zip(mine["facet"], mine["value"], mine["n_queries"]))
        for cell, (_, row) in zip(system["byFacet"], mine.iterrows()):
            assert [cell["retrievalMetrics"][c] for c in CARD] == [row[c] for c in CARD]
        served_risk = system["riskCoverage"]
        assert (served_risk["aurc"], served_risk["eAurc"], served_risk["oracleAurc"]) == \
            (risk.loc[label, "aurc"], risk.loc[label, "e_aurc"], risk.loc[label, "oracle_aurc"])
        points = curve[curve["system"] == label]
        assert served_risk["curve"]["coverage"] == points["coverage"].tolist()
        assert served_risk["curve"]["risk"] == points["risk"].tolist()
    comparisons = client.get(f"{API}/runs/{folder.name}/comparisons").json()["comparisons"]
    stored = table(folder / "comparisons.csv")
    assert [(c["systemA"], c["systemB"], c["metric"], c["meanDiff"], c["verdict"]) for c in comparisons] == \
        list(zip(stored["system_a"], stored["system_b"], stored["metric"], stored["mean_diff"], stored["verdict"]))


def test_the_cards_worked_example_through_the_api(tmp_path: Path) -> None:
    corpus = Corpus(["A", "B", "C", "X"], ["alpha", "beta", "gamma", "chi"])
    dataset = Dataset("card", corpus, Queries(["q1"], ["which chunks"]), Qrels({"q1": {"A": 3, "B": 2, "C": 1}}),
                      "<memory>")
    folder = compare({"fixed": FixedRun({"q1": ["B", "X", "A", "C"]})}, dataset, ["mrr"],
                     readings=Readings(retrieval_k=4), statistics=Statistics(bootstrap_samples=50)).write(tmp_path)
    client = TestClient(create_app(tmp_path), base_url=LOCAL)
    body = client.get(f"{API}/runs/{folder.name}/metrics").json()
    assert body["defaultRetrievalK"] == 4
    (system,) = body["systems"]
    served = system["retrievalMetrics"]
    # the card: nDCG@4 0.738, recall@4 1.00, precision@4 0.75, hit@4 1, MRR 1.00
    assert (round(served["ndcgAt10"], 3), round(served["recallAtK"], 2), round(served["precisionAtK"], 2),
            served["hitAtK"], round(served["mrr"], 2)) == (0.738, 1.00, 0.75, 1, 1.00)
    (item,) = client.get(f"{API}/runs/{folder.name}/results").json()["items"]
    assert item["retrievalMetrics"] == {"recallAtK": 1.0, "precisionAtK": 0.75, "ndcgAt10": served["ndcgAt10"],
                                        "mrr": 1.0, "hitAtK": 1}


def test_the_runs_are_listed_again_on_every_request(tmp_path: Path, served: Path) -> None:
    client = TestClient(create_app(tmp_path), base_url=LOCAL)
    assert client.get(f"{API}/runs").json() == {"total": 0, "offset": 0, "limit": 50, "items": []}
    source = only_run(served)
    for name in ("20240101-000000-article-aaaaaaaa", "20250101-000000-article-bbbbbbbb"):
        shutil.copytree(source, tmp_path / name)
    (tmp_path / ".staging-0000-1-x").mkdir()  # a run being written is not a run yet
    shutil.copy(source / "manifest.json", tmp_path / ".staging-0000-1-x" / "manifest.json")
    listed = client.get(f"{API}/runs").json()
    assert listed["total"] == 2
    manifest = json.loads((source / "manifest.json").read_text())
    first = listed["items"][0]  # same time: the later id first
    assert first == {"id": "20250101-000000-article-bbbbbbbb", "time": manifest["time"], "corpus": "article",
                     "queries": 14, "systems": ["bm25", "lsa", "weighted", "rrf"], "metrics": METRICS.split(","),
                     "defaultRetrievalK": 10}
    assert client.get(f"{API}/runs", params={"offset": 1, "limit": 1}).json()["items"][0]["id"] == \
        "20240101-000000-article-aaaaaaaa"
    assert client.get(f"{API}/runs/{first['id']}").json() == manifest
    # a folder made before the card was stored is listed; its metrics say why they are missing
    old = tmp_path / "20230101-000000-article-cccccccc"
    shutil.copytree(source, old)
    stale = json.loads((old / "manifest.json").read_text())
    del stale["retrieval_metrics"]
    (old / "manifest.json").write_text(json.dumps(stale))
    assert client.get(f"{API}/runs").json()["total"] == 3
    missing = client.get(f"{API}/runs/{old.name}/metrics")
    assert missing.status_code == 404 and "before the metrics card was stored" in missing.json()["detail"]
    # a bench tune folder beside them is not an eval run: it is not listed, and its id answers 404
    tune = tmp_path / "20260101-000000-article-tune-dddddddd"
    shutil.copytree(source, tune)
    (tune / "manifest.json").write_text(json.dumps({**manifest, "kind": "tune"}))
    assert tune.name not in [run["id"] for run in client.get(f"{API}/runs").json()["items"]]
    assert client.get(f"{API}/runs/{tune.name}/metrics").status_code == 404


def test_unknown_ids_and_paths_outside_the_folder_are_404(tmp_path: Path, served: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    shutil.copytree(only_run(served), root / "run")
    shutil.copytree(only_run(served), tmp_path / "outside")  # a results folder beside, not under, the root
    (root / "linked").symlink_to(tmp_path / "outside")  # a link leads out: never listed
    client = TestClient(create_app(root), base_url=LOCAL)
    assert [r["id"] for r in client.get(f"{API}/runs").json()["items"]] == ["run"]
    attempts = ["nope", "..", "%2e%2e", "..%2Foutside", "%2E%2E%2Foutside", "linked", "%2Ftmp", "run%2F..",
                "..%5Coutside", "%2F" + str(tmp_path / "outside").lstrip("/").replace("/", "%2F")]
    for attempt in attempts:
        for tail in ("", "/metrics", "/results", "/comparisons"):
            answer = client.get(f"{API}/runs/{attempt}{tail}")
            assert answer.status_code == 404, (attempt, tail)
            assert answer.headers["content-type"].startswith("application/json")
            assert "detail" in answer.json() and '"run_id"' not in answer.text
    assert client.get(f"{API}/runs/run/metrics").status_code == 200


def test_every_write_method_is_405(client: TestClient, served: Path) -> None:
    folder = only_run(served)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in folder.rglob("*"))
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        for path in (f"{API}/runs", f"{API}/runs/{folder.name}", f"{API}/runs/{folder.name}/metrics", "/", "/anything"):
            answer = client.request(method, path, json={"x": 1})
            assert answer.status_code == 405, (method, path)
            assert answer.headers["allow"] == "GET, HEAD" and "read-only" in answer.json()["detail"]
    assert sorted((p.name, p.stat().st_mtime_ns) for p in folder.rglob("*")) == before


def test_the_dashboard_shows_the_apis_numbers_without_scripts_or_external_assets(client: TestClient,
                                                                                  served: Path) -> None:
    folder = only_run(served)
    listing = client.get("/")
    assert listing.status_code == 200 and f'href="/runs/{folder.name}"' in listing.text
    page = client.get(f"/runs/{folder.name}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "<script" not in html and not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html)
    assert "http://" not in html and "https://" not in html and "@import" not in html
    metrics = client.get(f"{API}/runs/{folder.name}/metrics").json()
    for system in metrics["systems"]:
        card = re.search(rf'<section class="card" data-system="{re.escape(system["system"])}">(.*?)</section>', html)
        assert card is not None, system["system"]
        for name in CARD:
            value = system["retrievalMetrics"][name]
            shown = re.search(rf'data-metric="{name}" data-value="([^"]+)">([0-9.]+) ', card.group(1))
            assert shown is not None and float(shown.group(1)) == value and shown.group(2) == f"{value:.3f}"
    assert "<svg" in html and "Risk–coverage" in html
    assert "too few differing queries to tell" in html  # the comparisons' verdicts
    assert "vocabulary gap" in html  # the per-query table's diagnosis
    assert "billing" in html  # the facet rollups
    assert client.get("/runs/nope").status_code == 404
