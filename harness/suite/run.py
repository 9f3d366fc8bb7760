"""A suite: the same systems on several collections, one after the other: :func:`compare_suite`
(``harness.compare_suite``).

Each collection is an ordinary :func:`harness.compare` (the same options, the same numbers as a run
on that collection alone), written at once as an ordinary results folder into a work folder and then
released, dataset, runs and fitted indexes with it, so a suite of ten collections needs the memory
of the largest one, not of all ten. What is kept per collection is small: its summary, per-query
values and comparisons. The macro readings (:mod:`harness.suite.statistics`) are computed from those
at the end; :meth:`SuiteResult.write` stores everything as one suite folder (:mod:`harness.suite.store`).
"""

from __future__ import annotations

import gc
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from corpora import Dataset, RetbenchError
from corpora.loading import resolve_corpus, source_of
from harness.comparison import compare
from harness.core.inputs import Systems, resolve_metrics, resolve_systems
from harness.core.metrics import Metric
from harness.core.options import RunOptions, Scoring, Statistics
from harness.core.statistics import Comparison
from harness.suite.statistics import MACRO, MICRO, SuiteStatistics, macro_statistics, wins_ties_losses

__all__ = ["SuiteCollection", "SuiteResult", "compare_suite", "run_suite"]


@dataclass(frozen=True)
class SuiteCollection:
    """What a suite keeps of one collection once its comparison is written and released."""

    name: str  # the dataset's name; name-2, name-3, ... for a later collection of a name already taken
    given: str  # as the caller named it (a bundled name, a folder, an irds: id, or the Dataset's name)
    folder: Path  # its results folder in the suite's work folder
    source: str
    hashes: dict[str, str]  # documents, queries, judgments
    documents: int
    queries_evaluated: int
    summary: pd.DataFrame
    values: dict[str, dict[str, np.ndarray]]  # system -> metric -> per-query values
    comparisons: list[Comparison]
    warnings: list[str]


