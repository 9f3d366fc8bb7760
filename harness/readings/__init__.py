"""The built-in readings, each one module written as an add-on is (docs/adding-a-reading.md): its
compute step, its record in the manifest and its sections of the reports (and, where it has them,
its failure check in the diagnosis, its macro table in a suite, its part of ``bench serve``),
registered in :data:`harness.core.readings.READINGS` when the module is imported.

A layer above the reports (a reading's sections use :mod:`harness.report.parts` and
:mod:`harness.report.plots`) and below what computes, stores or shows a comparison, which imports
this package so that the registry is whole wherever a comparison is made or read:
:mod:`harness.comparison` (and through it the suites), ``bench report`` and ``bench serve``'s store
and schema. The core reads the registry as data (``tests/test_import_graph.py``,
docs/development.md); a script that opens a folder through :mod:`harness.store.read` alone imports
this package first to read the built-in readings' tables.
"""

from __future__ import annotations

from harness.readings import cost  # noqa: F401  (registers efficiency and latency_comparisons)
from harness.readings import facets  # noqa: F401  (registers facets)
from harness.readings import leaderboard  # noqa: F401  (registers leaderboard)
from harness.readings import near_duplicates  # noqa: F401  (registers duplicates, which fails queries in the diagnosis)
from harness.readings import retrieval_metrics  # noqa: F401  (registers the metrics card's three tables)
from harness.readings import risk_coverage  # noqa: F401  (registers risk_coverage and risk_coverage_summary)

__all__: list[str] = []
