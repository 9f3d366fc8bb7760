"""Shared parts of the speed benchmarks: cached synthetic data, child processes, medians, tables,
and the one page their numbers are kept on (``benchmarks/RESULTS.md``, :func:`record_results`).

Every measurement runs in a fresh child process, so one system's memory and warm caches never help
another; the parent alternates the systems round by round and reports medians. A child prints one
JSON object as its last stdout line, its own peak RSS (``VmHWM``) included.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import synthetic  # a sibling: the folder that holds this file is on sys.path wherever it is imported

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: The page every benchmark writes its latest numbers to, one section per script (or case).
RESULTS = HERE / "RESULTS.md"
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


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that ran this script, as one would type it from the repository's root."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve()
    shown = script.relative_to(REPO).as_posix() if script.is_relative_to(REPO) else script.name
    return " ".join(["python", shlex.quote(shown), *map(shlex.quote, argv[1:])])


def results_section(name: str, body: str, command: str, date: str, note: str = "") -> str:
    """One section of RESULTS.md: its markers, a heading, the command and date, the numbers."""
    lines = [f"<!-- {name} -->", f"### {name}", "", f"`{command}`, run {date}" + (f"; {note}" if note else "") + ".",
             "", body.strip(), f"<!-- /{name} -->"]
    return "\n".join(lines)


def record_results(name: str, body: str, note: str = "", results: Path = RESULTS,
                   argv: Sequence[str] | None = None) -> None:
    """Write ``body`` (markdown: a table, or text in a fenced block) as section ``name`` of
    ``results``, with the exact command line and today's date (UTC), replacing what stood between
    its ``<!-- name -->`` and ``<!-- /name -->`` markers; a new section goes at the end. The rest
    of the page is left as it was, and the page is replaced whole (never half-written)."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"section name {name!r}: use letters, digits, '_', '.' or '-'")
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    section = results_section(name, body, command_line(argv), date, note)
    text = results.read_text(encoding="utf-8") if results.is_file() else "# Benchmark results\n"
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    if text.count(begin) > 1 or text.count(end) > 1 or (begin in text) != (end in text):
        raise ValueError(f"{results}: the markers of section {name!r} are not one pair; mend them by hand")
    if begin in text:
        start, stop = text.index(begin), text.index(end) + len(end)
        if stop < start:
            raise ValueError(f"{results}: section {name!r} ends before it begins; mend its markers by hand")
        text = text[:start] + section + text[stop:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    temporary = results.with_name(results.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(results)


def before_tree(parser: argparse.ArgumentParser, before: str, marker: str, scratch: Path) -> Path:
    """The code before the change, for a benchmark's ``--before``: the folder ``before`` when it holds
    a checkout (``marker``, a path inside it, exists), else git revision ``before`` of this repository
    extracted under ``scratch``; neither is the parser's error."""
    folder = Path(before)
    if (folder / marker).exists():
        return folder.resolve()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", before], capture_output=True)
    if archive.returncode != 0:
        parser.error(f"--before: {before!r} is neither a checkout nor a git revision "
                     f"({archive.stderr.decode(errors='replace').strip()})")
    tree = scratch / "tree"
    tree.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter="data")
    return tree.resolve()
