"""Hostile inputs (issue 30): every one is one `error: ... Fix: ...` line, exit 2, naming the file
and line where there is one; never a traceback, never a silent misreading.

* JSON fields of the wrong type (an object, an array, a number as a text, a title or an id), which
  were indexed as their Python spelling, and JSON nested too deeply (a ``RecursionError``);
* a corpus folder whose scan meets an unreadable or a huge tree (``--corpus /`` ended in a
  ``PermissionError`` from ``/proc``);
* ``--split`` on a layout without splits (it was ignored), empty path options (``--out ''`` wrote
  into the current folder);
* files that never end or are not files (``/dev/zero`` as qrels read until ``MemoryError``), lines
  over the bounds, and the neighbours: bytes that are not UTF-8, UTF-16, NUL bytes, empty files, a
  byte order mark and ``\\r\\n`` line ends (which must work).

Folders are written into ``tmp_path``; the CLI goes through ``bench`` with ``CliRunner``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import corpora.trec_collection as trec_collection
from corpora import InputFileError, RetbenchError, load_dataset, read_qrels, read_run
from corpora.input_files import MAX_JUDGMENT_LINE, _read_bounded
from harness.cli import main
from harness.core.options import RunOptions, Statistics

ARTICLE_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d2 2\n"
ARTICLE_RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d2 1 3.0 t\n"


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def bench(*args: str):
    return CliRunner().invoke(main, list(args))


def one_error_line(result) -> str:
    """The run ended with exit 2 and one ``error: ... Fix: ...`` line on stderr; its text."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Fix: " in lines[0], result.stderr
    return lines[0]


def beir(corpus: list[dict], queries: list[dict] | None = None) -> dict[str, str]:
    queries = queries or [{"_id": "q1", "text": "refund"}]
    return {"corpus.jsonl": "".join(json.dumps(r) + "\n" for r in corpus),
            "queries.jsonl": "".join(json.dumps(r) + "\n" for r in queries),
            "qrels/test.tsv": "q1\td1\t1\n"}


def tabular(corpus: list[dict], queries: list[dict] | None = None) -> dict[str, str]:
    queries = queries or [{"id": "q1", "text": "refund"}]
    return {"corpus.jsonl": "".join(json.dumps(r) + "\n" for r in corpus),
            "queries.jsonl": "".join(json.dumps(r) + "\n" for r in queries),
            "qrels.tsv": "q1\td1\t1\n"}


GOOD_DOC = {"_id": "d1", "text": "refunds take a week"}
WRONG_VALUES = [pytest.param({"en": "refunds"}, "an object", id="object"),
                pytest.param(["refunds", "week"], "an array", id="array"),
                pytest.param(5, "a number", id="number"),
                pytest.param(True, "true/false", id="bool")]


# ----- JSON field types -------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "kind"), WRONG_VALUES)
@pytest.mark.parametrize(("layout", "where", "field"), [
    ("beir", "corpus", "text"), ("beir", "corpus", "title"), ("beir", "queries", "text"),
    ("tabular", "corpus", "text"), ("tabular", "corpus", "title"), ("tabular", "queries", "text"),
    ("tabular", "corpus", "contents"),
])
def test_a_text_field_that_is_not_a_string_is_refused_at_its_line(tmp_path: Path, layout: str, where: str,
                                                                    field: str, value: object, kind: str) -> None:
    key = "_id" if layout == "beir" else "id"
    second = {key: "d2", "text": "passwords"}
    if where == "corpus":
        bad = {key: "d1", "text": "refunds", field: value} if field != "contents" else {key: "d1", field: value}
        records = ([second, bad], None)
        line, wrong_file = 2, "corpus.jsonl"
    else:
        records = ([{key: "d1", "text": "refunds"}], [{key: "q0", "text": "ok"}, {key: "q1", field: value}])
        line, wrong_file = 2, "queries.jsonl"
    folder = write(tmp_path / layout, (beir if layout == "beir" else tabular)(*records))
    message = one_error_line(bench("corpora", "validate", str(folder)))
    assert f"{wrong_file}:{line}: " in message
    what = "document" if where == "corpus" else "query"
    assert f"the {what}'s '{field}' field holds {kind}" in message


