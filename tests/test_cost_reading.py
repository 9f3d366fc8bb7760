"""The cost reading (harness.readings.cost, measured by harness.engines.cost): efficiency.csv and
latency_comparisons.csv, the manifest's machine record, and where the cost is shown.

Timings never enter the configuration hash nor any other file: two runs of the same command differ
only in the cost reading's two files and the manifest (which records the times and hashes those
files); report.txt leaves the cost out, the terminal prints it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from corpora import Queries
from harness import compare
from harness.cli import main
from harness.engines.cost import PeakMemory, index_size, sample_queries
from harness.core.options import RunOptions, Statistics
from harness.errors import RetbenchError
from harness.readings.cost import EFFICIENCY_COLUMNS, WORKER_COLUMNS, pareto_front, size_text
from retrievers import BM25, Retriever, fit_retriever
from retrievers.footprint import held_bytes

FAST = ["--bootstrap-samples", "200", "--permutations", "200", "--no-cache", "--latency-queries", "8",
        "--latency-rounds", "2"]
#: What a run writes that holds its own time: the manifest, the card's lines (the run id), the cost reading.
TIMED = ("manifest.json", "retrieval_metrics.jsonl", "efficiency.csv", "latency_comparisons.csv")


def _compare(tmp_path: Path, *args: str):
    return CliRunner().invoke(main, ["compare", "--out", str(tmp_path / "out"), *FAST, *args])


def _folders(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "out").iterdir() if p.is_dir())


def test_every_column_is_filled_for_the_built_ins_and_a_fusion_includes_its_children(tmp_path) -> None:
    done = _compare(tmp_path, "--systems", "bm25,lsa,rrf(bm25,lsa)", "--metrics", "ndcg@5")
    assert done.exit_code == 0, done.output
    (folder,) = _folders(tmp_path)
    frame = pd.read_csv(folder / "efficiency.csv", dtype={"system": str, "includes": str}, keep_default_na=False)
    assert list(frame.columns) == EFFICIENCY_COLUMNS
    assert list(frame["system"]) == ["bm25", "lsa", "rrf"]
    filled = frame.drop(columns=["includes", *WORKER_COLUMNS])
    assert (filled != "").all().all(), filled  # nothing unknown for retbench's own retrievers
    assert (frame[WORKER_COLUMNS] == "").all().all()  # no engine's workers ran them (tests/test_cost_dask.py)
    assert list(frame["includes"]) == ["", "", "bm25;lsa"]
    sizes = dict(zip(frame["system"], frame["index_bytes"].astype(int)))
    assert sizes["rrf"] >= sizes["bm25"] + sizes["lsa"]  # a fusion's index holds its children's
    assert set(frame["latency_queries"]) == {8} and set(frame["latency_rounds"]) == {2}
    assert (frame["latency_p50_ms"].astype(float) <= frame["latency_p99_ms"].astype(float)).all()
    assert (frame["n_documents"] == 28).all() and (frame["n_queries"] == 14).all()
    pairs = pd.read_csv(folder / "latency_comparisons.csv")
    assert [tuple(p) for p in pairs[["system_a", "system_b"]].to_numpy()] == [("bm25", "lsa"), ("bm25", "rrf"),
                                                                             ("lsa", "rrf")]
    assert set(pairs["verdict"]) <= {"slower", "faster", "no clear difference"}
    manifest = json.loads((folder / "manifest.json").read_text())
    cost = manifest["cost"]
    assert {"cpu", "cores", "usable_cores", "blas", "python", "libraries", "engine"} <= set(cost["machine"])
    assert cost["machine"]["engine"]["name"] == "local" and "numpy" in cost["machine"]["libraries"]
    assert cost["latency"]["queries"] == 8 and cost["latency"]["rounds"] == 2 and cost["memory"]
    assert "efficiency.csv" in manifest["files"] and "latency_comparisons.csv" in manifest["files"]
    # the terminal shows the cost; report.txt, which must stay the same bytes run to run, does not
    assert "cost on this machine" in done.output and "rrf (incl. bm25, lsa)" in done.output
    assert "incl. = a fusion's index size and latency count those children" in done.output
    assert "cost on this machine" not in (folder / "report.txt").read_text()


def test_two_runs_differ_only_in_what_holds_their_times(tmp_path) -> None:
    args = ["--systems", "bm25,lsa", "--metrics", "ndcg@5,mrr"]
    assert _compare(tmp_path, *args).exit_code == 0
    assert _compare(tmp_path, *args, "--latency-queries", "5").exit_code == 0
    first, second = _folders(tmp_path)
    compared = 0
    for path in first.rglob("*"):
        if path.is_file() and path.name not in TIMED:
            assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path.name
            compared += 1
    assert compared >= 15
    m1, m2 = (json.loads((f / "manifest.json").read_text()) for f in (first, second))
    # the latency settings and the times are not configuration: the configuration hash is the same
    assert m1["hashes"]["configuration"] == m2["hashes"]["configuration"]
    assert m1["cost"]["machine"] == m2["cost"]["machine"]
    assert (m1["cost"]["latency"]["queries"], m2["cost"]["latency"]["queries"]) == (8, 5)


def test_latency_off_leaves_its_columns_empty(tmp_path) -> None:
    result = compare(["bm25", "lsa"], "article", ["mrr"], statistics=Statistics(bootstrap_samples=200),
                     run=RunOptions(latency_queries=0))
    frame = result.table("efficiency")
    assert frame["latency_queries"].isna().all() and frame["latency_p95_ms"].isna().all()
    assert frame["fit_seconds"].notna().all() and frame["index_bytes"].notna().all()
    assert result.table("latency_comparisons").empty
    assert result.write(tmp_path / "out", command_line=[]).joinpath("efficiency.csv").is_file()


class Opaque(Retriever):
    """A plugin that keeps its index in a form the harness cannot size, and says nothing."""

    name = "opaque"

    def fit(self, corpus):
        super().fit(corpus)
        self.index = {d: i for i, d in enumerate(corpus.ids)}
        return self

    def search(self, queries: Queries, k: int):
        return {q: [(d, 1.0)] for q, d in zip(queries.ids, list(self.index)[:len(queries.ids)])}


class Declared(Opaque):
    """The same plugin, declaring its index's size."""

    name = "declared"

    def index_bytes(self) -> int:
        return 1234


