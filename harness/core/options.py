"""The options of a comparison, declared once: small frozen groups with their defaults, help and constraints.

:func:`harness.compare` takes the data, the systems, the metrics and these groups::

    from harness import compare
    from harness.core.options import Loading, Scoring, Statistics

    compare(["bm25", "lsa"], "cranfield", ["ndcg@10"], baseline="bm25",
            statistics=Statistics(bootstrap_samples=1000, seed=1), scoring=Scoring(depth=100),
            loading=Loading(split="dev"))

:func:`harness.compare_suite` takes them all too; :func:`harness.tune` all but ``readings``, and
:func:`harness.gate` (with :func:`harness.suite.gate.gate_suites`) its ``statistics``. An entry point
honours every field of every group it takes, or refuses a field it cannot honour in one line
(``tune`` a ``permutations`` or ``family`` other than the default, ``gate`` a ``family``).

* :class:`Scoring`: how deep each system searches and how judgments and texts are read.
* :class:`Statistics`: the paired bootstrap, the randomisation test and Holm's family.
* :class:`Readings`: the readings beyond the means (diagnosis, facets, risk–coverage, the metrics card).
* :class:`Loading`: how a dataset given by name or folder is loaded (and a facets side file).
* :class:`RunOptions`: where and how the work runs (cache, time limit, engine, a hook on the loaded data).

Each field is declared with its default, its ``help`` (a string; a ``{name}`` in it is a value
declared elsewhere, filled in by the CLI), its ``flag`` where it differs from the field's name, and
its constraint, beside it (as scikit-learn declares ``_parameter_constraints`` next to the
parameters): a group checks every field when it is made (``__post_init__``), so a group that exists
holds values in their domains, and a mistake is a :class:`~corpora.RetbenchError` naming the field
(```seed` must be an int >= 0``). What a field must be with respect to other arguments (``depth``
deep enough for every metric's cutoff, ``risk_metric`` one of the metrics) is checked by the entry
point that has them. ``bench compare``, ``bench tune`` and ``bench gate`` build their click options
from these declarations (:mod:`harness.cli.declared`), so a default or a help text is written here
only; the CLI prints the flag (``--bootstrap-samples``) where the library names the field.

Of the harness this module imports only the unjudged rule and the time limit's check (neither imports
it), so every other module may take its defaults from it; a check that reads a registry declared
elsewhere (the analyzers, the corpus formats, the risk–coverage confidences, the engines) imports it
when it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Union

from corpora import RetbenchError, UnknownNameError
from corpora.readers import SPLIT_HELP
from harness.core.condensed import DEFAULT_UNJUDGED, UNJUDGED_HELP, check_unjudged
from harness.engines.deadline import check_timeout

if TYPE_CHECKING:
    from corpora import Dataset
    from harness.engines import Engine
    from retrievers.cache import IndexCache

__all__ = ["ALPHA", "BOOTSTRAP_SAMPLES", "CONFIDENCE", "CONFIDENCES", "CONFIDENCE_FROM", "DEPTH", "FAIL_RANK",
           "FACET_MAX_VALUES", "FACET_MIN_QUERIES", "FAMILIES", "FAMILY", "LATENCY_QUERIES", "LATENCY_ROUNDS", "OWN_CONFIDENCE", "PERMUTATIONS", "REL_THRESHOLD", "RETRIEVAL_K", "SEED", "TUKEY", "Loading", "Readings", "RunOptions", "Scoring",
           "Statistics", "alpha_of", "check_retrieval_k", "declared", "level_text"]

#: The defaults, one declaration each (the dataclasses below, the CLI and every function with such
#: a parameter take them from here).
DEPTH = 1000
REL_THRESHOLD = 1
BOOTSTRAP_SAMPLES = 5000
SEED = 0
CONFIDENCE = 0.95
PERMUTATIONS = 10_000
FAMILY = "metric"
FAIL_RANK = 3
CONFIDENCE_FROM = "score"
#: A system's confidence per query, as risk–coverage reads it off a run (``confidence_from``; the
#: reading, :func:`harness.readings.risk_coverage.query_confidence`, computes it): name -> what it is.
CONFIDENCES = {
    "score": "the top result's score",
    "margin": "the top result's score minus the second's",
}
#: Risk–coverage's ``confidence`` when a retriever's own ``confidence(queries)`` gave it.
OWN_CONFIDENCE = "retriever"
RETRIEVAL_K = 10
#: The facet rollup's default choice and its intervals (:mod:`harness.readings.facets`): a non-numeric
#: facet with more distinct values than this is left out unless named ...
FACET_MAX_VALUES = 20
#: ... and a cell of fewer queries than this gets no interval.
FACET_MIN_QUERIES = 5
LATENCY_QUERIES = 200
LATENCY_ROUNDS = 3

#: Multiple-comparison families: which comparisons are adjusted together, and how
#: (:func:`harness.core.statistics.adjust_in_families`): Holm's step-down within one metric or across the run,
#: or the randomised Tukey HSD over the systems of one metric (:mod:`harness.core.tukey`).
FAMILIES = {
    "metric": "the comparisons of one metric",
    "all": "every comparison of the run",
    "tukey": "the comparisons of one metric, adjusted at once by the randomised Tukey HSD over their systems "
             "(the largest difference of means when each query's scores are permuted across the systems) "
             "instead of Holm",
}
#: The family that is not Holm's: its adjusted p is the randomised Tukey HSD's.
TUKEY = "tukey"


def alpha_of(confidence: float) -> float:
    """The level every test runs at: ``1 - confidence``, the complement of the interval's confidence."""
    return 1.0 - confidence


