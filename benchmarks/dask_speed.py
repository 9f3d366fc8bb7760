"""``bench compare --engine dask`` against one process, whole process, overhead included.

    python benchmarks/dask_speed.py --docs 200000 --queries 1000 --rounds 3

Three ways to run the same ``bench compare --systems bm25 --metrics ndcg@10 --no-cache`` on the
same synthetic BEIR folder (``synthetic.py``, fixed seed): the local engine (one process), and
``--engine dask --workers 1`` and ``--workers 2`` (a LocalCluster started and stopped by the run,
one thread per worker). Each run is a fresh process timed from start to exit: imports, the
cluster's start, the workers' own reading of the corpus, the shards' statistics going to the client
and back, and the merge of every shard's top k are all in the time. ``fit`` and ``search`` are the
seconds the manifest records for bm25. The runs alternate round by round; medians are reported.

``--sizing`` measures, in this process, what the scale-out guide's table needs: each shard's index
(postings, term frequencies, vocabulary: the memory a worker keeps) for 1 and 2 shards, and the bytes one
shard sends back for a batch of queries (pickled top k, what the client merges).
"""

from __future__ import annotations

import argparse
import json
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import beir_folder, load_note, markdown, median, record_results  # noqa: E402
from synthetic import workload_arguments  # noqa: E402
from whole_process import BENCH, timed  # noqa: E402

WAYS = {
    "one process (--engine local)": [],
    "--engine dask --workers 1": ["--engine", "dask", "--workers", "1"],
    "--engine dask --workers 2": ["--engine", "dask", "--workers", "2"],
}


def bm25_seconds(out: Path) -> tuple[float, float]:
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    system = json.loads((run / "manifest.json").read_text())["systems"][0]
    return float(system["fit_seconds"]), float(system["search_seconds"])


def sizing(corpus_folder: Path, k: int) -> None:
    """Per-shard index bytes and per-batch hit bytes, for 1 and 2 shards, in this process."""
    from corpora import load_dataset
    from retrievers import BM25
    from retrievers.sharding import fit_in_process

    data = load_dataset(str(corpus_folder))
    rows = []
    for n_shards in (1, 2):
        shards = fit_in_process(BM25(), data.corpus, n_shards)
        for number, shard in enumerate(shards.indexes):
            index = shard.index
            index_bytes = (index.nbytes + sum(a.nbytes for a in shard.vocabulary) + shard.tie_rank.nbytes)
            hits = shards.retriever.search_shard(shard, data.queries, k)
            rows.append([n_shards, number, shards.bounds[number][1] - shards.bounds[number][0],
                         int(index.indptr[:, -1].sum()), index_bytes / 1e6, len(pickle.dumps(hits)) / 1e6,
                         len(data.queries)])
    table = markdown(["shards", "shard", "documents", "postings", "index MB", f"top {k} of the batch, MB pickled",
                      "queries in the batch"], rows)
    print(table)
    record_results("dask_speed.sizing", table, f"{len(data.corpus):,} docs, {len(data.queries):,} queries, k = {k}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload_arguments(parser)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--sizing", action="store_true", help="measure shard sizes instead of timing runs")
    args = parser.parse_args()
    subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                    f"import common; common.beir_folder({args.docs}, {args.queries}, {args.seed})"], check=True)
    corpus = beir_folder(args.docs, args.queries, args.seed)
    if args.sizing:
        print(f"# shard sizes at {args.docs:,} docs, {args.queries:,} queries, k = {args.depth}")
        sizing(corpus, args.depth)
        return
    work = Path(tempfile.mkdtemp(prefix="retbench-dask-"))
    compare = ["compare", "--corpus", str(corpus), "--systems", "bm25", "--metrics", "ndcg@10", "--depth",
               str(args.depth), "--no-cache", "--quiet"]
    walls: dict[str, list[float]] = {name: [] for name in WAYS}
    fits: dict[str, list[float]] = {name: [] for name in WAYS}
    searches: dict[str, list[float]] = {name: [] for name in WAYS}
    print(f"# bench compare, bm25, at {args.docs:,} docs, {args.queries:,} queries, depth {args.depth}; {load_note()}",
          flush=True)
    try:
        for round_number in range(args.rounds):
            order = list(WAYS) if round_number % 2 == 0 else list(reversed(WAYS))
            for number, name in enumerate(order):
                out = work / f"{round_number}-{number}"
                wall, _ = timed(BENCH + compare + WAYS[name] + ["--out", str(out)])
                fit, search = bm25_seconds(out)
                walls[name].append(wall)
                fits[name].append(fit)
                searches[name].append(search)
                print(f"round {round_number + 1} {name}: {wall:.2f} s (fit {fit:.2f} s, search {search:.2f} s)",
                      flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"# done; {load_note()}")
    local = median(walls[next(iter(WAYS))])
    table = markdown(["bench compare", "whole process s (median)", "ratio to one process", "bm25 fit s",
                      "bm25 search s"],
                     [[name, median(walls[name]), median(walls[name]) / local, median(fits[name]),
                       median(searches[name])] for name in WAYS])
    print(table)
    record_results("dask_speed", table, f"bm25 at {args.docs:,} docs, {args.queries:,} queries, depth {args.depth}, "
                   f"medians of {args.rounds} rounds; {load_note()}")


if __name__ == "__main__":
    main()
