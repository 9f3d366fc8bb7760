"""Workload shapes for the engine matrix (``engines_matrix.py``): a generator of its own, apart from
``synthetic.py`` (the one BM25's speed stack was tuned on), so that speed is measured on text it has
never seen.

What differs from ``synthetic.py``, on purpose:

- the law: plain Zipf, p(rank) ~ 1 / rank ** s, with s = 1.0 or 1.2 (``synthetic.py``: a
  Zipf-Mandelbrot law, 1 / (rank + 2.7));
- the vocabulary: 100k or 1M words built from syllables (consonant-vowel or consonant-vowel-consonant,
  2 to 4 of them), the stop words of the article's analyzer at the head in a shuffled order
  (``synthetic.py``: random letters, 2**19 words);
- the lengths: *short* documents of 20 to 40 tokens (uniform), *long* ones lognormal with a median of
  220 tokens, from 100 to 1,000 (``synthetic.py``: Poisson around 60);
- the queries: sampled from the collection's vocabulary, not from one document: ``n`` distinct
  content words (never a stop word) drawn as a random token of the whole text is drawn (with
  probability proportional to their collection frequency, ``QUERY_FREQUENCY_POWER``), so that a
  query mixes common and rare words at every scale of frequency; 1 to 2, 3 to 6 or 10 to 20 terms
  (``synthetic.py``: 2 to 5 distinct words of one random document).

Surface forms: lowercase, a capitalised first word, a full stop after about one word in fifteen;
the words are ASCII letters only, so every engine's tokenizer splits them alike. Documents are
written in chunks (a million long documents never sit in memory at once), one per line; the same
seed gives the same bytes.

    python benchmarks/workloads.py --docs 20000 --shape z1.0-v100k-long --out /tmp/long-20k
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The article analyzer's stop words (``corpora.analyzers.ARTICLE_STOP_WORDS``, which retbench and
#: the tantivy runner remove), kept here as text so that generating needs numpy alone.
STOP_WORDS = ("the a an of to in on for and or but that this is are was be can i my me you your do does did how "
              "what where when which much many it its with at by from as if there not no s").split()
CONSONANTS = list("bcdfghjklmnprstvwxz")
VOWELS = list("aeiou")
#: Documents generated and written at a time.
CHUNK_DOCS = 20_000
#: Query shapes: the range of distinct terms a query has.
QUERY_SHAPES = {"1-2": (1, 2), "3-6": (3, 6), "10-20": (10, 20)}
#: Query terms are drawn with probability ~ collection frequency ** this (1: as a token of the text;
#: below 1 the draws lean to rare words, above 1 to common ones).
QUERY_FREQUENCY_POWER = 1.0


@dataclass(frozen=True)
class Shape:
    """A corpus shape: Zipf exponent, vocabulary size, length distribution (``short`` or ``long``)."""

    zipf: float
    vocabulary: int
    lengths: str

    @property
    def name(self) -> str:
        size = f"{self.vocabulary // 1_000_000}M" if self.vocabulary % 1_000_000 == 0 else f"{self.vocabulary // 1000}k"
        return f"z{self.zipf:.1f}-v{size}-{self.lengths}"


#: The eight corpus shapes of the matrix, by name.
SHAPES = {shape.name: shape for shape in (Shape(zipf, vocabulary, lengths) for lengths in ("short", "long")
                                          for zipf in (1.0, 1.2) for vocabulary in (100_000, 1_000_000))}


def shape_named(name: str) -> Shape:
    try:
        return SHAPES[name]
    except KeyError:
        raise ValueError(f"unknown workload shape {name!r}; choose from {', '.join(SHAPES)}") from None


def vocabulary_words(size: int, seed: int) -> list[str]:
    """``size`` distinct words: the stop words (shuffled) first, then words of 2 to 4 syllables."""
    rng = np.random.default_rng([seed, 7, size])
    syllables = [c + v for c in CONSONANTS for v in VOWELS] + [c + v + e for c in CONSONANTS for v in VOWELS
                                                                for e in "nrstlm"]
    syllables = np.array(syllables, dtype=object)
    head = list(rng.permutation(np.array(STOP_WORDS, dtype=object)))
    seen = set(head)
    words = list(head)
    while len(words) < size:
        n = 2 * (size - len(words)) + 1000
        counts = rng.integers(2, 5, size=n)
        parts = syllables[rng.integers(0, len(syllables), size=(n, 4))]
        for row, count in zip(parts.tolist(), counts.tolist()):
            word = "".join(row[:count])
            if word not in seen:
                seen.add(word)
                words.append(word)
                if len(words) == size:
                    break
    return words


def _lengths(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    if kind == "short":
        return rng.integers(20, 41, size=n)
    if kind == "long":
        return np.clip(np.rint(rng.lognormal(np.log(220.0), 0.35, size=n)), 100, 1000).astype(np.int64)
    raise ValueError(f"lengths {kind!r}: use 'short' or 'long'")


def write_corpus(shape: Shape, n_docs: int, seed: int, path: Path) -> np.ndarray:
    """Write ``n_docs`` documents of ``shape``, one a line, to ``path`` (whole or not at all);
    return each word's collection frequency (by rank)."""
    rng = np.random.default_rng([seed, int(shape.zipf * 100), shape.vocabulary, int(shape.lengths == "long")])
    words = np.array(vocabulary_words(shape.vocabulary, seed), dtype=object)
    cdf = np.cumsum(np.arange(1, shape.vocabulary + 1, dtype=np.float64) ** -shape.zipf)
    cdf /= cdf[-1]
    surfaces = np.stack([words, np.array([w.capitalize() for w in words], dtype=object), words + "."], axis=1).ravel()
    frequency = np.zeros(shape.vocabulary, np.int64)
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    with temporary.open("w", encoding="ascii") as out:
        for first in range(0, n_docs, CHUNK_DOCS):
            lengths = _lengths(rng, min(CHUNK_DOCS, n_docs - first), shape.lengths)
            total = int(lengths.sum())
            tokens = np.minimum(np.searchsorted(cdf, rng.random(total), side="right"), shape.vocabulary - 1)
            frequency += np.bincount(tokens, minlength=shape.vocabulary)
            variant = np.where(rng.random(total) < 1 / 15, 2, 0)
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            variant[starts] = 1
            surface = surfaces[tokens * 3 + variant].tolist()
            out.write("".join(" ".join(surface[s:s + n]) + "\n" for s, n in zip(starts.tolist(), lengths.tolist())))
    temporary.replace(path)
    return frequency


