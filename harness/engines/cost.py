"""What each system costs, measured where it is fitted and searched: time, memory, index size, latency.

:func:`harness.core.api.compute_comparison` measures every system of a comparison as it runs and
keeps the measurements on each :class:`~harness.core.record.SystemResult` (``cost``,
:class:`SystemCost`); the cost reading (:mod:`harness.readings.cost`) turns them into its tables.
None of it changes another number of the comparison.

Fit and batch search
    ``fit_seconds`` and ``search_seconds`` are wall-clock times of the harness's own calls, as
    ``bench compare`` makes them (the batch search of every evaluated query at ``depth``);
    ``fit_from_cache`` says the fit read its state from the index cache (its time is then a load).
Peak memory (:class:`PeakMemory`)
    The bytes the process's resident set rose to above where it stood when the step began:
    Linux's high-water mark (``VmHWM`` in ``/proc/self/status``), reset to the current resident set
    size before each step by writing ``5`` to ``/proc/self/clear_refs``, so it counts what numpy and
    native code allocate as well as Python. Where that reset is refused, ``ru_maxrss`` is read
    instead, which cannot be reset: a step is then seen only where it rose above the process's
    earlier peak (a lower bound, said so in the manifest). Elsewhere: unknown.
Index size
    :meth:`retrievers.Retriever.index_bytes` of the system and of each of its children (a fusion's
    cost includes theirs, and the table names them); unknown when one of them says None.
Latency (:func:`measure_latency`)
    A seeded sample of ``latency_queries`` evaluated queries, each searched alone (one query per
    call of ``search``, at the comparison's depth) after a warm-up of :data:`WARM_UP` queries per
    system, in ``latency_rounds`` rounds. Within a round the systems take turns query by query (the
    system that goes first rotates), so a burst of load on a shared machine falls on every system
    alike; garbage collection is paused while a round is timed. A stored run (``run(PATH)``), or a
    fusion of one, has no search of its own to time: its latency is left unknown; so is the latency of
    a system an engine fitted on its workers (each query would time a round trip to them).
Latency comparison (:func:`compare_latency`)
    Paired over the sampled queries: each query's latency is its median over the rounds; the ratio
    of two systems is the geometric mean of the per-query ratios, with a bootstrap interval over the
    queries; the verdict ``slower``/``faster`` needs the whole interval beyond a tolerance, the larger
    of :data:`LATENCY_TOLERANCE` and the rounds' own disagreement, else ``no clear difference``.
The latency gate (:func:`gate_latency`, ``bench gate --latency-margin``)
    The candidate's p95 against the baseline's, failing only a rise past the margin in every round,
    and judging nothing when a side's rounds disagree by more than the margin.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import resource
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from corpora import Queries, RetbenchError
from retrievers import Retriever
from retrievers.base import search_retriever
from retrievers.context import RunContext

__all__ = ["LATENCY_GATE_VERDICTS", "LATENCY_TOLERANCE", "LATENCY_VERDICTS", "WARM_UP", "LatencyComparison", "LatencyGate",
           "PeakMemory", "SystemCost", "gate_latency",
           "compare_latency", "descendants", "index_size", "machine", "measure_latency", "memory_method", "sample_queries"]

#: Queries each system searches, untimed, before the first round.
WARM_UP = 10
#: The smallest ratio of latencies called a difference (5%): below it, two systems are of one speed.
LATENCY_TOLERANCE = 0.05
#: Verdict -> what it means (system a against system b).
LATENCY_VERDICTS = {
    "slower": "a's latency is above b's: the whole interval of the ratio a/b lies above 1 + the tolerance",
    "faster": "a's latency is below b's: the whole interval lies below 1 / (1 + the tolerance)",
    "no clear difference": "the interval reaches within the tolerance of 1",
}

_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def _status_bytes(key: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        _CLEAR_REFS.write_text("5")
        return True
    except OSError:
        return False


def memory_method() -> str:
    """How :class:`PeakMemory` measures here, in words (the manifest records it)."""
    if _status_bytes("VmHWM") is not None and _reset_peak():
        return ("the resident set's high-water mark (VmHWM) reset before each step (clear_refs 5): the peak the "
                "step reached above the resident set it began with, numpy and native code included")
    if sys.platform.startswith("linux") or sys.platform == "darwin":
        return ("ru_maxrss, which cannot be reset: a step is seen only where it rose above the process's earlier "
                "peak (a lower bound)")
    return "not measured on this platform"


class PeakMemory:
    """A context manager: ``added`` is the bytes the step inside it raised the resident set to above
    where it stood at the start (None: not measurable here); see the module docstring."""

    def __init__(self) -> None:
        self.added: int | None = None
        self._start: int | None = None
        self._resettable = False
        self._maxrss_start = 0

    def __enter__(self) -> PeakMemory:
        self._start = _status_bytes("VmRSS")
        self._resettable = self._start is not None and _reset_peak()
        if self._resettable:
            self._start = _status_bytes("VmRSS")
        else:
            self._maxrss_start = _maxrss()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._resettable:
            peak = _status_bytes("VmHWM")
            self.added = None if peak is None or self._start is None else max(0, peak - self._start)
        elif self._maxrss_start:
            self.added = max(0, _maxrss() - self._maxrss_start)


def _maxrss() -> int:
    try:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (OSError, ValueError):
        return 0
    return int(peak) * (1 if sys.platform == "darwin" else 1024)  # bytes on macOS, KiB on Linux


@dataclass
class SystemCost:
    """One system's measured cost (see the module docstring for how each is measured).

    ``children``: the labels of the retrievers its cost includes (a fusion's); ``index_bytes``, ``fit_memory`` and
    ``search_memory``: None when unknown; ``stored_run``: it is, or includes, a run read from a file
    (``run(PATH)``), so its latency is not measured (a lookup in a file's run, not a search); ``latencies``: seconds, one row per round and one column
    per query of ``latency_query_ids`` (None: not measured)."""

    fit_seconds: float
    search_seconds: float
    n_documents: int
    n_queries: int
    fit_from_cache: bool = False
    index_bytes: int | None = None
    fit_memory: int | None = None
    search_memory: int | None = None
    children: tuple[str, ...] = ()
    stored_run: bool = False
    latencies: np.ndarray | None = None
    latency_query_ids: list[str] = field(default_factory=list)


def descendants(retriever: Retriever) -> Iterator[Retriever]:
    """The retrievers ``retriever`` calls, their children's children too, depth first."""
    for child in retriever.children:
        yield child
        yield from descendants(child)


def index_size(retriever: Retriever) -> tuple[int | None, tuple[str, ...]]:
    """(bytes its fitted index holds with every descendant's, the descendants' labels); the bytes are
    None when one of them does not know its own (:meth:`~retrievers.Retriever.index_bytes`)."""
    total: int | None = 0
    children = tuple(descendants(retriever))
    for one in (retriever, *children):
        size = one.index_bytes()
        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0):
            raise RetbenchError(f"{type(one).__name__}.index_bytes() returned {size!r}. Fix: return the bytes its "
                                "fitted index holds (an int >= 0), or None when unknown")
        total = None if size is None or total is None else total + int(size)
    return total, tuple(c.label for c in children)


def sample_queries(query_ids: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` of ``query_ids`` (all of them when there are no more), drawn with ``seed``, in their order."""
    if n >= len(query_ids):
        return list(query_ids)
    chosen = np.sort(np.random.default_rng(seed).choice(len(query_ids), size=n, replace=False))
    return [query_ids[i] for i in chosen]


@contextmanager
def _no_collection() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def measure_latency(retrievers: Mapping[str, Retriever], queries: Queries, k: int, context: RunContext,
                    n_queries: int, rounds: int, seed: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """(the sampled query ids, label -> seconds per round and query) of each fitted retriever, each
    query searched alone at depth ``k`` in ``context`` (see the module docstring for the protocol)."""
    sampled = sample_queries(list(queries.ids), n_queries, seed)
    singles = [queries.subset([q]) for q in sampled]
    labels = list(retrievers)
    times = {label: np.zeros((rounds, len(singles))) for label in labels}
    for label in labels:
        for single in singles[:WARM_UP]:
            search_retriever(retrievers[label], single, k, context)
    for r in range(rounds):
        with _no_collection():
            for j, single in enumerate(singles):
                turn = j % len(labels)
                for label in labels[turn:] + labels[:turn]:
                    start = time.perf_counter_ns()
                    search_retriever(retrievers[label], single, k, context)
                    times[label][r, j] = (time.perf_counter_ns() - start) / 1e9
        gc.collect()
    return sampled, times


@dataclass(frozen=True)
class LatencyComparison:
    """System a's latency against b's over ``n_queries`` paired queries: ``ratio`` (the geometric
    mean of a/b per query), its interval [``ci_low``, ``ci_high``], ``tolerance`` (the smallest
    relative difference called one here) and ``verdict`` (:data:`LATENCY_VERDICTS`)."""

    system_a: str
    system_b: str
    ratio: float
    ci_low: float
    ci_high: float
    tolerance: float
    n_queries: int
    verdict: str


def compare_latency(a: str, b: str, latency_a: np.ndarray, latency_b: np.ndarray, samples: int, seed: int,
                    confidence: float) -> LatencyComparison:
    """Paired comparison of two systems' latencies (rounds x queries, the same queries in the same
    order): see the module docstring. ``samples`` bootstrap resamples drawn with ``seed``; the
    interval's level is ``confidence``."""
    floor = 1e-9  # a search faster than the clock's tick counts as one nanosecond
    per_query_a = np.maximum(np.median(latency_a, axis=0), floor)
    per_query_b = np.maximum(np.median(latency_b, axis=0), floor)
    logs = np.log(per_query_a) - np.log(per_query_b)
    n = len(logs)
    centre = float(logs.mean())
    rng = np.random.default_rng(seed)
    means = np.empty(samples)
    chunk = max(1, 2_000_000 // max(n, 1))
    for start in range(0, samples, chunk):
        stop = min(samples, start + chunk)
        means[start:stop] = logs[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    by_round = (np.log(np.maximum(latency_a, floor)) - np.log(np.maximum(latency_b, floor))).mean(axis=1)
    rounds_apart = float(np.max(np.abs(by_round - centre))) if len(by_round) else 0.0
    tolerance = max(LATENCY_TOLERANCE, math.expm1(rounds_apart))
    if low > math.log1p(tolerance):
        verdict = "slower"
    elif high < -math.log1p(tolerance):
        verdict = "faster"
    else:
        verdict = "no clear difference"
    return LatencyComparison(a, b, math.exp(centre), math.exp(low), math.exp(high), tolerance, n, verdict)


def machine(engine: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The machine the times were measured on (the manifest's ``cost.machine``): CPU model, cores (and
    those this process may use), the BLAS libraries and their threads, Python and the libraries'
    versions, the engine."""
    from threadpoolctl import threadpool_info

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    blas = [{"library": pool.get("internal_api"), "threads": pool.get("num_threads"),
             "version": pool.get("version")} for pool in threadpool_info()]
    libraries = {name: getattr(sys.modules[name], "__version__", None)
                 for name in ("numpy", "scipy", "pandas", "sklearn", "torch", "sentence_transformers")
                 if name in sys.modules}
    return {"cpu": model, "cores": os.cpu_count(), "usable_cores": usable, "system": platform.system(),
            "blas": sorted(blas, key=lambda pool: (str(pool["library"]), str(pool["version"]), str(pool["threads"]))), "python": platform.python_version(),
            "libraries": libraries, "engine": dict(engine or {"name": "local"})}


#: Latency gate verdict -> whether it fails the gate.
LATENCY_GATE_VERDICTS = {
    "latency rose": True,
    "latency within the margin": False,
    "latency rise not shown": False,
    "latency not judged": False,
}


@dataclass(frozen=True)
class LatencyGate:
    """The latency part of a gate: ``verdict`` (a key of :data:`LATENCY_GATE_VERDICTS`), ``rise`` (the
    candidate's p95 over the baseline's, less 1; NaN when not measured) and ``message`` (one line)."""

    verdict: str
    rise: float
    message: str

    @property
    def fails(self) -> bool:
        return LATENCY_GATE_VERDICTS[self.verdict]


def gate_latency(before: Mapping[str, float] | None, after: Mapping[str, float] | None, margin: float,
                 same_machine: bool = True) -> LatencyGate:
    """Has the candidate's p95 latency risen by more than ``margin`` (0.2: 20%) over the baseline's?

    ``before``/``after``: each side's ``latency_p95_ms`` (the median of its rounds' p95) and its rounds'
    lowest and highest p95 (``latency_p95_low_ms``, ``latency_p95_high_ms``); None: not measured. The
    noise of a shared machine is read from the rounds: when a side's rounds disagree by more than the
    margin (highest - lowest, over the median) no verdict is given (``latency not judged``), nor when
    the two were measured on different machines. It *rose* only when every round of the candidate is
    above every round of the baseline by more than the margin (lowest candidate round > highest
    baseline round x (1 + margin)); a median rise past the margin that the rounds do not all show is
    ``latency rise not shown``; anything less is within the margin.

    >>> gate_latency({"latency_p95_ms": 10, "latency_p95_low_ms": 9.8, "latency_p95_high_ms": 10.2},
    ...              {"latency_p95_ms": 15, "latency_p95_low_ms": 14.5, "latency_p95_high_ms": 15.5}, 0.2).verdict
    'latency rose'
    """
    percent = f"{margin:.0%}"
    keys = ("latency_p95_ms", "latency_p95_low_ms", "latency_p95_high_ms")
    measured = [side is not None and all(_finite(side.get(k)) for k in keys) for side in (before, after)]
    if not all(measured):
        which = " and ".join(name for name, ok in zip(("the baseline", "the candidate"), measured) if not ok)
        return LatencyGate("latency not judged", math.nan, f"latency not judged: no latency of {which} was "
                           "measured (bench compare --latency-queries 0, a stored run, or a folder without its cost)")
    before, after = dict(before or {}), dict(after or {})  # both measured, as checked above
    base, cand = float(before["latency_p95_ms"]), float(after["latency_p95_ms"])
    rise = cand / base - 1 if base > 0 else math.inf
    if not same_machine:
        return LatencyGate("latency not judged", rise, f"latency not judged: the two sides were measured on "
                           f"different machines (p95 {base:.2f} ms -> {cand:.2f} ms)")
    spreads = [(float(side["latency_p95_high_ms"]) - float(side["latency_p95_low_ms"])) / float(side["latency_p95_ms"])
               if float(side["latency_p95_ms"]) > 0 else 0.0 for side in (before, after)]
    said = f"p95 {base:.2f} ms -> {cand:.2f} ms ({rise:+.0%})"
    if max(spreads) > margin:
        return LatencyGate("latency not judged", rise, f"latency not judged: {said}, but the rounds of one side "
                           f"disagree by {max(spreads):.0%}, more than the margin {percent} (a noisy machine: rerun "
                           "with more --latency-rounds on a quieter one)")
    if float(after["latency_p95_low_ms"]) > float(before["latency_p95_high_ms"]) * (1 + margin):
        return LatencyGate("latency rose", rise, f"latency rose: {said}, every round beyond the margin {percent}")
    if rise > margin:
        return LatencyGate("latency rise not shown", rise, f"latency rise not shown: {said} past the margin "
                           f"{percent}, but not in every round")
    return LatencyGate("latency within the margin", rise, f"latency within the margin: {said}, margin {percent}")


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
