"""``bench gate --latency-margin``: the candidate's p95 latency against the baseline's
(harness.engines.cost.gate_latency), off by default, with the noise of a shared machine read from the
latency rounds: no verdict when a side's rounds disagree by more than the margin, or when the two sides
were measured on different machines.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import Queries
from harness import compare
from harness.cli import main
from harness.engines.cost import gate_latency
from harness.core.options import RunOptions, Statistics
from retrievers import BM25


def _side(p95: float, low: float, high: float) -> dict[str, float]:
    return {"latency_p95_ms": p95, "latency_p95_low_ms": low, "latency_p95_high_ms": high}


def test_a_rise_in_every_round_beyond_the_margin_fails() -> None:
    found = gate_latency(_side(10, 9.9, 10.1), _side(14, 13.8, 14.2), 0.2)
    assert found.verdict == "latency rose" and found.fails and found.rise == pytest.approx(0.4)
    assert "+40%" in found.message


def test_a_rise_within_the_margin_passes() -> None:
    found = gate_latency(_side(10, 9.9, 10.1), _side(11, 10.9, 11.1), 0.2)
    assert found.verdict == "latency within the margin" and not found.fails


def test_rounds_that_disagree_more_than_the_margin_refuse_to_judge() -> None:
    # the candidate's median is 50% up, but its own rounds span 8-20 ms: the machine was too noisy to say
    found = gate_latency(_side(10, 9.9, 10.1), _side(15, 8, 20), 0.2)
    assert found.verdict == "latency not judged" and not found.fails and "disagree by 80%" in found.message


def test_a_median_rise_that_not_every_round_shows_is_not_shown() -> None:
    found = gate_latency(_side(10, 9.5, 10.5), _side(12.8, 12.0, 13.5), 0.2)  # 12.0 < 10.5 x 1.2
    assert found.verdict == "latency rise not shown" and not found.fails


def test_other_machines_or_no_latency_are_not_judged() -> None:
    assert gate_latency(_side(10, 9.9, 10.1), _side(30, 29, 31), 0.2, same_machine=False).verdict == \
        "latency not judged"
    unmeasured = gate_latency(_side(10, 9.9, 10.1), {"latency_p95_ms": math.nan}, 0.2)
    assert unmeasured.verdict == "latency not judged" and "the candidate" in unmeasured.message


class SlowBM25(BM25):
    """BM25 that sleeps 3 ms per query searched: a candidate whose latency rose, and nothing else."""

    name = "slowbm25"

    def search(self, queries: Queries, k: int):
        time.sleep(0.003 * len(queries))
        return super().search(queries, k)


def _folder(tmp_path: Path, name: str, retriever) -> Path:
    result = compare({"mine": retriever}, "article", ["ndcg@5"], statistics=Statistics(bootstrap_samples=500),
                     run=RunOptions(latency_rounds=5))
    return result.write(tmp_path / name, command_line=[])


def test_bench_gate_fails_a_slower_candidate_only_when_asked(tmp_path) -> None:
    before, after = _folder(tmp_path, "before", BM25()), _folder(tmp_path, "after", SlowBM25())
    runner = CliRunner()
    plain = runner.invoke(main, ["gate", str(before), str(after), "--metric", "ndcg@5", "--bootstrap-samples", "500"])
    assert plain.exit_code == 0, plain.output  # the same rankings: unchanged, and latency is not gated by default
    assert "latency" not in plain.stdout
    gated = runner.invoke(main, ["gate", str(before), str(after), "--metric", "ndcg@5", "--bootstrap-samples", "500",
                                 "--latency-margin", "20%"])
    p95 = [json.loads((f / "manifest.json").read_text()) and
           float((f / "efficiency.csv").read_text().splitlines()[1].split(",")[15]) for f in (before, after)]
    if gated.exit_code == 0:  # only a machine whose rounds disagreed more than the margin may decline
        assert "latency not judged" in gated.stdout, (gated.stdout, p95)
    else:
        assert gated.exit_code == 1 and "latency rose" in gated.stdout, (gated.stdout, p95)
    same = runner.invoke(main, ["gate", str(before), str(before), "--metric", "ndcg@5", "--bootstrap-samples", "500",
                                "--latency-margin", "0.2"])
    # a folder against itself never fails: within the margin, or not judged where its own rounds were noisy
    assert same.exit_code == 0, same.stdout
    assert "latency within the margin: p95" in same.stdout or "latency not judged" in same.stdout, same.stdout


def test_the_latency_margin_must_be_a_share(tmp_path) -> None:
    before = _folder(tmp_path, "before", BM25())
    done = CliRunner().invoke(main, ["gate", str(before), str(before), "--metric", "ndcg@5", "--latency-margin", "x"])
    assert done.exit_code == 2 and "write e.g. 20% or 0.2" in done.output
