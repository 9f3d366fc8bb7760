"""What :func:`harness.compare` is given, turned into checked objects before any work is done.

Systems (Retriever objects, spec strings, or a mapping label -> either), metrics (Metric objects
or names), the dataset argument, what an option must be with respect to them (``depth`` against the
metrics' cutoffs, the risk metric among the metrics, the option groups given as groups) and the ids of
the dataset are checked here, each mistake a :class:`~corpora.RetbenchError` that says what was
expected and how to fix it, so that nothing is fitted before every cheap check has passed. Each
option on its own is checked by its group when the group is made (:mod:`harness.core.options`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Union

from corpora import DEFAULT_ANALYZER, Corpus, Dataset, InputFileError, ParameterError, RetbenchError, UnknownNameError
from corpora.facets import load_facets_file
from corpora.readers import check_id, id_problem
from harness.core.metrics import Metric, parse_metric, parse_metrics
from harness.core.statistics import available_memory, bootstrap_memory, largest_bootstrap
from retrievers import Retriever, build
from retrievers.cache import IndexCache, cache_root
from retrievers.fusion import DEFAULT_CHILDREN, RRF, Fusion, Weighted, fusions_in
from retrievers.registry import available, get_class, is_registered, spec_name
from retrievers.run_file import as_system
from retrievers.spec import Spec, parse, split_systems

__all__ = ["CacheChoice", "Systems", "build_systems", "check_bootstrap_fits", "check_dataset_argument", "check_depth",
           "check_facets_file", "check_groups", "check_writable_ids", "fusion_depth_messages", "index_cache",
           "resolve_facet_names", "resolve_metrics", "resolve_risk_metric", "resolve_systems"]

#: What ``systems`` may be: retrievers or spec strings in a sequence, a mapping label -> either, or
#: one comma-separated string of specs.
Systems = Union[str, Sequence[Union[Retriever, str]], Mapping[str, Union[Retriever, str]]]
#: What ``cache`` may be: False (memory only, for this call), True (the user cache folder), a folder,
#: or an :class:`~retrievers.cache.IndexCache`.
CacheChoice = Union[bool, str, "os.PathLike[str]", IndexCache]


# ----- systems ------------------------------------------------------------------------------------


def _with_default_analyzer(spec: Spec, analyzer: str) -> Spec:
    """Give every retriever in the spec tree that takes an ``analyzer`` the run-wide one, the default
    children of a built-in fusion (``weighted`` = ``weighted(bm25,lsa)``) included."""
    cls = get_class(spec.target)
    if "analyzer" in cls.parameters() and "analyzer" not in spec.params:
        spec.params["analyzer"] = analyzer
    if cls in (RRF, Weighted) and not spec.children:
        spec.children = [Spec(name) for name in DEFAULT_CHILDREN]
    spec.children = [_with_default_analyzer(c, analyzer) for c in spec.children]
    return spec


def _build_spec(text: str, analyzer: str | None) -> Retriever:
    spec = parse(text)
    if analyzer is not None and analyzer != DEFAULT_ANALYZER:
        spec = _with_default_analyzer(spec, analyzer)
    return build(spec)


def build_systems(systems: Sequence[str] | str, analyzer: str | None = None) -> list[Retriever]:
    """Parse and instantiate every spec (as ``bench compare --systems`` reads them); labels must be
    distinct. ``analyzer`` is given to every retriever in a spec that takes one and does not name its own."""
    specs = split_systems(systems) if isinstance(systems, str) else [s.strip() for s in systems if s.strip()]
    if not specs:
        raise RetbenchError("`systems` is empty. Fix: name at least one retriever, e.g. `systems=bm25,lsa`")
    built = [_build_spec(text, analyzer) for text in specs]
    _qualify_colliding_classes(built)
    repeated = _duplicate_labels(built)
    if repeated:
        raise RetbenchError(f"`systems` names {', '.join(repeated)} more than once. Fix: list each system once, "
                            "or name each one: `systems='first=SPEC,second=SPEC'`")
    return built


def resolve_systems(systems: Systems, analyzer: str | None = None) -> list[Retriever]:
    """The retrievers to compare, in order, with distinct labels.

    ``systems``: a sequence of :class:`~retrievers.Retriever` objects, runs (a :class:`corpora.Run`,
    a ranx ``Run``, a DataFrame: :func:`retrievers.run_file.as_system`) or spec strings; a mapping
    label -> either, whose keys become the labels (set on the objects); or one comma-separated string
    of specs (as ``--systems``). ``analyzer`` reaches the spec strings only: an object keeps the
    analyzer it was made with. The same object twice is an error (it would be fitted twice and hold
    one label).
    """
    if isinstance(systems, str) or (isinstance(systems, Sequence) and systems
                                    and all(isinstance(s, str) for s in systems)):
        return build_systems(systems, analyzer)  # type: ignore[arg-type]
    if isinstance(systems, Mapping):
        entries: list[tuple[str | None, object]] = list(systems.items())
    elif isinstance(systems, Retriever):
        raise RetbenchError(f"systems is one retriever ({systems.label}), not a list of them. Fix: pass "
                            f"[{type(systems).__name__}(...)], even for one system")
    elif hasattr(systems, "__iter__"):
        entries = [(None, system) for system in systems]  # type: ignore[union-attr]
    else:
        raise RetbenchError(f"systems is a {type(systems).__name__}, not a list of retrievers. Fix: pass e.g. "
                            "[BM25(), LSA()] or {'mine': BM25(k1=0.9)}")
    if not entries:
        raise RetbenchError("systems is empty. Fix: pass at least one retriever, e.g. [BM25(), LSA()]")
    built: list[Retriever] = []
    for position, (label, system) in enumerate(entries):
        where = f"systems[{position}]" if label is None else f"systems[{label!r}]"
        retriever = _one_system(system, where, analyzer)
        _name_unnamed_classes(retriever)
        if label is not None:
            _check_label(label, retriever)
            retriever.label = label
        built.append(retriever)
    first_place: dict[int, str] = {}
    for retriever in built:
        if id(retriever) in first_place:
            raise RetbenchError(f"systems holds the same {type(retriever).__name__} object twice (labelled "
                                f"{retriever.label!r}). Fix: create one object per system")
        first_place[id(retriever)] = retriever.label
    _qualify_colliding_classes(built)
    repeated = _duplicate_labels(built)
    if repeated:
        raise RetbenchError(f"systems: more than one system is labelled {', '.join(repeated)}. Fix: give them "
                            "different parameters, or name each one: {'first': ..., 'second': ...}")
    return built


def _one_system(system: object, where: str, analyzer: str | None) -> Retriever:
    if isinstance(system, str):
        return _build_spec(system, analyzer)
    as_retriever = as_system(system)  # a retriever, or a run given in Python (corpora.Run, ranx Run, DataFrame)
    if as_retriever is not None:
        return as_retriever
    if isinstance(system, type) and issubclass(system, Retriever):
        raise RetbenchError(f"{where} is the class {system.__name__}, not a retriever. Fix: create one, e.g. "
                            f"{system.__name__}()")
    shown = repr(system)
    shown = shown if len(shown) <= 60 else shown[:59] + "…"
    raise RetbenchError(f"{where} is a {type(system).__name__} ({shown}), not a Retriever or a spec string. "
                        "Fix: pass a retriever object such as BM25(), or a spec such as 'bm25(k1=0.9)'")


def _name_unnamed_classes(retriever: Retriever) -> None:
    """A class without a ``name`` is named after itself, in the whole tree of a fusion, as a
    ``module:Class`` spec names it (``Retriever.name`` documents the class name as the default), so
    that an object labels as ``Tfidf(sublinear=True)``, not ``(sublinear=True)``."""
    if not type(retriever).name:
        type(retriever).name = type(retriever).__name__
    for child in getattr(retriever, "children", ()):
        if isinstance(child, Retriever):
            _name_unnamed_classes(child)


def _check_label(label: object, retriever: Retriever) -> None:
    """A mapping key names files, run tags and table columns: a non-empty string that a TREC line can
    hold, and not the name of another retriever (``{'bm25': LSA()}`` would mislabel it)."""
    if not isinstance(label, str):
        raise RetbenchError(f"systems: the label {label!r} is a {type(label).__name__}, not a string. "
                            "Fix: key the mapping by names, e.g. {'mine': BM25(k1=0.9)}")
    problem = id_problem(label)
    if problem is not None:
        raise RetbenchError(f"systems: the label {label!r} {problem} (labels name run files and TREC run tags). "
                            "Fix: use letters, digits, '_', '.', '+' or '-', e.g. 'my_bm25'")
    if label != retriever.default_label() and label in available():
        raise RetbenchError(f"systems: the label {label!r} is the name of a retriever, but labels "
                            f"{retriever.default_label()}, so the results would mislabel it. Fix: choose another "
                            f"label, e.g. 'my_{label}'")


def _duplicate_labels(built: list[Retriever]) -> list[str]:
    labels = [r.label for r in built]
    return sorted({x for x in labels if labels.count(x) > 1})


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


def fusion_depth_messages(retrievers: Sequence[Retriever], metrics: Sequence[Metric], depth: int,
                          corpus: Corpus | None = None) -> tuple[list[str], list[str]]:
    """(warnings, notes) for metrics that reach deeper than a fusion in a system looks.

    A metric reaches its cutoff, or ``depth`` (the run's ``--depth``) without one. A fusion looks as
    deep as its ``depth`` on ``corpus`` (given, carried by the corpus, else as deep as it is asked:
    :mod:`retrievers.defaults`). Below that its ranking is a cut, not a fusion of the children's
    rankings: ``recall@100`` on ``rrf(depth=10)`` counts at most 20 documents. That is a warning,
    except for ``mrr`` / ``mrr@k``, which reads only the first relevant document and so loses only
    queries whose first relevant document lies below the cut: a note for the manifest (the article's
    table reports mrr on these fusions).
    """
    warnings: list[str] = []
    notes: list[str] = []
    for retriever in retrievers:
        for fusion, asked in _fusions_and_depths(retriever, corpus, depth):
            reads = fusion.depth_for(corpus, asked)
            # a cutoff beyond the run's depth is the run's cut, for every system alike
            deep = [m for m in metrics if (min(m.k, depth) if m.k is not None else depth) > reads]
            if not deep:
                continue
            where = retriever.label if fusion is retriever else f"{fusion.label} inside {retriever.label}"
            looks = (f"deeper than {where}, which fuses to depth {reads} (at most "
                     f"{fusion.max_results(corpus, asked)} documents per query)")
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


def _fusions_and_depths(retriever: Retriever, corpus: Corpus | None, depth: int) -> list[tuple[Fusion, int]]:
    """Every fusion in ``retriever``'s tree (:func:`~retrievers.fusion.fusions_in`'s order) with the
    ``k`` its search is asked for: ``depth`` at the top, an ``rrf``'s depth for its children (a
    ``weighted`` reads its children's scores, not their searches: they are asked as deep as it is)."""
    asked = {id(retriever): depth}
    found = []
    for fusion in fusions_in(retriever):
        k = asked.get(id(fusion), depth)
        found.append((fusion, k))
        reads = fusion.depth_for(corpus, k) if isinstance(fusion, RRF) else k
        for child in fusion.children:
            asked.setdefault(id(child), reads)
    return found


