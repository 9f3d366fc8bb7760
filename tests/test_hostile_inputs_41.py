"""Issue 41 checked again as an adversary would, past the cases its own tests cover: an output that
is one of the command's inputs (by name, symbolic link or hard link), a huge sparse input file with
no line end, a judgments file written through a hard link or after its lock file was removed by
hand, a manifest edited at keys the readers use (a compare folder's and a suite's), and two
collections whose folder names differ only in case. Each case asserts the exact outcome: exit 2 with
one ``error:`` line and nothing destroyed, or the file read as it should be."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from corpora import DEFAULT_ANALYZER, InputFileError, RetbenchError, get_analyzer, load_dataset
from corpora.input_files import MAX_JUDGMENT_LINE, read_input_bytes
from corpora.output_files import check_output
from harness import compare, compare_suite
from harness.cli import main
from harness.judgments.judge_app import JudgingSession
from harness.suite.store import _folder_names
from tests.test_suite import FAST, small_collection


def _refused(result: Result, *parts: str) -> str:
    """Exit 2, one ``error:`` line holding each of ``parts``, no traceback; the line."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """bm25 and lsa on the bundled article corpus (its diagnosis has failures)."""
    return compare("bm25,lsa", "article", ["ndcg@10"], **FAST).write(tmp_path_factory.mktemp("results"),
                                                                      command_line=["test"])


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("suite41")
    other = small_collection(root / "fruit", seed=1)
    return compare_suite("bm25,lsa", ["article", str(other)], ["ndcg@10"], **FAST).write(root / "out",
                                                                                         command_line=["test"])


@pytest.fixture
def run_files(results, tmp_path) -> dict[str, Path]:
    """The folder's two runs and its qrels, copied out as plain files."""
    files = {"a": tmp_path / "a.trec", "b": tmp_path / "b.trec", "q": tmp_path / "q.txt"}
    shutil.copy(results / "runs" / "bm25.trec", files["a"])
    shutil.copy(results / "runs" / "lsa.trec", files["b"])
    shutil.copy(results / "qrels.txt", files["q"])
    return files


# ----- class 1: an output is never one of the command's inputs ------------------------------------

@pytest.mark.parametrize("target, via, what", [
    ("b", "same", "the candidate"), ("a", "same", "the baseline"), ("q", "same", "the --qrels file"),
    ("b", "symlink", "the candidate"), ("b", "hardlink", "the candidate"), ("q", "dotdot", "the --qrels file"),
])
def test_gate_junit_is_never_a_file_it_gates(run_files, tmp_path, target: str, via: str, what: str) -> None:
    before = {name: path.read_bytes() for name, path in run_files.items()}
    path = run_files[target]
    junit = {"same": path, "symlink": tmp_path / "link.xml", "hardlink": tmp_path / "hard.xml",
             "dotdot": tmp_path / "sub" / ".." / path.name}[via]
    if via == "symlink":
        junit.symlink_to(path)
    elif via == "hardlink":
        os.link(path, junit)
    elif via == "dotdot":
        (tmp_path / "sub").mkdir()
    result = CliRunner().invoke(main, ["gate", str(run_files["a"]), str(run_files["b"]), "--qrels",
                                       str(run_files["q"]), "--metric", "ndcg@10", "--junit", str(junit)])
    _refused(result, f"--junit {junit}", f"is {what} {path}, which this command reads", "Fix: name another file")
    assert {name: p.read_bytes() for name, p in run_files.items()} == before


def test_gate_junit_elsewhere_is_written(run_files, tmp_path) -> None:
    junit = tmp_path / "junit.xml"
    result = CliRunner().invoke(main, ["gate", str(run_files["a"]), str(run_files["b"]), "--qrels",
                                       str(run_files["q"]), "--metric", "ndcg@10", "--junit", str(junit)])
    assert result.exit_code in (0, 1), result.output
    assert junit.read_text().startswith("<?xml")


def test_an_output_that_is_an_input_is_refused_by_the_writer(tmp_path) -> None:
    pool = tmp_path / "pool.tsv"
    pool.write_text("query_id\tdoc_id\n")
    os.link(pool, tmp_path / "other-name.txt")
    for out in (pool, tmp_path / "other-name.txt", tmp_path / "." / "pool.tsv"):
        with pytest.raises(RetbenchError, match=r"is the pool .*pool\.tsv, which this command reads"):
            check_output(out, "--out", appends=True, inputs={"the pool": pool})
    assert pool.read_text() == "query_id\tdoc_id\n"
    assert check_output(tmp_path / "judged.txt", "--out", appends=True, inputs={"the pool": pool}).file \
        == tmp_path / "judged.txt"
    # an input not given, or missing, is not compared (its reader says what is wrong with it)
    check_output(tmp_path / "judged.txt", "--out", inputs={"the pool": None, "the qrels": tmp_path / "nope"})


