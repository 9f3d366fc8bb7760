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

from corpora import (DEFAULT_ANALYZER, DEFAULT_CORPUS, Dataset, RetbenchError, Run, UnknownNameError, get_analyzer,
                     load_dataset)
from harness.diagnosis import Failure, diagnose
from harness.evaluation import FIRST_RELEVANT_RANK, evaluate, mean_over_queries
from harness.metrics import Metric, parse_metrics
from harness.progress import SILENT, Reporter
from harness.statistics import FAMILIES, Comparison, compare_systems, describe_settings
from retrievers import Retriever, as_run, build, parse, split_systems
from retrievers.cache import IndexCache, cache_root, reporting, use_cache
from retrievers.fusion import fusions_in
from retrievers.registry import is_registered, spec_name
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
    allow_unmatched_judgments: bool = False  # see corpora.load_dataset
    depth: int = 1000
    rel_threshold: int = 1
    bootstrap_samples: int = 5000
    seed: int = 0
    confidence: float = 0.95  # of the bootstrap interval; alpha = 1 - confidence for every test
    permutations: int = 10_000  # Monte Carlo sign flips, used when more than 20 queries differ
    family: str = "metric"  # Holm family: a key of harness.statistics.FAMILIES
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
    notes: list[str] = field(default_factory=list)  # for the manifest: worth knowing, not worth a warning

    def statistics_record(self) -> dict[str, object]:
        """The manifest's ``statistics``: bootstrap, which randomisation test, flips, stream, alpha,
        Holm family, and the pairs compared (JSON-ready)."""
        config = self.config
        return {**describe_settings(config.bootstrap_samples, config.permutations, config.seed, config.confidence,
                                    config.family, self.comparisons),
                "pairs": "each system vs the baseline" if config.baseline else "all pairs",
                "baseline": config.baseline}


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
    _qualify_colliding_classes(built)
    labels = [r.label for r in built]
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise RetbenchError(f"--systems names {', '.join(duplicates)} more than once. Fix: list each system once, "
                            "or name each one: --systems 'first=SPEC,second=SPEC'")
    return built


def _qualify_colliding_classes(built: list[Retriever]) -> None:
    """Different classes that would share a label (two plugins both named ``Overlap``) are labelled
    by their ``module:Class`` instead; a registered built-in and a system named by the user keep
    theirs. The same class twice with the same parameters stays a duplicate."""
    by_label: dict[str, list[Retriever]] = {}
    for retriever in built:
        by_label.setdefault(retriever.label, []).append(retriever)
    for group in by_label.values():
        if len({type(r) for r in group}) < 2:
            continue
        for retriever in group:
            default = retriever.default_label()
            if retriever.label != default or is_registered(type(retriever)):
                continue
            qualified = spec_name(type(retriever))
            retriever.label = (qualified + default[len(retriever.name):] if default.startswith(retriever.name)
                               else f"{qualified}[{default}]")


def fusion_depth_messages(retrievers: Sequence[Retriever], metrics: Sequence[Metric],
                          depth: int) -> tuple[list[str], list[str]]:
    """(warnings, notes) for metrics that reach deeper than a fusion in a system looks.

    A metric reaches its cutoff, or ``depth`` (the run's ``--depth``) without one. Below a fusion's
    own ``depth`` its ranking is a cut, not a fusion of the children's rankings: ``recall@100`` on
    ``rrf`` with depth 10 counts at most 20 documents. That is a warning, except for ``mrr`` /
    ``mrr@k``, which reads only the first relevant document and so loses only queries whose first
    relevant document lies below the cut: a note for the manifest (the article's table reports mrr
    on these fusions).
    """
    warnings: list[str] = []
    notes: list[str] = []
    for retriever in retrievers:
        for fusion in fusions_in(retriever):
            deep = [m for m in metrics if (m.k if m.k is not None else depth) > fusion.depth]
            if not deep:
                continue
            where = retriever.label if fusion is retriever else f"{fusion.label} inside {retriever.label}"
            looks = (f"deeper than {where}, which fuses to depth {fusion.depth} (at most {fusion.max_results()} "
                     "documents per query)")
            for_warning = [m.name for m in deep if m.base != "mrr"]
            for_note = [m.name for m in deep if m.base == "mrr"]
            if for_warning:
                reach = max(m.k if m.k is not None else depth for m in deep if m.base != "mrr")
                try:  # the same fusion, deeper, as the spec to type
                    example = type(fusion)(*fusion.children, **{**fusion.non_default_params(),
                                                                 "depth": reach}).default_label()
                except (TypeError, RetbenchError):  # a plugin fusion whose __init__ differs
                    example = f"{fusion.name}(...,depth={reach})"
                verb, measure = ("look", "they measure") if len(for_warning) > 1 else ("looks", "it measures")
                warnings.append(f"{', '.join(for_warning)} {verb} {looks}: {measure} that cut, not the fusion. "
                                f"Fix: fuse deeper, e.g. {example}")
            if for_note:
                verb = "look" if len(for_note) > 1 else "looks"
                notes.append(f"{', '.join(for_note)} {verb} {looks}: a query whose first relevant document lies "
                             "below that scores 0 there")
    return warnings, notes


