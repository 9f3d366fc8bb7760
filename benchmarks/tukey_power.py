"""Randomised Tukey HSD against Holm over all pairs: family-wise error and power by simulation.

Each experiment draws ``--systems`` systems on ``--queries`` queries: a query's difficulty ``t_q``
(uniform on 0.2..0.8), a system's true effect ``e_s`` and noise, ``x_qs = clip(t_q + e_s + N(0, sd))``
to [0, 1]. Under the *null* every ``e_s`` is 0; under the *alternative* the effects are spread evenly
from 0 to ``--spread``. Every pair is compared; a pair is called different when its adjusted p <=
0.05: Holm over every pair (the sign-flip randomisation test, ``harness.core.statistics``, Monte
Carlo with ``--permutations`` flips) or the randomised Tukey HSD (``harness.core.tukey``, as many
permutations). Reported: the family-wise error (experiments under the null with any pair called
different), and under the alternative (where every pair truly differs) the share of pairs called
different (power) and of experiments with any pair called. The bootstrap interval that the verdicts
also ask for is left out: it is the same for both corrections.

Then, on a real collection (``--data``, default ``$RETBENCH_DATA/cranfield``; skipped when absent), the
comparison ``bench compare`` makes of eight systems on ndcg@10 and map, once with Holm within each
metric (``--family metric``) and once with ``--family tukey``: how many of the 28 pairs of each metric
each calls one better (the verdicts, interval included).

    python benchmarks/tukey_power.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import markdown, record_results  # noqa: E402
from harness.core.options import PERMUTATIONS  # noqa: E402
from harness.core.statistics import holm, sign_flip_tests  # noqa: E402
from harness.core.tukey import tukey_hsd_p_values  # noqa: E402

ALPHA = 0.05


def draw(rng: np.random.Generator, n_queries: int, effects: np.ndarray, sd: float) -> np.ndarray:
    difficulty = rng.uniform(0.2, 0.8, size=(n_queries, 1))
    return np.clip(difficulty + effects[None, :] + rng.normal(0.0, sd, size=(n_queries, len(effects))), 0.0, 1.0)


def called(scores: np.ndarray, permutations: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (a < b, row-major): called different by Holm over all pairs, by the Tukey HSD."""
    k = scores.shape[1]
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    differences = np.column_stack([scores[:, a] - scores[:, b] for a, b in pairs])
    raw, _ = sign_flip_tests(differences, permutations, seed)
    return holm(raw) <= ALPHA, tukey_hsd_p_values(scores, pairs, permutations, seed) <= ALPHA


REAL_SYSTEMS = ["bm25", "bm25(k1=0.9,b=0.4)", "bm25(k1=2.0,b=0.9)", "bm25(analyzer=english)", "lsa(dims=50)",
                "lsa(dims=100)", "weighted(bm25,lsa(dims=100))", "rrf(bm25,lsa(dims=100))"]


def real_comparison(data: Path) -> str:
    """Pairs called better per metric on ``data`` with eight systems, by Holm (per metric) and by Tukey."""
    from corpora import load_dataset
    from harness import compare
    from harness.core.options import Statistics

    dataset = load_dataset(str(data))
    lines = [f"| {data.name}, 8 systems | pairs called better on ndcg@10 (of 28) | on map (of 28) |", "|---|---|---|"]
    for name, family in (("Holm within the metric", "metric"), ("Tukey HSD", "tukey")):
        result = compare(REAL_SYSTEMS, dataset, ["ndcg@10", "map"], statistics=Statistics(family=family))
        counts = [sum(c.metric == m and c.verdict.endswith(" is better") for c in result.comparisons)
                  for m in ("ndcg@10", "map")]
        lines.append(f"| {name} | {counts[0]} | {counts[1]} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--experiments", type=int, default=500)
    # bench compare's default: with fewer flips Holm's first step, 0.05 / 45, sits at the Monte Carlo p's
    # floor 1 / (1 + flips), which costs Holm power the test itself does not lack
    parser.add_argument("--permutations", type=int, default=PERMUTATIONS)
    parser.add_argument("--sd", type=float, default=0.15, help="per-cell noise")
    parser.add_argument("--spread", type=float, default=0.15, help="largest true effect under the alternative")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("RETBENCH_DATA", "data")) / "cranfield",
                        help="a collection for the real comparison [default: $RETBENCH_DATA/cranfield]")
    parser.add_argument("--no-record", action="store_true", help="print only; leave RESULTS.md as it is")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    k = args.systems
    null_effects = np.zeros(k)
    alternative = np.linspace(0.0, args.spread, k)
    fwer = {"Holm": 0, "Tukey HSD": 0}
    found = {"Holm": 0, "Tukey HSD": 0}
    any_found = {"Holm": 0, "Tukey HSD": 0}
    n_pairs = k * (k - 1) // 2
    for experiment in range(args.experiments):
        holm_null, tukey_null = called(draw(rng, args.queries, null_effects, args.sd), args.permutations, experiment)
        fwer["Holm"] += bool(holm_null.any())
        fwer["Tukey HSD"] += bool(tukey_null.any())
        holm_alt, tukey_alt = called(draw(rng, args.queries, alternative, args.sd), args.permutations, experiment)
        found["Holm"] += int(holm_alt.sum())
        found["Tukey HSD"] += int(tukey_alt.sum())
        any_found["Holm"] += bool(holm_alt.any())
        any_found["Tukey HSD"] += bool(tukey_alt.any())
    seconds = time.perf_counter() - started

    table = markdown(["correction", "family-wise error under the null",
                      "power: pairs called different (all truly differ)", "experiments with any pair called"],
                     [[name, f"{fwer[name] / args.experiments:.3f}", f"{found[name] / (n_pairs * args.experiments):.3f}",
                       f"{any_found[name] / args.experiments:.3f}"] for name in ("Holm", "Tukey HSD")])
    if args.data.exists():
        table += "\n\n" + real_comparison(args.data)
    note = (f"{k} systems ({n_pairs} pairs), {args.queries} queries, {args.experiments} experiments under the null "
            f"and as many under the alternative (true effects evenly 0 to {args.spread}, noise sd {args.sd}), "
            f"{args.permutations} permutations for both, alpha {ALPHA}; Holm over every pair of the sign-flip test's "
            f"p; {seconds:.0f} s in all")
    print(table)
    print(note)
    if not args.no_record:
        record_results("tukey_power", table, note)


if __name__ == "__main__":
    main()
