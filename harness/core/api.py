"""The computations behind the library's entry points: :func:`compute_comparison` (what
:func:`harness.compare` runs) and :func:`evaluate`.

``bench evaluate`` and :func:`harness.compare` (:mod:`harness.comparison`, the layer above the
results store and the reports, which returns a :class:`~harness.comparison.CompareResult` that
can print and store itself) are thin adapters over them; here a comparison is computed and
returned as plain data (:class:`~harness.core.record.CompareRecord`), and nothing above the core
is imported.

Which queries count. :func:`compute_comparison`: every query with at least one relevant judgment (grade >=
``rel_threshold``) and a text to search with; a query the run misses or answers with nothing scores
0; a query without a relevant judgment is excluded and reported so
(``CompareRecord.excluded_query_ids``), never silently averaged in (the article's convention).
:func:`evaluate`: trec_eval 10 ``-c``, as ``bench evaluate``
(:func:`~harness.core.evaluation.trec_eval_queries`, one function for both): every query of the
judgments counts, one the run misses or whose judgments are all non-relevant scoring 0.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from dataclasses import replace
from pathlib import Path

import pandas as pd

from corpora import (DEFAULT_ANALYZER, Dataset, Qrels, RetbenchError, Run, get_analyzer, load_dataset,
                     load_facets_file, with_facets)
from corpora.loading import source_of
from corpora.readers import DEFAULT_SPLIT
from corpora.memory import release_freed_memory
from corpora.progress import Callback, Renderer, as_progress
from harness.engines.deadline import step_deadline
from harness.engines.cost import PeakMemory, SystemCost, descendants, index_size, measure_latency
from harness.core.record import CompareConfig, CompareRecord, SystemResult
from harness.engines.steps import StepClock
from harness.core.diagnosis import Failure, diagnose
from harness.engines import DatasetOrigin, resolve_engine
from harness.engines.base import needs_texts_here
from harness.engines.parallel import ChunkMapper
from harness.core.evaluation import FIRST_RELEVANT_RANK, evaluate_in_partitions, mean_over_queries, trec_eval_queries
from harness.core.evaluation import evaluate as _evaluate
from harness.core.inputs import (Systems, check_bootstrap_fits, check_dataset_argument, check_depth, check_facets_file,
                                 check_groups, check_writable_ids, fusion_depth_messages, index_cache,
                                 resolve_facet_names, resolve_metrics, resolve_risk_metric, resolve_systems)
from harness.core.metrics import Metric
from harness.core.options import Loading, Readings, RunOptions, Scoring, Statistics
from harness.core.readings import check_readings, flagged_queries, read_comparison, resampled_columns
from retrievers.textless import with_run_documents
from harness.core.condensed import DEFAULT_UNJUDGED, check_unjudged, evaluate_as_read
from retrievers import Retriever, as_run
from retrievers.base import fit_retriever, search_retriever
from retrievers.sharding import SHARDS_ATTRIBUTE
from retrievers.context import RunContext
from retrievers.run_file import RunSystem
from retrievers.shared import SharedSystems, share_systems

__all__ = ["check_bootstrap_memory", "compute_comparison", "evaluate", "queries_that_count", "restrict_to_candidates"]


def queries_that_count(qrels: Qrels, rel_threshold: int, among: Sequence[str] | None = None) -> list[str]:
    """The queries :func:`harness.compare` takes a mean over: those with at least one relevant
    judgment, in the order of ``among`` (the dataset's queries, which must hold the query to search
    with it) or, without it, in qrels order."""
    with_relevant = qrels.queries_with_relevant(rel_threshold)
    if among is None:
        return with_relevant
    relevant = set(with_relevant)
    return [q for q in among if q in relevant]


def restrict_to_candidates(run: Run, candidates: dict[str, list[str]], depth: int) -> Run:
    """Keep, per query, only the documents of its candidate pool (order kept), cut at ``depth``.

    Collections such as CSFCube are judged as re-ranking tasks: each query ranks its own pool.
    A query without a pool keeps its ranking.
    """
    kept: dict[str, list[tuple[str, float]]] = {}
    for q in run.query_ids:
        pool = candidates.get(q)
        items = run.items(q)
        if pool is not None:
            allowed = set(pool)
            items = [(d, s) for d, s in items if d in allowed]
        kept[q] = items[:depth]
    return Run.from_mapping(kept)


def compute_comparison(systems: Systems, dataset: Dataset | str | PathLike[str],
                       metrics: str | Sequence[str | Metric], *, baseline: str | None = None,
                       scoring: Scoring = Scoring(), statistics: Statistics = Statistics(),
                       readings: Readings = Readings(), loading: Loading = Loading(), run: RunOptions = RunOptions(),
                       progress: Renderer | Callback | None = None) -> CompareRecord:
    """The comparison :func:`harness.compare` returns, as plain data: the same parameters (its
    docstring says what each does and what is checked first) and the
    :class:`~harness.core.record.CompareRecord` found, which neither prints nor stores itself.
    ``dataset`` is one collection: a list of them is refused with a pointer to
    :func:`harness.compare_suite`, which runs a suite."""
    if isinstance(dataset, (list, tuple)):
        raise RetbenchError(f"dataset is a {type(dataset).__name__} of {len(dataset)} collections, and compare() "
                            "compares on one. Fix: call compare_suite(systems, datasets, metrics) for a suite")
    check_groups(scoring=(scoring, Scoring), statistics=(statistics, Statistics), readings=(readings, Readings),
                  loading=(loading, Loading), run=(run, RunOptions))  # each group has checked its own fields
    metric_list = resolve_metrics(metrics)
    risk = resolve_risk_metric(readings.risk_metric, metric_list)
    facet_names = resolve_facet_names(readings.facets)
    facet_values = check_facets_file(loading.facets_file)  # read now: a mistake in it costs no loading
    check_depth(metric_list, scoring.depth)
    retrievers = resolve_systems(systems, scoring.analyzer)
    labels = [r.label for r in retrievers]
    check_bootstrap_memory(statistics.bootstrap_samples, len(labels), len(metric_list))
    if baseline is not None and baseline not in labels:
        raise RetbenchError(f"`baseline` {baseline!r} is not among the systems ({', '.join(labels)}). "
                            "Fix: name one of them")
    check_dataset_argument(dataset, loading.format, loading.split, loading.allow_unmatched_judgments)
    runner, owned = resolve_engine(run.engine)
    fitted_states = index_cache(run.cache)
    loaded = not isinstance(dataset, Dataset)
    as_loaded = replace(loading, facets_file=str(loading.facets_file) if loading.facets_file is not None else None,
                        split=(loading.split or DEFAULT_SPLIT) if loaded else None,
                        allow_unmatched_judgments=bool(loading.allow_unmatched_judgments) if loaded else None)
    config = CompareConfig(
        corpus=str(dataset) if loaded else dataset.name, systems=labels, metrics=[m.name for m in metric_list],
        baseline=baseline, scoring=scoring, statistics=statistics,
        readings=replace(readings, facets=facet_names, risk_metric=risk.name), loading=as_loaded,
        cache_dir=str(fitted_states.root.parent) if fitted_states.root is not None else None,
        cache=fitted_states.root is not None)
    on_loaded, seconds = run.on_loaded, (float(run.timeout) if run.timeout is not None else None)

    tasks = as_progress(progress)
    clock = StepClock()
    with contextlib.closing(runner) if owned else contextlib.nullcontext():
        if isinstance(dataset, Dataset):
            data = dataset
            check_writable_ids(data)  # loaders refuse such ids at their file and line; memory went through none
            if not data.corpus.has_texts:  # judgments only: runs (and fusions of them), on their documents
                data = with_run_documents(data, retrievers)
        else:
            # ids only here when the engine's workers read the folder and fit every retriever that reads texts
            keep_texts = runner.needs_texts or needs_texts_here(retrievers)
            with tasks.task(f"loading {dataset}"), clock.timed("loading"):
                data = load_dataset(str(dataset), format=as_loaded.format, split=as_loaded.split,
                                    allow_unmatched_judgments=bool(as_loaded.allow_unmatched_judgments),
                                    progress=tasks, keep_texts=keep_texts)
        if facet_values is not None:
            data = _with_facets_file(data, facet_values, Path(loading.facets_file))  # type: ignore[arg-type]
        check_readings(config, data)  # what a reading reads (a facet named) is an error before anything is fitted
        if on_loaded is not None:
            on_loaded(data)
        # after loading: a fusion's depth may be the corpus's own (retrievers.defaults)
        depth_warnings, notes = fusion_depth_messages(retrievers, metric_list, scoring.depth, data.corpus)
        origin = _origin(dataset, as_loaded) if loaded else None
        with runner.running(data.corpus, origin) as running:
            warnings = [*data.warnings, *depth_warnings]  # a retriever's own (a run's mismatches) join them, once each
            context = RunContext(cache=fitted_states, progress=tasks, placement=running.placement,
                                 warn=lambda message: None if message in warnings else warnings.append(message))
            with share_systems(retrievers) as shared:
                result = _run(config, data, retrievers, metric_list, context, running.mapper, warnings, notes, seconds,
                              run, shared, clock)
        result.engine = running.record.describe()
        result.steps = clock.steps
        return result


def bootstrap_columns(n_systems: int, n_metrics: int) -> int:
    """The widest matrix of resampled values a comparison of ``n_systems`` on ``n_metrics`` keeps, in
    :func:`~harness.core.statistics.bootstrap_memory`'s columns (16 bytes per resample each): the paired
    differences of every pair on every metric (the leaderboard compares all pairs, whatever the
    baseline), the leaderboard's ranks (every metric's, plus one metric's joined and sorted copies:
    8 bytes each), the facets' means, and what each registered reading's compute step keeps
    (:func:`~harness.core.readings.resampled_columns`: the metrics card's rollup, every system on every
    card name)."""
    pairs = n_systems * (n_systems - 1) // 2
    return max(pairs * n_metrics, -(-n_systems * (n_metrics + 2) // 2), n_systems * n_metrics,
               resampled_columns(n_systems, n_metrics))


def check_bootstrap_memory(bootstrap_samples: int, n_systems: int, n_metrics: int,
                           available: int | None = None) -> None:
    """Refuse, before anything is loaded or fitted, a bootstrap whose resampled values would not fit
    in memory (``available`` bytes; default :func:`~harness.core.statistics.available_memory`), naming the
    largest number of resamples that would: :func:`~harness.core.inputs.check_bootstrap_fits` over
    :func:`bootstrap_columns`."""
    check_bootstrap_fits(bootstrap_samples, bootstrap_columns(n_systems, n_metrics),
                         f"{n_systems} system(s) x {n_metrics} metric(s)", "compare fewer systems or metrics", available)


def _origin(dataset: str | PathLike[str], loading: Loading) -> DatasetOrigin | None:
    """Where a worker can load the dataset itself: a folder (absolute: workers start elsewhere) or a
    bundled name; None for a source id (``irds:``), whose documents are shipped instead."""
    if source_of(str(dataset)) is not None:
        return None
    path = Path(dataset)
    location = str(path.resolve()) if path.exists() else str(dataset)
    return DatasetOrigin(location, loading.format, loading.split or DEFAULT_SPLIT,
                         bool(loading.allow_unmatched_judgments))


def _with_facets_file(dataset: Dataset, facets: dict[str, dict[str, object]], path: Path) -> Dataset:
    """The dataset with the side file's facets; a query id the dataset lacks is an error at its line."""
    known = set(dataset.queries.ids)
    if any(q not in known for values in facets.values() for q in values):
        load_facets_file(path, dataset.queries.ids)  # raises, naming the line of the first such id
    return with_facets(dataset, facets, source=str(path))


