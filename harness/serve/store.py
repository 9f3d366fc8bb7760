"""The results folders under one directory, as the evals API answers about them (no web framework here).

Which runs
    Every results folder directly inside ``root`` (:func:`harness.store.read.results_folders`:
    hidden staging folders and symbolic links are left out), listed again on every call, so a run
    written while the server runs appears at once; ``root`` itself when it is one results folder.
    A suite folder (``root`` itself, or one inside it) is a suite (:meth:`RunStore.suites`), and each
    of its collections' results folders (``collections/<name>``) is a run too, whose id is
    ``<suite id>~<name>`` (:data:`SUITE_RUN`) and whose summary adds ``suite`` and ``collection``. A
    run id is looked up among the ids the directories list and is never joined to a path as given,
    so ``..``, a slash or an absolute path can only be an unknown run (:class:`UnknownRun`).
Nothing outside ``root``
    Before a run is read, its folder is walked, linked subfolders included: a symbolic link that
    leads outside ``root`` (a file, a subfolder, the manifest), or an entry that is neither a file
    nor a folder (a pipe, a device), withholds the whole run (:class:`NotStored`): it is not listed,
    and its id answers what was found and how to fix it. A link that stays inside ``root`` is read.
What is read
    Only files ``bench compare`` wrote, with :mod:`harness.store.read` (which refuses a file
    edited since, unless ``accept_edited``): the manifest, what each registered reading with a part
    in ``bench serve`` reads (:class:`~harness.core.readings.ServeView`: the metrics card's per-result
    lines and rollups, risk–coverage's tables), ``comparisons.csv``, ``per_query.csv`` and
    ``diagnosis.csv``, and the rows of any reading of the registry
    (:data:`harness.core.readings.READINGS`) the folder holds (:meth:`RunStore.readings`,
    :meth:`RunStore.reading`). Nothing is re-computed: a number served is a number stored.
Cache
    A results folder never changes once written, so each answer is kept, keyed by the run id and
    the manifest's modification time and size; a folder replaced under the same name is read again.
Errors
    A message names files relative to ``root`` (``run-id/per_query.csv``), never where ``root`` is on
    the server; a damaged file or a manifest without the shape ``bench compare`` writes is
    :class:`NotStored`, saying which run and what to do.
JSON
    Keys are camelCase, as the metrics card writes them; an empty CSV cell is ``null``, and an
    infinite value is the string ``"inf"`` or ``"-inf"`` (JSON has no infinity; the CSV writes the same).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd

import harness.readings  # noqa: F401  (registers the built-in readings a folder holds)
from corpora import InputFileError
from harness.store.read import MANIFEST_FILE, ResultsFolder, open_results, results_folders
from harness.core.readings import PER_QUERY, READINGS, served, served_results, suite_readings
from harness.suite.report import render_suite_report
from harness.suite.view import CollectionEntry
from harness.suite.store import COLLECTIONS_FOLDER, SUITE_KIND, open_suite

__all__ = ["SUITE_RUN", "NotStored", "RunStore", "UnknownReading", "UnknownRun", "camel", "dumps", "facet_filter", "json_value"]

#: The id of a suite's collection as a run: the suite's id and the collection's folder name, joined by a
#: character that a URL path carries as it is and that a collection's folder name never holds.
SUITE_RUN = "{suite}~{collection}"


class UnknownReading(LookupError):
    """A reading name the registry does not declare (the API answers 404, listing those it does)."""

    def __init__(self, name: str):
        super().__init__(f"no reading {name!r}. Fix: use one of {', '.join(READINGS)}")


class UnknownRun(LookupError):
    """No results folder of that id under the served directory."""

    def __init__(self, run_id: str):
        super().__init__(f"no run {run_id!r} under the served results folder. Fix: list the runs at /api/v1/evals/runs")


class NotStored(LookupError):
    """The run lacks a file the answer needs (a folder written by an older ``bench compare``, or a damaged one)."""


def camel(name: str) -> str:
    """``ci_low`` -> ``ciLow``; a name already camelCase is kept.

    >>> camel("e_aurc"), camel("n_queries"), camel("recallAtK")
    ('eAurc', 'nQueries', 'recallAtK')
    """
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_value(value: Any) -> Any:
    """A cell as JSON: NaN -> None, +-inf -> ``"inf"``/``"-inf"``, numpy scalars -> Python ones.

    >>> json_value(float("nan")), json_value(-math.inf), json_value(np.int64(3)), json_value("x")
    (None, '-inf', 3, 'x')
    """
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if value is pd.NA:
        return None
    return value


def _json(value: Any) -> Any:
    """A reading's served entry as JSON: each key camelCase (:func:`camel`), each cell :func:`json_value`."""
    if isinstance(value, Mapping):
        return {camel(str(k)): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return json_value(value)


def _records(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    columns = list(columns) if columns is not None else list(frame.columns)
    return [{camel(c): json_value(v) for c, v in zip(columns, row)}
            for row in frame[columns].itertuples(index=False, name=None)]


class RunStore:
    """Read-only access to the results folders under ``root`` (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str], *, accept_edited: bool = False,
                 explain: Callable[[str], str] | None = None):
        self.root = Path(os.path.abspath(root))  # absolute, so a message's paths can be made relative to it
        self._real_root = os.path.realpath(self.root)
        self.accept_edited = accept_edited  # see harness.store.read.open_results
        #: rewrites a served error's fix in the words of whoever started the server (``bench serve``
        #: names its flags where the library names ``accept_edited=True``); None: as the library says it
        self._explain = explain or (lambda text: text)
        self._cache: dict[tuple[str, str], tuple[tuple[int, int], Any]] = {}
        bases = sorted({str(self.root), self._real_root}, key=len, reverse=True)
        self._bases = re.compile("(?:" + "|".join(map(re.escape, bases)) + r")(?:(?P<sep>[\\/])|(?![\w.-]))")

    def shown(self, text: str) -> str:
        """``text`` with every path under ``root`` made relative to it (``root`` itself is ``.``).

        >>> RunStore("/srv/results").shown("/srv/results/run/per_query.csv: file not found (/srv/results)")
        'run/per_query.csv: file not found (.)'
        """
        return self._explain(self._bases.sub(lambda match: "" if match["sep"] else ".", text))

    # ----- which runs ---------------------------------------------------------------------------

    def _root_is_a_run(self) -> bool:
        return (self.root / MANIFEST_FILE).is_file()

    def _folders(self) -> list[Path]:
        return [self.root] if self._root_is_a_run() else results_folders(self.root)

    def _locate(self, run_id: str) -> Path:
        """The folder of ``run_id``: a name the directory lists, never a path built from the request."""
        return self._find(run_id)[0]

    def _find(self, run_id: str) -> tuple[Path, tuple[str, str] | None]:
        """:meth:`_listed`'s folder of ``run_id`` and (suite id, collection name) or None."""
        for listed_id, folder, in_suite in self._listed():
            if listed_id == run_id:
                return folder, in_suite
        raise UnknownRun(run_id)

    def _listed(self) -> list[tuple[str, Path, tuple[str, str] | None]]:
        """(id, folder, (suite id, collection name) or None) of every run and suite under ``root``: the
        folders :meth:`_folders` lists and the collections' folders of each suite among them (those its
        manifest names that its ``collections`` folder lists)."""
        listed: list[tuple[str, Path, tuple[str, str] | None]] = []
        for folder in self._folders():
            listed.append((folder.name, folder, None))
            if not (folder / COLLECTIONS_FOLDER).is_dir():
                continue
            try:
                named = self._cached(folder, "suite-collections", _suite_collections, SUITE_KIND)
            except (NotStored, UnknownRun):
                continue  # not a suite, or one that cannot be read: its collections are not offered
            present = {inside.name: inside for inside in results_folders(folder / COLLECTIONS_FOLDER)}
            listed += [(SUITE_RUN.format(suite=folder.name, collection=name), present[name], (folder.name, label))
                       for name, label in named if name in present]
        return listed

    @staticmethod
    def _stamp(folder: Path) -> tuple[int, int]:
        found = os.stat(os.path.join(folder, MANIFEST_FILE))  # os.path: a listing of 1,000 runs stats each
        return found.st_mtime_ns, found.st_size

    def _confine(self, folder: Path) -> None:
        """Raise :class:`NotStored` if ``folder`` holds a way out of ``root`` (see the module docstring).

        Walked again before every answer that is read rather than cached: a link made since the last
        walk is found before the answer that would read it (a walk is a few dozen entries; an answer
        reads whole tables)."""
        found = _way_out(self._real_root, str(folder), {os.path.realpath(folder)})
        if found is not None:
            path, problem = found
            raise NotStored(self.shown(f"run {folder.name!r} is not served: {path} {problem}. Fix: put the file "
                                       "itself in the run folder (copy it over the link), or remove it"))

    def _cached(self, folder: Path, kind: str, build: Callable[[ResultsFolder], Any], served: str = "compare",
                run_id: str | None = None) -> Any:
        run_id = run_id or folder.name
        key = (str(folder), kind)
        try:
            stamp = self._stamp(folder)
        except OSError:
            raise UnknownRun(run_id) from None
        held = self._cache.get(key)
        if held is not None and held[0] == stamp:
            return held[1]
        self._confine(folder)
        try:
            opened = open_results(folder, accept_edited=self.accept_edited)
            if opened.manifest.get("kind", "compare") != served:  # e.g. a bench tune folder: not an eval run
                raise UnknownRun(run_id)
            value = build(opened)
        except InputFileError as exc:
            raise NotStored(self.shown(f"run {run_id!r}: {exc}")) from None
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            # a manifest or table without the shape bench compare writes (an entry missing, a list
            # where an object belongs): the run's own fault, said as such, not a server error
            raise NotStored(self.shown(f"run {run_id!r}: its files do not have the shape bench compare writes "
                                       f"({type(exc).__name__}: {exc}). Fix: restore the folder bench compare "
                                       "wrote, or run bench compare again")) from None
        self._cache[key] = (stamp, value)
        return value

    def _answer(self, run_id: str, kind: str, build: Callable[[ResultsFolder], Any]) -> Any:
        return self._cached(self._locate(run_id), kind, build, run_id=run_id)

    # ----- the answers ----------------------------------------------------------------------------

    def runs(self) -> list[dict[str, Any]]:
        """One summary per run (id, time, corpus, systems, metrics, defaultRetrievalK), newest first."""
        listed = []
        for run_id, folder, in_suite in self._listed():
            try:
                listed.append(self._summary(run_id, folder, in_suite))
            except (NotStored, UnknownRun):
                continue  # a folder removed or damaged since it was listed (or a suite itself) is not a run to offer
        return sorted(listed, key=lambda run: (run["time"] or "", run["id"]), reverse=True)

    def summary(self, run_id: str) -> dict[str, Any]:
        """The run's entry in :meth:`runs` (a manifest without that shape: :class:`NotStored`)."""
        return self._summary(run_id, *self._find(run_id))

    def _summary(self, run_id: str, folder: Path, in_suite: tuple[str, str] | None) -> dict[str, Any]:
        summary = self._cached(folder, "summary", _run_summary, run_id=run_id)
        return summary if in_suite is None else {**summary, "id": run_id, "suite": in_suite[0],
                                                 "collection": in_suite[1]}

    def manifest(self, run_id: str) -> dict[str, Any]:
        """The run's ``manifest.json``, as stored."""
        return self._answer(run_id, "manifest", lambda folder: folder.manifest)

    def metrics(self, run_id: str) -> dict[str, Any]:
        """The run's entries of each served reading, then per system the entries of each (the metrics
        card's rolled-up numbers with intervals and facet rollups, risk–coverage)."""
        return self._answer(run_id, "metrics", lambda folder: _metrics(folder, run_id))

    def metrics_json(self, run_id: str) -> bytes:
        """:meth:`metrics` serialised once per run (its curve can hold a point per query and system)."""
        return self._answer(run_id, "metrics.json", lambda folder: dumps(_metrics(folder, run_id)))

    def results(self, run_id: str) -> list[dict[str, Any]]:
        """Every stored result of the run (system by system, queries in evaluation order), as the served
        reading with per-result objects (:class:`~harness.core.readings.ServeResults`) gives them."""
        return self._answer(run_id, "results", _results)

    def comparisons(self, run_id: str) -> list[dict[str, Any]]:
        """``comparisons.csv``'s rows, verdicts included."""
        return self._answer(run_id, "comparisons", lambda folder: _records(
            folder.table("comparisons")))


    def readings(self, run_id: str) -> list[dict[str, Any]]:
        """The registered readings the run holds, in registry order: name, file and what its rows hold."""
        return self._answer(run_id, "readings", lambda folder: [
            {"name": r.name, "file": r.file, "columns": r.columns} for r in READINGS.values() if folder.holds(r.file)])

    def reading(self, run_id: str, name: str) -> list[dict[str, Any]]:
        """The rows of the run's reading ``name`` (a key of the registry that the run holds), as stored."""
        if name not in READINGS:
            raise UnknownReading(name)
        return self._answer(run_id, f"reading:{name}", lambda folder: _records(
            folder.per_query_values if name == PER_QUERY else folder.table(name)))

    # ----- suites (bench compare with several --corpus: harness.suite) -------------------------------

    def suites(self) -> list[dict[str, Any]]:
        """One summary per suite folder (id, time, collections, systems, metrics), newest first."""
        listed = []
        for folder in self._folders():
            try:
                listed.append(self._cached(folder, "suite-summary", _suite_summary, SUITE_KIND))
            except (NotStored, UnknownRun):
                continue
        return sorted(listed, key=lambda suite: (suite["time"] or "", suite["id"]), reverse=True)

    def suite(self, suite_id: str) -> dict[str, Any]:
        """The suite's collections, summary (with the macro and micro rows), macro comparisons and each
        registered reading's macro table."""
        return self._cached(self._locate(suite_id), "suite", _suite_detail, SUITE_KIND)

    def suite_html(self, suite_id: str) -> str:
        """The suite's HTML report, as ``bench report SUITE --format html`` makes it, but for its links:
        each collection links to its run page here."""
        def page(folder: ResultsFolder) -> str:
            def link(entry: CollectionEntry, _format: str) -> str:  # the same link whatever the format
                run_id = SUITE_RUN.format(suite=folder.path.name, collection=entry.folder.split("/")[-1])
                return "/runs/" + quote(run_id)

            return render_suite_report(open_suite(folder), "html", links=link)[1]

        return self._cached(self._locate(suite_id), "suite.html", page, SUITE_KIND)


def _suite_summary(folder: ResultsFolder) -> dict[str, Any]:
    manifest = folder.manifest
    return {"id": folder.path.name, "time": manifest.get("time"),
            "collections": [c["name"] for c in manifest["collections"]], "systems": list(manifest["systems"]),
            "metrics": list(manifest["metrics"])}


def _suite_collections(folder: ResultsFolder) -> list[tuple[str, str]]:
    """(folder name under collections/, collection name) of each collection the suite's manifest names."""
    return [(str(c["folder"]).split("/")[-1], str(c["name"])) for c in folder.manifest["collections"]]


def _suite_detail(folder: ResultsFolder) -> dict[str, Any]:
    suite = open_suite(folder)
    tables = suite.tables()
    return {"suiteId": folder.path.name,
            "collections": [{"name": c["name"], "folder": c["folder"], "queriesEvaluated": c["queries_evaluated"],
                             "hashes": c["hashes"]} for c in suite.collections],
            "summary": _records(suite.summary()), "comparisons": _records(suite.comparisons()),
            # each registered reading's macro table under its key (harness.core.readings.SuiteStep)
            **{reading.suite.key: _records(tables[reading.name]) for reading in suite_readings()
               if reading.name in tables and reading.suite.key}}  # type: ignore[union-attr]


def _way_out(top: str, folder: str, walked: set[str]) -> tuple[str, str] | None:
    """The first entry under ``folder`` (linked subfolders walked too, each once) that is a link
    leading outside ``top`` (a real path), or neither a file nor a folder: (its path, what it is)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as exc:
        return folder, f"cannot be listed ({exc.strerror})"
    for entry in entries:
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            if os.path.commonpath([top, target]) != top:
                return entry.path, "is a symbolic link that leads outside the served folder"
            if os.path.isdir(target):
                if target not in walked:
                    walked.add(target)
                    found = _way_out(top, entry.path, walked)
                    if found is not None:
                        return found
            elif os.path.exists(target) and not os.path.isfile(target):
                return entry.path, "is a link to something that is neither a file nor a folder"
        elif entry.is_dir(follow_symlinks=False):
            found = _way_out(top, entry.path, walked)
            if found is not None:
                return found
        elif not entry.is_file(follow_symlinks=False):
            return entry.path, "is neither a file nor a folder (a pipe, a socket or a device)"
    return None


# ----- building each answer from a folder ------------------------------------------------------


def _whole(value: Any) -> int | None:
    value = json_value(value)
    return int(value) if value is not None else None


def dumps(answer: Any) -> bytes:
    """An answer as compact UTF-8 JSON (NaN or infinity would be a bug here: :func:`json_value` maps them)."""
    return json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _run_summary(folder: ResultsFolder) -> dict[str, Any]:
    manifest = folder.manifest
    corpus = manifest.get("corpus") or {}
    summary = {
        "id": folder.path.name, "time": manifest.get("time"), "corpus": corpus.get("name"),
        "queries": corpus.get("queries_evaluated"),
        "systems": [str(s.get("label")) for s in manifest.get("systems", [])],
        "metrics": [str(m.get("name")) for m in manifest.get("metrics", [])],
    }
    for reading in served():  # each served reading's entries (the metrics card's cutoff)
        if reading.serve.listing is not None:  # type: ignore[union-attr]
            summary.update(reading.serve.listing(manifest))  # type: ignore[union-attr]
    return summary


def _metrics(folder: ResultsFolder, run_id: str) -> dict[str, Any]:
    views = [reading.serve for reading in served()]
    answer: dict[str, Any] = {"runId": run_id}
    for view in views:  # the run's entries of each (the card's cutoff, metric names, interval settings)
        if view.run is not None:
            answer.update(view.run(folder))
    systems = []
    for label in (str(s["label"]) for s in folder.manifest["systems"]):
        system: dict[str, Any] = {"system": label}
        for view in views:  # each registered reading's entry (harness.readings), in the served order
            if view.value is None:  # a dashboard section only
                continue
            value = view.value(folder, label)
            if view.key:
                system[view.key] = _json(value)
            else:
                system.update(_json(value))
        systems.append(system)
    return {**answer, "systems": systems}


def _results(folder: ResultsFolder) -> list[dict[str, Any]]:
    view = served_results()
    if view is None:
        raise InputFileError(folder.path / MANIFEST_FILE, "holds no reading with per-result objects",
                             fix="register a reading whose ServeView has results")
    ranks = folder.per_query_values
    first = {(s, q): json_value(r) for s, q, r in zip(ranks["system"], ranks["query_id"], ranks["first_relevant_rank"])}
    failures = folder.table("diagnosis")
    diagnosis = {(f["system"], f["query_id"]): {"category": f["category"], "rank": _whole(f["rank"]),
                                                "firstResult": f["first_result"] or None,
                                                "sharedWords": f["shared_words"] or None}
                 for f in failures.to_dict("records")}

    def annotate(system: str, query_id: str) -> dict[str, Any]:
        key = (system, query_id)
        return {"firstRelevantRank": _whole(first.get(key)), "diagnosis": diagnosis.get(key)}

    return view.items(folder, annotate)


def facet_filter(text: str) -> tuple[str, str]:
    """``name:value`` -> (name, value): the first colon splits (a value may hold colons).

    >>> facet_filter("popularity:q2 [5, 12)")
    ('popularity', 'q2 [5, 12)')
    """
    match = re.fullmatch(r"([^:]+):(.*)", text, flags=re.DOTALL)
    if match is None:
        raise ValueError(f"facet filter {text!r} is not NAME:VALUE. Fix: write e.g. facet=topic:billing")
    return match[1], match[2]
