"""The progress line: on a terminal only, after a moment, erased at the end, never in results."""

from __future__ import annotations

import io
import time

from harness.cli import main
from harness.progress import Reporter, Task


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_stderr_is_not_a_terminal():
    stream = io.StringIO()
    reporter = Reporter(stream, delay=0.0, interval=0.01)
    assert not reporter.enabled
    with reporter.task("fitting bm25", total=10) as task:
        task.update(5)
        time.sleep(0.05)
    assert stream.getvalue() == ""


def test_a_terminal_sees_the_line_and_then_a_clean_one():
    stream = FakeTerminal()
    reporter = Reporter(stream, delay=0.0, interval=0.01)
    assert reporter.enabled
    with reporter.task("searching bm25", total=200) as task:
        task.update(50)
        time.sleep(0.1)
    written = stream.getvalue()
    assert "searching bm25 [" in written and "50/200" in written
    assert written.endswith("\r") and written.rstrip("\r").split("\r")[-1].strip() == ""  # erased


def test_quick_work_prints_nothing_even_on_a_terminal():
    stream = FakeTerminal()
    with Reporter(stream, delay=5.0, interval=0.01).task("bootstrap", total=3) as task:
        task.update(3)
    assert stream.getvalue() == ""


def test_quiet_wins_over_a_terminal():
    stream = FakeTerminal()
    with Reporter(stream, enabled=False, delay=0.0, interval=0.01).task("fitting lsa"):
        time.sleep(0.05)
    assert stream.getvalue() == ""


def test_render_shows_a_bar_or_a_spinner():
    task = Task("indexing", 1000)
    task.update(250)
    line = task.render(task.started + 2.0, 0)
    assert line.startswith("indexing [######") and "25%" in line and "250/1,000" in line and "2.0s" in line
    assert Task("fitting", None).render(time.monotonic(), 1).startswith("fitting / ")


def test_bench_compare_writes_no_progress_when_not_on_a_terminal(runner, tmp_path):
    for flags in ([], ["--quiet"]):
        result = runner.invoke(main, ["compare", "--systems", "bm25", "--metrics", "ndcg@5", "--no-cache",
                                      "--out", str(tmp_path / ("quiet" if flags else "plain")), *flags])
        assert result.exit_code == 0, result.output
        assert "\r" not in result.output and "[#" not in result.output
