"""The two sides of a gate (:mod:`harness.gating.rule`), and whether they measured the same thing.

A :class:`GateSide` is one system's per-query values over the queries that count, with what they
were computed on: from a results folder (``per_query.csv``, or its run file re-scored with its
``qrels.txt`` for a metric it lacks), from a ranking and judgments scored now with
:func:`harness.evaluate`, or from a comparison just made with :func:`harness.compare`.

Two sides may be compared only when they measured the same thing: the :data:`DATA_HASHES` that both
know are equal (:func:`check_same_data`), they read their judgments the same way (every setting of
:data:`JUDGMENTS_READING`: the relevance threshold and how an unjudged document counts;
:func:`check_same_reading`), they evaluated the same queries (:func:`pair_queries`) and judged each
of them the same way (:func:`check_judgments`). ``allow_different_queries`` pairs the
queries both evaluated instead; it relaxes the queries hash and the whole-collection judgments hash
(both cover every query), never the documents hash nor the judgments of the paired queries.

What a side is read from is checked before any number is taken from it: ``per_query.csv`` whole,
once (:func:`read_per_query`: one row per system and query, a finite number in every metric cell, a
judged query on every row), and a run scored with judgments must rank at least one of the judged
queries (a run whose query ids match none, renamed say, would otherwise score 0 everywhere and read
as a collapse). Each problem is an :class:`~corpora.InputFileError` naming the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import csv
import math

import numpy as np
import pandas as pd

from corpora import Dataset, InputFileError, Qrels, RetbenchError, Run
from harness.core.api import evaluate, queries_that_count
from harness.core.evaluation import FIRST_RELEVANT_RANK
from harness.core.metrics import Metric, parse_metric
from harness.core.record import CompareRecord
from harness.core.condensed import DEFAULT_UNJUDGED, UNJUDGED_READINGS, check_unjudged
from harness.store.folder import MANIFEST_FILE
from harness.store.write import QRELS_FILE
from harness.store.read import PER_QUERY_FILE, ResultsFolder, one_comparison, open_results

__all__ = ["DATA_HASHES", "JUDGMENTS_READING", "GateSide", "check_judgments", "check_same_data", "check_same_reading",
           "data_hashes", "pair_queries", "read_per_query", "unjudged_reading"]

#: The hashes a results manifest records that say what was measured (not how: no ``configuration``).
DATA_HASHES: tuple[str, ...] = ("documents", "queries", "judgments")
_WHOLE_COLLECTION = ("queries", "judgments")  # cover every query: relaxed by allow_different_queries
_RESTORE = "restore the file as retbench wrote it, or make the folder again (the manifest's command line)"
#: The settings of a side that decide how its judgments are read (each changes the numbers one ranking
#: gets under the same judgments): the :class:`GateSide` attribute -> what the setting is, in words,
#: and the option of ``bench compare`` (and ``bench evaluate``, ``bench gate``) that sets it.
JUDGMENTS_READING: dict[str, tuple[str, str]] = {
    "rel_threshold": ("relevant from grade", "--rel-threshold"),
    "unjudged": ("unjudged documents read as", "--unjudged"),
}


def data_hashes(dataset: Dataset) -> dict[str, str]:
    """The :data:`DATA_HASHES` of a dataset, as ``bench compare`` records them in its manifest."""
    return {"documents": dataset.corpus.content_hash(), "queries": dataset.queries.content_hash(),
            "judgments": dataset.qrels.content_hash()}


@dataclass
class GateSide:
    """One side of a gate: one system's per-query values over the queries that count, and what
    they were computed on.

    ``query_ids``: the evaluated queries, in order; ``qrels``: their judgments; ``stored``: values
    already computed (index ``query_id``, a column per metric name) or None; ``run``: the ranking, to
    score a metric ``stored`` lacks; ``hashes``: the :data:`DATA_HASHES` known (empty for a bare run).
    ``values_from``, ``run_from`` and ``qrels_from`` name where each came from, for the report.
    """

    name: str
    system: str
    query_ids: list[str]
    qrels: Qrels
    rel_threshold: int = 1
    #: how a document without a judgment counts (:data:`~harness.core.condensed.UNJUDGED_READINGS`)
    unjudged: str = DEFAULT_UNJUDGED
    run: Run | None = None
    stored: pd.DataFrame | None = None
    hashes: dict[str, str] = field(default_factory=dict)
    values_from: str = ""
    run_from: str = "the run"
    qrels_from: str = "the qrels"
    #: the results folder the side was read from: its run file is read only if a metric needs scoring
    folder: ResultsFolder | None = field(default=None, repr=False)
    #: query id -> text, where the side knows them (a comparison run now; a results folder stores none)
    query_texts: dict[str, str] = field(default_factory=dict, repr=False)
    #: what the reader noticed and the report should say (queries a run misses, which score 0, ...)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_run(cls, run: Run | Mapping[str, Sequence[tuple[str, float]]], qrels: Qrels | Mapping[str, Mapping[str, int]],
                 *, name: str = "run", rel_threshold: int = 1, unjudged: str = DEFAULT_UNJUDGED,
                 run_from: str | None = None, qrels_from: str | None = None) -> GateSide:
        """A ranking and its judgments, scored with :func:`harness.evaluate` (unjudged documents read
        as ``unjudged`` says): every query with a relevant judgment counts, and one the run misses
        scores 0 (the rule of ``bench compare``; :attr:`notes` says how many). A run that ranks none of those queries is an
        :class:`~corpora.InputFileError` (its ids do not match the judgments')."""
        check_unjudged(unjudged)
        judgments = qrels if isinstance(qrels, Qrels) else Qrels(qrels)
        ranked = run if isinstance(run, Run) else Run.from_mapping(run)
        query_ids = queries_that_count(judgments, rel_threshold)
        qrels_name, run_name = qrels_from or judgments.source, run_from or name
        if not query_ids:
            raise RetbenchError(f"{qrels_name}: no query has a relevant judgment (grade >= "
                                f"{rel_threshold}). Fix: check the qrels and the relevance threshold")
        counted = set(query_ids)
        ranked_ids = set(ranked.query_ids)
        if not counted & ranked_ids:
            raise InputFileError(run_name, f"none of the run's {len(ranked.query_ids)} queries "
                                 f"({_preview(ranked.query_ids)}) is among the {len(query_ids)} queries with a "
                                 f"relevant judgment in {qrels_name} ({_preview(query_ids)}), so every query would "
                                 "score 0", fix="check that the run and the qrels use the same query ids")
        notes = []
        missing = [q for q in query_ids if q not in ranked_ids]
        if missing:
            notes.append(f"{run_name}: {len(missing)} of the {len(query_ids)} judged queries are missing from the run "
                         f"and score 0 ({_preview(missing)})")
        return cls(name, name, query_ids, Qrels({q: judgments[q] for q in query_ids}, judgments.source),
                   rel_threshold, unjudged, run=ranked, run_from=run_name, qrels_from=qrels_name, notes=notes)

    @classmethod
    def from_results(cls, folder: ResultsFolder | str | PathLike[str], system: str | None = None, *,
                     accept_edited: bool = False) -> GateSide:
        """System ``system`` of a results folder (its only one when None): the values of
        ``per_query.csv``, and its run file with ``qrels.txt`` for a metric the folder lacks. Each
        file is verified against the folder's manifest as it is read; ``accept_edited`` reads one
        edited since with a warning instead of refusing it (:func:`harness.store.read.open_results`;
        a :class:`ResultsFolder` given is read as it was opened)."""
        results = one_comparison(folder if isinstance(folder, ResultsFolder)
                                 else open_results(folder, accept_edited=accept_edited))
        label = results.system(system)
        frame = read_per_query(results)
        stored = frame[frame["system"] == label].drop(columns=["system"]).set_index("query_id")
        if stored.empty:
            raise InputFileError(results.path / PER_QUERY_FILE, f"holds no row of system {label!r}",
                                 fix=_RESTORE)
        hashes = {k: v for k, v in results.hashes.items() if k in DATA_HASHES}
        name = f"{results.path} ({label})" if len(results.systems) > 1 else str(results.path)
        return cls(name, label, list(stored.index), results.qrels, results.rel_threshold, unjudged_reading(results),
                   stored=stored,
                   hashes=hashes, values_from=PER_QUERY_FILE,
                   run_from=str(results.run_path(label).relative_to(results.path)), qrels_from=QRELS_FILE,
                   folder=results)

    @classmethod
    def from_compare(cls, result: CompareRecord, system: str | None = None, *, name: str | None = None) -> GateSide:
        """System ``system`` of a comparison just made (:func:`harness.compare`; its only one when None)."""
        labels = [s.label for s in result.systems]
        if system is None and len(labels) != 1:
            raise RetbenchError(f"the candidate run holds {len(labels)} systems ({', '.join(labels)}). Fix: name "
                                "the candidate (`system=NAME`), or run one system")
        label = system if system is not None else labels[0]
        if label not in labels:
            raise RetbenchError(f"the candidate run has no system {label!r} (it has {', '.join(labels)}). "
                                "Fix: name one of them")
        run = next(s.run for s in result.systems if s.label == label)
        rows = result.per_query[result.per_query["system"] == label]
        stored = rows.drop(columns=["system"]).set_index("query_id")
        qrels = Qrels({q: result.dataset.qrels[q] for q in result.query_ids}, result.dataset.qrels.source)
        return cls(name or f"{label} on {result.dataset.name}", label, list(result.query_ids), qrels,
                   result.config.scoring.rel_threshold, result.config.scoring.unjudged, run=run, stored=stored,
                   hashes=data_hashes(result.dataset),
                   values_from="this run", run_from=f"the run of {label}", qrels_from="the corpus's judgments",
                   query_texts=dict(zip(result.dataset.queries.ids, result.dataset.queries.texts)))

    def _stored_column(self, metric: Metric) -> str | None:
        if self.stored is None:
            return None
        for column in self.stored.columns:
            try:
                parsed = parse_metric(str(column))
            except RetbenchError:
                continue  # first_relevant_rank and other columns that are not metrics
            if (parsed.base, parsed.k) == (metric.base, metric.k):
                return str(column)
        return None

    def values(self, metric: Metric) -> tuple[pd.Series, str]:
        """This side's per-query values of ``metric`` (index ``query_id``, float64) and how they
        were obtained: read from the stored values, or scored from the run with the judgments."""
        column = self._stored_column(metric)
        if column is not None:
            values = self.stored[column]  # type: ignore[index]
            if values.dtype == object:  # text, as a caller may give it: float() is correctly rounded
                values = values.map(float)
            return values.astype(np.float64), f"{column} from {self.values_from}"
        if self.run is None and self.folder is not None:
            self.run = self.folder.run(self.system)
        if self.run is None:
            raise RetbenchError(f"{self.name}: holds no values of {metric.name} and no run to score. "
                                "Fix: gate a metric it holds, or give its run")
        frame = evaluate(self.run, self.qrels, [metric], rel_threshold=self.rel_threshold, query_ids=self.query_ids,
                         unjudged=self.unjudged)
        verb = "re-scored" if self.stored is not None else "scored"
        return frame[metric.name].astype(np.float64), f"{metric.name} {verb} from {self.run_from} with {self.qrels_from}"


def _is_metric(column: str) -> bool:
    try:
        parse_metric(column)
    except RetbenchError:
        return False
    return True


def _line_numbers(path: Path) -> list[int]:
    """The line of each data row of a CSV file as pandas reads it (blank lines skipped, the header
    first): only computed to name the line of a bad row."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        lines = [reader.line_num for fields in reader if fields]
    return lines[1:]


def _bad_cell(column: str, cell: object, is_metric: bool) -> str | None:
    """Why ``cell`` of ``column`` is not what ``bench compare`` writes there, or None."""
    if not isinstance(cell, str):  # pandas fills the fields a short row lacks
        return f"column {column!r}: no value (the row has fewer fields than the header)"
    if cell == "" and (is_metric or column in ("system", "query_id")):
        return f"column {column!r}: empty"
    if is_metric:
        try:
            value = float(cell)
        except ValueError:
            return f"column {column!r}: {cell!r} is not a number"
        return None if math.isfinite(value) else f"column {column!r}: {cell!r} is not a finite number"
    rank = cell.isascii() and cell.isdigit() and int(cell) >= 1
    if column == FIRST_RELEVANT_RANK and cell != "" and not rank:
        return f"column {column!r}: {cell!r} is neither a rank (an integer >= 1) nor empty"
    return None


def read_per_query(results: ResultsFolder) -> pd.DataFrame:
    """``per_query.csv`` of a results folder, checked whole before any value is used: ``system``
    and ``query_id`` non-empty and one row per pair; every metric cell a finite number (read with
    ``float``, correctly rounded, into float64 columns); ``first_relevant_rank`` a rank or empty;
    every query judged in ``qrels.txt``. Anything else is an :class:`~corpora.InputFileError`
    naming the line (the header is line 1)."""
    path = results.path / PER_QUERY_FILE
    frame = results.per_query.copy()

    def line(row: int) -> int | None:
        lines = _line_numbers(path)
        return lines[row] if row < len(lines) else None

    def refuse(row: int, problem: str) -> None:
        raise InputFileError(path, problem, line=line(row), fix=_RESTORE)

    for column in ("system", "query_id"):
        for row, cell in enumerate(frame[column].tolist()):
            why = _bad_cell(column, cell, False)
            if why:
                refuse(row, why)
    keys = list(zip(frame["system"], frame["query_id"]))
    first: dict[tuple[str, str], int] = {}
    for row, key in enumerate(keys):
        if key in first:
            refuse(row, f"query {key[1]!r} of system {key[0]!r} appears twice (first at line {line(first[key])})")
        first[key] = row
    metrics = {str(c): _is_metric(str(c)) for c in frame.columns if c not in ("system", "query_id")}
    for column, is_metric in metrics.items():
        cells = frame[column].tolist()
        for row, cell in enumerate(cells):
            why = _bad_cell(column, cell, is_metric)
            if why:
                refuse(row, why)
        if is_metric:
            frame[column] = np.array([float(cell) for cell in cells], dtype=np.float64)
    judged = set(results.qrels)
    unjudged = np.flatnonzero([q not in judged for q in frame["query_id"]])
    if len(unjudged):
        row = int(unjudged[0])
        refuse(row, f"query {frame['query_id'].iloc[row]!r} has no judgment in {QRELS_FILE}")
    return frame


def unjudged_reading(results: ResultsFolder) -> str:
    """How the folder's numbers read an unjudged document: its manifest's ``conventions.unjudged.reading``
    (a key of :data:`~harness.core.condensed.UNJUDGED_READINGS`); a folder written before the
    reading was recorded read them as trec_eval does, :data:`~harness.core.condensed.DEFAULT_UNJUDGED`."""
    conventions = results.manifest.get("conventions")
    entry = conventions.get("unjudged") if isinstance(conventions, dict) else None
    if entry is None:
        return DEFAULT_UNJUDGED
    reading = entry.get("reading") if isinstance(entry, dict) else None
    if reading not in UNJUDGED_READINGS:
        raise InputFileError(results.path / MANIFEST_FILE, f"its conventions.unjudged.reading is {reading!r}, not one "
                             f"of {', '.join(map(repr, UNJUDGED_READINGS))}", fix=_RESTORE)
    return str(reading)


def check_same_reading(baseline: GateSide, candidate: GateSide) -> None:
    """Both sides read their judgments the same way: every setting of :data:`JUDGMENTS_READING` equal,
    else one :class:`~corpora.RetbenchError` naming both sides and each setting that differs (the
    same ranking would score differently on each side, and the difference would read as a change)."""
    differing = [(words, flag, getattr(baseline, name), getattr(candidate, name))
                 for name, (words, flag) in JUDGMENTS_READING.items()
                 if getattr(baseline, name) != getattr(candidate, name)]
    if differing:
        settings = "; ".join(f"{words} {b} in the baseline, {a} in the candidate" for words, _, b, a in differing)
        flags = " and ".join(flag for _, flag, _, _ in differing)
        raise RetbenchError(f"the baseline {baseline.name} and the candidate {candidate.name} read their judgments "
                            f"differently ({settings}), so the same ranking would score differently on each side. "
                            f"Fix: score both the same way: the same {flags} in bench compare (bench gate takes "
                            f"{flags} for a run file)")


def _short(digest: str) -> str:
    return digest[:12] + "…"


def _preview(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")


def check_same_data(baseline: Mapping[str, str], candidate: Mapping[str, str], *,
                    allow_different_queries: bool = False) -> list[str]:
    """The :data:`DATA_HASHES` both know must be equal (``allow_different_queries`` skips the
    queries and whole-collection judgments hashes); raises one error naming every difference.
    Returns notes on what was not compared."""
    differing, notes = [], []
    for name in DATA_HASHES:
        if name not in baseline or name not in candidate or baseline[name] == candidate[name]:
            continue
        if allow_different_queries and name in _WHOLE_COLLECTION:
            notes.append(f"the {name} hashes differ (baseline {_short(baseline[name])}, candidate "
                         f"{_short(candidate[name])}); allow_different_queries pairs the common queries and checks "
                         "their judgments one by one")
            continue
        differing.append(f"{name} (baseline {_short(baseline[name])}, candidate {_short(candidate[name])})")
    if differing:
        raise RetbenchError(f"baseline and candidate were not measured on the same data: the hashes of "
                            f"{'; '.join(differing)} differ. Fix: run the candidate on the baseline's corpus and "
                            "judgments (`corpus=SAME_CORPUS` and `systems=SPEC`)")
    return notes


def pair_queries(baseline: GateSide, candidate: GateSide, allow: bool) -> tuple[list[str], list[str], list[str]]:
    """The paired queries (baseline order) and those only one side evaluated."""
    in_candidate = set(candidate.query_ids)
    in_baseline = set(baseline.query_ids)
    only_baseline = [q for q in baseline.query_ids if q not in in_candidate]
    only_candidate = [q for q in candidate.query_ids if q not in in_baseline]
    paired = [q for q in baseline.query_ids if q in in_candidate]
    if (only_baseline or only_candidate) and not allow:
        raise RetbenchError(
            f"the query sets differ: {len(only_baseline)} queries only in the baseline"
            f"{' (' + _preview(only_baseline) + ')' if only_baseline else ''} and {len(only_candidate)} only in the "
            f"candidate{' (' + _preview(only_candidate) + ')' if only_candidate else ''}. Fix: evaluate both on the "
            f"same queries, or pass `allow_different_queries` to pair the {len(paired)} common ones")
    if not paired:
        raise RetbenchError("baseline and candidate evaluated no query in common. Fix: check that both use the "
                            "same query ids")
    return paired, only_baseline, only_candidate


def check_judgments(baseline: GateSide, candidate: GateSide, paired: Sequence[str]) -> None:
    differing = [q for q in paired if dict(baseline.qrels[q]) != dict(candidate.qrels[q])]
    if differing:
        before = Qrels({q: baseline.qrels[q] for q in paired}).content_hash()
        after = Qrels({q: candidate.qrels[q] for q in paired}).content_hash()
        raise RetbenchError(
            f"the judgments differ on {len(differing)} of the {len(paired)} paired queries ({_preview(differing)}): "
            f"judgments hash of the paired queries, baseline {_short(before)} ({baseline.qrels_from}), candidate "
            f"{_short(after)} ({candidate.qrels_from}). Fix: score both with the same judgments")
