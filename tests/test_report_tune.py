"""The reports of a tune folder (``bench report TUNE_DIR``, ``bench tune --report``,
``TuneResult.report(format)``) that need no extra: the Markdown, golden for a small grid on the
bundled corpus and equal whichever way it is made; LaTeX refused with a fix; a folder whose
tune.csv and manifest disagree refused; and, without matplotlib, the HTML's how-to-install message.

The golden file is the Markdown of the bundled corpus's alpha grid made through the library with a
fixed command line (the Markdown prints no time, path or library version but retbench's). To
regenerate it after a deliberate change: ``RETBENCH_REGENERATE_GOLDEN=1 python -m pytest
tests/test_report_tune.py``, then read the diff.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

from corpora import RetbenchError
from harness import tune
from harness.report import plots
from harness.cli import main
from harness.tuning.report import render_tune_report, tune_formats
from harness.tuning.results import write_tune

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden" / "tune"
GRID = "weighted(bm25,lsa,alpha=0:1:0.25)"
COMMAND = ["bench", "tune", GRID, "--metric", "ndcg@5", "--folds", "3"]
INSTALL = "pip install 'retbench[report]'"


@pytest.fixture(scope="module")
def small_result():
    return tune(GRID, "article", "ndcg@5", folds=3)


@pytest.fixture(scope="module")
def small_folder(small_result, tmp_path_factory) -> Path:
    return small_result.write(tmp_path_factory.mktemp("tune"), command_line=COMMAND)


def test_the_markdown_of_the_bundled_grid_equals_its_golden_file(small_folder) -> None:
    text = render_tune_report(small_folder, "md")
    if os.environ.get("RETBENCH_REGENERATE_GOLDEN"):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        (GOLDEN / "report.md").write_text(text, encoding="utf-8")
        pytest.skip("regenerated tests/golden/tune/report.md")
    assert text == (GOLDEN / "report.md").read_text(encoding="utf-8")


def test_the_markdown_shows_the_numbers_of_the_manifest_and_tune_csv(small_folder) -> None:
    """Every number the Markdown shows, re-read from manifest.json and tune.csv, not from the code."""
    text = render_tune_report(small_folder, "md")
    summary = json.loads((small_folder / "manifest.json").read_text())["summary"]
    rows = {line.split(" | ")[0].lstrip("| ").strip("*"): line for line in text.splitlines() if line.startswith("| ")}
    estimate = summary["cross_validated_estimate"]
    assert (f"**{estimate['mean']:.3f}** | [{estimate['ci_low']:.3f}, {estimate['ci_high']:.3f}]"
            in rows["cross-validated estimate"])
    assert f"| {summary['in_sample_best']['mean']:.3f} |" in rows["in-sample best (optimistic)"]
    assert f"| {summary['default']['mean']:.3f} |" in rows["default parameters"]
    optimism = summary["optimism"]
    assert (f"| {optimism['mean_diff']:+.3f} | [{optimism['ci_low']:+.3f}, {optimism['ci_high']:+.3f}] |"
            in rows["optimism"])
    for fold in summary["per_fold"]:
        assert (f"| {fold['fold']} | {fold['queries']} | {fold['system']} | {fold['train_mean']:.3f} | "
                f"{fold['test_mean']:.3f} |") in text
    table = pd.read_csv(small_folder / "tune.csv", dtype={"alpha": str})
    best = table.sort_values(["mean", "point"], ascending=[False, True], kind="stable")
    shown = [line for line in text.split("**Best points**")[1].splitlines() if line.startswith("| ") and
             line[2].isdigit()]
    assert len(shown) == len(table) == 5
    for line, row in zip(shown, best.itertuples(index=False)):
        mean = f"{row.mean:.3f}" if row.point != summary["chosen"]["point"] else f"**{row.mean:.3f}**"
        assert line == f"| {row.point} | {row.system} | {row.alpha} | {mean} |"
    assert f"Chosen on all queries: **alpha={summary['chosen']['parameters']['alpha']}**" in text
    assert "in-sample best (optimistic)" in text and "<svg" not in text


def test_bench_tune_writes_the_markdown_that_bench_report_and_the_library_make(runner, small_result,
                                                                              tmp_path) -> None:
    result = runner.invoke(main, ["tune", GRID, "--metric", "ndcg@5", "--folds", "3", "--out", str(tmp_path / "out"),
                                  "--no-cache", "-q", "--report", "md"])
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "out").iterdir()
    stored = (folder / "report.md").read_text(encoding="utf-8")
    later = runner.invoke(main, ["report", str(folder), "--format", "md"])
    assert later.exit_code == 0, later.output
    assert later.stdout == stored
    command = json.loads((folder / "manifest.json").read_text())["command_line"]
    assert small_result.report("md", command_line=command) == stored
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "per_query.csv", "report.md", "report.txt",
                                                        "tune.csv", "tune_cost.csv"]
    assert small_result.report() == small_result.report("text") == (folder / "report.txt").read_text().rstrip("\n")


def test_latex_is_refused_for_a_tune_folder_with_a_fix(runner, small_result, small_folder, tmp_path) -> None:
    assert tune_formats() == ["html", "md"]
    refused = runner.invoke(main, ["report", str(small_folder), "-o", str(tmp_path / "table.tex")])
    assert refused.exit_code == 2
    assert (f"error: {small_folder} (written by bench tune): the latex report is not available for tune folders "
            "(it is a table of compared systems). Fix: use html or md") in refused.stderr
    assert not (tmp_path / "table.tex").exists()
    out = tmp_path / "out"
    at_tune = runner.invoke(main, ["tune", GRID, "--out", str(out), "--report", "md,latex"])
    assert at_tune.exit_code == 2 and "error: --report latex: the latex report is not available" in at_tune.stderr
    assert not out.exists()  # refused before any work
    with pytest.raises(RetbenchError, match="^`format=latex`: the latex report is not available for tune folders"):
        small_result.report("latex")
    with pytest.raises(RetbenchError, match="^`reports=latex`: the latex report is not available for tune folders"):
        small_result.write(out, reports="latex")
    assert not out.exists()
    with pytest.raises(RetbenchError, match="The 'format' parameter of report must be a str"):
        small_result.report(3)


def test_a_tune_folder_whose_tables_disagree_is_refused(runner, small_folder, tmp_path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(small_folder, copy)
    table = pd.read_csv(copy / "tune.csv", dtype=str, keep_default_na=False)
    table.loc[table["point"] == "3", "mean"] = "0.1"  # the chosen point no longer has the highest mean
    table.to_csv(copy / "tune.csv", index=False, lineterminator="\n")
    edited = runner.invoke(main, ["report", str(copy), "--format", "md"])
    assert edited.exit_code == 2 and f"error: {copy / 'tune.csv'}: was edited or truncated" in edited.stderr
    # edited on purpose (--accept-edited): the view's own check of the tables is what is tested next
    result = runner.invoke(main, ["report", str(copy), "--format", "md", "--accept-edited"])
    assert result.exit_code == 2
    assert (f"error: {copy / 'tune.csv'}: its first point of the highest mean is 2, but its manifest says point 3 was "
            "chosen. Fix: make the folder again with bench tune.") in result.stderr
    (copy / "tune.csv").unlink()
    missing = runner.invoke(main, ["report", str(copy), "--format", "md"])
    assert missing.exit_code == 2 and f"{copy / 'tune.csv'}: file not found" in missing.stderr
    assert "bench compare" not in missing.stderr  # a tune folder is not remade with bench compare


def test_a_failing_tune_report_leaves_no_results_folder(small_result, tmp_path) -> None:
    def broken(folder: Path):
        raise RetbenchError("the report could not be made")

    with pytest.raises(RetbenchError, match="could not be made"):
        write_tune(small_result, tmp_path / "out", derived=broken)
    assert list((tmp_path / "out").iterdir()) == []
    with pytest.raises(ValueError, match="would replace a file"):
        write_tune(small_result, tmp_path / "out", derived=lambda folder: {"tune.csv": ""})
    assert list((tmp_path / "out").iterdir()) == []


def test_without_matplotlib_the_tune_html_says_how_to_install_and_markdown_still_works(runner, small_result,
                                                                                      small_folder, tmp_path,
                                                                                      monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec gives None, import fails: not installed
    html = runner.invoke(main, ["report", str(small_folder), "-o", str(tmp_path / "r.html")])
    assert html.exit_code == 2
    assert f"error: the html report's charts need matplotlib, which is not installed. Fix: {INSTALL}" in html.stderr
    assert not (tmp_path / "r.html").exists()
    out = tmp_path / "out"
    tuned = runner.invoke(main, ["tune", GRID, "--out", str(out), "--report", "md,html"])
    assert tuned.exit_code == 2 and INSTALL in tuned.stderr
    assert not out.exists()  # refused before the search
    with pytest.raises(RetbenchError, match="need matplotlib"):
        small_result.report("html")
    with pytest.raises(RetbenchError, match="need matplotlib"):
        plots.tune_grid_svg(pd.DataFrame({"point": [1], "alpha": ["0"], "mean": [0.5]}), [("alpha", ["0"])], "mrr",
                            chosen=1)
    markdown = runner.invoke(main, ["report", str(small_folder), "--format", "md"])
    assert markdown.exit_code == 0 and markdown.stdout == (GOLDEN / "report.md").read_text()