def test_null_text_and_title_read_as_empty_as_before(tmp_path: Path) -> None:
    folder = write(tmp_path / "b", beir([{"_id": "d1", "text": "refund", "title": None},
                                         {"_id": "d2", "text": None, "title": "passwords"}]))
    corpus = load_dataset(str(folder)).corpus
    assert corpus.titles == ["", "passwords"] and corpus.texts == ["refund", ""]


@pytest.mark.parametrize("layout", ["beir", "tabular"])
def test_integer_ids_read_as_their_digits(tmp_path: Path, layout: str) -> None:
    key = "_id" if layout == "beir" else "id"
    files = (beir if layout == "beir" else tabular)([{key: 7, "text": "refunds"}, {key: "d1", "text": "x"}],
                                                     [{key: 1, "text": "refund"}])
    files[next(name for name in files if "qrels" in name)] = "1\t7\t1\n"
    dataset = load_dataset(str(write(tmp_path / layout, files)))
    assert dataset.corpus.ids == ["7", "d1"] and dataset.queries.ids == ["1"]
    assert dataset.qrels["1"] == {"7": 1}


@pytest.mark.parametrize(("value", "kind"), [
    pytest.param(1.5, "a number", id="fraction"), pytest.param(1.0, "a number", id="float-integral"),
    pytest.param(True, "true/false", id="bool"), pytest.param({"a": 1}, "an object", id="object"),
    pytest.param(["d1"], "an array", id="array")])
@pytest.mark.parametrize("where", ["corpus", "queries"])
def test_an_id_that_is_not_a_string_or_an_integer_is_refused(tmp_path: Path, value: object, kind: str,
                                                            where: str) -> None:
    records = ([{"_id": "d0", "text": "a"}, {"_id": value, "text": "b"}], None) if where == "corpus" else \
        ([{"_id": "d1", "text": "a"}], [{"_id": "q0", "text": "a"}, {"_id": value, "text": "b"}])
    folder = write(tmp_path / "b", beir(*records))
    message = one_error_line(bench("corpora", "validate", str(folder)))
    assert f"{where}.jsonl:2: the '_id' field holds {kind}" in message


def test_beir_metadata_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    folder = write(tmp_path / "b", beir([GOOD_DOC, {"_id": "d2", "text": "x", "metadata": "oops"}]))
    message = one_error_line(bench("corpora", "validate", str(folder)))
    assert "corpus.jsonl:2: the document's 'metadata' field holds a string, not an object" in message


def test_a_csv_document_longer_than_the_csv_modules_limit_loads(tmp_path: Path) -> None:
    import csv

    long_text = "refunds take a week " * 20_000  # 400 KB: the csv module stops at 128 KiB by default
    folder = write(tmp_path / "t", {"corpus.csv": f'id,text\nd1,{long_text}\nd2,"{long_text}, quoted"\n',
                                    "queries.csv": "id,text\nq1,refund\n", "qrels.tsv": "q1\td1\t1\n"})
    limit = csv.field_size_limit()
    assert load_dataset(str(folder)).corpus.texts == [long_text, f"{long_text}, quoted"]
    assert csv.field_size_limit() == limit  # raised only while reading


# ----- JSON nested too deeply -----------------------------------------------------------------------


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("layout", ["beir", "tabular"])
@pytest.mark.parametrize("where", ["corpus", "queries"])
def test_json_nested_too_deeply_is_an_error_at_its_line(tmp_path: Path, layout: str, where: str) -> None:
    key = "_id" if layout == "beir" else "id"
    files = (beir if layout == "beir" else tabular)([{key: "d1", "text": "a"}], [{key: "q1", "text": "a"}])
    name = f"{where}.jsonl"
    files[name] += f'{{"{key}": "x2", "text": "b", "deep": {DEEP}}}\n'
    message = one_error_line(bench("corpora", "validate", str(write(tmp_path / layout, files))))
    assert f"{name}:2: a JSON value nested too deeply to read" in message


def test_a_deep_facets_file_line_and_a_huge_json_number_are_errors_too(tmp_path: Path) -> None:
    deep = write(tmp_path, {"deep.jsonl": f'{{"query_id": "q1", "x": 1}}\n{{"query_id": "q2", "x": {DEEP}}}\n'})
    with pytest.raises(InputFileError, match=r"deep\.jsonl:2: a JSON value nested too deeply"):
        from corpora import load_facets_file
        load_facets_file(deep / "deep.jsonl")
    huge = write(tmp_path / "huge", beir([GOOD_DOC, {"_id": "d2", "text": "x"}]))
    (huge / "corpus.jsonl").write_text(f'{{"_id": "d1", "text": "a"}}\n{{"_id": {"9" * 5000}, "text": "b"}}\n')
    message = one_error_line(bench("corpora", "validate", str(huge)))
    assert "corpus.jsonl:2: cannot read the JSON" in message


