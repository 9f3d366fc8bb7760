"""What a comparison found, as plain data: :class:`CompareRecord`, its systems
(:class:`SystemResult`) and :class:`CompareConfig`, the record of the options it was made with.

The surfaces that store or show a comparison (:mod:`harness.store.write`, :mod:`harness.report.text`)
read this data; :class:`harness.comparison.CompareResult`, a layer above them, adds the methods that
call them, so the imports run one way: comparison -> report, store -> record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import pandas as pd

from corpora import DEFAULT_CORPUS, Dataset, Run
from corpora.readers import DEFAULT_SPLIT
from harness.engines.cost import SystemCost
from harness.core.diagnosis import Failure
from harness.core.metrics import Metric
from harness.core.options import Loading, Readings, Scoring, Statistics
from harness.core.statistics import Comparison, describe_settings
from retrievers import Retriever

__all__ = ["DEFAULT_METRICS", "DEFAULT_SYSTEMS", "OPTION_GROUPS", "CompareConfig", "CompareRecord", "SystemResult"]

#: ``bench compare``'s defaults: the article's four systems, and the metrics of a first look.
DEFAULT_SYSTEMS = "bm25,lsa,weighted,rrf"
DEFAULT_METRICS = "ndcg@10,recall@10,mrr,hit@10"


def _loaded_default() -> Loading:
    """How ``bench compare`` loads a collection given by name or folder by default, as recorded."""
    return Loading(split=DEFAULT_SPLIT, allow_unmatched_judgments=False)


@dataclass(frozen=True)
class CompareConfig:
    """The options of one comparison, as recorded in the results manifest: what it compared
    (``corpus``, ``systems``, ``metrics``, ``baseline``), the option groups of
    :mod:`harness.core.options` it ran with, whole, and where its fitted indexes were kept
    (``cache_dir``; ``cache`` False: nowhere on disk). Not the library's input:
    :func:`harness.compare` takes the groups and records them as resolved (``readings.facets`` as
    names, ``readings.risk_metric`` the metric's name; ``loading.split`` and
    ``loading.allow_unmatched_judgments`` as the dataset was loaded, None with ``loading.format``
    when it was given as a :class:`~corpora.Dataset` already loaded).

    :meth:`flat` gives every option by its own name (the manifest's ``configuration`` hash is
    computed from it, less where the data and the cache live); :meth:`from_options` reads such
    names back into the groups (an experiment file's keys, ``bench compare``'s options)."""

    corpus: str = DEFAULT_CORPUS
    systems: Sequence[str] | str = DEFAULT_SYSTEMS
    metrics: Sequence[str] | str = DEFAULT_METRICS
    baseline: str | None = None
    scoring: Scoring = field(default_factory=Scoring)
    statistics: Statistics = field(default_factory=Statistics)
    readings: Readings = field(default_factory=Readings)
    loading: Loading = field(default_factory=_loaded_default)
    cache_dir: str | None = None  # None: $RETBENCH_CACHE_DIR, else the user cache directory
    cache: bool = True  # False (--no-cache): fitted indexes are neither read from nor written to disk

    def groups(self) -> dict[str, Scoring | Statistics | Readings | Loading]:
        """The option groups by :func:`harness.compare`'s parameter names (all but ``run``)."""
        return {name: getattr(self, name) for name in OPTION_GROUPS}

    def flat(self) -> dict[str, object]:
        """Every option by its own name: ``corpus``, ``systems``, ``metrics``, ``baseline``, each
        group's fields, ``cache_dir`` and ``cache``."""
        options: dict[str, object] = {"corpus": self.corpus, "systems": self.systems, "metrics": self.metrics,
                                      "baseline": self.baseline}
        for group in self.groups().values():
            options.update((f.name, getattr(group, f.name)) for f in fields(group))
        return {**options, "cache_dir": self.cache_dir, "cache": self.cache}

    @classmethod
    def from_options(cls, options: Mapping[str, object]) -> CompareConfig:
        """The configuration of options given by their own names (:meth:`flat`'s); an option left
        out keeps its default, an unknown name is a ``TypeError``."""
        given = dict(options)
        default = cls()
        grouped = {}
        for name, group in default.groups().items():
            own = {f.name for f in fields(group)}
            grouped[name] = replace(group, **{key: given.pop(key) for key in list(given) if key in own})
        return cls(**given, **grouped)


#: The option groups a :class:`CompareConfig` holds, by :func:`harness.compare`'s parameter names.
OPTION_GROUPS = ("scoring", "statistics", "readings", "loading")


@dataclass
class SystemResult:
    """One system of a comparison: its label, the fitted retriever, its run and its timings, and
    what it cost (:class:`~harness.engines.cost.SystemCost`; None: not measured)."""

    label: str
    retriever: Retriever
    run: Run
    fit_seconds: float
    search_seconds: float
    cost: SystemCost | None = None


@dataclass
class CompareRecord:
    """What :func:`harness.compare` found (the data of a :class:`~harness.comparison.CompareResult`):
    per-query and mean scores, paired comparisons, the diagnosis of failed queries, and everything
    needed to store and re-score it.

    ``per_query`` has the columns ``system``, ``query_id``, one per metric and
    ``first_relevant_rank``; ``summary`` the columns ``system`` and one per metric (exactly rounded
    means over ``query_ids``). ``comparisons`` are :class:`~harness.core.statistics.Comparison`,
    ``failures`` :class:`~harness.core.diagnosis.Failure`.

    The readings beyond the means, each a DataFrame with the columns of its file: ``power``
    (``system_a``, ``system_b``, ``metric`` and :data:`harness.core.power.POWER_COLUMNS`, one row per
    comparison, in order; joined to the comparisons in ``comparisons.csv``), and ``tables``: reading
    name -> its table, for each registered reading with a compute step (:mod:`harness.readings`: the
    leaderboard, the facet rollup, risk–coverage, the metrics card's rollups and its per-query values,
    and the near-duplicate pairs behind the ``duplicate versions`` failures), each also an attribute
    of the record by its name (``record.leaderboard``, ``record.duplicates``, or :meth:`table`).
    """

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
    power: pd.DataFrame
    tables: dict[str, pd.DataFrame]  # reading name -> its table, from the registry's compute steps
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the manifest: worth knowing, not worth a warning
    #: where the work ran (:meth:`harness.engines.EngineRecord.describe`): the manifest's ``engine``
    engine: dict[str, Any] = field(default_factory=lambda: {"name": "local"})
    #: each step's wall time, in the order they ended (:mod:`harness.engines.steps`): the manifest's ``steps``
    steps: list[dict[str, Any]] = field(default_factory=list)

    def table(self, name: str) -> pd.DataFrame:
        """The table of the registered reading ``name`` that the comparison computed (a ``KeyError``
        names those it has)."""
        if name not in self.tables:
            raise KeyError(f"no computed reading {name!r}; this comparison has {', '.join(self.tables) or 'none'}")
        return self.tables[name]

    def __getattr__(self, name: str) -> pd.DataFrame:
        # a computed reading by its name (result.<name>); only called when no attribute of that name exists
        tables = self.__dict__.get("tables")
        if tables is not None and name in tables:
            return tables[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def statistics_record(self) -> dict[str, object]:
        """The manifest's ``statistics``: bootstrap, which randomisation test, flips, stream, alpha,
        Holm family, and the pairs compared (JSON-ready)."""
        config = self.config
        return {**describe_settings(config.statistics, self.comparisons),
                "pairs": "each system vs the baseline" if config.baseline else "all pairs",
                "baseline": config.baseline}
