"""What a comparison reads beyond its means: the paired comparisons, effect sizes and power, and
every reading of the registry with a compute step, gathered for
:func:`harness.compare` from its per-query values and runs as its configuration's option groups say
(:func:`read_comparison`). Each reading is computed by its own module (:mod:`harness.core.statistics`,
:mod:`harness.core.power`, and the ``compute`` of each registered reading, :data:`Compute`); this one decides what they are given:

* the comparisons are of the pairs with the ``baseline`` when there is one, else of every pair;
* a registered reading's compute step is given the comparison as far as it is computed
  (:class:`ReadingInputs`: the configuration, the systems with their runs, the queries, the per-query
  values and the comparisons).

The registry (:data:`READINGS`) declares every reading a results folder stores once: its name, its
CSV file, the columns read back as text or integers, what the rows hold, how it is computed (or the
table it is from a finished comparison), its record in the manifest and its section of each report.
The writer (:mod:`harness.store.write`), the folder reader (:mod:`harness.store.read`, whose
:data:`~harness.store.read.TABLES` it is), the reports and the server iterate over it, and the
manifest hashes each file it lists. A reading is one module that calls :func:`register`
(docs/adding-a-reading.md); the built-in ones are such modules too (:mod:`harness.readings`), which
the layers that compute, store or show a comparison import, so the registry is whole wherever a
comparison is made or read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from corpora import Dataset, Qrels, Queries
from corpora.progress import Progress
from harness.engines.parallel import ChunkMapper
from harness.core.diagnosis import FailureCheck
from harness.core.power import POWER_COLUMNS, power_table
from harness.engines.steps import StepClock
from harness.core.statistics import COMPARISON_COLUMNS, Comparison, compare_systems

if TYPE_CHECKING:
    from harness.core.options import Statistics
    from harness.core.record import CompareConfig, CompareRecord, SystemResult

__all__ = ["DIAGNOSIS_COLUMNS", "PER_QUERY", "READINGS", "RECORD_IN", "Compute", "FailureCheck", "Reading", "ReadingInputs",
           "Readings", "Record", "Render", "RollUp", "ServeResults", "ServeView", "check_readings", "failure_checks",
           "flagged_queries", "identified_files", "manifest_records", "read_comparison", "reading_frames", "register",
           "rendered", "resampled_columns", "served", "served_results", "SuiteInputs", "SuiteStep", "suite_readings",
           "suite_tables"]


@dataclass(frozen=True)
class Readings:
    """The readings of one comparison; see :class:`harness.comparison.CompareResult` for each.
    ``tables``: reading name -> its table, from the compute step of each registered reading that has one;
    ``steps``: the wall time of each step that computed them (:class:`~harness.engines.steps.StepClock`)."""

    comparisons: list[Comparison]
    power: pd.DataFrame
    tables: dict[str, pd.DataFrame]
    steps: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ReadingInputs:
    """What a registered reading's compute step (:data:`Compute`) is given: the comparison as far as
    it is computed. ``config``: its configuration (the option groups); ``systems``: each system's
    label, retriever and run; ``queries``: the evaluated queries, in evaluation order, with their
    facets; ``per_query``: their values (``system``, ``query_id``, one column per metric of
    ``config.metrics``); ``comparisons``: the paired comparisons; ``progress``: where a long step
    reports (``progress.task(name)``); ``mapper``: where chunks of work run (None: here);
    ``qrels``: the judgments (what a reading that scores the runs itself reads, as the metrics card
    does; None only for inputs made by hand without them); ``dataset``: the collection compared
    (its corpus, its queries the evaluated ones, its judgments; None only for inputs made by hand),
    for a step that reads the documents' texts (``dataset.corpus``, whose ``has_texts`` says
    whether they are known); ``tables``: reading name -> table of the readings computed before it,
    in registry order (what a rollup of another reading's per-query table reads, :class:`RollUp`)."""

    config: CompareConfig
    systems: Sequence[SystemResult]
    queries: Queries
    per_query: pd.DataFrame
    comparisons: list[Comparison]
    progress: Progress
    mapper: ChunkMapper | None = None
    qrels: Qrels | None = None
    dataset: Dataset | None = None
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)


