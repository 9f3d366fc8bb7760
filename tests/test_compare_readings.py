"""Issue 13 end to end: facets, risk–coverage, the leaderboard, effect size and power, and duplicate
versions, through `bench compare` and `harness.compare`, read back from the results folder.

The computations have their own tests (test_facet_rollup, test_risk_coverage, test_leaderboard,
test_power, test_near_duplicates); these check what a user gets: the options, the files and columns,
what is printed, the errors, and that the files hold the numbers the definitions give.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau
from statsmodels.stats.power import TTestPower

from corpora import Corpus, Dataset, Qrels, Queries, load_dataset
from harness import compare
from harness.cli import main
from harness.readings.facets import select_facets
from retrievers import FixedRun, Retriever
from harness.core.options import Loading, Readings, RunOptions, Statistics
from tests.conftest import SHARED_DATA, real_data

FAST = ["--bootstrap-samples", "200"]
ARTICLE = ["--systems", "bm25,lsa,weighted,rrf", "--metrics", "ndcg@5,hit@3,recall@5,mrr"]
REPO = Path(__file__).resolve().parents[1]
CSFCUBE = SHARED_DATA / "csfcube"


def run_cli(runner, out: Path, *args: str):
    result = runner.invoke(main, ["compare", "--out", str(out), "-q", *args])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return result, folder


def read(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / name, dtype={"query_id": str, "value": str}, keep_default_na=False,
                       na_values=[""])


def refused(runner, tmp_path: Path, *args: str) -> str:
    """The message of a refused run, after checking that it exits 2 and writes nothing."""
    result = runner.invoke(main, ["compare", "--out", str(tmp_path / "out"), *FAST, *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    return result.output


def assert_cells_are_per_query_means(facets: pd.DataFrame, per_query: pd.DataFrame, queries: Queries,
                                     metrics: list[str]) -> None:
    """Every cell of facets.csv is the exactly rounded mean of per_query.csv's rows of its queries."""
    evaluated = list(dict.fromkeys(per_query["query_id"]))
    for facet in dict.fromkeys(facets["facet"]):
        cells = select_facets(queries, evaluated, [facet])[0]
        for row in facets[facets["facet"] == facet].to_dict("records"):
            members = [q for q in evaluated if cells.cell_of[q] == row["value"]]
            rows = per_query[(per_query["system"] == row["system"]) & per_query["query_id"].isin(members)]
            assert row["n_queries"] == len(rows) == len(members) > 0
            for metric in metrics:
                assert row[metric] == math.fsum(rows[metric]) / len(rows), (facet, row["value"], metric)
            has_interval = not pd.isna(row[f"{metrics[0]}_ci_low"])
            assert has_interval == (len(members) >= 5)
            assert row["note"] == ("" if has_interval else "fewer than 5 queries: no interval") or \
                (has_interval and pd.isna(row["note"]))


# ----- facets ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def csfcube_folder(tmp_path_factory) -> tuple[str, Path]:
    real_data("csfcube")
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("csfcube")
    result, folder = run_cli(CliRunner(), out, "--corpus", str(CSFCUBE), "--systems", "bm25,lsa",
                             "--metrics", "ndcg@10,map", *FAST)
    return result.output, folder


def test_csfcube_facets_csv_has_its_three_facets_and_per_query_means(csfcube_folder) -> None:
    output, folder = csfcube_folder
    facets = read(folder, "facets.csv")
    assert list(dict.fromkeys(facets["facet"])) == ["facet", "year", "paper_type"]
    assert list(dict.fromkeys(facets.loc[facets.facet == "facet", "value"])) == ["background", "method", "result"]
    dataset = load_dataset(str(CSFCUBE))
    assert_cells_are_per_query_means(facets, read(folder, "per_query.csv"), dataset.queries, ["ndcg@10", "map"])
    # one printed table per facet, with an interval or a note in each cell
    for facet in ("facet", "year", "paper_type"):
        assert f"\nfacet {facet}: mean [95% paired bootstrap interval] per value" in output
    background = facets[(facets.facet == "facet") & (facets.value == "background") & (facets.system == "bm25")].iloc[0]
    assert background["n_queries"] == 16  # every cell of CSFCube has 5 queries or more: an interval each
    assert f"  background       16  bm25    {background['ndcg@10']:.3f} [{background['ndcg@10_ci_low']:.3f}, " \
           f"{background['ndcg@10_ci_high']:.3f}]" in output
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["facets"]["rolled_up"] == ["facet", "year", "paper_type"]


