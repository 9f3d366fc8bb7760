"""Which pairs to judge next: ``bench pool``'s orders on a fully judged collection with its judgments hidden.

Cranfield's judgments are taken as the whole truth (a pair they do not hold is not relevant). Four
systems are run (A = bm25 and B = lsa(dims=100), the comparison a user cares about, and two more
that add their own documents to the pool); every judgment is hidden, and the pool of the top
``--depth`` of the four is judged ``--batch`` pairs at a time in each order of
``harness.judgments.pool`` (``systems``, the default, and ``pair:A,B``) and in a random order
(seeded), each judgment revealing the true grade. After each batch:

* what is still unknown about A - B: the width of the range their mean DCG@depth difference (binary
  gain) can still take with the grades of the unjudged pairs (``unknown_difference``);
* the error of the nDCG@10 difference A - B computed from the judgments so far (unjudged = not
  relevant) against the one from all of them.

Reported: the judgments each order needs to bring the unknown width to a half, a quarter and a tenth
of where it started, and the error after a few budgets; ``--chart FILE`` draws both curves (SVG,
matplotlib).

    python benchmarks/pool_order.py --chart docs/pool-order.svg
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import markdown, record_results  # noqa: E402

SYSTEMS = ["bm25", "lsa(dims=100)", "bm25(analyzer=english)", "weighted(bm25,lsa(dims=100))"]
A, B = SYSTEMS[0], SYSTEMS[1]
SHARES = (0.5, 0.25, 0.1)
BUDGETS = (250, 500, 1000, 2000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("RETBENCH_DATA", "data")) / "cranfield",
                        help="a fully judged collection [default: $RETBENCH_DATA/cranfield]")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0, help="of the random order")
    parser.add_argument("--chart", type=Path, default=None, help="write the curves to this SVG file")
    parser.add_argument("--no-record", action="store_true", help="print only; leave RESULTS.md as it is")
    args = parser.parse_args()

    from corpora import load_dataset
    from harness import compare
    from harness.core.evaluation import evaluate
    from harness.core.inputs import resolve_metrics
    from harness.core.options import Scoring, Statistics
    from harness.judgments.pool import pool, unknown_difference

    started = time.perf_counter()
    data = load_dataset(str(args.data))
    result = compare(SYSTEMS, data, ["ndcg@10"], scoring=Scoring(depth=args.depth),
                     statistics=Statistics(bootstrap_samples=10, permutations=10))
    runs = {s.label: s.run for s in result.systems}
    truth = data.qrels
    queries = list(dict.fromkeys(result.per_query["query_id"]))
    metric = resolve_metrics("ndcg@10")

    def difference(judged: dict[str, dict[str, int]]) -> float:
        values = [evaluate(runs[s], judged, metric, queries)["ndcg@10"].to_numpy() for s in (A, B)]
        return float((values[0] - values[1]).mean())

    true_difference = difference({q: dict(truth.get(q, {})) for q in queries})
    orders = {"systems (default)": pool(runs, {}, queries, args.depth).pairs,
              f"pair:{A},{B}": pool(runs, {}, queries, args.depth, f"pair:{A},{B}").pairs}
    shuffled = orders["systems (default)"].sample(frac=1.0, random_state=random.Random(args.seed).randrange(2**32))
    orders["random"] = shuffled
    curves: dict[str, list[tuple[int, float, float]]] = {}
    for name, pairs in orders.items():
        judged: dict[str, dict[str, int]] = {q: {} for q in queries}
        points = [(0, unknown_difference(runs, judged, A, B, queries, args.depth), abs(difference(judged) - true_difference))]
        rows = list(pairs[["query_id", "doc_id"]].itertuples(index=False, name=None))
        for start in range(0, len(rows), args.batch):
            for query, doc in rows[start:start + args.batch]:
                judged[query][doc] = truth.get(query, {}).get(doc, 0)
            done = min(len(rows), start + args.batch)
            points.append((done, unknown_difference(runs, judged, A, B, queries, args.depth),
                           abs(difference(judged) - true_difference)))
        curves[name] = points
    total = len(orders["random"])

    def needed(points: list[tuple[int, float, float]], share: float) -> int:
        return next(done for done, unknown, _ in points if unknown <= share * points[0][1] + 1e-12)

    def error_at(points: list[tuple[int, float, float]], budget: int) -> float:
        return next(error for done, _, error in points if done >= min(budget, total))

    header = (["order"] + [f"judgments to {share:.0%} of the unknown" for share in SHARES]
              + [f"nDCG@10 error after {budget}" for budget in BUDGETS])
    table = markdown(header, [[name] + [f"{needed(points, share):,}" for share in SHARES]
                              + [f"{error_at(points, budget):.4f}" for budget in BUDGETS]
                              for name, points in curves.items()])
    note = (f"Cranfield's judgments hidden and revealed in each order ({total:,} unjudged pairs in the top {args.depth} "
            f"of {', '.join(SYSTEMS)}; batches of {args.batch}); A = {A}, B = {B}; unknown at the start: "
            f"{curves['random'][0][1]:.3f} (mean DCG@{args.depth} difference, binary gain); true nDCG@10 difference "
            f"{true_difference:+.4f}; {time.perf_counter() - started:.0f} s in all")
    print(table)
    print(note)
    if args.chart is not None:
        _chart(curves, args.chart, A, B, args.depth)
    if not args.no_record:
        record_results("pool_order", table, note)


def _chart(curves: dict[str, list[tuple[int, float, float]]], path: Path, a: str, b: str, depth: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "retbench"  # the same bytes for the same curves
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, points in curves.items():
        done = [p[0] for p in points]
        left.plot(done, [p[1] for p in points], label=name)
        right.plot(done, [p[2] for p in points], label=name)
    left.set(xlabel="judgments", ylabel=f"still unknown (DCG@{depth} difference)",
             title=f"what is unknown about {a} - {b}")
    right.set(xlabel="judgments", ylabel="|error| of the nDCG@10 difference", title="error against all judgments")
    left.legend(frameon=False, fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="svg", metadata={"Date": None})
    plt.close(figure)


if __name__ == "__main__":
    main()
