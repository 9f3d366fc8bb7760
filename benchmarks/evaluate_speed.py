"""retbench's evaluator against pytrec_eval, ir_measures and ranx, side by side.

Part 1, the evaluation step: 10,000 queries x 1,000 retrieved documents, graded qrels (~50
judgments per query, grades 0-3), nDCG@10 (linear gain), P@10, recall@100 and MRR, per query.
Every library starts from the same synthetic data and is timed in two steps: *setup* (building its
own input structures from the shared columns / dicts) and *evaluate* (the call that computes the
per-query values). Rounds alternate between libraries (the order rotates each round); medians are
reported, with ratios against retbench. ranx's first call (numba compilation, or loading its
on-disk cache) is timed separately. The shared inputs are frozen out of the garbage collector
(``gc.freeze``) so that no library's timing includes sweeps over data it does not own.

Part 2, the command line: ``bench evaluate`` on a 2-million-line run file against
``python -m ir_measures`` and, given ``--trec-eval PATH``, trec_eval itself (C) on the same files
(read + score + print, fresh processes, alternating, medians).

A peer library that is not installed is skipped with a message (``pip install retbench[bench]``).

    python benchmarks/evaluate_speed.py               # both parts, 5 rounds
    python benchmarks/evaluate_speed.py --rounds 3 --queries 2000 --skip-cli
    python benchmarks/evaluate_speed.py --skip-library --cli-rounds 5 --trec-eval ../trec_eval/trec_eval
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import warnings
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import load_note, markdown, record_results  # noqa: E402
from corpora import Qrels  # noqa: E402
from corpora.trec_io import read_run, run_from_arrays  # noqa: E402
from harness.core.evaluation import evaluate  # noqa: E402
from harness.core.metrics import parse_metrics  # noqa: E402

MEASURES = {  # label -> each library's name for it (trec_eval's: its -m option, for --trec-eval)
    "nDCG@10": {"retbench": "ndcg@10", "pytrec_eval": "ndcg_cut_10", "ir_measures": "nDCG@10", "ranx": "ndcg@10",
                "trec_eval": "ndcg_cut.10"},
    "P@10": {"retbench": "precision@10", "pytrec_eval": "P_10", "ir_measures": "P@10", "ranx": "precision@10",
             "trec_eval": "P.10"},
    "R@100": {"retbench": "recall@100", "pytrec_eval": "recall_100", "ir_measures": "R@100", "ranx": "recall@100",
              "trec_eval": "recall.100"},
    "MRR": {"retbench": "mrr", "pytrec_eval": "recip_rank", "ir_measures": "RR", "ranx": "mrr",
            "trec_eval": "recip_rank"},
}


@dataclass
class Workload:
    run: pd.DataFrame  # query_id, doc_id, score
    qrels: pd.DataFrame  # query_id, doc_id, relevance
    run_dict: dict[str, dict[str, float]]
    qrels_dict: dict[str, dict[str, int]]


def make_workload(n_queries: int, depth: int, judged: int, n_docs: int, seed: int) -> Workload:
    """Each query retrieves ``depth`` distinct docs of an ``n_docs`` collection with distinct,
    float32-exact scores; 80% of its judgments are pooled from its own ranking, 20% elsewhere."""
    rng = np.random.default_rng(seed)
    doc_names = np.array([f"D{i:07d}" for i in range(n_docs)], dtype=object)
    query_names = np.array([f"q{i:05d}" for i in range(n_queries)], dtype=object)
    retrieved = np.stack([rng.choice(n_docs, depth, replace=False) for _ in range(n_queries)])
    scores = np.sort(rng.random((n_queries, depth)).astype(np.float32), axis=1)[:, ::-1].astype(np.float64)
    run = pd.DataFrame({"query_id": np.repeat(query_names, depth), "doc_id": doc_names[retrieved.ravel()],
                        "score": scores.ravel()})
    pooled = judged * 4 // 5
    picks = np.argsort(rng.random((n_queries, depth)), axis=1)[:, :pooled]
    pooled_docs = np.take_along_axis(retrieved, picks, axis=1)
    outside = (retrieved[:, :1] + rng.integers(n_docs // 2, n_docs // 2 + 10 * judged, (n_queries, judged - pooled))) % n_docs
    judged_docs = np.concatenate([pooled_docs, outside], axis=1)
    grades = rng.choice([0, 1, 2, 3], size=judged_docs.shape, p=[0.5, 0.25, 0.15, 0.10])
    qrels = pd.DataFrame({"query_id": np.repeat(query_names, judged), "doc_id": doc_names[judged_docs.ravel()],
                          "relevance": grades.ravel()}).drop_duplicates(["query_id", "doc_id"])
    # ids stay plain Python strings (ranx insists on object columns; pandas 3 would infer "str")
    run = run.astype({"query_id": object, "doc_id": object})
    qrels = qrels.astype({"query_id": object, "doc_id": object})
    run_dict: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run.query_id.tolist(), run.doc_id.tolist(), run.score.tolist()):
        run_dict.setdefault(q, {})[d] = s
    qrels_dict: dict[str, dict[str, int]] = {}
    for q, d, g in zip(qrels.query_id.tolist(), qrels.doc_id.tolist(), qrels.relevance.tolist()):
        qrels_dict.setdefault(q, {})[d] = int(g)
    return Workload(run, qrels, run_dict, qrels_dict)


# Each library: setup(workload) -> state; evaluate(state) -> {label: mean}.
Setup = Callable[[Workload], object]
Evaluate = Callable[[object], dict[str, float]]


def retbench_library() -> tuple[Setup, Evaluate]:
    metrics = parse_metrics([m["retbench"] for m in MEASURES.values()])

    def setup(w: Workload) -> object:
        run = run_from_arrays(w.run.query_id.to_numpy(), w.run.doc_id.to_numpy(), w.run.score.to_numpy())
        qrels = Qrels.from_arrays(w.qrels.query_id.to_numpy(), w.qrels.doc_id.to_numpy(), w.qrels.relevance.to_numpy())
        return run, qrels

    def run_eval(state: object) -> dict[str, float]:
        run, qrels = state  # type: ignore[misc]
        frame = evaluate(run, qrels, metrics, qrels.queries_with_relevant(1))
        return {label: float(frame[m.name].mean()) for label, m in zip(MEASURES, metrics)}

    return setup, run_eval


def pytrec_eval_library() -> tuple[Setup, Evaluate]:
    import pytrec_eval

    names = {label: m["pytrec_eval"] for label, m in MEASURES.items()}

    def setup(w: Workload) -> object:
        return pytrec_eval.RelevanceEvaluator(w.qrels_dict, set(names.values())), w.run_dict

    def run_eval(state: object) -> dict[str, float]:
        evaluator, run = state  # type: ignore[misc]
        per_query = evaluator.evaluate(run)
        return {label: float(np.mean([v[name] for v in per_query.values()])) for label, name in names.items()}

    return setup, run_eval


def ir_measures_library() -> tuple[Setup, Evaluate]:
    import ir_measures

    names = {label: ir_measures.parse_measure(m["ir_measures"]) for label, m in MEASURES.items()}

    def setup(w: Workload) -> object:
        return w.qrels_dict, w.run_dict

    def run_eval(state: object) -> dict[str, float]:
        qrels, run = state  # type: ignore[misc]
        sums: dict[str, list[float]] = {label: [] for label in names}
        by_measure = {str(m): label for label, m in names.items()}
        for metric in ir_measures.iter_calc(list(names.values()), qrels, run):
            sums[by_measure[str(metric.measure)]].append(metric.value)
        return {label: float(np.mean(v)) for label, v in sums.items()}

    return setup, run_eval


def ranx_library() -> tuple[Setup, Evaluate]:
    import ranx

    names = {label: m["ranx"] for label, m in MEASURES.items()}

    def setup(w: Workload) -> object:
        qrels = ranx.Qrels.from_df(w.qrels.rename(columns={"query_id": "q_id"}), q_id_col="q_id",
                                   doc_id_col="doc_id", score_col="relevance")
        run = ranx.Run.from_df(w.run.rename(columns={"query_id": "q_id"}), q_id_col="q_id", doc_id_col="doc_id",
                               score_col="score")
        return qrels, run

    def run_eval(state: object) -> dict[str, float]:
        qrels, run = state  # type: ignore[misc]
        means = ranx.evaluate(qrels, run, list(names.values()), make_comparable=True)
        return {label: float(means[name]) for label, name in names.items()}

    return setup, run_eval


LIBRARIES: dict[str, tuple[str, Callable[[], tuple[Setup, Evaluate]]]] = {
    "retbench": ("numpy", retbench_library),
    "pytrec_eval": ("pytrec_eval", pytrec_eval_library),
    "ir_measures": ("ir_measures", ir_measures_library),
    "ranx": ("ranx", ranx_library),
}


def ranx_first_call_seconds() -> float:
    """Time of ranx's first evaluate in this process on a tiny input: numba compiles (or loads
    its on-disk cache for) every kernel it touches."""
    import ranx

    qrels = ranx.Qrels({"q1": {"d1": 1, "d2": 2}})
    run = ranx.Run({"q1": {"d1": 0.5, "d2": 0.4, "d3": 0.3}})
    start = time.perf_counter()
    ranx.evaluate(qrels, run, [m["ranx"] for m in MEASURES.values()], make_comparable=True)
    return time.perf_counter() - start


def part_one(args: argparse.Namespace) -> None:
    available = {}
    for name, (module, factory) in LIBRARIES.items():
        if importlib.util.find_spec(module) is None:
            print(f"skipping {name}: not installed (pip install 'retbench[bench]')")
            continue
        available[name] = factory
    print(f"workload: {args.queries} queries x {args.depth} docs, ~{args.judged} judgments per query, "
          f"{args.collection} documents in the collection; {args.rounds} alternating rounds")
    start = time.perf_counter()
    workload = make_workload(args.queries, args.depth, args.judged, args.collection, seed=0)
    # The shared inputs (10M-entry dicts) belong to the harness: freeze them out of the garbage
    # collector's sweeps, so no library pays for traversing another's data.
    gc.collect()
    gc.freeze()
    print(f"  generated {len(workload.run):,} run lines, {len(workload.qrels):,} judgments "
          f"in {time.perf_counter() - start:.1f} s")
    if "ranx" in available:
        print(f"  ranx first call (numba compile or cache load): {ranx_first_call_seconds():.2f} s")
    libraries = {name: factory() for name, factory in available.items()}
    setup_times: dict[str, list[float]] = {name: [] for name in libraries}
    eval_times: dict[str, list[float]] = {name: [] for name in libraries}
    means: dict[str, dict[str, float]] = {}
    names = list(libraries)
    for round_number in range(args.rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            setup, run_eval = libraries[name]
            t0 = time.perf_counter()
            state = setup(workload)
            t1 = time.perf_counter()
            means[name] = run_eval(state)
            t2 = time.perf_counter()
            setup_times[name].append(t1 - t0)
            eval_times[name].append(t2 - t1)
            del state
        print(f"  round {round_number + 1}: " + ", ".join(f"{n} {eval_times[n][-1]:.2f} s" for n in names))
    base = statistics.median(eval_times["retbench"])
    table = markdown(["library", "setup s (median)", "evaluate s (median)", "evaluate / retbench's"],
                     [[name, statistics.median(setup_times[name]), statistics.median(eval_times[name]),
                       f"{statistics.median(eval_times[name]) / base:.1f}x"] for name in names])
    table += "\n\nmeans (a sanity check that every library computed the same thing):\n\n" + "\n".join(
        f"- {name}: " + ", ".join(f"{label} {value:.6f}" for label, value in means[name].items()) for name in names)
    print("\n" + table)
    record_results("evaluate_speed.library", table, f"{args.queries:,} queries x {args.depth:,} docs, ~{args.judged} "
                   f"judgments per query, {args.rounds} rotating rounds, medians; {load_note()}")


def write_trec_files(folder: Path, n_queries: int, depth: int, judged: int, collection: int) -> tuple[Path, Path]:
    workload = make_workload(n_queries, depth, judged, collection, seed=1)
    run, qrels = workload.run, workload.qrels
    ranks = np.tile(np.arange(1, depth + 1), n_queries)
    run_path, qrels_path = folder / "run.trec", folder / "qrels.txt"
    with run_path.open("w") as out:
        out.writelines(f"{q} Q0 {d} {r} {s:.6f} synthetic\n"
                       for q, d, r, s in zip(run.query_id.tolist(), run.doc_id.tolist(), ranks.tolist(),
                                             run.score.tolist()))
    with qrels_path.open("w") as out:
        out.writelines(f"{q} 0 {d} {g}\n" for q, d, g in zip(qrels.query_id.tolist(), qrels.doc_id.tolist(),
                                                              qrels.relevance.tolist()))
    return run_path, qrels_path


def part_two(args: argparse.Namespace) -> None:
    commands: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        run_path, qrels_path = write_trec_files(Path(folder), args.cli_queries, args.depth, args.judged,
                                                args.collection)
        lines = args.cli_queries * args.depth
        commands["bench evaluate"] = [sys.executable, "-c", "from harness.cli import main; main()", "evaluate",
                                      "--qrels", str(qrels_path), str(run_path), "--metrics",
                                      ",".join(m["retbench"] for m in MEASURES.values()), "--format", "csv"]
        if importlib.util.find_spec("ir_measures") is None:
            print("no ir_measures CLI in the comparison: ir_measures is not installed (pip install retbench[bench])")
        else:
            commands["ir_measures CLI"] = [sys.executable, "-m", "ir_measures", str(qrels_path), str(run_path),
                                           " ".join(m["ir_measures"] for m in MEASURES.values())]
        if args.trec_eval:
            measures = [part for m in MEASURES.values() for part in ("-m", m["trec_eval"])]
            commands["trec_eval (C)"] = [args.trec_eval, "-c", *measures, str(qrels_path), str(run_path)]
        times: dict[str, list[float]] = {name: [] for name in commands}
        print(f"\ncommand line: a {lines:,}-line run file, {args.cli_rounds} alternating rounds (wall time)")
        for round_number in range(args.cli_rounds):
            order = list(commands) if round_number % 2 == 0 else list(commands)[::-1]
            for name in order:
                start = time.perf_counter()
                subprocess.run(commands[name], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
                times[name].append(time.perf_counter() - start)
        reads = []
        for _ in range(args.cli_rounds):
            start = time.perf_counter()
            read_run(run_path)
            reads.append(time.perf_counter() - start)
        base = statistics.median(times["bench evaluate"])
        rows = [[name, statistics.median(values), f"{statistics.median(values) / base:.1f}x",
                 ", ".join(f"{v:.2f}" for v in values)] for name, values in times.items()]
        rows.append(["retbench read_run alone (in process)", statistics.median(reads), "", ""])
        table = markdown(["command", "wall s (median)", "/ bench evaluate's", "rounds s"], rows)
        print(table)
        record_results("evaluate_speed.cli", table, f"a {lines:,}-line run file, {args.cli_rounds} alternating "
                       f"rounds; {load_note()}")


def main() -> None:
    warnings.filterwarnings("ignore", module="ranx")
    warnings.filterwarnings("ignore", module="numba")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--judged", type=int, default=50)
    parser.add_argument("--collection", type=int, default=1_000_000, help="documents in the synthetic collection")
    parser.add_argument("--cli-queries", type=int, default=2_000, help="queries of the CLI run file (x depth lines)")
    parser.add_argument("--cli-rounds", type=int, default=3)
    parser.add_argument("--trec-eval", metavar="PATH", help="a trec_eval binary (built from its repository) to time "
                                                              "on the CLI's files too")
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--skip-library", action="store_true")
    args = parser.parse_args()
    if not args.skip_library:
        part_one(args)
    if not args.skip_cli:
        part_two(args)


if __name__ == "__main__":
    main()