def test_csfcube_facets_from_the_library_equal_the_file(csfcube_folder) -> None:
    _, folder = csfcube_folder
    result = compare("bm25,lsa", str(CSFCUBE), "ndcg@10,map", statistics=Statistics(bootstrap_samples=200),
                     run=RunOptions(cache=True))
    assert result.facets.to_csv(index=False, lineterminator="\n") == (folder / "facets.csv").read_text()


KINDS = ["price", "refund", "data", "account", "data", "api", "price", "account", "api", "data", "price",
         "support", "data", "account"]
POPULARITY = [5, 80, 12, 40, 3, 7, 66, 21, 9, 30, 2, 55, 14, 1]


def write_facets_file(path: Path) -> Path:
    path.write_text("query_id,kind,popularity\n" + "".join(
        f"q{i:02d},{k},{p}\n" for i, (k, p) in enumerate(zip(KINDS, POPULARITY), 1)), encoding="utf-8")
    return path


def test_a_facets_file_on_the_bundled_corpus(runner, tmp_path: Path) -> None:
    path = write_facets_file(tmp_path / "facets.csv")
    result, folder = run_cli(runner, tmp_path / "out", *ARTICLE, *FAST, "--facets-file", str(path))
    facets = read(folder, "facets.csv")
    assert list(dict.fromkeys(facets["facet"])) == ["kind", "popularity"]
    # popularity is numeric: quartile buckets (sorted 1 2 3 5 7 9 12 14 21 30 40 55 66 80)
    assert list(dict.fromkeys(facets.loc[facets.facet == "popularity", "value"])) == [
        "q1 [1, 5)", "q2 [5, 12)", "q3 [12, 40)", "q4 [40, 80]"]
    queries = load_dataset("article").queries
    queries.facets.update({"kind": KINDS, "popularity": POPULARITY})
    assert_cells_are_per_query_means(facets, read(folder, "per_query.csv"), queries,
                                     ["ndcg@5", "hit@3", "recall@5", "mrr"])
    # printed: one table per facet; data has 4 queries: a mean and the note instead of an interval
    assert "facet kind: mean [95% paired bootstrap interval] per value; under 5 queries, no interval:" in result.output
    assert "facet popularity:" in result.output
    lines = result.output.splitlines()
    data = next(i for i, line in enumerate(lines) if line.startswith("  data "))
    assert [len(lines[i].split("(too few queries)")) - 1 for i in range(data, data + 4)] == [4, 4, 4, 4]
    # the library writes the same file; --facets picks and orders facets; '' rolls up none
    library = compare("bm25,lsa,weighted,rrf", "article", "ndcg@5,hit@3,recall@5,mrr",
                      statistics=Statistics(bootstrap_samples=200), loading=Loading(facets_file=path))
    assert library.facets.to_csv(index=False, lineterminator="\n") == (folder / "facets.csv").read_text()
    picked = compare(["bm25"], "article", "ndcg@5", statistics=Statistics(bootstrap_samples=200),
                     loading=Loading(facets_file=path), readings=Readings(facets="popularity,kind"))
    assert list(dict.fromkeys(picked.facets["facet"])) == ["popularity", "kind"]
    assert compare(["bm25"], "article", "ndcg@5", statistics=Statistics(bootstrap_samples=50),
                   loading=Loading(facets_file=path), readings=Readings(facets=[])).facets.empty


def test_a_facets_file_changes_the_queries_hash_and_nothing_else(runner, tmp_path: Path) -> None:
    path = write_facets_file(tmp_path / "facets.csv")
    _, plain = run_cli(runner, tmp_path / "a", "--systems", "bm25", "--metrics", "mrr", *FAST)
    _, faceted = run_cli(runner, tmp_path / "b", "--systems", "bm25", "--metrics", "mrr", *FAST,
                         "--facets-file", str(path))
    before, after = (json.loads((f / "manifest.json").read_text())["hashes"] for f in (plain, faceted))
    assert before["queries"] != after["queries"]
    assert {k: v for k, v in before.items() if k != "queries"} == {k: v for k, v in after.items() if k != "queries"}
    for name in ("summary.csv", "per_query.csv", "comparisons.csv", "runs/bm25.trec", "qrels.txt", "diagnosis.csv"):
        assert (plain / name).read_bytes() == (faceted / name).read_bytes(), name
    assert json.loads((faceted / "manifest.json").read_text())["facets"]["file"] == str(path)


