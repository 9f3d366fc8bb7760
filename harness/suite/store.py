"""Suite folders: one folder per :func:`harness.compare_suite`, written as results folders are
(staged, renamed into place, every file hashed: :func:`harness.store.folder.write_folder`).

| file | content |
|---|---|
| manifest.json | ``kind: suite``, suite id, time, command line, systems, metrics, statistics settings, the collections (name, folder, source, content hashes of documents, queries and judgments, the SHA-256 of their results folder's manifest), and ``files``: the hash of every suite file |
| suite_summary.csv | collection, system, one column per metric, n_queries: each collection's means, then ``macro`` rows (the mean of the collections' means) and ``micro (all queries pooled)`` rows |
| suite_comparisons.csv | system_a, system_b, metric, mean_diff (macro, a - b), ci_low, ci_high (bootstrap stratified by collection), p_value (stratified sign-flip test), p_adjusted (Holm), verdict, n_collections, n_queries, n_differing, test, then the tally over the collections: wins, ties, losses, better_on, worse_on |
| <its file> | each registered reading's macro table (its suite step, :class:`harness.core.readings.SuiteStep`): suite_leaderboard.csv, metric, group (letters), system, mean (macro), rank, mean_rank, rank_ci_low, rank_ci_high over the stratified resamples |
| report.txt | the suite's text report, with each collection's detail |
| collections/<name>/ | that collection's ordinary results folder, unchanged (every reader, report, gate and the server read it) |
| report.html, report.md | the reports asked for (``--report``), made from the files above; each collection's folder was written with the same reports (:func:`harness.suite.run.run_suite`'s ``reports``), which they link |

The collections' folders are covered by the manifest through their own manifests' hashes (each of
which hashes its folder's files), so :func:`open_suite` can tell any file edited since.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd

from harness.core.options import alpha_of
from harness.core.readings import READINGS, suite_readings
from harness.errors import InputFileError
from harness.store.folder import (MANIFEST_FILE, csv_text, file_hash, out_folder, package_version, safe_file_name,
                                  warn_on_stderr, write_folder)
from harness.store.read import ResultsFolder, open_results, open_staged
from harness.suite.statistics import MACRO, MICRO


__all__ = ["COLLECTIONS_FOLDER", "SUITE_KIND", "SuiteFolder", "is_suite_folder", "open_suite", "write_suite"]

#: The manifest's ``kind`` of a suite folder.
SUITE_KIND = "suite"
#: Where the collections' results folders lie inside a suite folder.
COLLECTIONS_FOLDER = "collections"
SUMMARY_FILE, COMPARISONS_FILE = "suite_summary.csv", "suite_comparisons.csv"


def _folder_names(names: Sequence[str]) -> list[str]:
    """A distinct folder name per collection: its safe name, ``-2``, ``-3`` ... when taken, in any
    case (``article`` and ``Article`` would be one folder on a case-insensitive file system, as where
    the suite folder is copied to macOS or Windows)."""
    used: set[str] = set()
    out = []
    for name in names:
        base = safe_file_name(name)[:80] or "collection"
        candidate, n = base, 1
        while candidate.casefold() in used:
            n += 1
            candidate = f"{base}-{n}"
        used.add(candidate.casefold())
        out.append(candidate)
    return out


def _statistics_record(result: Any) -> dict[str, Any]:
    options = result.options
    return {
        "bootstrap_samples": options["bootstrap_samples"], "seed": options["seed"],
        "confidence": options["confidence"], "alpha": round(alpha_of(options["confidence"]), 12),
        "permutations": options["permutations"], "holm_family": options["family"], "baseline": options["baseline"],
        "macro": "mean over the collections of each collection's mean over its queries (each collection weighs "
                 "the same)",
        "micro": "mean over every query of every collection (each query weighs the same)",
        "interval": "percentile interval of a paired bootstrap stratified by collection: each resample draws "
                    "n_c queries with replacement within each collection c and averages the collections' means; "
                    "collection k's rows come from numpy default_rng(SeedSequence(seed, spawn_key=(k,)))",
        "randomisation_test": "sign flips of each query's difference weighted by 1/(K n_c) (flips within each "
                              "collection), exact up to 20 differing queries, else Monte Carlo",
        **{key: value for reading in suite_readings() for key, value in reading.suite.record.items()},
        "tally": "wins/ties/losses: collections where a's mean is above/level with/below b's (12 decimals); "
                 "better_on/worse_on: collections whose own comparison calls a better/worse",
    }


def write_suite(result: Any, out: Path | str, *, command_line: Sequence[str] | None = None,
                say: Callable[[str], None] | None = None, reports: Sequence[str] | str = ()) -> Path:
    """Write ``result`` (a :class:`~harness.suite.run.SuiteResult`) as a new suite folder ``out/<suite id>`` (atomically) and return its path."""
    from harness.report.formats import parse_formats
    from harness.suite.report import check_suite_formats, render_suite_report

    formats = parse_formats(reports)
    check_suite_formats(formats)
    say = say or warn_on_stderr
    started = datetime.now(timezone.utc)
    folders = _folder_names([c.name for c in result.collections])
    collections = [{
        "name": c.name, "given": c.given, "folder": f"{COLLECTIONS_FOLDER}/{folder}", "source": c.source,
        "hashes": c.hashes, "documents": c.documents, "queries_evaluated": c.queries_evaluated,
        "run_id": c.folder.name, "manifest_sha256": file_hash(c.folder / MANIFEST_FILE), "warnings": c.warnings,
    } for c, folder in zip(result.collections, folders)]
    files = {
        SUMMARY_FILE: csv_text(result.summary),
        COMPARISONS_FILE: csv_text(result.comparisons),
        **{reading.suite.file: csv_text(result.table(reading.name)) for reading in suite_readings()},
        "report.txt": result.report(detail=True) + "\n",
    }
    digest = hashlib.sha256(json.dumps([[c["hashes"] for c in collections], result.systems, result.metrics,
                                        result.options["seed"]], sort_keys=True).encode()).hexdigest()[:8]
    base_id = f"{started:%Y%m%d-%H%M%S}-suite-{len(collections)}-{digest}"

    def identified(run_id: str) -> tuple[dict[str, Any], dict[str, str]]:
        return {
            "kind": SUITE_KIND, "run_id": run_id, "time": started.isoformat(timespec="seconds"),
            "command_line": list(command_line) if command_line is not None else sys.argv,
            "versions": {"retbench": package_version("retbench"), "python": platform.python_version(),
                         **{p: package_version(p) for p in ("numpy", "pandas")}},
            "systems": result.systems, "metrics": result.metrics,
            "pairs": [list(p) for p in result.pairs],
            "collections": collections,
            "statistics": _statistics_record(result),
            "rows": {"macro": MACRO, "micro": MICRO},
        }, {}

    def derived(staging: Path) -> Mapping[str, str]:
        for c, entry in zip(result.collections, collections):
            target = staging / entry["folder"]
            if not target.exists():  # a second run id tried: already copied
                shutil.copytree(c.folder, target)
        return {name: text for name in formats for name, text in [render_suite_report(open_suite(open_staged(staging)), name)]}

    return write_folder(out_folder(out), files, base_id, identified, derived, say)


def is_suite_folder(folder: ResultsFolder) -> bool:
    """Whether a folder read by :func:`harness.store.read.open_results` is a suite folder."""
    return folder.manifest.get("kind") == SUITE_KIND


@dataclass
class SuiteFolder:
    """A suite folder, read: its manifest and tables, each file verified against the manifest's hashes
    (and each collection's manifest against the suite's record of it) as it is first read."""

    folder: ResultsFolder

    @property
    def path(self) -> Path:
        return self.folder.path

    @property
    def manifest(self) -> dict[str, Any]:
        return self.folder.manifest

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in self.manifest["systems"]]

    @property
    def metrics(self) -> list[str]:
        return [str(m) for m in self.manifest["metrics"]]

    @property
    def collections(self) -> list[dict[str, Any]]:
        return list(self.manifest["collections"])

    def _csv(self, name: str) -> pd.DataFrame:
        path = self.folder.verified(name)
        try:
            return pd.read_csv(path, dtype={"collection": str, "system": str, "system_a": str, "system_b": str,
                                            "group": str}, keep_default_na=False, na_values=[""])
        except (OSError, ValueError) as exc:
            raise InputFileError(path, f"cannot be read as a table ({exc})",
                                 fix="restore the suite folder as retbench wrote it") from None

    def summary(self) -> pd.DataFrame:
        """``suite_summary.csv``, checked against the manifest's systems, metrics and collections
        (the table is hashed, the manifest is not: one edited by hand names what the table lacks)."""
        table = self._csv(SUMMARY_FILE)
        named = {"systems": (set(self.systems), set(table["system"]) if "system" in table else set()),
                 "metrics": (set(self.metrics), set(table.columns)),
                 "collections": ({str(c["name"]) for c in self.collections},
                                 set(table["collection"]) - {MACRO, MICRO} if "collection" in table else set())}
        for key, (listed, held) in named.items():
            unknown = sorted(listed - held) if key == "metrics" else sorted(listed ^ held)
            if unknown:
                raise InputFileError(self.path / MANIFEST_FILE, f"is damaged (edited?): its {key} do not match "
                                     f"{SUMMARY_FILE} ({', '.join(unknown)} is in one, not the other)",
                                     fix="restore the suite folder as retbench wrote it")
        return table

    def comparisons(self) -> pd.DataFrame:
        return self._csv(COMPARISONS_FILE)

    def table(self, name: str) -> pd.DataFrame:
        """The macro table of the registered reading ``name`` (its suite step's file)."""
        reading = READINGS.get(name)
        if reading is None or reading.suite is None:
            raise KeyError(f"no macro reading {name!r}; the registered ones are "
                           f"{', '.join(r.name for r in suite_readings()) or 'none'}")
        return self._csv(reading.suite.file)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Reading name -> its macro table, for each registered reading with a suite step whose file the folder holds."""
        return {reading.name: self.table(reading.name) for reading in suite_readings()
                if self.folder.holds(reading.suite.file)}  # type: ignore[union-attr]

    def collection(self, name: str) -> ResultsFolder:
        """The results folder of the collection ``name`` (its name, or its folder under collections/)."""
        for entry in self.collections:
            if name in (entry["name"], entry["folder"], entry["folder"].split("/")[-1]):
                path = self.path / entry["folder"]
                if not (path / MANIFEST_FILE).is_file():
                    raise InputFileError(path, "is missing from the suite folder", fix="restore the suite folder")
                if file_hash(path / MANIFEST_FILE) != entry["manifest_sha256"] and not self.folder.accept_edited:
                    raise InputFileError(path / MANIFEST_FILE, "was edited since retbench wrote the suite (its "
                                         "SHA-256 is not the one the suite's manifest records)",
                                         fix="restore it; or read it as it is with `accept_edited=True`")
                return open_results(path, accept_edited=self.folder.accept_edited, say=self.folder.say)
        names = ", ".join(e["name"] for e in self.collections)
        raise InputFileError(self.path, f"has no collection {name!r} (it has {names})", fix="name one of them")


def open_suite(path: str | PathLike[str] | ResultsFolder, *, accept_edited: bool = False) -> SuiteFolder:
    """The suite folder at ``path``; a folder that is not one is an :class:`~harness.errors.InputFileError`."""
    folder = path if isinstance(path, ResultsFolder) else open_results(path, accept_edited=accept_edited)
    if not is_suite_folder(folder):
        raise InputFileError(folder.path, "is a results folder of one collection, not a suite folder",
                             fix="name a folder that `bench compare --corpus A --corpus B` wrote")
    return SuiteFolder(folder)
