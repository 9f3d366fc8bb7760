"""The FastAPI application of ``bench serve``: the evals API under ``/api/v1/evals`` and the dashboard at ``/``.

Answers only to its own names: a request whose ``Host`` header is not a loopback name, nor one of
``allowed_hosts``, is answered 400 before anything else, whatever the method and path, so a page on
another site cannot read the runs through DNS rebinding (:class:`harness.web.guards.HostCheck`).

Read-only: every method but GET and HEAD is answered 405 with an ``Allow: GET, HEAD`` header,
whatever the path; HEAD is answered wherever GET is, with GET's status and headers and no body. An
unknown run, or a run without the file an answer needs, is a 404 whose JSON ``detail`` says what and
how to fix it, naming files relative to the served folder. Swagger's pages are not served (they load
their scripts from a CDN); ``/openapi.json`` is.

Endpoints (``{id}`` is a run id, a results folder's name)
    ``GET /api/v1/evals/runs`` runs, newest first, paged (``offset``, ``limit``);
    ``GET /api/v1/evals/runs/{id}`` the manifest;
    ``GET /api/v1/evals/runs/{id}/metrics`` per system the card's means with intervals, the facet
    rollups and the entry of each registered reading with a part in it (:mod:`harness.readings`:
    ``riskCoverage``), and ``defaultRetrievalK``;
    ``GET /api/v1/evals/runs/{id}/results`` the per-result objects, paged, filtered by ``system``,
    ``query`` and ``facet`` (``NAME:VALUE``);
    ``GET /api/v1/evals/runs/{id}/comparisons`` the paired comparisons with their verdicts;
    ``GET /api/v1/evals/runs/{id}/readings`` the readings the run holds (the registry's,
    :data:`harness.core.readings.READINGS`), and ``.../readings/{name}`` one reading's rows as stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import metadata
from os import PathLike
from typing import Any

from fastapi import FastAPI, Query
from fastapi.responses import HTMLResponse, JSONResponse, Response

from harness.core.readings import served
from harness.serve import dashboard
from harness.serve.schema import (ComparisonsResponse, Message, MetricsResponse, ReadingResponse, ReadingsResponse,
                                  ResultsPage, RunsPage)
from harness.serve.store import NotStored, RunStore, UnknownReading, UnknownRun, dumps, facet_filter
from harness.web.guards import HostCheck
from harness.web.hosts import AllowedHosts

__all__ = ["API", "MAX_LIMIT", "create_app"]

API = "/api/v1/evals"
#: The largest page a request may ask for.
MAX_LIMIT = 1000
_READ_METHODS = {"GET", "HEAD"}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Message, "description": "no such run, or it lacks the file"}}


class ReadOnly:
    """ASGI middleware: any method that is not a read gets 405 before routing; HEAD is answered as GET
    is, with the body left out (so HEAD is allowed wherever GET is, and only there)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method not in _READ_METHODS:
            response = JSONResponse({"detail": f"bench serve is read-only: {method} is not allowed. Fix: use GET"},
                                    status_code=405, headers={"Allow": "GET, HEAD"})
            await response(scope, receive, send)
            return
        if method == "HEAD":
            async def headers_only(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.body":
                    message = {**message, "body": b""}  # GET's headers, Content-Length included; no body
                await send(message)

            await self.app({**scope, "method": "GET"}, receive, headers_only)
            return
        await self.app(scope, receive, send)


def _not_answered(shown: str) -> str:
    return (f"bench serve does not answer to {shown}: it answers to loopback names (localhost, 127.0.0.1, [::1]) "
            "and the names it was given. Fix: open it at http://127.0.0.1:PORT/, or allow the name where it is "
            "started (bench serve --allowed-host NAME)")


def _version() -> str:
    try:
        return metadata.version("retbench")
    except metadata.PackageNotFoundError:
        return "unknown"


def _json(answer: Any) -> Response:
    return Response(content=answer if isinstance(answer, bytes) else dumps(answer), media_type="application/json")


def _page(items: list[Any], offset: int, limit: int) -> dict[str, Any]:
    return {"total": len(items), "offset": offset, "limit": limit, "items": items[offset:offset + limit]}


def create_app(results: str | PathLike[str], allowed_hosts: Iterable[str] = (), *,
               accept_edited: bool = False, explain: Callable[[str], str] | None = None) -> FastAPI:
    """The application serving the results folders under ``results`` (listed again on every request).

    It answers requests whose ``Host`` is a loopback name or one of ``allowed_hosts`` (names or
    addresses, any port; :func:`harness.web.hosts.host_name` says which are valid, and raises
    ``ValueError`` for one that is not); any other is answered 400. ``accept_edited`` serves a file
    edited since it was written, with a warning, instead of refusing it
    (:func:`harness.store.read.open_results`). ``explain`` rewrites the text of a run's error before
    it is served (``bench serve`` turns ```accept_edited=True``` into its own flag).
    """
    hosts = AllowedHosts(allowed_hosts)
    store = RunStore(results, accept_edited=accept_edited, explain=explain)
    app = FastAPI(title="retbench evals API", version=_version(), docs_url=None, redoc_url=None,
                  description="The metrics card's numbers, rolled up per run and per query facet, and every "
                              "served reading, read-only over bench compare's results folders. Numbers are served "
                              "as stored.")
    app.add_middleware(ReadOnly)
    # added last, so it runs first: before ReadOnly's 405
    app.add_middleware(HostCheck, hosts=hosts, explain=_not_answered)

    @app.exception_handler(UnknownReading)
    @app.exception_handler(UnknownRun)
    @app.exception_handler(NotStored)
    async def not_found(request: Any, exc: LookupError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.get(f"{API}/runs", response_model=RunsPage, summary="The runs, newest first")
    def runs(offset: int = Query(0, ge=0), limit: int = Query(50, ge=1, le=MAX_LIMIT)) -> Response:
        return _json(_page(store.runs(), offset, limit))

    @app.get(f"{API}/runs/{{run_id}}", response_model=dict[str, Any], responses=_NOT_FOUND,
             summary="The run's manifest")
    def manifest(run_id: str) -> Response:
        return _json(store.manifest(run_id))

    @app.get(f"{API}/runs/{{run_id}}/metrics", response_model=MetricsResponse, responses=_NOT_FOUND,
             summary=", ".join(reading.serve.describe or reading.heading.lower() for reading in served()
                               if reading.serve.value is not None))
    def metrics(run_id: str) -> Response:
        return _json(store.metrics_json(run_id))

    @app.get(f"{API}/runs/{{run_id}}/results", response_model=ResultsPage,
             responses={**_NOT_FOUND, 400: {"model": Message, "description": "a facet filter that is not NAME:VALUE"}},
             summary="The per-result objects, paged and filtered")
    def results(run_id: str, offset: int = Query(0, ge=0), limit: int = Query(100, ge=1, le=MAX_LIMIT),
                system: str | None = Query(None, description="a system label"),
                query: str | None = Query(None, description="a query id"),
                facet: str | None = Query(None, description="NAME:VALUE, e.g. topic:billing")) -> Response:
        items = store.results(run_id)
        if facet is not None:
            try:
                name, value = facet_filter(facet)
            except ValueError as exc:
                return JSONResponse({"detail": str(exc)}, status_code=400)
            items = [i for i in items if i["facets"].get(name) == value]
        if system is not None:
            items = [i for i in items if i["system"] == system]
        if query is not None:
            items = [i for i in items if i["queryId"] == query]
        return _json(_page(items, offset, limit))

    @app.get(f"{API}/runs/{{run_id}}/comparisons", response_model=ComparisonsResponse, responses=_NOT_FOUND,
             summary="The paired comparisons with their verdicts")
    def comparisons(run_id: str) -> Response:
        return _json({"runId": run_id, "comparisons": store.comparisons(run_id)})

    @app.get(f"{API}/runs/{{run_id}}/readings", response_model=ReadingsResponse, responses=_NOT_FOUND,
             summary="The readings the run holds: name, file, columns")
    def readings(run_id: str) -> Response:
        return _json({"runId": run_id, "readings": store.readings(run_id)})

    @app.get(f"{API}/runs/{{run_id}}/readings/{{name}}", response_model=ReadingResponse, responses=_NOT_FOUND,
             summary="One reading's rows, as stored")
    def reading(run_id: str, name: str) -> Response:
        return _json({"runId": run_id, "reading": name, "rows": store.reading(run_id, name)})

    @app.get(f"{API}/suites", response_model=dict[str, Any], summary="The suites (several collections), newest first")
    def suites(offset: int = Query(0, ge=0), limit: int = Query(50, ge=1, le=MAX_LIMIT)) -> Response:
        return _json(_page(store.suites(), offset, limit))

    @app.get(f"{API}/suites/{{suite_id}}", response_model=dict[str, Any], responses=_NOT_FOUND,
             summary="A suite: collections, per-collection and macro means, macro comparisons, macro readings")
    def suite(suite_id: str) -> Response:
        return _json(store.suite(suite_id))

    @app.get("/suites", response_class=HTMLResponse, include_in_schema=False)
    def suites_page() -> HTMLResponse:
        return HTMLResponse(dashboard.suites_page(store.suites()))

    @app.get("/suites/{suite_id}", response_class=HTMLResponse, include_in_schema=False)
    def suite_page(suite_id: str) -> HTMLResponse:
        try:
            return HTMLResponse(store.suite_html(suite_id))
        except (UnknownRun, NotStored) as exc:
            return HTMLResponse(dashboard.missing_page(str(exc)), status_code=404)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def runs_page(offset: int = Query(0, ge=0)) -> HTMLResponse:
        return HTMLResponse(dashboard.runs_page(store.runs(), offset))

    @app.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
    def run_page(run_id: str, offset: int = Query(0, ge=0), system: str | None = None) -> HTMLResponse:
        try:
            page = dashboard.run_page(store, run_id, offset, system)
        except (UnknownRun, NotStored) as exc:
            return HTMLResponse(dashboard.missing_page(str(exc)), status_code=404)
        return HTMLResponse(page)

    return app