def read_comparison(config: CompareConfig, systems: Sequence[SystemResult], dataset: Dataset,
                    per_query: pd.DataFrame, *, progress: Progress | None = None,
                    mapper: ChunkMapper | None = None) -> Readings:
    """Every reading of one comparison (see the module docstring for what each is given), as
    ``config``'s groups say: its ``statistics`` (the resamples, seed, confidence, permutations and
    Holm family of the comparisons and of every interval), its ``readings`` (what each registered
    reading's compute step reads of it: the facets, the risk metric, the confidence) and its
    ``baseline`` (the pairs compared).

    ``systems``: each system's label, retriever and run; ``dataset``: the collection, its queries
    the evaluated ones, in evaluation order, with their facets (what the retrievers searched), and
    its judgments; ``per_query``: their values
    (``system``, ``query_id``, one column per metric of ``config.metrics``). ``mapper``: where the
    chunks of the bootstrap run (None: here). The result's ``steps`` time the bootstrap, the power
    table and each reading's compute step (:mod:`harness.engines.steps`).
    """
    clock = StepClock()
    tasks = progress if progress is not None else Progress()
    statistics = config.statistics
    names, labels = list(config.metrics), [s.label for s in systems]
    if config.baseline is not None:
        pairs = [(label, config.baseline) for label in labels if label != config.baseline]
    else:
        pairs = list(combinations(labels, 2))
    values = {label: {name: per_query.loc[per_query.system == label, name].to_numpy(dtype=np.float64)
                      for name in names} for label in labels}
    with tasks.task("bootstrap", statistics.bootstrap_samples) as task, clock.timed("bootstrap"):
        comparisons = compare_systems(values, pairs, names, statistics.bootstrap_samples, statistics.seed,
                                      statistics.confidence, task.update, statistics.permutations,
                                      statistics.family, mapper)
    with clock.timed("power"):
        power = power_table(per_query, comparisons)
    tables: dict[str, pd.DataFrame] = {}  # filled in registry order: each step sees the earlier ones' tables
    inputs = ReadingInputs(config, systems, dataset.queries, per_query, comparisons, tasks, mapper, dataset.qrels,
                           dataset, tables)
    for reading in READINGS.values():  # in registry order (each reading's ``order``)
        if reading.compute is not None:
            with clock.timed(f"reading {reading.name}"):
                tables.update(reading.compute(inputs))
    return Readings(comparisons, power, tables, clock.steps)


# ----- the registry: every reading a results folder stores, declared once ------------------------

#: Renders one reading's section of a report: (its frame, the report's view) -> text; the view is
#: :class:`harness.report.view.ReportView` for every format (``text``, ``html``, ``md``, ``latex``).
Render = Callable[[pd.DataFrame, Any], str]
#: A reading's compute step: what the comparison has computed so far -> reading name -> its table,
#: for the reading and any other registered reading it computes with it (risk–coverage's curve and
#: summary come from one pass). The tables are the record's (``result.table(name)``) and the files'.
Compute = Callable[[ReadingInputs], Mapping[str, pd.DataFrame]]
#: A reading's entries in ``manifest.json`` (how it was made): finished comparison -> key -> JSON value.
Record = Callable[["CompareRecord"], Mapping[str, Any]]


@dataclass(frozen=True)
class ServeResults:
    """A reading's per-result objects in ``bench serve`` (``/results`` and the dashboard's per-query
    table), for a reading that stores one object per (system, query), as the metrics card does.

    ``items``: (results folder, ``annotate``) -> the objects (JSON-ready, keys camelCase, each with
    ``system``, ``queryId`` and ``facets``, query facet -> cell, which ``/results`` filters by), in
    the order served; ``annotate(system, query id)`` gives the run's own entries for one result
    (``firstRelevantRank`` and ``diagnosis``), which the reading places among its entries;
    ``model``: () -> the pydantic model of one object; ``columns``: the per-query table's number
    columns, in order; ``cells``: an object -> its value of each column."""

    items: Callable[[Any, Callable[[str, str], Mapping[str, Any]]], list[dict[str, Any]]] = field(repr=False)
    model: Callable[[], type] = field(repr=False)
    columns: tuple[str, ...] = ()
    cells: Callable[[Mapping[str, Any]], Mapping[str, Any]] = field(default=lambda item: {}, repr=False)


