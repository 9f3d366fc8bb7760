"""The results store: every ``bench compare`` writes a new folder ``<out>/<run-id>/``.

Files are first written into a hidden staging folder beside it (``.staging-<host>-<pid>-…``;
:mod:`harness.store.folder` keeps the folder's life for every writer),
which is renamed into place at the end, so a killed run leaves no half-written result and an
earlier folder is never touched. The rename claims the run id: when another run took the same id
in the same second, the next free suffix (``-2``, ``-3``, …) is claimed instead, so both results
land. A staging folder whose process is gone is removed by the next write into the same folder.
The run files and their raw scores are formatted and written a block of whole queries at a time
(:func:`corpora.trec_io.run_and_raw_score_pieces`), so no run's text is ever held whole.
Everything but the manifest's times is a pure function of the inputs and the seed. Readers
(:mod:`harness.store.read`) check each file against the manifest's ``files`` hashes.

| file | content |
|---|---|
| manifest.json | files (the SHA-256 of every other file: :mod:`harness.store.folder`), run id, time, command line, versions, engine (where the work ran; outside the configuration hash), corpus (its counts, summary line and evaluated queries' texts: what the text report shows), hashes of documents, queries, judgments and configuration, systems (parameters, run files), metric definitions, conventions, bootstrap settings, the command that re-scores the folder, fit/search seconds |
| <reading>.csv | one file per reading of :data:`harness.core.readings.READINGS` (summary, per_query, comparisons, leaderboard, facets, risk_coverage, risk_coverage_summary, diagnosis, duplicates, the card's retrieval_metrics_summary, retrieval_metrics_facets and query_facets, and any reading registered since), with the columns its declaration lists |
| qrels.txt | the judgments of the evaluated queries, TREC qrels format |
| runs/<system>.trec | each ranking in TREC run format, scores strictly decreasing inside a query |
| runs/<system>.raw.tsv | the retriever's own scores, line for line beside the run file |
| report.txt | the report ``bench compare`` prints, with the whole diagnosis |
| retrieval_metrics.jsonl | the metrics card's object per system and query: resultId, runId, system, queryId, retrievalMetrics {recallAtK, precisionAtK, ndcgAt10, mrr, hitAtK} |
| report.html, report.md, report.tex | the reports asked for (``bench compare --report``), made from the files above |

The card's files (:mod:`harness.readings.retrieval_metrics`) are what ``bench serve`` answers from, so it
never re-computes: ``retrieval_metrics.jsonl`` holds the run id, so it is written when the run id is
claimed, beside the manifest (a registered reading's ``files``).
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import shlex
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from corpora import summary_line
from corpora.memory import release_freed_memory
from corpora.trec_io import format_qrels, run_and_raw_score_pieces
from harness.core.condensed import DEFAULT_UNJUDGED, UNJUDGED_READINGS
from harness.core.options import REL_THRESHOLD
from harness.core.diagnosis import categories_of, unavailable_without_texts
from harness.core.power import POWER
from harness.core.record import CompareRecord
from harness.store.folder import (Derived, Identified, Pieces, Say, csv_text, file_text_hash, manifest_text,
                                  package_version, safe_file_name, warn_on_stderr, write_folder)
from harness.core.readings import READINGS, failure_checks, identified_files, manifest_records, reading_frames
from harness.core.metrics import trec_eval_name
from retrievers.defaults import as_run, chosen


__all__ = ["MAX_NAME", "QRELS_FILE", "reading_files", "results_texts", "run_file_stem", "write_results"]

QRELS_FILE = "qrels.txt"
MAX_NAME = 80  # characters of a run file's stem (file systems allow 255 bytes; keep listings readable)
_HASH_CHARS = 12  # of the label's SHA-256 appended to a shortened stem
def run_file_stem(label: str, used: set[str]) -> str:
    """The stem of a system's run files: :func:`safe_file_name` of the label, or, when that is
    longer than :data:`MAX_NAME` or already used by another label, a readable prefix and a short
    hash of the full label (the manifest maps each label to its files).

    >>> run_file_stem("bm25", set())
    'bm25'
    >>> stem = run_file_stem("rrf(" + ",".join(["bm25(analyzer=english)"] * 6) + ")", set())
    >>> len(stem), stem[:24]
    (80, 'rrf_bm25_analyzer=englis')
    """
    stem = safe_file_name(label)
    if len(stem) > MAX_NAME or stem in used:
        digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:_HASH_CHARS]
        stem = f"{stem[:MAX_NAME - _HASH_CHARS - 1]}-{digest}"
    return stem


def _run_tag(label: str, stem: str) -> str:
    """The run files' tag column (trec_eval's runid): the label itself when a TREC line can hold
    it and it is short, else the file stem."""
    return label if len(label) <= MAX_NAME and label and not re.search(r"\s", label) else stem


def _folder_parts(result: CompareRecord, command_line: list[str] | None, report: str | None, runs: bool,
                  started: datetime) -> tuple[dict[str, str], Identified, Pieces]:
    """A results folder's files that do not hold the run id (file name -> text), what gives the
    manifest and the files that do, for a run id (:data:`~harness.store.folder.Identified`), and,
    with ``runs``, the run files and raw scores, made a block of lines at a time as they are written
    (:data:`~harness.store.folder.Pieces`: a run's text is never held whole)."""
    systems = _system_entries(result)
    files: dict[str, str] = reading_files(result)
    files[QRELS_FILE] = format_qrels(_evaluated_qrels(result))
    if report is not None:
        files["report.txt"] = report

    def run_pieces() -> Iterator[tuple[str, str]]:
        for system, entry in zip(result.systems, systems):
            for trec, raw in run_and_raw_score_pieces(system.run, entry["run_tag"]):
                yield entry["run_file"], trec
                yield entry["raw_scores_file"], raw

    def identified(run_id: str) -> tuple[dict, dict[str, str]]:
        """What holds the run id: the manifest, and each registered reading's files that do (the card's
        per-result lines)."""
        document = _manifest(result, run_id, command_line or sys.argv, started, systems)
        return document, identified_files(result, run_id, document["hashes"])

    return files, identified, run_pieces() if runs else iter(())


def results_texts(result: CompareRecord,
                  command_line: list[str] | None = None) -> tuple[str, dict[str, Any], dict[str, str]]:
    """The results folder :func:`write_results` would write for ``result`` now, in memory and less
    its run files and ``report.txt`` (made from these): (its run id, its manifest as read back from
    ``manifest.json``, file name -> text).
    What a report of a fresh result reads (:func:`harness.store.read.open_record`), so it is the
    report of the folder, made with no folder."""
    started = datetime.now(timezone.utc)
    files, identified, _ = _folder_parts(result, command_line, None, False, started)
    run_id = _new_run_id(result, started)
    document, named = identified(run_id)
    files.update(named)
    hashes = {name: file_text_hash(text) for name, text in files.items()}
    return run_id, json.loads(manifest_text(document, hashes)), files


def reading_files(result: CompareRecord) -> dict[str, str]:
    """File name -> text, for every registered reading (:data:`~harness.core.readings.READINGS`) the
    result has: the readings' part of its results folder."""
    return {READINGS[name].file: csv_text(frame) for name, frame in reading_frames(result).items()}


def _evaluated_qrels(result: CompareRecord) -> dict[str, dict[str, int]]:
    """The judgments the numbers were computed with: those of the evaluated queries, in their
    order. Excluded queries (no relevant judgment) are left out, so that ``bench evaluate``, which
    counts every query of its qrels as ``trec_eval -c`` does, scores the same queries."""
    qrels = result.dataset.qrels
    return {q: dict(qrels[q]) for q in result.query_ids}


def _query_texts(result: CompareRecord) -> dict[str, str]:
    """Query id -> text, for each evaluated query, in evaluation order."""
    texts = dict(zip(result.dataset.queries.ids, result.dataset.queries.texts))
    return {q: texts.get(q, "") for q in result.query_ids}


def _system_entries(result: CompareRecord) -> list[dict]:
    used: set[str] = set()
    entries = []
    for system in result.systems:
        stem = run_file_stem(system.label, used)
        used.add(stem)
        entries.append({
            "label": system.label, "name": system.retriever.name,
            "class": f"{type(system.retriever).__module__}.{type(system.retriever).__qualname__}",
            # as it ran: a parameter chosen for the corpus (retrievers.defaults) in its value, not None
            "parameters": _jsonable({**system.retriever.get_params(), **chosen(system.retriever)}),
            "chosen_for_corpus": sorted(chosen(system.retriever)),
            "as_run": as_run(system.retriever),
            "run_file": f"runs/{stem}.trec", "raw_scores_file": f"runs/{stem}.raw.tsv",
            "run_tag": _run_tag(system.label, stem),
            "fit_seconds": round(system.fit_seconds, 6), "search_seconds": round(system.search_seconds, 6),
        })
    return entries


def _sha256_json(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _configuration(result: CompareRecord, systems: list[dict]) -> dict:
    """What was asked for, in a form that hashes the same on every machine: every option of the
    comparison except where the data and the cache live (the data are hashed by content), with the
    systems and metrics as resolved."""
    options = result.config.flat()
    # the facets file's content is in the queries' hash; where it lies is not configuration
    for where in ("corpus", "cache_dir", "cache", "systems", "metrics", "facets_file"):
        options.pop(where, None)
    if options.get("unjudged") == DEFAULT_UNJUDGED:  # the reading added later: the default hashes as before
        options.pop("unjudged")
    return {**options, "analyzer": result.analyzer, "metrics": [m.name for m in result.metrics],
            "systems": [{k: s[k] for k in ("label", "class", "parameters")} for s in systems]}


def _rescore_command(result: CompareRecord, systems: list[dict]) -> str:
    """The ``bench evaluate`` command, run inside the results folder, that reproduces summary.csv."""
    words = ["bench", "evaluate", "--qrels", QRELS_FILE, *[s["run_file"] for s in systems],
             "--metrics", ",".join(m.name for m in result.metrics), "--format", "csv"]
    scoring = result.config.scoring
    if scoring.rel_threshold != REL_THRESHOLD:
        words += ["--rel-threshold", str(scoring.rel_threshold)]
    if scoring.unjudged != DEFAULT_UNJUDGED:
        words += ["--unjudged", scoring.unjudged]
    return shlex.join(words)


def _manifest(result: CompareRecord, run_id: str, command_line: list[str], started: datetime,
             systems: list[dict] | None = None) -> dict:
    """Everything needed to tell how the numbers were made and to make them again."""
    config = result.config
    systems = systems if systems is not None else _system_entries(result)
    dataset = result.dataset
    hashes = {
        "documents": dataset.corpus.content_hash(), "queries": dataset.queries.content_hash(),
        "judgments": dataset.qrels.content_hash(), "configuration": _sha256_json(_configuration(result, systems)),
    }
    if dataset.candidates is not None:
        hashes["candidates"] = _sha256_json(dataset.candidates)
    return {
        "run_id": run_id,
        "time": started.isoformat(timespec="seconds"),
        "command_line": command_line,
        "versions": {
            "retbench": package_version("retbench"), "python": platform.python_version(),
            **{p: package_version(p) for p in ("numpy", "scipy", "scikit-learn", "pandas", "click")},
        },
        "engine": result.engine,
        "steps": result.steps,
        "corpus": {
            "name": dataset.name, "source": str(dataset.source),
            "content_hash": hashes["documents"],
            "documents": len(dataset.corpus), "queries": len(dataset.queries),
            "judgments": dataset.qrels.n_judgments(),
            "queries_evaluated": len(result.query_ids), "queries_excluded": result.excluded_query_ids,
            # what the text report shows that no other file holds (harness.report.text): its first
            # line (empty documents, grades, pools) and the evaluated queries' texts, in evaluation order
            "summary": summary_line(dataset),
            "query_texts": _query_texts(result),
        },
        "hashes": hashes,
        "hash_definitions": {
            "documents": "SHA-256 of ids, titles and texts, in corpus order (the index cache's key)"
                         if dataset.corpus.has_texts else
                         "SHA-256 of the judged document ids, sorted (judgments only: no texts)",
            "queries": "SHA-256 of ids, texts and facets, in query order",
            "judgments": "SHA-256 of every (query id, doc id, grade), sorted by query and doc id",
            "configuration": "SHA-256 of the options, analyzer, metrics and systems with their parameters "
                             "(not where the data or the cache live)",
            **({"candidates": "SHA-256 of each query's candidate pool"} if "candidates" in hashes else {}),
        },
        "analyzer": result.analyzer,
        "systems": systems,
        "depth": config.scoring.depth,
        "metrics": [
            {"name": m.name, "family": m.base, "cutoff": m.k, "definition": m.describe(),
             "gain": m.definition.gain_description,
             "rel_threshold": config.scoring.rel_threshold, "trec_eval": trec_eval_name(m)}
            for m in result.metrics
        ],
        "conventions": {
            "ties": "score descending, then doc id ascending",
            "zero_scores": "not results",
            "queries": "every query with a relevant judgment (grade >= rel_threshold) and a text; a query with no "
                       f"results scores 0; {QRELS_FILE} holds exactly their judgments",
            "ideal_dcg": "every judged document of the query, retrieved or not",
            "unjudged": {"reading": config.scoring.unjudged,
                         "definition": UNJUDGED_READINGS[config.scoring.unjudged]},
            "means": "exactly rounded: math.fsum of the per-query values / number of queries",
            "run_files": "each ranking as scored; trec_eval 9.x and pytrec_eval read scores as single-precision "
                         "floats f (trec_eval 10 and bench evaluate as doubles) and re-sort ties by doc id "
                         "descending, so inside a query the "
                         "scores are made strictly decreasing as floats by the smallest change, f(written_i) = "
                         "min(f(raw_i), nextafter(f(written_i-1), -inf)) (a score already below is kept exactly); "
                         "every evaluator then ranks the file as scored; the raw scores are in raw_scores_file, "
                         "line for line",
        },
        "rescore": {
            "command": _rescore_command(result, systems),
            "note": "run inside this folder; it prints per_query.csv's values and, on the `all` rows, summary.csv's",
        },
        "statistics": {**result.statistics_record(), **manifest_records(result, "statistics"), **_power_record()},
        **manifest_records(result),  # each registered reading's record of how it was made (harness.readings)
        "diagnosis": {
            "fail_rank": config.readings.fail_rank, "categories": categories_of(dataset.corpus, failure_checks()),
            **manifest_records(result, "diagnosis"),  # the registered readings' (harness.readings)
            # without the documents' texts (judgments only) what reads them is said to be unavailable
            **({} if dataset.corpus.has_texts else {"unavailable": unavailable_without_texts(failure_checks())}),
        },
        "warnings": result.warnings,
        "notes": result.notes,
        "loading": {"allow_unmatched_judgments": config.loading.allow_unmatched_judgments},
    }


def _power_record() -> dict[str, object]:
    """The manifest's record of how the power figures were made."""
    return {
        "power": {"power": POWER, "test": "two-sided paired t-test at alpha",
                  "queries_needed": "Sakai (2016) topic set size design: the smallest n with that power for the "
                                    "observed mean difference and standard deviation",
                  "effect_size_anova": "Sakai (2014): (mean_a - mean_b) / sqrt(V_E), V_E the residual variance of the "
                                       "two-way ANOVA (systems x queries) of every system on the metric; interval "
                                       "ES_E +- t(1 - alpha/2, (n-1)(k-1)) sqrt(2/n)"},
    }


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "label"):
        return value.label
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _new_run_id(result: CompareRecord, started: datetime) -> str:
    digest = hashlib.sha256(
        json.dumps([result.dataset.corpus.content_hash(), [s.label for s in result.systems],
                    [m.name for m in result.metrics], result.config.statistics.seed]).encode()
    ).hexdigest()[:8]
    return f"{started:%Y%m%d-%H%M%S}-{safe_file_name(result.dataset.name)[:MAX_NAME // 2]}-{digest}"


def write_results(result: CompareRecord, out: Path, command_line: list[str] | None = None,
                  say: Say = warn_on_stderr, report: str | None = None, derived: Derived | None = None) -> Path:
    """Write the results folder atomically under a fresh run id and return its path; ``report``
    (the printed report, unabridged) is kept as ``report.txt``.

    ``derived`` makes more files from the folder itself (the HTML, Markdown and LaTeX reports): it
    is called with the staging folder once every other file, the manifest included, is in it, and
    the files it returns are written beside them before the folder is renamed into place, so they
    are what a later reading of the finished folder gives. It runs again if the run id it saw was
    taken by another run meanwhile (the manifest names the id). A name it returns that is already
    a file of the folder is an error (a ``ValueError``: the caller's mistake, not the user's)."""
    started = datetime.now(timezone.utc)
    files, identified, pieces = _folder_parts(result, command_line, report, True, started)
    release_freed_memory()  # the readings' temporaries, before the run files are written a block at a time
    return write_folder(out, files, _new_run_id(result, started), identified, derived, say, pieces)
