"""Read a stored results folder back: what a later tool (``bench gate``) needs from what
``bench compare`` wrote (:mod:`harness.results` documents the files).

Only four files are read, each on first use: ``manifest.json`` (the hashes of the data, the systems
and their run files, the metric conventions), ``per_query.csv`` (the stored per-query values),
``qrels.txt`` (the judgments of the evaluated queries) and the run files under ``runs/``. Anything
missing or malformed is an :class:`~corpora.InputFileError` naming the file and what to do; a folder
that holds results folders instead of being one says which to name.

For a tool that reads whole folders (``bench serve``): :func:`results_folders` lists the results
folders inside a folder, and :func:`read_table` reads any CSV file of one with its numbers exact.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd

from corpora import InputFileError, Qrels, RetbenchError, Run, UnknownNameError
from corpora.trec_io import read_qrels, read_run
from harness.results import QRELS_FILE

__all__ = ["MANIFEST_FILE", "PER_QUERY_FILE", "ResultsFolder", "open_results", "read_table", "results_folders"]

MANIFEST_FILE = "manifest.json"
PER_QUERY_FILE = "per_query.csv"
_RESTORE = "restore the file bench compare wrote, or make the folder again with bench compare"


@dataclass
class ResultsFolder:
    """One results folder, read lazily. ``manifest`` is the parsed ``manifest.json``."""

    path: Path
    manifest: dict[str, Any] = field(repr=False)

    def _entry(self, key: str) -> Any:
        if key not in self.manifest:
            raise InputFileError(self.path / MANIFEST_FILE, f"has no {key!r} entry", fix=_RESTORE)
        return self.manifest[key]

    @property
    def hashes(self) -> dict[str, str]:
        """The manifest's ``hashes`` (documents, queries, judgments, configuration, ...)."""
        return {str(k): str(v) for k, v in self._entry("hashes").items()}

    @property
    def systems(self) -> list[str]:
        """The system labels, in the manifest's order."""
        return [str(s["label"]) for s in self._entry("systems")]

    @property
    def rel_threshold(self) -> int:
        """The grade from which a judgment counted as relevant (recorded with every metric)."""
        thresholds = {m.get("rel_threshold") for m in self._entry("metrics")}
        if len(thresholds) != 1 or not isinstance(next(iter(thresholds)), int):
            raise InputFileError(self.path / MANIFEST_FILE, "does not record one integer rel_threshold for its "
                                 f"metrics (found {sorted(map(str, thresholds))})", fix=_RESTORE)
        return int(next(iter(thresholds)))

    def system(self, label: str | None = None) -> str:
        """``label`` when the folder holds it; without one, the folder's only system."""
        systems = self.systems
        if label is None:
            if len(systems) == 1:
                return systems[0]
            raise RetbenchError(f"results folder {self.path} holds {len(systems)} systems ({', '.join(systems)}), "
                                "so which one to read must be said. Fix: name one (bench gate: --system NAME)")
        if label not in systems:
            raise UnknownNameError(f"system in {self.path}", label, systems)
        return label

    def run_path(self, label: str) -> Path:
        """The run file of system ``label`` (``systems[].run_file`` maps a label to its file)."""
        for entry in self._entry("systems"):
            if entry.get("label") == label:
                return self.path / str(entry["run_file"])
        raise UnknownNameError(f"system in {self.path}", label, self.systems)

    def run(self, label: str) -> Run:
        """The ranking of system ``label`` as scored (trec_eval's order reads it back exactly)."""
        return read_run(self.run_path(label))

    @cached_property
    def qrels(self) -> Qrels:
        """The judgments of the evaluated queries (``qrels.txt``)."""
        return read_qrels(self.path / QRELS_FILE)

    @cached_property
    def per_query(self) -> pd.DataFrame:
        """``per_query.csv`` as strings (ids stay ids: ``007`` is not 7); values are parsed by the
        caller, so a stored double reads back to the same bits."""
        path = self.path / PER_QUERY_FILE
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        except FileNotFoundError:
            raise InputFileError(path, "file not found", fix=_RESTORE) from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise InputFileError(path, f"cannot be read as CSV ({exc})", fix=_RESTORE) from None
        missing = [c for c in ("system", "query_id") if c not in frame.columns]
        if missing:
            raise InputFileError(path, f"has no {', '.join(missing)} column", fix=_RESTORE)
        return frame


