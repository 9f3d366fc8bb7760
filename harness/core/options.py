"""The options of a comparison, declared once: small frozen groups with their defaults and help.

:func:`harness.compare` takes the data, the systems, the metrics and these groups::

    from harness import compare
    from harness.core.options import Loading, Scoring, Statistics

    compare(["bm25", "lsa"], "cranfield", ["ndcg@10"], baseline="bm25",
            statistics=Statistics(bootstrap_samples=1000, seed=1), scoring=Scoring(depth=100),
            loading=Loading(split="dev"))

:func:`harness.tune` takes all but ``readings``, and :func:`harness.gate` (with
:func:`harness.suite.gate.gate_suites`) its ``statistics`` (all but ``family``: a gate's Holm family is
the gated metrics).

* :class:`Scoring`: how deep each system searches and how judgments and texts are read.
* :class:`Statistics`: the paired bootstrap, the randomisation test and Holm's family.
* :class:`Readings`: the readings beyond the means (diagnosis, facets, risk–coverage, the metrics card).
* :class:`Loading`: how a dataset given by name or folder is loaded (and a facets side file).
* :class:`RunOptions`: where and how the work runs (cache, time limit, engine, a hook on the loaded data).

Each field's metadata holds its ``help`` (a string; a ``{name}`` in it is a value declared elsewhere,
filled in by the CLI) and, where it differs from the field's name, its ``flag``: ``bench compare``,
``bench tune`` and ``bench gate`` build their click options from these (:mod:`harness.cli.declared`),
so a default or a help text is written here only. The library's errors name the field
(``bootstrap_samples``); the CLI prints the flag (``--bootstrap-samples``).

This module imports nothing of the harness, so every other module may take its defaults from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Union

from harness.core.condensed import DEFAULT_UNJUDGED, UNJUDGED_HELP

if TYPE_CHECKING:
    from corpora import Dataset
    from harness.engines import Engine
    from retrievers.cache import IndexCache

__all__ = ["BOOTSTRAP_SAMPLES", "CONFIDENCE", "CONFIDENCE_FROM", "DEPTH", "FAIL_RANK", "FAMILY", "PERMUTATIONS",
           "REL_THRESHOLD", "RETRIEVAL_K", "SEED", "Loading", "Readings", "RunOptions", "Scoring",
           "Statistics", "declared"]

#: The defaults, one declaration each (the dataclasses below, CompareConfig, the CLI and every
#: function with such a parameter take them from here).
DEPTH = 1000
REL_THRESHOLD = 1
BOOTSTRAP_SAMPLES = 5000
SEED = 0
CONFIDENCE = 0.95
PERMUTATIONS = 10_000
FAMILY = "metric"
FAIL_RANK = 3
CONFIDENCE_FROM = "score"
RETRIEVAL_K = 10


def _option(default: Any, help: str | Callable[[], str], flag: str | None = None) -> Any:
    return field(default=default, metadata={"help": help, "flag": flag})


#: Help texts that name values declared where they are used fill these from
#: :func:`harness.cli.declared.help_values` (an import from here would be a cycle).
_FAMILIES_HELP = "Holm family: {families}."
_PERMUTATIONS_HELP = ("Random sign flips of the randomisation test when more than {exact_up_to} queries differ "
                      "(up to that, all sign patterns are enumerated exactly).")
_FACETS_HELP = ("Comma-separated query facets to roll up into facets.csv ('' for none) [default: every numeric "
                "facet, in quantile buckets, and every other with at most {max_values} values]; a cell of fewer "
                "than {min_queries} queries gets no interval.")
_CONFIDENCE_FROM_HELP = ("A system's confidence per query: {confidences} (a retriever with its own "
                         "confidence(queries) method uses that).")


def _analyzer_help() -> str:
    from corpora import DEFAULT_ANALYZER
    from corpora.analyzers import describe_analyzers

    return f"Analyzer for every retriever that takes one [default: {DEFAULT_ANALYZER}]. {describe_analyzers()}."


def _unmatched_help() -> str:
    from corpora.inspection import UNMATCHED_LIMIT

    return (f"Skip judgments of unknown documents or queries with a warning even when more than "
            f"{UNMATCHED_LIMIT:.0%} are unmatched or a query loses every relevant judgment (an error otherwise).")


@dataclass(frozen=True)
class Scoring:
    """How each system is run and scored: ``depth`` results per query (a longer ranking is cut to its
    first ``depth``), ``rel_threshold`` the grade from which a judgment is relevant, ``analyzer`` (None:
    the article's) for the diagnosis's shared words and every spec string's retriever that takes one,
    ``unjudged`` how a document without a judgment counts (:mod:`harness.core.condensed`:
    ``"nonrelevant"``, trec_eval's reading, or ``"condensed"``, Sakai's condensed lists)."""

    depth: int = _option(DEPTH, "Results each retriever returns per query.")
    rel_threshold: int = _option(REL_THRESHOLD, "Binary metrics count grade >= this as relevant.")
    analyzer: str | None = _option(None, _analyzer_help)
    unjudged: str = _option(DEFAULT_UNJUDGED, UNJUDGED_HELP)


@dataclass(frozen=True)
class Statistics:
    """The paired bootstrap interval (``bootstrap_samples`` resamples drawn from ``seed``, at
    ``confidence``; every test runs at alpha = 1 - confidence), the randomisation test (``permutations``
    Monte Carlo sign flips, exact when few queries differ) and Holm's ``family``
    (:data:`harness.core.statistics.FAMILIES`)."""

    bootstrap_samples: int = _option(BOOTSTRAP_SAMPLES, "Resamples of the paired bootstrap interval.")
    seed: int = _option(SEED, "Seed (>= 0) of the bootstrap and of the Monte Carlo randomisation test.")
    confidence: float = _option(CONFIDENCE, "Confidence of the bootstrap interval, between 0.5 and 1; tests run at "
                                            "alpha = 1 - confidence.")
    permutations: int = _option(PERMUTATIONS, _PERMUTATIONS_HELP)
    family: str = _option(FAMILY, _FAMILIES_HELP)


@dataclass(frozen=True)
class Readings:
    """The readings beyond the means: ``fail_rank`` for the diagnosis (a query whose first relevant
    document is missing or below it fails); ``facets`` the query facets to roll up (names, or one
    comma-separated string; ``[]`` none; None every numeric facet and every other with at most 20
    distinct values); risk–coverage reads risk as 1 - ``risk_metric`` (None: the first metric) against
    a confidence read off each run by ``confidence_from`` (:data:`harness.core.risk_coverage.CONFIDENCES`)
    unless the retriever has a ``confidence(queries)`` method; ``retrieval_k`` is the cutoff of the
    metrics card's ``recallAtK``, ``precisionAtK`` and ``hitAtK`` (:mod:`harness.core.retrieval_metrics`)."""

    fail_rank: int = _option(FAIL_RANK, "Diagnose queries whose first relevant document is missing or below this "
                                        "rank.")
    facets: str | Sequence[str] | None = _option(None, _FACETS_HELP)
    risk_metric: str | None = _option(None, "Risk-coverage reads risk as 1 - this metric, one of --metrics "
                                            "[default: the first].")
    confidence_from: str = _option(CONFIDENCE_FROM, _CONFIDENCE_FROM_HELP)
    retrieval_k: int = _option(RETRIEVAL_K, "Cutoff k of the metrics card's recallAtK, precisionAtK and hitAtK, "
                                            "written for every system and query to retrieval_metrics.jsonl (with mrr "
                                            "and ndcgAt10, exponential gain at 10) whatever --metrics says.")


@dataclass(frozen=True)
class Loading:
    """How a dataset given by bundled name or folder is loaded (:func:`corpora.load_dataset`'s
    ``format``, ``split`` and ``allow_unmatched_judgments``; None: its defaults, and the only values
    allowed with a :class:`~corpora.Dataset` already loaded), and ``facets_file``, a side file of
    query facets (query id + one column per facet, :func:`corpora.load_facets_file`) added to the
    dataset's queries whichever way it came."""

    format: str | None = _option(None, "Force the corpus layout instead of detecting it from the folder's files.")
    split: str | None = _option(None, "The split of a corpus with several [default: test].")
    allow_unmatched_judgments: bool | None = _option(None, _unmatched_help)
    facets_file: str | os.PathLike[str] | None = _option(
        None, "A side file of query facets (.csv, .tsv or .jsonl: a query id column, then one column per facet) "
              "added to the corpus's queries.")


@dataclass(frozen=True)
class RunOptions:
    """Where and how the work runs; none of it changes a number. ``cache``: False keeps fitted
    indexes in memory for this call, True reuses them from the user cache folder, or a folder.
    ``timeout``: seconds each retriever's ``fit``, and then its ``search``, may take (None: no limit;
    :mod:`harness.core.deadline`). ``engine``: a name of :data:`harness.engines.ENGINES` (``"local"``;
    ``"dask"``: a local cluster started and stopped by the call) or an :class:`~harness.engines.Engine`
    object, which the caller keeps and closes (a Dask scheduler's address or a number of workers:
    ``harness.engines.DaskEngine(scheduler, workers)``). ``on_loaded`` hears the dataset before the
    first fit."""

    cache: Union[bool, str, os.PathLike[str], IndexCache] = _option(False, "")
    timeout: float | None = _option(None, "Seconds each retriever's fit, and then its search, may take; a step past "
                                          "it stops the run with an error naming the retriever and the step (exit 2, "
                                          "no results folder) [default: no limit].")
    engine: Union[str, Engine] = _option("local", "")
    on_loaded: Callable[[Dataset], None] | None = _option(None, "")


def declared(group: type, name: str) -> tuple[Any, str, str]:
    """The default, help text (a template where it names ``{values}`` declared elsewhere) and flag of
    ``group``'s field ``name`` (the flag: ``--`` and the name with dashes, unless the field says otherwise)."""
    for f in fields(group):
        if f.name == name:
            text = f.metadata["help"]
            return (f.default, text() if callable(text) else text,
                    f.metadata["flag"] or "--" + name.replace("_", "-"))
    raise KeyError(f"{group.__name__} has no option {name!r}")