# ----- scanning a folder ------------------------------------------------------------------------------


def _trec_folder(folder: Path) -> Path:
    return write(folder, {"docs/a.sgml": "<DOC>\n<DOCNO> d1 </DOCNO>\nrefunds take a week\n</DOC>\n",
                          "topics.txt": "<top>\n<num> 1\n<title> refund\n</top>\n", "qrels.txt": "1 0 d1 1\n"})


def test_a_tree_bigger_than_the_scan_bound_is_refused_not_read(tmp_path: Path, monkeypatch) -> None:
    folder = _trec_folder(tmp_path / "trec")
    assert load_dataset(str(folder)).corpus.ids == ["d1"]
    for n in range(6):
        (folder / "docs" / f"extra{n}.txt").write_text("nothing\n")
    monkeypatch.setattr(trec_collection, "MAX_SCANNED_ENTRIES", 8)
    message = one_error_line(bench("corpora", "show", str(folder)))
    assert f"{folder}: more than 8 files and folders within 3 levels" in message


def test_an_unreadable_entry_met_by_the_scan_is_an_error_naming_it(tmp_path: Path, monkeypatch) -> None:
    folder = _trec_folder(tmp_path / "trec")
    locked = folder / "docs" / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path):  # as /proc/1/cwd does for a user who may not look into it (root can read a chmod 000)
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(trec_collection.os, "scandir", scandir)
    message = one_error_line(bench("compare", "--corpus", str(folder), "--systems", "bm25"))
    assert f"error: {locked}: cannot be read (Permission denied)" in message


def test_an_os_error_in_any_layout_check_is_an_error_naming_the_path(tmp_path: Path, monkeypatch) -> None:
    folder = _trec_folder(tmp_path / "trec")
    real_is_file = Path.is_file

    def is_file(self: Path) -> bool:
        if self.name == "corpus.jsonl" and folder in self.parents:  # the BEIR check, the first to look
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    message = one_error_line(bench("corpora", "show", str(folder)))
    assert f"{folder / 'corpus.jsonl'}: cannot be read (Permission denied)" in message


def test_a_file_of_size_zero_is_never_opened_by_the_scan(tmp_path: Path, monkeypatch) -> None:
    folder = _trec_folder(tmp_path / "trec")
    (folder / "kmsg").write_text("")  # /proc/kmsg says size 0 and blocks when read
    opened: list[str] = []
    real_open = Path.open

    def watched(self: Path, *args, **kwargs):
        opened.append(self.name)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", watched)
    trec_collection.classify_files(folder)
    assert "kmsg" not in opened and "a.sgml" in opened


# ----- --split and empty paths --------------------------------------------------------------------------


SMART = {"ADI.ALL": ".I 1\n.T\nrefunds\n.W\nrefunds take a week\n.I 2\n.T\npasswords\n.W\nreset\n",
         "ADI.QRY": ".I 1\n.W\nrefund\n", "ADI.REL": "1 1\n"}
CRANFIELD = {"cran.all.1400": SMART["ADI.ALL"], "cran.qry": ".I 001\n.W\nrefund\n", "cranqrel": "1 1 2\n"}


@pytest.mark.parametrize(("layout", "files"), [
    ("smart", SMART), ("cranfield", CRANFIELD),
    ("cystic_fibrosis", {"cf74": "PN 74001\n", "cfquery": "QN 00001\n"}),
    ("tabular", tabular([{"id": "d1", "text": "refunds"}])),
])
def test_a_split_on_a_layout_with_one_set_of_judgments_is_refused(tmp_path: Path, layout: str,
                                                                  files: dict[str, str]) -> None:
    folder = write(tmp_path / layout, files)
    message = one_error_line(bench("corpora", "show", "--split", "dev", str(folder)))
    assert f"split 'dev' asked for, but a {layout} folder has one set of judgments" in message
    if layout != "cystic_fibrosis":  # the stub files above are not a real CF collection
        assert bench("corpora", "show", "--split", "test", str(folder)).exit_code == 0
    if layout == "smart":  # bench compare refuses it before fitting anything
        message = one_error_line(bench("compare", "--corpus", str(folder), "--split", "dev", "--systems", "bm25"))
        assert "split 'dev' asked for, but a smart folder has one set of judgments (ADI.REL)" in message


