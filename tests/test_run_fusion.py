"""Fusion of runs matches the definitions exactly (issue 43, item 6): rrf (1 / (k + rank), k = 60),
weighted (alpha * minmax + (1 - alpha) * minmax, over each run's own ranking), combsum and combmnz
(min-max or z-score), each against an independent implementation written here and, where ranx is
installed, against ranx's ``fuse`` on every query."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from corpora import Corpus, Queries, Run
from retrievers.fusion import RRF, CombMNZ, CombSUM, Weighted
from retrievers.run_file import RunSystem
from retrievers.spec import build

DOCS = [f"d{i:02d}" for i in range(40)]
QUERY_IDS = [f"q{i:02d}" for i in range(20)]
CORPUS = Corpus(DOCS, ["text"] * len(DOCS), name="fusion")
QUERIES = Queries(QUERY_IDS, ["text"] * len(QUERY_IDS))


def random_runs(seed: int, n_runs: int = 3) -> list[dict[str, dict[str, float]]]:
    """``n_runs`` runs over every query, each ranking 3 to 15 of the documents with distinct scores
    (some negative: a run's scores may have any sign)."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in QUERY_IDS:
            docs = rng.choice(DOCS, size=int(rng.integers(3, 16)), replace=False)
            scores = rng.permutation(rng.normal(0, 5, size=len(docs)))
            run[q] = {str(d): float(s) for d, s in zip(docs, scores)}
        runs.append(run)
    return runs


def as_run(run: dict[str, dict[str, float]]) -> Run:
    return Run.from_mapping({q: sorted(docs.items(), key=lambda p: (-p[1], p[0])) for q, docs in run.items()})


# ----- the definitions, written independently -----------------------------------------------------


def ranked(docs: dict[str, dict[str, float]] | dict[str, float]) -> list[str]:
    """Doc ids by score descending (the runs' scores are distinct)."""
    return sorted(docs, key=lambda d: -docs[d])


def rrf(runs, k: int = 60) -> dict[str, dict[str, float]]:
    out = {}
    for q in QUERY_IDS:
        fused: dict[str, float] = {}
        for run in runs:
            for rank, d in enumerate(ranked(run[q]), 1):
                fused[d] = fused.get(d, 0.0) + 1.0 / (k + rank)
        out[q] = fused
    return out


def normalised(scores: dict[str, float], norm: str) -> dict[str, float]:
    values = list(scores.values())
    if norm == "min-max":
        low, high = min(values), max(values)
        return {d: (s - low) / (high - low) if high > low else 0.0 for d, s in scores.items()}
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {d: (s - mean) / std if std > 0 else 0.0 for d, s in scores.items()}


def weighted(first, second, alpha: float) -> dict[str, dict[str, float]]:
    out = {}
    for q in QUERY_IDS:
        a, b = normalised(first[q], "min-max"), normalised(second[q], "min-max")
        out[q] = {d: alpha * a.get(d, 0.0) + (1 - alpha) * b.get(d, 0.0) for d in {*a, *b}}
    return out


def comb(runs, norm: str, mnz: bool) -> dict[str, dict[str, float]]:
    out = {}
    for q in QUERY_IDS:
        parts = [normalised(run[q], norm) for run in runs]
        fused = {}
        for d in {d for part in parts for d in part}:
            present = [part[d] for part in parts if d in part]
            fused[d] = sum(present) * (len(present) if mnz else 1)
        out[q] = fused
    return out


def fused_by(retriever) -> dict[str, list[tuple[str, float]]]:
    retriever.fit(CORPUS)
    return retriever.search(QUERIES, 1000).to_mapping()


def expected_ranking(fused: dict[str, float], keep_zero: bool = True) -> list[str]:
    """Score descending, ties by doc id ascending (every fusion's rule)."""
    return sorted((d for d in fused if keep_zero or fused[d] > 0), key=lambda d: (-fused[d], d))


def check_against(ours: dict[str, list[tuple[str, float]]], theirs: dict[str, dict[str, float]],
                  keep_zero: bool = True) -> None:
    for q in QUERY_IDS:
        got = dict(ours[q])
        assert [d for d, _ in ours[q]] == expected_ranking({d: got[d] for d in got})
        assert set(got) == {d for d, s in theirs[q].items() if keep_zero or s > 0}, q
        for d, score in got.items():
            assert score == pytest.approx(theirs[q][d], rel=1e-12, abs=1e-15), (q, d)


def systems(runs) -> list[RunSystem]:
    return [RunSystem.of(as_run(run), name=f"r{i}") for i, run in enumerate(runs)]


# ----- against the definitions --------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rrf_of_runs_is_the_sum_of_reciprocal_ranks(seed: int) -> None:
    runs = random_runs(seed)
    check_against(fused_by(RRF(*systems(runs))), rrf(runs))
    check_against(fused_by(RRF(*systems(runs), k=10)), rrf(runs, k=10))


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.5, 1.0])
def test_weighted_of_runs_is_the_weighted_sum_of_min_max_over_each_run(alpha: float) -> None:
    runs = random_runs(7, n_runs=2)
    # a fused score of 0 (at the minimum of every weighted run) is not a result: weighted's rule
    check_against(fused_by(Weighted(*systems(runs), alpha=alpha)), weighted(*runs, alpha), keep_zero=False)


