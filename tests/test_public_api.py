"""The public names of each package are chosen: pinned here, so that changing them is deliberate, and
each of them imports. Importing a package costs no heavy library."""

from __future__ import annotations

import importlib

import pytest


PUBLIC = {
    "corpora": [
        "ANALYZERS",
        "DEFAULT_ANALYZER",
        "DEFAULT_CORPUS",
        "FORMATS",
        "Corpus",
        "Dataset",
        "DatasetStats",
        "InputFileError",
        "JudgmentArrays",
        "ParameterError",
        "Qrels",
        "Queries",
        "RetbenchError",
        "Run",
        "UnknownNameError",
        "bundled_names",
        "describe",
        "get_analyzer",
        "is_relevant",
        "load_dataset",
        "load_facets_file",
        "progress",
        "read_qrels",
        "read_run",
        "summary_line",
        "with_facets",
        "write_qrels",
        "write_run",
    ],
    "retrievers": [
        "BM25",
        "LSA",
        "RRF",
        "CombMNZ",
        "CombSUM",
        "Dense",
        "FixedRun",
        "Fusion",
        "PyTerrierRetriever",
        "Retriever",
        "RetrieverFailed",
        "RunContext",
        "RunSystem",
        "ScoreRetriever",
        "Weighted",
        "as_run",
        "available",
        "build",
        "fit_retriever",
        "get_class",
        "register",
        "score_retriever",
        "search_retriever",
    ],
    "harness.engines": [
        "ENGINES",
        "DaskEngine",
        "DatasetOrigin",
        "Engine",
        "EngineRecord",
        "EngineRun",
        "LocalEngine",
        "resolve_engine",
    ],
    "harness": [
        "CompareResult",
        "Comparison",
        "Failure",
        "GateResult",
        "GateSide",
        "InputFileError",
        "Loading",
        "Metric",
        "ParameterError",
        "Readings",
        "Reporter",
        "RetbenchError",
        "RunOptions",
        "Scoring",
        "Statistics",
        "SuiteResult",
        "SystemResult",
        "TuneResult",
        "UnknownNameError",
        "compare",
        "compare_suite",
        "evaluate",
        "gate",
        "metric_names",
        "parse_metric",
        "parse_metrics",
        "tune",
    ],
}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_names_are_pinned(package: str) -> None:
    assert importlib.import_module(package).__all__ == PUBLIC[package]


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_every_public_name_imports_in_a_fresh_interpreter(package: str, fresh_python) -> None:
    names = ", ".join(PUBLIC[package])
    assert fresh_python(f"from {package} import {names}\nfrom {package} import *\nprint('ok')") == "ok"
    module = importlib.import_module(package)
    assert all(getattr(module, name) is not None for name in PUBLIC[package])
    assert set(PUBLIC[package]) <= set(dir(module))


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_no_public_name_is_shadowed_by_a_submodule_of_the_same_name(package: str, fresh_python) -> None:
    """Importing ``harness.gate`` (a module) sets the attribute ``harness.gate``, hiding the lazily
    exported function of that name; so no public name may also be a submodule's name. Checked in a
    fresh interpreter after importing every submodule of the package."""
    code = (f"import importlib, pkgutil, types, {package}\n"
            f"for info in pkgutil.walk_packages({package}.__path__, '{package}.'):\n"
            "    try:\n        importlib.import_module(info.name)\n    except ImportError:\n        pass\n"
            f"print(sorted(n for n in {package}.__all__ if isinstance(getattr({package}, n), types.ModuleType)"
            f" and n != 'progress'))")
    assert fresh_python(code, timeout=300).splitlines()[-1] == "[]"


def test_the_errors_are_one_family_whichever_package_they_are_imported_from() -> None:
    import corpora
    import harness

    for name in ("RetbenchError", "InputFileError", "ParameterError", "UnknownNameError"):
        assert getattr(harness, name) is getattr(corpora, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import harness

    with pytest.raises(AttributeError, match="no attribute 'run_compare'"):
        harness.run_compare  # noqa: B018


def test_importing_the_packages_imports_no_heavy_library(fresh_python) -> None:
    """Dense is a name of ``retrievers`` but loads torch only when fitted; ``harness`` imports its
    names when first used, so ``bench evaluate`` (in ``harness.cli``) does not import the retrievers."""
    code = ("import sys\nimport harness, harness.cli\nlight = 'retrievers' not in sys.modules\n"
            "import corpora, retrievers\nfrom retrievers import Dense\n"
            "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
            "print(heavy, light)")
    assert fresh_python(code) == "[] True"


def test_a_comparison_loads_no_presentation_serving_gating_tuning_store_or_dask(fresh_python) -> None:
    """``harness.compare`` computes; rendering, storing, serving, gating, tuning and Dask load only
    when their own call is made (issue: the core never imports the presentation)."""
    code = ("import sys\nimport harness\n"
            "harness.compare(['bm25', 'lsa'], 'article', ['mrr'], "
            "statistics=harness.Statistics(bootstrap_samples=50, permutations=50))\n"
            "prefixes = ('harness.report', 'harness.serve', 'harness.gating', 'harness.tuning', 'harness.suite', "
            "'harness.store', 'harness.judgments.judge_app', 'harness.judgments.pool', 'matplotlib', 'fastapi', "
            "'uvicorn', 'dask', 'distributed')\n"
            "print(sorted(m for m in sys.modules if m.startswith(prefixes)), 'harness.core.api' in sys.modules)")
    assert fresh_python(code) == "[] True"
