"""harness.report.plots: the charts as SVG text, the same bytes for the same data, aggregated for large
inputs, placeable in a page (no namespace URI, no stray id), and a clear error without matplotlib."""

from __future__ import annotations

import re
import sys
from importlib.util import find_spec

import numpy as np
import pandas as pd
import pytest

from corpora import RetbenchError
from harness.report import plots
from harness.readings.risk_coverage import risk_coverage_svg


def test_without_matplotlib_a_chart_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(RetbenchError, match=r"need matplotlib, which is not installed. Fix: pip install "
                                            r"'retbench\[report\]'"):
        plots.differences_svg(np.zeros(3), 0.0, 0.0, 0.0, system_a="a", system_b="b", metric="mrr")


needs_matplotlib = pytest.mark.skipif(find_spec("matplotlib") is None,
                                      reason="the charts need the report extra (pip install 'retbench[report]')")


def differences(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.02, 0.2, n)


def chart(values: np.ndarray, key: str = "differences") -> str:
    return plots.differences_svg(values, float(values.mean()), -0.01, 0.05, system_a="bm25", system_b="lsa",
                                 metric="ndcg@10", key=key)


@needs_matplotlib
def test_the_same_data_gives_the_same_bytes_and_another_key_other_ids() -> None:
    values = differences(50)
    first, again, other = chart(values), chart(values), chart(values, key="elsewhere")
    assert first == again
    ids = set(re.findall(r'id="([^"]+)"', plots.inline_svg(first)))
    other_ids = set(re.findall(r'id="([^"]+)"', plots.inline_svg(other)))
    assert ids and not ids & other_ids  # two charts of one page never share an id


@needs_matplotlib
def test_an_inline_chart_has_no_namespace_no_metadata_and_only_the_ids_it_uses() -> None:
    standalone = chart(differences(80))
    assert standalone.startswith("<?xml") and 'xmlns="http://www.w3.org/2000/svg"' in standalone
    assert "<metadata>" not in standalone and "dc:date" not in standalone.lower()
    inline = plots.inline_svg(standalone)
    assert inline.startswith("<svg ") and inline.endswith("</svg>")
    assert not re.search(r"https?:|xmlns|xlink:|<!DOCTYPE|<\?xml", inline)
    referenced = set(re.findall(r'(?:href="#|url\(#)([^")]+)', inline))
    declared = re.findall(r'\sid="([^"]+)"', inline)
    assert referenced and set(declared) == referenced and len(declared) == len(set(declared))


@needs_matplotlib
def test_many_queries_are_drawn_through_at_most_max_points() -> None:
    """Bars up to MAX_POINTS queries; beyond, one curve through MAX_POINTS quantiles: 20,000 queries
    make a chart about the size of 1,000."""
    small, large, huge = (len(chart(differences(n))) for n in (plots.MAX_POINTS + 1, 1_000, 20_000))
    assert abs(huge - large) < 0.1 * large and huge < 40_000
    assert len(chart(differences(plots.MAX_POINTS))) > small  # 200 bars cost more than a 200-point curve


@needs_matplotlib
def test_the_risk_coverage_chart_names_each_system_with_its_aurc() -> None:
    coverage = np.arange(1, 5001) / 5000
    curve = pd.DataFrame({"system": ["bm25"] * 5000 + ["rrf"] * 5000, "coverage": np.concatenate([coverage] * 2),
                          "risk": np.concatenate([coverage * 0.3, coverage * 0.2]), "threshold": 0.0})
    summary = pd.DataFrame({"system": ["bm25", "rrf"], "confidence": "score", "risk_metric": "ndcg@10",
                            "n_queries": 5000, "aurc": [0.151, 0.1], "oracle_aurc": 0.05, "e_aurc": [0.101, 0.05],
                            "random_risk": 0.2, "kendall_tau": 0.1})
    svg = risk_coverage_svg(curve, summary)
    assert "bm25 (AURC 0.151, E-AURC 0.101)" in svg and "rrf (AURC 0.100, E-AURC 0.050)" in svg
    assert "risk = 1 − ndcg@10" in svg
    assert len(svg) < 60_000  # 2 x 5,000 points drawn through 2 x MAX_POINTS
    assert plots.system_colors(["bm25", "rrf"]) == {"bm25": "#1f77b4", "rrf": "#ff7f0e"}


def tune_frame(axes: list[tuple[str, list[str]]], seed: int = 0) -> pd.DataFrame:
    """A tune.csv of the grid of ``axes`` (grid order: the last axis fastest), random means and one fold."""
    import itertools

    rng = np.random.default_rng(seed)
    rows = [{"point": i + 1, "system": f"p{i + 1}", **{name: v for (name, _), v in zip(axes, values)},
             "mean": rng.random(), "train_1": rng.random(), "test_1": rng.random()}
            for i, values in enumerate(itertools.product(*(v for _, v in axes)))]
    return pd.DataFrame(rows)


@needs_matplotlib
def test_a_grid_of_three_axes_is_mapped_per_setting_and_of_many_settings_profiled() -> None:
    three = [("model", ["small", "large"]), ("k1", ["0.9", "1.2", "1.5"]), ("b", ["0.4", "0.75"])]
    frame = tune_frame(three)
    best = int(frame.loc[frame["mean"].idxmax(), "point"])
    svg = plots.tune_grid_svg(frame, three, "mrr", chosen=best, default=1, fold_choices=[best])
    assert ">model=small</text>" in svg and ">model=large</text>" in svg  # one map per setting of the leading axis
    assert "over the grid: mean over all queries, per setting of model" in svg
    assert svg == plots.tune_grid_svg(frame, three, "mrr", chosen=best, default=1, fold_choices=[best])
    many = [("a", ["1", "2", "3", "4"]), ("b", ["x", "y", "z", "w"]), ("c", ["0.1", "0.2"]), ("d", ["5", "6"])]
    frame = tune_frame(many)
    best = frame.loc[frame["mean"].idxmax()]
    svg = plots.tune_grid_svg(frame, many, "mrr", chosen=int(best["point"]))
    assert plots.MAX_PANELS < 16
    assert "each value's best mean over the other axes (16 settings of the leading axes: too many to map)" in svg
    chosen = ", ".join(f"{name}={best[name]}" for name, _ in many)
    assert f"chosen on all queries (the in-sample best): {chosen}, {best['mean']:.3f}" in svg


@needs_matplotlib
def test_a_grid_chart_refuses_points_it_cannot_place() -> None:
    axes = [("alpha", ["0", "0.5", "1"])]
    frame = tune_frame(axes)
    with pytest.raises(RetbenchError, match=r"a marked point is not in the tune table \(chosen 9"):
        plots.tune_grid_svg(frame, axes, "mrr", chosen=9)
    frame.loc[1, "alpha"] = "0.25"
    with pytest.raises(RetbenchError, match="tune table: point 2 has '0.25' off the grid's axes"):
        plots.tune_grid_svg(frame, axes, "mrr", chosen=1)
    with pytest.raises(RetbenchError, match="at least one swept axis"):
        plots.tune_grid_svg(frame, [], "mrr", chosen=1)
