"""BM25 engines on every workload shape: retbench vs tantivy vs PISA over a matrix of corpora and queries.

    python benchmarks/engines_matrix.py --docs 1000000 --queries 1000 --rounds 2
    python benchmarks/engines_matrix.py --docs 50000 --rounds 1 --shapes z1.0-v100k-short,z1.2-v1M-long

Needs, besides retbench with its ``fast`` extra (numba): ``tantivy`` and ``pyterrier-pisa`` (PISA),
as ``engines_speed.py`` does; the systems are built, answered and compared by its ``open_engine``.

The corpora come from ``workloads.py``, a generator apart from the one BM25's speed stack was tuned
on (a plain Zipf law with exponent 1.0 or 1.2, a vocabulary of 100k or 1M syllable words, short
documents of 20 to 40 tokens or long ones around 220, queries sampled from the vocabulary rather than
from one document). Every corpus shape (``--shapes``, all eight by default) is indexed once per
system and round, in its own child process (the order of the systems rotates every round), and
answers three query shapes (1 to 2, 3 to 6 and 10 to 20 terms) at k = 10, 100 and 1000, one thread:

- q/s: the whole batch of queries as the system answers a batch (``engines_speed.py``), after an
  untimed warm-up call at that k;
- p50 and p95 latency at k = 10: each query answered alone (retbench: ``search`` of one query;
  tantivy: one ``search``; PISA: its own retrieval call for one query, without pyterrier's frames);
- index seconds from raw text and peak RSS (the child's high-water mark: texts, index, every query
  shape's searches); for retbench also where it goes: the resident memory the corpus's doc ids
  take, the fitted arrays' bytes, what the first search adds (numba's runtime and the loop) and
  the build's temporaries.

Medians of the rounds are reported, with ratios to the best peer, and each cell is checked against
the goals of issue 34: top-10 q/s at least the best peer's, top-1000 q/s at least 1.5x the best
peer's, peak RSS at most tantivy's. Where a cell falls short the table says why, from what was
measured (the postings a query's terms hold, which of retbench's search paths ran) and how each
system searches; no cell is left out. The comparability notes of ``engines_speed.py`` apply
(tokenizers, idf, float32 vs float64; PISA's index keeps the stop words). The table goes to
``benchmarks/RESULTS.md``, section ``engines_matrix.<docs>`` (the whole matrix; a run of some
shapes writes ``engines_matrix.<docs>.<shape>_<shape>``, leaving the whole table in place).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    DEFAULT_DATA,
    current_rss_mb,
    load_note,
    markdown,
    median,
    peak_rss_mb,
    read_lines,
    record_results,
    report,
    run_child,
)
from engines_speed import _version, open_engine, timed_searches  # noqa: E402
from workloads import QUERY_SHAPES, SHAPES, shape_named, workload_files  # noqa: E402

SYSTEMS = ("retbench", "tantivy", "pisa")
PEERS = ("tantivy", "pisa")
CUTOFFS = (10, 100, 1000)
LATENCY_K = 10
#: The goals, as ratios of retbench to the best peer (q/s) or to tantivy (peak RSS).
TOP_10_GOAL, TOP_1000_GOAL, MEMORY_GOAL = 1.0, 1.5, 1.0
NAMES = {"retbench": "retbench", "tantivy": "tantivy", "pisa": "PISA"}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def child(system: str, docs_path: Path, query_paths: dict[str, Path], tantivy_heap_mb: int) -> None:
    texts = read_lines(docs_path)
    out: dict[str, object] = {"system": system, "loaded_rss_mb": current_rss_mb(), "n_docs": len(texts)}
    with tempfile.TemporaryDirectory(prefix="retbench-matrix-") as folder:
        engine = open_engine(system, texts, Path(folder), tantivy_heap_mb, out)
        if system == "retbench":
            out["compiled"] = engine.retriever.index.compiles_by_default()  # type: ignore[attr-defined]
        for number, (name, path) in enumerate(query_paths.items()):
            queries = read_lines(path)
            before = current_rss_mb()
            engine.one(queries[0], LATENCY_K)  # warm-up (retbench: numba; PISA: loads its index)
            if number == 0:
                out["first_search_mb"] = current_rss_mb() - before  # retbench: numba's start-up and the loop
            times = []
            for query in queries:
                start = time.perf_counter()
                engine.one(query, LATENCY_K)
                times.append(time.perf_counter() - start)
            out[f"{name}:p50_ms"] = 1000 * _percentile(times, 0.50)
            out[f"{name}:p95_ms"] = 1000 * _percentile(times, 0.95)
            timed_searches(engine, queries, CUTOFFS, out, prefix=f"{name}:")
            if system == "retbench":
                out[f"{name}:postings"] = engine.postings_per_query(queries)  # type: ignore[attr-defined]
        out["peak_rss_mb"] = peak_rss_mb()
    report(**out)


# ----- the verdicts and the reasons ---------------------------------------------------------------
def _best_peer(values: dict[str, float]) -> tuple[str, float]:
    peers = [(values[p], p) for p in PEERS if p in values and values[p] == values[p]]
    if not peers:
        return "", float("nan")
    value, peer = max(peers)
    return peer, value


def _speed_reason(k: int, terms: str, postings: float, compiled: bool, best: str) -> str:
    """Why retbench answers fewer queries a second than the goal, from how each system searches."""
    from retrievers.bm25.index import COMPILED_FROM_POSTINGS

    peer = NAMES[best]
    if not compiled:
        return (f"top-{k}: below {COMPILED_FROM_POSTINGS:,} postings in its index retbench runs scipy's sparse "
                f"product, scoring all "
                f"{postings:,.0f} postings a query; {peer} skips postings (block-max WAND)")
    if terms == "1-2":
        return (f"top-{k}: 1-2 terms leave MaxScore (retbench prunes a block of 65,536 documents at a time) "
                f"almost nothing to leave out of {postings:,.0f} postings; {peer}'s block-max WAND skips the "
                f"blocks of a term whose largest score is under the k-th best")
    return (f"top-{k}: {postings:,.0f} postings a query; retbench's MaxScore leaves out whole terms a block at "
            f"a time, {peer}'s block-max WAND skips blocks of postings within each term")


def _memory_reason(retbench: dict, tantivy: dict) -> str:
    """Where retbench's memory beyond the texts goes, from the child's measurements, against tantivy's."""
    texts, build, peak = retbench["loaded_rss_mb"], retbench["index_peak_rss_mb"], retbench["peak_rss_mb"]
    theirs = tantivy["peak_rss_mb"] - tantivy["loaded_rss_mb"]
    if "index_mb" not in retbench:  # a run recorded before the breakdown was measured
        return f"retbench's peak is {peak - texts:,.0f} MB above the texts, tantivy's {theirs:,.0f} MB"
    when = "its build" if build >= peak else "its searches"
    transient = build - retbench["indexed_rss_mb"]
    first = ("numba's runtime and the compiled loop, a fixed cost" if retbench.get("compiled")
             else "the sparse product's weights, made on the first search, 12 bytes a posting")
    return (f"above the texts retbench peaks at {peak - texts:,.0f} MB (in {when}), tantivy at {theirs:,.0f} MB: "
            f"retbench holds the corpus's doc ids as Python strings ({retbench['ids_mb']:,.0f} MB), its postings "
            f"uncompressed in memory ({retbench['index_mb']:,.0f} MB, 3 bytes a posting), and "
            f"{retbench['first_search_mb']:,.0f} MB for {first}; its build's temporaries "
            f"add {transient:,.0f} MB at the build's peak. Tantivy keeps no ids, and its postings are compressed "
            f"on disk, read through mmap")