@dataclass
class SuiteResult:
    """A finished suite: its collections (:class:`SuiteCollection`, each a results folder written to
    a work folder that lives as long as this object), the macro readings and the tables a suite
    folder holds. ``summary``: collection, system, one column per metric, n_queries (the collections'
    rows, then :data:`~harness.suite.statistics.MACRO`'s, then :data:`~harness.suite.statistics.MICRO`'s);
    ``comparisons``: the macro comparisons with their verdicts and the per-collection tally; and the
    macro table of each registered reading with a suite step (:class:`harness.core.readings.SuiteStep`),
    by its name (:meth:`table`, or as an attribute: ``suite.leaderboard``, ranks over the stratified
    resamples and tie groups)."""

    collections: list[SuiteCollection]
    systems: list[str]
    metrics: list[str]
    pairs: list[tuple[str, str]]
    options: dict[str, Any]
    statistics: SuiteStatistics
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    _workspace: Any = field(default=None, repr=False)

    def table(self, name: str) -> pd.DataFrame:
        """The macro table of the registered reading ``name`` (a ``KeyError`` names those the suite has)."""
        tables = self.statistics.tables
        if name not in tables:
            raise KeyError(f"no macro reading {name!r}; this suite has {', '.join(tables) or 'none'}")
        return tables[name]

    def __getattr__(self, name: str) -> pd.DataFrame:
        # a registered reading's macro table by its name (suite.leaderboard); only called when no attribute has it
        statistics = self.__dict__.get("statistics")
        if statistics is not None and name in statistics.tables:
            return statistics.tables[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def report(self, *, detail: bool = False) -> str:
        """The text ``bench compare`` prints for a suite: the suite tables first; ``detail`` adds
        each collection's means and comparisons (each collection's whole report is its folder's
        ``report.txt``)."""
        from harness.suite.report import render_text

        return render_text(self, detail=detail)

    def write(self, out: Path | str, *, command_line: Sequence[str] | None = None,
              say: Callable[[str], None] | None = None, reports: Sequence[str] | str = ()) -> Path:
        """Store the suite as a new suite folder under ``out`` and return its path (see
        :mod:`harness.suite.store`); ``reports`` as :meth:`harness.CompareResult.write`'s."""
        from harness.suite.store import write_suite

        return write_suite(self, out, command_line=command_line, say=say, reports=reports)


def _describe(dataset: object) -> str:
    return dataset.name if isinstance(dataset, Dataset) else str(dataset)


def _check_datasets(datasets: object) -> list[object]:
    if isinstance(datasets, (str, PathLike, Dataset)) or not hasattr(datasets, "__iter__"):
        raise RetbenchError(f"datasets is one collection ({_describe(datasets)}), not a list of them. Fix: pass "
                            "[dataset_a, dataset_b, ...], or call compare() for one collection")
    listed = list(datasets)  # type: ignore[call-overload]
    if not listed:
        raise RetbenchError("datasets is empty. Fix: pass at least one collection")
    seen: dict[str, int] = {}
    for position, dataset in enumerate(listed):
        if not isinstance(dataset, (str, PathLike, Dataset)):
            raise RetbenchError(f"datasets[{position}] is a {type(dataset).__name__}. Fix: pass a Dataset, a bundled "
                                "name, a corpus folder or an irds: id")
        if isinstance(dataset, Dataset):
            key = f"object:{id(dataset)}"
        elif source_of(str(dataset)) is not None:
            key = str(dataset)
        else:  # a missing folder is an error now, not after the collections before it ran
            key = str(resolve_corpus(str(dataset)).resolve())
        if key in seen:
            raise RetbenchError(f"collection {position + 1} ({_describe(dataset)}) is collection {seen[key] + 1} again: a "
                                "collection given twice would count twice in the macro average. Fix: name each "
                                "collection once")
        seen[key] = position
    return listed


def _distinct(name: str, used: set[str]) -> str:
    """``name``, or ``name-2``, ``name-3``, ... the first that no earlier collection of the suite took
    (two folders of one name, ``a/c`` and ``b/c``, are two collections called ``c`` and ``c-2``)."""
    label, n = name, 1
    while label in used:
        n += 1
        label = f"{name}-{n}"
    used.add(label)
    return label


def _fresh(retrievers: Sequence[Any], systems: Systems, analyzer: str | None) -> list[Any]:
    """Unfitted retrievers for one collection, so its index is released with its result:
    spec strings are built again; objects are copied from their ``__init__`` arguments when that can
    be done, else refitted as they are (``compare`` fits every system anew)."""
    if isinstance(systems, str) or (isinstance(systems, Sequence) and all(isinstance(s, str) for s in systems)):
        return resolve_systems(systems, analyzer)
    from retrievers.sharding import unfitted_copy

    fresh = []
    for retriever in retrievers:
        try:
            fresh.append(unfitted_copy(retriever))
        except Exception:  # a class whose arguments were not recorded: refit the object itself
            fresh.append(retriever)
    return fresh


def compare_suite(systems: Systems, datasets: Sequence[Dataset | str | PathLike[str]],
                  metrics: str | Sequence[str | Metric], **compare_keywords: Any) -> SuiteResult:
    """The same systems on several collections, one :func:`harness.compare` each, read as a suite (a
    macro average in which each collection weighs the same, intervals stratified by collection):
    :func:`run_suite` says what it computes and takes, ``docs/suites.md`` how to read it.

    >>> # compare_suite([BM25(), LSA()], ["cranfield", "cisi", "med"], ["ndcg@10"]).write("results")
    """
    return run_suite(compare, systems, datasets, metrics, **compare_keywords)


def run_suite(compare: Callable[..., Any], systems: Systems, datasets: Sequence[Dataset | str | PathLike[str]],
              metrics: str | Sequence[str | Metric], *,
                  on_collection: Callable[[int, int, str], None] | None = None,
                  workspace: str | PathLike[str] | None = None, reports: Sequence[str] | str = (),
                  **compare_keywords: Any) -> SuiteResult:
    """:func:`harness.compare_suite`: run the same ``systems`` on each of ``datasets`` (``compare``,
    :func:`harness.compare`, for each, with ``compare_keywords``) and read the suite: per-collection means, the macro mean (each collection
    weighs the same), macro comparisons with a bootstrap stratified by collection and a stratified
    sign-flip test (:mod:`harness.suite.statistics`), a leaderboard, and per pair the collections it
    wins, ties and loses.

    ``datasets``: Dataset objects, bundled names, folders or ``irds:`` ids, loaded one at a time
    (``loading`` applies to each that is loaded; ``run.on_loaded`` is the suite's own). Two
    collections of one name (folders ``a/c`` and ``b/c``) are told apart in the given order: ``c``,
    ``c-2``, ``c-3``, ... (the manifest's ``given`` says which folder each is). The
    same collection twice (the same name or folder, or, once loaded, the same documents, queries and
    judgments) is a :class:`~corpora.RetbenchError`. ``on_collection(position, total, name)`` hears
    each collection start (position from 1). ``workspace``: where the collections' results folders
    wait until :meth:`SuiteResult.write` (default: a temporary folder removed with the result).
    ``reports``: the reports each collection's results folder is written with (``html``, ``md``, as
    :meth:`harness.CompareResult.write`'s), so the suite's reports of the same formats link them
    (``bench compare --corpus A --corpus B --report html`` passes its ``--report``); checked first.
    """
    from harness.report.formats import check_formats, parse_formats

    formats = parse_formats(reports)
    check_formats(formats)  # matplotlib for html: say so before the first collection runs
    listed = _check_datasets(datasets)
    run = compare_keywords.get("run", RunOptions())
    if isinstance(run, RunOptions) and run.on_loaded is not None:
        raise RetbenchError("`run.on_loaded` is set by compare_suite for each collection. Fix: leave it out")
    metric_names = [m.name for m in resolve_metrics(metrics)]
    analyzer = compare_keywords.get("scoring", Scoring()).analyzer
    retrievers = resolve_systems(systems, analyzer)  # labels checked once, before any loading
    labels = [r.label for r in retrievers]
    baseline = compare_keywords.get("baseline")
    pairs = [(label, baseline) for label in labels if label != baseline] if baseline is not None else \
        list(combinations(labels, 2))
    if workspace is None:
        holder: Any = tempfile.TemporaryDirectory(prefix="retbench-suite-")
        work = Path(holder.name)
    else:
        holder, work = None, Path(workspace)
        work.mkdir(parents=True, exist_ok=True)

    kept: list[SuiteCollection] = []
    names: set[str] = set()
    seen_hashes: dict[tuple[str, str, str], str] = {}
    for position, dataset in enumerate(listed, start=1):
        if on_collection is not None:
            on_collection(position, len(listed), _describe(dataset))

        def loaded(data: Dataset, given: object = dataset) -> None:  # before any fitting
            key = (data.corpus.content_hash(), data.queries.content_hash(), data.qrels.content_hash())
            if key in seen_hashes:
                raise RetbenchError(f"collection {_describe(given)} holds the same documents, queries and judgments "
                                    f"as {seen_hashes[key]}: it would count twice in the macro average. Fix: name "
                                    "each collection once")
            seen_hashes[key] = _describe(given)

        # fresh retrievers each time: the caller's objects would hold the first collection's index to the end
        keywords = {**compare_keywords, "run": replace(run, on_loaded=loaded)}
        result = compare(_fresh(retrievers, systems, analyzer), dataset, metric_names, **keywords)
        folder = result.write(work, command_line=[], say=lambda message: None, reports=formats)
        per_query = result.per_query
        values = {s: {m: per_query.loc[per_query.system == s, m].to_numpy(dtype=np.float64) for m in metric_names}
                  for s in labels}
        data = result.dataset
        kept.append(SuiteCollection(
            _distinct(data.name, names), _describe(dataset), folder, str(data.source),
            {"documents": data.corpus.content_hash(), "queries": data.queries.content_hash(),
             "judgments": data.qrels.content_hash()}, len(data.corpus), len(result.query_ids),
            result.summary[["system", *metric_names]].copy(), values, list(result.comparisons), list(result.warnings)))
        del result, data, per_query
        gc.collect()  # the collection's dataset, runs and indexes go before the next one loads

    chosen = compare_keywords.get("statistics", Statistics())  # each collection's compare() checked it
    options = {**asdict(chosen), "baseline": baseline}  # the suite manifest's record of them
    statistics = macro_statistics([c.values for c in kept], labels, metric_names, pairs, chosen, kept)
    summary = _summary(kept, labels, metric_names)
    comparisons = _comparisons(statistics, kept, pairs, metric_names)
    return SuiteResult(kept, labels, metric_names, pairs, options, statistics, summary, comparisons, holder)


def _summary(collections: Sequence[SuiteCollection], systems: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """suite_summary.csv: each collection's means as its summary.csv has them, then the macro rows
    (the mean of the collections' means, exactly rounded), then the micro rows (every query pooled)."""
    import math

    rows = []
    for c in collections:
        by_system = c.summary.set_index("system")
        for s in systems:
            rows.append({"collection": c.name, "system": s, **{m: float(by_system.at[s, m]) for m in metrics},
                         "n_queries": c.queries_evaluated})
    total = sum(c.queries_evaluated for c in collections)
    for s in systems:
        rows.append({"collection": MACRO, "system": s,
                     **{m: math.fsum(float(c.summary.set_index("system").at[s, m]) for c in collections)
                        / len(collections) for m in metrics}, "n_queries": total})
    for s in systems:
        rows.append({"collection": MICRO, "system": s,
                     **{m: math.fsum(v for c in collections for v in c.values[s][m].tolist()) / total
                        for m in metrics}, "n_queries": total})
    return pd.DataFrame(rows, columns=["collection", "system", *metrics, "n_queries"])


#: Columns of suite_comparisons.csv before the per-collection tally.
COMPARISON_COLUMNS = ["system_a", "system_b", "metric", "mean_diff", "ci_low", "ci_high", "p_value", "p_adjusted",
                      "verdict", "n_collections", "n_queries", "n_differing", "test"]


def _comparisons(statistics: SuiteStatistics, collections: Sequence[SuiteCollection],
                 pairs: Sequence[tuple[str, str]], metrics: Sequence[str]) -> pd.DataFrame:
    rows = [{"system_a": c.system_a, "system_b": c.system_b, "metric": c.metric, "mean_diff": c.mean_diff,
             "ci_low": c.ci_low, "ci_high": c.ci_high, "p_value": c.p_value, "p_adjusted": c.p_adjusted,
             "verdict": c.verdict, "n_collections": len(collections), "n_queries": c.n_queries,
             "n_differing": c.n_differing, "test": c.test} for c in statistics.comparisons]
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    tally = wins_ties_losses([c.summary for c in collections], [c.comparisons for c in collections], pairs, metrics)
    keys = ["system_a", "system_b", "metric"]
    if len(frame) and not frame[keys].equals(tally[keys]):
        raise ValueError("the tally's rows are not in the comparisons' order")
    return pd.concat([frame, tally.drop(columns=keys + ["collections"])], axis=1)
