"""The results store: no result is ever lost, and the manifest tells every input apart.

Two runs in one second both land; an unusable ``--out`` is refused before any work; labels too
long for a file name get bounded names; a run killed while writing leaves a staging folder that
the next write removes; the manifest hashes documents, queries, judgments and configuration
separately.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

import harness.store.write as results
import harness.store.folder as results_folder
from corpora import RetbenchError
from harness.cli import main
from harness import CompareResult, compare
from harness.core.options import Statistics

REPO = Path(__file__).resolve().parents[1]
ARTICLE = REPO / "corpora" / "bundled" / "article"
FROZEN = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


class FrozenClock(datetime):
    @classmethod
    def now(cls, tz=None):  # noqa: ANN001, ANN206 - datetime's own signature
        return FROZEN


@pytest.fixture(scope="module")
def result() -> CompareResult:
    return compare("bm25", "article", "mrr,ndcg@5", statistics=Statistics(bootstrap_samples=20))


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results, "datetime", FrozenClock)


def folders(out: Path) -> list[Path]:
    """The results folders in ``out`` (staging folders are hidden)."""
    return sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


# ----- two runs in one second ------------------------------------------------------------------


def test_a_run_id_claimed_by_another_run_meanwhile_moves_to_the_next_suffix(
        result: CompareResult, tmp_path: Path, frozen_clock: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process lands the same run id between our choice and our rename (the race two
    `bench compare` into one --out in the same second run): both results must land."""
    out = tmp_path / "out"
    real_rename = os.rename
    raced: list[Path] = []
    other_started = []

    def rename_after_another_run(source, target):  # noqa: ANN001 - os.rename's signature
        if not other_started:
            other_started.append(True)
            raced.append(results.write_results(result, out, ["bench", "other"]))  # lands first
        return real_rename(source, target)

    monkeypatch.setattr(os, "rename", rename_after_another_run)
    ours = results.write_results(result, out, ["bench", "ours"])
    assert ours != raced[0] and ours.name == f"{raced[0].name}-2"
    assert [f.name for f in folders(out)] == sorted([raced[0].name, ours.name])
    assert manifest_of(ours)["run_id"] == ours.name and manifest_of(raced[0])["run_id"] == raced[0].name
    assert manifest_of(ours)["command_line"] == ["bench", "ours"]


def test_concurrent_writes_in_one_second_all_land(result: CompareResult, tmp_path: Path, frozen_clock: None) -> None:
    out = tmp_path / "out"
    start = threading.Barrier(4)
    landed: list[Path] = []
    errors: list[BaseException] = []

    def write() -> None:
        start.wait()
        try:
            landed.append(results.write_results(result, out, ["bench"]))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(landed)) == 4 and folders(out) == sorted(landed)
    assert {manifest_of(f)["run_id"] for f in landed} == {f.name for f in landed}
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging folder left


# ----- an unusable --out is refused before any work -------------------------------------------