def test_experiment_file_keys_for_facets_are_read_from_its_folder(runner, tmp_path: Path) -> None:
    write_facets_file(tmp_path / "facets.csv")
    config = tmp_path / "experiment.toml"
    config.write_text('systems = ["bm25"]\nmetrics = ["mrr"]\nfacets = ["kind"]\nfacets_file = "facets.csv"\n'
                      'risk_metric = "mrr"\nconfidence_from = "margin"\nbootstrap_samples = 100\n', encoding="utf-8")
    result = runner.invoke(main, ["compare", "--config", str(config), "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.output
    (folder,) = list((tmp_path / "out").iterdir())
    assert set(read(folder, "facets.csv")["facet"]) == {"kind"}
    summary = read(folder, "risk_coverage_summary.csv")
    assert summary[["confidence", "risk_metric"]].values.tolist() == [["margin", "mrr"]]


@pytest.mark.parametrize(("files", "args", "message"), [
    ({}, ["--facets", "kind"], "have no facets. Fix: give them in a facets file"),
    ({"f.csv": "query_id,kind\nq01,a\n"}, ["--facets", "kindd"], "unknown facet 'kindd'. Valid: kind"),
    ({"f.csv": "query_id,kind\nq01,a\nq99,b\n"}, [], "f.csv:3: query id 'q99' is not a query of the dataset. Fix:"),
    ({"f.csv": "query_id,kind\nq01,a\nq01,b\n"}, [], "f.csv:3: query id 'q01' listed twice (first on line 2)"),
    ({"f.txt": "query_id,kind\n"}, [], "a facets file must end in .csv, .tsv, .jsonl"),
    ({}, ["--facets-file", "missing.csv"], "missing.csv: facets file not found. Fix: check the path"),
])
def test_facet_mistakes_are_one_message_exit_2_and_nothing_written(runner, tmp_path, files, args, message) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    given = ["--facets-file", str(tmp_path / next(iter(files)))] if files else []
    if "--facets-file" in args:
        args = ["--facets-file", str(tmp_path / args[1])]
    assert message in refused(runner, tmp_path, "--systems", "bm25", "--metrics", "mrr", *given, *args)


# ----- risk–coverage -----------------------------------------------------------------------------------

HAND_MODULE = '''
from retrievers import Retriever


class Hand(Retriever):
    """Rankings and confidences of the hand-computed example: mrr 1, 0, 0.5, 1, 0."""

    name = "hand"
    RANKINGS = {"qA": ["a"], "qB": ["x"], "qC": ["x", "c"], "qD": ["d"], "qE": []}
    CONFIDENCE = {"qA": 0.9, "qB": 0.5, "qC": 0.5, "qD": 0.3, "qE": float("-inf")}

    def search(self, queries, k):
        return {q: [(d, 10.0 - i) for i, d in enumerate(self.RANKINGS[q][:k])] for q in queries.ids}

    def confidence(self, queries):
        return [self.CONFIDENCE[q] for q in queries.ids]


class Nothing(Retriever):
    """Answers nothing, and has no confidence of its own."""

    def search(self, queries, k):
        return {}
'''


def hand_corpus(folder: Path) -> Path:
    """A BEIR folder: five queries, each with one relevant document."""
    (folder / "qrels").mkdir(parents=True)
    docs = ["a", "b", "c", "d", "e", "x"]
    (folder / "corpus.jsonl").write_text("".join(f'{{"_id": "{d}", "text": "text {d}"}}\n' for d in docs))
    (folder / "queries.jsonl").write_text("".join(f'{{"_id": "q{q}", "text": "about {q}"}}\n' for q in "ABCDE"))
    (folder / "qrels" / "test.tsv").write_text("".join(f"q{q}\t{q.lower()}\t1\n" for q in "ABCDE"))
    return folder


def test_the_hand_example_through_a_retrievers_own_confidence(runner, tmp_path: Path, monkeypatch) -> None:
    # the example of test_risk_coverage: confidences .9, .5, .5 (a tie), .3, -inf; risks 0, 1, .5, 0, 1
    (tmp_path / "hand_retriever.py").write_text(HAND_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "hand_retriever", raising=False)
    result, folder = run_cli(runner, tmp_path / "out", "--corpus", str(hand_corpus(tmp_path / "hand")),
                             "--systems", "hand_retriever:Hand,hand_retriever:Nothing", "--metrics", "hit@1,mrr",
                             "--risk-metric", "mrr", *FAST)
    curve = read(folder, "risk_coverage.csv")
    assert curve[curve.system == "hand"][["coverage", "risk", "threshold"]].values.tolist() == [
        [0.2, 0.0, 0.9], [0.6, 0.5, 0.5], [0.8, 0.375, 0.3], [1.0, 0.5, -np.inf]]
    summary = read(folder, "risk_coverage_summary.csv").set_index("system")
    hand = summary.loc["hand"]
    assert (hand["confidence"], hand["risk_metric"], hand["n_queries"]) == ("retriever", "mrr", 5)
    assert hand["aurc"] == pytest.approx(0.35, abs=1e-15)
    assert hand["oracle_aurc"] == pytest.approx(5 / 24, abs=1e-15)
    assert hand["e_aurc"] == pytest.approx(17 / 120, abs=1e-15)
    assert hand["random_risk"] == 0.5
    assert hand["kendall_tau"] == pytest.approx(3 / math.sqrt(72), abs=1e-15)
    # Nothing answers nothing: every confidence -inf (read off its run), one tie group, tau undefined
    assert summary.loc["Nothing", ["confidence", "aurc", "random_risk"]].tolist() == ["score", 1.0, 1.0]
    assert math.isnan(summary.loc["Nothing", "kendall_tau"])
    section = result.output.split("risk–coverage (")[1].splitlines()
    line = next(line for line in section if line.startswith("  hand "))
    assert line.split() == ["hand", "retriever", "0.350", "0.208", "0.142", "0.500", "+0.354"]
    assert "risk–coverage (risk = 1 - mrr; confidence: retriever = its own confidence(queries); score = the top " \
           "result's score;" in result.output


def recomputed(folder: Path, system: str, kind: str, metric: str) -> tuple[list, float, float, float]:
    """From the folder's run files and per_query.csv alone, by the definitions: the curve (coverage,
    selective risk, threshold per distinct confidence), AURC (ties: every order of the tied queries,
    averaged), oracle AURC and Kendall's tau-b (scipy's)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    entry = next(s for s in manifest["systems"] if s["label"] == system)
    # the top score is written unchanged in the .trec file; the margin needs the raw scores
    path = folder / (entry["run_file"] if kind == "score" else entry["raw_scores_file"])
    scores: dict[str, list[float]] = {}
    for line in path.read_text().splitlines():
        fields = line.split("\t") if path.suffix == ".tsv" else line.split()
        if fields[0] != "query_id":
            scores.setdefault(fields[0], []).append(float(fields[4] if kind == "score" else fields[3]))
    rows = read(folder, "per_query.csv")
    rows = rows[rows.system == system]
    needed = 1 if kind == "score" else 2
    confidence = [(s[0] if kind == "score" else s[0] - s[1]) if len(s) >= needed else -math.inf
                  for s in (scores.get(q, []) for q in rows["query_id"])]
    risk = [1.0 - v for v in rows[metric]]
    n = len(risk)
    curve, expected = [], []
    for level in sorted(set(confidence), reverse=True):
        ahead = [r for c, r in zip(confidence, risk) if c > level]
        group = [r for c, r in zip(confidence, risk) if c == level]
        expected += [(sum(ahead) + i * sum(group) / len(group)) / (len(ahead) + i) for i in range(1, len(group) + 1)]
        curve.append([(len(ahead) + len(group)) / n, (sum(ahead) + sum(group)) / (len(ahead) + len(group)), level])
    ordered = sorted(risk)
    oracle = sum(sum(ordered[:i]) / i for i in range(1, n + 1)) / n
    return curve, sum(expected) / n, oracle, float(kendalltau(confidence, rows[metric]).statistic)


@pytest.mark.parametrize("kind", ["score", "margin"])
def test_risk_coverage_csv_is_recomputed_from_the_run_files_and_per_query_csv(runner, tmp_path, kind) -> None:
    _, folder = run_cli(runner, tmp_path / "out", *ARTICLE, *FAST, "--risk-metric", "ndcg_cut_5",
                        "--confidence-from", kind)
    curve = read(folder, "risk_coverage.csv")
    summary = read(folder, "risk_coverage_summary.csv").set_index("system")
    assert list(summary.index) == ["bm25", "lsa", "weighted", "rrf"]
    for system in summary.index:
        expected_curve, aurc, oracle, tau = recomputed(folder, system, kind, "ndcg@5")
        got = curve[curve.system == system][["coverage", "risk", "threshold"]].values.tolist()
        assert len(got) == len(expected_curve)
        for (c, r, t), (ec, er, et) in zip(got, expected_curve):
            assert (c, t) == (pytest.approx(ec, abs=1e-12), et) and r == pytest.approx(er, abs=1e-12)
        row = summary.loc[system]
        assert (row["confidence"], row["risk_metric"]) == (kind, "ndcg@5")
        assert row["aurc"] == pytest.approx(aurc, abs=1e-12)
        assert row["oracle_aurc"] == pytest.approx(oracle, abs=1e-12)
        assert row["e_aurc"] == pytest.approx(aurc - oracle, abs=1e-12)
        assert row["kendall_tau"] == pytest.approx(tau, abs=1e-12)
    # bm25 answers nothing for q02: its last threshold is -inf, in both kinds
    assert curve[curve.system == "bm25"]["threshold"].iloc[-1] == -np.inf


@pytest.mark.parametrize(("args", "message"), [
    (["--risk-metric", "map"], "--risk-metric 'map' is not among the metrics (ndcg@5, mrr)"),
    (["--risk-metric", "ndgc@5"], "unknown metric 'ndgc@5'"),
    (["--confidence-from", "entropy"], "'entropy' is not one of 'score', 'margin'"),
])
def test_risk_coverage_mistakes_are_refused_before_any_work(runner, tmp_path, args, message) -> None:
    assert message in refused(runner, tmp_path, "--systems", "bm25", "--metrics", "ndcg@5,mrr", *args)


class Confident(FixedRun):
    """A fixed run whose confidence(queries) is whatever it was given."""

    def __init__(self, rankings=None, given=None):
        super().__init__(rankings)
        self.given = given

    def confidence(self, queries):
        if isinstance(self.given, Exception):
            raise self.given
        return self.given


@pytest.mark.parametrize(("given", "message"), [
    ([0.5], "retriever 'mine': confidence(queries) returned shape (1,) for 14 queries. Fix: return one float"),
    ("high", "retriever 'mine': confidence(queries) returned a str that is not numbers. Fix:"),
    (ZeroDivisionError("oops"), "retriever 'mine' failed in confidence: ZeroDivisionError: oops. Fix:"),
    ([float("nan")] * 14, "system 'mine': a confidence is NaN (query 'q01'). Fix:"),
])
def test_a_retrievers_own_confidence_is_checked(given, message) -> None:
    from corpora import RetbenchError

    with pytest.raises(RetbenchError) as raised:
        compare({"mine": Confident({}, given)}, "article", "mrr", statistics=Statistics(bootstrap_samples=20))
    assert message in str(raised.value)


# ----- the leaderboard ---------------------------------------------------------------------------------

def test_the_bundled_leaderboard_is_one_group_of_four_printed_first(runner, tmp_path: Path) -> None:
    result, folder = run_cli(runner, tmp_path / "out", *ARTICLE, *FAST)
    board = read(folder, "leaderboard.csv")
    assert list(board.columns) == ["metric", "group", "system", "mean", "rank", "mean_rank", "rank_ci_low",
                                   "rank_ci_high"]
    assert list(dict.fromkeys(board["metric"])) == ["ndcg@5", "hit@3", "recall@5", "mrr"]
    for metric, rows in board.groupby("metric"):
        assert sorted(rows["system"]) == ["bm25", "lsa", "rrf", "weighted"] and set(rows["group"]) == {"a"}, metric
        assert ((1 <= rows.rank_ci_low) & (rows.rank_ci_low <= rows.mean_rank)).all()
        assert ((rows.mean_rank <= rows.rank_ci_high) & (rows.rank_ci_high <= 4)).all()
    # the means are summary.csv's, and the ranks those of the comparisons' resamples: numpy's stream, redrawn
    summary = read(folder, "summary.csv").set_index("system")
    per_query = read(folder, "per_query.csv")
    ndcg = board[board.metric == "ndcg@5"].set_index("system")
    assert ndcg["mean"].to_dict() == summary["ndcg@5"].to_dict()
    systems = ["bm25", "lsa", "weighted", "rrf"]
    values = np.column_stack([per_query.loc[per_query.system == s, "ndcg@5"] for s in systems])
    rows = np.random.default_rng(0).integers(0, 14, size=(200, 14))
    ranks = np.sort(pd.DataFrame(values[rows].mean(axis=1)).rank(axis=1, ascending=False, method="average")
                    .to_numpy(), axis=0)
    for j, system in enumerate(systems):
        assert ndcg.loc[system, "mean_rank"] == pytest.approx(ranks[:, j].mean(), abs=1e-12)
        assert ndcg.loc[system, ["rank_ci_low", "rank_ci_high"]].tolist() == [ranks[5, j], ranks[194, j]]
    # printed before the means table, one block per metric
    output = result.output
    assert output.index("leaderboard (mean rank over 200 bootstrap resamples") < output.index("system    ndcg@5  hit@3")
    assert "  ndcg@5    a      rrf       0.737" in output


def separable(n: int = 30) -> tuple[Dataset, dict[str, Retriever]]:
    """30 queries; 'good' and 'same' find the relevant document first, 'poor' second: two groups."""
    ids = [f"q{i:02d}" for i in range(n)]
    dataset = Dataset("separable", Corpus([f"d{i}" for i in range(n)] + ["x"], ["text"] * n + ["other"]),
                      Queries(ids, ["q"] * n), Qrels({q: {f"d{i}": 1} for i, q in enumerate(ids)}), "<memory>")
    first = {q: [f"d{i}"] for i, q in enumerate(ids)}
    second = {q: ["x", f"d{i}"] for i, q in enumerate(ids)}
    return dataset, {"poor": FixedRun(second), "good": FixedRun(first), "same": FixedRun(first)}


def test_with_a_baseline_the_groups_read_only_the_comparisons_made() -> None:
    dataset, _ = separable()
    against_poor = compare(separable()[1], dataset, "mrr", baseline="poor",
                           statistics=Statistics(bootstrap_samples=200))
    # only the two comparisons with the baseline are made, and the groups read those alone: good and
    # same were not compared, so they are not separated; both are separated from poor
    assert [(c.system_a, c.system_b) for c in against_poor.comparisons] == [("good", "poor"), ("same", "poor")]
    assert [c.verdict for c in against_poor.comparisons] == ["good is better", "same is better"]
    assert not hasattr(against_poor, "leaderboard_comparisons")
    board = against_poor.leaderboard
    assert dict(zip(board.system, board.group)) == {"good": "a", "same": "a", "poor": "b"}
    # against good: poor is worse, same identical; same and poor were not compared, so same shares a
    # letter with each (the same data, all pairs compared, separates them)
    against_good = compare(separable()[1], dataset, "mrr", baseline="good",
                           statistics=Statistics(bootstrap_samples=200))
    assert [c.verdict for c in against_good.comparisons] == ["good is better", "identical on every query"]
    assert dict(zip(against_good.leaderboard.system, against_good.leaderboard.group)) == \
        {"good": "a", "same": "ab", "poor": "b"}
    everything = compare(separable()[1], dataset, "mrr", statistics=Statistics(bootstrap_samples=200))
    assert dict(zip(everything.leaderboard.system, everything.leaderboard.group)) == \
        {"good": "a", "same": "a", "poor": "b"}


def test_with_a_baseline_the_text_and_manifest_say_which_pairs_the_groups_rest_on(runner, tmp_path: Path) -> None:
    result, with_baseline = run_cli(runner, tmp_path / "b", *ARTICLE, *FAST, "--baseline", "bm25")
    assert "no comparison calls one better; only pairs with bm25 were compared):" in result.output
    manifest = json.loads((with_baseline / "manifest.json").read_text())
    assert manifest["statistics"]["leaderboard"]["comparisons"] == \
        "the run's comparisons (those with the baseline; the other pairs are not separated)"


# ----- effect size and power ---------------------------------------------------------------------------

def test_power_columns_equal_the_reference_on_a_case_with_known_variance(runner, tmp_path: Path) -> None:
    # 20 queries: 'first' finds the relevant document first everywhere (rr 1); 'late' on 10 queries first,
    # on 10 second (rr 1/2). d = first - late: ten 0, ten 0.5 -> mean 0.25, sd sqrt(20 * 0.0625 / 19)
    ids = [f"q{i:02d}" for i in range(20)]
    dataset = Dataset("known", Corpus([f"d{i}" for i in range(20)] + ["x"], ["t"] * 21), Queries(ids, ["q"] * 20),
                      Qrels({q: {f"d{i}": 1} for i, q in enumerate(ids)}), "<memory>")
    first = FixedRun({q: [f"d{i}"] for i, q in enumerate(ids)})
    late = FixedRun({q: [f"d{i}"] if i % 2 else ["x", f"d{i}"] for i, q in enumerate(ids)})
    result = compare({"first": first, "late": late}, dataset, "mrr,hit@1", statistics=Statistics(bootstrap_samples=200))
    folder = result.write(tmp_path)
    rows = read(folder, "comparisons.csv")
    assert list(rows.columns)[-9:] == ["wins", "ties", "losses", "effect_size", "detectable_difference",
                                       "queries_needed", "effect_size_anova", "effect_size_anova_low",
                                       "effect_size_anova_high"]
    row = rows[rows.metric == "mrr"].iloc[0]
    sd = math.sqrt(20 * 0.0625 / 19)
    reference = TTestPower()
    assert (row["wins"], row["ties"], row["losses"]) == (10, 10, 0)
    assert row["effect_size"] == pytest.approx(0.25 / sd, abs=1e-12)
    detectable = reference.solve_power(effect_size=None, nobs=20, alpha=0.05, power=0.8, alternative="two-sided")
    assert row["detectable_difference"] == pytest.approx(detectable * sd, rel=1e-4)
    assert reference.power(effect_size=row["detectable_difference"] / sd, nobs=20, alpha=0.05) == \
        pytest.approx(0.8, abs=1e-9)
    needed = reference.solve_power(effect_size=0.25 / sd, nobs=None, alpha=0.05, power=0.8, alternative="two-sided")
    assert row["queries_needed"] == math.ceil(needed)
    # printed for the first metric only
    report = result.report()
    assert "effect size and power on mrr (paired t-test, alpha 0.05, 80% power; -- = none):" in report
    power = report.split("effect size and power on mrr")[1].splitlines()
    line = next(line for line in power if line.startswith("  first - late "))
    words = line.split()
    assert words[3:5] + words[-2:] == ["10/10/0", f"+{0.25 / sd:.2f}", f"{detectable * sd:.3f}", str(math.ceil(needed))]
    assert words[5] == f"+{math.sqrt(2) * 0.25 / sd:.2f}"  # two systems: ES_E = sqrt(2) d_z
    assert "effect size and power on hit@1" not in report


def test_bundled_comparisons_csv_keeps_its_columns_and_adds_the_power_figures(runner, tmp_path: Path) -> None:
    result, folder = run_cli(runner, tmp_path / "out", *ARTICLE)  # the article's 5,000 resamples
    with (folder / "comparisons.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    bm25_lsa = next(r for r in rows if (r["system_a"], r["system_b"], r["metric"]) == ("bm25", "lsa", "ndcg@5"))
    assert f"{float(bm25_lsa['mean_diff']):+.3f} [{float(bm25_lsa['ci_low']):+.3f}, " \
           f"{float(bm25_lsa['ci_high']):+.3f}]" == "+0.012 [-0.081, +0.107]"
    # 6 differing queries out of 14 (wins + losses), and the identical hit@3 pairs need no queries at all
    assert int(bm25_lsa["wins"]) + int(bm25_lsa["losses"]) == int(bm25_lsa["n_differing"]) == 6
    assert int(bm25_lsa["ties"]) == 8
    assert all(r["queries_needed"] == "" for r in rows if r["metric"] == "hit@3")
    assert "effect size and power on ndcg@5" in result.output


# ----- duplicate versions ------------------------------------------------------------------------------

POLICY = ("Refund policy. You can ask for your money back within 30 days of purchase by writing to the billing "
          "team from the account page. Refunds are paid to the card you used and take five to seven working days "
          "to arrive. Annual plans are refunded for the months you have not used, and monthly plans for the "
          "current month only.")
DOCUMENTS = {
    "refund-2024": POLICY,
    "refund-2025": POLICY.replace("within 30 days", "within 14 days"),  # one word changed: Jaccard 54/58
    "export": "Export your notes. Open the settings page, choose export, and download every notebook as a zip "
              "file of markdown documents with their attachments.",
    "password": "Reset a forgotten password from the sign-in page; a link is sent to your e-mail address.",
}


def versions_corpus(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n"
                                                 for d, t in DOCUMENTS.items()))
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "how many days to get my money back"}\n'
                                          '{"_id": "q2", "text": "export notebooks as markdown"}\n')
    (folder / "qrels" / "test.tsv").write_text("q1\trefund-2025\t2\nq2\texport\t1\n")
    return folder


def test_two_versions_of_one_document_show_duplicate_versions(runner, tmp_path: Path) -> None:
    corpus = versions_corpus(tmp_path / "versions")
    result, folder = run_cli(runner, tmp_path / "out", "--corpus", str(corpus), "--systems", "bm25",
                             "--metrics", "mrr", *FAST)
    diagnosis = read(folder, "diagnosis.csv")
    # q1 finds both versions, tied (ids ascending), its relevant one second: within the top 3, but the two
    # versions take two of its three places; q2 is fine
    assert diagnosis[["system", "query_id", "category"]].values.tolist() == [["bm25", "q1", "duplicate versions"]]
    duplicates = read(folder, "duplicates.csv")
    assert duplicates[["system", "query_id", "rank_a", "rank_b"]].values.tolist() == [["bm25", "q1", 1, 2]]
    assert {duplicates.loc[0, "doc_a"], duplicates.loc[0, "doc_b"]} == {"refund-2024", "refund-2025"}
    assert duplicates.loc[0, "jaccard"] == pytest.approx(54 / 58, abs=1e-15)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["diagnosis"]["duplicates"] == {"bm25": 1}
    assert " bm25: 1 failed query, 1 with duplicate versions in the top 3" in result.output
    assert "[duplicate versions]" in result.output and "shingle Jaccard 0.931" in result.output
    for line in readme_block(" bm25: 1 failed query"):  # the README shows this run
        assert line in result.output.splitlines(), line
    # the library: the same failure, pairs and counts
    library = compare(["bm25"], str(corpus), "mrr", statistics=Statistics(bootstrap_samples=50))
    (failure,) = library.failures
    assert (failure.query_id, failure.category, failure.rank) == ("q1", "duplicate versions", 2)
    assert library.duplicates["query_id"].tolist() == ["q1"]
    assert library.duplicates.to_csv(index=False, lineterminator="\n") == (folder / "duplicates.csv").read_text()


def test_a_fail_rank_of_one_leaves_no_room_for_two_versions(tmp_path: Path) -> None:
    corpus = versions_corpus(tmp_path / "versions")
    result = compare(["bm25"], str(corpus), "mrr", statistics=Statistics(bootstrap_samples=50),
                     readings=Readings(fail_rank=1))
    # one place holds no pair: q1 is then what it otherwise is, its relevant version at rank 2
    assert [(f.query_id, f.category, f.rank) for f in result.failures] == [("q1", "late rank", 2)]
    assert result.duplicates.empty


def test_the_articles_diagnosis_has_no_duplicate_versions(runner, tmp_path: Path) -> None:
    result, folder = run_cli(runner, tmp_path / "out", *ARTICLE, *FAST)
    diagnosis = read(folder, "diagnosis.csv").set_index(["system", "query_id"])
    assert diagnosis.loc[("bm25", "q02"), "category"] == "vocabulary gap"
    assert diagnosis.loc[("bm25", "q10"), "category"] == "surface homonymy"
    assert "duplicate versions" not in set(diagnosis["category"])
    assert read(folder, "duplicates.csv").empty
    assert json.loads((folder / "manifest.json").read_text())["diagnosis"]["duplicates"] == \
        {"bm25": 0, "lsa": 0, "weighted": 0, "rrf": 0}


# ----- the documentation shows real runs ----------------------------------------------------------------------

def readme_block(after: str) -> list[str]:
    """The lines of the first fenced block of docs/compare.md (what `bench compare` prints, moved there
    from the README) that starts with ``after``."""
    text = (REPO / "docs" / "compare.md").read_text(encoding="utf-8")
    start = text.index("```\n" + after) + 4
    return text[start:text.index("```", start)].rstrip("\n").splitlines()


def test_the_readmes_leaderboard_power_facet_and_risk_blocks_are_printed(runner, tmp_path: Path) -> None:
    result, _ = run_cli(runner, tmp_path / "a", "--systems", "bm25,lsa,weighted,rrf", "--metrics",
                        "ndcg@5,mrr,recall@5")
    for line in readme_block("leaderboard ("):
        assert line in result.output.splitlines(), line
    topics = {**{q: "billing" for q in ("q01", "q02", "q07", "q11", "q14")},
              **{q: "data" for q in ("q03", "q05", "q10", "q13")}}
    path = tmp_path / "topics.csv"
    path.write_text("query_id,topic\n" + "".join(f"q{i:02d},{topics.get(f'q{i:02d}', 'product')}\n"
                                                  for i in range(1, 15)), encoding="utf-8")
    result, _ = run_cli(runner, tmp_path / "b", "--systems", "bm25,lsa,weighted,rrf", "--metrics", "ndcg@5,mrr",
                        "--facets-file", str(path))
    printed = result.output.splitlines()
    for start in ("facet topic:", "effect size and power", "risk–coverage ("):
        for line in readme_block(start):
            assert line in printed, line