def _cell(values: dict[str, float], systems: list[str], digits: str = ",.0f") -> str:
    return " / ".join("—" if values.get(s) != values.get(s) or s not in values else format(values[s], digits)
                      for s in systems)


def tables(results: dict[str, dict[str, list[dict]]], systems: list[str], n_docs: int) -> tuple[str, dict]:
    """The two tables (per corpus shape; per corpus and query shape) and the goals' tallies."""
    tally: dict = {"top-10": [0, 0], "top-1000": [0, 0], "memory": [0, 0], "p50": {s: [] for s in systems}}
    shape_rows, cell_rows = [], []
    order = " / ".join(NAMES[s] for s in systems)
    for shape, runs in results.items():
        medians: dict[str, dict[str, float]] = {}
        for system in systems:
            keys = {key for run in runs[system] for key in run if not isinstance(run[key], str)}
            medians[system] = {key: median([run.get(key) for run in runs[system]]) for key in keys}
        get = {key: {s: medians[s].get(key, float("nan")) for s in systems} for key in
               ("index_s", "peak_rss_mb", "index_peak_rss_mb")}
        memory_ratio = get["peak_rss_mb"].get("retbench", float("nan")) / get["peak_rss_mb"].get("tantivy", float("nan"))
        memory_ok = memory_ratio <= MEMORY_GOAL
        reason = ""
        if memory_ratio == memory_ratio:
            tally["memory"][0] += memory_ok
            tally["memory"][1] += 1
            if not memory_ok:
                reason = _memory_reason(medians["retbench"], medians["tantivy"])
        else:
            reason = "not measured (a system failed or was left out)"
        shape_rows.append([shape, _cell(get["index_s"], systems, ",.1f"), _cell(get["peak_rss_mb"], systems),
                           _cell(get["index_peak_rss_mb"], systems), f"{memory_ratio:.2f}x",
                           ("yes" if memory_ok else "**no**") if memory_ratio == memory_ratio else "—", reason])
        compiled = bool(runs.get("retbench") and all(run.get("compiled") for run in runs["retbench"]))
        for terms in QUERY_SHAPES:
            qps = {k: {s: medians[s].get(f"{terms}:qps_{k}", float("nan")) for s in systems} for k in CUTOFFS}
            ratios, verdicts, reasons = {}, [], []
            postings = medians.get("retbench", {}).get(f"{terms}:postings", float("nan"))
            for k in CUTOFFS:
                best, value = _best_peer(qps[k])
                ratios[k] = qps[k].get("retbench", float("nan")) / value if value == value else float("nan")
                goal = {10: ("top-10", TOP_10_GOAL), 1000: ("top-1000", TOP_1000_GOAL)}.get(k)
                if goal and ratios[k] == ratios[k]:
                    ok = ratios[k] >= goal[1]
                    tally[goal[0]][0] += ok
                    tally[goal[0]][1] += 1
                    verdicts.append(f"{goal[0]} {'yes' if ok else '**no**'}")
                    if not ok:
                        reasons.append(_speed_reason(k, terms, postings, compiled, best))
            p50 = {s: medians[s].get(f"{terms}:p50_ms", float("nan")) for s in systems}
            p95 = {s: medians[s].get(f"{terms}:p95_ms", float("nan")) for s in systems}
            for system in systems:
                tally["p50"][system].append(p50[system])
            cell_rows.append([shape, terms, _cell(qps[10], systems), f"{ratios[10]:.2f}x", _cell(qps[100], systems),
                              f"{ratios[100]:.2f}x", _cell(qps[1000], systems), f"{ratios[1000]:.2f}x",
                              _cell(p50, systems, ".2f"), _cell(p95, systems, ".2f"), f"{postings:,.0f}",
                              ", ".join(verdicts), "; ".join(reasons)])
    shape_table = markdown(["corpus shape", f"index s ({order})", "peak RSS MB", "peak RSS to indexed MB",
                            "RSS / tantivy", "memory goal", "why short"], shape_rows)
    cell_table = markdown(["corpus shape", "query terms", f"q/s top-10 ({order})", "vs best peer",
                           "q/s top-100", "vs best peer", "q/s top-1000", "vs best peer", "p50 ms k=10",
                           "p95 ms k=10", "postings a query", "goals", "why short"], cell_rows)
    return shape_table + "\n\n" + cell_table, tally


