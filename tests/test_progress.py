"""The progress channel (corpora.progress) and its one renderer (corpora.progress.Reporter): a line on
a terminal only, after a moment, erased at the end, never in results; silent unless asked for."""

from __future__ import annotations

import io
import time

import pytest

from corpora import RetbenchError
from corpora.progress import Progress, Task
from harness.cli import main
from corpora.progress import Reporter, render_line


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
    line = render_line(task, task.started + 2.0, 0)
    assert line.startswith("indexing [######") and "25%" in line and "250/1,000" in line and "2.0s" in line
    assert render_line(Task("fitting", None), time.monotonic(), 1).startswith("fitting / ")


def test_bench_compare_writes_no_progress_when_not_on_a_terminal(runner, tmp_path):
    for flags in ([], ["--quiet"]):
        result = runner.invoke(main, ["compare", "--systems", "bm25", "--metrics", "ndcg@5", "--no-cache",
                                      "--out", str(tmp_path / ("quiet" if flags else "plain")), *flags])
        assert result.exit_code == 0, result.output
        assert "\r" not in result.output and "[#" not in result.output


def test_the_innermost_task_is_drawn_and_the_outer_one_again_when_it_ends():
    stream = FakeTerminal()
    reporter = Reporter(stream, delay=0.0, interval=0.005)
    channel = Progress(reporter)
    with channel.task("fitting dense"):
        with channel.task("dense: encoding documents", total=40) as inner:
            inner.update(10)
            time.sleep(0.05)
        after_inner = len(stream.getvalue())
        time.sleep(0.05)
    written = stream.getvalue()
    assert "dense: encoding documents [" in written[:after_inner] and "10/40" in written[:after_inner]
    assert "fitting dense " in written[after_inner:]  # the outer task is back on the line
    assert written.endswith("\r") and written.rstrip("\r").split("\r")[-1].strip() == ""  # erased once, at the end


def test_work_reports_to_the_innermost_task_and_nobody_listens_by_default():
    progress = Progress(lambda label, done, total: None)
    assert progress.callback() is None  # no task open: a kernel skips reporting
    with progress.task("fitting bm25") as outer:
        assert progress.callback() == outer.update
        with progress.task("tokenizing", total=3) as inner:
            progress.callback()(2, 3)
            assert (inner.done, outer.done) == (2, 0)
        assert progress.callback() == outer.update
    assert progress.callback() is None
    silent = Progress()
    with silent.task("fitting bm25"):
        assert silent.callback() is None  # nobody listens: a kernel skips reporting


def test_two_channels_never_share_their_tasks():
    heard_a, heard_b = [], []
    a = Progress(lambda label, done, total: heard_a.append(label))
    b = Progress(lambda label, done, total: heard_b.append(label))
    with a.task("fitting bm25"), b.task("fitting lsa"):
        a.callback()(1, 2)
    assert heard_a == ["fitting bm25", "fitting bm25"] and heard_b == ["fitting lsa"]


def test_a_function_hears_every_task_start_and_update():
    heard = []
    progress = Progress(lambda label, done, total: heard.append((label, done, total)))
    with progress.task("searching bm25", total=3) as task:
        task.update(1)
        progress.callback()(3, 3)
    with Progress().task("on another, silent channel"):
        pass
    assert heard == [("searching bm25", 0, 3), ("searching bm25", 1, 3), ("searching bm25", 3, 3)]


def test_a_renderer_of_the_wrong_kind_is_a_user_error():
    with pytest.raises(RetbenchError, match="progress must be a renderer, a function .* not int 3"):
        Progress(3)


def test_a_plugin_written_for_the_old_module_functions_still_runs_unseen():
    from corpora import progress

    heard = []
    channel = Progress(lambda label, done, total: heard.append(label))
    with channel.task("fitting old-plugin"):
        with progress.task("old-plugin: embedding", total=3) as task:  # what the old guide showed
            task.update(3)
            assert progress.callback() is None
    assert task.done == 3 and heard == ["fitting old-plugin"]  # its own task is shown by nobody
