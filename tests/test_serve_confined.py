"""bench serve never serves a file from outside its folder, and never says where its folder is (issue
30): a symbolic link leading out of the served folder, anywhere in a run (a file, a subfolder, the
manifest, a link through a linked folder), withholds the run; every error names files relative to the
served folder; a damaged file or a manifest of the wrong shape is a 404 that says so, not a 500."""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="bench serve needs the serve extra: pip install 'retbench[serve]'")
pytest.importorskip("httpx", reason="FastAPI's test client needs httpx (the test extra)")

from fastapi.testclient import TestClient  # noqa: E402

from corpora import Corpus, Dataset, Qrels, Queries  # noqa: E402
from harness import compare  # noqa: E402
from harness.serve.app import API, create_app  # noqa: E402
from retrievers import FixedRun  # noqa: E402
from harness.core.options import Readings, Statistics

ANSWERS = ("", "/metrics", "/results", "/comparisons")
LOCAL = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """One small results folder (a facet, a failed query: every file the API reads)."""
    corpus = Corpus(["A", "B", "C", "X"], ["alpha", "beta", "gamma", "chi"])
    queries = Queries(["q1", "q2", "q3"], ["a", "b", "c"], facets={"kind": ["x", "y", "x"]})
    dataset = Dataset("confined", corpus, queries, Qrels({"q1": {"A": 2}, "q2": {"B": 1}, "q3": {"C": 1}}), "<memory>")
    return compare({"fixed": FixedRun({"q1": ["B", "A"], "q2": ["X"], "q3": ["C"]})}, dataset, ["mrr"],
                   readings=Readings(retrieval_k=4),
                   statistics=Statistics(bootstrap_samples=20)).write(tmp_path_factory.mktemp("made"))


