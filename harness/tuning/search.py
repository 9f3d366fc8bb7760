"""Parameter search with an honest estimate: :func:`tune` (``bench tune`` is a thin adapter over it).

Tuning k1 and b, or a fusion's alpha, on the queries it is then scored on reports an optimistic
number. :func:`tune` evaluates every point of a grid (:mod:`retrievers.grid`) on every query once,
then cross-validates the choice over queries (:mod:`harness.tuning.cross_validation`): the estimate it
reports scores each query with parameters chosen without it, next to the in-sample best (labelled
optimistic), the default parameters' score, and the parameters finally chosen on all queries::

    from harness import tune

    result = tune("bm25(k1=0.6:1.8:0.2,b=0.3:0.9:0.1)", "article", "ndcg@5", folds=5)
    # the option groups of harness.compare (harness.core.options): seed, a facets side file to stratify by
    tune("bm25(k1=0.6|1.2)", "article", "mrr", stratify="kind", statistics=Statistics(seed=1),
         loading=Loading(facets_file="kinds.csv"))
    result.estimate           # Estimate(value, low, high): cross-validated, with its interval
    result.write("results")   # tune.csv, per_query.csv, tune_cost.csv, report.txt, manifest.json
                              # (reports="html,md": the reports too)

Cheap by construction: the points share what their swept parameters do not change. A grid whose
top retriever has a :meth:`~retrievers.Retriever.sweep` shortcut (BM25 over k1 and b: tokens and
term statistics built once, :mod:`retrievers.bm25.sweep`) runs through it; any other grid builds
its points so that equal children are one object, fitted once and answering each search once
(:mod:`retrievers.shared`: a fusion's children across its alpha or k). Every point is searched as
deep as the metric reads (its cutoff, else ``depth``), which ranks its top documents exactly as a
deeper search would.

Each grid point's fit time, index size and batch search throughput are kept beside its mean
(:mod:`harness.tuning.cost`: ``tune_cost.csv``; what the times mean where the points share work).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from corpora import (DEFAULT_ANALYZER, Dataset, ParameterError, Queries, RetbenchError, Run,
                     load_dataset, load_facets_file, with_facets)
from corpora.progress import Callback, Renderer, as_progress
from corpora.readers import DEFAULT_SPLIT
from harness.core.api import queries_that_count, restrict_to_candidates
from harness.engines.cost import index_size
from harness.tuning.cost import PointCost
from harness.tuning.cross_validation import assign_folds, cross_validate, intervals
from harness.core.evaluation import evaluate as _evaluate
from harness.core.evaluation import mean_over_queries
from harness.core.condensed import DEFAULT_UNJUDGED
from harness.core.inputs import (_with_default_analyzer, check_bootstrap_fits, check_dataset_argument, check_depth,
                                 check_groups, check_writable_ids, fusion_depth_messages, index_cache, resolve_metrics)
from harness.core.metrics import Metric
from harness.core.options import Loading, RunOptions, Scoring, Statistics, declared
from harness.report.formats import TEXT, parse_formats
from harness.store.read import open_staged
from harness.store.folder import out_folder
from harness.tuning.record import FOLDS, Estimate, TuneConfig, TuneRecord
from harness.tuning.report import check_tune_formats, render_tune_report, tune_formats, tune_report_files
from harness.tuning.results import per_query_table, render_report, tune_table, write_tune
from harness.tuning.results import summary as _summary
from retrievers import Retriever, as_run, build
from retrievers.base import fit_retriever, search_retriever
from retrievers.cache import IndexCache
from retrievers.context import RunContext
from retrievers.grid import MAX_POINTS, Grid, read_grid
from retrievers.shared import SharedBuilder

__all__ = ["TuneResult", "tune"]

GridInput = str | Mapping[str, Mapping[str, Sequence[object]]]


@dataclass
class TuneResult(TuneRecord):
    """A :class:`~harness.tuning.record.TuneRecord` that can print and store itself."""

    def report(self, format: str = TEXT, *, command_line: Sequence[str] | None = None) -> str:
        """A report of the search.

        ``format="text"`` (the default): the summary ``bench tune`` prints (``report.txt``): per fold
        its choice, then the estimate and its neighbours.

        ``format="html"`` or ``"md"`` (:func:`harness.tuning.report.tune_formats`): the report
        ``bench report`` makes of the results folder :meth:`write` would store, made from that folder
        (written to a temporary place and removed), so it is the same text; its command line is
        ``command_line`` (default ``sys.argv``), as :meth:`write` records it. ``html`` needs the
        ``report`` extra (matplotlib); ``latex`` has no tune report (an error saying so).
        """
        if not isinstance(format, str):
            raise ParameterError("format", "report", f"a str, one of {', '.join([TEXT, *tune_formats()])}", format)
        if format == TEXT:
            return render_report(self)
        (name,) = parse_formats([format])
        check_tune_formats([name], parameter="format")
        with tempfile.TemporaryDirectory(prefix="retbench-report-") as scratch:
            folder = write_tune(self, Path(scratch), list(command_line) if command_line is not None else None,
                                say=lambda message: None)
            return render_tune_report(folder, name)

    def table(self) -> pd.DataFrame:
        """tune.csv: one row per grid point with its axis values, mean, and each fold's training and
        held-out means (:data:`harness.tuning.results.TUNE_COLUMNS`)."""
        return tune_table(self)

    def per_query(self) -> pd.DataFrame:
        """per_query.csv: each query's fold, its fold's choice and values
        (:data:`harness.tuning.results.PER_QUERY_COLUMNS`)."""
        return per_query_table(self)

    def summary(self) -> dict[str, object]:
        """The numbers the report prints, as the manifest keeps them (JSON-ready)."""
        return _summary(self)

    def write(self, out: Path | str, *, command_line: Sequence[str] | None = None,
              say: Callable[[str], None] | None = None, reports: Sequence[str] | str = ()) -> Path:
        """Store the search as a new results folder under ``out`` (see :mod:`harness.tuning.results`)
        and return its path. ``reports`` (``"html,md"`` or a list of names of
        :func:`harness.tuning.report.tune_formats`) are made from the folder before it is renamed
        into place and kept beside its files (``report.html``, ``report.md``). An unusable ``out``
        is a :class:`~corpora.RetbenchError`."""
        formats = parse_formats(reports)
        check_tune_formats(formats)  # before anything is written
        arguments = {} if say is None else {"say": say}
        derived = (lambda staging: tune_report_files(open_staged(staging), formats)) if formats else None
        return write_tune(self, out_folder(out), list(command_line) if command_line is not None else None,
                          derived=derived, **arguments)


def _one_metric(metric: str | Metric) -> Metric:
    metrics = resolve_metrics([metric] if isinstance(metric, Metric) else metric)
    if len(metrics) != 1:
        raise RetbenchError(f"tune chooses parameters by one metric, got {len(metrics)}: "
                            f"{', '.join(m.name for m in metrics)}. Fix: name one, e.g. `metric=ndcg@10`")
    return metrics[0]


def _check_folds(folds: object) -> None:
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise RetbenchError(f"`folds` must be an int >= 2 (folds to choose on and one to score on). Got {folds!r} "
                            f"instead. Fix: pass e.g. `folds={FOLDS}`")


def tune(grid: GridInput, dataset: Dataset | str | PathLike[str], metric: str | Metric, *, folds: int = FOLDS,
         stratify: str | None = None, max_points: int = MAX_POINTS, scoring: Scoring = Scoring(),
         statistics: Statistics = Statistics(), loading: Loading = Loading(), run: RunOptions = RunOptions(),
         progress: Renderer | Callback | None = None) -> TuneResult:
    """Evaluate every point of ``grid`` on ``dataset``'s queries by ``metric``, and cross-validate the choice.

    ``grid``: a spec with ranges and lists (``"bm25(k1=0.6:1.8:0.2,b=0.3:0.9:0.1)"``,
    ``"rrf(bm25,lsa,k=10|30|60|100)"``; :mod:`retrievers.grid` has the syntax, the grid order and the
    checks) or a mapping ``{spec: {axis: values}}`` (``{"bm25": {"k1": [0.9, 1.2], "b": [0.4, 0.75]}}``);
    more than ``max_points`` points is an error. ``dataset`` as for :func:`harness.compare`; ``metric``
    the one metric the parameters are chosen by. ``folds`` (>= 2): the folds over queries, drawn from
    ``statistics.seed``; ``stratify`` a facet of the queries to stratify them by (``loading.facets_file``:
    a facets side file, or ``{facet: {query id: value}}``, added to the queries first).

    The option groups are :func:`harness.compare`'s (:mod:`harness.core.options`): ``scoring`` (depth,
    relevance threshold, analyzer; ``unjudged`` must be trec_eval's ``"nonrelevant"``: a search scores
    unjudged documents as non-relevant, and another reading is refused, not ignored), ``statistics``
    (``bootstrap_samples``, ``confidence`` and ``seed`` set the paired bootstrap intervals; a search runs
    no randomisation test and no Holm adjustment, so a ``permutations`` or ``family`` other than the
    default is refused), ``loading`` and ``run`` (``cache`` and ``on_loaded``; a search runs in this
    process, without a time limit: a ``timeout`` or an engine is refused, and measures no latency: a
    ``latency_queries`` or ``latency_rounds`` other than the default is refused; each point's fit, index
    size and batch search are timed instead: :mod:`harness.tuning.cost`). Everything cheap is checked
    before loading.
    """
    check_groups(scoring=(scoring, Scoring), statistics=(statistics, Statistics), loading=(loading, Loading),
                  run=(run, RunOptions))
    if run.timeout is not None or run.engine != "local":
        raise RetbenchError("tune runs in this process without a time limit; `run` sets a timeout or an engine. "
                            "Fix: pass run=RunOptions(cache=...) without them")
    timed = [f"{name}={getattr(run, name)!r}" for name in ("latency_queries", "latency_rounds")
             if getattr(run, name) != declared(RunOptions, name)[0]]
    if timed:
        raise RetbenchError(f"tune measures no query latency; `run` sets {', '.join(timed)}. Fix: leave them out, "
                            "and measure the chosen parameters' latency with compare()")
    if scoring.unjudged != DEFAULT_UNJUDGED:
        raise RetbenchError(f"tune scores an unjudged document as non-relevant (trec_eval), and `scoring.unjudged` "
                            f"is {scoring.unjudged!r}. Fix: leave scoring.unjudged out, or score the chosen "
                            "parameters with compare(..., scoring=Scoring(unjudged='condensed'))")
    unused = [f"{name}={getattr(statistics, name)!r}" for name in ("permutations", "family")
              if getattr(statistics, name) != declared(Statistics, name)[0]]
    if unused:
        raise RetbenchError(f"tune runs no randomisation test and no Holm adjustment, and `statistics` sets "
                            f"{' and '.join(unused)}. Fix: leave statistics.permutations and statistics.family out "
                            "(the estimate's intervals read bootstrap_samples, seed and confidence)")
    chosen_metric = _one_metric(metric)
    check_depth([chosen_metric], scoring.depth)
    _check_folds(folds)
    # the three intervals of the estimate (held out, versus the defaults, optimism): compare's bound
    check_bootstrap_fits(statistics.bootstrap_samples, 3, "the estimate's 3 intervals")
    parsed = read_grid(grid, max_points=max_points)
    analyzer = scoring.analyzer
    if analyzer is not None and analyzer != DEFAULT_ANALYZER:
        _with_default_analyzer(parsed.base, analyzer)
    check_dataset_argument(dataset, loading.format, loading.split, loading.allow_unmatched_judgments)
    fitted_states = index_cache(run.cache)
    loaded = not isinstance(dataset, Dataset)
    facets = loading.facets_file
    config = TuneConfig(
        grid=parsed.text, corpus=str(dataset) if loaded else dataset.name, metric=chosen_metric.name, folds=folds,
        seed=statistics.seed, stratify=stratify,
        facets=None if facets is None or isinstance(facets, Mapping) else str(facets), max_points=max_points,
        depth=scoring.depth, rel_threshold=scoring.rel_threshold, bootstrap_samples=statistics.bootstrap_samples,
        confidence=statistics.confidence, analyzer=analyzer, format=loading.format,
        split=(loading.split or DEFAULT_SPLIT) if loaded else None,
        allow_unmatched_judgments=bool(loading.allow_unmatched_judgments) if loaded else None,
        cache=fitted_states.root is not None,
        cache_dir=str(fitted_states.root.parent) if fitted_states.root is not None else None)
    tasks = as_progress(progress)
    if isinstance(dataset, Dataset):
        data = dataset
        check_writable_ids(data)
    else:
        with tasks.task(f"loading {dataset}"):
            data = load_dataset(str(dataset), format=config.format, split=config.split,
                                allow_unmatched_judgments=bool(config.allow_unmatched_judgments), progress=tasks)
    if facets is not None:
        if isinstance(facets, Mapping):
            data = with_facets(data, facets)
        else:
            data = with_facets(data, load_facets_file(facets, data.queries.ids), source=str(facets))
    if run.on_loaded is not None:
        run.on_loaded(data)
    return _search(config, parsed, data, chosen_metric, RunContext(cache=fitted_states, progress=tasks))


def _search(config: TuneConfig, grid: Grid, dataset: Dataset, metric: Metric, context: RunContext) -> TuneResult:
    """Every point on every query (in ``context``: its cache and progress), then the cross-validation."""
    started = time.perf_counter()
    query_ids = queries_that_count(dataset.qrels, config.rel_threshold, dataset.queries.ids)
    counted = set(query_ids)
    excluded = [q for q in dataset.queries.ids if q not in counted]
    strata = labels_order = None
    if config.stratify is not None:
        cells = dataset.queries.cells(config.stratify, query_ids)
        strata, labels_order = [cells.cell_of[q] for q in query_ids], list(cells.labels)
    fold_of = assign_folds(len(query_ids), config.folds, config.seed, strata, labels_order)
    queries = dataset.queries.subset(counted)

    builder = SharedBuilder()
    points = list(grid.points())
    retrievers = [builder.point(grid.spec(p)) for p in points]
    labels = [r.label for r in retrievers]
    if len(set(labels)) != len(labels):  # two settings the retriever cannot tell apart by its label
        twice = next(label for label in labels if labels.count(label) > 1)
        raise RetbenchError(f"grid {grid.text!r}: two points are the same setting ({twice}). Fix: remove one value")
    default = builder.point(grid.default_spec())
    default_label = default.label
    default_point = labels.index(default_label) if default_label in labels else None
    settings: list[Retriever | None] = [*retrievers, *([] if default_point is not None else [default])]
    del retrievers, default
    plain = [build(grid.default_spec()), build(grid.spec(points[0]))]  # unshared: fusions nested in children show
    depth_warnings = list(dict.fromkeys(w for w in fusion_depth_messages(plain, [metric], config.depth, dataset.corpus)[0]))
    search_depth = len(dataset.corpus) if dataset.candidates else (metric.k or config.depth)

    values = np.empty((len(settings), len(query_ids)))
    classes = {type(r) for r in settings}
    for setting in settings:
        setting.run_context = context  # type: ignore[union-attr]  # what a sweep's shared work may use
    runs = type(settings[0]).sweep(settings, dataset.corpus, queries, search_depth) if len(classes) == 1 else None
    shortcut = (f"{type(settings[0]).__name__}.sweep: what the swept parameters do not change is computed once"
                if runs is not None else
                f"shared children: {len(builder.children)} child retrievers fitted once for all points"
                if builder.children else "none: every point is fitted and searched on its own")
    basis = "sweep" if runs is not None else "shared children" if builder.children else "own"
    costs: list[PointCost] = []
    with context.progress.task("grid points", len(settings)) as progress:
        for number in range(len(settings)):
            retriever, settings[number] = settings[number], None  # a fitted point is let go once scored
            if runs is not None:
                # a plugin's sweep is held to what its search would be: checked and cut to the depth
                start = time.perf_counter()
                found = next(runs)
                cost = PointCost(basis, None, None, time.perf_counter() - start)
                run = as_run(found, dataset.corpus, queries, retriever.label, search_depth)
            else:
                run, cost = _fit_and_search(retriever, dataset, queries, search_depth, context, basis)
            if number < len(points):  # the default off the grid is scored, not a grid point
                costs.append(cost)
            del retriever
            if dataset.candidates:
                run = restrict_to_candidates(run, dataset.candidates, config.depth)
            run = _compact(run)
            frame = _evaluate(run, dataset.qrels, [metric], query_ids, config.rel_threshold)
            values[number] = frame[metric.name].to_numpy(dtype=np.float64)
            progress.update(number + 1)
    searched = time.perf_counter()

    grid_values = values[:len(points)]
    cv = cross_validate(grid_values, fold_of)
    default_values = values[default_point if default_point is not None else len(points)]
    columns = np.column_stack([cv.held_out, cv.held_out - default_values, grid_values[cv.best] - cv.held_out])
    low, high = intervals(columns, config.bootstrap_samples, config.seed, config.confidence)
    estimate = Estimate(cv.estimate, float(low[0]), float(high[0]))
    versus_default = Estimate(mean_over_queries(columns[:, 1]), float(low[1]), float(high[1]))
    optimism = Estimate(mean_over_queries(columns[:, 2]), float(low[2]), float(high[2]))
    seconds = {"searching": round(searched - started, 6), "total": round(time.perf_counter() - started, 6)}
    return TuneResult(config, grid, dataset, metric, labels, [grid.values(p) for p in points], query_ids, excluded,
                      grid_values, cv, default_label, default_point, default_values, estimate, versus_default, optimism,
                      search_depth, shortcut, seconds, strata, labels_order, [*dataset.warnings, *depth_warnings],
                      costs)


def _compact(run: Run) -> Run:
    """The run over only the documents it ranks: the evaluator hashes every doc id of a run, and a
    run over the whole corpus would hash all of them again for every grid point."""
    used, index = np.unique(run.doc_index, return_inverse=True)
    return Run(run.query_ids, run.doc_ids[used], run.offsets, index.reshape(-1), run.scores)


def _fit_and_search(retriever: Retriever, dataset: Dataset, queries: Queries, k: int,
                    context: RunContext, basis: str) -> tuple[Run, PointCost]:
    """One point on its own, and what it cost (:mod:`harness.tuning.cost`: its fit, index and batch
    search; ``basis`` says how it ran). Its own fitted state is not kept for the next point (a fresh
    cache on the same folder, or none): only the shared children, fitted once, stay in memory."""
    root = context.cache.root if context.cache is not None else None
    own = RunContext(cache=IndexCache(root.parent) if root is not None else None, progress=context.progress)
    start = time.perf_counter()
    fit_retriever(retriever, dataset.corpus, own)
    fitted = time.perf_counter()
    found = search_retriever(retriever, queries, k, own)
    searched = time.perf_counter()
    loaded = own.cache is not None and any(event in ("hit", "memory") for event, _ in own.cache.events)
    cost = PointCost(basis, fitted - start, index_size(retriever)[0], searched - fitted, loaded)
    return as_run(found, dataset.corpus, queries, retriever.label, k), cost