def _results_inside(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if (p / MANIFEST_FILE).is_file())
    except OSError:
        return []


def open_results(path: str | PathLike[str]) -> ResultsFolder:
    """The results folder at ``path`` (its manifest read now, the rest on use).

    A folder of results folders (``bench compare --out``'s) is an error that names the newest one
    (run ids start with their time), rather than a silent guess.
    """
    folder = Path(path)
    if not folder.exists():
        raise InputFileError(folder, "no such results folder", fix="check the path (a folder bench compare wrote)")
    if not folder.is_dir():
        raise InputFileError(folder, "is a file, not a results folder", fix="name the folder bench compare wrote")
    manifest_path = folder / MANIFEST_FILE
    if not manifest_path.is_file():
        inside = _results_inside(folder)
        if inside:
            raise InputFileError(folder, f"holds {len(inside)} results folders, not one", fix=f"name one of them, "
                                 f"e.g. the newest, {inside[-1]}")
        raise InputFileError(folder, f"is not a results folder (no {MANIFEST_FILE})",
                             fix="name a folder bench compare wrote")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputFileError(manifest_path, f"is not valid JSON ({exc.msg})", line=exc.lineno, fix=_RESTORE) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(manifest_path, f"cannot be read ({exc})", fix=_RESTORE) from None
    if not isinstance(manifest, dict):
        raise InputFileError(manifest_path, "is not a JSON object", fix=_RESTORE)
    return ResultsFolder(folder, manifest)


# ----- whole folders and any table of one (bench serve) ------------------------------------------


def results_folders(root: str | PathLike[str]) -> list[Path]:
    """The results folders directly inside ``root``, by name (run ids start with their time).

    Hidden entries (a run's ``.staging-…`` folder while it writes) and symbolic links are left out,
    so nothing outside ``root`` is ever listed.
    """
    names = []
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                    continue
                try:
                    manifest = os.lstat(os.path.join(entry.path, MANIFEST_FILE))
                except OSError:
                    continue
                if stat.S_ISREG(manifest.st_mode):  # a regular file: a link is not followed out
                    names.append(entry.name)
    except OSError:
        return []
    base = Path(root)
    return [base / name for name in sorted(names)]


def _numbers(column: pd.Series, path: Path, name: str) -> pd.Series:
    """A column of numbers as written: integers when every cell is one (empty -> None), else floats
    parsed by Python's ``float`` (exact for every float repr; empty -> NaN)."""
    cells = column.tolist()
    try:
        if all(c == "" or c.lstrip("-").isdigit() for c in cells):
            return pd.Series([int(c) if c else None for c in cells], index=column.index, dtype=object)
        return pd.Series([float(c) if c else math.nan for c in cells], index=column.index, dtype="float64")
    except ValueError:
        raise InputFileError(path, f"column {name!r} holds a value that is not a number", fix=_RESTORE) from None


def read_table(folder: ResultsFolder, name: str, text_columns: Sequence[str] = ()) -> pd.DataFrame:
    """The CSV file ``name`` of ``folder``: ``text_columns`` as strings (ids stay ids; an empty cell
    is ``""``), every other column as numbers that read back to the bits written (:func:`_numbers`).
    A missing or malformed file is an :class:`~corpora.InputFileError` naming it."""
    path = folder.path / name
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputFileError(path, "file not found (made by an older bench compare?)", fix=_RESTORE) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputFileError(path, f"cannot be read as CSV ({exc})", fix=_RESTORE) from None
    for column in frame.columns:
        if column not in text_columns:
            frame[column] = _numbers(frame[column], path, column)
    return frame
