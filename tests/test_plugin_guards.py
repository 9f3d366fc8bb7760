"""What a plugin cannot do to a run: be scored deeper than --depth, slip strings or infinities in as
scores, end the run with sys.exit, hang it, or ask the bootstrap for more memory than there is."""

from __future__ import annotations

import csv
import json
import re
import signal
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from corpora import RetbenchError, load_dataset
from harness import compare
from harness.core.api import bootstrap_columns, check_bootstrap_memory
from harness.cli import main
from harness.engines.deadline import StepTimedOut, step_deadline
from harness.core.options import RunOptions, Scoring, Statistics
from harness.core.statistics import bootstrap_means, bootstrap_memory, largest_bootstrap

FAST = ["--bootstrap-samples", "200", "--permutations", "200"]

PLUGINS = '''
import sys
import time

import numpy as np

from retrievers import Retriever, ScoreRetriever


def overlap_rankings(retriever, queries):
    """Every document sharing a word with the query, most shared words first (ties by doc id)."""
    docs = [set(t.lower().split()) for t in retriever.corpus.full_texts]
    out = {}
    for qid, text in zip(queries.ids, queries.texts):
        words = set(text.lower().split())
        scored = [(d, float(len(words & w))) for d, w in zip(retriever.corpus.ids, docs) if words & w]
        out[qid] = sorted(scored, key=lambda p: (-p[1], p[0]))
    return out


class Everything(Retriever):
    """Ignores k: returns every matching document."""

    def search(self, queries, k):
        return overlap_rankings(self, queries)


class CutsItself(Retriever):
    """The same rankings, cut to k by the retriever itself, as the built-ins do."""

    def search(self, queries, k):
        return {q: ranking[:k] for q, ranking in overlap_rankings(self, queries).items()}


class WorstFirst(Retriever):
    """Ignores k and returns its rankings in the wrong order (lowest score first)."""

    def search(self, queries, k):
        return {q: ranking[::-1] for q, ranking in overlap_rankings(self, queries).items()}


class Swept(Retriever):
    """A sweep shortcut that, like its search, ignores k (and, with bad=True, returns NaN scores)."""

    def __init__(self, bad: bool = False, bonus: float = 0.0):
        self.bad = bad
        self.bonus = bonus

    def search(self, queries, k):
        nan = float("nan")
        return {q: [(d, nan if self.bad else s + self.bonus) for d, s in ranking]
                for q, ranking in overlap_rankings(self, queries).items()}

    @classmethod
    def sweep(cls, settings, corpus, queries, k):
        return iter([setting.fit(corpus).search(queries, k) for setting in settings])


class TextScores(Retriever):
    def search(self, queries, k):
        return {q: [(d, str(s)) for d, s in ranking[:k]] for q, ranking in overlap_rankings(self, queries).items()}


class InfiniteScores(Retriever):
    def search(self, queries, k):
        return {q: [(d, float("inf")) for d, s in ranking[:k]] for q, ranking in overlap_rankings(self, queries).items()}


class TextMatrix(ScoreRetriever):
    def score(self, queries):
        return np.full((len(queries), len(self.corpus)), "1.0")


class ExitsInFit(Everything):
    def fit(self, corpus):
        sys.exit(0)


class ExitsInSearch(Everything):
    def search(self, queries, k):
        sys.exit(0)


class ExitsInScore(ScoreRetriever):
    def score(self, queries):
        sys.exit(0)


class ExitsInInit(Everything):
    def __init__(self, weight: float = 1.0):
        sys.exit(0)


class SpinsInFit(Everything):
    """A fit that never returns (a pure-Python loop)."""

    def fit(self, corpus):
        super().fit(corpus)
        while True:
            pass


class SleepsInSearch(Everything):
    """A search that never returns (waiting on the system)."""

    def search(self, queries, k):
        while True:
            time.sleep(60)


class SwallowsEverything(Everything):
    """A search that catches every exception, the deadline's included, and returns late."""

    def search(self, queries, k):
        try:
            while True:
                time.sleep(60)
        except BaseException:
            return {}
'''