def _refused_before_work(tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    import harness.cli.compare as cli_compare

    def no_work(*args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("the comparison ran before --out was checked")

    monkeypatch.setattr(cli_compare, "compare", no_work)
    outcome = CliRunner().invoke(main, ["compare", "--systems", "bm25", "--metrics", "mrr", "--out", str(out)])
    assert outcome.exit_code == 2, outcome.output
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit)
    assert outcome.stderr.startswith(f"error: results folder {out}") and "Fix: choose a folder" in outcome.stderr
    assert outcome.stdout == ""  # not even the corpus was loaded
    return outcome.stderr


def test_an_out_that_is_a_file_is_refused_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("x")
    assert "is not a folder" in _refused_before_work(tmp_path, tmp_path / "file", monkeypatch)
    assert "cannot be created: " in _refused_before_work(tmp_path, tmp_path / "file" / "sub", monkeypatch)


def test_dev_null_is_refused_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null on this system")
    assert "is not a folder" in _refused_before_work(tmp_path, Path("/dev/null"), monkeypatch)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_out_is_refused_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert "cannot be written to" in _refused_before_work(tmp_path, locked, monkeypatch)
        assert "cannot be created in" in _refused_before_work(tmp_path, locked / "new", monkeypatch)
    finally:
        locked.chmod(0o755)


def test_a_folder_that_refuses_files_is_refused_before_any_work(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """What a read-only folder does to a non-root user, for the runs that are root."""
    locked = tmp_path / "locked"
    locked.mkdir()
    real_mkstemp = results_folder.tempfile.mkstemp

    def refuse(*args, dir=None, **kwargs):  # noqa: ANN002, ANN003, A002 - mkstemp's signature
        if Path(dir) == locked:
            raise PermissionError(13, "Permission denied")
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(results_folder.tempfile, "mkstemp", refuse)
    assert "cannot be written to (Permission denied)" in _refused_before_work(tmp_path, locked, monkeypatch)


# ----- labels too long for a file name ---------------------------------------------------------

LONG = ("rrf(bm25(k1=1.01,b=0.51),bm25(k1=1.02,b=0.52),lsa(dims=5),lsa(dims=7),weighted(bm25,lsa(dims=9)),"
        "rrf(bm25(k1=0.7),lsa(dims=4)))")


def test_a_label_too_long_for_a_file_name_gets_a_bounded_one(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(main, ["compare", "--systems", f"bm25,{LONG}", "--analyzer", "english",
                                        "--metrics", "mrr", "--bootstrap-samples", "20", "--no-cache",
                                        "--out", str(tmp_path / "out"), "--quiet"])
    assert outcome.exit_code == 0, outcome.output
    (folder,) = folders(tmp_path / "out")
    systems = manifest_of(folder)["systems"]
    label = systems[1]["label"]
    assert len(label) > 255  # more than any file system allows in a name
    stem = Path(systems[1]["run_file"]).name.removesuffix(".trec")
    assert len(stem) == results.MAX_NAME and stem.startswith("rrf_bm25_k1=1.01_b=0.51_analyzer=english_")
    assert (folder / systems[1]["run_file"]).is_file() and (folder / systems[1]["raw_scores_file"]).is_file()
    tags = {line.split()[5] for line in (folder / systems[1]["run_file"]).read_text().splitlines()}
    assert tags == {systems[1]["run_tag"]} == {stem}
    assert systems[0]["run_file"] == "runs/bm25_analyzer=english_.trec"
    assert systems[0]["run_tag"] == systems[0]["label"] == "bm25(analyzer=english)"


def test_labels_that_clean_to_the_same_name_get_distinct_files() -> None:
    used: set[str] = set()
    first = results.run_file_stem("a(b)", used)
    used.add(first)
    second = results.run_file_stem("a_b_", used)
    assert first == "a_b_" and second.startswith("a_b_-") and second != first


# ----- a run killed while writing ---------------------------------------------------------------

_KILLED_WRITER = """
import os, sys, time
from harness import Statistics, compare
from harness.store.write import write_results
result = compare("bm25", "article", "mrr", statistics=Statistics(bootstrap_samples=10))
def stall(source, target):
    print("staged", flush=True)
    time.sleep(600)
os.rename = stall  # the last step of a write: the process is killed before it
write_results(result, sys.argv[1])
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_the_next_write_removes_what_a_killed_run_left(result: CompareResult, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(out)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "staged"
    finally:
        writer.kill()
        writer.wait()
    (left,) = [p for p in out.iterdir() if p.name.startswith(".")]
    assert (left / "summary.csv").is_file()  # a whole staged result, never renamed into place
    alive = out / f".staging-{results_folder.host_tag()}-{os.getpid()}-writing"  # this process: still writing
    alive.mkdir()
    said: list[str] = []
    folder = results.write_results(result, out, ["bench"], said.append)
    assert not left.exists() and alive.exists()
    assert said == [f"removed {left}: the staging folder of a run (process {writer.pid}) killed while writing"]
    assert folders(out) == [folder]


def test_bench_compare_says_on_stderr_what_it_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = out / f".staging-{results_folder.host_tag()}-{dead.pid}-abc123"
    stale.mkdir(parents=True)
    outcome = CliRunner().invoke(main, ["compare", "--systems", "bm25", "--metrics", "mrr", "--bootstrap-samples",
                                        "10", "--no-cache", "--out", str(out), "--quiet"])
    assert outcome.exit_code == 0, outcome.output
    assert f"warning: removed {stale}" in outcome.stderr and not stale.exists()


# ----- the manifest's hashes --------------------------------------------------------------------


def _hashes(tmp_path: Path, corpus: Path, *extra: str) -> dict[str, str]:
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True)
    outcome = CliRunner().invoke(main, ["compare", "--corpus", str(corpus), "--systems", "bm25", "--metrics", "mrr",
                                        "--bootstrap-samples", "10", "--no-cache", "--out", str(out), "--quiet",
                                        *extra])
    assert outcome.exit_code == 0, outcome.output
    (folder,) = folders(out)
    return manifest_of(folder)["hashes"]


def _edit(folder: Path, name: str, old: str, new: str) -> None:
    path = folder / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_each_input_has_its_own_hash(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(ARTICLE, corpus)
    base = _hashes(tmp_path, corpus)
    assert set(base) == {"documents", "queries", "judgments", "configuration"}
    # the documents' hash is the corpus's content hash, the key of the index cache: unchanged
    assert base["documents"] == "2fc786a5f66b5f2b77a26b1d1822a6e927373550c8cfc6090f541e06162ef021"

    def changed(*extra: str) -> set[str]:
        hashes = _hashes(tmp_path, corpus, *extra)
        return {k for k in base if hashes[k] != base[k]}

    first_judgment = (corpus / "qrels" / "test.tsv").read_text().splitlines()[1]
    query_id, doc_id, grade = first_judgment.split("\t")
    _edit(corpus, "qrels/test.tsv", first_judgment, f"{query_id}\t{doc_id}\t{3 - int(grade)}")  # one grade
    assert changed() == {"judgments"}
    shutil.copy(ARTICLE / "qrels" / "test.tsv", corpus / "qrels" / "test.tsv")
    assert changed() == set()
    _edit(corpus, "queries.jsonl", "money back", "money returned")  # one query's text
    assert changed() == {"queries"}
    shutil.copy(ARTICLE / "queries.jsonl", corpus / "queries.jsonl")
    with (corpus / "queries.jsonl").open("a") as extra:  # one more query, never judged
        extra.write(json.dumps({"_id": "q99", "text": "an extra question"}) + "\n")
    assert changed() == {"queries"}
    shutil.copy(ARTICLE / "queries.jsonl", corpus / "queries.jsonl")
    assert changed("--seed", "1") == {"configuration"}
    assert changed("--analyzer", "english") == {"configuration"}


def test_the_judgments_hash_ignores_line_order() -> None:
    from corpora import Qrels

    a = Qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    b = Qrels({"q2": {"d3": 2}, "q1": {"d2": 0, "d1": 1}})
    c = Qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}})
    assert a.content_hash() == b.content_hash() != c.content_hash()


# ----- what a TREC file cannot hold -------------------------------------------------------------


def test_judgments_with_ids_a_trec_file_cannot_hold_are_refused() -> None:
    from corpora.trec_io import format_qrels

    with pytest.raises(RetbenchError, match="document id 'my doc' cannot be written"):
        format_qrels({"q1": {"my doc": 1}})