@pytest.mark.parametrize("norm", ["min-max", "z-score"])
@pytest.mark.parametrize("cls", [CombSUM, CombMNZ])
def test_combsum_and_combmnz_of_runs(cls: type, norm: str) -> None:
    runs = random_runs(11)
    check_against(fused_by(cls(*systems(runs), norm=norm)), comb(runs, norm, mnz=cls is CombMNZ))


def test_rrf_over_two_run_files_equals_an_independent_rrf(tmp_path: Path) -> None:
    runs = random_runs(3, n_runs=2)
    for name, run in zip(("es", "dense"), runs):
        as_run(run).write(tmp_path / f"{name}.trec", name)
    fused = build(f"rrf(run({tmp_path / 'es.trec'}),run({tmp_path / 'dense.trec'}))")
    assert fused.label == "rrf(es,run-dense)"
    check_against(fused_by(fused), rrf(runs))


def test_a_fusion_refuses_an_unknown_normalisation() -> None:
    with pytest.raises(Exception, match=r"^combsum: norm 'l2' is not one of min-max, z-score\. Fix:"):
        CombSUM(norm="l2")


# ----- against ranx ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ranx():
    return pytest.importorskip("ranx", reason="the comparison with ranx's fuse needs ranx")


def ranx_fused(ranx, runs, **how) -> dict[str, dict[str, float]]:
    fused = ranx.fuse([ranx.Run(run, name=f"r{i}") for i, run in enumerate(runs)], **how)
    return {q: dict(docs) for q, docs in fused.to_dict().items()}


def test_rrf_equals_ranx(ranx) -> None:
    runs = random_runs(21)
    check_against(fused_by(RRF(*systems(runs))), ranx_fused(ranx, runs, method="rrf", params={"k": 60}))


def test_weighted_equals_ranx_wsum_over_min_max(ranx) -> None:
    runs = random_runs(22, n_runs=2)
    theirs = ranx_fused(ranx, runs, norm="min-max", method="wsum", params={"weights": [0.3, 0.7]})
    check_against(fused_by(Weighted(*systems(runs), alpha=0.3)), theirs, keep_zero=False)
    dropped = [s for q in QUERY_IDS for d, s in theirs[q].items() if d not in dict(fused_by(
        Weighted(*systems(runs), alpha=0.3))[q])]
    assert dropped and all(s == 0.0 for s in dropped)  # ranx keeps a fused 0; weighted does not rank it


@pytest.mark.parametrize(("norm", "ranx_norm"), [("min-max", "min-max"), ("z-score", "zmuv")])
@pytest.mark.parametrize(("cls", "method"), [(CombSUM, "sum"), (CombMNZ, "mnz")])
def test_combsum_and_combmnz_equal_ranx(ranx, cls: type, method: str, norm: str, ranx_norm: str) -> None:
    runs = random_runs(23)
    check_against(fused_by(cls(*systems(runs), norm=norm)), ranx_fused(ranx, runs, norm=ranx_norm, method=method))