@dataclass(frozen=True)
class ServeView:
    """A reading's part of ``bench serve``: its entries in each system of ``/metrics``
    (:mod:`harness.serve.store`), their schema (:mod:`harness.serve.schema`) and its section of a
    run's dashboard page (:mod:`harness.serve.dashboard`).

    ``key``: the entry's key (camelCase, as every key of the API), or empty when ``value`` gives
    several entries (a mapping whose keys join the system's own); ``value``: (results folder, system
    label) -> the entry, or None when the system has none (``value`` None: the reading has no
    entry, only a dashboard section); the server makes it JSON (keys camelCase,
    NaN null, infinities ``"inf"``/``"-inf"``, numpy scalars Python ones); ``model``: () -> the
    pydantic model of the entry (of the entries, field by field, when ``key`` is empty; called where
    the server's schema is built, so pydantic loads with the server only); ``page``: (the ``/metrics``
    answer, the dashboard's number format, a chart maker) -> the dashboard's section (HTML; empty for
    none); the chart maker takes a function that draws an SVG (:mod:`harness.report.plots`) and gives
    it inline, or says how to install matplotlib.

    ``run``: results folder -> the run's entries of ``/metrics`` beside ``systems`` (JSON as given;
    a folder without what it needs raises :class:`~harness.errors.InputFileError`), and ``run_model``
    their pydantic model, field by field; ``listing``: the manifest -> the run's entries in the list
    of runs (``/runs``), and ``listing_model`` their model; ``results``: its per-result objects
    (:class:`ServeResults`), or None; ``describe``: its words in ``/metrics``' summary (default its
    heading); ``order``: where its entries and its dashboard section stand among the served
    readings' (default the reading's ``order``); ``page_order``: where its dashboard section stands,
    when not where its entries do (default ``order``)."""

    key: str
    value: Callable[[Any, str], Any] | None = field(default=None, repr=False, compare=False)
    model: Callable[[], type] | None = field(default=None, repr=False, compare=False)
    page: Callable[[Mapping[str, Any], Callable[[Any], str], Callable[[Callable[[], str]], str]], str] | None = \
        field(default=None, repr=False, compare=False)
    run: Callable[[Any], Mapping[str, Any]] | None = field(default=None, repr=False, compare=False)
    run_model: Callable[[], type] | None = field(default=None, repr=False, compare=False)
    listing: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = field(default=None, repr=False, compare=False)
    listing_model: Callable[[], type] | None = field(default=None, repr=False, compare=False)
    results: ServeResults | None = field(default=None, repr=False, compare=False)
    describe: str = ""
    order: float | None = None
    page_order: float | None = None


@dataclass(frozen=True)
class SuiteInputs:
    """What a reading's suite step (:class:`SuiteStep`) is given: the macro readings of a suite (several
    collections, each weighing the same: :mod:`harness.suite.statistics`) as far as they are computed.

    ``systems`` and ``metrics``: in the suite's order; ``means``: metric -> each system's macro mean
    (the mean of the collections' means), in ``systems`` order; ``resampled``: metric -> (resamples x
    systems) macro means over the bootstrap resamples stratified by collection, in resample order
    (the resamples of the macro comparisons' intervals); ``comparisons``: the macro comparisons;
    ``statistics``: the settings (resamples, seed, confidence, family); ``collections``: what the
    suite keeps of each collection (:class:`harness.suite.run.SuiteCollection`: its name, results
    folder, summary, per-query values and comparisons; empty when the statistics are computed
    without them), so a reading can read its per-collection table from each results folder."""

    systems: Sequence[str]
    metrics: Sequence[str]
    means: Mapping[str, np.ndarray]
    resampled: Mapping[str, np.ndarray]
    comparisons: Sequence[Comparison]
    statistics: Statistics
    collections: Sequence[Any] = ()


