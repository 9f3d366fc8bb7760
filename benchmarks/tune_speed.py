"""``bench tune``'s cost, side by side: a 7 x 7 BM25 grid with 5 folds against one BM25 fit and search,
and against the plain approach of fitting every grid point from scratch.

    python benchmarks/tune_speed.py --docs 200000 --queries 1000 --rounds 3 --plain-rounds 1

Every measurement is a fresh process (``common.run_child``) that loads the synthetic BEIR folder
(``synthetic.py``, fixed seed; loading is not timed), then times one of:

* ``one``: ``BM25().fit(corpus)`` and ``search(queries, 10)`` -- the unit the issue's budget is
  counted in (5x this at most);
* ``tune``: ``harness.tune(grid, dataset, "ndcg@10", folds=5)`` with no cache: the shared postings
  are built, 49 settings ranked, evaluated, cross-validated and bootstrapped;
* ``all-postings``: the other way measured for the shortcut: the shared postings built once, then
  per setting an index weighting *every* posting (as ``BM25.fit`` would from the shared tokens),
  searched and evaluated;
* ``plain``: per setting, ``BM25(k1, b).fit(corpus).search(queries, 10)`` and its evaluation, then
  the same cross-validation.

Systems alternate round by round; the table gives medians. ``plain`` (about 49 fits) runs
``--plain-rounds`` times. The parent checks that ``tune``, ``all-postings`` and ``plain`` find the
same per-point means, bit for bit.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import beir_folder, load_note, markdown, median, record_results, report, run_child  # noqa: E402
from synthetic import workload_arguments  # noqa: E402

GRID = "bm25(k1=0.6:1.8:0.2,b=0.3:0.9:0.1)"
METRIC = "ndcg@10"
FOLDS = 5


def _settings() -> list[tuple[float, float]]:
    from retrievers.grid import read_grid

    grid = read_grid(GRID)
    return [(float(v["k1"]), float(v["b"])) for v in (grid.values(p) for p in grid.points())]


def _evaluate_runs(runs, dataset, metric) -> tuple[list[float], float]:
    """Per-point means, and the cross-validated estimate (the same steps as harness.tune)."""
    import numpy as np

    from harness.core.api import queries_that_count
    from harness.tuning.cross_validation import assign_folds, cross_validate, intervals
    from harness.core.evaluation import evaluate

    query_ids = queries_that_count(dataset.qrels, 1, dataset.queries.ids)
    values = np.array([evaluate(run, dataset.qrels, [metric], query_ids)[metric.name].to_numpy() for run in runs])
    cv = cross_validate(values, assign_folds(len(query_ids), FOLDS, 0))
    intervals(cv.held_out[:, None], 5000, 0, 0.95)
    return cv.means.tolist(), cv.estimate


def child(system: str, folder: str) -> None:
    from corpora import load_dataset
    from harness.core.metrics import parse_metric
    from retrievers import BM25

    dataset = load_dataset(folder)
    metric = parse_metric(METRIC)
    queries = dataset.queries
    start = time.perf_counter()
    means: list[float] = []
    if system == "one":
        BM25().fit(dataset.corpus).search(queries, 10)
    elif system == "tune":
        from harness import tune

        result = tune(GRID, dataset, METRIC, folds=FOLDS)
        means = result.cv.means.tolist()
    elif system == "plain":
        runs = (BM25(k1=k1, b=b).fit(dataset.corpus).search(queries, 10) for k1, b in _settings())
        means, _ = _evaluate_runs(runs, dataset, metric)
    elif system == "all-postings":
        means, _ = _evaluate_runs(_all_postings_runs(dataset), dataset, metric)
    else:
        raise SystemExit(f"unknown system {system}")
    report(seconds=time.perf_counter() - start, means=means)


def _all_postings_runs(dataset):
    """Per setting, an index over every posting of the shared postings (no restriction to the
    queries' terms), searched by the same kernel."""
    import numpy as np

    from corpora import Run
    from corpora.tokenize import encode
    from retrievers.bm25.sweep import build_postings
    from retrievers.bm25.index import BM25Index, bm25_idf, length_classes, length_norms
    from retrievers.strings import SortedStrings

    corpus = dataset.corpus
    state = build_postings(corpus, "article")
    indptr, block_docs = state["indptr"], int(state["block_docs"][0])
    idf = bm25_idf(len(corpus), np.diff(indptr, axis=1).sum(axis=0))
    avgdl = state["doc_lengths"].astype(np.float64).mean()  # as the index takes it
    classes, length_class = length_classes(state["doc_lengths"])
    offsets, terms = encode(dataset.queries.texts, SortedStrings(state["vocabulary"], state["vocabulary_offsets"]))
    doc_ids = corpus.id_array()
    docs = np.concatenate([state[f"docs_{n}"] for n in range(len(indptr))])
    tfs = np.concatenate([state[f"tf_{n}"] for n in range(len(indptr))])
    block_starts = np.concatenate([[0], np.cumsum(indptr[:, -1])])
    for k1, b in _settings():
        index = BM25Index(indptr, block_starts, docs, tfs, idf, length_class, length_norms(classes, avgdl, k1, b), k1,
                          len(corpus), block_docs)
        run_offsets, found, scores = index.search(offsets, terms, 10, state["tie_rank"], 1e-9)
        yield Run(dataset.queries.ids, doc_ids, run_offsets, found, scores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload_arguments(parser)
    parser.add_argument("--plain-rounds", type=int, default=1, help="rounds of the plain approach (~49 fits each)")
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    run_child([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
               f"import common; common.beir_folder({args.docs}, {args.queries}, {args.seed})"])
    folder = str(beir_folder(args.docs, args.queries, args.seed))
    print(f"# {GRID}, {FOLDS} folds, {METRIC}: {args.docs:,} docs, {args.queries:,} queries; {load_note()}", flush=True)
    seconds: dict[str, list[float]] = {"one": [], "tune": [], "all-postings": [], "plain": []}
    means: dict[str, list[float]] = {}
    for round_number in range(max(args.rounds, args.plain_rounds)):
        systems = [s for s in seconds if s != "plain" or round_number < args.plain_rounds]
        if round_number >= args.rounds:
            systems = ["plain"]
        for system in systems if round_number % 2 == 0 else list(reversed(systems)):
            result = run_child([sys.executable, __file__, "--child", system, folder], timeout=7200)
            seconds[system].append(result["seconds"])
            if result["means"]:
                means.setdefault(system, result["means"])
            print(f"round {round_number + 1} {system}: {result['seconds']:.2f} s", flush=True)
    same = {system: means[system] == means["tune"] for system in means}
    print(f"# done; {load_note()}; per-point means equal to tune's: {json.dumps(same)}")
    one = median(seconds["one"])
    rows = [["one BM25 fit + search (k = 10)", one, 1.0, len(seconds["one"])]]
    for system, name in (("tune", "bench tune: shared postings, query terms weighted"),
                         ("all-postings", "shared postings, every posting weighted per point"),
                         ("plain", "plain: every point fitted from scratch")):
        rows.append([name, median(seconds[system]), median(seconds[system]) / one, len(seconds[system])])
    table = markdown(["7 x 7 BM25 grid, 5 folds", "median s", "x one fit + search", "runs"], rows)
    table += f"\n\nper-point means equal to tune's: {json.dumps(same)}"
    print(table)
    record_results("tune_speed", table, f"{GRID}, {FOLDS} folds, {METRIC}: {args.docs:,} docs, {args.queries:,} "
                   f"queries; {load_note()}")


if __name__ == "__main__":
    main()
