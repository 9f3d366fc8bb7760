"""The results store: every ``bench compare`` writes a new folder ``<out>/<run-id>/``.

Files are first written into a hidden temporary folder beside it, which is renamed into place
at the end, so a killed run leaves no half-written result and an earlier folder is never touched.
Everything but the manifest's times is a pure function of the inputs and the seed.

| file | content |
|---|---|
| manifest.json | run id, time, command line, versions, corpus and content hash, systems and parameters, metric definitions, bootstrap settings, fit/search seconds |
| summary.csv | system, one column per metric as requested |
| per_query.csv | system, query_id, one column per metric, first_relevant_rank (empty when none) |
| comparisons.csv | system_a, system_b, metric, mean_diff (a - b), ci_low, ci_high, p_value, p_adjusted, n_queries |
| diagnosis.csv | system, query_id, category, rank, first_result, shared_words |
| runs/<system>.trec | each ranking in TREC run format |
| report.txt | the report ``bench compare`` prints, with the whole diagnosis |
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import pandas as pd

from harness.compare import CompareResult

COMPARISON_COLUMNS = ["system_a", "system_b", "metric", "mean_diff", "ci_low", "ci_high", "p_value",
                      "p_adjusted", "n_queries"]
DIAGNOSIS_COLUMNS = ["system", "query_id", "category", "rank", "first_result", "shared_words"]


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def safe_file_name(label: str) -> str:
    """A file name for a system label: ``rrf(bm25,lsa)`` -> ``rrf_bm25_lsa_``.

    >>> safe_file_name("bm25(k1=0.9,b=0.4)")
    'bm25_k1=0.9_b=0.4_'
    """
    return re.sub(r"[^A-Za-z0-9._=-]", "_", label)


def _csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


def comparisons_frame(result: CompareResult) -> pd.DataFrame:
    rows = [{c: getattr(comp, c) for c in COMPARISON_COLUMNS} for comp in result.comparisons]
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def diagnosis_frame(result: CompareResult) -> pd.DataFrame:
    rows = [
        {"system": f.system, "query_id": f.query_id, "category": f.category,
         "rank": f.rank if f.rank is not None else pd.NA, "first_result": f.first_result or "",
         "shared_words": f.shared_words_text()}
        for f in result.failures
    ]
    frame = pd.DataFrame(rows, columns=DIAGNOSIS_COLUMNS)
    frame["rank"] = frame["rank"].astype("Int64")
    return frame


def manifest(result: CompareResult, run_id: str, command_line: list[str], started: datetime) -> dict:
    """Everything needed to tell how the numbers were made (corpus hash memoised on the corpus)."""
    config = result.config
    return {
        "run_id": run_id,
        "time": started.isoformat(timespec="seconds"),
        "command_line": command_line,
        "versions": {
            "retbench": _version("retbench"), "python": platform.python_version(),
            **{p: _version(p) for p in ("numpy", "scipy", "scikit-learn", "pandas", "click")},
        },
        "corpus": {
            "name": result.dataset.name, "source": str(result.dataset.source),
            "content_hash": result.dataset.corpus.content_hash(),
            "documents": len(result.dataset.corpus), "queries": len(result.dataset.queries),
            "judgments": result.dataset.qrels.n_judgments(),
            "queries_evaluated": len(result.query_ids), "queries_excluded": result.excluded_query_ids,
        },
        "analyzer": result.analyzer,
        "systems": [
            {"label": s.label, "name": s.retriever.name, "class": f"{type(s.retriever).__module__}."
             f"{type(s.retriever).__qualname__}", "parameters": _jsonable(s.retriever.get_params()),
             "fit_seconds": round(s.fit_seconds, 6), "search_seconds": round(s.search_seconds, 6)}
            for s in result.systems
        ],
        "depth": config.depth,
        "metrics": [
            {"name": m.name, "family": m.base, "cutoff": m.k, "definition": m.describe(),
             "gain": {"ndcg": "linear (grade)", "ndcg_exp": "exponential (2^grade - 1)"}.get(m.base),
             "rel_threshold": config.rel_threshold}
            for m in result.metrics
        ],
        "conventions": {
            "ties": "score descending, then doc id ascending",
            "zero_scores": "not results",
            "queries": "every query with a relevant judgment; a query with no results scores 0",
            "ideal_dcg": "every judged document of the query, retrieved or not",
        },
        "statistics": {
            "bootstrap_samples": config.bootstrap_samples, "seed": config.seed,
            "confidence": config.confidence, "interval": "percentile of sorted resampled means",
            "p_value": "paired randomisation (sign flip), same number of samples",
            "adjustment": "Holm across the comparisons of one metric",
            "pairs": "each system vs the baseline" if config.baseline else "all pairs",
            "baseline": config.baseline,
        },
        "diagnosis": {"fail_rank": config.fail_rank},
        "warnings": result.warnings,
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


def new_run_id(result: CompareResult, started: datetime) -> str:
    digest = hashlib.sha256(
        json.dumps([result.dataset.corpus.content_hash(), [s.label for s in result.systems],
                    [m.name for m in result.metrics], result.config.seed]).encode()
    ).hexdigest()[:8]
    return f"{started:%Y%m%d-%H%M%S}-{safe_file_name(result.dataset.name)}-{digest}"


def write_results(result: CompareResult, out: Path, command_line: list[str] | None = None,
                  report: str | None = None) -> Path:
    """Write the results folder atomically and return its path; ``report`` (the printed report,
    unabridged) is kept as ``report.txt``."""
    started = datetime.now(timezone.utc)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base_id = new_run_id(result, started)
    run_id, n = base_id, 1
    while (out / run_id).exists():
        n += 1
        run_id = f"{base_id}-{n}"
    files: dict[str, str] = {
        "manifest.json": json.dumps(manifest(result, run_id, command_line or sys.argv, started), indent=2) + "\n",
        "summary.csv": _csv(result.summary),
        "per_query.csv": _csv(result.per_query),
        "comparisons.csv": _csv(comparisons_frame(result)),
        "diagnosis.csv": _csv(diagnosis_frame(result)),
    }
    if report is not None:
        files["report.txt"] = report
    used: set[str] = set()
    for system in result.systems:
        name = safe_file_name(system.label)
        while name in used:
            name += "_"
        used.add(name)
        files[f"runs/{name}.trec"] = system.run.to_trec(system.label)
    staging = Path(tempfile.mkdtemp(prefix=f".{run_id}.", dir=out))
    try:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.chmod(staging, 0o755)
        staging.rename(out / run_id)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / run_id