@pytest.fixture
def plugins(tmp_path, monkeypatch) -> str:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "guarded_plugins.py").write_text(textwrap.dedent(PLUGINS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return "guarded_plugins"


def only_folder(out: Path) -> Path:
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder


def nothing_written(out: Path) -> bool:
    return not out.exists() or not any(out.iterdir())


def per_query(folder: Path, system: str) -> list[dict[str, str]]:
    with open(folder / "per_query.csv", newline="", encoding="utf-8") as handle:
        return [{k: v for k, v in row.items() if k != "system"} for row in csv.DictReader(handle)
                if row["system"] == system]


def run_lines(folder: Path, system: str) -> list[list[str]]:
    (path,) = [p for p in (folder / "runs").glob("*.trec") if p.read_text().split()[5] == system]
    return [line.split() for line in path.read_text().splitlines()]


# ----- depth -------------------------------------------------------------------------------------

def test_a_plugin_that_ignores_depth_is_scored_as_if_it_had_cut_its_own_rankings(runner, plugins, tmp_path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--systems", f"all={plugins}:Everything,cut={plugins}:CutsItself",
                                  "--depth", "5", "--metrics", "map,recall@5,ndcg", "--out", str(out), *FAST])
    assert result.exit_code == 0, result.output
    folder = only_folder(out)
    # the same rankings, whoever cut them: the same values on every query, the same run file lines
    assert per_query(folder, "all") == per_query(folder, "cut")
    assert [line[:5] for line in run_lines(folder, "all")] == [line[:5] for line in run_lines(folder, "cut")]
    assert max(int(line[3]) for line in run_lines(folder, "all")) == 5
    notes = json.loads((folder / "manifest.json").read_text())["notes"]
    assert any(note.startswith("retriever 'all' returned more than the 5 results asked for") for note in notes)
    assert not any("'cut'" in note for note in notes)


def test_an_unsorted_ranking_is_cut_in_the_order_returned_not_re_sorted(plugins) -> None:
    from guarded_plugins import WorstFirst

    dataset = load_dataset("article")
    result = compare({"worst": WorstFirst()}, dataset, ["map"], scoring=Scoring(depth=3),
                     statistics=Statistics(bootstrap_samples=50, permutations=50))
    (system,) = result.systems
    returned = WorstFirst().fit(dataset.corpus).search(dataset.queries, 3)  # what the plugin gives, uncut
    assert any(len(ranking) > 3 for ranking in returned.values())
    for q in system.run.query_ids:
        assert system.run.ranking(q) == [d for d, _ in returned.get(q, [])][:3]


def test_a_plugins_sweep_is_held_to_depth_and_checked_like_its_search(plugins) -> None:
    from harness import tune

    swept = tune(f"{plugins}:Swept(bonus=0|1)", "article", "map", folds=2, scoring=Scoring(depth=3),
                 statistics=Statistics(bootstrap_samples=50))
    assert swept.search_depth == 3 and swept.shortcut.startswith("Swept.sweep")
    plain = compare([f"{plugins}:Swept"], "article", ["map"], scoring=Scoring(depth=3),
                    statistics=Statistics(bootstrap_samples=50))
    # the bonus moves no ranking: every point scores as the plain run cut at 3 (not as the whole ranking)
    assert np.array_equal(swept.values[0], plain.per_query["map"].to_numpy())
    assert np.array_equal(swept.values[1], plain.per_query["map"].to_numpy())
    with pytest.raises(RetbenchError, match=r"retriever 'Swept\(bad=True\)': query 'q01': the score of .* is nan"):
        tune(f"{plugins}:Swept(bad=true|false)", "article", "map", folds=2, scoring=Scoring(depth=3),
             statistics=Statistics(bootstrap_samples=50))


# ----- scores ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("system", "message"), [
    ("TextScores", "the score of doc id 'pricing1' is not a number: '3.0' (str); scores must be finite numbers"),
    ("InfiniteScores", "the score of doc id 'pricing1' is inf; scores must be finite numbers"),
    ("TextMatrix", "score returned a value that is not a number: "),
])
def test_scores_that_are_not_finite_numbers_stop_the_run_naming_the_retriever(runner, plugins, tmp_path, system,
                                                                               message) -> None:
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--systems", f"bm25,{plugins}:{system}", "--out", str(out), *FAST])
    assert result.exit_code == 2, result.output
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith(f"error: retriever '{system}': ") and message in error
    assert "Traceback" not in result.stderr and nothing_written(out)