def write_queries(shape: Shape, frequency: np.ndarray, n_queries: int, terms: tuple[int, int], seed: int,
                  path: Path) -> None:
    """``n_queries`` queries of ``terms[0]`` to ``terms[1]`` distinct content words, one a line."""
    rng = np.random.default_rng([seed, 99, terms[0], terms[1], int(shape.zipf * 100), shape.vocabulary])
    words = vocabulary_words(shape.vocabulary, seed)
    weight = frequency.astype(np.float64) ** QUERY_FREQUENCY_POWER
    weight[:len(STOP_WORDS)] = 0.0
    cdf = np.cumsum(weight)
    cdf /= cdf[-1]
    lines = []
    for _ in range(n_queries):
        size = int(rng.integers(terms[0], terms[1] + 1))
        picked: dict[int, None] = {}
        while len(picked) < size:
            for term in np.searchsorted(cdf, rng.random(2 * size), side="right").tolist():
                if weight[min(term, len(weight) - 1)] > 0:
                    picked.setdefault(min(term, len(weight) - 1))
                if len(picked) == size:
                    break
        lines.append(" ".join(words[t] for t in picked))
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    temporary.write_text("".join(line + "\n" for line in lines), encoding="ascii")
    temporary.replace(path)


def workload_files(shape: Shape, n_docs: int, n_queries: int, seed: int, folder: Path) -> tuple[Path, dict[str, Path]]:
    """The documents' file and each query shape's file (built once per shape, size and seed, then reused)."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"matrix-{shape.name}-{n_docs}-{seed}"
    docs = folder / f"{stem}.docs.txt"
    frequency_path = folder / f"{stem}.frequency.npy"
    queries = {name: folder / f"{stem}-{n_queries}-q{name}.queries.txt" for name in QUERY_SHAPES}
    if not (docs.is_file() and frequency_path.is_file()):
        frequency = write_corpus(shape, n_docs, seed, docs)
        np.save(frequency_path, frequency)
    if not all(path.is_file() for path in queries.values()):
        frequency = np.load(frequency_path)
        for name, terms in QUERY_SHAPES.items():
            write_queries(shape, frequency, n_queries, terms, seed, queries[name])
    return docs, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shape", default="z1.0-v100k-short", choices=sorted(SHAPES))
    parser.add_argument("--out", type=Path, required=True, help="folder for the documents' and queries' files")
    args = parser.parse_args()
    docs, queries = workload_files(shape_named(args.shape), args.docs, args.queries, args.seed, args.out)
    print("\n".join(map(str, [docs, *queries.values()])))


if __name__ == "__main__":
    main()