class Wrong(Opaque):
    name = "wrong"

    def index_bytes(self):
        return "big"


def test_a_plugin_index_is_unknown_unless_declared() -> None:
    result = compare({"opaque": Opaque(), "declared": Declared()}, "article", ["mrr"],
                     statistics=Statistics(bootstrap_samples=200), run=RunOptions(latency_queries=3))
    frame = result.table("efficiency").set_index("system")
    assert pd.isna(frame.loc["opaque", "index_bytes"])  # unknown, never a guess
    assert frame.loc["declared", "index_bytes"] == 1234
    assert frame["latency_p95_ms"].notna().all()  # latency is measured for any system
    assert size_text(frame.loc["opaque", "index_bytes"]) == "unknown"


def test_a_wrong_declaration_is_an_error_naming_the_class() -> None:
    wrong = Wrong()
    with pytest.raises(RetbenchError, match=r"Wrong.index_bytes\(\) returned 'big'"):
        index_size(fit_retriever(wrong, _corpus()))


def _corpus():
    from corpora import load_dataset

    return load_dataset("article").corpus


def test_a_fusion_of_an_unknown_child_is_unknown() -> None:
    from retrievers import RRF

    fused = fit_retriever(RRF(BM25(), Opaque()), _corpus())
    size, children = index_size(fused)
    assert size is None and children == ("bm25", "opaque")


def test_a_stored_run_shows_only_what_is_known(tmp_path) -> None:
    first = compare(["bm25"], "article", ["mrr"], statistics=Statistics(bootstrap_samples=200),
                    run=RunOptions(latency_queries=0)).write(tmp_path / "a", command_line=[])
    run_file = first / "runs" / "bm25.trec"
    result = compare([f"run({run_file})", "bm25"], "article", ["mrr"], statistics=Statistics(bootstrap_samples=200),
                     run=RunOptions(latency_queries=4))
    frame = result.table("efficiency").set_index("system")
    stored = frame.iloc[0]  # the run's label is the file's name
    assert pd.isna(stored["index_bytes"]) and pd.isna(stored["latency_p95_ms"])  # no index, no search of its own
    assert not pd.isna(stored["fit_seconds"])  # reading the file is its fit
    assert frame["latency_p95_ms"].notna().sum() == 1


