"""A parameter search as a results folder and as the summary ``bench tune`` prints.

Every ``bench tune`` writes a new folder ``<out>/<run-id>/`` the way ``bench compare`` does
(:mod:`harness.store.write`: staged under a hidden name and renamed, the rename claiming the run id,
``--out`` checked before any work). Same inputs and seed give the same bytes (the manifest's time,
run id, command line and seconds aside), but for ``tune_cost.csv``, the points' times on this
machine.

| file | content |
|---|---|
| tune.csv | one row per grid point, in grid order: :data:`TUNE_COLUMNS` (below), a column per axis after ``system`` |
| per_query.csv | one row per query: :data:`PER_QUERY_COLUMNS` |
| tune_cost.csv | one row per grid point: what it cost (fit, index size, batch search throughput; :mod:`harness.tuning.cost`) |
| report.txt | the printed summary |
| report.html, report.md | the reports asked for (``bench tune --report``), made from the files above |
| manifest.json | files (the SHA-256 of every other file: :mod:`harness.store.folder`), run id, time, command line, versions, corpus and hashes, the grid (axes, values, order, default, the shortcut used), the metric, the folds (stream, strata, choices), the bootstrap settings, the summary, columns (what each file's columns hold), seconds |

``tune.csv`` holds what a plot of the metric over the grid needs: the axis values and ``mean`` of
every point, and each fold's training and held-out means; the HTML report
(:mod:`harness.tuning.report`) draws it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from corpora.wording import counted
from harness.tuning.cross_validation import FOLD_STREAM
from harness.core.evaluation import mean_over_queries
from harness.store.folder import Derived, Say, csv_text, package_version, safe_file_name, warn_on_stderr, write_folder
from harness.core.metrics import trec_eval_name
from harness.tuning.cost import BASES, TUNE_COST_COLUMNS, TUNE_COST_FILE, cost_table
from harness.tuning.record import Estimate, TuneRecord

__all__ = ["PER_QUERY_COLUMNS", "TUNE_COLUMNS", "TUNE_FILE", "TUNE_KIND", "edge_notes", "point_costs",
           "per_query_table", "render_report", "summary", "tune_table", "write_tune"]

#: The manifest's ``kind`` of a tune folder: how ``bench report`` tells one from a comparison's.
TUNE_KIND = "tune"
#: The file of every grid point's means.
TUNE_FILE = "tune.csv"

#: The columns of tune.csv and what each holds (the axis columns follow ``system``).
TUNE_COLUMNS = {
    "point": "the grid point's number, 1-based, in grid order (the last axis varies fastest)",
    "system": "the point's label: the retriever with every non-default parameter",
    "<axis>": "one column per swept parameter (e.g. k1, b, bm25.k1): its value at the point, as the spec holds it",
    "mean": "the metric's mean over all evaluated queries (in-sample)",
    "train_<f>": "fold f's training mean: over the queries of the other folds (the choice of fold f is the "
                 "first point with the highest train_f)",
    "test_<f>": "fold f's held-out mean: over the queries of fold f",
}
#: The columns of per_query.csv and what each holds.
PER_QUERY_COLUMNS = {
    "query_id": "an evaluated query (one with a relevant judgment), in the dataset's order",
    "fold": "its fold, 1-based",
    "chosen_point": "the point its fold chose on the other folds",
    "held_out": "the metric of that point on this query (the cross-validated estimate averages these)",
    "best": "the metric of the point chosen on all queries (the in-sample best averages these)",
    "default": "the metric of the default parameters",
}


def tune_table(record: TuneRecord) -> pd.DataFrame:
    """tune.csv as a DataFrame: one row per point (see :data:`TUNE_COLUMNS`)."""
    frame = pd.DataFrame({"point": np.arange(1, record.n_points + 1), "system": record.labels})
    for axis in record.grid.axes:
        frame[axis.name] = [values[axis.name] for values in record.point_parameters]
    frame["mean"] = record.cv.means
    for fold in range(record.cv.train_means.shape[1]):
        frame[f"train_{fold + 1}"] = record.cv.train_means[:, fold]
        frame[f"test_{fold + 1}"] = record.cv.test_means[:, fold]
    return frame


def per_query_table(record: TuneRecord) -> pd.DataFrame:
    """per_query.csv as a DataFrame (see :data:`PER_QUERY_COLUMNS`)."""
    cv = record.cv
    return pd.DataFrame({
        "query_id": record.query_ids, "fold": cv.fold_of + 1, "chosen_point": cv.choices[cv.fold_of] + 1,
        "held_out": cv.held_out, "best": record.values[cv.best], "default": record.default_values,
    })


def point_costs(record: TuneRecord) -> pd.DataFrame | None:
    """tune_cost.csv as a DataFrame (:mod:`harness.tuning.cost`); None when no cost was measured."""
    if record.costs is None:
        return None
    return cost_table(record.labels, record.costs, len(record.query_ids))


def _interval(estimate: Estimate, name: str) -> dict[str, float]:
    return {name: estimate.value, "ci_low": estimate.low, "ci_high": estimate.high}


def edge_notes(record: TuneRecord) -> list[str]:
    """A note per axis (of three values or more) whose first or last value the final choice takes:
    the best setting may lie beyond the grid."""
    notes = []
    chosen = record.point_parameters[record.cv.best]
    for axis in record.grid.axes:
        if len(axis.values) >= 3 and chosen[axis.name] in (axis.values[0], axis.values[-1]):
            end = "smallest" if chosen[axis.name] == axis.values[0] else "largest"
            notes.append(f"{axis.name}={chosen[axis.name]} is the {end} value of its axis: the best setting may "
                         "lie beyond the grid (widen it)")
    return notes


def summary(record: TuneRecord) -> dict[str, object]:
    """The numbers of the search (JSON-ready): printed by :func:`render_report`, kept in the manifest."""
    cv = record.cv
    members = [int((cv.fold_of == f).sum()) for f in range(len(cv.choices))]
    best = {"point": cv.best + 1, "system": record.labels[cv.best], "parameters": record.point_parameters[cv.best]}
    return {
        "metric": record.metric.name, "queries": len(record.query_ids), "folds": len(cv.choices),
        "seed": record.config.seed, "stratify": record.config.stratify, "grid_points": record.n_points,
        "cross_validated_estimate": _interval(record.estimate, "mean"),
        "in_sample_best": {"mean": cv.in_sample_best, **best,
                           "note": "optimistic: chosen on the very queries it is scored on"},
        "default": {"mean": mean_over_queries(record.default_values), "system": record.default_label,
                    "point": record.default_point + 1 if record.default_point is not None else None},
        "estimate_minus_default": _interval(record.estimate_minus_default, "mean_diff"),
        "optimism": _interval(record.optimism, "mean_diff"),
        "chosen": {**best, "chosen_on": "all queries"},
        "notes": edge_notes(record),
        "per_fold": [
            {"fold": f + 1, "queries": members[f], "training_queries": len(record.query_ids) - members[f],
             "chosen_point": point + 1, "system": record.labels[point], "parameters": record.point_parameters[point],
             "train_mean": float(cv.train_means[point, f]), "test_mean": float(cv.test_means[point, f])}
            for f, point in enumerate(cv.choices.tolist())
        ],
    }


# ----- the printed summary ---------------------------------------------------------------------


def _signed(value: float) -> str:
    return f"{value:+.3f}"


def _bounds(estimate: Estimate, signed: bool = False) -> str:
    show = _signed if signed else (lambda v: f"{v:.3f}")
    return f"[{show(estimate.low)}, {show(estimate.high)}]"


def render_report(record: TuneRecord) -> str:
    """What ``bench tune`` prints (and report.txt holds): the search, each fold's choice, the
    cross-validated estimate with its interval beside the in-sample best and the default, and the
    parameters chosen on all queries."""
    config, cv = record.config, record.cv
    shape = " x ".join(f"{axis.name} {len(axis.values)}" for axis in record.grid.axes)
    lines = [f"tune {record.grid.text} on {record.dataset.name} by {record.metric.name}: "
             f"{counted(record.n_points, 'grid point')} ({shape}), {counted(len(record.query_ids), 'query')} in "
             f"{counted(len(cv.choices), 'fold')} (seed {config.seed})"]
    if record.excluded_query_ids:
        lines.append(f"{counted(len(record.excluded_query_ids), 'query')} without a relevant judgment "
                     f"{'is' if len(record.excluded_query_ids) == 1 else 'are'} excluded")
    if config.stratify is not None and record.stratum_labels is not None and record.strata is not None:
        counts = ", ".join(f"{label} {record.strata.count(label)}" for label in record.stratum_labels)
        lines.append(f"folds stratified by {config.stratify}: {counts}")
    width = max(len("chosen on the other folds"), *(len(record.labels[p]) for p in cv.choices.tolist()))
    lines += ["", f"fold  queries  {'chosen on the other folds':<{width}}  train  held out"]
    for f, point in enumerate(cv.choices.tolist()):
        lines.append(f"{f + 1:>4}  {int((cv.fold_of == f).sum()):>7}  {record.labels[point]:<{width}}  "
                     f"{cv.train_means[point, f]:.3f}  {cv.test_means[point, f]:>8.3f}")
    best = record.labels[cv.best]
    default_mean = mean_over_queries(record.default_values)
    rows = [
        ("cross-validated estimate", f"{record.estimate.value:.3f}", _bounds(record.estimate),
         "each query scored with parameters chosen on the other folds"),
        ("in-sample best (optimistic)", f"{cv.in_sample_best:.3f}", "",
         f"{best}: chosen on the queries it is scored on"),
        ("default parameters", f"{default_mean:.3f}", "", record.default_label),
        ("estimate - default", _signed(record.estimate_minus_default.value),
         _bounds(record.estimate_minus_default, True), ""),
        ("optimism", _signed(record.optimism.value), _bounds(record.optimism, True), "in-sample best - estimate"),
    ]
    lines.append("")
    for name, value, bounds, note in rows:
        lines.append(f"{name:<28} {value:>6}  {bounds:<16}  {note}".rstrip())
    parameters = ", ".join(f"{k}={v}" for k, v in record.point_parameters[cv.best].items())
    lines += ["", f"chosen on all queries: {parameters} -> {best}",
              *(f"note: {note}" for note in edge_notes(record)),
              f"{config.confidence:.0%} paired bootstrap intervals over queries ({config.bootstrap_samples:,} "
              f"resamples, seed {config.seed}); ties go to the first point in grid order"]
    return "\n".join(lines)


# ----- the results folder ------------------------------------------------------------------------


def _sha256_json(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _configuration(record: TuneRecord) -> dict[str, object]:
    """The options, less where the data, the facets file and the cache live (hashed by content)."""
    options = dataclasses.asdict(record.config)
    for where in ("corpus", "cache", "cache_dir", "facets"):
        options.pop(where)
    return {**options, "axes": [[a.name, list(a.values)] for a in record.grid.axes]}


def _manifest(record: TuneRecord, run_id: str, command_line: list[str], started: datetime) -> dict[str, object]:
    config, dataset, metric, cv = record.config, record.dataset, record.metric, record.cv
    hashes = {"documents": dataset.corpus.content_hash(), "queries": dataset.queries.content_hash(),
              "judgments": dataset.qrels.content_hash(), "configuration": _sha256_json(_configuration(record))}
    strata = None
    if config.stratify is not None and record.strata is not None and record.stratum_labels is not None:
        strata = {"facet": config.stratify, "cells": {c: record.strata.count(c) for c in record.stratum_labels}}
    return {
        "run_id": run_id, "kind": TUNE_KIND, "time": started.isoformat(timespec="seconds"),
        "command_line": command_line,
        "versions": {"retbench": package_version("retbench"), "python": platform.python_version(),
                     **{p: package_version(p) for p in ("numpy", "scipy", "pandas", "click")}},
        "corpus": {"name": dataset.name, "source": str(dataset.source), "documents": len(dataset.corpus),
                   "queries": len(dataset.queries), "judgments": dataset.qrels.n_judgments(),
                   "queries_evaluated": len(record.query_ids), "queries_excluded": record.excluded_query_ids},
        "hashes": hashes,
        "grid": {
            "spec": record.grid.text, "name": record.grid.label, "points": record.n_points,
            "axes": [{"name": a.name, "parameter": a.parameter, "written": a.written, "values": list(a.values)}
                     for a in record.grid.axes],
            "order": "the cartesian product of the axes, the last axis varying fastest",
            "default": {"system": record.default_label,
                        "point": record.default_point + 1 if record.default_point is not None else None},
            "shortcut": record.shortcut,
        },
        "metric": {"name": metric.name, "family": metric.base, "cutoff": metric.k, "definition": metric.describe(),
                   "gain": metric.definition.gain_description, "rel_threshold": config.rel_threshold,
                   "trec_eval": trec_eval_name(metric)},
        "depth": config.depth,
        "search_depth": record.search_depth,
        "analyzer": config.analyzer,
        "cross_validation": {
            "folds": len(cv.choices), "seed": config.seed, "stream": FOLD_STREAM, "strata": strata,
            "choice": "per fold, the point with the highest mean over the other folds' queries; ties: the first in "
                      "grid order",
            "estimate": "mean over all queries of each query's value under its fold's choice (each query held "
                        "out once)",
            "means": "exactly rounded: math.fsum of the per-query values / number of queries",
        },
        "statistics": {"bootstrap_samples": config.bootstrap_samples, "seed": config.seed,
                       "confidence": config.confidence,
                       "interval": "percentile of sorted resampled means, paired over queries",
                       "bootstrap_stream": "numpy default_rng(seed).integers(0, n_queries), row by row"},
        "summary": summary(record),
        # "files" is the hash of every file, which write_folder records
        "columns": {TUNE_FILE: TUNE_COLUMNS, "per_query.csv": PER_QUERY_COLUMNS, "report.txt": "the printed summary",
                    **({TUNE_COST_FILE: TUNE_COST_COLUMNS} if record.costs is not None else {})},
        "warnings": record.warnings,
        "seconds": record.seconds,
        **({"cost": _cost_entry(record)} if record.costs is not None else {}),
    }


def _cost_entry(record: TuneRecord) -> dict[str, object]:
    """The manifest's ``cost``: how tune_cost.csv was measured, and the machine (no time is in it)."""
    from harness.engines.cost import machine

    bases = sorted({c.basis for c in record.costs or []})
    return {"file": TUNE_COST_FILE, "machine": machine(),
            "basis": {b: BASES[b] for b in bases},
            "measured": "wall-clock seconds of each point's fit and of its batch search of every evaluated query at "
                        "the search depth, in this one process; index_bytes as Retriever.index_bytes says, children "
                        "included; no single-query latency nor memory (bench compare measures them)"}


