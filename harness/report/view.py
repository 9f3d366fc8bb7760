"""What the reports of a results folder show, read from that folder alone.

``bench report`` (HTML, Markdown, LaTeX, text), the reports ``bench compare --report`` writes,
``report.txt``, ``result.report(format)`` and the dashboard all start from a :class:`ReportView`: the
folder's files (:mod:`harness.store.read`) and the few things derived from them, each a pure function of the folder,
so a report made today from a past folder equals the one made when it was written. A fresh result's
view (:meth:`ReportView.of_result`) reads the folder ``result.write()`` would store from memory
(:func:`harness.store.read.open_record`), with no folder written, so it is the same report.
Readings added to the registry with a renderer for a format (:func:`harness.core.readings.rendered`)
are shown by :meth:`ReportView.registered`.

Derived here, and nowhere stored:

* **significance** of a comparison: :attr:`harness.core.statistics.Comparison.significant` (Holm p <=
  alpha *and* the interval excludes 0, the rule of the verdict "A is better"), on the stored row,
  alpha from the manifest;
* **the reference** each system is marked against, per metric: the baseline when the run had one,
  else the leaderboard's best (its first row: the highest mean);
* **mean intervals**: each system's mean with a percentile bootstrap interval over the queries,
  drawn with the run's own resamples (:func:`harness.core.statistics.bootstrap_means` on
  ``per_query.csv`` with the manifest's seed, resamples and confidence), the method of the facet
  cells' intervals applied to all the queries;
* **per-query differences** of a comparison (``a - b`` from ``per_query.csv``) and the queries that
  lost most against the reference.

A folder whose ``summary.csv`` or ``per_query.csv`` lacks a system's row or a metric's column (one
read with ``accept_edited``, or written before the files were hashed) is an
:class:`~corpora.InputFileError` naming the file, not a report of what is left.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from corpora import InputFileError
from corpora.wording import counted
from harness.core.diagnosis import Failure
from harness.core.options import level_text
from harness.core.power import EFFECT_COLUMNS, PowerAnalysis
from harness.core.readings import READINGS, Reading, failure_checks, flagged_queries, rendered
from harness.store.read import MANIFEST_FILE, PER_QUERY_FILE, TABLES, ResultsFolder, open_record
from harness.core.statistics import Comparison, bootstrap_means, percentile_interval

if TYPE_CHECKING:
    from harness.core.record import CompareRecord

__all__ = ["LABEL_CHARS", "ComparisonRow", "Loss", "ReportView", "number", "short_label"]

#: Characters of a system label shown in a table before it is shortened (:func:`short_label`).
LABEL_CHARS = 60


def short_label(label: str, limit: int = LABEL_CHARS) -> str:
    """``label`` as a table shows it: whole up to ``limit`` characters, else a prefix, an ellipsis
    and 8 hex digits of its SHA-256, so two long labels never look the same.

    >>> short_label("bm25")
    'bm25'
    >>> short_label("rrf(" + "bm25," * 20 + "lsa)", limit=20)
    'rrf(bm25,bm…acc51d13'
    """
    if len(label) <= limit:
        return label
    digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:8]
    return f"{label[:limit - 9]}…{digest}"


_INCOMPLETE_FIX = "restore the file retbench wrote, or make the folder again with the command in its manifest"


def _check_complete(path: object, frame: pd.DataFrame, systems: list[str], columns: list[str],
                    one_row: bool) -> None:
    """Every system of the manifest has its rows in ``frame`` (exactly one with ``one_row``), and
    every column is there: a report of what is left would be silently wrong."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputFileError(path, f"has no {', '.join(map(repr, missing))} column, which its manifest lists",
                             fix=_INCOMPLETE_FIX)
    counts = frame["system"].value_counts()
    for system in systems:
        n = int(counts.get(system, 0))
        if n == 0 or (one_row and n > 1):
            problem = "no row" if n == 0 else f"{n} rows"
            raise InputFileError(path, f"holds {problem} of system {system!r}, which its manifest lists",
                                 fix=_INCOMPLETE_FIX)


