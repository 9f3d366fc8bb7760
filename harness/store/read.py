"""Read a stored results folder back: what later tools (``bench gate``, ``bench report``, the
dashboard) need from what ``bench compare`` wrote (:mod:`harness.store.write` documents the files).

The manifest is read when the folder is opened; every other file on first use: ``per_query.csv``
(as text, so ids stay ids and the caller parses values), ``qrels.txt``, the run files under
``runs/``, and the tables :data:`TABLES` names (``summary.csv``, ``comparisons.csv``, ...), whose
numbers are parsed with Python's ``float`` (correctly rounded: a stored double reads back to the
same bits) and whose counts are integers (empty = missing). Anything missing or malformed is an
:class:`~corpora.InputFileError` naming the file (and the line of a bad cell) and what to do; a
folder that holds results folders instead of being one says which to name, and so does a suite's
folder given to a reader of one comparison (:func:`one_comparison`).

Verification: every file is checked, on first use, against the SHA-256 the manifest records for it
(its ``files``: :mod:`harness.store.folder`). A file whose bytes differ (edited or truncated
since), or that the manifest does not record, is refused with an :class:`~corpora.InputFileError`
naming it, unless the folder is opened with ``accept_edited=True`` (``--accept-edited`` on the
command line), which reads it as it is with a warning: for a user who edited it on purpose. Every
file must be a regular file (a link is followed to one): a folder, a pipe or a device in a file's
place is refused before it is opened (:func:`corpora.input_files.check_input_file`), so no reader
ever waits on one. The manifest itself cannot record its own hash: it is checked as a structure
instead when the folder is opened (:data:`MANIFEST_SHAPES`, and a ``systems`` list that names fewer
run files than ``files`` records is refused as cut short). A folder written before the hashes
were recorded (a manifest without ``files``) is read as it is, with one warning that its files
cannot be verified. A staging folder (``.staging-…``: a run still writing, or killed while writing)
is never read as results.

For a tool that reads whole folders (``bench serve``): :func:`results_folders` lists the results
folders inside a folder.
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from corpora import InputFileError, Qrels, RetbenchError, Run, UnknownNameError
from corpora.input_files import check_input_file
from corpora.trec_io import read_qrels, read_run
from harness.store.write import QRELS_FILE, results_texts
from harness.store.folder import FILES_KEY, MANIFEST_FILE, Say, file_hash, is_staging, warn_on_stderr
from harness.core.readings import PER_QUERY, READINGS, Reading

if TYPE_CHECKING:
    from harness.core.record import CompareRecord

__all__ = ["MANIFEST_FILE", "PER_QUERY_FILE", "TABLES", "ResultsFolder", "Table", "one_comparison", "open_record",
           "open_results", "open_staged", "read_table", "results_folders"]

PER_QUERY_FILE = READINGS[PER_QUERY].file
# bench compare and bench tune both write folders read here: the fix names neither, but where to look.
_RESTORE = ("restore the file retbench wrote, or make the folder again with the command that wrote it "
            "(the manifest's command line)")


@dataclass(frozen=True)
class Each:
    """In a :data:`MANIFEST_SHAPES` declaration: a JSON object (of any keys) whose values all have ``shape``."""

    shape: Any


@dataclass(frozen=True)
class Some:
    """In a :data:`MANIFEST_SHAPES` declaration: a list of at least one item, each of ``shape``."""

    shape: Any


@dataclass(frozen=True)
class Maybe:
    """In a :data:`MANIFEST_SHAPES` declaration: a key that may be missing (or null), else has ``shape``."""

    shape: Any


@dataclass(frozen=True)
class Omissible:
    """In a :data:`MANIFEST_SHAPES` declaration: a key that may be missing, else has ``shape`` (null
    is not ``shape``: a reader takes a missing key's default, never a null)."""

    shape: Any


_Integer = int  # JSON's true and false are not integers here, though Python's bool is one
_Number = (int, float)
_COLLECTION = {"name": str, "folder": str, "manifest_sha256": str, "queries_evaluated": _Integer, "hashes": Each(str),
               "documents": Omissible(_Integer)}

#: What the readers take from a folder's ``manifest.json``, by the folder's ``kind`` (a compare
#: folder has none): each key a reader uses, with its shape: a type (or a tuple of types), a list
#: ``[item]`` (each item has that shape), an object ``{key: shape}`` (each key present),
#: :class:`Some`, :class:`Each`, :class:`Maybe` or :class:`Omissible`. The manifest cannot hold its own hash, so a manifest edited by
#: hand or cut short is checked as a structure when the folder is opened (:func:`check_shape`):
#: what is missing or of the wrong type is one error naming the key, never a traceback later.
MANIFEST_SHAPES: dict[str, dict[str, Any]] = {
    "compare": {
        "run_id": str, "systems": Some({"label": str, "run_file": str, "as_run": Maybe(str)}),
        "metrics": Some({"name": str, "rel_threshold": _Integer}), "hashes": Each(str), FILES_KEY: Maybe(Each(str)),
        "statistics": {"alpha": _Number, "confidence": _Number, "bootstrap_samples": _Integer, "seed": _Integer,
                       "baseline": Maybe(str), "randomisation_test": {"permutations": _Integer}},
        "corpus": {"queries_excluded": Omissible(list)}, "analyzer": Maybe(str), "depth": _Integer,
        "diagnosis": {"fail_rank": _Integer, "categories": Each(str)},
        "conventions": Omissible({"unjudged": Omissible({"reading": str})}),
        "warnings": Maybe([str]), "notes": Maybe([str]), "versions": Omissible(dict),
        "command_line": Omissible(list), "rescore": Maybe(dict),
    },
    "suite": {
        "run_id": str, "systems": Some(str), "metrics": Some(str), "collections": Some(_COLLECTION),
        "statistics": {"alpha": _Number, "bootstrap_samples": _Integer}, FILES_KEY: Maybe(Each(str)),
        "versions": Omissible(dict), "command_line": Omissible(list),
    },
    "tune": {"run_id": str, FILES_KEY: Maybe(Each(str))},
}


def _shape_problem(value: Any, shape: Any, where: str) -> str | None:
    """Why ``value`` (at ``where``, e.g. ``systems[1].label``) does not have ``shape``, or None."""
    if isinstance(shape, Maybe):
        return None if value is None else _shape_problem(value, shape.shape, where)
    if isinstance(shape, Omissible):
        return _shape_problem(value, shape.shape, where)
    if isinstance(shape, (list, Some)):
        if not isinstance(value, list):
            return f"{where} is not a list"
        if isinstance(shape, Some) and not value:
            return f"{where} is an empty list"
        item = shape.shape if isinstance(shape, Some) else shape[0]
        return next((p for i, one in enumerate(value) if (p := _shape_problem(one, item, f"{where}[{i}]"))), None)
    if isinstance(shape, (dict, Each)):
        if not isinstance(value, dict):
            return f"{where} is not an object"
        if isinstance(shape, Each):
            return next((p for k, v in value.items() if (p := _shape_problem(v, shape.shape, f"{where}.{k}"))), None)
        for key, inner in shape.items():
            entry = f"{where}.{key}" if where else key
            if key not in value and not isinstance(inner, (Maybe, Omissible)):
                return f"{entry} is missing"
            if key not in value:
                continue
            problem = _shape_problem(value.get(key), inner, entry)
            if problem:
                return problem
        return None
    types = shape if isinstance(shape, tuple) else (shape,)
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        names = " or ".join("an integer" if t is int else "a number" if t is float else
                            {str: "a string", dict: "an object", list: "a list"}.get(t, t.__name__) for t in types)
        return f"{where} is not {names} (it is {json.dumps(value)[:40]})"
    return None


def check_shape(path: Path, manifest: Any, shape: dict[str, Any]) -> None:
    """Refuse a manifest (read from ``path``) that does not have ``shape`` (see :data:`MANIFEST_SHAPES`)."""
    problem = _shape_problem(manifest, shape, "")
    if problem is not None:
        raise InputFileError(path, f"is damaged (edited or cut short?): its entry {problem}", fix=_RESTORE)


@dataclass(frozen=True)
class Table:
    """How one CSV file of a results folder reads back: ``text`` columns stay strings, ``integers``
    become nullable integers (``Int64``; an empty cell is missing), every other column is a float
    (an empty cell is NaN). ``text`` and ``integers`` must all be present."""

    file: str
    text: tuple[str, ...]
    integers: tuple[str, ...] = ()


def _tables() -> dict[str, Reading]:
    """The registered readings (:data:`harness.core.readings.READINGS`) a folder reads as parsed
    tables: every one but ``per_query`` (read as text, :attr:`ResultsFolder.per_query`)."""
    return {name: reading for name, reading in READINGS.items() if name != PER_QUERY}


class _Tables(Mapping[str, Reading]):
    """:data:`TABLES`: a live view of the registry, so a reading registered after this module was
    imported is a table of every folder too."""

    def __getitem__(self, name: str) -> Reading:
        if name == PER_QUERY:  # a lookup, not a copy of the registry
            raise KeyError(name)
        return READINGS[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_tables())

    def __len__(self) -> int:
        return len(_tables())


#: The tables of a results folder, by the attribute of :class:`ResultsFolder` (or the name
#: :meth:`ResultsFolder.table` takes) that reads each: the registered readings but ``per_query``.
TABLES: Mapping[str, Reading] = _Tables()


def _read_text_csv(path: Path) -> pd.DataFrame:
    """A CSV file with every cell as text (``keep_default_na=False``: a system called ``NA`` stays one)."""
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputFileError(path, "file not found", fix=_RESTORE) from None
    except OSError as exc:
        raise InputFileError(path, f"cannot be read ({exc.strerror or exc})", fix=_RESTORE) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputFileError(path, f"cannot be read as CSV ({exc})", fix=_RESTORE) from None


def _parse_text_csv(path: Path, text: str) -> pd.DataFrame:
    try:
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputFileError(path, f"cannot be read as CSV ({exc})", fix=_RESTORE) from None


def _number(cell: str, integer: bool) -> object:
    if integer:
        return pd.NA if cell == "" else int(cell)
    return float("nan") if cell == "" else float(cell)


def _parse_column(path: Path, frame: pd.DataFrame, column: str, integer: bool) -> pd.Series:
    """One column's cells as numbers; a cell that is not one names its line (the header is line 1)."""
    cells = frame[column].tolist()
    try:
        parsed = [_number(cell, integer) for cell in cells]
    except ValueError:
        for row, cell in enumerate(cells):  # find the first bad cell, to name its line
            try:
                _number(cell, integer)
            except ValueError:
                kind = "an integer" if integer else "a number"
                raise InputFileError(path, f"column {column!r}: {cell!r} is not {kind}", line=row + 2,
                                     fix=_RESTORE) from None
        raise
    return pd.Series(parsed, index=frame.index, dtype="Int64" if integer else "float64", name=column)


def read_table(path: Path, table: Table | Reading, text: str | None = None) -> pd.DataFrame:
    """``path`` read as ``table`` says (see :class:`Table`; a :class:`~harness.core.readings.Reading`
    declares the same ``text`` and ``integers``); ``text``: the file's content, already in memory
    (``path`` then only names it in an error)."""
    frame = _read_text_csv(path) if text is None else _parse_text_csv(path, text)
    missing = [c for c in (*table.text, *table.integers) if c not in frame.columns]
    if missing:
        raise InputFileError(path, f"has no {', '.join(map(repr, missing))} column", fix=_RESTORE)
    for column in frame.columns:
        if column not in table.text:
            frame[column] = _parse_column(path, frame, column, column in table.integers)
    return frame


_EDITED_FIX = f"{_RESTORE}; if it was edited on purpose, read it as it is with `accept_edited=True`"


@dataclass
class ResultsFolder:
    """One results folder, read lazily. ``manifest`` is the parsed ``manifest.json``.

    Each file is verified on first use (:meth:`verified`, see the module docstring); with
    ``accept_edited`` an edited one is read with a warning to ``say`` instead of refused.
    """

    path: Path
    manifest: dict[str, Any] = field(repr=False)
    accept_edited: bool = False
    say: Say = field(default=warn_on_stderr, repr=False, compare=False)
    #: The folder's files in memory (name -> text) for a folder made from a fresh result
    #: (:func:`open_record`), which has no files on disk to verify; None: read from ``path``.
    texts: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    _tables: dict[str, pd.DataFrame] = field(default_factory=dict, init=False, repr=False, compare=False)
    _checked: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    def verified(self, relative: str) -> Path:
        """The path of the folder's file ``relative`` (a POSIX path, as the manifest names it), once
        its bytes are proved to be those the manifest's ``files`` records (see the module docstring).
        A missing file is left to the caller's reading (``file not found``)."""
        path = self.path / relative
        if self.texts is not None:
            raise ValueError(f"{relative} of the in-memory results of {self.path.name} is read by _csv, not from a path")
        if relative in self._checked or not os.path.lexists(path):
            return path
        # a folder, a pipe, a device in a file's place is refused before it is opened: never waited on
        check_input_file(path, regular=True, fix=_RESTORE)
        recorded = self.manifest.get(FILES_KEY)
        problem = None
        if recorded is None:
            if not self._checked:  # once per folder
                self.say(f"{self.path}: its {MANIFEST_FILE} records no file hashes (written by a retbench before "
                         "they were recorded), so its files cannot be verified; read as they are")
        elif not isinstance(recorded, dict):
            raise InputFileError(self.path / MANIFEST_FILE, f"its {FILES_KEY!r} entry is not an object of file -> "
                                 "sha256:<hex>", fix=_RESTORE)
        elif relative not in recorded:
            problem = f"is not one of the files its {MANIFEST_FILE} records (added since retbench wrote the folder)"
        else:
            try:
                actual = file_hash(path)
            except OSError as exc:
                raise InputFileError(path, f"cannot be read ({exc.strerror or exc})", fix=_RESTORE) from None
            if actual != recorded[relative]:
                problem = (f"was edited or truncated since retbench wrote it (its SHA-256 is not the one "
                           f"{MANIFEST_FILE} records)")
        if problem is not None:
            if not self.accept_edited:
                raise InputFileError(path, problem, fix=_EDITED_FIX)
            self.say(f"{path}: {problem}; read as it is (accept_edited)")
        self._checked.add(relative)
        return path

    def _csv(self, spec: Table | Reading) -> pd.DataFrame:
        """The CSV file ``spec.file`` parsed as ``spec`` says, from memory or from the verified file."""
        if self.texts is None:
            return read_table(self.verified(spec.file), spec)
        path = self.path / spec.file
        if spec.file not in self.texts:
            raise InputFileError(path, "file not found (the result has no such reading)", fix=_RESTORE)
        return read_table(path, spec, self.texts[spec.file])

    def holds(self, relative: str) -> bool:
        """Whether the folder has the file ``relative`` (one written before a reading was registered has not)."""
        # whatever lies at its name: a file replaced by a folder or a pipe is refused when read, not skipped
        return relative in self.texts if self.texts is not None else os.path.lexists(self.path / relative)

    def _from_disk(self, relative: str) -> Path:
        if self.texts is not None:
            raise RetbenchError(f"the in-memory results of {self.path.name} hold no {relative}. Fix: write the "
                                "result (result.write(out)) and open that folder")
        return self.verified(relative)

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
                                "so which one to read must be said. Fix: name one (`system=NAME`)")
        if label not in systems:
            raise UnknownNameError(f"system in {self.path}", label, systems)
        return label

    def run_path(self, label: str) -> Path:
        """The run file of system ``label`` (``systems[].run_file`` maps a label to its file)."""
        return self.path / self._run_file(label)

    def _run_file(self, label: str) -> str:
        for entry in self._entry("systems"):
            if entry.get("label") == label:
                return str(entry["run_file"])
        raise UnknownNameError(f"system in {self.path}", label, self.systems)

    def run(self, label: str) -> Run:
        """The ranking of system ``label`` as scored (trec_eval's order reads it back exactly)."""
        return read_run(self._from_disk(self._run_file(label)))

    @cached_property
    def qrels(self) -> Qrels:
        """The judgments of the evaluated queries (``qrels.txt``)."""
        if self.texts is not None:  # as format_qrels wrote it: query, 0, document, grade per line
            judged: dict[str, dict[str, int]] = {}
            for line in self.texts[QRELS_FILE].splitlines():
                query, _, document, grade = line.split()
                judged.setdefault(query, {})[document] = int(grade)
            return Qrels(judged)
        return read_qrels(self._from_disk(QRELS_FILE))

    @cached_property
    def per_query(self) -> pd.DataFrame:
        """``per_query.csv`` as strings (ids stay ids: ``007`` is not 7); values are parsed by the
        caller, so a stored double reads back to the same bits."""
        if self.texts is None:
            path = self.verified(PER_QUERY_FILE)
            frame = _read_text_csv(path)
        else:
            path = self.path / PER_QUERY_FILE
            frame = _parse_text_csv(path, self.texts[PER_QUERY_FILE])
        missing = [c for c in ("system", "query_id") if c not in frame.columns]
        if missing:
            raise InputFileError(path, f"has no {', '.join(missing)} column", fix=_RESTORE)
        return frame

    @cached_property
    def per_query_values(self) -> pd.DataFrame:
        """``per_query.csv`` with its metric columns as floats and ``first_relevant_rank`` as a
        nullable integer (``system`` and ``query_id`` stay text)."""
        return self._csv(READINGS[PER_QUERY])

    def table(self, name: str) -> pd.DataFrame:
        """The table ``name`` (a key of :data:`TABLES`), read and parsed once."""
        if name not in TABLES:
            raise UnknownNameError("results table", name, list(TABLES))
        if name not in self._tables:
            self._tables[name] = self._csv(TABLES[name])
        return self._tables[name]

    @property
    def summary(self) -> pd.DataFrame:
        """``summary.csv``: ``system``, then one float column per metric."""
        return self.table("summary")

    @property
    def comparisons(self) -> pd.DataFrame:
        """``comparisons.csv``: the paired comparisons with their verdicts, effect sizes and power."""
        return self.table("comparisons")

    def __getattr__(self, name: str) -> pd.DataFrame:
        # any other registered reading by its name (folder.risk_coverage): only called when no attribute has it
        if name.startswith("_") or name not in TABLES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.table(name)

    @property
    def diagnosis(self) -> pd.DataFrame:
        """``diagnosis.csv``: per system and failed query, its category, rank and first result."""
        return self.table("diagnosis")

    @property
    def metric_names(self) -> list[str]:
        """The metrics, in the manifest's (``--metrics``) order."""
        return [str(m["name"]) for m in self._entry("metrics")]