#: The tests' level at the default confidence (0.05, as ``1 - 0.95`` computes it).
ALPHA = alpha_of(CONFIDENCE)


def level_text(confidence: float) -> str:
    """An interval's level as the reports write it: ``0.95`` -> ``95%``."""
    return f"{confidence * 100:g}%"

#: A field's constraint: (its value, its name, its default) -> None, or a RetbenchError naming it.
Check = Callable[[Any, str, Any], None]


def _option(default: Any, help: str | Callable[[], str], check: Check | None = None, flag: str | None = None) -> Any:
    return field(default=default, metadata={"help": help, "flag": flag, "check": check})


def _check_fields(group: object) -> None:
    """Every field of ``group`` against the constraint declared beside it."""
    for declaration in fields(group):  # type: ignore[arg-type]
        check = declaration.metadata["check"]
        if check is not None:
            check(getattr(group, declaration.name), declaration.name, declaration.default)


# ----- the constraints: what a field must be, and the message when it is not -----------------------


def _count(value: object, name: str, default: object) -> None:
    """An int >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RetbenchError(f"`{name}` must be an int >= 1. Got {value!r} instead. Fix: pass e.g. `{name}={default}`")


def _grade(value: object, name: str, default: object) -> None:
    """An int >= 0: trec_eval -l with a negative level would make unjudged documents relevant; here a
    negative grade is judged and never relevant, so a negative threshold cannot mean what it says."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RetbenchError(f"`{name}` must be an int >= 0 (a grade). Got {value!r} instead. "
                            f"Fix: pass e.g. `{name}={default}` (negative grades are judged, never relevant)")