def test_judge_out_equal_to_its_pool_is_refused_before_anything_is_read(tmp_path) -> None:
    pytest.importorskip("fastapi", reason="bench judge needs the serve extra")
    pytest.importorskip("uvicorn", reason="bench judge needs the serve extra")
    pool = tmp_path / "pool.tsv"
    pool.write_text("query_id\tdoc_id\tn_systems\tbest_rank\nq01\tsso1\t1\t1\n")
    result = CliRunner().invoke(main, ["judge", str(pool), "--corpus", "article", "--out", str(pool), "--port", "0"])
    _refused(result, f"--out {pool}: is the pool {pool}, which this command reads")
    assert pool.read_text() == "query_id\tdoc_id\tn_systems\tbest_rank\nq01\tsso1\t1\t1\n"


# ----- class 2: a huge sparse file without line ends is never read whole ---------------------------

def test_a_sparse_file_without_line_ends_stops_after_one_line(tmp_path) -> None:
    sparse = tmp_path / "sparse.trec"
    with open(sparse, "wb") as handle:
        handle.truncate(8 << 30)  # 8 GiB of NUL bytes that take no disk (a wrong file, truncate -s)
    with pytest.raises(InputFileError) as caught:
        read_input_bytes(sparse, max_line=MAX_JUDGMENT_LINE, what="a run file")
    assert str(caught.value).startswith(f"{sparse}:1: line longer than 1 MiB: no line of a run file")


def test_bench_evaluate_refuses_a_sparse_run_within_a_small_memory(tmp_path, run_files) -> None:
    """Read whole, the 4 GiB file would fill memory (exit 1, out of memory); bounded, it is exit 2."""
    sparse = tmp_path / "sparse.trec"
    with open(sparse, "wb") as handle:
        handle.truncate(4 << 30)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    done = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "evaluate", str(sparse),
                           "--qrels", str(run_files["q"]), "--metrics", "ndcg"], capture_output=True, text=True,
                          timeout=120, preexec_fn=limit)
    assert done.returncode == 2, done.stderr
    assert f"error: {sparse}:1: line longer than 1 MiB" in done.stderr


# ----- class 3: one writer per judgments file, whatever its name ------------------------------------

@pytest.fixture(scope="module")
def article():
    return load_dataset("article")


def _session(article, out: Path) -> JudgingSession:
    return JudgingSession([("q01", "sso1"), ("q03", "misc3")], article, out, get_analyzer(DEFAULT_ANALYZER))


def test_a_second_writer_through_a_hard_link_is_refused(article, tmp_path) -> None:
    out = tmp_path / "judged.txt"
    out.write_text("q05 0 backup1 2\n")
    os.link(out, tmp_path / "same-file.txt")
    with _session(article, out):
        with pytest.raises(RetbenchError, match=r"same-file\.txt is being written by another bench judge through "
                                                r"another name of the same file \(a hard link\)"):
            _session(article, tmp_path / "same-file.txt")
    assert out.read_text() == "q05 0 backup1 2\n"
    _session(article, tmp_path / "same-file.txt").close()  # the first one gone, the link may be judged


def test_a_second_writer_after_the_lock_file_was_removed_is_refused(article, tmp_path) -> None:
    out = tmp_path / "judged.txt"
    out.write_text("")
    with _session(article, out) as first:
        first._writer.path.unlink()  # removed by hand while the first server runs
        with pytest.raises(RetbenchError, match="or one whose lock file was removed by hand"):
            _session(article, out)
        first.judge("q01", "sso1", 2)
    assert out.read_text() == "q01 0 sso1 2\n"


def test_a_file_the_first_judgment_creates_is_locked_from_then_on(article, tmp_path) -> None:
    out = tmp_path / "new.txt"
    with _session(article, out) as first:
        first.judge("q01", "sso1", 1)  # creates the file
        os.link(out, tmp_path / "link.txt")
        with pytest.raises(RetbenchError, match="through another name of the same file"):
            _session(article, tmp_path / "link.txt")
    assert out.read_text() == "q01 0 sso1 1\n"


# ----- class 7: a manifest edited at a key a reader uses -------------------------------------------

