"""Metrics, evaluation, statistics, diagnosis, results store, reports and the ``bench`` CLI.

The library's public names are below: :func:`compare` and :func:`evaluate` over objects, what they
return, its option groups (:mod:`harness.core.options`), the regression :func:`gate` (its sides and its result), :func:`tune` (a cross-validated
parameter search), metric parsing, the terminal progress renderer and the error family. They are
imported when first used (PEP 562), so ``import harness`` -- and every ``bench`` command, which lives
in ``harness.cli`` -- does not pay for the retrievers, pandas or scipy until it needs them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what static checkers and editors see; at run time, __getattr__ below
    from harness.comparison import CompareResult, compare
    from harness.core.api import evaluate
    from harness.suite.run import SuiteResult, compare_suite
    from harness.core.diagnosis import Failure
    from harness.errors import InputFileError, ParameterError, RetbenchError, UnknownNameError
    from harness.gating.rule import GateResult, gate
    from harness.gating.sides import GateSide
    from harness.core.metrics import Metric, metric_names, parse_metric, parse_metrics
    from harness.core.options import Loading, Readings, RunOptions, Scoring, Statistics
    from corpora.progress import Reporter
    from harness.core.record import SystemResult
    from harness.core.statistics import Comparison
    from harness.tuning.search import TuneResult, tune

#: public name -> the module that defines it
_HOMES = {
    "compare": "harness.comparison",
    "compare_suite": "harness.suite.run",
    "SuiteResult": "harness.suite.run",
    "evaluate": "harness.core.api",
    "CompareResult": "harness.comparison",
    "SystemResult": "harness.core.record",
    "Comparison": "harness.core.statistics",
    "tune": "harness.tuning.search",
    "TuneResult": "harness.tuning.search",
    "Failure": "harness.core.diagnosis",
    "GateResult": "harness.gating.rule",
    "GateSide": "harness.gating.sides",
    "gate": "harness.gating.rule",
    "Metric": "harness.core.metrics",
    "metric_names": "harness.core.metrics",
    "parse_metric": "harness.core.metrics",
    "parse_metrics": "harness.core.metrics",
    "Reporter": "corpora.progress",
    "Loading": "harness.core.options",
    "Readings": "harness.core.options",
    "RunOptions": "harness.core.options",
    "Scoring": "harness.core.options",
    "Statistics": "harness.core.options",
    "InputFileError": "harness.errors",
    "ParameterError": "harness.errors",
    "RetbenchError": "harness.errors",
    "UnknownNameError": "harness.errors",
}

__all__ = [
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
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