def _seed(value: object, name: str, default: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RetbenchError(f"`{name}` must be an int >= 0 (numpy seeds are non-negative). Got {value!r} "
                            f"instead. Fix: pass e.g. `{name}={default}`")


def _confidence(value: object, name: str, default: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.5 < value < 1.0:
        raise RetbenchError(f"`{name}` must be a number strictly between 0.5 and 1. Got {value!r} instead. "
                            f"Fix: pass e.g. `{name}={default}` (a {default:.0%} interval, tests at alpha = "
                            f"{alpha_of(default):g})")


def _family(value: object, name: str, default: object) -> None:
    if not isinstance(value, str) or value not in FAMILIES:
        raise UnknownNameError(f"multiple-comparison family (`{name}`)", str(value), list(FAMILIES))


def _unjudged(value: object, name: str, default: object) -> None:
    check_unjudged(value)


def _analyzer(value: object, name: str, default: object) -> None:
    if value is not None:
        from corpora import get_analyzer

        get_analyzer(value)  # type: ignore[arg-type]  # an unknown name lists the registered ones


def _facet_names(value: object, name: str, default: object) -> None:
    names = isinstance(value, Sequence) and all(isinstance(one, str) for one in value)
    if value is not None and not isinstance(value, str) and not names:
        raise RetbenchError(f"facets must be names (a list of strings or one comma-separated string). Got "
                            f"{value!r} instead. Fix: pass e.g. facets=['type', 'popularity']")


def _metric_name(value: object, name: str, default: object) -> None:
    from harness.core.metrics import Metric

    if value is not None and not isinstance(value, (str, Metric)):
        raise RetbenchError(f"`{name}` must be a metric name. Got {value!r} instead. Fix: name one of the metrics, "
                            f"e.g. `{name}=ndcg@10`")


def _confidence_from(value: object, name: str, default: object) -> None:
    if not isinstance(value, str) or value not in CONFIDENCES:
        raise UnknownNameError(f"confidence (`{name}`)", str(value), list(CONFIDENCES))


def check_retrieval_k(retrieval_k: object) -> int:
    """``retrieval_k`` as an int >= 1, or a :class:`~harness.errors.RetbenchError`."""
    if isinstance(retrieval_k, bool) or not isinstance(retrieval_k, int) or retrieval_k < 1:
        raise RetbenchError(f"`retrieval_k` must be an int >= 1 (the cutoff of recallAtK, precisionAtK and hitAtK). "
                            f"Got {retrieval_k!r} instead. Fix: pass e.g. `retrieval_k={RETRIEVAL_K}` "
                            "(the card's default)")
    return retrieval_k


def _retrieval_k(value: object, name: str, default: object) -> None:
    check_retrieval_k(value)


def _corpus_format(value: object, name: str, default: object) -> None:
    from corpora.loading import FORMATS, format_names

    if value is not None and (not isinstance(value, str) or value not in FORMATS):
        raise UnknownNameError("corpus format", str(value), format_names())


def _text_or_none(value: object, name: str, default: object) -> None:
    if value is not None and not isinstance(value, str):
        raise RetbenchError(f"`{name}` must be a string or None. Got {value!r} instead. Fix: pass e.g. `{name}=test`, "
                            "or leave it out")


def _flag_or_none(value: object, name: str, default: object) -> None:
    if value is not None and not isinstance(value, bool):
        raise RetbenchError(f"`{name}` must be True, False or None. Got {value!r} instead. Fix: pass `{name}=True` "
                            "or leave it out")


def _facets_file(value: object, name: str, default: object) -> None:
    # a mapping {facet: {query id: value}} is tune's (harness.tune); compare reads a file only
    if value is not None and not isinstance(value, (str, os.PathLike, Mapping)):
        raise RetbenchError(f"facets_file must be a path. Got {value!r} instead. Fix: pass the file's path")


def _cache(value: object, name: str, default: object) -> None:
    from retrievers.cache import IndexCache

    if not isinstance(value, (bool, str, os.PathLike, IndexCache)) and value is not None:
        raise RetbenchError(f"cache is a {type(value).__name__}, not True, False or a folder. Fix: pass cache=True "
                            "for the user cache folder, a folder, or False to keep fitted indexes in memory only")


def _timeout(value: object, name: str, default: object) -> None:
    check_timeout(value)


def _engine(value: object, name: str, default: object) -> None:
    from harness.engines import ENGINES, Engine

    if not isinstance(value, Engine) and (not isinstance(value, str) or value not in ENGINES):
        raise UnknownNameError("engine", str(value), list(ENGINES))


def _count_or_zero(value: object, name: str, default: object) -> None:
    """An int >= 0 (0: off)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RetbenchError(f"`{name}` must be an int >= 0 (0 turns it off). Got {value!r} instead. "
                            f"Fix: pass e.g. `{name}={default}`")


def _hook(value: object, name: str, default: object) -> None:
    if value is not None and not callable(value):
        raise RetbenchError(f"`{name}` must be a function of the loaded dataset, or None. Got {value!r} instead. "
                            f"Fix: pass e.g. `{name}=print`")


# ----- the groups ---------------------------------------------------------------------------------

#: Help texts that name values declared where they are used fill these from
#: :func:`harness.cli.declared.help_values` (an import from here would be a cycle).
_FAMILIES_HELP = "Multiple-comparison family (Holm's, unless tukey): {families}."
_PERMUTATIONS_HELP = ("Random sign flips of the randomisation test when more than {exact_up_to} queries differ "
                      "(up to that, all sign patterns are enumerated exactly); with --family tukey, also the Tukey "
                      "HSD's permutations.")
_FACETS_HELP = ("Comma-separated query facets to roll up into facets.csv ('' for none) [default: every numeric "
                f"facet, in quantile buckets, and every other with at most {FACET_MAX_VALUES} values]; a cell of "
                f"fewer than {FACET_MIN_QUERIES} queries gets no interval.")
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
    ``"nonrelevant"``, trec_eval's reading, or ``"condensed"``, Sakai's condensed lists). Checked when
    made: ``depth`` an int >= 1, ``rel_threshold`` an int >= 0, ``analyzer`` None or a registered
    name, ``unjudged`` a reading."""

    depth: int = _option(DEPTH, "Results each retriever returns per query.", _count)
    rel_threshold: int = _option(REL_THRESHOLD, "Binary metrics count grade >= this as relevant.", _grade)
    analyzer: str | None = _option(None, _analyzer_help, _analyzer)
    unjudged: str = _option(DEFAULT_UNJUDGED, UNJUDGED_HELP, _unjudged)

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True)
class Statistics:
    """The paired bootstrap interval (``bootstrap_samples`` resamples drawn from ``seed``, at
    ``confidence``; every test runs at alpha = 1 - confidence, :func:`alpha_of`), the randomisation
    test (``permutations`` Monte Carlo sign flips, exact when few queries differ; as many permutations
    for the Tukey HSD) and the multiple-comparison ``family`` (:data:`FAMILIES`: Holm's within a metric
    or across the run, or ``"tukey"``, the randomised Tukey HSD within a metric). Checked when made:
    counts >= 1, ``seed`` >= 0, ``confidence`` strictly between 0.5 and 1, ``family`` a name of
    :data:`FAMILIES`."""

    bootstrap_samples: int = _option(BOOTSTRAP_SAMPLES, "Resamples of the paired bootstrap interval.", _count)
    seed: int = _option(SEED, "Seed (>= 0) of the bootstrap and of the Monte Carlo randomisation test.", _seed)
    confidence: float = _option(CONFIDENCE, "Confidence of the bootstrap interval, between 0.5 and 1; tests run at "
                                            "alpha = 1 - confidence.", _confidence)
    permutations: int = _option(PERMUTATIONS, _PERMUTATIONS_HELP, _count)
    family: str = _option(FAMILY, _FAMILIES_HELP, _family)

    def __post_init__(self) -> None:
        _check_fields(self)

    @property
    def alpha(self) -> float:
        """The level every test runs at (:func:`alpha_of` ``confidence``)."""
        return alpha_of(self.confidence)


@dataclass(frozen=True)
class Readings:
    """The readings beyond the means: ``fail_rank`` for the diagnosis (a query whose first relevant
    document is missing or below it fails); ``facets`` the query facets to roll up (names, or one
    comma-separated string; ``[]`` none; None every numeric facet and every other with at most 20
    distinct values); risk–coverage reads risk as 1 - ``risk_metric`` (None: the first metric; it
    must be one of the metrics) against a confidence read off each run by ``confidence_from``
    (:data:`CONFIDENCES`) unless the retriever has a ``confidence(queries)``
    method; ``retrieval_k`` is the cutoff of the metrics card's ``recallAtK``, ``precisionAtK`` and
    ``hitAtK`` (:mod:`harness.readings.retrieval_metrics`). Checked when made: ``fail_rank`` and
    ``retrieval_k`` ints >= 1, ``facets`` names, ``risk_metric`` a name, ``confidence_from`` a key."""

    fail_rank: int = _option(FAIL_RANK, "Diagnose queries whose first relevant document is missing or below this "
                                        "rank.", _count)
    facets: str | Sequence[str] | None = _option(None, _FACETS_HELP, _facet_names)
    risk_metric: str | None = _option(None, "Risk-coverage reads risk as 1 - this metric, one of --metrics "
                                            "[default: the first].", _metric_name)
    confidence_from: str = _option(CONFIDENCE_FROM, _CONFIDENCE_FROM_HELP, _confidence_from)
    retrieval_k: int = _option(RETRIEVAL_K, "Cutoff k of the metrics card's recallAtK, precisionAtK and hitAtK, "
                                            "written for every system and query to retrieval_metrics.jsonl (with mrr "
                                            "and ndcgAt10, exponential gain at 10) whatever --metrics says.",
                               _retrieval_k)

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True)
class Loading:
    """How a dataset given by bundled name or folder is loaded (:func:`corpora.load_dataset`'s
    ``format``, ``split`` and ``allow_unmatched_judgments``; None: its defaults, and the only values
    allowed with a :class:`~corpora.Dataset` already loaded), and ``facets_file``, a side file of
    query facets (query id + one column per facet, :func:`corpora.load_facets_file`) added to the
    dataset's queries whichever way it came (:func:`harness.tune` also takes ``{facet: {query id:
    value}}``). Checked when made: ``format`` None or a corpus format, the others of their types."""

    format: str | None = _option(None, "Force the corpus layout instead of detecting it from the folder's files.",
                                 _corpus_format)
    split: str | None = _option(None, SPLIT_HELP, _text_or_none)
    allow_unmatched_judgments: bool | None = _option(None, _unmatched_help, _flag_or_none)
    facets_file: str | os.PathLike[str] | Mapping[str, Mapping[str, object]] | None = _option(
        None, "A side file of query facets (.csv, .tsv or .jsonl: a query id column, then one column per facet) "
              "added to the corpus's queries.", _facets_file)

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True)
class RunOptions:
    """Where and how the work runs; none of it changes a number. ``cache``: False keeps fitted
    indexes in memory for this call, True reuses them from the user cache folder, or a folder.
    ``timeout``: seconds each retriever's ``fit``, and then its ``search``, may take (None: no limit;
    :mod:`harness.engines.deadline`). ``engine``: a name of :data:`harness.engines.ENGINES` (``"local"``;
    ``"dask"``: a local cluster started and stopped by the call) or an :class:`~harness.engines.Engine`
    object, which the caller keeps and closes (a Dask scheduler's address or a number of workers:
    ``harness.engines.DaskEngine(scheduler, workers)``). ``on_loaded`` hears the dataset before the
    first fit. ``latency_queries`` (0: off) and ``latency_rounds``: how each system's query latency is
    measured for the cost reading (:mod:`harness.engines.cost`); only ``efficiency.csv`` and
    ``latency_comparisons.csv`` hold what they measure. Checked when made: each of its kind,
    ``timeout`` None or a finite number > 0, ``latency_queries`` an int >= 0, ``latency_rounds`` >= 1."""

    cache: Union[bool, str, os.PathLike[str], IndexCache] = _option(False, "", _cache)
    timeout: float | None = _option(None, "Seconds each retriever's fit, and then its search, may take; a step past "
                                          "it stops the run with an error naming the retriever and the step (exit 2, "
                                          "no results folder) [default: no limit].", _timeout)
    engine: Union[str, Engine] = _option("local", "", _engine)
    on_loaded: Callable[[Dataset], None] | None = _option(None, "", _hook)
    latency_queries: int = _option(LATENCY_QUERIES, "Queries whose latency is measured, each searched alone after a "
                                                    "warm-up, in every round (a seeded sample of the evaluated "
                                                    "queries; 0: no latency measured). Timings go to efficiency.csv "
                                                    "only (docs/cost.md).", _count_or_zero)
    latency_rounds: int = _option(LATENCY_ROUNDS, "Rounds of the latency measurement: each sampled query is searched "
                                                  "once per round; the rounds' spread says how noisy the machine was.",
                                  _count)

    def __post_init__(self) -> None:
        _check_fields(self)


def declared(group: type, name: str) -> tuple[Any, str, str]:
    """The default, help text (a template where it names ``{values}`` declared elsewhere) and flag of
    ``group``'s field ``name`` (the flag: ``--`` and the name with dashes, unless the field says otherwise)."""
    for f in fields(group):
        if f.name == name:
            text = f.metadata["help"]
            return (f.default, text() if callable(text) else text,
                    f.metadata["flag"] or "--" + name.replace("_", "-"))
    raise KeyError(f"{group.__name__} has no option {name!r}")