# ----- sys.exit ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("system", "method"), [("ExitsInFit", "fit"), ("ExitsInSearch", "search"),
                                                ("ExitsInScore", "score"), ("ExitsInInit", "__init__")])
def test_sys_exit_inside_a_retriever_is_its_failure_not_a_green_run(runner, plugins, tmp_path, system, method) -> None:
    out = tmp_path / "out"
    result = runner.invoke(main, ["compare", "--systems", f"bm25,{plugins}:{system}", "--out", str(out), *FAST])
    assert result.exit_code == 2, result.output
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    label = f"{plugins}:{system}" if method == "__init__" else system  # no object, no label yet
    assert error.startswith(f"error: retriever '{label}' called sys.exit(0) in {method}")
    assert nothing_written(out)


@pytest.mark.parametrize(("code", "shown"), [(None, "sys.exit()"), (0, "sys.exit(0)"), ("bye", "sys.exit('bye')")])
def test_the_seam_names_every_exit_code(code, shown) -> None:
    from corpora import Corpus
    from retrievers import Retriever, RetrieverFailed, fit_retriever

    class Exits(Retriever):
        name = "exits"

        def fit(self, corpus):
            raise SystemExit(code)

        def search(self, queries, k):
            return {}

    with pytest.raises(RetrieverFailed, match=rf"retriever 'exits' called {re.escape(shown)} in fit") as caught:
        fit_retriever(Exits(), Corpus(["d"], ["text"]))  # the harness's call: nothing wraps the plugin's fit
    assert isinstance(caught.value.__cause__, SystemExit)


def test_a_plugin_module_that_exits_on_import_is_an_error(runner, tmp_path, monkeypatch) -> None:
    (tmp_path / "exits_on_import.py").write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(main, ["compare", "--systems", "exits_on_import:X", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "importing module 'exits_on_import' failed: SystemExit: 3" in result.stderr


# ----- --timeout ---------------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="the main-thread deadline is SIGALRM's")
@pytest.mark.parametrize(("system", "step"), [("SpinsInFit", "fit"), ("SleepsInSearch", "search"),
                                              ("SwallowsEverything", "search")])
def test_a_step_past_the_timeout_stops_the_run_naming_retriever_and_step(runner, plugins, tmp_path, system,
                                                                        step) -> None:
    out = tmp_path / "out"
    # the plugin alone: its other step (the base fit) only stores the corpus, far within the second
    result = runner.invoke(main, ["compare", "--systems", f"{plugins}:{system}", "--timeout", "1",
                                  "--out", str(out), *FAST])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("article:")]
    assert errors == [f"error: retriever '{system}' did not finish {step} within the timeout of 1 s; it was stopped "
                      f"and nothing was written. Fix: make the retriever's {step} return (or raise --timeout if "
                      "it needs longer)"]
    assert nothing_written(out)


def test_the_timeout_leaves_steps_that_finish_alone_and_the_alarm_as_it_was(runner, plugins, tmp_path) -> None:
    def mine(signum, frame):  # someone else's handler (pytest-timeout's, say)
        raise AssertionError("not to be called")

    previous = signal.signal(signal.SIGALRM, mine) if hasattr(signal, "SIGALRM") else None
    try:
        out = tmp_path / "out"
        result = runner.invoke(main, ["compare", "--systems", f"bm25,{plugins}:CutsItself", "--timeout", "600",
                                      "--out", str(out), *FAST])
        assert result.exit_code == 0, result.output
        assert len(list(out.iterdir())) == 1
        if previous is not None:
            assert signal.getsignal(signal.SIGALRM) is mine
            assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        if previous is not None:
            signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), "10", True])
