"""Where an output lands (issue 41, item 1): every file a command writes goes through one writer,
:mod:`corpora.output_files`. A device, a FIFO, a socket and ``/dev/null`` are never replaced; a
symbolic link writes its target and stays a link; nothing is written over or beside the files of a
results folder; ``-`` and ``/dev/stdout`` are written through where the option accepts a stream; a
missing folder or a full disk is one ``error:`` line with nothing half-written. Each command's
check runs before its work, so a refused path costs nothing (and ``bench judge`` never starts its
server for one).

The property-style test crosses every kind of output path with every command that writes a file;
the tests after it are the cases the issue names, one each.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from corpora import RetbenchError, Run, read_qrels, write_qrels
from corpora.output_files import check_output, results_folder_holding, write_output
from harness import compare
from harness.cli import main
from harness.store.read import open_results

_BOUND = 120  # seconds a command may take here; a FIFO opened for writing would block for ever


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _invoke(runner: CliRunner, args: list[str], fifo: Path | None = None) -> Result:
    """``bench ARGS`` through the runner, in a thread bounded by :data:`_BOUND`: a command that opened
    ``fifo`` for writing is unblocked (a reader opens it) and the test fails, instead of hanging."""
    done: list[Result] = []
    worker = threading.Thread(target=lambda: done.append(runner.invoke(main, args)), daemon=True)
    worker.start()
    worker.join(_BOUND)
    if worker.is_alive():
        if fifo is not None:
            reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            worker.join(10)
            os.close(reader)
        pytest.fail(f"bench {' '.join(args)} did not end within {_BOUND} s (a FIFO opened?)")
    return done[0]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A small results folder of the bundled article corpus (one system)."""
    result = compare(["bm25"], "article", ["ndcg@10"])
    return result.write(tmp_path_factory.mktemp("results"), command_line=["bench", "compare"],
                        say=lambda message: None)


