"""schemathesis against bench serve's /openapi.json (issue 15): generated requests to every API
operation, each answer checked against the documented status codes and response schemas. Examples
are bounded (``max_examples``) and derandomised, so the run is short and the same every time."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="bench serve needs the serve extra: pip install 'retbench[serve]'")
schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is in the test extra")

from hypothesis import HealthCheck, given, settings  # noqa: E402

from corpora import Corpus, Dataset, Qrels, Queries  # noqa: E402
from harness import compare  # noqa: E402
from harness.serve.app import create_app  # noqa: E402
from retrievers import FixedRun  # noqa: E402
from harness.core.options import Readings, Statistics



def _served(root: Path) -> Path:
    """A results folder with a facet, a failed query and every file the API reads."""
    corpus = Corpus(["A", "B", "C", "X"], ["alpha", "beta", "gamma", "chi"])
    queries = Queries(["q1", "q2", "q3"], ["a", "b", "c"], facets={"kind": ["x", "y", "x"]})
    qrels = Qrels({"q1": {"A": 3, "B": 2, "C": 1}, "q2": {"B": 1}, "q3": {"C": 2}})
    runs = {"q1": ["B", "X", "A", "C"], "q2": ["X"], "q3": ["C"]}
    compare({"fixed": FixedRun(runs), "other": FixedRun({"q1": ["A"], "q3": ["X", "C"]})}, Dataset("schema", corpus,
            queries, qrels, "<memory>"), ["mrr"], readings=Readings(retrieval_k=4),
            statistics=Statistics(bootstrap_samples=50)).write(root)
    return root


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    # schemathesis and the test client address the app as "testserver": allowed here, as --allowed-host would
    return create_app(_served(tmp_path_factory.mktemp("schema")), allowed_hosts=["testserver"])


def operations(app) -> list:
    """Every operation /openapi.json documents (a schema it cannot read fails here)."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    return [result.ok() for result in schema.get_all_operations()]


def test_the_schema_documents_the_nine_operations(app) -> None:
    paths = sorted(f"{op.method.upper()} {op.path}" for op in operations(app))
    assert paths == ["GET /api/v1/evals/runs", "GET /api/v1/evals/runs/{run_id}",
                     "GET /api/v1/evals/runs/{run_id}/comparisons", "GET /api/v1/evals/runs/{run_id}/metrics",
                     "GET /api/v1/evals/runs/{run_id}/readings", "GET /api/v1/evals/runs/{run_id}/readings/{name}",
                     "GET /api/v1/evals/runs/{run_id}/results", "GET /api/v1/evals/suites",
                     "GET /api/v1/evals/suites/{suite_id}"]


def test_every_operation_answers_as_documented(app) -> None:
    # schemathesis's own pytest plugin does not load under this pytest, so each operation's strategy
    # is driven by hypothesis here: the same generated cases and the same checks
    checked = 0
    for operation in operations(app):
        @given(case=operation.as_strategy())
        @settings(max_examples=25, derandomize=True, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        def answers_as_documented(case) -> None:
            case.call_and_validate()

        answers_as_documented()
        checked += 1
    assert checked == 9


def test_the_stored_run_answers_as_documented(app) -> None:
    """Generated run ids are unknown ones (404); the real run's answers are checked against the schema too."""
    from fastapi.testclient import TestClient

    (run_id,) = [run["id"] for run in TestClient(app).get("/api/v1/evals/runs").json()["items"]]
    statuses = []
    for operation in operations(app):
        if "{run_id}" in operation.path:
            parameters = {"run_id": run_id, **({"name": "leaderboard"} if "{name}" in operation.path else {})}
            response = operation.Case(path_parameters=parameters).call_and_validate()
            statuses.append(response.status_code)
    assert statuses == [200] * 6