def test_a_timeout_that_is_not_a_positive_number_is_refused(timeout) -> None:
    with pytest.raises(RetbenchError, match=r"`timeout` must be a number of seconds > 0, or None"):
        compare(["bm25"], "article", ["mrr"], run=RunOptions(timeout=timeout))


def test_the_cli_refuses_a_timeout_of_zero(runner, tmp_path) -> None:
    result = runner.invoke(main, ["compare", "--timeout", "0", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--timeout" in result.stderr


def test_the_library_deadline_works_outside_the_main_thread(plugins) -> None:
    caught: list[BaseException] = []

    def work() -> None:
        try:
            compare([f"{plugins}:SpinsInFit"], "article", ["mrr"], run=RunOptions(timeout=0.3),
                    statistics=Statistics(bootstrap_samples=50))
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            caught.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], StepTimedOut)
    assert (caught[0].owner, caught[0].step) == ("SpinsInFit", "fit")


def test_a_step_that_ends_in_time_is_not_interrupted_afterwards() -> None:
    for _ in range(3):
        with step_deadline(0.05, "mine", "fit"):
            pass
    time.sleep(0.2)  # an alarm left armed would raise here


# ----- bootstrap memory --------------------------------------------------------------------------

def test_the_bootstrap_memory_estimate_bounds_what_it_allocates() -> None:
    differences = np.random.default_rng(0).normal(size=(50, 24))
    samples = 40_000
    tracemalloc.start()
    try:
        bootstrap_means(differences, samples, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    means = samples * 24 * 8
    assert 2 * means <= peak <= bootstrap_memory(samples, 24)


def test_the_largest_workable_bootstrap_is_the_largest_that_fits() -> None:
    for columns, available in [(1, 10**8), (24, 3 * 10**9 + 7), (6, 10**6)]:
        largest = largest_bootstrap(columns, available)
        assert largest == 0 or bootstrap_memory(largest, columns) <= available
        assert bootstrap_memory(largest + 1, columns) > available


def test_the_widest_resampled_matrix_is_counted() -> None:
    assert bootstrap_columns(4, 4) == 24  # 6 pairs x 4 metrics of differences
    assert bootstrap_columns(1, 1) == 5   # one system's metrics card: 5 names
    assert bootstrap_columns(2, 10) == 20  # every metric of both systems


def test_a_bootstrap_too_large_for_memory_is_refused_before_anything_runs(runner, tmp_path, monkeypatch) -> None:
    available = 200 * 10**6
    monkeypatch.setattr("harness.core.inputs.available_memory", lambda: available)
    out = tmp_path / "out"
    started = time.perf_counter()
    result = runner.invoke(main, ["compare", "--bootstrap-samples", "100000000", "--out", str(out)])
    assert result.exit_code == 2, result.output
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    largest = largest_bootstrap(bootstrap_columns(4, 4), available)
    assert error.startswith("error: --bootstrap-samples 100,000,000 needs about 38.4 GB")
    assert f"Fix: pass at most {largest:,}, or compare fewer systems or metrics per run" in error
    assert nothing_written(out) and "article:" not in result.output  # refused before loading
    check_bootstrap_memory(largest, 4, 4, available)  # the value it names is accepted


def test_out_of_memory_in_the_bootstrap_is_one_line(runner, tmp_path, monkeypatch) -> None:
    def exhausted(*args, **kwargs):
        raise MemoryError("Unable to allocate 38.4 GiB for an array")

    monkeypatch.setattr("harness.core.readings.compare_systems", exhausted)
    result = runner.invoke(main, ["compare", "--out", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: out of memory (MemoryError: Unable to allocate")
    assert "no results folder was written" in errors[0]
