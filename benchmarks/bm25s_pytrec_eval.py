"""The job of ``bench compare --systems bm25 --metrics ndcg@10``, written with bm25s and pytrec_eval.

    python benchmarks/bm25s_pytrec_eval.py CORPUS_FOLDER OUT_FOLDER [--depth 1000]

Reads a BEIR folder, indexes title + text with bm25s's own tokenizer (English stop words), retrieves
the top ``depth`` for every judged query, scores nDCG@10 with pytrec_eval (trec_eval's code), and
writes what a results folder holds for it: the run in TREC format, per-query values and the mean.
It is the peer that ``whole_process.py`` times ``bench compare`` against.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--depth", type=int, default=1000)
    args = parser.parse_args()

    import bm25s
    import pytrec_eval

    documents = read_jsonl(args.corpus / "corpus.jsonl")
    doc_ids = [str(d["_id"]) for d in documents]
    texts = [f"{d.get('title') or ''}\n{d.get('text') or ''}" if d.get("title") else d.get("text") or ""
             for d in documents]
    del documents
    qrels: dict[str, dict[str, int]] = {}
    with (args.corpus / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            fields = line.rstrip("\n").split("\t")
            if number == 0 and fields[0] == "query-id":
                continue
            qrels.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    queries = [q for q in read_jsonl(args.corpus / "queries.jsonl") if str(q["_id"]) in qrels]
    query_ids = [str(q["_id"]) for q in queries]

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([q["text"] for q in queries], stopwords="en", show_progress=False)
    found, scores = retriever.retrieve(tokens, k=min(args.depth, len(doc_ids)), show_progress=False)

    run: dict[str, dict[str, float]] = {}
    for query_id, row, values in zip(query_ids, found, scores):
        run[query_id] = {doc_ids[d]: float(s) for d, s in zip(row, values) if s > 0}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    per_query = evaluator.evaluate(run)

    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "bm25.trec").open("w", encoding="utf-8") as handle:
        for query_id in query_ids:
            ranked = sorted(run[query_id].items(), key=lambda pair: -pair[1])
            for rank, (doc_id, score) in enumerate(ranked, 1):
                handle.write(f"{query_id} Q0 {doc_id} {rank} {score!r} bm25s\n")
    with (args.out / "per_query.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["system", "query_id", "ndcg@10"])
        for query_id in query_ids:
            writer.writerow(["bm25s", query_id, per_query.get(query_id, {}).get("ndcg_cut_10", 0.0)])
    mean = sum(per_query.get(q, {}).get("ndcg_cut_10", 0.0) for q in query_ids) / max(1, len(query_ids))
    (args.out / "summary.csv").write_text(f"system,ndcg@10\nbm25s,{mean!r}\n", encoding="utf-8")
    print(json.dumps({"ndcg@10": mean, "queries": len(query_ids)}))


if __name__ == "__main__":
    main()
