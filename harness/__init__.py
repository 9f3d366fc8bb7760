"""Metrics, evaluation, statistics, diagnosis, results store, reports and the ``bench`` CLI.

The library's public names are below: :func:`compare` and :func:`evaluate` over objects, what they
return, the regression :func:`gate` (its sides and its result), :func:`tune` (a cross-validated
parameter search), metric parsing, the terminal progress renderer and the error family. They are
imported when first used (PEP 562), so ``import harness`` -- and every ``bench`` command, which lives
in ``harness.cli`` -- does not pay for the retrievers, pandas or scipy until it needs them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what static checkers and editors see; at run time, __getattr__ below
    from harness.api import compare, evaluate
    from harness.comparison import CompareResult
    from harness.diagnosis import Failure
    from harness.errors import InputFileError, ParameterError, RetbenchError, UnknownNameError
    from harness.gating import GateResult, gate
    from harness.gate_sides import GateSide
    from harness.metrics import Metric, metric_names, parse_metric, parse_metrics
    from harness.progress import Reporter
    from harness.record import SystemResult
    from harness.statistics import Comparison
    from harness.tuning import TuneResult, tune

#: public name -> the module that defines it
_HOMES = {
    "compare": "harness.api",
    "evaluate": "harness.api",
    "CompareResult": "harness.comparison",
    "SystemResult": "harness.record",
    "Comparison": "harness.statistics",
    "tune": "harness.tuning",
    "TuneResult": "harness.tuning",
    "Failure": "harness.diagnosis",
    "GateResult": "harness.gating",
    "GateSide": "harness.gate_sides",
    "gate": "harness.gating",
    "Metric": "harness.metrics",
    "metric_names": "harness.metrics",
    "parse_metric": "harness.metrics",
    "parse_metrics": "harness.metrics",
    "Reporter": "harness.progress",
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
    "Metric",
    "ParameterError",
    "Reporter",
    "RetbenchError",
    "SystemResult",
    "TuneResult",
    "UnknownNameError",
    "compare",
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