def test_a_tabular_split_reads_its_qrels_file_and_names_the_others(tmp_path: Path) -> None:
    files = {"corpus.csv": "id,text\nd1,refunds\nd2,passwords\n", "queries.csv": "id,text\nq1,refund\n",
             "qrels/test.tsv": "q1\td1\t1\n", "qrels/dev.tsv": "q1\td2\t1\n"}
    folder = write(tmp_path / "t", files)
    assert load_dataset(str(folder), format="tabular", split="dev").qrels["q1"] == {"d2": 1}
    assert load_dataset(str(folder), format="tabular").qrels["q1"] == {"d1": 1}
    with pytest.raises(InputFileError, match=r"split 'train' not found. Fix: choose one of the splits dev, test"):
        load_dataset(str(folder), format="tabular", split="train")
    (folder / "qrels.tsv").write_text("q1\td1\t1\n")  # a top-level file too: dev still reads qrels/dev.tsv
    assert load_dataset(str(folder), format="tabular", split="dev").qrels["q1"] == {"d2": 1}


def test_a_trec_split_must_name_a_qrels_file(tmp_path: Path) -> None:
    folder = _trec_folder(tmp_path / "trec")
    message = one_error_line(bench("corpora", "show", "--split", "dev", str(folder)))
    assert "split 'dev' asked for, but no qrels file's name contains it (qrels files: qrels.txt)" in message
    (folder / "docs" / "b.sgml").write_text("<DOC>\n<DOCNO> d2 </DOCNO>\npasswords\n</DOC>\n")
    (folder / "qrels.dev.txt").write_text("1 0 d2 2\n")
    assert load_dataset(str(folder), split="dev").qrels["1"] == {"d2": 2}
    assert load_dataset(str(folder)).qrels["1"] == {"d1": 1, "d2": 2}  # the default: every qrels file, merged


@pytest.mark.parametrize("args", [
    ["compare", "--out", ""], ["compare", "--out", "  "], ["compare", "--cache-dir", ""],
    ["compare", "--facets-file", ""], ["compare", "--config", ""], ["compare", "--corpus", ""],
    ["tune", "bm25(k1=1|2)", "--out", ""], ["tune", "bm25(k1=1|2)", "--cache-dir", ""],
    ["evaluate", "--qrels", "", "--metrics", "P@1", "run.txt"], ["evaluate", "--qrels", "q.txt", "--metrics", "P@1", ""],
    ["report", ""], ["report", "somewhere", "-o", ""], ["corpora", "show", ""],
    ["gate", "", "cand", "--metric", "mrr"], ["gate", "base", "", "--metric", "mrr"],
    ["gate", "base", "cand.trec", "--qrels", "", "--metric", "mrr"],
    ["gate", "base", "--corpus", "article", "--systems", "bm25", "--metric", "mrr", "--out", ""],
    ["gate", "base", "cand", "--metric", "mrr", "--junit", ""], ["serve", "--results", ""],
    ["pool", "somewhere", "--depth", "5", "--out", ""], ["agree", "a.txt", "b.txt", "--results", ""],
])
def test_an_empty_path_option_is_refused_not_read_as_the_current_folder(tmp_path: Path, monkeypatch,
                                                                        args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    message = one_error_line(bench(*args))
    assert "is empty" in message
    assert list(tmp_path.iterdir()) == []  # nothing written into the current folder


def test_an_empty_path_in_an_experiment_file_is_refused_at_its_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "e.toml").write_text('systems = ["bm25"]\nout = ""\n')
    message = one_error_line(bench("compare", "--config", "e.toml"))
    assert "e.toml:2: out is empty" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.toml"]


def test_the_library_refuses_an_empty_results_folder(tmp_path: Path, monkeypatch) -> None:
    from harness import compare

    monkeypatch.chdir(tmp_path)
    result = compare(["bm25"], "article", ["mrr"], statistics=Statistics(bootstrap_samples=10, permutations=10),
                     run=RunOptions(cache=False))
    with pytest.raises(RetbenchError, match=r"the results folder \(out\) is empty"):
        result.write("")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RetbenchError, match="corpus '' is empty"):
        load_dataset("")