@pytest.fixture
def layout(tmp_path: Path, made: Path) -> tuple[Path, Path]:
    """``root`` (served) holding a copy of the run as ``run``, and ``outside`` (not served) beside it."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    shutil.copytree(made, root / "run")
    shutil.copytree(made, outside)
    return root, outside


def client_of(root: Path) -> TestClient:
    return TestClient(create_app(root), base_url=LOCAL)


def listed(client: TestClient) -> list[str]:
    return [run["id"] for run in client.get(f"{API}/runs").json()["items"]]


def assert_withheld(client: TestClient, run_id: str, shown: str, where: Path) -> None:
    """Every answer about ``run_id`` is a 404 naming ``shown`` (relative) and nothing of ``where``."""
    assert run_id not in listed(client)
    for tail in ANSWERS:
        answer = client.get(f"{API}/runs/{run_id}{tail}")
        assert answer.status_code == 404, tail
        detail = answer.json()["detail"]
        assert shown in detail and "Fix:" in detail, detail
        for path in {str(where), os.path.realpath(where)}:
            assert path not in answer.text
    page = client.get(f"/runs/{run_id}")
    assert page.status_code == 404 and shown in html.unescape(page.text) and str(where) not in page.text


def test_a_file_linked_from_outside_withholds_the_run(layout) -> None:
    root, outside = layout
    client = client_of(root)
    assert listed(client) == ["run"] and client.get(f"{API}/runs/run/results").status_code == 200
    # each file an answer reads, and one no answer reads (a run file): any of them withholds every answer
    for name in ("per_query.csv", "comparisons.csv", "retrieval_metrics_summary.csv", "runs/fixed.trec"):
        linked = root / "run" / name
        kept = linked.read_bytes()
        linked.unlink()
        linked.symlink_to(outside / name)
        os.utime(root / "run" / "manifest.json")  # a cached answer is dropped when the manifest changes
        assert_withheld(client, "run", f"run/{name} is a symbolic link that leads outside the served folder",
                        root.parent)
        linked.unlink()
        linked.write_bytes(kept)
        os.utime(root / "run" / "manifest.json")
        assert client.get(f"{API}/runs/run/metrics").status_code == 200


def test_a_link_made_after_the_run_was_listed_is_found_before_it_is_read(layout) -> None:
    root, outside = layout
    client = client_of(root)
    assert listed(client) == ["run"] and client.get(f"{API}/runs/run/metrics").status_code == 200
    (root / "run" / "per_query.csv").unlink()  # the manifest untouched: the answers cached stay valid
    (root / "run" / "per_query.csv").symlink_to(outside / "per_query.csv")
    answer = client.get(f"{API}/runs/run/results")  # not answered yet, so it would read the link
    assert answer.status_code == 404 and "run/per_query.csv is a symbolic link" in answer.json()["detail"]


def test_a_linked_subfolder_or_a_link_through_one_withholds_the_run(layout) -> None:
    root, outside = layout
    shutil.rmtree(root / "run" / "runs")
    (root / "run" / "runs").symlink_to(outside / "runs", target_is_directory=True)
    client = client_of(root)
    assert_withheld(client, "run", "run/runs is a symbolic link that leads outside", root.parent)
    # a link that stays inside the served folder, to a folder holding a link that leads out
    (root / "run" / "runs").unlink()
    shared = root / "shared"
    shared.mkdir()
    shutil.copytree(outside / "runs", shared / "runs")
    (shared / "runs" / "fixed.trec").unlink()
    (shared / "runs" / "fixed.trec").symlink_to(outside / "runs" / "fixed.trec")
    (root / "run" / "runs").symlink_to(shared / "runs", target_is_directory=True)
    os.utime(root / "run" / "manifest.json")
    assert_withheld(client, "run", "run/runs/fixed.trec is a symbolic link that leads outside", root.parent)


def test_links_that_stay_inside_are_served_and_a_loop_ends(layout) -> None:
    root, _ = layout
    shutil.copytree(root / "run", root / "copy")
    for name in ("per_query.csv", "diagnosis.csv"):
        (root / "copy" / name).unlink()
        (root / "copy" / name).symlink_to(Path("..") / "run" / name)  # relative, inside the served folder
    (root / "copy" / "again").symlink_to(root / "copy", target_is_directory=True)  # a loop
    (root / "copy" / "up").symlink_to(root, target_is_directory=True)
    client = client_of(root)
    assert sorted(listed(client)) == ["copy", "run"]
    mine, theirs = client.get(f"{API}/runs/copy/results").json(), client.get(f"{API}/runs/run/results").json()
    assert [i["firstRelevantRank"] for i in mine["items"]] == [i["firstRelevantRank"] for i in theirs["items"]]
    assert mine["total"] == 3


def test_a_served_run_folder_whose_manifest_leads_outside_is_withheld(layout) -> None:
    root, outside = layout
    run = root / "run"
    (run / "manifest.json").unlink()
    (run / "manifest.json").symlink_to(outside / "manifest.json")
    client = TestClient(create_app(run), base_url=LOCAL)  # the served folder is the run itself
    assert_withheld(client, "run", "manifest.json is a symbolic link that leads outside", root.parent)
    assert client_of(root).get(f"{API}/runs").json()["total"] == 0  # and inside a folder it is not a run


def test_a_folder_served_through_a_link_serves_its_runs(layout, tmp_path: Path) -> None:
    root, _ = layout
    (tmp_path / "via").symlink_to(root, target_is_directory=True)
    client = client_of(tmp_path / "via")
    assert listed(client) == ["run"] and client.get(f"{API}/runs/run/results").status_code == 200


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_in_a_run_withholds_it_rather_than_hang(layout) -> None:
    root, _ = layout
    (root / "run" / "diagnosis.csv").unlink()
    os.mkfifo(root / "run" / "diagnosis.csv")  # reading it would wait for a writer forever
    assert_withheld(client_of(root), "run", "run/diagnosis.csv is neither a file nor a folder", root.parent)


def damage(folder: Path, how: str) -> str:
    """Damage ``folder`` one way; what its answers' detail must then say."""
    manifest = json.loads((folder / "manifest.json").read_text())
    if how in ("bad table", "bad lines"):  # a folder without file hashes (as written before them): its parse error shows
        manifest.pop("files", None)
        (folder / "manifest.json").write_text(json.dumps(manifest))
    if how == "missing file":
        (folder / "diagnosis.csv").unlink()
        return f"{folder.name}/diagnosis.csv: file not found"
    if how == "bad table":
        (folder / "comparisons.csv").write_text("x\n1\n")
        return f"{folder.name}/comparisons.csv: has no 'system_a'"
    if how == "bad lines":
        (folder / "retrieval_metrics.jsonl").write_text("{\n")
        return f"{folder.name}/retrieval_metrics.jsonl:1: is not JSON lines"
    if how == "manifest not JSON":
        (folder / "manifest.json").write_text("{")
        return f"{folder.name}/manifest.json:1: is not valid JSON"
    if how == "manifest a list":
        (folder / "manifest.json").write_text("[]")
        return f"{folder.name}/manifest.json: is not a JSON object"
    if how == "corpus a string":
        (folder / "manifest.json").write_text(json.dumps({**manifest, "corpus": "x"}))
        return "damaged/manifest.json: is damaged (edited or cut short?): its entry corpus is not an object"
    if how == "card without k":
        card = {k: v for k, v in manifest["retrieval_metrics"].items() if k != "default_retrieval_k"}
        (folder / "manifest.json").write_text(json.dumps({**manifest, "retrieval_metrics": card}))
        return "its files do not have the shape bench compare writes (KeyError"
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["missing file", "bad table", "bad lines", "manifest not JSON", "manifest a list",
                                 "corpus a string", "card without k"])
def test_errors_name_files_relative_to_the_served_folder(layout, how: str) -> None:
    root, _ = layout
    shutil.copytree(root / "run", root / "damaged")
    said = damage(root / "damaged", how)
    client = client_of(root)
    assert "run" in listed(client)  # the listing still answers (a damaged manifest is left out of it)
    answers = [client.get(f"{API}/runs/damaged{tail}") for tail in ANSWERS] + [client.get("/runs/damaged")]
    refused = [a for a in answers if a.status_code != 200]
    assert refused, how
    for answer in refused:
        assert answer.status_code == 404
        assert said in html.unescape(answer.text), (how, answer.text)
        assert str(root) not in answer.text and os.path.realpath(root) not in answer.text
        assert "Fix:" in answer.text
    assert client.get(f"{API}/runs/run/metrics").status_code == 200  # the sound run beside it is unaffected
