"""``bench evaluate`` reads TREC run files a piece of whole queries at a time (corpora/run_pieces.py):
one pass where each query's lines are consecutive, two (temporary files by query) where they are not,
the whole file where a piece cannot be read on the fast path; every output the same bytes either way."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import run_pieces
from corpora.run_pieces import NotStreamable, ScatteredRun, grouped_pieces, scattered_pieces
from harness.cli import main
from harness.cli import evaluate as evaluate_cli

METRICS = "ndcg@10,precision@5,recall@20,mrr,map,bpref,judged@10"


def _lines(n_queries: int = 40, depth: int = 30, seed: int = 5) -> list[str]:
    """A run of ``n_queries`` x ``depth`` lines with tied scores (ties break by doc id), one query
    (q7) with scores that tie only as floats, and queries the qrels do not judge."""
    rng = random.Random(seed)
    lines = []
    for q in range(n_queries):
        docs = rng.sample(range(200), depth)
        for rank, doc in enumerate(docs, 1):
            score = round(rng.random(), 2)
            if q == 7 and rank <= 2:
                score = 0.5 + rank * 1e-12  # equal as single-precision floats
            lines.append(f"q{q} Q0 d{doc} {rank} {score} tag{q}")
    return lines


def _qrels(path: Path, seed: int = 9) -> Path:
    rng = random.Random(seed)
    rows = [f"q{q} 0 d{d} {rng.choice([0, 1, 2, 3, -1])}" for q in range(3, 46)  # q40..q45: missing from the run
            for d in rng.sample(range(200), 25)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _bench(*args: str) -> str:
    result = CliRunner().invoke(main, ["evaluate", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    lines = _lines()
    grouped = tmp_path / "grouped.trec"
    grouped.write_text("\n".join(lines) + "\n")
    shuffled = tmp_path / "shuffled.trec"
    mixed = lines[:]
    random.Random(1).shuffle(mixed)
    shuffled.write_text("\n".join(mixed) + "\n")
    return {"grouped": grouped, "shuffled": shuffled, "qrels": _qrels(tmp_path / "qrels.txt")}


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(run_pieces, "PIECE_BYTES", 700)  # a few queries a piece: many pieces


def _whole(monkeypatch) -> None:
    """Make every file be read whole, as before streaming."""
    def refuse(*args, **kwargs):
        raise NotStreamable()
        yield  # pragma: no cover

    monkeypatch.setattr(evaluate_cli, "grouped_pieces", refuse)


OPTION_SETS = [
    ["--format", "trec"],
    ["--format", "csv"],
    ["--format", "json"],
    ["--format", "trec", "--run-queries-only"],
    ["--format", "csv", "--depth", "7", "--rel-threshold", "2"],
    ["--format", "trec", "--order", "trec9"],
    ["--format", "csv", "--order", "file"],
    ["--format", "csv", "--unjudged", "condensed"],
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: " ".join(o))
@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_streamed_output_is_the_whole_reads_byte_for_byte(files, small_pieces, monkeypatch, options, layout):
    args = ["--qrels", str(files["qrels"]), "--metrics", METRICS, str(files[layout]), *options]
    streamed = _bench(*args)
    _whole(monkeypatch)
    assert _bench(*args) == streamed


def test_the_warnings_and_notes_are_the_whole_reads(files, small_pieces, monkeypatch):
    args = ["--qrels", str(files["qrels"]), "--metrics", "ndcg@10", str(files["shuffled"])]
    streamed = CliRunner().invoke(main, ["evaluate", *args])
    _whole(monkeypatch)
    whole = CliRunner().invoke(main, ["evaluate", *args])
    assert "differently as trec_eval 10 and 9.x" in whole.stderr and "no judgments" in whole.stderr
    assert "missing from the run" in whole.stderr
    assert (streamed.stdout, streamed.stderr) == (whole.stdout, whole.stderr)


def test_a_grouped_file_is_read_in_one_pass_of_many_pieces(files, small_pieces):
    pieces = list(grouped_pieces(files["grouped"]))
    assert len(pieces) > 10
    ids = [q for piece in pieces for q in piece.run.query_ids]
    assert ids == [f"q{q}" for q in range(40)]  # each query whole, in one piece, in file order
    assert pieces[-1].run_id == "tag39"


def test_a_scattered_file_is_detected_then_read_by_query(files, small_pieces):
    with pytest.raises(ScatteredRun):
        list(grouped_pieces(files["shuffled"]))
    first_seen: list[str] = []
    pieces = list(scattered_pieces(files["shuffled"], first_seen=first_seen))
    ids = [q for piece in pieces for q in piece.run.query_ids]
    assert sorted(ids) == sorted(f"q{q}" for q in range(40)) and len(ids) == len(set(ids))
    last = files["shuffled"].read_text().splitlines()[-1]
    assert {piece.run_id for piece in pieces} == {last.split()[5]}
    assert first_seen[0] == files["shuffled"].read_text().split()[0]


def test_comment_lines_stream_and_change_nothing(files, small_pieces, tmp_path):
    lines = files["grouped"].read_text().splitlines(keepends=True)
    commented = tmp_path / "commented.trec"
    commented.write_text("# a comment\n" + "".join(lines[:300]) + "# another\n" + "".join(lines[300:]))
    args = ["--qrels", str(files["qrels"]), "--metrics", METRICS, "--format", "trec"]
    assert _bench(*args, str(commented)).replace(str(commented), "RUN") == \
        _bench(*args, str(files["grouped"])).replace(str(files["grouped"]), "RUN")
    assert len(list(grouped_pieces(commented))) > 10


def test_one_query_longer_than_a_piece_is_carried_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(run_pieces, "PIECE_BYTES", 64)
    path = tmp_path / "run.trec"
    path.write_text("".join(f"q1 Q0 d{j} {j} {100 - j} t\n" for j in range(50)) + "q2 Q0 d1 1 1 t\n")
    pieces = list(grouped_pieces(path))
    assert [q for p in pieces for q in p.run.query_ids] == ["q1", "q2"]
    assert len(pieces[0].run.scores) >= 50  # q1 whole in the first piece


@pytest.mark.parametrize("bad,message", [
    ("", "ranked twice"),  # the line before, again: a duplicate in a late piece
    ("q39 Q0 d999 1 zero tag39\n", "zero"),
    ("q39 Q0 d999 1\n", "expected 6"),
])
def test_a_bad_line_in_a_late_piece_is_named_as_the_whole_read_names_it(files, small_pieces, monkeypatch, tmp_path,
                                                                        bad, message):
    lines = files["grouped"].read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("q30 ")) + 1
    path = tmp_path / "bad.trec"
    path.write_text("".join(lines[:at]) + (bad.replace("q39", "q30") or lines[at - 1]) + "".join(lines[at:]))
    args = ["evaluate", "--qrels", str(files["qrels"]), "--metrics", "ndcg@10", str(path)]
    streamed = CliRunner().invoke(main, args)
    _whole(monkeypatch)
    whole = CliRunner().invoke(main, args)
    assert streamed.exit_code == whole.exit_code == 2
    assert streamed.output == whole.output and f":{at + 1}: " in whole.output and message in whole.output


def test_files_streaming_cannot_read_are_read_whole(tmp_path, files):
    gz = tmp_path / "run.trec.gz"
    gz.write_bytes(b"")
    with pytest.raises(NotStreamable):
        next(grouped_pieces(gz))
    marked = tmp_path / "marked.trec"  # a byte order mark
    marked.write_bytes(b"\xef\xbb\xbf" + files["grouped"].read_bytes())
    with pytest.raises(NotStreamable):
        list(grouped_pieces(marked))
    read_whole = _bench("--qrels", str(files["qrels"]), "--metrics", METRICS, str(marked), "--format", "csv")
    streamed = _bench("--qrels", str(files["qrels"]), "--metrics", METRICS, str(files["grouped"]), "--format", "csv")
    assert read_whole.replace(str(marked), "RUN") == streamed.replace(str(files["grouped"]), "RUN")
