"""Reading never hangs, and a damaged results folder is one error line (issue 41, items 2 and 7).

A named pipe, a device, a socket or a folder in place of an input file is refused before it is
opened (opening a named pipe waits for a writer that may never come); an anonymous pipe (the
shell's ``<(zcat qrels.gz)``) is still read. A results folder's files must be regular files, and
its manifest, which no hash covers, must have the shape its readers take. ``bench gate`` and ``bench
tune`` bound ``--bootstrap-samples`` as ``bench compare`` does. Every reading command given a damaged
folder exits 0 or 2, never with a traceback, and never waits.

Damaged copies are made outside pytest's temporary root: the session's check of every results
folder under it (conftest) would otherwise read them, pipes included.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from corpora import InputFileError
from corpora.input_files import check_input_file, read_input_bytes
from harness import compare
from harness.cli import main
from harness.core.options import Statistics
from harness.store.read import open_results

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")

FAST = {"statistics": Statistics(bootstrap_samples=100, permutations=100)}
WAIT = 30  # seconds a command may take before the test calls it hung
RESTORE = "Fix: restore the file retbench wrote"


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A small results folder of two systems on the bundled article corpus, written once."""
    result = compare(["bm25", "lsa"], "article", ["ndcg@5", "mrr"], **FAST)
    return result.write(tmp_path_factory.mktemp("stored"), command_line=["bench", "compare"])


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A folder outside pytest's temporary root, removed after the test."""
    where = Path(tempfile.mkdtemp(prefix="retbench-damaged-"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


def _copy(stored: Path, scratch: Path) -> Path:
    folder = scratch / stored.name
    shutil.copytree(stored, folder)
    return folder


def _unblock(path: Path) -> None:
    """Open ``path``'s write end (without waiting), so that a reader stuck on it sees its end."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def invoke(args: list[str], pipes: tuple[Path, ...] = ()) -> Result:
    """``bench ARGS`` in a thread: a command still running after :data:`WAIT` seconds fails the test
    (its ``pipes`` are then given a writer, so that the test run itself goes on)."""
    done: dict[str, Result] = {}
    worker = threading.Thread(target=lambda: done.setdefault("result", CliRunner().invoke(main, args)), daemon=True)
    worker.start()
    worker.join(WAIT)
    if worker.is_alive():
        for pipe in pipes:
            _unblock(pipe)
        worker.join(5)
        pytest.fail(f"bench {' '.join(args)} waited on a pipe for {WAIT} s")
    return done["result"]


def one_error(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    return errors[0]


def _fifo_in_place(folder: Path, relative: str) -> Path:
    path = folder / relative
    path.unlink()
    os.mkfifo(path)
    return path


# ----- input files: refused before they are opened ------------------------------------------


def test_a_fifo_as_summary_csv_is_refused(stored, scratch) -> None:
    folder = _copy(stored, scratch)
    pipe = _fifo_in_place(folder, "summary.csv")
    error = one_error(invoke(["report", str(folder), "--format", "md"], (pipe,)))
    assert f"{pipe}: is a named pipe (FIFO), not a regular file" in error and RESTORE in error


def test_a_fifo_as_a_run_file_of_the_folder_is_refused(stored, scratch) -> None:
    folder = _copy(stored, scratch)
    pipe = _fifo_in_place(folder, "runs/bm25.trec")
    error = one_error(invoke(["pool", str(folder), "--out", str(scratch / "pool.tsv")], (pipe,)))
    assert f"{pipe}: is a named pipe (FIFO)" in error
    assert not (scratch / "pool.tsv").exists()


def test_a_fifo_as_per_query_csv_is_refused(stored, scratch) -> None:
    folder = _copy(stored, scratch)
    pipe = _fifo_in_place(folder, "per_query.csv")
    error = one_error(invoke(["gate", str(folder), str(stored), "--metric", "ndcg@5", "--system", "bm25"], (pipe,)))
    assert f"{pipe}: is a named pipe (FIFO)" in error


def test_a_named_pipe_as_a_qrels_file_is_refused_unopened(stored, scratch) -> None:
    pipe = scratch / "qrels.txt"
    os.mkfifo(pipe)  # no writer: opening it would wait forever
    error = one_error(invoke(["evaluate", "--metrics", "mrr", "--qrels", str(pipe), str(stored / "runs" / "bm25.trec")], (pipe,)))
    assert f"{pipe}: is a named pipe (FIFO), not a file: reading it would wait for a writer" in error
    assert "<(command)" in error
    gate = one_error(invoke(["gate", str(stored / "runs" / "bm25.trec"), str(stored / "runs" / "lsa.trec"),
                             "--qrels", str(pipe), "--metric", "ndcg@5", "--system", "bm25"], (pipe,)))
    assert f"{pipe}: is a named pipe (FIFO)" in gate


@pytest.mark.parametrize("role", ["qrels", "run"])
def test_dev_zero_as_a_qrels_or_run_file_is_refused(stored, role) -> None:
    zero, qrels, run = "/dev/zero", str(stored / "qrels.txt"), str(stored / "runs" / "bm25.trec")
    qrels, run = (zero, run) if role == "qrels" else (qrels, zero)
    args = ["evaluate", "--metrics", "mrr", "--qrels", qrels, run]
    error = one_error(invoke(args))
    assert "/dev/zero: is a device, not a file (a device such as /dev/zero never ends)" in error


def test_a_socket_as_a_qrels_file_is_refused(stored, scratch) -> None:
    where = scratch / "qrels.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(where))
        error = one_error(invoke(["evaluate", "--metrics", "mrr", "--qrels", str(where), str(stored / "runs" / "bm25.trec")]))
    finally:
        server.close()
    assert f"{where}: is a socket, not a file" in error


def test_an_anonymous_pipe_is_still_read(stored) -> None:
    """What bash's <(cat qrels.txt) passes: /dev/fd/N, a pipe whose writer is already there."""
    read_end, write_end = os.pipe()
    os.write(write_end, (stored / "qrels.txt").read_bytes())
    os.close(write_end)
    try:
        path = Path(f"/dev/fd/{read_end}")
        check_input_file(path)  # accepted: not a named pipe
        assert read_input_bytes(path) == (stored / "qrels.txt").read_bytes()
    finally:
        os.close(read_end)


def test_a_named_pipe_is_refused_by_the_library_reader_before_it_is_opened(scratch) -> None:
    pipe = scratch / "corpus.jsonl"
    os.mkfifo(pipe)
    with pytest.raises(InputFileError, match="named pipe"):
        read_input_bytes(pipe)  # returns at once: a blocking open would hang this test
    with pytest.raises(InputFileError, match="not a regular file"):
        check_input_file(pipe, regular=True)


# ----- the bootstrap's bound -----------------------------------------------------------------


def test_gate_bounds_bootstrap_samples_as_compare_does(stored, scratch) -> None:
    huge = str(10**12)
    gate = one_error(invoke(["gate", str(stored), str(stored), "--metric", "ndcg@5", "--bootstrap-samples", huge]))
    ours = one_error(invoke(["compare", "--corpus", "article", "--systems", "bm25", "--metrics", "ndcg@5",
                             "--bootstrap-samples", huge, "--out", str(scratch / "out")]))
    for error in (gate, ours):
        assert error.startswith("error: --bootstrap-samples 1,000,000,000,000 needs about ")
        assert "of memory available. Fix: pass at most " in error
    assert "gate fewer metrics per run" in gate and not (scratch / "out").exists()


def test_tune_bounds_bootstrap_samples_too(scratch) -> None:
    error = one_error(invoke(["tune", "bm25(k1=0.9|1.2)", "--corpus", "article", "--bootstrap-samples",
                              str(10**12), "--out", str(scratch / "out")]))
    assert error.startswith("error: --bootstrap-samples 1,000,000,000,000 needs about ")
    assert not (scratch / "out").exists()


# ----- the manifest's shape ------------------------------------------------------------------


def _edit_manifest(folder: Path, edit) -> None:
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    edit(manifest)
    path.write_text(json.dumps(manifest), encoding="utf-8")


def test_a_cut_systems_list_is_one_error(stored, scratch) -> None:
    folder = _copy(stored, scratch)
    _edit_manifest(folder, lambda m: m.update(systems=m["systems"][:1]))
    for args in (["report", str(folder), "--format", "md"], ["pool", str(folder), "--out", str(scratch / "p.tsv")],
                 ["gate", str(folder), str(stored), "--metric", "ndcg@5", "--system", "bm25"]):
        error = one_error(invoke(args))
        assert "manifest.json: is damaged (edited or cut short?): its systems list names 1 system(s)" in error
        assert "runs/lsa.trec is no system's" in error


@pytest.mark.parametrize(("edit", "said"), [
    (lambda m: m.update(systems="bm25"), "its entry systems is not a list"),
    (lambda m: m.update(systems=[]), "its entry systems is an empty list"),
    (lambda m: m["systems"][1].pop("run_file"), "its entry systems[1].run_file is missing"),
    (lambda m: m["metrics"][0].update(rel_threshold="1"), "its entry metrics[0].rel_threshold is not an integer"),
    (lambda m: m.update(hashes=[1]), "its entry hashes is not an object"),
    (lambda m: m["diagnosis"].pop("fail_rank"), "its entry diagnosis.fail_rank is missing"),
    (lambda m: m.update(kind=["suite"]), "its entry kind is not a string"),
])
def test_a_manifest_of_the_wrong_shape_is_refused_when_opened(stored, scratch, edit, said) -> None:
    folder = _copy(stored, scratch)
    _edit_manifest(folder, edit)
    with pytest.raises(InputFileError, match="manifest.json: is damaged") as caught:
        open_results(folder)
    assert said in str(caught.value) and RESTORE in str(caught.value)


def test_a_suite_manifest_of_the_wrong_shape_is_refused(scratch) -> None:
    folder = scratch / "suite"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"kind": "suite", "run_id": "x", "systems": ["bm25"],
                                                      "metrics": ["mrr"], "collections": [{"name": "a"}],
                                                      "statistics": {"alpha": 0.05, "bootstrap_samples": 9}}))
    with pytest.raises(InputFileError, match=r"its entry collections\[0\]\.folder is missing"):
        open_results(folder)
    error = one_error(invoke(["report", str(folder), "--format", "md"]))
    assert "collections[0].folder is missing" in error


