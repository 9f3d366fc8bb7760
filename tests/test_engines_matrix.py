"""The engine matrix's generator and its verdicts (``benchmarks/workloads.py``, ``benchmarks/engines_matrix.py``):
the same seed gives the same bytes, the shapes are what they say, and a cell short of a goal is
counted as such and says why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import engines_matrix  # noqa: E402
import workloads  # noqa: E402
from corpora.analyzers import ARTICLE_STOP_WORDS  # noqa: E402


def test_the_generator_is_a_pure_function_of_shape_size_and_seed(tmp_path: Path) -> None:
    shape = workloads.Shape(1.2, 2000, "long")
    first = workloads.workload_files(shape, 300, 40, 1, tmp_path / "a")
    again = workloads.workload_files(shape, 300, 40, 1, tmp_path / "b")
    other = workloads.workload_files(shape, 300, 40, 2, tmp_path / "c")
    assert first[0].read_bytes() == again[0].read_bytes() != other[0].read_bytes()
    for name in workloads.QUERY_SHAPES:
        assert first[1][name].read_bytes() == again[1][name].read_bytes()
    lengths = [len(line.split()) for line in first[0].read_text(encoding="ascii").splitlines()]
    assert len(lengths) == 300 and 100 <= min(lengths) and max(lengths) <= 1000
    for name, (low, high) in workloads.QUERY_SHAPES.items():
        queries = [line.split() for line in first[1][name].read_text(encoding="ascii").splitlines()]
        assert len(queries) == 40
        assert all(low <= len(q) <= high and len(set(q)) == len(q) for q in queries)
        assert not {w for q in queries for w in q} & ARTICLE_STOP_WORDS


def test_the_generators_stop_words_are_the_articles() -> None:
    assert set(workloads.STOP_WORDS) == set(ARTICLE_STOP_WORDS)


def test_an_unknown_shape_names_the_choices() -> None:
    with pytest.raises(ValueError, match="z1.0-v100k-short"):
        workloads.shape_named("z9-v1-huge")
    assert len(workloads.SHAPES) == 8


def _run(qps_10: float, qps_1000: float, rss: float, **extra: float) -> dict:
    run = {"index_s": 1.0, "peak_rss_mb": rss, "index_peak_rss_mb": rss - 10, "compiled": True}
    for terms in workloads.QUERY_SHAPES:
        run.update({f"{terms}:qps_10": qps_10, f"{terms}:qps_100": qps_10, f"{terms}:qps_1000": qps_1000,
                    f"{terms}:p50_ms": 1.0, f"{terms}:p95_ms": 2.0, f"{terms}:postings": 5000.0})
    run.update(extra)
    return run


def test_verdicts_compare_medians_with_the_best_peer_and_say_why_a_cell_falls_short() -> None:
    """retbench's top-10 median (100 and 140: 120) is under PISA's 130, its top-1000 (300) is 2x the
    best peer's (150), its memory (900 MB) under tantivy's: one goal missed in each query shape."""
    results = {"z1.0-v100k-short": {
        "retbench": [_run(100, 300, 900), _run(140, 300, 900)],
        "tantivy": [_run(50, 150, 1000), _run(50, 150, 1000)],
        "pisa": [_run(130, 100, 1200), _run(130, 100, 1200)],
    }}
    text, tally = engines_matrix.tables(results, ["retbench", "tantivy", "pisa"], 1000)
    assert tally["top-10"] == [0, 3] and tally["top-1000"] == [3, 3] and tally["memory"] == [1, 1]
    rows = [line for line in text.splitlines() if line.startswith("| z1.0-v100k-short | ")]
    cells = [row for row in rows if "top-10" in row]
    assert len(cells) == 3
    for row in cells:
        assert "0.92x" in row and "2.00x" in row  # 120 / 130 and 300 / 150
        assert "top-10 **no**, top-1000 yes" in row and "PISA" in row.split("|")[-2]  # the reason names the peer
    headline = engines_matrix.headline(tally, 1000)
    assert "top-10 >= best peer in 0 of 3 cells" in headline and "in 1 of 1 corpus shapes" in headline


def test_memory_short_of_tantivys_is_counted_and_explained() -> None:
    """The reason adds up what the child measured: above the texts (1,000 MB), retbench's searches
    peak 500 MB higher (its build 490), tantivy's 200; the doc ids, the arrays, numba and the
    build's temporaries (1,490 - 1,400) each named with their size."""
    measured = {"loaded_rss_mb": 1000, "indexed_rss_mb": 1400, "ids_mb": 70, "index_mb": 240, "first_search_mb": 120}
    results = {"z1.2-v1M-long": {"retbench": [_run(100, 300, 1500, **measured)],
                                 "tantivy": [_run(50, 150, 1000, loaded_rss_mb=800)]}}
    text, tally = engines_matrix.tables(results, ["retbench", "tantivy"], 1000)
    assert tally["memory"] == [0, 1]
    shape_row = next(line for line in text.splitlines() if line.startswith("| z1.2-v1M-long | ") and "MB" in line)
    assert "1.50x" in shape_row and "**no**" in shape_row
    for said in ("retbench peaks at 500 MB (in its searches), tantivy at 200 MB", "doc ids as Python strings (70 MB)",
                 "(240 MB, 3 bytes a posting)", "120 MB for numba's runtime", "temporaries add 90 MB"):
        assert said in shape_row


def test_memory_of_a_run_recorded_before_the_breakdown_is_still_explained() -> None:
    results = {"z1.2-v1M-long": {"retbench": [_run(100, 300, 1500, loaded_rss_mb=1000)],
                                 "tantivy": [_run(50, 150, 1000, loaded_rss_mb=800)]}}
    text, _ = engines_matrix.tables(results, ["retbench", "tantivy"], 1000)
    assert "retbench's peak is 500 MB above the texts, tantivy's 200 MB" in text