# ----- metrics and options ------------------------------------------------------------------------


def resolve_metrics(metrics: str | Sequence[str | Metric]) -> list[Metric]:
    """:class:`~harness.core.metrics.Metric` objects from objects or names (``"ndcg@10"``, ``"P_5"``, or one
    comma-separated string); every bad name is reported at once, repeats are dropped."""
    if isinstance(metrics, str) or all(isinstance(m, str) for m in metrics):
        return parse_metrics(metrics)  # type: ignore[arg-type]
    resolved: list[Metric] = []
    problems: list[str] = []
    for metric in metrics:
        if isinstance(metric, Metric):
            resolved.append(metric)
        elif isinstance(metric, str):
            try:
                resolved.append(parse_metric(metric))
            except (UnknownNameError, ParameterError) as exc:
                problems.append(str(exc))
        else:
            problems.append(f"metric {metric!r} is neither a Metric nor a name such as 'ndcg@10'")
    if problems:
        raise RetbenchError("; ".join(problems))
    seen: set[str] = set()
    return [m for m in resolved if not (m.name in seen or seen.add(m.name))]


def check_depth(metrics: Sequence[Metric], depth: int) -> None:
    """``depth`` (:class:`~harness.core.options.Scoring`'s, checked there as an int >= 1) deep enough
    for every metric's cutoff: the one check of a scoring field that needs the metrics."""
    deepest = max((m.k for m in metrics if m.k is not None), default=0)
    if deepest > depth:
        raise RetbenchError(f"a metric cuts at {deepest} but `depth` is {depth}. Fix: raise `depth` to {deepest}")


