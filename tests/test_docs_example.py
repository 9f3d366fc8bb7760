"""docs/adding-a-retriever.md runs as written: its example, its command line, its messages."""

from __future__ import annotations

import csv
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.inputs import build_systems
from harness.cli.experiment import load_experiment
from retrievers.dense import missing_dependency
from harness.core.options import Scoring, Statistics

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "adding-a-retriever.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, re.S)


EXAMPLE = blocks("python")[0]


@pytest.fixture
def example_module(tmp_path, monkeypatch) -> Path:
    """The example saved as my_retriever.py, as the doc says, on the import path."""
    (tmp_path / "my_retriever.py").write_text(EXAMPLE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_retriever", raising=False)
    return tmp_path


def test_the_example_is_complete_and_under_30_lines() -> None:
    assert len(EXAMPLE.splitlines()) < 30
    assert "class Tfidf(ScoreRetriever)" in EXAMPLE


def test_the_command_line_of_the_doc_runs_the_example_beside_the_baselines(runner, example_module) -> None:
    (command,) = [line for line in blocks("console")[0].splitlines() if "bench compare" in line]
    words = shlex.split(command)
    assert words[:2] == ["PYTHONPATH=.", "bench"]  # PYTHONPATH=. is example_module's syspath_prepend
    out = example_module / "out"
    result = runner.invoke(main, [*words[2:], "--out", str(out)])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    with open(folder / "summary.csv", newline="", encoding="utf-8") as handle:
        systems = [row["system"] for row in csv.DictReader(handle)]
    assert systems == ["bm25", "lsa", "Tfidf", "Tfidf(sublinear=True)", "rrf(bm25,Tfidf)"]


def test_the_example_runs_as_a_script(example_module) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "my_retriever.py"], cwd=example_module, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["system", "ndcg@5", "mrr"]
    assert [line.split()[0] for line in lines[1:]] == ["bm25", "Tfidf(sublinear=True)"]


def test_the_parameter_error_shown_in_the_doc_is_the_real_one(runner, example_module) -> None:
    shown = [b.strip() for b in blocks("text") if "'sublinear' parameter" in b]
    result = runner.invoke(main, ["compare", "--systems", "my_retriever:Tfidf(sublinear=maybe)",
                                  "--out", str(example_module / "out")])
    assert result.exit_code == 2
    assert result.stderr.strip() == shown[0]


def test_the_mapping_example_runs(runner, tmp_path, monkeypatch) -> None:
    (tmp_path / "shortest_doc.py").write_text(blocks("python")[1], encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(main, ["compare", "--systems", "bm25,shortest_doc:Shortest", "--bootstrap-samples", "200",
                                  "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output


def test_the_experiment_file_of_the_doc_is_valid(tmp_path, example_module) -> None:
    (toml,) = blocks("toml")[1:]
    path = tmp_path / "experiment.toml"
    path.write_text(toml, encoding="utf-8")
    config = load_experiment(path)
    if missing_dependency() is not None:
        pytest.skip("the optional extra retbench[dense] is not installed")
    labels = [r.label for r in build_systems(config["systems"])]
    assert labels == ["bm25", "bm25(k1=0.9,b=0.4)", "dense", "rrf(bm25,dense)", "Tfidf(sublinear=True)"]


def test_a_retrievers_own_confidence_as_the_doc_shows_it(example_module: Path) -> None:
    from harness import compare

    (block,) = [b for b in blocks("python") if "class SureTfidf(Tfidf)" in b]
    (example_module / "sure_tfidf.py").write_text(block, encoding="utf-8")
    sys.modules.pop("sure_tfidf", None)
    (command,) = [line for line in blocks("console")[1].splitlines() if "bench compare" in line]
    systems = shlex.split(command)[shlex.split(command).index("--systems") + 1]
    result = compare(systems, "article", ["ndcg@5", "mrr"], statistics=Statistics(bootstrap_samples=50))
    summary = result.risk_coverage_summary.set_index("system")
    # each class under its own name (SureTfidf once inherited the name the loader gave Tfidf)
    assert summary["confidence"].to_dict() == {"Tfidf": "score", "SureTfidf": "retriever"}
    assert summary.loc["SureTfidf", "risk_metric"] == "ndcg@5"
    # shares of known words: between 0 and 1, and 1 for a query whose every word the corpus holds
    curve = result.risk_coverage[result.risk_coverage.system == "SureTfidf"]
    assert ((0 <= curve["threshold"]) & (curve["threshold"] <= 1)).all() and curve["threshold"].iloc[0] == 1.0


def test_a_retriever_reports_progress_to_its_run_context_as_the_doc_shows_it(example_module: Path) -> None:
    from corpora import load_dataset
    from harness import compare

    (block,) = [b for b in blocks("python") if "class SlowTfidf(Tfidf)" in b]
    (example_module / "slow_tfidf.py").write_text(block, encoding="utf-8")
    sys.modules.pop("slow_tfidf", None)
    from slow_tfidf import SlowTfidf  # type: ignore[import-not-found]

    heard: list[tuple[str, int, int | None]] = []
    compare([SlowTfidf()], "article", ["mrr"], statistics=Statistics(bootstrap_samples=50),
            progress=lambda label, done, total: heard.append((label, done, total)))
    reading = [h for h in heard if h[0] == "slow_tfidf: reading documents"]
    assert reading == [("slow_tfidf: reading documents", 0, 28), ("slow_tfidf: reading documents", 28, 28)]
    assert heard.index(reading[0]) > heard.index(("fitting SlowTfidf", 0, None))  # inside the harness's fit task
    data = load_dataset("article")
    by_hand = SlowTfidf().fit(data.corpus)  # no harness: a silent channel, the same retriever
    through_harness = compare([SlowTfidf()], data, ["mrr"], scoring=Scoring(depth=5),
                              statistics=Statistics(bootstrap_samples=50)).systems[0].run
    assert by_hand.search(data.queries, 5).ranking(data.queries.ids[0]) == through_harness.ranking(data.queries.ids[0])