def test_peak_memory_sees_what_numpy_allocates() -> None:
    with PeakMemory() as probe:
        block = np.ones(40_000_000 // 8)  # 40 MB, touched
        block.sum()
    del block
    if probe.added is None:
        pytest.skip("peak memory is not measurable on this platform")
    assert probe.added >= 30_000_000


def test_held_bytes_counts_a_shared_buffer_once_and_refuses_a_foreign_object() -> None:
    class Index:
        pass

    index = Index()
    index.vectors = np.zeros((100, 10))
    index.rows = index.vectors[:50]
    assert held_bytes(index) == 8000
    index.client = object()  # something of another library: not sized, so unknown
    assert held_bytes(index) is None


def test_the_sample_is_seeded_and_in_query_order() -> None:
    ids = [f"q{i}" for i in range(50)]
    assert sample_queries(ids, 10, 0) == sample_queries(ids, 10, 0)
    picked = sample_queries(ids, 10, 0)
    assert picked == sorted(picked, key=ids.index) and len(set(picked)) == 10
    assert sample_queries(ids, 80, 0) == ids


def test_pareto_front_keeps_what_nothing_beats() -> None:
    # (cost, quality): a is cheapest, c is best, b is beaten by a on both
    assert pareto_front([1.0, 2.0, 3.0], [0.5, 0.4, 0.9]) == [0, 2]
    assert pareto_front([1.0, 1.0], [0.3, 0.6]) == [1]


def test_markdown_and_latex_carry_the_table(tmp_path) -> None:
    result = compare(["bm25", "lsa"], "article", ["mrr"], statistics=Statistics(bootstrap_samples=200),
                     run=RunOptions(latency_queries=4))
    markdown, latex = result.report("md"), result.report("latex")
    assert "p95 ms" in markdown and "| bm25 |" in markdown
    assert r"\label{tab:retbench-cost}" in latex and "bm25 &" in latex


def test_html_draws_the_chart_with_the_pareto_front(tmp_path) -> None:
    pytest.importorskip("matplotlib", reason="the HTML report's charts need the report extra")
    result = compare(["bm25", "lsa", "rrf(bm25,lsa)"], "article", ["mrr", "ndcg@5"],
                     statistics=Statistics(bootstrap_samples=200), run=RunOptions(latency_queries=4))
    html = result.report("html")
    section = html[html.index('id="cost"'):]
    assert "<svg" in section[:200_000] and "Pareto front" in section and 'id="cost-table"' in section
    assert "p95 latency (ms, log)" in section and "index size (bytes, log)" in section


def test_the_cost_chart_renders_in_chromium_at_1280_px(tmp_path) -> None:
    """The HTML report's cost section in a real browser: the chart is drawn inside the page's width,
    with a point per system and the table beside it."""
    import shutil

    pytest.importorskip("matplotlib", reason="the HTML report's charts need the report extra")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists() and shutil.which("chromium") is None:
        pytest.skip("no chromium at /usr/bin/chromium (Debian's chromium package)")
    result = compare(["bm25", "lsa", "rrf(bm25,lsa)"], "article", ["mrr"], statistics=Statistics(bootstrap_samples=200),
                     run=RunOptions(latency_queries=4))
    page_file = tmp_path / "report.html"
    page_file.write_text(result.report("html"), encoding="utf-8")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_file.as_uri())
        chart = page.locator("#cost svg").first
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        assert box is not None and 300 < box["width"] <= 1280 and box["height"] > 100
        assert page.locator("#cost-table tbody tr").count() == 3
        shot = chart.screenshot(path=str(tmp_path / "cost.png"))
        browser.close()
    assert len(shot) > 5_000  # an image with something drawn, not an empty box


def test_a_suite_carries_the_table_per_collection_and_a_macro_row(tmp_path) -> None:
    from harness.suite.run import compare_suite

    other = tmp_path / "other"
    other.mkdir()
    words = ["apple", "pear", "plum", "fig", "kiwi", "lime"]
    (other / "corpus.jsonl").write_text("".join(json.dumps({"id": f"d{i}", "text": f"{w} {words[i - 1]} fruit"}) + "\n"
                                                for i, w in enumerate(words)))
    (other / "queries.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "text": w}) + "\n"
                                                 for i, w in enumerate(words)))
    (other / "qrels.tsv").write_text("".join(f"q{i}\td{i}\t1\n" for i in range(len(words))))
    suite = compare_suite(["bm25", "lsa"], ["article", str(other)], ["mrr"], statistics=Statistics(bootstrap_samples=200),
                          run=RunOptions(latency_queries=4))
    folder = suite.write(tmp_path / "suite", command_line=["test"])
    table = pd.read_csv(folder / "suite_efficiency.csv", dtype={"collection": str, "system": str})
    assert list(table["collection"]) == ["article", "article", "other", "other", "macro", "macro"]
    per = table[table["collection"] != "macro"]
    for system in ("bm25", "lsa"):
        macro = table[(table["collection"] == "macro") & (table["system"] == system)].iloc[0]
        mine = per[per["system"] == system]
        assert macro["latency_p95_ms"] == pytest.approx(mine["latency_p95_ms"].mean())
        assert macro["index_bytes"] == pytest.approx(mine["index_bytes"].mean())
    assert "suite_efficiency.csv" in json.loads((folder / "manifest.json").read_text())["files"]


def test_bench_serve_gives_each_system_its_cost_and_the_run_page_its_latency(tmp_path) -> None:
    pytest.importorskip("fastapi", reason="bench serve's store needs the serve extra")
    from harness.serve.dashboard import run_page
    from harness.serve.store import RunStore

    folder = compare(["bm25", "lsa"], "article", ["mrr"], statistics=Statistics(bootstrap_samples=200),
                     run=RunOptions(latency_queries=4)).write(tmp_path, command_line=["bench", "compare"])
    store = RunStore(tmp_path)
    systems = store.metrics(folder.name)["systems"]
    stored = pd.read_csv(folder / "efficiency.csv").set_index("system")
    for system in systems:
        cost = system["cost"]
        assert cost["latencyP95Ms"] == stored.loc[system["system"], "latency_p95_ms"]
        assert cost["indexBytes"] == stored.loc[system["system"], "index_bytes"]
    page = run_page(store, folder.name)
    assert '<h2 id="cost">' in page and f'data-value="{systems[0]["cost"]["latencyP95Ms"]}"' in page