@pytest.fixture(scope="module")
def pool_file(results, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pool") / "pool.tsv"
    done = CliRunner().invoke(main, ["pool", str(results), "--out", str(out)])
    assert done.exit_code == 0, done.output
    return out


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


# ----- every output path kind x every command that writes ----------------------------------------

#: command -> (its arguments given the output path, whether it writes (False: only its check runs,
#: bench judge's server is never started), whether it takes - for stdout)
Command = Callable[[Path, Path, str], list[str]]
COMMANDS: dict[str, tuple[Command, bool, bool]] = {
    "pool": (lambda results, pool, out: ["pool", str(results), "--out", out], True, True),
    "report": (lambda results, pool, out: ["report", str(results), "--format", "md", "-o", out], True, True),
    "gate": (lambda results, pool, out: ["gate", str(results), str(results), "--metric", "ndcg@10",
                                         "--bootstrap-samples", "200", "--junit", out], True, False),
    "judge": (lambda results, pool, out: ["judge", str(pool), "--corpus", "article", "--out", out], False, False),
}

#: kind -> (the path made for it in ``where`` (a folder of its own) given the results folder, what a
#: refusal says; None: the kind is written to)
KINDS = ["new file", "existing file", "link to a file", "dangling link", "link loop", "folder", "fifo", "socket",
         "/dev/null", "/dev/full", "-", "/dev/stdout", "file of a results folder", "manifest.json",
         "new file in a results folder", "file in a missing folder"]
REFUSALS = {
    "dangling link": "which does not exist (a dangling link is not written through)",
    "link loop": "is a loop of symbolic links",
    "folder": "is a folder, which is never replaced by a file",
    "fifo": "is a FIFO (named pipe), which is never replaced by a file",
    "socket": "is a socket, which is never replaced by a file",
    "/dev/null": "is the null device, which would discard the output",
    "/dev/full": "is a character device, which is never replaced by a file",
    "file of a results folder": "lies inside the results folder",
    "manifest.json": "lies inside the results folder",
    "new file in a results folder": "lies inside the results folder",
    "file in a missing folder": "does not exist. Fix: create the folder",
}


def _make(kind: str, where: Path, results: Path) -> str:
    """The output path of ``kind``, made in the empty folder ``where`` (the current folder)."""
    if kind == "new file":
        return str(where / "out.txt")
    if kind == "existing file":
        (where / "out.txt").write_text("before\n", encoding="utf-8")
        os.chmod(where / "out.txt", 0o640)
        return str(where / "out.txt")
    if kind == "link to a file":
        (where / "target.txt").write_text("before\n", encoding="utf-8")
        (where / "link.txt").symlink_to("target.txt")
        return str(where / "link.txt")
    if kind == "dangling link":
        (where / "link.txt").symlink_to("nowhere.txt")
        return str(where / "link.txt")
    if kind == "link loop":
        (where / "a.txt").symlink_to("b.txt")
        (where / "b.txt").symlink_to("a.txt")
        return str(where / "a.txt")
    if kind == "folder":
        (where / "out").mkdir()
        return str(where / "out")
    if kind == "fifo":
        os.mkfifo(where / "fifo")
        return str(where / "fifo")
    if kind == "socket":  # a relative name: a socket's path is limited to ~100 bytes
        bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        bound.bind("sock")
        bound.close()
        return "sock"
    if kind in ("/dev/null", "-", "/dev/stdout"):
        return kind
    if kind == "/dev/full":
        if os.geteuid() != 0 or not os.path.exists("/dev/full"):
            pytest.skip("replacing /dev/full is possible only as root (the case of the issue); not root here")
        return "/dev/full"
    if kind == "file of a results folder":
        return str(results / "qrels.txt")
    if kind == "manifest.json":
        return str(results / "manifest.json")
    if kind == "new file in a results folder":
        return str(results / "mine.txt")
    if kind == "file in a missing folder":
        return str(where / "missing" / "out.txt")
    raise AssertionError(kind)


def _snapshot(path: str) -> tuple[int, int, bytes | None]:
    """What a refusal must leave as it was: the path's type and mode (a link's own), its bytes."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return (0, 0, None)
    data = Path(path).read_bytes() if stat.S_ISREG(info.st_mode) else None
    return (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), data)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_output_kind_for_every_command(name, kind, results, pool_file, tmp_path, monkeypatch, runner) -> None:
    build, writes, dash = COMMANDS[name]
    monkeypatch.chdir(tmp_path)
    out = _make(kind, tmp_path, results)
    before = _snapshot(out)
    results_before = {p.name: p.read_bytes() for p in results.iterdir() if p.is_file()}
    args = build(results, pool_file, out)
    refused = REFUSALS.get(kind)
    if kind == "-" and not dash:
        refused = "- would mean"
    if kind in ("-", "/dev/stdout") and name == "judge":
        refused = "a stream cannot be read back to resume" if kind == "/dev/stdout" else "- would mean a stream"
    if refused is None and not writes:
        # bench judge's path is fine: its check alone (the server is never started here)
        target = check_output(out, "--out", appends=True)
        assert target.file is not None and target.stream is None
        return
    if name == "judge":
        _judge_runs()
    done = _invoke(runner, args, fifo=Path(out) if kind == "fifo" else None)
    if refused is not None:
        assert done.exit_code == 2, (done.exit_code, done.output)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and refused in lines[0], done.stderr
        assert "Fix: " in lines[0]
        assert _snapshot(out) == before  # nothing replaced, created or changed
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left
        assert {p.name: p.read_bytes() for p in results.iterdir() if p.is_file()} == results_before
        open_results(results).qrels  # the results folder still reads
        return
    assert done.exit_code == 0, done.output
    if kind in ("-", "/dev/stdout"):
        expected = {"pool": "query_id\tdoc_id", "report": "### retbench: article", "gate": "<testsuites"}[name]
        assert expected in done.stdout
        return
    written = tmp_path / ("target.txt" if kind == "link to a file" else "out.txt")
    assert written.read_text(encoding="utf-8") != "before\n" and written.stat().st_size > 0
    if kind == "link to a file":
        assert (tmp_path / "link.txt").is_symlink() and os.readlink(tmp_path / "link.txt") == "target.txt"
    wanted = 0o640 if kind == "existing file" else 0o666 & ~_umask()
    assert stat.S_IMODE(written.stat().st_mode) == wanted
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# ----- results folders (--out of compare and tune) -----------------------------------------------

FOLDER_KINDS = {
    "a results folder": ("{results}", "is a results folder"),
    "a folder inside a results folder": ("{results}/runs", "lies inside a results folder"),
    "a new folder inside a results folder": ("{results}/more", "lies inside a results folder"),
    "a staging folder": ("{tmp}/.staging-0123abcd-1-x", "is a run's staging folder"),
    "a file": ("{tmp}/file.txt", "exists and is not a folder"),
    "a fifo": ("{tmp}/fifo", "exists and is not a folder"),
    "/dev/null": ("/dev/null", "exists and is not a folder"),
    "a dangling link": ("{tmp}/link", "which does not exist (a dangling link is not followed)"),
}


@pytest.mark.parametrize("kind", list(FOLDER_KINDS))
@pytest.mark.parametrize("command", ["compare", "tune"])
def test_a_results_folder_out_is_refused_before_any_work(command, kind, results, tmp_path, runner) -> None:
    template, message = FOLDER_KINDS[kind]
    out = template.format(results=results, tmp=tmp_path)
    (tmp_path / "file.txt").write_text("mine\n", encoding="utf-8")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to("nowhere")
    (tmp_path / ".staging-0123abcd-1-x").mkdir()
    listing = sorted(p.name for p in results.iterdir())
    args = (["compare", "--corpus", "article", "--systems", "bm25", "--metrics", "ndcg@10"] if command == "compare"
            else ["tune", "bm25(k1=[0.9,1.2])", "--corpus", "article"])
    done = _invoke(runner, [*args, "--out", out], fifo=tmp_path / "fifo")
    assert done.exit_code == 2, done.output
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: results folder") and message in lines[0], done.stderr
    assert sorted(p.name for p in results.iterdir()) == listing
    assert (tmp_path / "file.txt").read_text(encoding="utf-8") == "mine\n" and not (tmp_path / "nowhere").exists()


def test_a_results_folder_through_a_link_to_a_folder_lands_in_its_target(tmp_path, runner) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    done = runner.invoke(main, ["compare", "--corpus", "article", "--systems", "bm25", "--metrics", "ndcg@10",
                                "--out", str(tmp_path / "link")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "link").is_symlink() and len(list((tmp_path / "real").iterdir())) == 1


# ----- the cases of the issue, one each ------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix" or not hasattr(os, "geteuid") or os.geteuid() != 0
                    or not os.path.exists("/dev/full"), reason="/dev/full can be replaced only by root")
def test_pool_out_dev_full_as_root_keeps_the_device(results, runner) -> None:
    done = runner.invoke(main, ["pool", str(results), "--out", "/dev/full"])
    assert done.exit_code == 2
    assert done.stderr.startswith("error: --out /dev/full: is a character device, which is never replaced")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_symbolic_link_writes_the_file_it_points_to_and_stays_a_link(results, tmp_path, runner) -> None:
    (tmp_path / "pools").mkdir()
    target = tmp_path / "pools" / "pool.tsv"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "pool.tsv"
    link.symlink_to(target)
    done = runner.invoke(main, ["pool", str(results), "--out", str(link)])
    assert done.exit_code == 0, done.output
    assert link.is_symlink() and link.resolve() == target
    assert target.read_text(encoding="utf-8").startswith("query_id\tdoc_id\tn_systems\tbest_rank\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool.tsv", "pools"]  # the temporary file was beside the target
    assert [p.name for p in (tmp_path / "pools").iterdir()] == ["pool.tsv"]


@pytest.mark.parametrize("command, file", [
    (["pool", "{R}", "--out"], "qrels.txt"),
    (["report", "{R}", "--output"], "summary.csv"),
    (["report", "{R}", "--format", "md", "--output"], "manifest.json"),
    (["gate", "{R}", "{R}", "--metric", "ndcg@10", "--junit"], "per_query.csv"),
    (["pool", "{R}", "--out"], "runs/bm25.trec"),
])
def test_writing_over_a_file_of_a_results_folder_is_refused(command, file, results, runner) -> None:
    before = (results / file).read_bytes()
    done = runner.invoke(main, [part.format(R=results) for part in command] + [str(results / file)])
    assert done.exit_code == 2
    assert f"lies inside the results folder {results}" in done.stderr and done.stderr.count("\n") == 1
    assert (results / file).read_bytes() == before
    open_results(results).per_query  # every reader still reads it


def _judge_runs() -> None:
    """bench judge checks --out only once the serve extra is there (without it, it says how to install it)."""
    pytest.importorskip("fastapi", reason="bench judge needs the serve extra (its absence is the error otherwise)")
    pytest.importorskip("uvicorn", reason="bench judge needs the serve extra")


def test_judge_refuses_dev_null_before_the_server_starts(pool_file, runner) -> None:
    _judge_runs()
    done = runner.invoke(main, ["judge", str(pool_file), "--corpus", "article", "--out", "/dev/null"])
    assert done.exit_code == 2
    assert done.stderr == ("error: --out /dev/null: is the null device, which would discard the output. Fix: name a "
                           "regular file\n")
    assert "judging page" not in done.output


def test_judge_refuses_a_judgments_file_inside_a_results_folder(pool_file, results, runner) -> None:
    _judge_runs()
    done = runner.invoke(main, ["judge", str(pool_file), "--corpus", "article", "--out", str(results / "grades.txt")])
    assert done.exit_code == 2 and "lies inside the results folder" in done.stderr
    assert not (results / "grades.txt").exists()


def test_a_pool_file_follows_the_umask(results, tmp_path, runner) -> None:
    previous = os.umask(0o027)
    try:
        done = runner.invoke(main, ["pool", str(results), "--out", str(tmp_path / "pool.tsv")])
    finally:
        os.umask(previous)
    assert done.exit_code == 0, done.output
    assert stat.S_IMODE((tmp_path / "pool.tsv").stat().st_mode) == 0o640  # 0666 & ~027, not mkstemp's 0600


def test_a_replaced_file_keeps_its_mode(results, tmp_path, runner) -> None:
    report = tmp_path / "report.md"
    report.write_text("old\n", encoding="utf-8")
    os.chmod(report, 0o604)
    done = runner.invoke(main, ["report", str(results), "-o", str(report)])
    assert done.exit_code == 0, done.output
    assert stat.S_IMODE(report.stat().st_mode) == 0o604 and report.read_text(encoding="utf-8").startswith("### retbench: article")


def test_pool_to_stdout_puts_the_holes_on_stderr(results, runner) -> None:
    done = runner.invoke(main, ["pool", str(results), "--out", "-"])
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("query_id\tdoc_id\tn_systems\tbest_rank\n")
    assert "holes (unjudged documents" in done.stderr and "holes" not in done.stdout


def test_a_full_disk_leaves_the_previous_file_and_no_temporary_one(results, tmp_path, runner, monkeypatch) -> None:
    pool = tmp_path / "pool.tsv"
    pool.write_text("the previous pool\n", encoding="utf-8")

    def full(handle: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    done = runner.invoke(main, ["pool", str(results), "--out", str(pool)])
    monkeypatch.undo()
    assert done.exit_code == 2
    assert done.stderr == (f"error: --out {pool}: cannot be written (No space left on device). Fix: free space, or "
                           "name a file in a folder you can write to\n")
    assert pool.read_text(encoding="utf-8") == "the previous pool\n" and [p.name for p in tmp_path.iterdir()] == ["pool.tsv"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_folder_is_refused_before_any_work(results, tmp_path, runner) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        done = runner.invoke(main, ["pool", str(results), "--out", str(locked / "pool.tsv")])
    finally:
        locked.chmod(0o755)
    assert done.exit_code == 2 and f"its folder {locked} cannot be written to" in done.stderr


def test_the_checks_run_before_the_results_folder_is_read(tmp_path, runner) -> None:
    # the input is wrong too, but the output is refused first: nothing was read
    done = runner.invoke(main, ["pool", str(tmp_path / "no-such-results"), "--out", "/dev/null"])
    assert done.exit_code == 2 and "null device" in done.stderr


# ----- the library's writers -------------------------------------------------------------------


def test_the_library_writers_follow_the_same_rules(results, tmp_path) -> None:
    run = Run.from_mapping({"q1": [("d1", 2.0), ("d2", 1.0)]})
    os.mkfifo(tmp_path / "fifo.trec")
    with pytest.raises(RetbenchError, match="is a FIFO"):
        run.write(tmp_path / "fifo.trec")
    with pytest.raises(RetbenchError, match="lies inside the results folder"):
        run.write(results / "runs" / "mine.trec")
    with pytest.raises(RetbenchError, match="lies inside the results folder"):
        write_qrels({"q1": {"d1": 1}}, results / "qrels.txt")
    (tmp_path / "real.txt").write_text("", encoding="utf-8")
    (tmp_path / "qrels.txt").symlink_to("real.txt")
    write_qrels({"q1": {"d1": 1}}, tmp_path / "qrels.txt")
    assert (tmp_path / "qrels.txt").is_symlink() and read_qrels(tmp_path / "real.txt") == {"q1": {"d1": 1}}
    run.write(tmp_path / "run.trec.gz")
    assert Run.read(tmp_path / "run.trec.gz").query_ids == ["q1"]


def test_results_folder_holding_names_the_outermost_and_ignores_other_manifests(results, tmp_path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "manifest.json").write_text('{"name": "a web app"}', encoding="utf-8")
    assert results_folder_holding(tmp_path / "app" / "x.txt") is None  # not a retbench manifest
    assert results_folder_holding(results / "runs" / "bm25.trec") == results
    assert results_folder_holding(results.parent) is None
    write_output(tmp_path / "app" / "x.txt", "ok\n", "--out")
    assert (tmp_path / "app" / "x.txt").read_text(encoding="utf-8") == "ok\n"


def test_stdin_and_a_closed_descriptor_are_refused(tmp_path) -> None:
    with pytest.raises(RetbenchError, match="is standard input"):
        check_output("/dev/stdin", "--out")
    closed = os.open(tmp_path / "x", os.O_WRONLY | os.O_CREAT)
    os.close(closed)
    with pytest.raises(RetbenchError, match=f"file descriptor {closed} is not open"):
        check_output(f"/dev/fd/{closed}", "--out")


def test_a_file_of_a_suite_folder_names_the_suite(results, tmp_path, runner) -> None:
    # a suite folder's shape (bench compare with several --corpus): its manifest, a collection's folder inside
    suite = tmp_path / "20260101-000000-suite-2-abcdef12"
    (suite / "collections").mkdir(parents=True)
    (suite / "manifest.json").write_text('{"kind": "suite", "run_id": "20260101-000000-suite-2-abcdef12"}\n',
                                         encoding="utf-8")
    collection = suite / "collections" / "article"
    collection.mkdir()
    (collection / "manifest.json").write_text('{"run_id": "x"}\n', encoding="utf-8")
    done = runner.invoke(main, ["pool", str(results), "--out", str(collection / "pool.tsv")])
    assert done.exit_code == 2 and f"lies inside the results folder {suite}," in done.stderr
    assert f"e.g. {tmp_path / 'pool.tsv'}" in done.stderr and not (collection / "pool.tsv").exists()
