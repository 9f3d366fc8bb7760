"""A reading's whole protocol (issue 42 item 3), as the built-in ones use it: a compute step given the
comparison so far, a record in the manifest (at the top or beside the statistics), a section of its
own in the text report and a body in the HTML one, placed by its order, and a part in ``bench serve``.

The reading here counts, per system, the queries whose first relevant document is at rank 1, from
``ReadingInputs.per_query``; the counts are checked against per_query.csv read with ``csv`` alone.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from harness import Statistics, compare
from harness.core.readings import READINGS, Reading, ReadingInputs, ServeView, register
from harness.store.read import open_results

NAME = "top_hits"
METRICS = ["mrr", "hit@3"]


def compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    per_query = inputs.per_query
    rows = [{"system": system, "metrics": len(inputs.config.metrics), "comparisons": len(inputs.comparisons),
             "at_rank_1": int((group["first_relevant_rank"] == 1).sum())}
            for system, group in per_query.groupby("system", sort=False)]
    return {NAME: pd.DataFrame(rows, columns=["system", "metrics", "comparisons", "at_rank_1"])}


def text_section(frame: pd.DataFrame, view) -> str:
    return "\n".join(["top hits (first relevant document at rank 1):",
                      *(f"  {r.system}: {r.at_rank_1}" for r in frame.itertuples())])


def served_model() -> type:
    from pydantic import BaseModel

    class TopHits(BaseModel):
        atRank1: int

    return TopHits


def page(metrics, number, chart) -> str:
    return '<h2 id="top-hits">Top hits</h2>' + "".join(
        f"<p>{s['system']}: {s['topHits']['atRank1']}</p>" for s in metrics["systems"])


def served(folder, system: str) -> dict[str, int] | None:
    frame = folder.table(NAME)
    mine = frame[frame["system"] == system]
    return {"at_rank_1": int(mine["at_rank_1"].iloc[0])} if len(mine) else None


@pytest.fixture
def registered(registry):
    """The reading registered, placed at order 30 (before the means); the registry restored afterwards."""
    register(Reading(NAME, "top_hits.csv", ("system",), ("metrics", "comparisons", "at_rank_1"),
                     columns="system, metrics, comparisons, at_rank_1", compute=compute,
                     record=lambda record: {NAME: {"systems": len(record.systems)}}, record_in="statistics",
                     record_shape=lambda: {NAME: {"systems": int}},
                     sections={"text": text_section}, render={"html": lambda frame, view: "<p>top hits</p>"},
                     title="Top hits", serve=ServeView("topHits", served, served_model, page), order=30))


@pytest.fixture
def result(registered):
    return compare(["bm25", "lsa"], "article", METRICS, statistics=Statistics(bootstrap_samples=50))


def first_ranks_from_csv(folder: Path) -> dict[str, int]:
    with open(folder / "per_query.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {system: sum(r["first_relevant_rank"] == "1" for r in rows if r["system"] == system)
            for system in dict.fromkeys(r["system"] for r in rows)}


def test_the_order_places_a_reading_in_the_registry(registered) -> None:
    names = list(READINGS)
    assert names.index("comparisons") < names.index(NAME) < names.index("leaderboard")


def test_the_compute_step_is_given_the_comparison_and_its_table_is_the_results(result, tmp_path) -> None:
    table = result.table(NAME)
    assert table is getattr(result, NAME)
    assert table["metrics"].tolist() == [2, 2] and table["comparisons"].tolist() == [2, 2]  # bm25 vs lsa, 2 metrics
    folder = result.write(tmp_path, command_line=["bench", "compare"])
    assert dict(zip(table["system"], table["at_rank_1"])) == first_ranks_from_csv(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert "top_hits.csv" in manifest["files"]
    assert manifest["statistics"][NAME] == {"systems": 2} and NAME not in manifest
    stored = open_results(folder)
    pd.testing.assert_frame_equal(getattr(stored, NAME), stored.table(NAME))
    assert stored.table(NAME)["at_rank_1"].tolist() == table["at_rank_1"].tolist()


def test_its_text_section_stands_by_its_order(result) -> None:
    text = result.report()
    assert text.index("top hits (first relevant document at rank 1):") < text.index("leaderboard (")


def test_its_html_section_and_link_stand_by_its_order(result) -> None:
    pytest.importorskip("matplotlib", reason="the HTML report's charts need the report extra")
    html = result.report("html")
    assert html.index('id="reading-top-hits"') < html.index('id="leaderboard"') < html.index('id="means"')
    assert html.index('href="#reading-top-hits"') < html.index('href="#leaderboard"')


def test_its_serve_part_is_in_the_metrics_in_registry_order_and_on_the_run_page(result, tmp_path) -> None:
    pytest.importorskip("fastapi", reason="bench serve's store needs the serve extra")
    from harness.serve.dashboard import run_page
    from harness.serve.store import RunStore

    folder = result.write(tmp_path, command_line=["bench", "compare"])
    store = RunStore(tmp_path)
    systems = store.metrics(folder.name)["systems"]
    counts = first_ranks_from_csv(folder)
    assert {s["system"]: s["topHits"] for s in systems} == {k: {"atRank1": v} for k, v in counts.items()}
    assert list(systems[0])[-3:] == ["topHits", "riskCoverage", "cost"]  # the readings' entries, in registry order
    assert '<h2 id="top-hits">Top hits</h2>' in run_page(store, folder.name)
    assert NAME in [entry["name"] for entry in store.readings(folder.name)]


def test_its_record_shape_is_checked_where_its_record_stands(result, tmp_path) -> None:
    """A record beside the statistics (``record_in``) has its shape checked there, not at the top level."""
    from corpora import InputFileError

    folder = result.write(tmp_path, command_line=["bench", "compare"])
    assert open_results(folder).manifest["statistics"][NAME] == {"systems": 2}
    manifest_file = folder / "manifest.json"
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    manifest["statistics"][NAME]["systems"] = "two"
    manifest_file.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(InputFileError, match=f"statistics.{NAME}.systems is not an integer"):
        open_results(folder)
