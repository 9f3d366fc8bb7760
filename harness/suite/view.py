"""What every report of a suite reads (:class:`SuiteView`), from a fresh
:class:`~harness.suite.run.SuiteResult` or from a suite folder, and the few things derived from it:
the systems x collections table of a metric (:func:`heat_table`), each collection's own difference
beside each macro comparison (:func:`collection_differences`), and where each collection's own
report lies (:func:`report_links`).

Links to the collections' reports: a suite folder keeps each collection's results folder under
``collections/<name>/``, unchanged (a results folder never gains a file after it is written), so
a collection's report is the one its folder holds: ``report.html`` (or ``report.md``) when the suite
was written with ``--report html`` (``md``), which writes each collection's folder with the same
reports, else ``report.txt``, which every results folder keeps. Links are relative to the suite
folder (the suite's own ``report.html`` lies there); a report written elsewhere links through the
path from its own folder to the suite's (:func:`report_links` with a ``base``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from harness.core.options import level_text
from harness.core.readings import Reading, suite_readings
from harness.report.formats import REPORT_FORMATS, TEXT
from harness.suite.statistics import MACRO, MICRO

__all__ = ["CollectionEntry", "ReportLinks", "SuiteView", "collection_differences", "heat_table", "macro_sections",
           "report_links",
           "view_of_folder", "view_of_result"]


@dataclass(frozen=True)
class CollectionEntry:
    """One collection of a suite folder: its name, queries evaluated, documents, source, its results
    folder relative to the suite folder (``collections/<name>``) and the report files that folder
    holds (its manifest lists them)."""

    name: str
    queries: int
    documents: int
    source: str
    folder: str
    reports: tuple[str, ...]

    def report_file(self, format: str) -> str:
        """The folder's report in ``format`` (``html``, ``md``) when it holds one, else its ``report.txt``."""
        wanted = REPORT_FORMATS[format].file
        return wanted if wanted in self.reports else REPORT_FORMATS[TEXT].file


#: (a collection, the suite report's format) -> the link to that collection's own report.
ReportLinks = Callable[[CollectionEntry, str], str]


def report_links(base: str = "") -> ReportLinks:
    """Links to each collection's report in its folder, relative to the suite folder, or through
    ``base`` (the suite folder's path from where the report is read, POSIX separators)."""
    def link(entry: CollectionEntry, format: str) -> str:
        return posixpath.join(base, entry.folder, entry.report_file(format))  # base "": relative to the suite folder

    return link


@dataclass(frozen=True)
class SuiteView:
    """What every suite report reads, from a :class:`~harness.suite.run.SuiteResult` or a suite folder
    (``entries`` and ``manifest``: from a folder only); ``family``: the multiple-comparison family
    (:data:`harness.core.options.FAMILIES`) that adjusted the p-values."""

    collections: list[tuple[str, int]]  # (name, queries evaluated)
    systems: list[str]
    metrics: list[str]
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    tables: dict[str, pd.DataFrame]  # reading name -> its macro table (each registered reading's suite step)
    alpha: float
    bootstrap_samples: int
    title: str = "suite"
    entries: tuple[CollectionEntry, ...] = ()
    manifest: dict[str, Any] = field(default_factory=dict)
    family: str = "metric"

    @property
    def confidence(self) -> float:
        return round(1.0 - self.alpha, 12)

    @property
    def level(self) -> str:
        """The intervals' level as written: ``95%``."""
        return level_text(self.confidence)


def view_of_result(result: Any) -> SuiteView:
    """The view of a :class:`~harness.suite.run.SuiteResult` (not imported: the run imports the reports)."""
    return SuiteView([(c.name, c.queries_evaluated) for c in result.collections], result.systems, result.metrics,
                     result.summary, result.comparisons, dict(result.statistics.tables),
                     1.0 - result.options["confidence"],
                     result.options["bootstrap_samples"], family=result.options.get("family", "metric"))


def _reports_of(folder: Any) -> tuple[str, ...]:
    """The report files a collection's results folder holds: those its manifest lists (a folder
    written before the manifest listed its files: those present)."""
    names = [f.file for f in REPORT_FORMATS.values()]
    listed = folder.manifest.get("files")
    return tuple(n for n in names if (n in listed if isinstance(listed, dict) else folder.holds(n)))


def view_of_folder(suite: Any) -> SuiteView:
    """The view of a :class:`~harness.suite.store.SuiteFolder` (each collection's manifest checked
    against the suite's record of it as it is read)."""
    statistics = suite.manifest["statistics"]
    entries = tuple(CollectionEntry(str(c["name"]), int(c["queries_evaluated"]), int(c.get("documents", 0)),
                                    str(c.get("source", "")), str(c["folder"]),
                                    _reports_of(suite.collection(c["folder"].split("/")[-1])))
                    for c in suite.collections)
    return SuiteView([(c["name"], int(c["queries_evaluated"])) for c in suite.collections], suite.systems,
                     suite.metrics, suite.summary(), suite.comparisons(), suite.tables(),
                     float(statistics["alpha"]), int(statistics["bootstrap_samples"]), title=suite.manifest["run_id"],
                     entries=entries, manifest=suite.manifest, family=str(statistics.get("holm_family", "metric")))


def macro_sections(view: SuiteView, format: str) -> list[tuple[Reading, pd.DataFrame]]:
    """(reading, its macro table) for each registered reading with a suite renderer for ``format``
    (:class:`harness.core.readings.SuiteStep`) whose table the view holds, in registry order."""
    return [(reading, view.tables[reading.name]) for reading in suite_readings()
            if format in reading.suite.render and reading.name in view.tables]  # type: ignore[union-attr]


def heat_table(view: SuiteView, metric: str, *, micro: bool = False) -> pd.DataFrame:
    """systems x (collections..., macro) of ``metric``; ``micro`` adds the micro column."""
    rows = view.summary if micro else view.summary[view.summary["collection"] != MICRO]
    table = rows.pivot(index="system", columns="collection", values=metric)
    return table.loc[view.systems, [name for name, _ in view.collections] + [MACRO] + ([MICRO] if micro else [])]


def collection_differences(view: SuiteView, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Per macro comparison and collection, the collection's own difference of means ``a - b``:
    ``system_a, system_b, metric, collection, difference``, in the comparisons' order, then the
    collections'."""
    rows = []
    names = [name for name, _ in view.collections]
    for metric in metrics if metrics is not None else view.metrics:
        heat = heat_table(view, metric)
        for c in view.comparisons[view.comparisons["metric"] == metric].itertuples(index=False):
            rows += [{"system_a": c.system_a, "system_b": c.system_b, "metric": metric, "collection": name,
                      "difference": float(heat.at[c.system_a, name]) - float(heat.at[c.system_b, name])}
                     for name in names]
    return pd.DataFrame(rows, columns=["system_a", "system_b", "metric", "collection", "difference"])
