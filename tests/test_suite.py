"""Suites: the same systems on several collections, one suite folder, a macro average whose interval
respects the collections (harness.suite)."""

from __future__ import annotations

import itertools
import json
import shutil
import statistics as pystats
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from corpora import RetbenchError
from harness.core.options import RunOptions, Statistics
from harness import compare, compare_suite
from harness.cli import main
from harness.suite.statistics import macro_statistics, tally_sentence

FAST = dict(statistics=Statistics(bootstrap_samples=200, permutations=200), run=RunOptions(cache=False))
CLI_FAST = ["--bootstrap-samples", "200", "--permutations", "200", "--no-cache"]
WORDS = "apple banana cherry grape lemon mango olive peach pear plum".split()


def small_collection(folder: Path, seed: int, n_docs: int = 24, n_queries: int = 8) -> Path:
    """A BEIR folder of random fruit documents; each query's two words are in its relevant documents."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    docs = [" ".join(rng.choice(WORDS, size=6)) for _ in range(n_docs)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n"
                                                 for i, t in enumerate(docs)))
    queries, qrels = [], ["query-id\tcorpus-id\tscore"]
    for q in range(n_queries):
        words = list(rng.choice(WORDS, size=2, replace=False))
        queries.append(json.dumps({"_id": f"q{q}", "text": " ".join(words)}) + "\n")
        judged = {f"d{q}": 1}  # at least one relevant document
        for i, text in enumerate(docs):
            if all(w in text.split() for w in words) or (words[0] in text.split() and rng.random() < 0.3):
                judged[f"d{i}"] = 1 + int(rng.random() < 0.4)
        qrels += [f"q{q}\t{d}\t{grade}" for d, grade in judged.items()]
    (folder / "queries.jsonl").write_text("".join(queries))
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    return folder


# ----- statistics against independent implementations ---------------------------------------------------


def _synthetic(seed: int, sizes: tuple[int, ...]) -> list[dict[str, dict[str, np.ndarray]]]:
    rng = np.random.default_rng(seed)
    out = []
    for k, n in enumerate(sizes):
        base = rng.random(n)
        out.append({"a": {"m": np.clip(base + 0.1 * k + rng.normal(0.05, 0.2, n), 0, 1)}, "b": {"m": base}})
    return out


def test_macro_interval_matches_an_independent_stratified_bootstrap():
    values = _synthetic(3, (12, 30, 60))
    stats = macro_statistics(values, ["a", "b"], ["m"], [("a", "b")], Statistics(bootstrap_samples=20_000, seed=0))
    (c,) = stats.comparisons
    # independent: 20,000 resamples drawn within each collection from another stream
    rng = np.random.default_rng(12345)
    diffs = [v["a"]["m"] - v["b"]["m"] for v in values]
    macro = np.mean([d[rng.integers(0, len(d), size=(20_000, len(d)))].mean(axis=1) for d in diffs], axis=0)
    low, high = np.percentile(macro, [2.5, 97.5])
    spread = macro.std()
    assert c.mean_diff == pytest.approx(np.mean([d.mean() for d in diffs]), abs=1e-15)
    assert abs(c.ci_low - low) < 0.1 * spread and abs(c.ci_high - high) < 0.1 * spread
    # not the unstratified interval: pooling the queries weighs the large collection more
    pooled = np.concatenate(diffs)
    assert abs(pooled.mean() - c.mean_diff) > 0.01


def test_macro_p_value_is_the_exact_stratified_sign_flip():
    values = _synthetic(5, (3, 4, 5))  # 12 differing queries: every pattern is enumerated
    (c,) = macro_statistics(values, ["a", "b"], ["m"], [("a", "b")], Statistics(bootstrap_samples=100, seed=0)).comparisons
    weighted = np.concatenate([(v["a"]["m"] - v["b"]["m"]) / (3 * len(v["a"]["m"])) for v in values])
    observed = abs(weighted.sum())
    extreme = sum(abs(np.dot(signs, weighted)) >= observed - 1e-12
                  for signs in itertools.product((1.0, -1.0), repeat=len(weighted)))
    assert c.test == "exact"
    assert c.p_value == pytest.approx(extreme / 2 ** len(weighted), abs=1e-12)


def test_tally_names_the_system_that_wins_more_collections():
    row = {"system_a": "lsa", "system_b": "bm25", "n_collections": 4, "wins": 1, "ties": 0, "losses": 3,
           "better_on": 0, "worse_on": 2}
    assert tally_sentence(row).startswith("bm25 beats lsa on 3 of 4 collections (significantly on 2)")


# ----- the library ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """A suite of the article and one small synthetic collection, and the single-collection results."""
    root = tmp_path_factory.mktemp("suite")
    other = small_collection(root / "fruit", seed=1)
    systems, metrics = "bm25,lsa,rrf", ["ndcg@10", "mrr"]
    result = compare_suite(systems, ["article", str(other)], metrics, **FAST)
    folder = result.write(root / "out", command_line=["test"])
    singles = [compare(systems, name, metrics, **FAST).write(root / "single", command_line=["test"])
               for name in ("article", str(other))]
    return result, folder, singles


def test_each_collection_equals_its_single_run(two):
    result, folder, singles = two
    for entry, single in zip(json.loads((folder / "manifest.json").read_text())["collections"], singles):
        inside = folder / entry["folder"]
        for name in ("summary.csv", "per_query.csv", "comparisons.csv", "leaderboard.csv", "qrels.txt",
                     "runs/bm25.trec"):
            assert (inside / name).read_bytes() == (single / name).read_bytes(), name


def test_macro_rows_are_the_mean_of_the_collections_means(two):
    _, folder, singles = two
    summary = pd.read_csv(folder / "suite_summary.csv")
    assert list(summary.columns[:4]) == ["collection", "system", "ndcg@10", "mrr"]
    for system in ("bm25", "lsa", "rrf"):
        for metric in ("ndcg@10", "mrr"):
            means = [pd.read_csv(s / "summary.csv").set_index("system").at[system, metric] for s in singles]
            macro = summary[(summary.collection == "macro") & (summary.system == system)][metric].item()
            assert macro == pystats.fmean(means)
            pooled = pd.concat([(lambda f: f[f.system == system][metric])(pd.read_csv(s / "per_query.csv")) for s in singles])
            micro = summary[summary.collection.str.startswith("micro") & (summary.system == system)][metric].item()
            assert micro == pytest.approx(pooled.mean(), abs=1e-12)


def test_suite_files_and_manifest(two):
    result, folder, _ = two
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["kind"] == "suite"
    assert [c["name"] for c in manifest["collections"]] == ["article", "fruit"]
    assert all(len(c["hashes"]["documents"]) == 64 for c in manifest["collections"])
    assert set(manifest["files"]) == {"suite_summary.csv", "suite_comparisons.csv", "suite_leaderboard.csv",
                                      "suite_efficiency.csv", "report.txt"}
    comparisons = pd.read_csv(folder / "suite_comparisons.csv")
    assert list(comparisons.columns[:9]) == ["system_a", "system_b", "metric", "mean_diff", "ci_low", "ci_high",
                                            "p_value", "p_adjusted", "verdict"]
    assert (comparisons.wins + comparisons.ties + comparisons.losses == 2).all()
    # the leaderboard's letters agree with the macro verdicts: "X is better" exactly when no letter is shared
    board = pd.read_csv(folder / "suite_leaderboard.csv", dtype=str, keep_default_na=False)
    letters = {(r.metric, r.system): set(r.group) for r in board.itertuples()}
    for c in comparisons.itertuples():
        shared = letters[(c.metric, c.system_a)] & letters[(c.metric, c.system_b)]
        assert bool(shared) != c.verdict.endswith(" is better"), c


def test_same_seed_same_bytes(two, tmp_path):
    result, folder, _ = two
    again = compare_suite(["bm25", "lsa", "rrf"], ["article", result.collections[1].given], ["ndcg@10", "mrr"],
                          **FAST).write(tmp_path, command_line=["test"])
    for name in ("suite_summary.csv", "suite_comparisons.csv", "suite_leaderboard.csv"):
        assert (again / name).read_bytes() == (folder / name).read_bytes()


def test_a_collection_twice_is_refused_before_any_work(tmp_path):
    from corpora.loading import bundled_path

    with pytest.raises(RetbenchError, match=r"collection 2 .*is collection 1 again"):
        compare_suite("bm25", ["article", str(bundled_path("article"))], "mrr", **FAST)
    copy = shutil.copytree(bundled_path("article"), tmp_path / "copy")
    with pytest.raises(RetbenchError, match="holds the same documents, queries and judgments as article"):
        compare_suite("bm25", ["article", str(copy)], "mrr", **FAST)
    with pytest.raises(RetbenchError, match="no such folder"):
        compare_suite("bm25", ["article", str(tmp_path / "missing")], "mrr", **FAST)


# ----- the CLI: compare, report, gate ------------------------------------------------------------------


def test_cli_suite_report_and_gate(runner, tmp_path):
    other = small_collection(tmp_path / "fruit", seed=2)
    out = tmp_path / "out"
    base = ["compare", "--corpus", "article", "--corpus", str(other), "--metrics", "ndcg@10,mrr", "--out", str(out),
            *CLI_FAST]
    first = runner.invoke(main, [*base, "--systems", "bm25,lsa", "--report", "md"])
    assert first.exit_code == 0, first.output
    assert "collection 2/2: " in first.output and "suite of 2 collections" in first.output
    assert "macro comparisons, ndcg@10" in first.output
    (suite,) = [p for p in out.iterdir() if p.is_dir()]
    assert (suite / "report.md").is_file() and (suite / "collections" / "article" / "summary.csv").is_file()

    html = runner.invoke(main, ["report", str(suite), "--format", "html"])
    if find_spec("matplotlib") is None:  # without the report extra: refused, saying how to install it
        assert html.exit_code == 2 and "pip install 'retbench[report]'" in html.output, html.output
    else:
        assert html.exit_code == 0 and 'class="heat"' in html.output and '>macro</th>' in html.output
    latex = runner.invoke(main, ["report", str(suite), "--format", "latex"])
    assert latex.exit_code == 2 and "not available for a suite" in latex.output
    single = runner.invoke(main, ["report", str(suite / "collections" / "fruit"), "--format", "md"])
    assert single.exit_code == 0 and "fruit" in single.output

    second = runner.invoke(main, [*base, "--systems", "lsa"])
    assert second.exit_code == 0, second.output
    candidate = next(p for p in out.iterdir() if p.is_dir() and p != suite)
    gated = runner.invoke(main, ["gate", str(suite), str(candidate), "--metric", "ndcg@10,mrr", "--system", "lsa",
                                 "--bootstrap-samples", "200", "--permutations", "200"])
    assert gated.exit_code == 0, gated.output
    assert "suite gate: unchanged" in gated.output and "per collection" in gated.output
    drop = runner.invoke(main, ["gate", str(suite), str(candidate), "--metric", "ndcg@10", "--baseline-system",
                                "bm25", "--candidate-system", "lsa", "--bootstrap-samples", "200"])
    assert drop.exit_code in (0, 1) and "macro diff" in drop.output
    mixed = runner.invoke(main, ["gate", str(suite), str(suite / "collections" / "fruit"), "--metric", "mrr"])
    assert mixed.exit_code == 2 and "is a suite folder and" in mixed.output

    (suite / "suite_summary.csv").write_text("collection,system\n")
    edited = runner.invoke(main, ["report", str(suite), "--format", "md"])
    assert edited.exit_code == 2 and "edited" in edited.output


@pytest.mark.slow
def test_real_collections_equal_their_single_runs(tmp_path, shared_data):
    names = [str(shared_data / n) for n in ("cranfield", "cisi", "med")]
    result = compare_suite("bm25,lsa", names, ["ndcg@10", "map"],
                           statistics=Statistics(bootstrap_samples=500, permutations=500))
    folder = result.write(tmp_path / "suite", command_line=["test"])
    summary = pd.read_csv(folder / "suite_summary.csv")
    for name in names:
        single = compare("bm25,lsa", name, ["ndcg@10", "map"],
                         statistics=Statistics(bootstrap_samples=500, permutations=500)).write(tmp_path / "single", command_line=["test"])
        inside = folder / "collections" / Path(name).name
        for file in ("summary.csv", "per_query.csv", "comparisons.csv"):
            assert (inside / file).read_bytes() == (single / file).read_bytes()
    rows = summary[summary.collection.isin(["cranfield", "cisi", "med"]) & (summary.system == "bm25")]
    macro = summary[(summary.collection == "macro") & (summary.system == "bm25")]
    assert macro["map"].item() == pystats.fmean(rows["map"])


def test_serve_lists_and_shows_suites(two):
    pytest.importorskip("fastapi", reason="bench serve needs the serve extra")
    from fastapi.testclient import TestClient

    from harness.serve.app import create_app

    _, folder, _ = two
    client = TestClient(create_app(folder.parent), base_url="http://127.0.0.1")
    listed = client.get("/api/v1/evals/suites").json()
    assert [s["id"] for s in listed["items"]] == [folder.name]
    assert listed["items"][0]["collections"] == ["article", "fruit"]
    detail = client.get(f"/api/v1/evals/suites/{folder.name}").json()
    macro = [row for row in detail["summary"] if row["collection"] == "macro"]
    stored = pd.read_csv(folder / "suite_summary.csv")
    assert [row["mrr"] for row in macro] == stored[stored.collection == "macro"]["mrr"].tolist()
    assert len(detail["comparisons"]) == 6 and all("verdict" in c for c in detail["comparisons"])
    page = client.get(f"/suites/{folder.name}")
    assert page.status_code == 200 and 'class="heat"' in page.text
    assert client.get("/api/v1/evals/suites/nope").status_code == 404
    runs = [r["id"] for r in client.get("/api/v1/evals/runs").json()["items"]]  # a suite is not one run; its
    assert sorted(runs) == [f"{folder.name}~article", f"{folder.name}~fruit"]  # collections are, by suite and name


def _dataset(name: str, n: int):
    from corpora import Corpus, Dataset, Qrels, Queries

    docs = [f"d{i}" for i in range(n + 5)]
    corpus = Corpus(docs, [f"text {d}" for d in docs])
    queries = Queries([f"{name}-q{i}" for i in range(n)], [f"query {i}" for i in range(n)])
    return Dataset(name, corpus, queries, Qrels({f"{name}-q{i}": {f"d{i}": 1} for i in range(n)}), "<memory>")


def test_gate_of_two_suites_finds_a_drop_on_one_collection(tmp_path):
    from retrievers import FixedRun

    from harness.suite.gate import gate_suites
    from harness.suite.store import open_suite

    data = [_dataset("one", 30), _dataset("two", 25)]

    def ranking(dataset, worse: bool):
        n = len(dataset.queries)
        return {q: ([f"d{n}", f"d{n + 1}", f"d{n + 2}", f"d{i}"] if worse else [f"d{i}"])
                for i, q in enumerate(dataset.queries.ids)}

    def suite(worse_on_two: bool):
        runs = {**ranking(data[0], False), **ranking(data[1], worse_on_two)}
        return compare_suite({"sys": FixedRun(runs)}, data, "mrr", **FAST).write(tmp_path, command_line=["test"])

    before, after = open_suite(suite(False)), open_suite(suite(True))
    result = gate_suites(before, after, "mrr", statistics=Statistics(bootstrap_samples=500, permutations=500))
    (macro,) = result.metrics
    assert macro.comparison.mean_diff == pytest.approx((0.0 + (0.25 - 1.0)) / 2)
    assert macro.verdict == "regressed" and result.exit_code() == 1
    assert [(d.collection, d.metric) for d in result.drops] == [("two", "mrr")]
    assert [m.verdict for m in result.collections["one"].metrics] == ["unchanged"]
    same = gate_suites(before, before, "mrr", statistics=Statistics(bootstrap_samples=200, permutations=200))
    assert same.verdict == "unchanged" and not same.drops
    with pytest.raises(RetbenchError, match=r"`statistics.family` is 'all', which a gate does not take"):
        gate_suites(before, after, "mrr", statistics=Statistics(family="all"))