@dataclass(frozen=True)
class SuiteStep:
    """A reading's part of a suite (``bench compare --corpus A --corpus B``): its macro table, computed
    from the collections' readings, stored in the suite folder and shown in the suite's reports
    (:mod:`harness.suite`) and by ``bench serve``.

    ``file``: its CSV file in the suite folder; ``compute``: :class:`SuiteInputs` -> its table (the
    suite's ``table(name)`` and attribute, under the reading's name); ``record``: key -> how it was
    made, in words, entries of the suite manifest's ``statistics`` (before its ``tally``); ``title``:
    the heading of its section in the suite reports (default: the reading's heading); ``anchor``: the
    id of its HTML section (default: ``suite-`` and the reading's HTML id);
    ``render``: report format -> renderer: ``text``: (its table, the suite view
    :class:`harness.suite.view.SuiteView`, a metric) -> its lines heading that metric's block of the
    text report (empty: none), ``md`` and ``html``: (table, view) -> the body of its section, which
    stands before the report's own sections (in registry order); ``key``: its entry in ``bench
    serve``'s suite answer (``/api/v1/evals/suites/{id}``), the table's rows (empty: none)."""

    file: str
    compute: Callable[[SuiteInputs], pd.DataFrame] = field(repr=False, compare=False)
    record: Mapping[str, Any] = field(default_factory=dict, compare=False)
    title: str = ""
    anchor: str = ""
    render: Mapping[str, Callable[..., str]] = field(default_factory=dict, repr=False, compare=False)
    key: str = ""


#: The manifest entries a reading's record may go in (:attr:`Reading.record_in`): the top level, the
#: comparisons' ``statistics``, the ``diagnosis`` (:mod:`harness.store.write` puts each there).
RECORD_IN = ("", "statistics", "diagnosis")


