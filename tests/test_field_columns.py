"""The run reader's array splitter against Python's own ``str.split`` and ``float``: same fields,
same bits, and None (the careful parser's turn) for everything it does not fully understand or
that is not a score of the one grammar (:mod:`corpora.number_grammar`: ``1_000`` or ``nan``, which
Python's ``float`` takes, are refused by the careful parser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpora import field_columns, trec_io
from corpora.field_columns import split_fields
from corpora.number_grammar import read_score

_ID = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789-_#:.", min_size=1, max_size=12).filter(
    lambda s: not s.startswith("#"))  # a line that starts with "#" is a comment
_SPACE = st.sampled_from([" ", "  ", "\t", " \t ", "\t\t"])


def _python_float(text: str) -> float | None:
    """Python's ``float`` of a score of the grammar; None for a text the grammar refuses."""
    if read_score(text) is None:
        return None
    return float(text)


def _score_texts() -> st.SearchStrategy[str]:
    finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
    formatted = st.tuples(finite, st.sampled_from(["{!r}", "{:.6f}", "{:.4f}", "{:.3e}", "{:g}", "{:.17g}", "{:.0f}",
                                                    "{:.15f}", "{:.20f}"])).map(lambda p: p[1].format(p[0]))
    digits = st.from_regex(r"\A[+-]?[0-9]{0,20}(\.[0-9]{0,25})?\Z", fullmatch=True).filter(bool)
    odd = st.sampled_from(["inf", "-inf", "Infinity", "nan", "1_000", ".5", "5.", "-0.0", "+0", "-", "+", ".", "1.2.3",
                           "1e", "0x10", "--1", "1-", "12a", "00000000000000000000001.5", "9007199254740993",
                           "900719925474099.3", "0.1000000000000000055511151231257827"])
    return st.one_of(formatted, digits, odd)


@settings(max_examples=400, deadline=None)
@given(st.lists(_score_texts(), min_size=1, max_size=40))
def test_decimals_are_pythons_float_bit_for_bit(scores: list[str]) -> None:
    text = "".join(f"q Q0 d{i} {i + 1} {score} tag\n" for i, score in enumerate(scores))
    fields = split_fields(text.encode(), 6, keep=(4,))
    assert fields is not None
    values = fields.decimals(4)
    expected = [_python_float(score) for score in scores]
    if any(value is None for value in expected):
        assert values is None
        return
    assert values is not None
    assert np.array_equal(values.view(np.int64), np.array(expected, dtype=np.float64).view(np.int64))


