"""``bench compare`` without the command line: load, fit, search, evaluate, compare, diagnose.

:func:`run_compare` validates everything it can before any expensive work, returns a
:class:`CompareResult`, and writes nothing; ``harness.results`` stores it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from corpora import DEFAULT_ANALYZER, DEFAULT_CORPUS, Dataset, RetbenchError, Run, get_analyzer, load_dataset
from harness.diagnosis import Failure, diagnose
from harness.evaluation import FIRST_RELEVANT_RANK, evaluate, mean_over_queries
from harness.metrics import Metric, parse_metrics
from harness.progress import SILENT, Reporter
from harness.statistics import Comparison, compare_systems
from retrievers import Retriever, as_run, build, parse, split_systems
from retrievers.cache import IndexCache, cache_root, reporting, use_cache
from retrievers.spec import Spec

DEFAULT_SYSTEMS = "bm25,lsa,weighted,rrf"
DEFAULT_METRICS = "ndcg@10,recall@10,mrr,hit@10"


@dataclass
class CompareConfig:
    corpus: str = DEFAULT_CORPUS
    systems: Sequence[str] | str = DEFAULT_SYSTEMS
    metrics: Sequence[str] | str = DEFAULT_METRICS
    format: str | None = None
    split: str = "test"
    depth: int = 1000
    rel_threshold: int = 1
    bootstrap_samples: int = 5000
    seed: int = 0
    confidence: float = 0.95
    baseline: str | None = None
    fail_rank: int = 3
    analyzer: str | None = None
    cache_dir: str | None = None  # None: $RETBENCH_CACHE_DIR, else the user cache directory
    cache: bool = True  # False (--no-cache): fitted indexes are neither read from nor written to disk


@dataclass
class SystemResult:
    label: str
    retriever: Retriever
    run: Run
    fit_seconds: float
    search_seconds: float


@dataclass
class CompareResult:
    config: CompareConfig
    dataset: Dataset
    metrics: list[Metric]
    systems: list[SystemResult]
    query_ids: list[str]
    excluded_query_ids: list[str]
    per_query: pd.DataFrame  # columns: system, query_id, metrics..., first_relevant_rank
    summary: pd.DataFrame  # columns: system, metrics...
    comparisons: list[Comparison]
    failures: list[Failure]
    analyzer: str
    warnings: list[str] = field(default_factory=list)


def _with_default_analyzer(spec: Spec, analyzer: str) -> Spec:
    """Give every retriever in the spec tree that takes an ``analyzer`` the run-wide one."""
    from retrievers.registry import get_class

    cls = get_class(spec.target)
    if "analyzer" in cls.parameters() and "analyzer" not in spec.params:
        spec.params["analyzer"] = analyzer
    spec.children = [_with_default_analyzer(c, analyzer) for c in spec.children]
    return spec


def build_systems(systems: Sequence[str] | str, analyzer: str | None = None) -> list[Retriever]:
    """Parse and instantiate every system; labels must be distinct."""
    specs = split_systems(systems) if isinstance(systems, str) else [s.strip() for s in systems if s.strip()]
    if not specs:
        raise RetbenchError("--systems is empty. Fix: name at least one retriever, e.g. --systems bm25,lsa")
    built = []
    for text in specs:
        spec = parse(text)
        if analyzer is not None and analyzer != DEFAULT_ANALYZER:
            spec = _with_default_analyzer(spec, analyzer)
        built.append(build(spec))
    labels = [r.label for r in built]
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise RetbenchError(f"--systems names {', '.join(duplicates)} more than once. Fix: list each system once")
    return built


def _check_config(config: CompareConfig, metrics: list[Metric]) -> None:
    if config.depth < 1:
        raise RetbenchError(f"--depth must be an int >= 1. Got {config.depth} instead.")
    if config.fail_rank < 1:
        raise RetbenchError(f"--fail-rank must be an int >= 1. Got {config.fail_rank} instead.")
    if config.bootstrap_samples < 1:
        raise RetbenchError(f"--bootstrap-samples must be an int >= 1. Got {config.bootstrap_samples} instead.")
    deepest = max((m.k for m in metrics if m.k is not None), default=0)
    if deepest > config.depth:
        raise RetbenchError(f"a metric cuts at {deepest} but --depth is {config.depth}. Fix: raise --depth to {deepest}")


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
    restricted = Run.from_mapping(kept)
    return restricted


def index_cache(config: CompareConfig) -> IndexCache:
    """The cache fitted retrievers are reused from: on disk unless ``config.cache`` is False."""
    if not config.cache:
        return IndexCache(None)
    return IndexCache(Path(config.cache_dir) if config.cache_dir else cache_root())


def run_compare(config: CompareConfig, progress: Callable[[str], None] | None = None,
                on_loaded: Callable[[Dataset], None] | None = None,
                reporter: Reporter | None = None) -> CompareResult:
    """Run the whole comparison. ``progress`` receives short status messages; ``on_loaded`` the
    dataset as soon as it is loaded (the CLI prints its summary line there); ``reporter`` shows
    fitting, searching and the bootstrap as they go (on a terminal only)."""
    say = progress or (lambda message: None)
    show = reporter or SILENT
    metrics = parse_metrics(config.metrics)
    _check_config(config, metrics)
    analyzer = config.analyzer or DEFAULT_ANALYZER
    get_analyzer(analyzer)
    retrievers = build_systems(config.systems, config.analyzer)
    labels = [r.label for r in retrievers]
    if config.baseline is not None and config.baseline not in labels:
        raise RetbenchError(f"--baseline {config.baseline!r} is not among the systems ({', '.join(labels)}). "
                            "Fix: name one of them")
    dataset = load_dataset(config.corpus, format=config.format, split=config.split)
    if on_loaded is not None:
        on_loaded(dataset)
    with_relevant = set(dataset.qrels.queries_with_relevant(config.rel_threshold))
    query_ids = [q for q in dataset.queries.ids if q in with_relevant]
    if not query_ids:
        raise RetbenchError(f"corpus {dataset.name!r}: no query has a relevant judgment (grade >= "
                            f"{config.rel_threshold}) and a text. Fix: check the qrels and --rel-threshold")
    counted = set(query_ids)
    excluded = [q for q in dataset.queries.ids if q not in counted]
    queries = dataset.queries.subset(counted)

    systems: list[SystemResult] = []
    frames = []
    cache = index_cache(config)
    for retriever in retrievers:
        say(f"fitting {retriever.label}")
        start = time.perf_counter()
        with use_cache(cache), show.task(f"fitting {retriever.label}") as task, reporting(task.update):
            retriever.fit(dataset.corpus)
        fitted = time.perf_counter()
        say(f"searching {retriever.label}")
        with use_cache(cache), show.task(f"searching {retriever.label}", len(queries)) as task, \
                reporting(task.update):
            if dataset.candidates:
                # re-ranking collections: search everything, then rank each query's own pool
                run = as_run(retriever.search(queries, len(dataset.corpus)), dataset.corpus, queries,
                             retriever.label)
                run = restrict_to_candidates(run, dataset.candidates, config.depth)
            else:
                run = as_run(retriever.search(queries, config.depth), dataset.corpus, queries, retriever.label)
        searched = time.perf_counter()
        systems.append(SystemResult(retriever.label, retriever, run, fitted - start, searched - fitted))
        frame = evaluate(run, dataset.qrels, metrics, query_ids, config.rel_threshold)
        frame.insert(0, "system", retriever.label)
        frames.append(frame.reset_index())
    per_query = pd.concat(frames, ignore_index=True)
    per_query = per_query[["system", "query_id", *[m.name for m in metrics], FIRST_RELEVANT_RANK]]
    # exactly rounded means, so that `bench evaluate` on the written runs prints the same bits
    summary = per_query.groupby("system", sort=False)[[m.name for m in metrics]].agg(mean_over_queries).reset_index()

    if config.baseline is not None:
        pairs = [(label, config.baseline) for label in labels if label != config.baseline]
    else:
        pairs = list(combinations(labels, 2))
    values = {
        label: {m.name: per_query.loc[per_query.system == label, m.name].to_numpy(dtype=np.float64) for m in metrics}
        for label in labels
    }
    say("comparing")
    with show.task("bootstrap", config.bootstrap_samples) as task:
        comparisons = compare_systems(values, pairs, [m.name for m in metrics], config.bootstrap_samples,
                                      config.seed, config.confidence, task.update)
    failures: list[Failure] = []
    analyze = get_analyzer(analyzer)
    for system in systems:
        failures.extend(diagnose(system.label, system.run, dataset.corpus, dataset.queries, dataset.qrels,
                                 analyze, query_ids, config.fail_rank, config.rel_threshold))
    return CompareResult(config, dataset, metrics, systems, query_ids, excluded, per_query, summary,
                         comparisons, failures, analyzer, list(dataset.warnings))