def test_summary_csv_as_a_folder_is_one_error(stored, scratch) -> None:
    folder = _copy(stored, scratch)
    (folder / "summary.csv").unlink()
    (folder / "summary.csv").mkdir()
    error = one_error(invoke(["report", str(folder), "--format", "md"]))
    assert f"{folder / 'summary.csv'}: is a folder, not a file. {RESTORE}" in error


def test_a_manifest_that_is_a_fifo_or_a_json_list_is_one_error(stored, scratch) -> None:
    folder = _copy(stored, scratch)
    pipe = _fifo_in_place(folder, "manifest.json")
    assert "manifest.json: is a named pipe (FIFO)" in one_error(invoke(["report", str(folder), "--format", "md"], (pipe,)))
    pipe.unlink()
    pipe.write_text("[1, 2]", encoding="utf-8")
    assert "manifest.json: is not a JSON object" in one_error(invoke(["report", str(folder), "--format", "md"]))


# ----- every file x every damage x every reading command -------------------------------------

DAMAGES = ("deleted", "emptied", "halved", "folder", "fifo", "garbage", "json type")


def _damage(path: Path, how: str) -> bool:
    """Damage ``path`` one way; False when the way does not apply to it."""
    if how == "json type":
        if path.name != "manifest.json":
            return False
        path.write_text(json.dumps([json.loads(path.read_text(encoding="utf-8"))]), encoding="utf-8")
    elif how == "deleted":
        path.unlink()
    elif how == "emptied":
        path.write_bytes(b"")
    elif how == "halved":
        raw = path.read_bytes()
        path.write_bytes(raw[:len(raw) // 2])
    elif how == "folder":
        path.unlink()
        path.mkdir()
    elif how == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif how == "garbage":
        path.write_bytes(bytes(range(256)) * 3)
    return True


def _readers(folder: Path, stored: Path, out: Path) -> dict[str, list[str]]:
    qrels = str(stored / "qrels.txt")
    return {
        "report md": ["report", str(folder), "--format", "md"],
        "report text": ["report", str(folder), "--format", "text"],
        "gate": ["gate", str(folder), str(stored), "--metric", "ndcg@5", "--system", "bm25", "--bootstrap-samples", "100",
                 "--permutations", "100"],
        "pool": ["pool", str(folder), "--out", str(out / "pool.tsv")],
        "agree --results": ["agree", qrels, qrels, "--results", str(folder)],
    }


def test_every_damage_of_every_file_is_exit_0_or_2_and_never_waits(stored, scratch) -> None:
    files = sorted(p.relative_to(stored).as_posix() for p in stored.rglob("*") if p.is_file())
    assert {"manifest.json", "summary.csv", "per_query.csv", "qrels.txt", "runs/bm25.trec"} <= set(files)
    refused: set[str] = set()
    for relative in files:
        for how in DAMAGES:
            copy = scratch / "copy"
            folder = copy / stored.name
            shutil.copytree(stored, folder)
            if _damage(folder / relative, how):
                for name, args in _readers(folder, stored, copy).items():
                    result = invoke(args, (folder / relative,))
                    case = f"{relative} {how}, bench {name}: {result.output[-400:]}"
                    assert result.exit_code in (0, 2), case
                    assert result.exception is None or isinstance(result.exception, SystemExit), case
                    assert "Traceback" not in result.output, case
                    if result.exit_code == 2:
                        assert [line.startswith("error: ") for line in result.output.splitlines()
                                if line.startswith(("error: ", "Error: "))] == [True], case
                        refused.add(relative)
            shutil.rmtree(copy)
    # every file some reader reads is refused when damaged (report.txt is made again, not read)
    assert {"manifest.json", "summary.csv", "per_query.csv", "qrels.txt", "runs/bm25.trec", "runs/lsa.trec",
            "comparisons.csv", "leaderboard.csv"} <= refused