@st.composite
def _run_texts(draw: st.DrawFn) -> tuple[str, bool]:
    """A run file's text, and whether every data line holds exactly six fields."""
    lines = []
    regular = True
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["row"] * 8 + ["blank", "comment", "short", "long"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t", "\r"])))
            continue
        if kind == "comment":
            lines.append("#" + draw(_ID))
            continue
        n = {"row": 6, "short": draw(st.integers(1, 5)), "long": draw(st.integers(7, 9))}[kind]
        regular &= n == 6
        fields = [draw(_ID) for _ in range(n)]
        if n >= 5:
            fields[4] = draw(st.sampled_from(["1", "0.5", "-2.25", "3e2", "17"]))
        lead = draw(st.sampled_from(["", " ", "\t"]))
        trail = draw(st.sampled_from(["", " ", "\r", "\t\r"]))
        lines.append(lead + "".join(f + draw(_SPACE) for f in fields[:-1]) + fields[-1] + trail)
    end = draw(st.sampled_from(["\n", ""]))
    return "\n".join(lines) + end, regular


@settings(max_examples=300, deadline=None)
@given(_run_texts())
def test_fields_are_what_str_split_finds_on_every_data_line(case: tuple[str, bool]) -> None:
    text, regular = case
    rows = [line.split() for line in text.split("\n") if line.strip() and not line.startswith("#")]
    fields = split_fields(trec_io._without_comments(text.encode()), 6, keep=(0, 2, 5))
    if not regular or not rows:
        assert fields is None
        return
    assert fields is not None and len(fields) == len(rows)
    for field in (0, 2, 5):
        assert fields.text(field).tolist() == [row[field] for row in rows]
    assert fields.last(5) == rows[-1][5]


@pytest.mark.parametrize("text", [
    "q Q0 d 1 1.0 t\x0bx\n",  # a vertical tab: whitespace to str.split, so not for this path
    "q Q0 d 1 1.0 t\x1c\n",  # a file separator, likewise
    "q Q0 d 1 1.0 t\x00\n",  # a NUL byte
    "q Q0 d\x7f 1 1.0 t\n",  # DEL
    "q Q0 dé 1 1.0 t\n",  # not ASCII: the pandas path decodes UTF-8
    "",
    "\n\n",
])
def test_what_the_splitter_does_not_vouch_for_is_left_to_the_other_readers(text: str) -> None:
    assert split_fields(text.encode(), 6, keep=(0,)) is None


@settings(max_examples=200, deadline=None)
@given(_run_texts())
def test_the_fast_run_reader_agrees_with_the_careful_parser(tmp_path_factory: pytest.TempPathFactory,
                                                             case: tuple[str, bool]) -> None:
    text, regular = case
    path = tmp_path_factory.mktemp("run") / "run.trec"
    path.write_text(text)
    try:
        careful = trec_io._careful_run(path, text, "error")
    except trec_io.InputFileError:
        careful = None
    fast = trec_io._fast_run(text.encode(), "error", "file")
    if careful is None or not careful[0]:
        assert fast is None
        return
    qids, docs, scores, tag = careful
    if len(set(zip(qids, docs))) < len(qids):
        assert fast is None  # a repeated pair: the careful parser names its lines
        return
    assert regular and fast is not None
    assert fast.run_id == tag
    queries, ranked = fast.run.entry_columns()
    order = sorted(range(len(qids)), key=lambda i: (fast.run.query_ids.index(qids[i]), i))
    assert queries.tolist() == [qids[i] for i in order]
    assert ranked.tolist() == [docs[i] for i in order]
    assert np.array_equal(fast.run.scores.view(np.int64), scores[order].view(np.int64))


def test_a_large_file_is_split_in_pieces_without_losing_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import corpora.field_columns as field_columns

    monkeypatch.setattr(field_columns, "_BYTES_AT_A_TIME", 64)
    monkeypatch.setattr(field_columns, "_ROWS_AT_A_TIME", 7)
    rng = np.random.default_rng(3)
    scores = rng.random(500) * 10.0 ** rng.integers(-3, 6, 500)
    text = "".join(f"q{i // 50} Q0 doc{i} {i} {s!r} run{i % 3}\n" for i, s in enumerate(scores.tolist()))
    fields = split_fields(text.encode(), 6, keep=(0, 2, 4))
    assert fields is not None and len(fields) == 500
    assert fields.text(2).tolist() == [f"doc{i}" for i in range(500)]
    values = fields.decimals(4)
    assert values is not None and np.array_equal(values, scores)


def test_the_whole_file_goes_through_the_splitter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A well-formed ASCII run is read without pandas' tokenizer (which would be the slow path)."""
    monkeypatch.setattr(trec_io, "_fast_table", lambda *a, **k: pytest.fail("the pandas path was taken"))
    path = tmp_path / "run.trec"
    path.write_text("# a comment\nq1 Q0 b 1 2.5 mine\n\nq1 Q0 a 2 2.5 mine\r\nq2\tQ0\tc\t1\t-1e3\tmine\n")
    read = trec_io.read_run_file(path)
    assert read.run.to_mapping() == {"q1": [("b", 2.5), ("a", 2.5)], "q2": [("c", -1000.0)]}
    assert read.run_id == "mine"


@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0, 1e6])
def test_shortest_reprs_of_many_doubles_read_back_exactly(scale: float) -> None:
    """``repr`` writes 16 or 17 digits for most doubles, past the exact-double mantissa: the
    extended-precision division (or ``float``, at an exact halfway point) must still be exact."""
    rng = np.random.default_rng(7)
    scores = (rng.random(20_000) * scale).tolist() + [float(np.nextafter(1.0, 2.0)), 0.1 + 0.2, 2.0**53 + 2]
    text = "".join(f"q Q0 d{i} 1 {s!r} t\n" for i, s in enumerate(scores))
    fields = split_fields(text.encode(), 6, keep=(4,))
    assert fields is not None
    values = fields.decimals(4)
    assert values is not None
    assert np.array_equal(values.view(np.int64), np.array(scores).view(np.int64))


def test_one_very_long_id_sends_the_run_to_python_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixed width means every row as wide as the longest id: past 4x the file, pandas reads it."""
    monkeypatch.setattr(field_columns, "_FIXED_WIDTH_SLACK", 0)
    text = "".join(f"q Q0 d{i} 1 {i}.5 t\n" for i in range(200)) + f"q Q0 {'x' * 400} 1 0.25 t\n"
    taken = []
    original = trec_io._fast_table
    monkeypatch.setattr(trec_io, "_fast_table", lambda *a, **k: taken.append(1) or original(*a, **k))
    read = trec_io._fast_run(text.encode(), "error", "trec")
    assert taken and read is not None
    assert read.run.ranking("q")[:2] == ["d199", "d198"] and read.run.doc_ids.dtype == object