def _results_inside(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if (p / MANIFEST_FILE).is_file())
    except OSError:
        return []


def open_results(path: str | PathLike[str], *, accept_edited: bool = False,
                 say: Say = warn_on_stderr) -> ResultsFolder:
    """The results folder at ``path`` (its manifest read now, the rest on use, each file verified
    against the manifest's hashes as it is first read: see the module docstring).

    ``accept_edited=True`` reads a file edited since it was written (or one the manifest does not
    record) as it is, with a warning to ``say``, instead of refusing it. A folder of results folders
    (``bench compare --out``'s) is an error that names the newest one (run ids start with their
    time), rather than a silent guess; so is a staging folder (``.staging-…``), which is never results.
    """
    folder = Path(path)
    if is_staging(folder):
        raise InputFileError(folder, "is the staging folder of a run that did not finish (still writing, or killed "
                             "while writing), not results", fix="name a finished results folder (its name is the run "
                             "id); the next run into the same folder removes a killed run's staging folder")
    return _open(folder, accept_edited, say)


#: What a folder of another ``kind`` than a comparison's is (its manifest's ``kind``), for the error
#: of a reader that needs one comparison's results (:func:`one_comparison`).
_OTHER_KINDS = {"suite": "a suite folder (bench compare with several --corpus)", "tune": "a tune folder (bench tune)"}


