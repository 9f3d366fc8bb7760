"""Grid syntax inside retriever specs (retrievers/grid.py): ranges, lists, axes, grid order, and
every bad grid refused with a fix -- by the library and by `bench tune` (exit 2, nothing written)."""

from __future__ import annotations

import pytest

from harness.cli import main
from retrievers.grid import MAX_POINTS, read_grid, spec_text
from retrievers.spec import SpecError, build, parse


def values(text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(axis.name, axis.values) for axis in read_grid(text).axes]


def test_a_range_counts_in_decimal_from_the_digits_typed() -> None:
    assert values("bm25(k1=0.6:1.8:0.2)") == [("k1", ("0.6", "0.8", "1", "1.2", "1.4", "1.6", "1.8"))]
    built = [build(read_grid("bm25(k1=0.6:1.8:0.2)").spec(p)).k1 for p in read_grid("bm25(k1=0.6:1.8:0.2)").points()]
    assert built == [0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8]  # never 1.7999999999999998


@pytest.mark.parametrize(("written", "last", "count"), [
    ("0:1:0.1", "1", 11),  # stop on the grid: included
    ("0:1:0.3", "0.9", 4),  # stop off the grid: the last point below it
    ("0:1:0.333333333333", "1", 4),  # within 1e-9 steps of stop: stop itself
    ("0.5:0.5:0.1", "0.5", 1),  # start = stop: one point
])
def test_the_stop_of_a_range_is_a_point_when_it_lands_on_the_grid(written: str, last: str, count: int) -> None:
    (axis,) = read_grid(f"weighted(bm25,lsa,alpha={written})").axes
    assert (axis.values[-1], len(axis.values)) == (last, count)


def test_lists_hold_values_and_ranges_and_integer_ranges_stay_integers() -> None:
    assert values("rrf(bm25,lsa,k=10|30|60|100)") == [("k", ("10", "30", "60", "100"))]
    assert values("bm25(k1=0.5|0.9:1.5:0.3)") == [("k1", ("0.5", "0.9", "1.2", "1.5"))]
    assert values("rrf(bm25,lsa,k=0:100:50)") == [("k", ("0", "50", "100"))]


def test_axes_are_depth_first_and_the_last_axis_varies_fastest() -> None:
    grid = read_grid("weighted(bm25(k1=0.9|1.2),lsa,alpha=0.3|0.5)")
    assert [axis.name for axis in grid.axes] == ["alpha", "bm25.k1"]
    assert [spec_text(grid.spec(p)) for p in grid.points()] == [
        "weighted(bm25(k1=0.9),lsa,alpha=0.3)", "weighted(bm25(k1=1.2),lsa,alpha=0.3)",
        "weighted(bm25(k1=0.9),lsa,alpha=0.5)", "weighted(bm25(k1=1.2),lsa,alpha=0.5)"]
    twins = read_grid("rrf(bm25(k1=1|2),bm25(b=0.1|0.2))")
    assert [axis.name for axis in twins.axes] == ["bm25#1.k1", "bm25#2.b"]


def test_the_default_point_leaves_out_only_the_swept_parameters() -> None:
    assert spec_text(read_grid("rrf(bm25,lsa,k=10|30)").default_spec()) == "rrf(bm25,lsa)"
    assert spec_text(read_grid("rrf(k=10|30)").default_spec()) == "rrf"  # not rrf(), which fuses nothing
    kept = read_grid("bm25(k1=0.9|1.2,analyzer=english)").default_spec()
    assert build(kept).label == "bm25(analyzer=english)"


def test_a_quoted_value_is_taken_as_written() -> None:
    assert parse("bm25(analyzer='article|english',k1=1|2)").quoted == {"analyzer"}
    with pytest.raises(SpecError) as caught:  # read as one analyzer name, not a list of two
        read_grid("bm25(analyzer='article|english',k1=1|2)")
    assert "'article|english'" in str(caught.value)


def test_the_mapping_form_is_the_same_grid_as_the_string() -> None:
    from_text = read_grid("weighted(bm25(k1=0.9|1.2),lsa,alpha=0.3|0.5)")
    from_mapping = read_grid({"weighted(bm25,lsa)": {"alpha": [0.3, 0.5], "bm25.k1": [0.9, 1.2]}})
    assert [spec_text(from_text.spec(p)) for p in from_text.points()] == \
        [spec_text(from_mapping.spec(p)) for p in from_mapping.points()]


def test_build_hands_children_to_make_child() -> None:
    made: list[str] = []

    def child(spec):  # what a grid uses to give every point the same child object
        made.append(spec.target)
        return build(spec)

    fused = build(parse("rrf(bm25,lsa(dims=5))"), make_child=child)
    assert made == ["bm25", "lsa"] and fused.label == "rrf(bm25,lsa(dims=5))"


BAD_GRIDS = [
    ("bm25(k1=1.8:0.6:0.2)", "is empty: it stops (0.6) below where it starts (1.8)"),
    ("bm25(k1=0.6:1.8:0)", "has step 0; a step must be > 0"),
    ("bm25(k1=0.6:1.8:-0.2)", "has step -0.2; a step must be > 0"),
    ("bm25(k3=1|2)", "bm25 has no parameter 'k3' (its parameters: k1=1.2, b=0.75"),
    ("bm25(k1=0:10:0.1,b=0:1:0.001)", "has 101,101 points (k1 101 x b 1001), more than the 10,000 allowed"),
    ("bm25(k1=0:100:0.001)", "alone has 100,001 points, more than the 10,000 allowed"),
    ("bm25(k1=1|1.0)", "k1 lists the same setting twice (1 and 1.0)"),
    ("bm25(b=0.5:1.5:0.5)", "b=1.5: The 'b' parameter of bm25 must be a finite float in [0, 1]. Got 1.5"),
    ("rrf(bm25,lsa,k=1:2:0.5)", "k=1.5: The 'k' parameter of rrf must be an int"),
    ("bm25(k1=0.9)", "sweeps no parameter"),
    ("bm25(k1=a:b:c)", "'a' is not a finite number"),
    ("bm25(k1=1:2)", "range '1:2' has 2 parts"),
    ("bm25(k1=1||2)", "list '1||2' has an empty item"),
]


@pytest.mark.parametrize(("grid", "message"), BAD_GRIDS)
def test_a_bad_grid_is_one_error_with_a_fix(grid: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        read_grid(grid)
    assert message in str(caught.value) and "Fix:" in str(caught.value)


def test_the_point_limit_can_be_raised() -> None:
    assert len(read_grid("bm25(k1=0:10:0.1,b=0:1:0.001)", max_points=101_101)) == 101_101
    assert MAX_POINTS == 10_000


@pytest.mark.parametrize(("grid", "message"), BAD_GRIDS)
def test_bench_tune_exits_2_on_a_bad_grid_and_writes_nothing(runner, tmp_path, grid: str, message: str) -> None:
    out = tmp_path / "out"
    result = runner.invoke(main, ["tune", grid, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and message in result.stderr and "Fix:" in result.stderr
    assert "Traceback" not in result.output and not out.exists()


def test_bench_tune_max_points_lets_a_large_grid_through_the_check(runner, tmp_path) -> None:
    # 10,201 points pass --max-points 10201; --folds 1 then stops the run before any fitting
    result = runner.invoke(main, ["tune", "bm25(k1=0:10:0.1,b=0:1:0.01)", "--max-points", "10201", "--folds", "1",
                                  "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "folds must be an int >= 2" in result.stderr