def check_groups(**groups: tuple[object, type]) -> None:
    """Each option group is an object of its class (a dict or a number there is a mistake, not a default)."""
    for name, (value, cls) in groups.items():
        if not isinstance(value, cls):
            raise RetbenchError(f"`{name}` is a {type(value).__name__}, not a {cls.__name__}. "
                                f"Fix: pass {name}={cls.__name__}(...) (harness.core.options)")


def resolve_risk_metric(risk_metric: str | Metric | None, metrics: Sequence[Metric]) -> Metric:
    """The metric whose ``1 - value`` is risk–coverage's risk: one of ``metrics`` (by name, or by family
    and cutoff, so ``ndcg_cut_5`` finds ``ndcg@5``); None: the first. Its kind (a name or a Metric) is
    :class:`~harness.core.options.Readings`' to check."""
    if risk_metric is None:
        return metrics[0]
    wanted = risk_metric if isinstance(risk_metric, Metric) else parse_metric(risk_metric)
    for metric in metrics:
        if metric.name == wanted.name or (metric.base, metric.k) == (wanted.base, wanted.k):
            return metric
    names = ", ".join(m.name for m in metrics)
    raise RetbenchError(f"`risk_metric` {wanted.name!r} is not among the metrics ({names}); its per-query values are "
                        "what the risk is read from. Fix: name one of them, or add it to `metrics`")