def one_comparison(folder: ResultsFolder) -> ResultsFolder:
    """``folder`` when it holds the results of one comparison (``bench compare`` on one collection);
    a folder of another kind (a suite's, whose collections' results folders lie inside it, or a
    tune's) is an :class:`~corpora.InputFileError` saying what it is and naming the results folders
    inside it, for every reader of one comparison (pool, agree, gate of one side)."""
    kind = folder.manifest.get("kind")
    if kind is None or kind == "compare":
        return folder
    what = _OTHER_KINDS.get(str(kind), f"a folder of kind {kind!r}")
    inside = [found for sub in sorted(p for p in folder.path.iterdir() if p.is_dir())
              for found in _results_inside(sub)] if folder.texts is None and folder.path.is_dir() else []
    fix = (f"name one of the results folders inside it ({', '.join(map(str, inside))})" if inside
           else "name a results folder that bench compare wrote")
    raise InputFileError(folder.path, f"is {what}, not the results folder of one comparison", fix=fix)


def open_staged(path: str | PathLike[str]) -> ResultsFolder:
    """The staging folder ``path`` of a run that is writing it, complete but for the files made from
    it (a writer's ``derived`` reports): :func:`open_results` refuses a staging folder."""
    return _open(Path(path), False, warn_on_stderr)


