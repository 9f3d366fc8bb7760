"""docs/adding-a-reading.md runs as written: its reading reaches the folder (hashed), the folder
reader, every report that declares a renderer, and bench serve; its numbers agree with hit@k."""

from __future__ import annotations

import csv
import json
import re
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

import harness.readings  # noqa: F401 - the built-in readings, registered before a fixture copies the registry
from corpora import InputFileError, RetbenchError
from harness.core.readings import Reading, register
from harness.report.formats import render_report
from harness.store.folder import FILES_KEY, file_hash
from harness.store.read import TABLES, open_results

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "adding-a-reading.md").read_text(encoding="utf-8")
MODULE, USE, CHECK = re.findall(r"```python\n(.*?)```", DOC, re.S)
NAME = "success_at_k"


@pytest.fixture
def guide(tmp_path, monkeypatch, registry):
    """The example saved as success_at_k.py on the import path; the registry restored afterwards."""
    (tmp_path / "success_at_k.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, NAME, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def ran(guide, capsys):
    """The guide's usage script, run in the example's folder: (its namespace, what it printed)."""
    namespace: dict = {}
    exec(compile(USE, "use.py", "exec"), namespace)
    return namespace, capsys.readouterr().out


def shares_from_per_query(folder: Path) -> dict[tuple[str, int], float]:
    """(system, k) -> share of queries whose first relevant rank is at most k, read with csv alone."""
    with open(folder / "per_query.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    shares = {}
    for system in dict.fromkeys(r["system"] for r in rows):
        ranks = [r["first_relevant_rank"] for r in rows if r["system"] == system]
        for k in (1, 3, 10):
            shares[system, k] = sum(rank != "" and int(rank) <= k for rank in ranks) / len(ranks)
    return shares


def test_the_example_is_one_module_with_one_registration() -> None:
    assert MODULE.count("register(Reading(") == 1
    assert len(MODULE.splitlines()) < 50


def test_the_reading_is_a_hashed_file_of_the_folder_and_reads_back(ran) -> None:
    namespace, _ = ran
    folder = Path(namespace["folder"])
    assert (folder / "success_at_k.csv").is_file()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest[FILES_KEY]["success_at_k.csv"] == file_hash(folder / "success_at_k.csv")
    assert NAME in TABLES
    table = open_results(folder).table(NAME)
    assert str(table["k"].dtype) == "Int64" and str(table["share"].dtype) == "float64"
    expected = shares_from_per_query(folder)
    assert {(r.system, int(r.k)): r.share for r in table.itertuples()} == expected
    # the harness's own hit@3 (computed from the runs by the metric code) is the share at k = 3
    summary = open_results(folder).summary.set_index("system")
    for system in ("bm25", "lsa"):
        assert summary.loc[system, "hit@3"] == expected[system, 3]


def test_an_edited_reading_is_refused_like_every_file(ran) -> None:
    folder = Path(ran[0]["folder"])
    path = folder / "success_at_k.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("0.", "1.", 1), encoding="utf-8")
    with pytest.raises(InputFileError, match="edited"):
        open_results(folder).table(NAME)


def test_every_report_with_a_renderer_shows_it_and_the_fresh_result_reports_as_its_folder(ran) -> None:
    namespace, printed = ran
    result, folder = namespace["result"], Path(namespace["folder"])
    heading = "Queries with a relevant document in the top k"
    assert f"<summary>{heading}</summary>" in printed
    markdown = render_report(folder, "md")
    assert markdown == result.report("md", command_line=["my_script"])  # in memory = from the folder
    section = markdown[markdown.index(heading):markdown.index("How these numbers were made")]
    shares = shares_from_per_query(folder)
    for (system, k), share in shares.items():
        assert f"| {system} | {k} | {share:.3f} |" in section
    text = result.report()
    assert f"\n{heading}:\n" in text and f"  bm25: top 3: {shares['bm25', 3]:.3f}" in text
    assert heading not in render_report(folder, "latex")  # no latex renderer declared: no section
    if find_spec("matplotlib") is None:  # without the report extra the HTML page is refused with the fix
        with pytest.raises(RetbenchError, match=re.escape("pip install 'retbench[report]'")):
            render_report(folder, "html")
        return
    html = render_report(folder, "html")
    untimed = re.compile(r"<dt>time</dt><dd>[^<]*</dd>|\d{8}-\d{6}-")  # the page shows when its folder was made
    assert untimed.sub("", html) == untimed.sub("", result.report("html", command_line=["my_script"]))
    assert '<a href="#reading-success-at-k">' in html and '<section id="reading-success-at-k">' in html
    assert html.index('id="reading-success-at-k"') < html.index('id="provenance"')


def test_bench_serve_lists_and_serves_the_reading(ran) -> None:
    pytest.importorskip("fastapi", reason="bench serve needs the serve extra")
    pytest.importorskip("httpx", reason="FastAPI's test client needs httpx")
    from fastapi.testclient import TestClient

    from harness.serve.app import create_app

    folder = Path(ran[0]["folder"])
    client = TestClient(create_app(folder.parent), base_url="http://127.0.0.1:8000")
    api = f"/api/v1/evals/runs/{folder.name}/readings"
    listed = client.get(api).json()["readings"]
    assert [r["name"] for r in listed][-1] == NAME and {r["file"] for r in listed} >= {"summary.csv", "success_at_k.csv"}
    rows = client.get(f"{api}/{NAME}").json()["rows"]
    assert {(r["system"], r["k"]): r["share"] for r in rows} == shares_from_per_query(folder)
    missing = client.get(f"{api}/no_such_reading")
    assert missing.status_code == 404 and NAME in missing.json()["detail"]


def test_the_testing_snippet_of_the_guide_passes(guide) -> None:
    exec(compile(CHECK, "check.py", "exec"), {})


def test_a_name_or_file_taken_is_refused(guide) -> None:
    with pytest.raises(ValueError, match="already"):
        register(Reading("summary", "other.csv", ("system",)))
    with pytest.raises(ValueError, match="already"):
        register(Reading("mine", "summary.csv", ("system",)))
    with pytest.raises(ValueError, match="CSV file name"):
        Reading("mine", "sub/mine.csv", ("system",))