def _check_config(config: CompareConfig, metrics: list[Metric]) -> None:
    if config.depth < 1:
        raise RetbenchError(f"--depth must be an int >= 1. Got {config.depth} instead.")
    if config.rel_threshold < 0:  # trec_eval -l: a negative level would make unjudged documents relevant
        raise RetbenchError(f"--rel-threshold must be an int >= 0. Got {config.rel_threshold} instead. Fix: pass e.g. "
                            "--rel-threshold 1 (negative grades are judged, never relevant)")
    if config.fail_rank < 1:
        raise RetbenchError(f"--fail-rank must be an int >= 1. Got {config.fail_rank} instead.")
    _check_count(config.bootstrap_samples, "--bootstrap-samples", 5000)
    _check_count(config.permutations, "--permutations", 10_000)
    if isinstance(config.seed, bool) or not isinstance(config.seed, int) or config.seed < 0:
        raise RetbenchError(f"--seed must be an int >= 0 (numpy seeds are non-negative). Got {config.seed!r} "
                            "instead. Fix: pass e.g. --seed 0")
    confidence = config.confidence
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.5 < confidence < 1.0:
        raise RetbenchError(f"--confidence must be a number strictly between 0.5 and 1. Got {confidence!r} instead. "
                            "Fix: pass e.g. --confidence 0.95 (a 95% interval, tests at alpha = 0.05)")
    if config.family not in FAMILIES:
        raise UnknownNameError("Holm family (--family)", str(config.family), list(FAMILIES))
    deepest = max((m.k for m in metrics if m.k is not None), default=0)
    if deepest > config.depth:
        raise RetbenchError(f"a metric cuts at {deepest} but --depth is {config.depth}. Fix: raise --depth to {deepest}")


def _check_count(value: object, option: str, default: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RetbenchError(f"{option} must be an int >= 1. Got {value!r} instead. Fix: pass e.g. {option} {default}")


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
    depth_warnings, notes = fusion_depth_messages(retrievers, metrics, config.depth)
    if config.baseline is not None and config.baseline not in labels:
        raise RetbenchError(f"--baseline {config.baseline!r} is not among the systems ({', '.join(labels)}). "
                            "Fix: name one of them")
    dataset = load_dataset(config.corpus, format=config.format, split=config.split,
                           allow_unmatched_judgments=config.allow_unmatched_judgments)
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
                                      config.seed, config.confidence, task.update, config.permutations,
                                      config.family)
    failures: list[Failure] = []
    analyze = get_analyzer(analyzer)
    for system in systems:
        failures.extend(diagnose(system.label, system.run, dataset.corpus, dataset.queries, dataset.qrels,
                                 analyze, query_ids, config.fail_rank, config.rel_threshold))
    return CompareResult(config, dataset, metrics, systems, query_ids, excluded, per_query, summary,
                         comparisons, failures, analyzer, [*dataset.warnings, *depth_warnings], notes)