def resolve_facet_names(facets: str | Sequence[str] | None) -> list[str] | None:
    """The facets to roll up: None (the default selection), or names from a list or one comma-separated
    string (``""`` and ``[]``: none), repeats dropped (:class:`~harness.core.options.Readings` checks
    that they are names)."""
    if facets is None:
        return None
    names = facets.split(",") if isinstance(facets, str) else facets
    return list(dict.fromkeys(name.strip() for name in names if name.strip()))


def check_facets_file(path: str | os.PathLike[str] | None) -> dict[str, dict[str, object]] | None:
    """Read a facets side file (:func:`corpora.load_facets_file`) before any work: a missing file or a
    mistake in it is an error at its line; the query ids are checked once the dataset is loaded."""
    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)):
        raise RetbenchError(f"facets_file must be a path. Got {path!r} instead. Fix: pass the file's path")
    where = Path(path)
    if not where.exists():
        raise InputFileError(where, "facets file not found", fix="check the path given to `facets_file`")
    if not where.is_file():
        raise InputFileError(where, "is not a file", fix="name a .csv, .tsv or .jsonl facets file")
    return load_facets_file(where)


def check_bootstrap_fits(bootstrap_samples: int, columns: int, what: str, fewer: str | None = None,
                         available: int | None = None) -> None:
    """The one bound on ``bootstrap_samples`` every bootstrap shares (:func:`harness.compare`,
    :func:`harness.gate`, :func:`harness.tune`): refuse, before any work, resamples whose values over
    ``columns`` columns (:func:`~harness.core.statistics.bootstrap_memory`) would not fit in memory
    (``available`` bytes; default :func:`~harness.core.statistics.available_memory`; nothing is
    refused when it cannot be told), naming the largest count that would. ``what`` says what the
    columns are, e.g. ``"2 system(s) x 1 metric(s)"``, and ``fewer`` the other way to fit, e.g.
    ``"compare fewer systems or metrics"`` (None: no other way): a count of 10**12 is refused, never run without end."""
    available = available_memory() if available is None else available
    if available is None:
        return
    needed = bootstrap_memory(bootstrap_samples, columns)
    if needed <= available:
        return
    largest = largest_bootstrap(columns, available)
    raise RetbenchError(
        f"`bootstrap_samples` {bootstrap_samples:,} needs about {needed / 1e9:.3g} GB for the resampled values of "
        f"{what}, more than the {available / 1e9:.3g} GB of memory available. Fix: "
        + ", or ".join([f"pass at most {largest:,}" if largest else "free memory",
                        *([f"{fewer} per run"] if fewer else [])]))