# ----- what is not a file, and what never ends ------------------------------------------------------------


def _evaluate(qrels: Path | str, run: Path | str):
    return bench("evaluate", "--qrels", str(qrels), "--metrics", "P@1", str(run))


@pytest.fixture
def article(tmp_path: Path) -> tuple[Path, Path]:
    return (write(tmp_path, {"q.txt": ARTICLE_QRELS})) / "q.txt", (write(tmp_path, {"r.txt": ARTICLE_RUN})) / "r.txt"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_dev_zero_is_refused_before_it_is_read(article, which: str) -> None:
    qrels, run = article
    message = one_error_line(_evaluate("/dev/zero", run) if which == "qrels" else _evaluate(qrels, "/dev/zero"))
    assert "error: /dev/zero: is a device, not a file" in message


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
@pytest.mark.parametrize("option", ["--config", "--facets-file"])
def test_dev_zero_as_an_experiment_or_facets_file_is_refused(option: str) -> None:
    message = one_error_line(bench("compare", option, "/dev/zero", "--systems", "bm25"))
    assert "/dev/zero: is " in message and "not a file" in message


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_an_endless_stream_stops_at_its_first_overlong_line() -> None:
    with open("/dev/zero", "rb") as endless:
        with pytest.raises(InputFileError, match=r"zero:1: line longer than 4096 bytes: no line of a qrels file"):
            _read_bounded(endless, Path("zero"), 4096, "a qrels file")


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="no /dev/fd on this system")
def test_a_pipe_is_read_like_a_file_and_one_without_line_ends_stops(article) -> None:
    """An anonymous pipe, as the shell's <(zcat qrels.gz) passes it (/dev/fd/N); a named one is
    refused unopened (tests/test_reading_bounded.py)."""
    qrels, run = article

    def feed(data: bytes, endless: bool) -> Path:
        read_end, write_end = os.pipe()

        def write() -> None:
            try:
                with open(write_end, "wb") as out:
                    out.write(data)
                    while endless:
                        out.write(b"\0" * 65536)
            except BrokenPipeError:
                pass

        threading.Thread(target=write, daemon=True).start()
        return Path(f"/dev/fd/{read_end}")

    pipe = feed(ARTICLE_QRELS.encode(), False)
    assert read_qrels(pipe)["q1"] == {"d1": 1, "d2": 0}
    os.close(int(pipe.name))
    pipe = feed(b"q1 0 d1 1\n", True)
    message = one_error_line(_evaluate(pipe, run))
    os.close(int(pipe.name))  # the writer's next write fails: it ends
    assert f"{pipe}:2: line longer than 1 MiB: no line of a qrels file is that long" in message


def test_a_line_over_the_bound_names_the_file_and_line(tmp_path: Path, article) -> None:
    qrels, run = article
    long_id = "d" * (MAX_JUDGMENT_LINE + 1)
    write(tmp_path, {"long.txt": ARTICLE_QRELS + f"q3 0 {long_id} 1\n",
                     "long.run": ARTICLE_RUN + f"q3 Q0 {long_id} 1 1.0 t\n"})
    assert "long.txt:4: line longer than 1 MiB" in one_error_line(_evaluate(tmp_path / "long.txt", run))
    assert "long.run:4: line longer than 1 MiB: no line of a run file" in one_error_line(
        _evaluate(qrels, tmp_path / "long.run"))
    bomb = tmp_path / "zeros.txt.gz"  # 3 MiB of zeros in a few KiB: read a chunk at a time, stopped
    bomb.write_bytes(gzip.compress(b"q1 0 d1 1\n" + bytes(3 << 20)))
    assert "zeros.txt.gz:2: line longer than 1 MiB" in one_error_line(_evaluate(bomb, run))


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
       limit=st.integers(1, 30), final_newline=st.booleans())
def test_the_long_line_scan_equals_the_line_by_line_answer(lines: list[bytes], limit: int,
                                                           final_newline: bool) -> None:
    raw = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    expected = next((n for n, line in enumerate(raw.split(b"\n"), 1) if len(line) > limit), None)
    with pytest.raises(InputFileError) if expected else _nothing() as caught:
        assert _read_bounded(_Chunks(raw, limit), Path("f"), limit, "a file") == raw
    if expected:
        assert caught.value.line == expected


