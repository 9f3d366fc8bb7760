"""Parameters and composition: specs as users type them, typed parameters, labels, bad specs."""

from __future__ import annotations

import pytest

from corpora import RetbenchError
from harness.cli import main
from harness.compare import build_systems
from retrievers import build, parse
from retrievers.bm25 import BM25
from retrievers.fusion import RRF, Weighted
from retrievers.lsa import LSA


def test_parameters_are_converted_by_the_init_annotations() -> None:
    bm25 = build("bm25(k1=0.9,b=0.4)")
    assert isinstance(bm25, BM25)
    assert (bm25.k1, bm25.b) == (0.9, 0.4)
    lsa = build("lsa(dims=100)")
    assert isinstance(lsa, LSA) and lsa.dims == 100 and isinstance(lsa.dims, int)


def test_fusions_take_any_children_and_nest() -> None:
    fused = build("rrf(bm25(k1=0.9),weighted(bm25,lsa(dims=5),alpha=0.3),k=30)")
    assert isinstance(fused, RRF) and fused.k == 30
    inner = fused.children[1]
    assert isinstance(inner, Weighted) and inner.alpha == 0.3
    assert [c.label for c in inner.children] == ["bm25", "lsa(dims=5)"]
    assert fused.label == "rrf(bm25(k1=0.9),weighted(bm25,lsa(dims=5),alpha=0.3),k=30)"


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        ("bm25", "bm25"),
        ("bm25(k1=1.2,b=0.75)", "bm25"),  # defaults are not shown
        ("bm25(b=0.4,k1=0.9)", "bm25(k1=0.9,b=0.4)"),  # parameters in signature order
        ("lsa(dims=100)", "lsa(dims=100)"),
        ("rrf", "rrf"),
        ("rrf(bm25,lsa)", "rrf"),  # the default children
        ("rrf(bm25,lsa,k=60)", "rrf"),
        ("rrf(lsa,bm25)", "rrf(lsa,bm25)"),
        ("weighted(bm25,lsa,alpha=0.3)", "weighted(alpha=0.3)"),
    ],
)
def test_each_label_shows_exactly_the_non_default_parameters(spec: str, label: str) -> None:
    assert build(spec).label == label


def test_the_label_is_a_spec_that_builds_the_same_configuration() -> None:
    for spec in ["bm25(k1=0.9,b=0.4)", "rrf(bm25(k1=0.9),lsa(dims=5),k=30)", "weighted(lsa,bm25,alpha=0.2)"]:
        first = build(spec)
        again = build(first.label)
        assert again.label == first.label
        assert again.get_params() == first.get_params()


def test_two_configurations_never_share_a_label() -> None:
    labels = [r.label for r in build_systems("bm25,bm25(k1=0.9,b=0.4),bm25(k1=0.9),rrf,rrf(k=30),rrf(lsa,bm25)")]
    assert len(set(labels)) == len(labels)


def test_the_same_configuration_twice_is_refused() -> None:
    with pytest.raises(RetbenchError, match="names bm25 more than once"):
        build_systems("bm25,bm25(k1=1.2)")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("rrf()", "rrf() names no retrievers to fuse. Fix: write rrf for the defaults or list them"),
        ("bm25(k1=abc)", "The 'k1' parameter of bm25 must be a float. Got 'abc' instead."),
        ("bm25(q=1)", "bm25 has no parameter 'q'. Its parameters: k1=1.2, b=0.75, analyzer='article'"),
        ("bm25(k1=-1)", "The 'k1' parameter of bm25 must be a float >= 0. Got -1.0 instead."),
        ("lsa(dims=2.5)", "The 'dims' parameter of lsa must be an int. Got '2.5' instead."),
        ("rrf(bm25,k=)", "parameter 'k' has no value"),
        ("rrf(bm25", "missing ')'"),
        ("bm25(lsa)", "bm25 takes no child retrievers, got lsa"),
        ("weighted(bm25,rrf)", "weighted: child 'rrf' has no score matrix to normalise. Fix: fuse it with rrf"),
        ("nope", "unknown retriever 'nope'. Valid: bm25, "),
        ("nope:Thing", "retriever 'nope:Thing': cannot import module 'nope'"),
        ("retrievers.bm25:Nothing", "'retrievers.bm25' has no Retriever subclass named 'Nothing'"),
        (":Thing", "expected module:Class"),
    ],
)
def test_bad_specs_are_one_clear_error(spec: str, message: str) -> None:
    with pytest.raises(RetbenchError) as caught:
        build(parse(spec))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("rrf()", "rrf() names no retrievers to fuse"),
        ("bm25(k1=abc)", "The 'k1' parameter of bm25 must be a float. Got 'abc' instead."),
        ("bm25(q=1)", "bm25 has no parameter 'q'"),
        ("nope:Thing", "cannot import module 'nope'"),
    ],
)
def test_bad_specs_exit_2_through_the_cli_before_any_work(runner, tmp_path, spec: str, message: str) -> None:
    result = runner.invoke(main, ["compare", "--systems", f"bm25,{spec}", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: ")
    assert message in errors[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