def _run(config: CompareConfig, dataset: Dataset, retrievers: list[Retriever], metrics: list[Metric],
         context: RunContext, mapper: ChunkMapper | None, warnings: list[str], notes: list[str],
         timeout: float | None = None, run_options: RunOptions = RunOptions(),
         shared: SharedSystems | None = None, clock: StepClock | None = None) -> CompareRecord:
    """The comparison once every input is checked: fit, search (each within ``timeout`` seconds, in
    ``context``: its cache, progress and engine placement), measure what each system costs
    (:mod:`harness.engines.cost`: its latency as ``run_options`` says), evaluate, compare, diagnose (the
    chunks of the evaluation and the statistics through the engine's ``mapper``; None: here), as
    ``config``'s groups say. ``shared`` (:func:`~retrievers.shared.share_systems`) fits and searches a
    system that is also a fusion's child, or given twice, once: the later readers get its rankings kept.
    ``clock`` times each step (:mod:`harness.engines.steps`: the manifest's ``steps``)."""
    tasks = context.progress
    shared = shared if shared is not None else SharedSystems(retrievers)
    clock = clock if clock is not None else StepClock()
    scoring, readings = config.scoring, config.readings
    query_ids = queries_that_count(dataset.qrels, scoring.rel_threshold, dataset.queries.ids)
    if not query_ids:
        raise RetbenchError(f"corpus {dataset.name!r}: no query has a relevant judgment (grade >= "
                            f"{scoring.rel_threshold}) and a text. Fix: check the qrels and `rel_threshold`")
    counted = set(query_ids)
    excluded = [q for q in dataset.queries.ids if q not in counted]
    queries = dataset.queries.subset(counted)  # in query_ids' order: the dataset's

    systems: list[SystemResult] = []
    frames = []
    # re-ranking collections: search everything, then rank each query's own pool
    k = len(dataset.corpus) if dataset.candidates else scoring.depth
    for retriever in retrievers:
        label = retriever.label
        cache_events = len(context.cache.events) if context.cache is not None else 0
        with PeakMemory() as fit_memory:
            start = time.perf_counter()
            with tasks.task(f"fitting {label}"), step_deadline(timeout, label, "fit"):
                fit_retriever(shared.runner(retriever), dataset.corpus, context)
            fitted = time.perf_counter()
        with PeakMemory() as search_memory:
            searched_from = time.perf_counter()
            with tasks.task(f"searching {label}", len(queries)), step_deadline(timeout, label, "search"):
                found = search_retriever(shared.runner(retriever), queries, k, context)
            searched = time.perf_counter()
        run = as_run(found, dataset.corpus, queries, label, k, notes.append)
        if dataset.candidates:
            run = restrict_to_candidates(run, dataset.candidates, scoring.depth)
        fitted_one = shared.fitted(retriever)
        index_bytes, children = index_size(fitted_one)
        from_cache = context.cache is not None and any(
            event in ("hit", "memory") for event, _ in context.cache.events[cache_events:])
        cost = SystemCost(fitted - start, searched - searched_from, len(dataset.corpus), len(queries), from_cache,
                          index_bytes, fit_memory.added, search_memory.added, children,
                          any(isinstance(one, RunSystem) for one in (fitted_one, *descendants(fitted_one))))
        systems.append(SystemResult(retriever.label, fitted_one, run, fitted - start, searched - searched_from, cost))
        clock.add(f"fit {label}", fitted - start)
        clock.add(f"search {label}", searched - searched_from)
        with tasks.task(f"evaluating {label}"), clock.timed(f"evaluate {label}"):
            frame = evaluate_as_read(evaluate_in_partitions, run, dataset.qrels, metrics, scoring.unjudged, query_ids,
                                     scoring.rel_threshold, mapper)
        frame.insert(0, "system", retriever.label)
        frames.append(frame.reset_index())
        # the search's and the evaluation's temporaries (merged hits, partitions sent to workers): the
        # heap keeps their pages otherwise, and every later step's peak would stack on them
        release_freed_memory()
    shared.restore()  # every ranking is computed: the fusions read their own children again (latency too)
    # latency of what searches here: a system on an engine's workers would time a round trip per query
    timed = {s.label: s.retriever for s in systems if s.cost is not None and not s.cost.stored_run
             and not any(SHARDS_ATTRIBUTE in one.__dict__ for one in (s.retriever, *descendants(s.retriever)))}
    if run_options.latency_queries and timed:
        with tasks.task("measuring latency"), clock.timed("latency"):
            sampled, latencies = measure_latency(timed, queries, k, context, run_options.latency_queries,
                                                 run_options.latency_rounds, config.statistics.seed)
        for system in systems:
            if system.label in latencies and system.cost is not None:
                system.cost.latencies, system.cost.latency_query_ids = latencies[system.label], sampled
    names = [m.name for m in metrics]
    per_query = pd.concat(frames, ignore_index=True)
    per_query = per_query[["system", "query_id", *names, FIRST_RELEVANT_RANK]]
    # exactly rounded means, so that `bench evaluate` on the written runs prints the same bits
    summary = per_query.groupby("system", sort=False)[names].agg(mean_over_queries).reset_index()

    read = read_comparison(config, systems, replace(dataset, queries=queries), per_query, progress=tasks,
                           mapper=mapper)
    clock.steps.extend(read.steps)
    release_freed_memory()  # the readings' temporaries, before the diagnosis reads its documents' texts
    failures: list[Failure] = []
    analyzer = scoring.analyzer or DEFAULT_ANALYZER
    analyze = get_analyzer(analyzer)
    flagged = flagged_queries(read.tables)  # what the registered readings' checks fail (near-duplicates)
    with tasks.task("diagnosis"), clock.timed("diagnosis"):
        for system in systems:
            failures.extend(diagnose(system.label, system.run, dataset.corpus, dataset.queries, dataset.qrels,
                                     analyze, query_ids, readings.fail_rank, scoring.rel_threshold,
                                     flagged.get(system.label)))
    release_freed_memory()  # the diagnosis's texts, before the result is reported and written
    return CompareRecord(config, dataset, metrics, systems, query_ids, excluded, per_query, summary,
                         read.comparisons, failures, analyzer, read.power,
                         read.tables, warnings, notes)