def headline(tally: dict, n_docs: int) -> str:
    parts = [f"top-10 >= best peer in {tally['top-10'][0]} of {tally['top-10'][1]} cells",
             f"top-1000 >= 1.5x best peer in {tally['top-1000'][0]} of {tally['top-1000'][1]}",
             f"peak RSS <= tantivy's in {tally['memory'][0]} of {tally['memory'][1]} corpus shapes"]
    text = f"At {n_docs:,} documents: " + "; ".join(parts) + "."
    floors = {s: min((v for v in values if v == v), default=float("nan")) for s, values in tally["p50"].items()}
    if "retbench" in floors and floors["retbench"] == floors["retbench"]:
        peers = ", ".join(f"{NAMES[s]}'s {v:.2f} ms" for s, v in floors.items() if s != "retbench" and v == v)
        text += (f" One query answered alone costs retbench at least {floors['retbench']:.2f} ms (the smallest p50 of"
                 f" any cell: analysing the query and setting up the search, whatever its postings)"
                 + (f", against {peers}" if peers else "") + "; q/s answers batches, where that cost is shared.")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="documents of each corpus shape")
    parser.add_argument("--queries", type=int, default=1000, help="queries of each query shape")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated text")
    parser.add_argument("--rounds", type=int, default=2, help="rounds; medians are reported")
    parser.add_argument("--shapes", default="all", help=f"corpus shapes, comma-separated, or 'all': {', '.join(SHAPES)}")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--tantivy-heap-mb", type=int, default=1000,
                        help="tantivy's indexing heap (its default is 128: more segments, less memory)")
    parser.add_argument("--note", default="", help="a sentence for RESULTS.md (why these shapes, the machine's state)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = list(SHAPES) if args.shapes == "all" else [s.strip() for s in args.shapes.split(",") if s.strip()]
    try:
        shapes = [shape_named(name) for name in names]
    except ValueError as error:
        parser.error(f"--shapes: {error}")
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if unknown := [s for s in systems if s not in SYSTEMS]:
        parser.error(f"--systems: unknown {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}")
    if args.child:
        docs, queries = workload_files(shapes[0], args.docs, args.queries, args.seed, DEFAULT_DATA)
        child(args.child, docs, queries, args.tantivy_heap_mb)
        return

    print(f"# BM25 engine matrix at {args.docs:,} docs, {args.queries:,} queries a query shape, one thread; "
          f"{load_note()}", flush=True)
    results: dict[str, dict[str, list[dict]]] = {}
    for shape in shapes:
        start = time.perf_counter()
        workload_files(shape, args.docs, args.queries, args.seed, DEFAULT_DATA)
        print(f"{shape.name}: data ready in {time.perf_counter() - start:.0f} s", flush=True)
        results[shape.name] = {s: [] for s in systems}
        for round_number in range(args.rounds):
            turn = (round_number + len(results)) % len(systems)
            for system in systems[turn:] + systems[:turn]:
                start = time.perf_counter()
                try:
                    result = run_child([sys.executable, __file__, "--docs", str(args.docs), "--queries",
                                        str(args.queries), "--seed", str(args.seed), "--shapes", shape.name,
                                        "--tantivy-heap-mb", str(args.tantivy_heap_mb), "--child", system],
                                       env={"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}, timeout=7200)
                except RuntimeError as error:  # one failed child leaves its cells empty, not the matrix lost
                    print(f"round {round_number + 1} {shape.name} {system}: FAILED {error}", flush=True)
                    continue
                results[shape.name][system].append(result)
                summary = {key: round(value, 1) for key, value in result.items()
                           if isinstance(value, float) and (":qps_" in key or key in ("index_s", "peak_rss_mb"))}
                print(f"round {round_number + 1} {shape.name} {system} ({time.perf_counter() - start:.0f} s): "
                      f"{summary}", flush=True)
            # recorded after every round: a run stopped part way keeps the rounds it finished, said so
            record(results, shapes, systems, args)
    print(f"# done; {load_note()}")
    print(record(results, shapes, systems, args))


def record(results: dict[str, dict[str, list[dict]]], shapes: list, systems: list[str],
           args: argparse.Namespace) -> str:
    """Write the tables of the shapes measured so far to RESULTS.md; return them."""
    body, tally = tables(results, systems, args.docs)
    versions = ", ".join(_version(s) for s in systems)
    text = headline(tally, args.docs) + "\n\n" + body
    rounds = {name: min(len(runs) for runs in by_system.values()) for name, by_system in results.items()}
    partial = "" if len(rounds) == len(shapes) and set(rounds.values()) == {args.rounds} else \
        (f" (stopped part way: {len(rounds)} of the {len(shapes)} shapes asked for, rounds done: "
         + ", ".join(f"{name} {n}" for name, n in rounds.items()) + ")")
    note = (f"{args.docs:,} documents a corpus shape ({', '.join(rounds)}){partial}, {args.queries:,} queries "
            f"a query shape, one thread, medians of {args.rounds} rounds; {versions}; {load_note()}")
    record_results(section_name(args.docs, [shape.name for shape in shapes]), text,
                   note + (f". {args.note}" if args.note else ""))
    return text


def section_name(docs: int, shapes: list[str]) -> str:
    """RESULTS.md's section of a run: ``engines_matrix.<docs>`` for the whole matrix, and its shapes
    appended for a part of it (joined by ``_``, which no shape's name holds), so that rerunning a few
    shapes never overwrites the whole table; :func:`common.record_results` checks the name.

    >>> section_name(200000, list(SHAPES))
    'engines_matrix.200000'
    >>> section_name(1000000, ["z1.0-v1M-short", "z1.2-v100k-long"])
    'engines_matrix.1000000.z1.0-v1M-short_z1.2-v100k-long'
    """
    whole = sorted(shapes) == sorted(SHAPES)
    return f"engines_matrix.{docs}" + ("" if whole else "." + "_".join(shapes))


if __name__ == "__main__":
    main()
