"""Parameters and composition: specs as users type them, typed parameters, labels, bad specs."""

from __future__ import annotations

import pytest

from corpora import RetbenchError
from harness.cli import main
from harness.core.inputs import build_systems
from retrievers import build
from retrievers.spec import parse
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
        ("bm25(k1=-1)", "The 'k1' parameter of bm25 must be a finite float >= 0. Got -1.0 instead."),
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


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # inf was accepted and scored every metric 0; nan was refused only by accident of `not nan >= 0`
        ("bm25(k1=inf)", "The 'k1' parameter of bm25 must be a finite float >= 0. Got inf instead. "
                         "Fix: give k1 a finite float >= 0, e.g. the default bm25(k1=1.2)."),
        ("bm25(k1=nan)", "The 'k1' parameter of bm25 must be a finite float >= 0. Got nan instead."),
        ("bm25(b=-inf)", "The 'b' parameter of bm25 must be a finite float in [0, 1]. Got -inf instead."),
        ("weighted(alpha=inf)", "The 'alpha' parameter of weighted must be a finite float in [0, 1]. Got inf"),
        ("weighted(depth=0)", "The 'depth' parameter of weighted must be an int >= 1. Got 0 instead. Fix:"),
        ("rrf(k=-1)", "The 'k' parameter of rrf must be an int >= 0. Got -1 instead. Fix: give k an int >= 0"),
        ("rrf(depth=0)", "The 'depth' parameter of rrf must be an int >= 1. Got 0 instead."),
        ("lsa(dims=0)", "The 'dims' parameter of lsa must be an int >= 1. Got 0 instead."),
        # numpy's RandomState (arpack's start vector) would raise a bare ValueError at fit time
        ("lsa(seed=-1)", "The 'seed' parameter of lsa must be an int in [0, 4294967295]. Got -1 instead."),
    ],
)
def test_numeric_parameters_must_be_finite_and_in_range(spec: str, message: str) -> None:
    with pytest.raises(RetbenchError) as caught:
        build(spec)
    assert message in str(caught.value)


def test_python_callers_get_the_same_checks() -> None:
    with pytest.raises(RetbenchError, match="finite float"):
        BM25(k1=float("inf"))
    with pytest.raises(RetbenchError, match="'depth' parameter of rrf must be an int"):
        RRF(depth=True)  # a bool is no depth


def test_a_parameter_given_twice_is_an_error_not_last_wins() -> None:
    with pytest.raises(RetbenchError) as caught:
        parse("bm25(k1=1.2,k1=2)")
    assert "parameter 'k1' of bm25 is given twice (1.2 and 2). Fix: keep one" in str(caught.value)
    with pytest.raises(RetbenchError, match="parameter 'k' of rrf is given twice"):
        parse("rrf(bm25,lsa(dims=5),k=3,k=3)")


def test_specs_nested_hundreds_deep_are_a_clear_error_not_a_recursion_error() -> None:
    deep = "rrf(" * 500 + "bm25" + ")" * 500
    with pytest.raises(RetbenchError) as caught:
        parse(deep)
    assert "nests parentheses 500 deep; at most 32 are read. Fix: flatten it" in str(caught.value)


def test_nesting_up_to_the_limit_still_builds() -> None:
    from retrievers.spec import MAX_NESTING

    spec = "rrf(bm25," * (MAX_NESTING - 1) + "lsa(dims=2)" + ")" * (MAX_NESTING - 1)
    fused = build(spec)
    assert fused.label.count("(") == MAX_NESTING
    with pytest.raises(RetbenchError, match=f"nests parentheses {MAX_NESTING + 1} deep"):
        parse("rrf(" + spec + ")")


@pytest.mark.parametrize("spec", ["weighted(bm25)", "weighted(bm25,lsa,bm25(k1=0.9))"])
def test_weighted_fuses_exactly_two_retrievers(spec: str) -> None:
    with pytest.raises(RetbenchError) as caught:
        build(spec)
    message = str(caught.value)
    assert message.startswith("weighted fuses exactly two retrievers (alpha * first + (1 - alpha) * second), got ")
    assert "Fix: " in message


def test_more_than_two_are_weighted_by_nesting() -> None:
    nested = build("weighted(weighted(bm25,lsa),bm25(k1=0.9),alpha=0.7)")
    assert nested.weights() == [0.7, pytest.approx(0.3)]
    assert nested.children[0].weights() == [0.5, 0.5]


def test_a_system_is_named_with_label_equals_spec() -> None:
    spec = parse("mine=bm25(k1=0.9)")
    assert (spec.label, spec.target, spec.params) == ("mine", "bm25", {"k1": "0.9"})
    named = build(spec)
    assert named.label == "mine" and named.default_label() == "bm25(k1=0.9)"
    systems = build_systems("mine=bm25(k1=0.9),bm25,both=rrf(bm25,lsa(dims=5))")
    assert [r.label for r in systems] == ["mine", "bm25", "both"]


@pytest.mark.parametrize(
    ("systems", "message"),
    [
        ("rrf(mine=bm25,lsa)", "rrf has no parameter 'mine'"),  # inside parentheses x= is a parameter
        ("bm25=lsa", "system name 'bm25' in 'bm25=lsa' is the name of a retriever"),
        ("'my sys'=bm25", "system name \"'my sys'\""),
        ("mine=", "system 'mine' names no retriever"),
        ("a=bm25,a=lsa", "`systems` names a more than once"),
    ],
)
def test_bad_system_names_are_one_clear_error(systems: str, message: str) -> None:
    with pytest.raises(RetbenchError) as caught:
        build_systems(systems)
    assert message in str(caught.value)


def test_bench_retrievers_help_documents_depth_two_children_and_names(runner) -> None:
    result = runner.invoke(main, ["retrievers", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "Fusions look only `depth` deep (10 by default, the article's)" in text
    assert "takes exactly two children" in text
    assert "A metric that cuts deeper than a fusion's depth gets a warning" in text
    assert "Name a system with NAME=SPEC at the top level" in text