def open_record(result: CompareRecord, command_line: list[str] | None = None) -> ResultsFolder:
    """The results folder :func:`harness.store.write.write_results` would write for ``result`` now,
    read from memory (no file is written; its runs and ``report.txt``, which no report reads, are left
    out): what a report of a fresh result reads, so it is the report of that folder. Its ``path`` is
    its run id (it names the folder in an error)."""
    run_id, manifest, texts = results_texts(result, command_line)
    return ResultsFolder(Path(run_id), manifest, texts=texts)


def _open(folder: Path, accept_edited: bool, say: Say) -> ResultsFolder:
    if not folder.exists():
        raise InputFileError(folder, "no such results folder", fix="check the path (a folder bench compare wrote)")
    if not folder.is_dir():
        raise InputFileError(folder, "is a file, not a results folder", fix="name the folder bench compare wrote")
    manifest_path = folder / MANIFEST_FILE
    if not os.path.lexists(manifest_path):
        inside = _results_inside(folder)
        if inside and (folder.parent / MANIFEST_FILE).is_file():  # a suite's collections/: not runs by time
            raise InputFileError(folder, f"holds the results folders of {len(inside)} collections of the suite "
                                 f"{folder.parent}, not one", fix=f"name one of them ({', '.join(map(str, inside))}), "
                                 "or the suite folder for bench report and bench gate")
        if inside:
            raise InputFileError(folder, f"holds {len(inside)} results folders, not one", fix=f"name one of them, "
                                 f"e.g. the newest, {inside[-1]}")
        raise InputFileError(folder, f"is not a results folder (no {MANIFEST_FILE})",
                             fix="name a folder bench compare wrote")
    check_input_file(manifest_path, regular=True, fix=_RESTORE)  # a folder or a pipe in its place: never opened
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputFileError(manifest_path, f"is not valid JSON ({exc.msg})", line=exc.lineno, fix=_RESTORE) from None
    except (OSError, UnicodeDecodeError, RecursionError) as exc:
        raise InputFileError(manifest_path, f"cannot be read ({exc})", fix=_RESTORE) from None
    if not isinstance(manifest, dict):
        raise InputFileError(manifest_path, "is not a JSON object", fix=_RESTORE)
    kind = manifest.get("kind", "compare")
    if not isinstance(kind, str):
        raise InputFileError(manifest_path, "is damaged: its entry kind is not a string", fix=_RESTORE)
    if kind in MANIFEST_SHAPES:
        check_shape(manifest_path, manifest, _compare_shape() if kind == "compare" else MANIFEST_SHAPES[kind])
    if kind == "compare":
        _check_systems_complete(manifest_path, manifest)
    return ResultsFolder(folder, manifest, accept_edited, say)