@dataclass(frozen=True)
class RollUp:
    """A reading's per-query table rolled up per query facet by the reading that rolls up
    (:attr:`Reading.rolls_up`: the facets reading, :mod:`harness.readings.facets`), with its cells,
    buckets, intervals and facets, stored as two more readings of the registry that it declares.

    ``table``: the per-query table the reading's compute step gives (``system``, ``query_id``, then
    ``columns``, the values rolled up, in order; none when the step gives no such table: no rollup);
    ``name`` and ``file``: the rollup's table and CSV file; ``cells`` and ``cells_file``: the table
    and file of the cell of each evaluated query in each rolled-up facet (empty: none); ``order``:
    where the rollup stands among the readings (its cells just after); ``what``: the columns in
    words. In ``bench serve``, beside the reading's own entries of each system (one reading's
    rollup only; None: not served): ``entries``: a rollup row -> the entries of its values (the
    reading's own object and intervals), ``model``: () -> their pydantic fields (name -> (type,
    default)); ``shown``: (a served rollup cell, a column, the dashboard's number format) -> that
    value's cell on the dashboard."""

    table: str
    columns: tuple[str, ...]
    name: str
    file: str
    cells: str = ""
    cells_file: str = ""
    order: float = 100
    what: str = ""
    entries: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = field(default=None, repr=False, compare=False)
    model: Callable[[], Mapping[str, Any]] | None = field(default=None, repr=False, compare=False)
    shown: Callable[[Mapping[str, Any], str, Callable[[Any], str]], str] | None = \
        field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Reading:
    """One reading as a results folder stores it, declared once for the writer
    (:mod:`harness.store.write`), the folder reader (:mod:`harness.store.read`), the reports
    (:mod:`harness.report`) and the server (:mod:`harness.serve.store`).

    ``name``: the key of :data:`READINGS` and the attribute (or ``table(name)``) a reader gets it
    by; ``file``: its CSV file inside a results folder; ``text``: the columns read back as strings,
    ``integers``: those read back as nullable integers (every other column is a float; both must be
    present); ``columns``: what each row holds, in words (the writer's file list says it);
    ``compute``: the step that computes it while the comparison runs (:data:`Compute`), or None;
    ``frame``: the table from a finished comparison (:class:`~harness.core.record.CompareRecord`),
    or None when that comparison has none (the metrics card when it is off), so no file is written
    (default: the table of its name a compute step gave, its own or another reading's, as
    risk–coverage's gives its summary); ``record``: its entries in the
    manifest (:data:`Record`), or None;
    ``render``: report format (``text``, ``html``, ``md``, ``latex``) -> the renderer of its section
    (:data:`Render`), placed under the heading ``title`` (default: ``name``); ``sections``: format ->
    the renderer of its whole section, heading included, for a section whose heading reads the table
    (an empty text leaves it out); ``anchor``: the id of its HTML section (default ``reading-`` and
    the name, dashed); ``order``: where it stands among the readings (a folder's list, the reports'
    sections; the built-in ones stand at 10 to 92, a reading that sets none after them); ``serve``: its
    part of ``bench serve``'s metrics and dashboard (:class:`ServeView`), or None; ``record_shape``:
    () -> the shape of its manifest entries, checked where ``record_in`` puts them when a folder is
    opened (key -> shape, as :data:`harness.store.read.MANIFEST_SHAPES` declares one; called there, so
    computing loads no store);
    ``record_in``: the manifest entry its record goes in (one of :data:`RECORD_IN`: empty, the top
    level; ``statistics``, beside the comparisons' settings; ``diagnosis``, beside the fail rank and
    the categories); ``check``: (the configuration, the loaded dataset) -> None, checks
    what the reading reads of the dataset before anything is fitted (a
    :class:`~harness.errors.RetbenchError` when it cannot be read: a facet named that the queries
    lack), or None; ``files``: (finished comparison, run id, the manifest's ``hashes``) -> file name
    -> text, the files beside its CSV that hold the run id (the card's ``.jsonl``), written when the
    run id is claimed and hashed in the manifest, or None; ``resampled``: (systems, metrics) -> the
    columns of resampled values its compute step keeps at once (16 bytes per resample each:
    :func:`resampled_columns`, what a bootstrap too large for memory is refused by), or None;
    ``fails``: how its rows fail their queries in the diagnosis (:class:`FailureCheck`), or None;
    ``suite``: its macro table in a suite (:class:`SuiteStep`: computed from the collections' readings,
    stored, reported, served), or None; ``rollup``: its per-query table rolled up per query facet
    (:class:`RollUp`), or None; ``rolls_up``: for the reading that rolls up (the facets reading),
    a reading with a ``rollup`` -> the readings that compute, store and serve its rollup (registered
    once both are, whichever is registered first; its entries in ``bench serve`` follow the
    reading's own), or None; ``measured``: its numbers are measurements of the run on its machine
    (times, memory), which change from run to run: its text section is printed with the terminal's
    report but kept out of ``report.txt``, so that every other file of a folder stays byte-identical
    run to run."""

    name: str
    file: str
    text: tuple[str, ...]
    integers: tuple[str, ...] = ()
    columns: str = ""
    frame: Callable[[CompareRecord], pd.DataFrame | None] | None = field(default=None, repr=False, compare=False)
    render: Mapping[str, Render] = field(default_factory=dict, repr=False, compare=False)
    title: str = ""
    compute: Compute | None = field(default=None, repr=False, compare=False)
    record: Record | None = field(default=None, repr=False, compare=False)
    sections: Mapping[str, Render] = field(default_factory=dict, repr=False, compare=False)
    anchor: str = ""
    order: float = 100
    serve: ServeView | None = field(default=None, repr=False, compare=False)
    record_shape: Callable[[], Mapping[str, Any]] | None = field(default=None, repr=False, compare=False)
    record_in: str = ""
    check: Callable[[CompareConfig, Dataset], None] | None = field(default=None, repr=False, compare=False)
    files: Callable[[CompareRecord, str, Mapping[str, str]], Mapping[str, str]] | None = \
        field(default=None, repr=False, compare=False)
    resampled: Callable[[int, int], int] | None = field(default=None, repr=False, compare=False)
    fails: FailureCheck | None = field(default=None, compare=False)
    suite: SuiteStep | None = field(default=None, compare=False)
    rollup: RollUp | None = field(default=None, compare=False)
    rolls_up: Callable[[Reading], Sequence[Reading]] | None = field(default=None, repr=False, compare=False)
    measured: bool = False

    @property
    def html_id(self) -> str:
        """The id of its section in the HTML report: ``anchor``, else ``reading-`` and its name, dashed."""
        return self.anchor or "reading-" + self.name.replace("_", "-")

    @property
    def heading(self) -> str:
        """The heading of its section in a report: ``title``, else ``name``."""
        return self.title or self.name

    def section(self, format: str, frame: pd.DataFrame, view: Any, place: Callable[[str], str]) -> str:
        """Its section of report ``format``: its own (``sections``: heading included, empty for none),
        else its renderer's body as ``place`` puts it under :attr:`heading` (each report its own way)."""
        if format in self.sections:
            return self.sections[format](frame, view)
        return place(self.render[format](frame, view))

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"reading name {self.name!r} is not an identifier (it is an attribute of a results folder)")
        if "/" in self.file or not self.file.endswith(".csv"):
            raise ValueError(f"reading {self.name!r}: file {self.file!r} must be a CSV file name inside the folder")
        if self.suite is not None and not (self.suite.title and self.suite.anchor):  # its suite sections' defaults
            object.__setattr__(self, "suite", replace(self.suite, title=self.suite.title or self.heading,
                                                      anchor=self.suite.anchor or "suite-" + self.html_id))
        if self.record_in not in RECORD_IN:  # the writer puts records in these entries only: elsewhere, lost
            raise ValueError(f"reading {self.name!r}: record_in {self.record_in!r} is not one of "
                             f"{', '.join(map(repr, RECORD_IN))}")


