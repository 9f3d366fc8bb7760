"""Nothing silently wrong, nothing lost: a results folder records the SHA-256 of every file it holds,
and every reader (``bench report``, ``bench gate``, ``bench serve``'s store, the library's
``open_results``) refuses a file edited or truncated since, unless told to accept it; a folder
written before the hashes is read with one warning; a staging folder is never results. And a stdout
that cannot be written (full, closed) is one error line and a non-zero exit, never a lost result.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from corpora import InputFileError, RetbenchError
from harness import compare
from harness.cli import main
from harness.store.folder import host_tag, write_folder
from harness.store.read import open_results
from harness.serve.store import NotStored, RunStore
from harness.core.options import Statistics

REPO = Path(__file__).resolve().parents[1]
BENCH = "from harness.cli import main\nmain(prog_name='bench')\n"
FAST = {"statistics": Statistics(bootstrap_samples=200, permutations=200)}
NOT_VERIFIED = "records no file hashes"


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    result = compare(["bm25", "lsa"], "article", ["ndcg@5", "mrr"], **FAST)
    return result.write(tmp_path_factory.mktemp("stored"), command_line=["bench", "compare"], reports="md")


@pytest.fixture
def copy(stored, tmp_path) -> Path:
    """A copy of the stored folder under its own run id, to edit."""
    folder = tmp_path / "out" / stored.name
    shutil.copytree(stored, folder)
    return folder


def _sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _drop_hashes(folder: Path) -> None:
    """Make ``folder`` look written before the hashes were recorded."""
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["files"]
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))


def _set_cells(path: Path, system: str, column: str, value: str, key: str = "system") -> None:
    """Every cell of ``column`` in the rows of ``system`` (in column ``key``) becomes ``value``."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[frame[key] == system, column] = value
    frame.to_csv(path, index=False, lineterminator="\n")


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error: ")]


# ----- what is recorded ------------------------------------------------------------------------


def test_the_manifest_records_the_hash_of_every_other_file(stored) -> None:
    manifest = json.loads((stored / "manifest.json").read_text())
    files = sorted(p.relative_to(stored).as_posix() for p in stored.rglob("*") if p.is_file())
    assert "manifest.json" in files and "report.md" in files and "runs/bm25.trec" in files
    # every file but the manifest itself (it cannot hold its own hash), sorted, with its SHA-256
    assert list(manifest["files"]) == [f for f in files if f != "manifest.json"]
    assert manifest["files"] == {f: _sha256(stored / f) for f in files if f != "manifest.json"}


def test_a_tune_folder_records_its_hashes_too(tmp_path) -> None:
    from harness import tune

    folder = tune("bm25(k1=0.9|1.2)", "article", "mrr", folds=2,
                  statistics=Statistics(bootstrap_samples=20)).write(tmp_path, reports="md")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["files"] == {f: _sha256(folder / f) for f in ("per_query.csv", "report.md", "report.txt",
                                                                  "tune.csv", "tune_cost.csv")}
    assert "tune.csv" in manifest["columns"]  # what each file holds, under its own key


def test_a_writer_cannot_set_the_hashes_itself(tmp_path) -> None:
    with pytest.raises(ValueError, match="sets 'files'"):
        write_folder(tmp_path, {"a.txt": "a\n"}, "run", lambda run_id: ({"files": {}}, {}))
    assert [p.name for p in tmp_path.iterdir()] == []  # nothing kept


def test_files_written_in_pieces_are_hashed_as_written(tmp_path) -> None:
    pieces = [("runs/a.trec", "q1 Q0 d1 1 2.0 a\n"), ("runs/a.raw.tsv", "header\n"),
              ("runs/a.trec", "q1 Q0 d2 2 1.0 a\n"), ("runs/a.raw.tsv", "q1\td1\n"), ("runs/a.trec", "")]
    folder = write_folder(tmp_path, {"a.txt": "a\n"}, "run", lambda run_id: ({}, {}), pieces=iter(pieces))
    assert (folder / "runs/a.trec").read_text() == "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n"
    assert (folder / "runs/a.raw.tsv").read_text() == "header\nq1\td1\n"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["files"] == {f: _sha256(folder / f) for f in ("a.txt", "runs/a.raw.tsv", "runs/a.trec")}