def evaluate(run: Run | Mapping[str, Iterable[tuple[str, float]]], qrels: Qrels | Mapping[str, Mapping[str, int]],
             metrics: str | Sequence[str | Metric], *, rel_threshold: int = 1, depth: int | None = None,
             query_ids: Sequence[str] | None = None, run_queries_only: bool = False,
             unjudged: str = DEFAULT_UNJUDGED) -> pd.DataFrame:
    """Per-query values of one run against its judgments: one row per query (index ``query_id``), one
    column per metric (named as requested), and ``first_relevant_rank`` (nullable int) -- the numbers
    ``bench evaluate`` prints for the same files.

    ``run``: a :class:`~corpora.Run` or a mapping query id -> ``[(doc id, score), ...]``, evaluated in
    the order given (best first). A run file read with ``Run.read(path)`` is ranked as trec_eval 10
    ranks it (scores compared as doubles); ``Run.read(path, order="trec9")`` as trec_eval 9.x and
    pytrec_eval do (as single-precision floats). ``qrels``: a :class:`~corpora.Qrels` or a mapping
    query id -> ``{doc id: grade}``. ``metrics``: Metric objects or names. ``depth`` cuts every
    ranking first (trec_eval ``-M``).

    Queries (``bench evaluate``'s rule, :func:`~harness.core.evaluation.trec_eval_queries`): trec_eval 10
    ``-c``, every query of the judgments, in trec_eval's order (query id, byte order); a query the
    run misses, or whose judgments are all non-relevant (grade < ``rel_threshold``), scores 0.
    ``run_queries_only=True`` keeps only the queries the run answers (plain trec_eval); ``query_ids``
    evaluates exactly those, in that order (:func:`harness.compare` and ``bench gate`` pass the
    queries with a relevant judgment). Judgments without any relevant grade, or a run none of whose queries is
    judged, are a :class:`~corpora.RetbenchError`: every number would be 0.

    ``unjudged`` (:data:`~harness.core.condensed.UNJUDGED_READINGS`): ``"nonrelevant"``, trec_eval's
    reading, or ``"condensed"``: each ranking is scored after its unjudged documents are removed
    (Sakai's condensed lists); ``judged@k`` and ``first_relevant_rank`` read the ranking as given.

    >>> evaluate({"q1": [("a", 2.0), ("b", 1.0)]}, {"q1": {"b": 1}, "q2": {"c": 0}}, ["mrr"])["mrr"].to_dict()
    {'q1': 0.5, 'q2': 0.0}
    """
    metric_list = resolve_metrics(metrics)
    check_unjudged(unjudged)
    if isinstance(rel_threshold, bool) or not isinstance(rel_threshold, int):
        raise RetbenchError(f"rel_threshold must be an int (a grade). Got {rel_threshold!r} instead. "
                            "Fix: pass e.g. rel_threshold=1")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise RetbenchError(f"depth must be None or an int >= 1. Got {depth!r} instead. Fix: pass e.g. depth=1000")
    judgments = qrels if isinstance(qrels, Qrels) else Qrels(qrels)
    ranked = run if isinstance(run, Run) else Run.from_mapping(run)
    if query_ids is not None:
        counted = [str(q) for q in query_ids]
    else:
        counted, _ = trec_eval_queries(judgments, ranked.query_ids, rel_threshold, bool(run_queries_only))
    return evaluate_as_read(_evaluate, ranked, judgments, metric_list, unjudged, counted, rel_threshold, depth)
