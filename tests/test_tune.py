"""`bench tune` and `harness.tune`: cross-validated parameter search that shares what the grid
points do not change (issue 17's acceptance tests first)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from corpora import Dataset, load_dataset
from harness import compare, tune
from harness.cli import main
from harness.tuning.cross_validation import assign_folds, cross_validate
from harness.core.statistics import bootstrap_means, percentile_interval
from retrievers import BM25
from retrievers.cache import IndexCache
from harness.core.options import Loading, RunOptions, Statistics
from tests.conftest import SHARED_DATA, real_data

CRANFIELD_GRID = "bm25(k1=0.6:1.8:0.6,b=0.3:0.9:0.3)"
#: manifest keys that hold times or the command line: the only bytes allowed to differ between runs
VARYING = ("run_id", "time", "command_line", "seconds")
#: the one file whose bytes differ between runs: the grid points' times (harness.tuning.cost)
MEASURED = "tune_cost.csv"


def run_tune(runner, out: Path, *arguments: str) -> Path:
    result = runner.invoke(main, ["tune", *arguments, "--out", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert result.stdout.rstrip().endswith(f"results: {folder}")
    assert result.stdout.splitlines()[1] == f"results: {folder}"  # after the line on the collection, as compare
    return folder


def read_table(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / name)


def stable_manifest(folder: Path) -> dict:
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"].pop(MEASURED)  # its hash: the times
    return {k: v for k, v in manifest.items() if k not in VARYING}


# ----- acceptance: Cranfield, a 3 x 3 BM25 grid, 5 folds ----------------------------------------


@pytest.fixture(scope="module")
def cranfield_runs(shared_data_module, tmp_path_factory) -> tuple[Path, Path]:
    from click.testing import CliRunner

    runner = CliRunner()
    arguments = [CRANFIELD_GRID, "--corpus", str(shared_data_module / "cranfield"), "--metric", "ndcg@10",
                 "--folds", "5"]
    first = run_tune(runner, tmp_path_factory.mktemp("first"), *arguments)
    second = run_tune(runner, tmp_path_factory.mktemp("second"), *arguments)
    return first, second


@pytest.fixture(scope="module")
def shared_data_module() -> Path:
    real_data("cranfield")
    return SHARED_DATA


def test_cranfield_cross_validated_estimate_is_below_the_in_sample_best(cranfield_runs) -> None:
    folder, _ = cranfield_runs
    summary = json.loads((folder / "manifest.json").read_text())["summary"]
    estimate, best = summary["cross_validated_estimate"]["mean"], summary["in_sample_best"]["mean"]
    assert estimate < best
    assert summary["grid_points"] == 9 and summary["folds"] == 5 and summary["queries"] == 225
    per_query = read_table(folder, "per_query.csv")
    assert per_query["held_out"].mean() == pytest.approx(estimate, abs=1e-15)
    assert per_query["best"].mean() == pytest.approx(best, abs=1e-15)
    report = (folder / "report.txt").read_text()
    assert "in-sample best (optimistic)" in report and "cross-validated estimate" in report


def test_cranfield_every_fold_chose_the_argmax_of_its_training_means(cranfield_runs) -> None:
    folder, _ = cranfield_runs
    table = read_table(folder, "tune.csv")
    assert list(table.columns[:5]) == ["point", "system", "k1", "b", "mean"]
    assert sorted(table["k1"].unique()) == [0.6, 1.2, 1.8] and sorted(table["b"].unique()) == [0.3, 0.6, 0.9]
    per_fold = json.loads((folder / "manifest.json").read_text())["summary"]["per_fold"]
    assert [entry["fold"] for entry in per_fold] == [1, 2, 3, 4, 5]
    for entry in per_fold:
        train = table[f"train_{entry['fold']}"].to_numpy()
        first_best = int(np.flatnonzero(train == train.max())[0])  # ties: the first point in grid order
        assert entry["chosen_point"] == int(table["point"][first_best])
        assert entry["train_mean"] == train[first_best]
        assert entry["test_mean"] == table[f"test_{entry['fold']}"][first_best]
    per_query = read_table(folder, "per_query.csv")
    chosen = {entry["fold"]: entry["chosen_point"] for entry in per_fold}
    assert (per_query["chosen_point"] == per_query["fold"].map(chosen)).all()
    assert per_query["fold"].value_counts().to_dict() == {f: 45 for f in range(1, 6)}


def test_cranfield_same_seed_gives_the_same_bytes(cranfield_runs) -> None:
    first, second = cranfield_runs
    for name in ("tune.csv", "per_query.csv", "report.txt"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert stable_manifest(first) == stable_manifest(second)


def test_cranfield_bm25_sweep_ranks_exactly_as_fitting_each_setting(shared_data_module) -> None:
    data = load_dataset(str(shared_data_module / "cranfield"))
    settings = [BM25(k1=0.6, b=0.3), BM25(k1=1.8, b=0.9), BM25(), BM25(k1=0.0, b=0.0), BM25(k1=0.9, b=1.0),
                BM25(k1=1.2, b=0.75, analyzer="english")]
    runs = BM25.sweep(settings, data.corpus, data.queries, 100)
    assert runs is not None
    for setting, run in zip(settings, runs):
        alone = BM25(k1=setting.k1, b=setting.b, analyzer=setting.analyzer).fit(data.corpus).search(data.queries, 100)
        assert np.array_equal(run.offsets, alone.offsets) and np.array_equal(run.doc_index, alone.doc_index)
        assert np.array_equal(run.scores, alone.scores)  # bit for bit


# ----- a fusion's grid re-uses its children -------------------------------------------------------

COUNTING_MODULE = '''
from retrievers import BM25, ScoreRetriever


class Counted(ScoreRetriever):
    """BM25 that counts its fits, score calls and searches (class-wide)."""

    name = "counted"
    fits = scores = searches = 0

    def fit(self, corpus):
        type(self).fits += 1
        super().fit(corpus)
        self.inner = BM25().fit(corpus)
        return self

    def score(self, queries):
        type(self).scores += 1
        return self.inner.score(queries)

    def search(self, queries, k):
        type(self).searches += 1
        return self.inner.search(queries, k)
'''


@pytest.fixture
def counted(tmp_path, monkeypatch):
    name = f"counted_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(COUNTING_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_a_grid_over_weighted_alpha_fits_and_scores_each_child_once(counted) -> None:
    result = tune(f"weighted({counted}:Counted,lsa,alpha=0:1:0.25)", "article", "ndcg@5", folds=3)
    cls = sys.modules[counted].Counted
    assert result.n_points == 5  # alpha 0, 0.25, 0.5, 0.75, 1 (0.5, the default, is on the grid)
    assert (cls.fits, cls.scores) == (1, 1)  # not 5 fits and 5 score matrices: one of each, shared
    # and sharing changed no number: each point's mean is what compare gives for that point alone
    for parameters, mean in zip(result.point_parameters, result.cv.means):
        alone = compare([f"weighted({counted}:Counted,lsa,alpha={parameters['alpha']})"], "article", ["ndcg@5"])
        assert mean == alone.summary["ndcg@5"][0], parameters


def test_a_grid_over_rrf_k_searches_each_child_once(counted) -> None:
    result = tune(f"rrf({counted}:Counted,lsa,k=10|30|60|100)", "article", "ndcg@5", folds=2)
    cls = sys.modules[counted].Counted
    assert result.n_points == 4 and (cls.fits, cls.searches) == (1, 1)
    assert result.default_point == 2  # k=60, rrf's default, is the third point


# ----- the numbers ----------------------------------------------------------------------------------


def test_cross_validation_by_hand() -> None:
    # 2 points x 4 queries, folds {q0, q1} and {q2, q3}
    values = np.array([[1.0, 0.0, 0.0, 1.0],
                       [0.0, 1.0, 1.0, 1.0]])
    cv = cross_validate(values, np.array([0, 0, 1, 1]))
    # fold 1 trains on q2, q3: means 0.5 vs 1.0 -> point 2; fold 2 trains on q0, q1: 0.5 vs 0.5 -> point 1 (tie)
    assert cv.choices.tolist() == [1, 0]
    assert cv.train_means.tolist() == [[0.5, 0.5], [1.0, 0.5]]
    assert cv.held_out.tolist() == [0.0, 1.0, 0.0, 1.0]  # q0, q1 under point 2; q2, q3 under point 1
    assert cv.estimate == 0.5 and cv.best == 1 and cv.in_sample_best == 0.75


def test_folds_are_seeded_balanced_and_stratified() -> None:
    folds = assign_folds(10, 3, seed=0)
    assert np.array_equal(folds, assign_folds(10, 3, seed=0)) and not np.array_equal(folds, assign_folds(10, 3, 1))
    assert sorted(np.bincount(folds).tolist()) == [3, 3, 4]
    strata = ["a"] * 6 + ["b"] * 6
    stratified = assign_folds(12, 3, seed=0, strata=strata)
    for cell in ("a", "b"):
        members = stratified[[i for i, s in enumerate(strata) if s == cell]]
        assert np.bincount(members, minlength=3).tolist() == [2, 2, 2]


def test_the_interval_is_the_bootstrap_of_the_held_out_values() -> None:
    result = tune("bm25(k1=0.6|1.2|1.8,b=0.4|0.75)", "article", "ndcg@5", folds=3,
                  statistics=Statistics(bootstrap_samples=1000, seed=4))
    low, high = percentile_interval(bootstrap_means(result.cv.held_out, 1000, 4), 0.95)
    assert (result.estimate.low, result.estimate.high) == (float(low[0]), float(high[0]))
    assert result.estimate.value == pytest.approx(float(np.mean(result.cv.held_out)), abs=1e-15)


def test_a_default_off_the_grid_is_scored_on_its_own() -> None:
    result = tune("bm25(k1=0.6|0.9)", "article", "ndcg@5", folds=2)
    assert result.default_point is None and result.default_label == "bm25"
    assert float(np.mean(result.default_values)) == pytest.approx(0.691, abs=5e-4)  # the article's bm25


def test_stratified_tune_deals_each_facet_value_evenly(tmp_path) -> None:
    data = load_dataset("article")
    kinds = {q: ("odd" if i % 2 else "even") for i, q in enumerate(data.queries.ids)}
    result = tune("bm25(k1=0.6|1.2)", data, "ndcg@5", folds=2, stratify="kind",
                  loading=Loading(facets_file={"kind": kinds}))
    assert result.strata is not None and result.stratum_labels == ["even", "odd"]
    for cell in result.stratum_labels:
        members = [i for i, s in enumerate(result.strata) if s == cell]
        counts = np.bincount(result.cv.fold_of[members], minlength=2)
        assert abs(int(counts[0]) - int(counts[1])) <= 1
    folder = result.write(tmp_path)
    strata = json.loads((folder / "manifest.json").read_text())["cross_validation"]["strata"]
    assert strata["facet"] == "kind" and sum(strata["cells"].values()) == len(result.query_ids)


def test_progress_counts_grid_points() -> None:
    heard: list[tuple[str, int, int | None]] = []
    tune("bm25(k1=0.6|1.2,b=0.5|0.6)", "article", "ndcg@5", folds=2,
         progress=lambda label, done, total: heard.append((label, done, total)))
    points = [(done, total) for label, done, total in heard if label == "grid points"]
    assert points[0] == (0, 5) and points[-1] == (5, 5)  # 4 grid points + the default, off the grid


def test_the_shared_postings_come_from_the_index_cache(tmp_path) -> None:
    cache = IndexCache(tmp_path / "cache")
    tune("bm25(k1=0.6|1.2)", "article", "ndcg@5", folds=2, run=RunOptions(cache=cache))
    again = IndexCache(tmp_path / "cache")
    tune("bm25(k1=0.9|1.5,b=0.3|0.6)", "article", "ndcg@5", folds=2, run=RunOptions(cache=again))
    assert cache.events == [("miss", "bm25-postings")] and again.events == [("hit", "bm25-postings")]


@pytest.mark.parametrize(("arguments", "message"), [
    (["--folds", "1"], "folds must be an int >= 2"),
    (["--folds", "15"], "15 folds need at least 15 queries with a relevant judgment; there are 14"),
    (["--metric", "ndcg@5,mrr"], "tune chooses parameters by one metric, got 2"),
    (["--stratify", "kind"], "facet 'kind' was asked for, but the queries"),
])
def test_bad_options_exit_2_and_write_nothing(runner, tmp_path, arguments: list[str], message: str) -> None:
    out = tmp_path / "out"
    result = runner.invoke(main, ["tune", "bm25(k1=0.6|1.2)", *arguments, "--out", str(out), "--no-cache"])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Fix:" in result.stderr and not out.exists()


def test_the_command_prints_the_summary_and_writes_the_folder(runner, tmp_path) -> None:
    folder = run_tune(runner, tmp_path / "out", "weighted(bm25,lsa,alpha=0:1:0.5)", "--metric", "ndcg@5",
                      "--folds", "2")
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "per_query.csv", "report.txt", "tune.csv",
                                                        "tune_cost.csv"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["kind"] == "tune" and manifest["grid"]["axes"][0]["values"] == ["0", "0.5", "1"]
    assert manifest["grid"]["default"] == {"system": "weighted", "point": 2}
    assert manifest["grid"]["shortcut"].startswith("shared children")
    assert list(read_table(folder, "tune.csv").columns) == ["point", "system", "alpha", "mean", "train_1", "test_1",
                                                           "train_2", "test_2"]
    assert isinstance(load_dataset("article"), Dataset)


def test_a_choice_at_the_end_of_an_axis_says_the_best_may_lie_beyond() -> None:
    result = tune("weighted(bm25,lsa,alpha=0:1:0.25)", "article", "ndcg@5", folds=3)
    chosen = result.point_parameters[result.cv.best]["alpha"]
    inside = tune("weighted(bm25,lsa,alpha=0.25:0.75:0.25)", "article", "ndcg@5", folds=3)
    assert chosen == "0.5" and "beyond the grid" not in result.report()  # the default, inside the grid
    assert "beyond the grid" not in inside.report()
    edge = tune("bm25(k1=0.2:0.6:0.2)", "article", "ndcg@5", folds=2)
    end = edge.point_parameters[edge.cv.best]["k1"]
    assert end in ("0.2", "0.6") and f"note: k1={end} is the" in edge.report()


def test_the_command_stratifies_by_a_facet_from_a_side_file(runner, tmp_path) -> None:
    ids = load_dataset("article").queries.ids
    facets = tmp_path / "facets.csv"
    facets.write_text("query_id,kind\n" + "".join(f"{q},{'odd' if i % 2 else 'even'}\n" for i, q in enumerate(ids)),
                      encoding="utf-8")
    folder = run_tune(runner, tmp_path / "out", "bm25(k1=0.6|1.2)", "--metric", "ndcg@5", "--folds", "2",
                      "--stratify", "kind", "--facets", str(facets))
    assert "folds stratified by kind: even 7, odd 7" in (folder / "report.txt").read_text()
    per_query = read_table(folder, "per_query.csv")
    kinds = {q: ("odd" if i % 2 else "even") for i, q in enumerate(ids)}
    per_query["kind"] = per_query["query_id"].map(kinds)
    assert per_query.groupby(["kind", "fold"]).size().tolist() in ([4, 3, 3, 4], [3, 4, 4, 3], [4, 3, 4, 3],
                                                                   [3, 4, 3, 4])


def test_harness_tune_stays_the_function_once_every_module_is_imported() -> None:
    # a module harness/tune.py would replace the attribute with itself on import: the function lives in harness.tuning.search
    import importlib

    import harness

    for module in ("harness.tuning.search", "harness.tuning.results", "harness.tuning.record", "harness.cli.tune"):
        importlib.import_module(module)
    assert callable(harness.tune) and harness.tune.__module__ == "harness.tuning.search"
