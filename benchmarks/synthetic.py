"""Synthetic Zipfian corpora for the speed benchmarks: same seed, same bytes.

Documents draw words from a Zipf-Mandelbrot law (p(rank) ~ 1 / (rank + 2.7)) over a vocabulary of
random lowercase words whose most frequent entries are the article's stop words, so stop-word
removal does real work. Lengths are Poisson around 60 tokens. Surface forms vary the way real text
does: a capitalised first word, commas and full stops, a few accented words (whose non-ASCII letters
split tokens). Each query is 2 to 5 distinct non-stop words of one random document (``query_terms``
sets the range), which is its only relevant document (grade 1).

    python benchmarks/synthetic.py --docs 200000 --queries 1000 --out /tmp/zipf-200k

writes a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``) that
``bench compare --corpus`` reads. Not part of the package.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

STOP_WORDS = (
    "the of and to a in is for on that with as by this are it from at be or an can was not which if "
    "there does how what where when your you do my i me its much many did s no but"
).split()
ACCENTED = ["café", "naïve", "résumé", "über", "façade", "señor", "déjà", "smörgåsbord"]


@dataclass(frozen=True)
class Synthetic:
    """Doc ids and texts, query ids and texts, and for each query the index of its relevant doc."""

    doc_ids: list[str]
    texts: list[str]
    query_ids: list[str]
    queries: list[str]
    relevant: np.ndarray


def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` distinct words: the stop words first, then random lowercase words of 2..12 letters."""
    lengths = np.clip(rng.poisson(6.0, size=2 * size), 2, 12)
    letters = rng.integers(0, 26, size=int(lengths.sum()), dtype=np.uint8) + ord("a")
    blob = letters.tobytes().decode("ascii")
    ends = np.cumsum(lengths)
    words = [blob[e - n:e] for e, n in zip(ends.tolist(), lengths.tolist())]
    seen = set(STOP_WORDS) | set(ACCENTED)
    unique = [w for w in words if not (w in seen or seen.add(w))]
    every = STOP_WORDS + ACCENTED + unique
    return np.array(every[:size], dtype=object)


def make(n_docs: int, n_queries: int = 1000, seed: int = 0, vocabulary: int = 1 << 19,
         mean_length: float = 60.0, query_terms: tuple[int, int] = (2, 5)) -> Synthetic:
    """Build the corpus and queries in memory; a pure function of its arguments.

    A query has ``query_terms[0]`` to ``query_terms[1]`` distinct words (fewer when its document has fewer).
    """
    rng = np.random.default_rng(seed)
    words = _vocabulary(rng, vocabulary)
    weights = 1.0 / (np.arange(1, vocabulary + 1) + 2.7)
    cdf = np.cumsum(weights / weights.sum())
    # surface forms: 0 word, 1 Word, 2 "word,", 3 "word."
    capitalised = np.array([w.capitalize() for w in words], dtype=object)
    surfaces = np.stack([words, capitalised, words + ",", words + "."], axis=1).ravel()

    lengths = np.maximum(1, rng.poisson(mean_length, size=n_docs))
    total = int(lengths.sum())
    tokens = np.minimum(np.searchsorted(cdf, rng.random(total)), vocabulary - 1)
    variant = rng.choice(4, size=total, p=[0.88, 0.02, 0.05, 0.05])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    variant[starts] = 1
    surface = surfaces[tokens * 4 + variant]
    texts = [" ".join(surface[s:s + n]) for s, n in zip(starts.tolist(), lengths.tolist())]
    doc_ids = [f"d{j}" for j in range(n_docs)]

    n_stop = len(STOP_WORDS)
    relevant = rng.integers(0, n_docs, size=n_queries)
    queries = []
    for j in relevant.tolist():
        content = np.unique(tokens[starts[j]:starts[j] + lengths[j]])
        content = content[content >= n_stop]
        if len(content) == 0:
            content = tokens[starts[j]:starts[j] + 1]
        size = min(len(content), int(rng.integers(query_terms[0], query_terms[1] + 1)))
        picked = rng.choice(content, size=size, replace=False)
        queries.append(" ".join(words[picked]))
    query_ids = [f"q{i}" for i in range(n_queries)]
    return Synthetic(doc_ids, texts, query_ids, queries, relevant)


def write_beir(data: Synthetic, folder: Path) -> Path:
    """Write ``data`` as a BEIR folder; the relevant document of each query has grade 1."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for doc_id, text in zip(data.doc_ids, data.texts):
            out.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as out:
        for query_id, text in zip(data.query_ids, data.queries):
            out.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    (folder / "qrels").mkdir(exist_ok=True)
    with (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for query_id, j in zip(data.query_ids, data.relevant.tolist()):
            out.write(f"{query_id}\t{data.doc_ids[j]}\t1\n")
    return folder


def workload_arguments(parser: argparse.ArgumentParser, docs: int = 200_000, queries: int = 1000,
                       rounds: int | None = 3) -> None:
    """The options every benchmark shares: the synthetic workload's size and seed, and the rounds
    whose medians are reported (``rounds=None``: a script without rounds)."""
    parser.add_argument("--docs", type=int, default=docs, help="synthetic documents")
    parser.add_argument("--queries", type=int, default=queries, help="synthetic queries")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic text")
    if rounds is not None:
        parser.add_argument("--rounds", type=int, default=rounds, help="rounds; medians are reported")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload_arguments(parser, rounds=None)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    folder = write_beir(make(args.docs, args.queries, args.seed), args.out)
    print(folder)


if __name__ == "__main__":
    main()