def _edit(folder: Path, tmp_path: Path, path: list[Any], value: Any) -> Path:
    """A copy of ``folder`` whose manifest has ``value`` at ``path`` (``...``: the key deleted)."""
    copy = tmp_path / "edited"
    shutil.copytree(folder, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    holder = manifest
    for key in path[:-1]:
        holder = holder[key]
    if value is ...:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


@pytest.mark.parametrize("path, value, named", [
    (["versions"], None, "versions is not an object"),
    (["command_line"], None, "command_line is not a list"),
    (["conventions"], None, "conventions is not an object"),
    (["corpus", "queries_excluded"], 3, "corpus.queries_excluded is not a list"),
    (["statistics"], {}, "statistics.alpha is missing"),
    (["statistics", "confidence"], "x", "statistics.confidence is not an integer or a number"),
    (["statistics", "confidence"], ..., "statistics.confidence is missing"),
    (["statistics", "alpha"], None, "statistics.alpha is not an integer or a number"),
    (["statistics", "bootstrap_samples"], [1], "statistics.bootstrap_samples is not an integer"),
    (["statistics", "seed"], 1.5, "statistics.seed is not an integer"),
    (["statistics", "randomisation_test"], None, "statistics.randomisation_test is not an object"),
    (["statistics", "randomisation_test", "permutations"], ..., "statistics.randomisation_test.permutations is "
                                                                 "missing"),
    (["statistics", "baseline"], "x", 'statistics.baseline "x" is none of its systems (bm25, lsa)'),
    (["statistics", "baseline"], 3, "statistics.baseline is not a string"),
    (["conventions", "unjudged", "reading"], {}, "conventions.unjudged.reading is not a string"),
])
@pytest.mark.parametrize("command", ["md", "pool", "gate"])
def test_a_manifest_edited_at_a_key_a_reader_uses_is_one_error(results, tmp_path, path, value, named,
                                                               command) -> None:
    edited = _edit(results, tmp_path, path, value)
    args = {"md": ["report", str(edited), "--format", "md", "-o", str(tmp_path / "r.md")],
            "pool": ["pool", str(edited), "--out", str(tmp_path / "pool.tsv")],
            "gate": ["gate", str(edited), str(results), "--metric", "ndcg@10", "--system", "bm25"]}[command]
    _refused(CliRunner().invoke(main, args), f"{edited / 'manifest.json'}: is damaged", named)
    assert not (tmp_path / "r.md").exists() and not (tmp_path / "pool.tsv").exists()


def test_a_diagnosis_category_deleted_from_the_manifest_is_one_error(results, tmp_path) -> None:
    categories = json.loads((results / "manifest.json").read_text())["diagnosis"]["categories"]
    used = {line.split(",")[2] for line in (results / "diagnosis.csv").read_text().splitlines()[1:]}
    header = (results / "diagnosis.csv").read_text().splitlines()[0].split(",")
    assert header[2] == "category" and used, header
    gone = sorted(used)[0]
    edited = _edit(results, tmp_path, ["diagnosis", "categories", gone], ...)
    assert gone in categories
    result = CliRunner().invoke(main, ["report", str(edited), "--format", "md", "-o", str(tmp_path / "r.md")])
    _refused(result, "manifest.json: is damaged (edited?): its entry diagnosis.categories does not list "
             f"{gone}, a category of diagnosis.csv")


@pytest.mark.parametrize("path, value, named", [
    (["systems", 0], "x", "its systems do not match suite_summary.csv (bm25, x is in one, not the other)"),
    (["systems"], ["lsa"], "its systems do not match suite_summary.csv (bm25 is in one, not the other)"),
    (["metrics", 0], "x", "its metrics do not match suite_summary.csv (x is in one, not the other)"),
    (["collections", 0, "name"], "zzz", "its collections do not match suite_summary.csv"),
    (["collections", 0, "documents"], "x", "collections[0].documents is not an integer"),
    (["versions"], None, "versions is not an object"),
    (["command_line"], 3, "command_line is not a list"),
])
def test_a_suite_manifest_edited_at_a_key_a_reader_uses_is_one_error(suite, tmp_path, path, value, named) -> None:
    edited = _edit(suite, tmp_path, path, value)
    for out in ("r.md", "r.html"):
        if out == "r.html":
            pytest.importorskip("matplotlib", reason="the HTML report needs the report extra")
        result = CliRunner().invoke(main, ["report", str(edited), "-o", str(tmp_path / out)])
        _refused(result, f"{edited / 'manifest.json'}: is damaged", named)
        assert not (tmp_path / out).exists()


# ----- class 4: collections whose folder names differ only in case ---------------------------------

def test_suite_collection_folders_differ_in_more_than_case() -> None:
    assert _folder_names(["article", "Article", "ARTICLE", "article-2", "x"]) == \
        ["article", "Article-2", "ARTICLE-3", "article-2-2", "x"]