class _Chunks:
    """A stream that hands out a few bytes at a time, as a pipe may."""

    def __init__(self, raw: bytes, size: int) -> None:
        self.raw, self.size = raw, max(1, size // 3)

    def read(self, wanted: int) -> bytes:
        part, self.raw = self.raw[:min(wanted, self.size)], self.raw[min(wanted, self.size):]
        return part


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        return False


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_folder_or_a_socket_given_as_a_file_is_refused(tmp_path: Path, article, which: str) -> None:
    read = read_qrels if which == "qrels" else read_run
    with pytest.raises(InputFileError, match="is a folder, not a file"):
        read(tmp_path)
    if not hasattr(socket, "AF_UNIX"):
        pytest.skip("no Unix sockets on this system")
    address = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(address))
        with pytest.raises(InputFileError, match=r"s: is a socket, not a file"):
            read(address)


# ----- encodings, NUL bytes, empty files, BOM and CRLF -------------------------------------------------------


@pytest.mark.parametrize("which", ["qrels", "run"])
@pytest.mark.parametrize(("content", "expected"), [
    pytest.param(lambda text: text.replace("d2", "d\xe92", 1).encode("latin-1"), r":2: byte 0xe9 is not valid UTF-8",
                 id="latin-1"),
    pytest.param(lambda text: text.encode("utf-16"), r":1: the file is UTF-16 text", id="utf-16"),
    pytest.param(lambda text: text.replace("d2", "d\x002", 1).encode(), r":2: holds a NUL byte", id="nul"),
    pytest.param(lambda text: b"", r": the (qrels|run) holds? no (judgments|results)", id="empty"),
])
def test_bad_bytes_in_a_qrels_or_run_file_name_the_file_line_and_encoding(tmp_path: Path, article, which: str,
                                                                         content, expected: str) -> None:
    qrels, run = article
    bad = tmp_path / f"bad.{which}"
    bad.write_bytes(content(ARTICLE_QRELS if which == "qrels" else ARTICLE_RUN))
    message = one_error_line(_evaluate(bad, run) if which == "qrels" else _evaluate(qrels, bad))
    assert f"bad.{which}" in message
    assert re.search(expected, message), message


def test_a_bom_and_crlf_line_ends_read_like_plain_files(tmp_path: Path, article) -> None:
    qrels, run = article
    plain = _evaluate(qrels, run)
    assert plain.exit_code == 0
    write(tmp_path, {"w.qrels": b"\xef\xbb\xbf" + ARTICLE_QRELS.replace("\n", "\r\n").encode(),
                     "w.run": b"\xef\xbb\xbf" + ARTICLE_RUN.replace("\n", "\r\n").encode()})
    windows = _evaluate(tmp_path / "w.qrels", tmp_path / "w.run")
    assert windows.exit_code == 0, windows.output
    assert windows.stdout.replace("w.run", "r.txt") == plain.stdout
    folder = write(tmp_path / "crlf", {name: b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
                                       for name, text in tabular([GOOD_DOC | {"id": "d1"}]).items()})
    dataset = load_dataset(str(folder))
    assert dataset.corpus.texts == ["refunds take a week"] and dataset.queries.texts == ["refund"]


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("corpus.jsonl", b'{"_id": "d1", "text": "caf\xe9"}\n', r"corpus\.jsonl:1: byte 0xe9 is not valid UTF-8"),
    ("queries.jsonl", "\n".join(['{"_id": "q1", "text": "a"}'] * 2).encode("utf-16"), r"queries\.jsonl:1: the file is UTF-16"),
    ("corpus.jsonl", b'{"_id": "d1", "text": "a\x00b"}\n', r"corpus\.jsonl:1: not valid JSON \(Invalid control"),
    ("corpus.jsonl", b"", r"corpus\.jsonl: the corpus holds no documents"),
])
def test_bad_bytes_in_a_corpus_file_name_the_file_and_line(tmp_path: Path, name: str, content: bytes,
                                                           expected: str) -> None:
    folder = write(tmp_path / "b", beir([GOOD_DOC]))
    (folder / name).write_bytes(content)
    message = one_error_line(bench("corpora", "validate", str(folder)))
    assert re.search(expected, message), message
