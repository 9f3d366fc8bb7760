"""``bench tune`` reports what each grid point costs (issue 44, item 5): tune_cost.csv, the
manifest's ``cost`` entry and the HTML report's table; no time reaches another file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from harness import tune
from harness.tuning.cost import BASES, TUNE_COST_COLUMNS, TUNE_COST_FILE
from harness.tuning.report import render_tune_report

STABLE = ("tune.csv", "per_query.csv", "report.txt")


def written(grid: str, out: Path, **options) -> Path:
    return tune(grid, "article", "ndcg@5", folds=2, **options).write(out, command_line=["bench", "tune", grid])


@pytest.fixture(scope="module")
def dims_folder(tmp_path_factory) -> Path:
    return written("lsa(dims=4|16)", tmp_path_factory.mktemp("dims"))


def costs(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / TUNE_COST_FILE, keep_default_na=False, na_values=[""])


def test_each_point_run_on_its_own_has_every_cost_and_a_larger_index_for_more_dims(dims_folder) -> None:
    frame = costs(dims_folder)
    grid = pd.read_csv(dims_folder / "tune.csv")
    assert list(frame.columns) == list(TUNE_COST_COLUMNS)
    assert frame["point"].tolist() == grid["point"].tolist() and frame["system"].tolist() == grid["system"].tolist()
    assert (frame["basis"] == "own").all() and (frame["fit_from_cache"] == False).all()  # noqa: E712
    assert (frame["fit_seconds"] > 0).all() and (frame["search_seconds"] > 0).all()
    assert frame["n_queries"].tolist() == [14, 14]
    rates = (frame["n_queries"] / frame["search_seconds"]).tolist()
    assert frame["queries_per_second"].tolist() == pytest.approx(rates)
    small, large = frame["index_bytes"].tolist()
    assert 0 < small < large  # 16 dimensions hold more floats than 4: the trade-off the table shows


def test_the_manifest_says_how_it_was_measured_and_hashes_the_file(dims_folder) -> None:
    manifest = json.loads((dims_folder / "manifest.json").read_text())
    entry = manifest["cost"]
    assert entry["file"] == TUNE_COST_FILE and entry["basis"] == {"own": BASES["own"]}
    assert "batch search" in entry["measured"] and entry["machine"]["cores"] >= 1
    assert manifest["columns"][TUNE_COST_FILE] == TUNE_COST_COLUMNS
    assert TUNE_COST_FILE in manifest["files"]
    assert "seconds" not in json.dumps(manifest["hashes"])  # no time in the configuration hash


def test_a_sweep_leaves_fit_and_index_unknown_but_times_each_point(tmp_path) -> None:
    frame = costs(written("bm25(k1=0.6|1.2,b=0.4|0.75)", tmp_path))
    assert (frame["basis"] == "sweep").all() and len(frame) == 4
    assert frame["fit_seconds"].isna().all() and frame["index_bytes"].isna().all()  # never a guess
    assert (frame["search_seconds"] > 0).all() and frame["queries_per_second"].notna().all()


def test_shared_children_count_in_every_points_index(tmp_path) -> None:
    frame = costs(written("weighted(bm25,lsa,alpha=0:1:0.5)", tmp_path))
    assert (frame["basis"] == "shared children").all()
    assert frame["index_bytes"].nunique() == 1 and frame["index_bytes"].iloc[0] > 0


def test_two_runs_differ_only_in_the_cost_file(dims_folder, tmp_path) -> None:
    again = written("lsa(dims=4|16)", tmp_path)
    for name in STABLE:
        assert (again / name).read_bytes() == (dims_folder / name).read_bytes(), name
    assert render_tune_report(again, "md") == render_tune_report(dims_folder, "md").replace(
        dims_folder.name, again.name)  # the Markdown holds no time
    first, second = (json.loads((f / "manifest.json").read_text()) for f in (dims_folder, again))
    assert first["cost"] == second["cost"] and first["hashes"] == second["hashes"]
    assert {k: v for k, v in first["files"].items() if k != TUNE_COST_FILE} == \
        {k: v for k, v in second["files"].items() if k != TUNE_COST_FILE}


def test_the_html_report_shows_each_points_cost_from_the_file(dims_folder) -> None:
    pytest.importorskip("matplotlib")
    page = render_tune_report(dims_folder, "html")
    frame = costs(dims_folder)
    assert '<section id="cost">' in page and 'href="#cost"' in page
    for row in frame.itertuples(index=False):
        assert f'data-cost-point="{row.point}" data-cost-column="fit_seconds">{row.fit_seconds:.3f}<' in page
        rate = f"{row.queries_per_second:,.1f}"
        assert f'data-cost-point="{row.point}" data-cost-column="queries_per_second">{rate}<' in page
    assert page.count('data-cost-column="front">yes<') >= 1


def test_a_folder_without_the_file_reports_without_the_section(dims_folder, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    old = tmp_path / "old"
    old.mkdir()
    for path in dims_folder.iterdir():
        if path.name != TUNE_COST_FILE:
            (old / path.name).write_bytes(path.read_bytes())
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["files"][TUNE_COST_FILE], manifest["cost"], manifest["columns"][TUNE_COST_FILE]
    (old / "manifest.json").write_text(json.dumps(manifest))
    page = render_tune_report(old, "html")
    assert '<section id="cost">' not in page and 'href="#cost"' not in page and '<section id="points">' in page