@pytest.mark.parametrize("name", ["a.txt", "manifest.json"])
def test_a_piece_cannot_replace_a_file_of_the_folder(tmp_path, name: str) -> None:
    with pytest.raises(ValueError, match=f"file '{name}' would replace"):
        write_folder(tmp_path, {"a.txt": "a\n"}, "run", lambda run_id: ({}, {}), pieces=[(name, "b\n")])
    assert [p.name for p in tmp_path.iterdir()] == []  # nothing kept


def test_a_failure_between_pieces_keeps_nothing(tmp_path) -> None:
    def pieces():
        yield "runs/a.trec", "q1 Q0 d1 1 2.0 a\n"
        raise RetbenchError("the run's second block is bad. Fix: none")

    with pytest.raises(RetbenchError, match="second block"):
        write_folder(tmp_path, {"a.txt": "a\n"}, "run", lambda run_id: ({}, {}), pieces=pieces())
    assert [p.name for p in tmp_path.iterdir()] == []


# ----- every reader refuses an edited file -------------------------------------------------------


def test_report_refuses_an_edited_summary_and_accepts_it_on_purpose(runner, copy) -> None:
    _set_cells(copy / "summary.csv", "bm25", "mrr", "0.999")
    refused = runner.invoke(main, ["report", str(copy), "--format", "md"])
    assert refused.exit_code == 2 and refused.stdout == ""
    assert _error_lines(refused.stderr) == [line for line in refused.stderr.splitlines() if line]
    (line,) = _error_lines(refused.stderr)
    assert line.startswith(f"error: {copy / 'summary.csv'}: was edited or truncated since retbench wrote it")
    assert "--accept-edited" in line
    accepted = runner.invoke(main, ["report", str(copy), "--format", "md", "--accept-edited"])
    assert accepted.exit_code == 0 and "0.999" in accepted.stdout  # the edited value, shown as asked
    warnings = [line for line in accepted.stderr.splitlines() if line]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {copy / 'summary.csv'}: was edited")


def test_gate_refuses_an_edited_per_query_cell_that_would_change_its_verdict(runner, stored, copy) -> None:
    arguments = ["gate", str(stored), str(copy), "--metric", "mrr", "--system", "bm25"]
    assert runner.invoke(main, arguments).exit_code == 0  # the same folder: unchanged
    _set_cells(copy / "per_query.csv", "bm25", "mrr", "0.0")
    refused = runner.invoke(main, arguments)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert _error_lines(refused.stderr)[0].startswith(f"error: {copy / 'per_query.csv'}: was edited or truncated")
    accepted = runner.invoke(main, [*arguments, "--accept-edited"])
    assert accepted.exit_code == 1 and "REGRESSED" in accepted.stdout  # the edit is what the gate then reads
    assert f"warning: {copy / 'per_query.csv'}: was edited" in accepted.stderr


