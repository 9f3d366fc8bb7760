"""Shared parts of the speed benchmarks: cached synthetic data, child processes, medians, tables.

Every measurement runs in a fresh child process, so one system's memory and warm caches never help
another; the parent alternates the systems round by round and reports medians. A child prints one
JSON object as its last stdout line, its own peak RSS (``VmHWM``) included.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import synthetic  # a sibling: the folder that holds this file is on sys.path wherever it is imported

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = Path(os.environ.get("RETBENCH_BENCH_DATA") or Path(tempfile.gettempdir()) / "retbench-bench")


def texts_file(n_docs: int, n_queries: int, seed: int, folder: Path = DEFAULT_DATA,
               query_terms: tuple[int, int] = (2, 5)) -> tuple[Path, Path]:
    """One document per line and one query per line (built once per size and seed, then reused).

    The documents do not depend on ``query_terms`` (queries are drawn after them from the same stream).
    """
    folder.mkdir(parents=True, exist_ok=True)
    docs = folder / f"zipf-{n_docs}-{seed}.docs.txt"
    lengths = "" if query_terms == (2, 5) else f"-terms{query_terms[0]}to{query_terms[1]}"
    queries = folder / f"zipf-{n_docs}-{seed}-{n_queries}{lengths}.queries.txt"
    if not (docs.is_file() and queries.is_file()):
        data = synthetic.make(n_docs, n_queries, seed, query_terms=query_terms)
        _write_lines(docs, data.texts)
        _write_lines(queries, data.queries)
    return docs, queries


def beir_folder(n_docs: int, n_queries: int, seed: int, folder: Path = DEFAULT_DATA) -> Path:
    """The same synthetic data as a BEIR folder (for ``bench compare`` and the peer script)."""
    target = folder / f"zipf-{n_docs}-{seed}-{n_queries}-beir"
    if not (target / "qrels" / "test.tsv").is_file():
        synthetic.write_beir(synthetic.make(n_docs, n_queries, seed), target)
    return target


def _write_lines(path: Path, lines: Sequence[str]) -> None:
    temporary = path.with_suffix(".tmp")
    with temporary.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(line.replace("\n", " ") + "\n")
    temporary.replace(path)


def read_lines(path: Path) -> list[str]:
    """Line by line, so loading never holds the whole file and its split copy at once."""
    with path.open(encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


def peak_rss_mb() -> float:
    """This process's peak resident set so far, in MB.

    ``VmHWM``, not ``ru_maxrss``: the latter keeps the parent's size from before ``exec``, so a
    child of a big parent would report the parent's peak.
    """
    return _status("VmHWM:") if Path("/proc/self/status").exists() else \
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    return _status("VmRSS:")


def _status(field: str) -> float:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def report(**values: object) -> None:
    """A child's result: one JSON line on stdout."""
    print(json.dumps(values), flush=True)


def run_child(argv: Sequence[str], timeout: float = 3600, env: dict[str, str] | None = None) -> dict:
    """Run a child, return its JSON result plus ``wall`` (s) and ``peak_rss_mb`` (the child's own)."""
    start = time.perf_counter()
    child_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    process = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=str(REPO), env=child_env)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise RuntimeError(f"{' '.join(argv)} ran past {timeout} s")
    wall = time.perf_counter() - start
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({process.returncode}):\n{err[-3000:]}")
    lines = [line for line in out.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {}
    result.setdefault("wall", wall)
    return result


def median(values: Sequence[float]) -> float:
    clean = [v for v in values if v is not None]
    return statistics.median(clean) if clean else float("nan")


def load_note() -> str:
    """The 1-minute load average against the core count, for the report's header."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} (1 / 5 min) on {os.cpu_count()} cores"


def markdown(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            if value != value:
                return "—"
            return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"
        return str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)