def index_cache(cache: CacheChoice) -> IndexCache:
    """The cache fitted retrievers are reused from: memory only for this call (False), the user
    cache folder (True: ``$RETBENCH_CACHE_DIR``, else the platform's), a folder, or the one given."""
    if isinstance(cache, IndexCache):
        return cache
    if cache is False or cache is None:
        return IndexCache(None)
    if cache is True:
        return IndexCache(cache_root())
    return IndexCache(Path(cache))  # a folder (RunOptions checks the kind of its cache)


# ----- the dataset ---------------------------------------------------------------------------------


def check_dataset_argument(dataset: object, format: str | None, split: str | None,
                           allow_unmatched_judgments: bool | None) -> None:
    """``dataset`` is a :class:`~corpora.Dataset`, or a bundled name or folder to load; the loading
    options apply only to the latter (a loaded dataset would silently ignore them)."""
    if isinstance(dataset, Dataset):
        given = [name for name, value in (("format", format), ("split", split),
                                          ("allow_unmatched_judgments", allow_unmatched_judgments))
                 if value is not None]
        if given:
            raise RetbenchError(f"{', '.join(given)} load a dataset given by name or folder, but dataset "
                                f"{dataset.name!r} is loaded already. Fix: pass them to corpora.load_dataset, or "
                                "pass the name or folder instead of the Dataset")
        return
    if not isinstance(dataset, (str, os.PathLike)):
        raise RetbenchError(f"dataset is a {type(dataset).__name__}, not a corpora.Dataset, a bundled corpus name "
                            "or a folder. Fix: pass e.g. corpora.load_dataset('article') or 'article'")


def _all_writable(ids: Sequence[str], starts_a_line: bool) -> bool:
    """Whether every id can be one field of a TREC line: one scan of the ids joined by a letter (which
    :func:`~corpora.readers.id_problem` never objects to), so a million ids cost a few milliseconds."""
    if not ids:
        return True
    if not all(ids) or id_problem("x".join(ids)) is not None:
        return False
    return not (starts_a_line and any(i.startswith("#") for i in ids))


def check_writable_ids(dataset: Dataset) -> None:
    """Refuse, before any work, an id of ``dataset`` that a TREC run or qrels file cannot hold
    (empty, whitespace, a control character; a query id starting with ``#``): the results folder
    holds such files, so the run would otherwise fail at its very end. The loaders refuse such ids
    at their file and line already; this is for a dataset built in memory."""
    place = f"dataset {dataset.name!r} ({dataset.source})"
    judged_queries = list(dataset.qrels)
    judged_docs = [d for q in judged_queries for d in dataset.qrels[q]]
    for what, ids, starts_a_line in (("document id", dataset.corpus.ids, False),
                                     ("query id", dataset.queries.ids, True),
                                     ("judged query id", judged_queries, True),
                                     ("judged document id", judged_docs, False)):
        ids = [str(i) for i in ids] if not all(isinstance(i, str) for i in ids) else ids
        if not _all_writable(ids, starts_a_line):
            for identifier in ids:
                check_id(identifier, what, place, None, starts_a_line=starts_a_line)