#: Reading name -> its declaration, in the order a folder lists its files. :func:`register` adds one.
READINGS: dict[str, Reading] = {}

#: The reading the folder reader keeps as text (ids stay ids) besides parsing it (:mod:`harness.store.read`).
PER_QUERY = "per_query"


def register(reading: Reading) -> Reading:
    """Add ``reading`` to :data:`READINGS` (the one line a new reading needs) and return it; a name
    or a file already declared by another reading is a ``ValueError``."""
    for other in READINGS.values():
        if other.name != reading.name and other.file == reading.file:
            raise ValueError(f"reading {reading.name!r}: file {reading.file!r} is already reading {other.name!r}'s")
    if reading.name in READINGS and READINGS[reading.name] != reading:
        raise ValueError(f"a reading named {reading.name!r} is already registered")
    READINGS[reading.name] = reading
    ordered = sorted(READINGS.values(), key=lambda r: r.order)  # stable: equal orders keep registration order
    READINGS.clear()
    READINGS.update((r.name, r) for r in ordered)
    _register_rollups()
    return reading


def _register_rollups() -> None:
    """The readings of each declared :class:`RollUp`, from the reading that rolls up, once both are registered."""
    for roller in [r for r in READINGS.values() if r.rolls_up is not None]:
        for owner in [r for r in READINGS.values() if r.rollup is not None]:
            if owner.rollup.name not in READINGS:  # type: ignore[union-attr]
                for derived in roller.rolls_up(owner):  # type: ignore[misc]
                    register(derived)


def rendered(format: str) -> list[Reading]:
    """The registered readings with a renderer or a section for report ``format``, in registry order."""
    return [reading for reading in READINGS.values() if format in reading.render or format in reading.sections]


def served() -> list[Reading]:
    """The registered readings with a part in ``bench serve``'s metrics (:class:`ServeView`), in the
    order of their entries (each view's ``order``, else the reading's; equal ones in registry order)."""
    views = [reading for reading in READINGS.values() if reading.serve is not None]
    return sorted(views, key=lambda r: r.serve.order if r.serve.order is not None else r.order)  # type: ignore[union-attr]


def served_results() -> ServeResults | None:
    """The per-result objects of ``bench serve`` (``/results``, their schema, the dashboard's per-query
    table): those of the first served reading that has them (the metrics card's), or None."""
    return next((r.serve.results for r in served() if r.serve.results is not None), None)  # type: ignore[union-attr]


def check_readings(config: CompareConfig, dataset: Dataset) -> None:
    """Each registered reading's check of the loaded ``dataset`` (:attr:`Reading.check`), in registry order."""
    for reading in READINGS.values():
        if reading.check is not None:
            reading.check(config, dataset)


def identified_files(record: CompareRecord, run_id: str, hashes: Mapping[str, str]) -> dict[str, str]:
    """File name -> text of every registered reading's files that hold the run id (:attr:`Reading.files`)."""
    files: dict[str, str] = {}
    for reading in READINGS.values():
        if reading.files is not None:
            files.update(reading.files(record, run_id, hashes))
    return files


def resampled_columns(n_systems: int, n_metrics: int) -> int:
    """The most columns of resampled values a registered reading's compute step keeps at once for
    ``n_systems`` on ``n_metrics`` (:attr:`Reading.resampled`; 0 when none says)."""
    return max([r.resampled(n_systems, n_metrics) for r in READINGS.values() if r.resampled is not None], default=0)


def suite_readings() -> list[Reading]:
    """The registered readings with a part in a suite (:class:`SuiteStep`), in registry order."""
    return [reading for reading in READINGS.values() if reading.suite is not None]


def suite_tables(inputs: SuiteInputs) -> dict[str, pd.DataFrame]:
    """Reading name -> its macro table, computed by each registered reading's suite step, in registry order."""
    return {reading.name: reading.suite.compute(inputs) for reading in suite_readings()}  # type: ignore[union-attr]


