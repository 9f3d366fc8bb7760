"""How a `bench` run ends when it does not end well: Ctrl-C, a reader that closes the pipe early,
an exception inside a retriever's own code, --debug. Never a traceback unless asked for."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.cli import main

REPO = Path(__file__).resolve().parents[1]
FAST = ["--bootstrap-samples", "200"]
BENCH = "from harness.cli import main\nmain(prog_name='bench')\n"

PLUGINS = '''
import time
from pathlib import Path

import numpy as np

from retrievers import Retriever, ScoreRetriever


class Overlap(ScoreRetriever):
    """Counts the query words each document holds (a working retriever to break below)."""

    def fit(self, corpus):
        super().fit(corpus)
        self.words = [set(text.lower().split()) for text in corpus.full_texts]
        return self

    def score(self, queries):
        return np.array([[len(set(q.lower().split()) & d) for d in self.words] for q in queries.texts], float)


class FailsInFit(Overlap):
    def fit(self, corpus):
        super().fit(corpus)
        return {}["no such key"]


class FailsInSearch(Retriever):
    def search(self, queries, k):
        raise ValueError("the engine is down")


class FailsInScore(Overlap):
    def score(self, queries):
        raise RuntimeError("score exploded")


class OneColumnShort(Overlap):
    def score(self, queries):
        return super().score(queries)[:, :-1]  # the last document could never be found


class NotANumber(Overlap):
    def score(self, queries):
        matrix = super().score(queries)
        matrix[1, 4] = np.nan
        return matrix


class FailsInInit(Overlap):
    def __init__(self, weight: float = 1.0):
        raise ValueError("no licence key found")


class OutOfMemory(Retriever):
    def search(self, queries, k):
        raise MemoryError("cannot allocate 80 GiB")


class Sleeps(Retriever):
    """Says it is fitting (a file beside this module), then sleeps: a run to interrupt."""

    def fit(self, corpus):
        super().fit(corpus)
        (Path(__file__).parent / "fitting").touch()
        time.sleep(60)
        return self

    def search(self, queries, k):
        return {}
'''


@pytest.fixture
def plugins(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "broken_plugins.py").write_text(textwrap.dedent(PLUGINS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return folder


def bench(*args: str, folder: Path, **popen) -> subprocess.Popen:
    """`bench ARGS` in a fresh interpreter, with this checkout and ``folder`` on the path."""
    path = os.pathsep.join([str(REPO), str(folder), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen([sys.executable, "-c", BENCH, *args], cwd=folder, text=True,
                            env={**os.environ, "PYTHONPATH": path}, **popen)


def folders(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.is_dir()) if out.exists() else []


# ----- an exception inside a retriever ---------------------------------------------------------

@pytest.mark.parametrize(
    ("system", "message"),
    [
        ("broken_plugins:FailsInFit", "retriever 'FailsInFit' failed in fit: KeyError: 'no such key'"),
        ("broken_plugins:FailsInSearch", "retriever 'FailsInSearch' failed in search: ValueError: the engine is down"),
        ("broken_plugins:FailsInScore", "retriever 'FailsInScore' failed in score: RuntimeError: score exploded"),
        ("broken_plugins:FailsInInit",
         "retriever 'broken_plugins:FailsInInit' failed in __init__: ValueError: no licence key found"),
        # inside a fusion, the child that failed is named, not the fusion
        ("rrf(bm25,broken_plugins:FailsInSearch)", "retriever 'FailsInSearch' failed in search: ValueError"),
        ("weighted(bm25,broken_plugins:FailsInScore)", "retriever 'FailsInScore' failed in score: RuntimeError"),
    ],
)
def test_an_exception_in_a_plugin_is_one_line_naming_it_and_exit_2(runner, plugins, tmp_path, system,
                                                                  message) -> None:
    result = runner.invoke(main, ["compare", "--systems", f"bm25,{system}", "--out", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"error: {message}")
    assert "bench --debug compare" in errors[0]  # says how to see the traceback
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert folders(tmp_path / "out") == []


def test_a_score_matrix_one_column_short_or_with_nan_stops_the_run_naming_the_retriever(runner, plugins,
                                                                                        tmp_path) -> None:
    from corpora import load_dataset

    article = load_dataset("article")
    short = runner.invoke(main, ["compare", "--systems", "bm25,broken_plugins:OneColumnShort",
                                 "--out", str(tmp_path / "out"), *FAST])
    assert short.exit_code == 2
    assert short.stderr.splitlines() == [
        "error: retriever 'OneColumnShort': score returned a matrix of shape (14, 27), expected (14, 28) (one row "
        "per query, one column per document of the corpus, in corpus order). Fix: score every document for every "
        "query"]
    nan = runner.invoke(main, ["compare", "--systems", "broken_plugins:NotANumber", "--out", str(tmp_path / "out"),
                               *FAST])
    assert nan.exit_code == 2
    assert nan.stderr.startswith(f"error: retriever 'NotANumber': score of doc {article.corpus.ids[4]!r} for "
                                 f"query {article.queries.ids[1]!r} is nan")
    assert folders(tmp_path / "out") == []


def test_debug_shows_the_plugins_own_traceback(runner, plugins, tmp_path) -> None:
    result = runner.invoke(main, ["--debug", "compare", "--systems", "broken_plugins:FailsInFit",
                                  "--out", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 2
    assert "Traceback (most recent call last)" in result.stderr
    assert "broken_plugins.py" in result.stderr and 'return {}["no such key"]' in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("error: retriever 'FailsInFit' failed in fit")
    assert "bench --debug" not in result.stderr  # no advice to do what was done


def test_out_of_memory_is_not_called_a_bug_of_the_retriever(runner, plugins, tmp_path) -> None:
    result = runner.invoke(main, ["compare", "--systems", "broken_plugins:OutOfMemory", "--out",
                                  str(tmp_path / "out"), *FAST])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1
    assert errors[0].startswith("error: out of memory (MemoryError: cannot allocate 80 GiB)")
    assert "failed in search" not in errors[0]


@pytest.mark.parametrize("passes", [KeyboardInterrupt, MemoryError])
def test_the_seam_lets_interrupts_and_memory_errors_through(passes) -> None:
    from corpora import Corpus
    from retrievers import Retriever

    class Raises(Retriever):
        def fit(self, corpus):
            raise passes()

        def search(self, queries, k):
            return {}

    with pytest.raises(passes):
        Raises().fit(Corpus(["d"], ["text"]))


# ----- Ctrl-C ----------------------------------------------------------------------------------

@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is delivered differently on Windows")
def test_ctrl_c_while_fitting_exits_130_with_one_line(plugins, tmp_path) -> None:
    process = bench("compare", "--systems", "bm25,broken_plugins:Sleeps", "--out", str(tmp_path / "out"),
                    folder=plugins, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (plugins / "fitting").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the run never reached the retriever's fit"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines() == ["interrupted (Ctrl-C); no results folder was written"]
    assert folders(tmp_path / "out") == []


# ----- stdout closed by its reader -------------------------------------------------------------

def test_a_reader_gone_from_the_start_costs_neither_the_results_nor_a_traceback(tmp_path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the first line printed already finds nobody reading
    try:
        process = bench("compare", "--out", str(tmp_path / "out"), *FAST, folder=tmp_path,
                        stdout=write_end, stderr=subprocess.PIPE)
        _, stderr = process.communicate(timeout=300)
    finally:
        os.close(write_end)
    assert process.returncode == 141, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    (folder,) = folders(tmp_path / "out")
    assert stderr.splitlines() == [f"results: {folder}"]
    assert (folder / "summary.csv").is_file() and (folder / "report.txt").is_file()


def test_any_command_ends_quietly_when_its_reader_is_gone(tmp_path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        process = bench("retrievers", folder=tmp_path, stdout=write_end, stderr=subprocess.PIPE)
        _, stderr = process.communicate(timeout=120)
    finally:
        os.close(write_end)
    assert process.returncode == 141
    assert stderr == ""


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell pipeline")
@pytest.mark.parametrize("lines", [1, 3])
def test_piping_into_head_ends_quietly_with_the_results_written(tmp_path, lines: int) -> None:
    """`| head -1` leaves while retbench is still fitting; `| head -3` in the middle of the report."""
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    command = f'"$0" -c "$1" compare --out "$2" --bootstrap-samples 200 | head -{lines}'
    result = subprocess.run(["sh", "-c", command, sys.executable, BENCH, str(tmp_path / "out")], cwd=tmp_path,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}, timeout=300)
    assert result.returncode == 0  # head's status
    assert len(result.stdout.splitlines()) == lines
    assert result.stdout.startswith("article: 28 documents")
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr
    (folder,) = folders(tmp_path / "out")
    assert (folder / "summary.csv").is_file()