def test_a_truncated_file_is_refused(runner, stored, copy) -> None:
    qrels = copy / "qrels.txt"
    qrels.write_bytes(qrels.read_bytes()[: len(qrels.read_bytes()) // 2])
    refused = runner.invoke(main, ["gate", str(stored), str(copy), "--metric", "mrr", "--system", "bm25"])
    assert refused.exit_code == 2
    assert _error_lines(refused.stderr)[0].startswith(f"error: {qrels}: was edited or truncated")


def test_the_library_reader_refuses_an_edited_run_file_and_a_file_not_recorded(copy) -> None:
    run = copy / "runs" / "bm25.trec"
    run.write_text(run.read_text().replace(" 1 ", " 01 ", 1))  # one byte more: the ranking reads the same
    with pytest.raises(InputFileError, match=r"bm25.trec: was edited or truncated.*accept_edited=True"):
        open_results(copy).run("bm25")
    heard: list[str] = []
    assert open_results(copy, accept_edited=True, say=heard.append).run("bm25")
    assert len(heard) == 1 and "bm25.trec: was edited" in heard[0]
    manifest = json.loads((copy / "manifest.json").read_text())
    del manifest["files"]["diagnosis.csv"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputFileError, match=r"diagnosis.csv: is not one of the files its manifest.json records"):
        open_results(copy).diagnosis
    manifest["files"] = ["summary.csv"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputFileError, match=r"manifest.json: is damaged \(edited or cut short\?\): its entry files is not an object"):
        open_results(copy).summary


def test_the_served_store_refuses_an_edited_file_unless_told(copy) -> None:
    _set_cells(copy / "comparisons.csv", "bm25", "p_value", "0.5", key="system_a")
    root = copy.parent
    with pytest.raises(NotStored, match=r"comparisons.csv: was edited or truncated"):
        RunStore(root).comparisons(copy.name)
    assert RunStore(root).metrics(copy.name)["runId"] == copy.name  # the files it reads are intact
    store = RunStore(root, accept_edited=True)
    rows = store.comparisons(copy.name)
    assert {row["pValue"] for row in rows if row["systemA"] == "bm25"} == {0.5}


def test_bench_serve_names_its_own_flag_in_a_served_error(copy) -> None:
    """The dashboard's reader started the server with bench serve: the fix names its flag, not the library's
    keyword argument."""
    from harness.cli.serve import served_fix

    _set_cells(copy / "comparisons.csv", "bm25", "p_value", "0.5", key="system_a")
    with pytest.raises(NotStored) as refused:
        RunStore(copy.parent, explain=served_fix).comparisons(copy.name)
    assert "bench serve --accept-edited" in str(refused.value) and "accept_edited" not in str(refused.value)
    with pytest.raises(NotStored, match="`accept_edited=True`"):  # the library, asked directly, names its own
        RunStore(copy.parent).comparisons(copy.name)


# ----- folders written before the hashes; staging folders ----------------------------------------


def test_a_folder_without_hashes_is_read_with_one_warning(runner, stored, copy) -> None:
    _drop_hashes(copy)
    _set_cells(copy / "summary.csv", "bm25", "mrr", "0.999")  # cannot be told from the file written
    result = runner.invoke(main, ["report", str(copy), "--format", "md"])
    assert result.exit_code == 0 and "0.999" in result.stdout
    lines = [line for line in result.stderr.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith(f"warning: {copy}: its manifest.json {NOT_VERIFIED}")
    gate = runner.invoke(main, ["gate", str(copy), str(stored), "--metric", "mrr", "--system", "bm25"])
    assert gate.exit_code == 0 and gate.stderr.count(NOT_VERIFIED) == 1


@pytest.mark.parametrize("format_", ["md", "html", "latex"])
def test_a_summary_without_a_system_row_is_one_error_line(runner, copy, format_) -> None:
    """Consistent but incomplete: a folder without hashes (or read with --accept-edited)."""
    if format_ == "html":
        pytest.importorskip("matplotlib")
    _drop_hashes(copy)
    summary = copy / "summary.csv"
    summary.write_text("".join(line for line in summary.read_text().splitlines(keepends=True)
                               if not line.startswith("lsa,")))
    result = runner.invoke(main, ["report", str(copy), "--format", format_])
    assert result.exit_code == 2 and result.stdout == ""
    assert _error_lines(result.stderr) == [f"error: {summary}: holds no row of system 'lsa', which its manifest "
                                           "lists. Fix: restore the file retbench wrote, or make the folder again "
                                           "with the command in its manifest."]
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_per_query_rows_missing_for_a_system_are_an_error(runner, copy) -> None:
    per_query = copy / "per_query.csv"
    lines = per_query.read_text().splitlines(keepends=True)
    per_query.write_text("".join(line for line in lines if not line.startswith("lsa,q03,")))
    result = runner.invoke(main, ["report", str(copy), "--format", "md", "--accept-edited"])
    assert result.exit_code == 2
    assert _error_lines(result.stderr)[0].startswith(f"error: {per_query}: holds other queries for system 'lsa'")


def test_a_staging_folder_is_never_read_as_results(runner, stored, tmp_path) -> None:
    # what a run killed after writing its manifest leaves: complete-looking, but not renamed into place
    staging = tmp_path / f".staging-{host_tag()}-{os.getpid()}-abc123"
    shutil.copytree(stored, staging)
    with pytest.raises(InputFileError, match="is the staging folder of a run that did not finish"):
        open_results(staging)
    result = runner.invoke(main, ["report", str(staging), "--format", "md"])
    assert result.exit_code == 2 and "staging folder" in _error_lines(result.stderr)[0]
    assert RunStore(tmp_path).runs() == []


# ----- a stdout that cannot be written ------------------------------------------------------------


def _bench(*args: str, cwd: Path, shell_suffix: str | None = None, **run) -> subprocess.CompletedProcess:
    """``bench ARGS`` in a fresh interpreter; with ``shell_suffix``, through ``sh`` with that redirection."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    if shell_suffix is None:
        return subprocess.run([sys.executable, "-c", BENCH, *args], cwd=cwd, env=env, text=True, timeout=300, **run)
    command = 'python="$0" code="$1"; shift; "$python" -c "$code" "$@" ' + shell_suffix
    return subprocess.run(["sh", "-c", command, sys.executable, BENCH, *args], cwd=cwd, env=env, text=True,
                          timeout=300, **run)


needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
needs_shell = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell closes stdout")


def _one_error(stderr: str) -> str:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    (line,) = [line for line in stderr.splitlines() if line.strip()]
    assert line.startswith("error: ")
    return line


@needs_dev_full
@pytest.mark.parametrize("command", [
    ["compare", "--systems", "bm25,lsa", "--metrics", "mrr", "--bootstrap-samples", "50", "--permutations", "50"],
    ["tune", "bm25(k1=0.9|1.2)", "--metric", "mrr", "--folds", "2", "--bootstrap-samples", "20"],
], ids=["compare", "tune"])
def test_a_full_stdout_keeps_the_results_and_names_them(tmp_path, command) -> None:
    with open("/dev/full", "w") as full:
        done = _bench(*command, "--out", "out", "--quiet", cwd=tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 2
    (folder,) = (tmp_path / "out").iterdir()
    line = _one_error(done.stderr)
    assert line.startswith("error: writing to stdout failed (No space left on device); the results are in "
                           f"{Path('out') / folder.name}. Fix: ")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["files"] and all(_sha256(folder / f) == h for f, h in manifest["files"].items())


@needs_dev_full
def test_report_into_a_full_stdout_is_an_error(stored, tmp_path) -> None:
    with open("/dev/full", "w") as full:
        done = _bench("report", str(stored), "--format", "md", cwd=tmp_path, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert _one_error(done.stderr).startswith("error: writing to stdout failed (No space left on device)")


@needs_shell
@pytest.mark.parametrize("command", [["report", "STORED", "--format", "md"], ["corpora"], ["--help"]],
                         ids=["report", "corpora", "help"])
def test_a_closed_stdout_is_an_error_whatever_prints(stored, tmp_path, command) -> None:
    args = [str(stored) if word == "STORED" else word for word in command]
    done = _bench(*args, cwd=tmp_path, shell_suffix=">&-", capture_output=False, stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert _one_error(done.stderr) == ("error: stdout is closed, so the output cannot be written. Fix: send stdout "
                                       "somewhere it can be written (a file with space, a pipe, the terminal)")


@needs_shell
def test_a_closed_stdout_is_no_error_for_a_command_that_prints_nothing_there(stored, tmp_path) -> None:
    done = _bench("report", str(stored), "-o", "report.md", cwd=tmp_path, shell_suffix=">&-",
                  stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "report.md").read_text() == (stored / "report.md").read_text()