def _compare_shape() -> dict[str, Any]:
    """A compare manifest's shape with each registered reading's record (its ``record_shape``) where
    the writer puts it: at the top level, or inside the entry its ``record_in`` names."""
    shape = dict(MANIFEST_SHAPES["compare"])
    for reading in READINGS.values():
        if reading.record_shape is None:
            continue
        if reading.record_in:
            shape[reading.record_in] = {**shape.get(reading.record_in, {}), **reading.record_shape()}
        else:
            shape.update(reading.record_shape())
    return shape


def _check_systems_complete(path: Path, manifest: dict[str, Any]) -> None:
    """A ``systems`` list cut short (an entry deleted by hand) still has the right shape, but the
    run files the manifest's hashes record say how many systems the folder holds."""
    recorded = manifest.get(FILES_KEY) or {}
    named = {str(entry["run_file"]) for entry in manifest["systems"]}
    unnamed = sorted(f for f in recorded if f.startswith("runs/") and f.endswith(".trec") and f not in named)
    if unnamed:
        raise InputFileError(path, f"is damaged (edited or cut short?): its systems list names {len(named)} "
                             f"system(s), but it records the run file(s) of more ({', '.join(unnamed)} is no "
                             "system's)", fix=_RESTORE)
    baseline = manifest["statistics"].get("baseline")
    labels = [str(entry["label"]) for entry in manifest["systems"]]
    if baseline is not None and baseline not in labels:
        raise InputFileError(path, f"is damaged (edited?): its entry statistics.baseline {json.dumps(baseline)[:40]} "
                             f"is none of its systems ({', '.join(labels)})", fix=_RESTORE)


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