def _run_id(record: TuneRecord, started: datetime) -> str:
    digest = _sha256_json([record.dataset.corpus.content_hash(), _configuration(record)])[:8]
    return f"{started:%Y%m%d-%H%M%S}-{safe_file_name(record.dataset.name)[:40]}-tune-{digest}"


def write_tune(record: TuneRecord, out: Path, command_line: list[str] | None = None, say: Say = warn_on_stderr,
               derived: Derived | None = None) -> Path:
    """Write the results folder atomically under a fresh run id and return its path
    (:func:`harness.store.folder.write_folder`). ``derived`` makes more files from the staged
    folder once its own files and manifest are in it (the HTML and Markdown reports): they are
    written before the rename, so a reader never sees the folder without them."""
    started = datetime.now(timezone.utc)
    files = {TUNE_FILE: csv_text(tune_table(record)), "per_query.csv": csv_text(per_query_table(record)),
             "report.txt": render_report(record) + "\n"}
    costs = point_costs(record)
    if costs is not None:
        files[TUNE_COST_FILE] = csv_text(costs)
    def identified(run_id: str) -> tuple[dict, dict[str, str]]:
        return _manifest(record, run_id, command_line or sys.argv, started), {}

    return write_folder(out, files, _run_id(record, started), identified, derived, say)