@dataclass(frozen=True)
class ComparisonRow:
    """One row of ``comparisons.csv`` as a :class:`~harness.core.statistics.Comparison` (for its rule of
    significance), with its stored verdict, effect size and power."""

    comparison: Comparison
    verdict: str
    power: PowerAnalysis

    @property
    def significant(self) -> bool:
        return self.comparison.significant

    def versus(self, reference: str) -> tuple[str, float, float, float]:
        """(the other system, mean difference, low, high) read as ``other - reference``."""
        c = self.comparison
        if c.system_b == reference:
            return c.system_a, c.mean_diff, c.ci_low, c.ci_high
        return c.system_b, 0.0 - c.mean_diff, 0.0 - c.ci_high, 0.0 - c.ci_low  # 0.0 - x: no negative zero


@dataclass(frozen=True)
class Loss:
    """A query on which a system scored below the reference: both values and the difference."""

    query_id: str
    reference_value: float
    value: float

    @property
    def difference(self) -> float:
        return self.value - self.reference_value


def _optional_int(value: object) -> int | None:
    return None if pd.isna(value) else int(value)


class ReportView:
    """The numbers of one results folder, as the reports show them (see the module docstring)."""

    def __init__(self, folder: ResultsFolder) -> None:
        self.folder = folder
        self.manifest = folder.manifest

    @classmethod
    def of_result(cls, result: CompareRecord, command_line: list[str] | None = None) -> ReportView:
        """The view of the folder ``result.write()`` would store, read from memory (nothing is written:
        :func:`harness.store.read.open_record`)."""
        return cls(open_record(result, command_line))

    # ----- what was run ---------------------------------------------------------------------

    @cached_property
    def systems(self) -> list[str]:
        """System labels, in the run's order."""
        return self.folder.systems

    @cached_property
    def metrics(self) -> list[str]:
        """Metric names, in ``--metrics`` order."""
        return self.folder.metric_names

    @property
    def statistics(self) -> dict:
        return self.manifest["statistics"]

    @property
    def alpha(self) -> float:
        return float(self.statistics["alpha"])

    @property
    def confidence(self) -> float:
        return float(self.statistics["confidence"])

    @property
    def level(self) -> str:
        """The interval's level as written: ``95%``."""
        return level_text(self.confidence)

    @property
    def baseline(self) -> str | None:
        value = self.statistics.get("baseline")
        return None if value is None else str(value)

    @property
    def corpus(self) -> dict:
        return self.manifest["corpus"]

    def _text_entry(self, key: str, kind: type) -> object:
        """The manifest's ``corpus[key]``, which only the text report reads; a folder written before it
        was recorded (or an edited manifest) is an :class:`~corpora.InputFileError` that says so."""
        value = self.corpus.get(key)
        if not isinstance(value, kind):
            raise InputFileError(self.folder.path / MANIFEST_FILE, f"records no corpus {key!r} (written before the "
                                 "text report was made from the folder), so its text report cannot be made again",
                                 fix="read the report.txt it was written with, or make the folder again with the "
                                     "command in its manifest")
        return value

    @property
    def dataset_line(self) -> str:
        """The dataset's one-line summary (:func:`corpora.summary_line`), as the manifest records it."""
        return str(self._text_entry("summary", str))

    @cached_property
    def query_texts(self) -> dict[str, str]:
        """Query id -> text, for each evaluated query, as the manifest records them."""
        return {str(q): str(t) for q, t in self._text_entry("query_texts", dict).items()}

    @property
    def systems_as_run(self) -> list[tuple[str, str]]:
        """(label, the spec it ran as: parameters chosen for the corpus filled in), per system."""
        return [(str(s["label"]), str(s["as_run"])) for s in self.manifest["systems"]]

    @property
    def analyzer(self) -> str:
        return str(self.manifest["analyzer"])

    @property
    def depth(self) -> int:
        return int(self.manifest["depth"])

    @property
    def pooled(self) -> bool:
        """Whether each query ranked its own candidate pool (the manifest hashes the pools)."""
        return "candidates" in self.manifest["hashes"]

    @property
    def fail_rank(self) -> int:
        return int(self.manifest["diagnosis"]["fail_rank"])

    @cached_property
    def query_ids(self) -> list[str]:
        """The evaluated queries, in evaluation order (``per_query.csv``'s)."""
        rows = self.folder.per_query
        first = rows[rows["system"] == self.systems[0]]
        return [str(q) for q in first["query_id"]]

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    # ----- the stored tables ----------------------------------------------------------------

    @cached_property
    def summary(self) -> pd.DataFrame:
        """``summary.csv``, checked to hold one row per system and a column per metric."""
        frame = self.folder.summary
        _check_complete(self.folder.path / TABLES["summary"].file, frame, self.systems, self.metrics, one_row=True)
        return frame

    def mean(self, system: str, metric: str) -> float:
        frame = self.summary
        return float(frame.loc[frame["system"] == system, metric].iloc[0])

    @cached_property
    def values(self) -> dict[str, pd.DataFrame]:
        """System -> its ``per_query.csv`` rows (index ``query_id``, a float column per metric)."""
        frame = self.folder.per_query_values
        path = self.folder.path / PER_QUERY_FILE
        _check_complete(path, frame, self.systems, self.metrics, one_row=False)
        values = {s: frame[frame["system"] == s].set_index("query_id") for s in self.systems}
        first = self.systems[0]
        for system, rows in values.items():
            if list(rows.index) != list(values[first].index):
                raise InputFileError(path, f"holds other queries for system {system!r} ({counted(len(rows), 'row')}) "
                                     "than for "
                                     f"{first!r} ({len(values[first])})", fix=_INCOMPLETE_FIX)
        return values

    @cached_property
    def comparison_rows(self) -> list[ComparisonRow]:
        """``comparisons.csv``, row by row."""
        rows = []
        for r in self.folder.comparisons.to_dict("records"):
            comparison = Comparison(str(r["system_a"]), str(r["system_b"]), str(r["metric"]), r["mean_diff"],
                                    r["ci_low"], r["ci_high"], r["p_value"], r["p_adjusted"], int(r["n_queries"]),
                                    int(r["n_differing"]), str(r["test"]), self.alpha)
            power = PowerAnalysis(int(r["wins"]), int(r["ties"]), int(r["losses"]), r["effect_size"],
                                  r["detectable_difference"], _optional_int(r["queries_needed"]),
                                  *(float(r.get(name, math.nan)) for name in EFFECT_COLUMNS))  # older folders lack them
            rows.append(ComparisonRow(comparison, str(r["verdict"]), power))
        return rows

    def comparisons_of(self, metric: str) -> list[ComparisonRow]:
        return [r for r in self.comparison_rows if r.comparison.metric == metric]

    @cached_property
    def _by_pair(self) -> dict[tuple[frozenset[str], str], ComparisonRow]:
        return {(frozenset((r.comparison.system_a, r.comparison.system_b)), r.comparison.metric): r
                for r in self.comparison_rows}

    def comparison(self, a: str, b: str, metric: str) -> ComparisonRow | None:
        """The stored comparison of ``a`` and ``b`` on ``metric`` in either order, or None."""
        return self._by_pair.get((frozenset((a, b)), metric))

    # ----- derived: references, markers, intervals, losses ------------------------------------

    #: How the reports name :meth:`reference` when there is no baseline (the rule is this view's).
    BEST_REFERENCE = "the best system of the metric (the leaderboard's first)"

    def reference(self, metric: str) -> str:
        """The system the others are marked against on ``metric``: the baseline, else the
        leaderboard's best (its first row, the highest mean; :data:`BEST_REFERENCE` in words)."""
        if self.baseline is not None:
            return self.baseline
        board = self.folder.leaderboard
        return str(board.loc[board["metric"] == metric, "system"].iloc[0])

    def marker(self, system: str, metric: str) -> int:
        """+1 when ``system`` is significantly better than the reference on ``metric``, -1 when
        significantly worse, 0 otherwise (the reference itself, or no stored comparison)."""
        reference = self.reference(metric)
        row = None if system == reference else self.comparison(system, reference, metric)
        if row is None or not row.significant:
            return 0
        _, difference, _, _ = row.versus(reference)
        return 1 if difference > 0 else -1

    def beaten_by(self, system: str, metric: str) -> list[str]:
        """The systems ``system`` is significantly better than on ``metric``, in the run's order."""
        beaten = []
        for other in self.systems:
            row = None if other == system else self.comparison(system, other, metric)
            if row is not None and row.significant and row.versus(other)[1] > 0:
                beaten.append(other)
        return beaten

    def best(self, metric: str) -> set[str]:
        """The systems whose mean, to the 3 decimals shown, is the highest on ``metric``."""
        shown = {s: round(self.mean(s, metric), 3) for s in self.systems}
        top = max(shown.values())
        return {s for s, v in shown.items() if v == top}

    @cached_property
    def mean_intervals(self) -> pd.DataFrame:
        """``system``, then per metric its mean, ``<metric>_ci_low`` and ``<metric>_ci_high``: the
        percentile interval of the mean over the run's bootstrap resamples of the queries."""
        samples = int(self.statistics["bootstrap_samples"])
        seed = int(self.statistics["seed"])
        columns = [(s, m) for s in self.systems for m in self.metrics]
        values = np.column_stack([self.values[s][m].to_numpy(dtype=np.float64) for s, m in columns])
        low, high = percentile_interval(bootstrap_means(values, samples, seed), self.confidence)
        rows = []
        for i, system in enumerate(self.systems):
            row: dict[str, object] = {"system": system}
            for j, metric in enumerate(self.metrics):
                k = i * len(self.metrics) + j
                row.update({metric: self.mean(system, metric), f"{metric}_ci_low": float(low[k]),
                            f"{metric}_ci_high": float(high[k])})
            rows.append(row)
        return pd.DataFrame(rows)

    def differences(self, row: ComparisonRow) -> np.ndarray:
        """The per-query differences ``system_a - system_b`` of a comparison, sorted ascending."""
        c = row.comparison
        a = self.values[c.system_a][c.metric].to_numpy(dtype=np.float64)
        b = self.values[c.system_b][c.metric].to_numpy(dtype=np.float64)
        return np.sort(a - b)

    def losses(self, system: str, metric: str, limit: int) -> list[Loss]:
        """The ``limit`` queries on which ``system`` lost most against the reference on ``metric``
        (largest drop first, ties in evaluation order); only queries it scored lower on."""
        reference = self.reference(metric)
        mine = self.values[system][metric]
        theirs = self.values[reference][metric]
        drops = [Loss(q, float(theirs[q]), float(mine[q])) for q in self.query_ids if mine[q] < theirs[q]]
        drops.sort(key=lambda loss: loss.difference)  # stable: equal drops keep evaluation order
        return drops[:limit]

    @cached_property
    def first_relevant_ranks(self) -> pd.DataFrame:
        """Query ids (index) x systems: the rank of the first relevant document (missing: not found)."""
        return pd.DataFrame({s: self.values[s]["first_relevant_rank"] for s in self.systems}).loc[self.query_ids]

    @cached_property
    def failure_categories(self) -> dict[tuple[str, str], str]:
        """(system, query id) -> the diagnosis category of that failure."""
        frame = self.folder.diagnosis
        return {(str(s), str(q)): str(c) for s, q, c in zip(frame["system"], frame["query_id"], frame["category"])}

    @cached_property
    def categories(self) -> dict[str, str]:
        """Diagnosis category -> what it means, in the order they are checked (the manifest's)."""
        return {str(k): str(v) for k, v in self.manifest["diagnosis"]["categories"].items()}

    @cached_property
    def unavailable(self) -> list[str]:
        """What the diagnosis could not do (a collection without document texts), as the manifest
        states it; empty when it did everything."""
        return [str(line) for line in self.manifest["diagnosis"].get("unavailable", [])]

    @cached_property
    def category_counts(self) -> pd.DataFrame:
        """Systems (index) x categories: failed queries per category."""
        frame = self.folder.diagnosis
        counts = pd.DataFrame(0, index=self.systems, columns=list(self.categories), dtype=int)
        unlisted = sorted({str(c) for c in frame["category"]} - set(self.categories))
        if unlisted:  # diagnosis.csv is hashed, the manifest is not: its list was edited
            raise InputFileError(self.folder.path / MANIFEST_FILE, "is damaged (edited?): its entry "
                                 f"diagnosis.categories does not list {', '.join(unlisted)}, a category of "
                                 "diagnosis.csv", fix="restore the manifest retbench wrote")
        for (system, category), n in frame.groupby(["system", "category"], sort=False).size().items():
            counts.loc[str(system), str(category)] = int(n)
        return counts

    @cached_property
    def failures(self) -> list[Failure]:
        """The diagnosis's failed queries, in ``diagnosis.csv``'s order, with their query texts (the
        manifest's), the grades of their relevant documents (``qrels.txt``) and, for a category of a
        registered reading's check, that reading's rows of the query (its file: the near-duplicate
        pairs of ``duplicates.csv``)."""
        texts = self.query_texts
        qrels = self.folder.qrels
        flagged = flagged_queries({reading.name: self.folder.table(reading.name) for reading in READINGS.values()
                                   if reading.fails is not None and self.folder.holds(reading.file)})
        failures = []
        for line, r in enumerate(self.folder.diagnosis.to_dict("records"), start=2):  # the header is line 1
            system, query = str(r["system"]), str(r["query_id"])
            grades = dict(qrels.get(query, {}))
            shared = _shared_words(str(r["shared_words"]), grades)
            if shared is None:
                raise InputFileError(self.folder.path / TABLES["diagnosis"].file, f"its shared_words cell "
                                     f"{r['shared_words']!r} does not start with a judged document of query {query!r}",
                                     line=line, fix=_INCOMPLETE_FIX)
            failures.append(Failure(system, query, texts.get(query, ""), str(r["category"]), _optional_int(r["rank"]),
                                    str(r["first_result"]) or None, shared, grades,
                                    flagged.get(system, {}).get(query, ("", ()))[1]))
        return failures

    def failure_clauses(self, format: str) -> str:
        """What the registered readings' checks add to the definition of a failed query in report
        ``format`` (``text``, ``md``, ``html``): ", or " and each one's clause, the fail rank filled in."""
        return "".join(", or " + check.clause[format].format(fail_rank=self.fail_rank) for check in failure_checks()
                       if format in check.clause)

    def registered(self, format: str) -> list[tuple[Reading, pd.DataFrame]]:
        """(reading, its table) for each registered reading with a renderer for ``format``
        (:func:`harness.core.readings.rendered`) that this folder holds, in registry order."""
        return [(reading, self.folder.table(reading.name)) for reading in rendered(format)
                if self.folder.holds(reading.file)]



def _shared_words(text: str, judged: dict[str, int]) -> dict[str, list[str]] | None:
    """``diagnosis.csv``'s ``shared_words`` cell (``doc: word word; doc: -``, as
    :meth:`harness.core.diagnosis.Failure.shared_words_text` writes it) as relevant doc id -> words; a
    ``; `` inside a word is told from the separator by the judged document ids that follow it. None:
    the cell does not start with a judged document (not what retbench wrote)."""
    entries: dict[str, str] = {}
    last = None
    for piece in text.split("; ") if text else []:
        doc, colon, words = piece.partition(": ")
        if colon and doc in judged and doc not in entries:
            entries[doc] = words
            last = doc
        elif last is not None:
            entries[last] += "; " + piece
        else:
            return None
    return {doc: [] if words == "-" else words.split(" ") for doc, words in entries.items()}


def number(value: float, digits: int = 3, sign: bool = False) -> str:
    """A value as the reports write it (``--`` for a missing or undefined one)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"