def failure_checks() -> list[FailureCheck]:
    """The failure checks of the registered readings (:class:`FailureCheck`), in registry order."""
    return [reading.fails for reading in READINGS.values() if reading.fails is not None]


def flagged_queries(tables: Mapping[str, pd.DataFrame]) -> dict[str, dict[str, tuple[str, tuple[dict[str, Any], ...]]]]:
    """System -> query id -> (category, evidence rows) for every query a registered reading's table
    in ``tables`` (reading name -> table: a comparison's, or a folder's) fails (:class:`FailureCheck`),
    the first reading in registry order winning; each row without its ``system`` and ``query_id``."""
    flagged: dict[str, dict[str, tuple[str, tuple[dict[str, Any], ...]]]] = {}
    for reading in READINGS.values():
        frame = tables.get(reading.name) if reading.fails is not None else None
        if frame is None or frame.empty:
            continue
        rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in frame.to_dict("records"):
            key = (str(row.pop("system")), str(row.pop("query_id")))
            rows.setdefault(key, []).append(row)
        for (system, query), evidence in rows.items():
            flagged.setdefault(system, {}).setdefault(query, (reading.fails.category, tuple(evidence)))
    return flagged


def reading_frames(record: CompareRecord) -> dict[str, pd.DataFrame]:
    """Reading name -> its table from ``record``, for every registered reading the record has."""
    frames = {}
    for reading in READINGS.values():
        frame = reading.frame(record) if reading.frame is not None else record.tables.get(reading.name)
        if frame is not None:
            frames[reading.name] = frame
    return frames


def manifest_records(record: CompareRecord, within: str = "") -> dict[str, Any]:
    """The manifest's entries of every registered reading whose record goes in the entry ``within``
    (empty: the top level), in registry order."""
    return {key: value for reading in READINGS.values() if reading.record is not None and reading.record_in == within
            for key, value in reading.record(record).items()}


DIAGNOSIS_COLUMNS = ["system", "query_id", "category", "rank", "first_result", "shared_words"]


def _comparisons_frame(record: CompareRecord) -> pd.DataFrame:
    """The comparisons' own columns, then their effect size and power (one row each, in order)."""
    rows = [{c: getattr(comp, c) for c in COMPARISON_COLUMNS} for comp in record.comparisons]
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    power = record.power.reset_index(drop=True)
    keys = ["system_a", "system_b", "metric"]
    if len(power) != len(frame) or not frame[keys].equals(power[keys]):
        raise ValueError("result.power does not hold one row per comparison, in the comparisons' order")
    return pd.concat([frame, power[POWER_COLUMNS]], axis=1)


def _diagnosis_frame(record: CompareRecord) -> pd.DataFrame:
    rows = [
        {"system": f.system, "query_id": f.query_id, "category": f.category,
         "rank": f.rank if f.rank is not None else pd.NA, "first_result": f.first_result or "",
         "shared_words": f.shared_words_text()}
        for f in record.failures
    ]
    frame = pd.DataFrame(rows, columns=DIAGNOSIS_COLUMNS)
    frame["rank"] = frame["rank"].astype("Int64")
    return frame


for _reading in (
    Reading("summary", "summary.csv", ("system",), columns="system, one column per metric as requested",
            frame=lambda record: record.summary, order=10),
    Reading(PER_QUERY, "per_query.csv", ("system", "query_id"), ("first_relevant_rank",),
            columns="system, query_id, one column per metric, first_relevant_rank (empty when none)",
            frame=lambda record: record.per_query, order=20),
    Reading("comparisons", "comparisons.csv", ("system_a", "system_b", "metric", "test", "verdict"),
            ("n_queries", "n_differing", "wins", "ties", "losses", "queries_needed"),
            columns="system_a, system_b, metric, mean_diff (a - b), ci_low, ci_high, p_value, p_adjusted, n_queries, "
                    "n_differing, test, verdict, then wins, ties, losses, effect_size, detectable_difference, "
                    "queries_needed, effect_size_anova, effect_size_anova_low, effect_size_anova_high",
            frame=_comparisons_frame, order=30),
    Reading("diagnosis", "diagnosis.csv", ("system", "query_id", "category", "first_result", "shared_words"),
            ("rank",), columns=", ".join(DIAGNOSIS_COLUMNS), frame=_diagnosis_frame, order=70),
):
    register(_reading)
