"""The data model every other layer speaks: corpus, queries, judgments (qrels) and runs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from corpora.errors import RetbenchError


def normalise_numeric_id(identifier: str) -> str:
    """Strip the zero padding of an all-digit id, so ``"001"`` and ``"1"`` name the same thing.

    Used only by loaders of collections that pad inconsistently (Cranfield, Cystic Fibrosis, TREC
    topic numbers); other ids are kept exactly as written.

    >>> normalise_numeric_id(" 00042 "), normalise_numeric_id("000"), normalise_numeric_id("DOC-07")
    ('42', '0', 'DOC-07')
    """
    identifier = identifier.strip()
    if identifier.isascii() and identifier.isdigit():
        return identifier.lstrip("0") or "0"
    return identifier


def _check_unique(ids: Sequence[str], what: str, source: str) -> None:
    seen: set[str] = set()
    duplicates: list[str] = []
    for identifier in ids:
        if identifier in seen:
            duplicates.append(identifier)
        seen.add(identifier)
    if duplicates:
        shown = ", ".join(repr(d) for d in duplicates[:5])
        more = f" (and {len(duplicates) - 5} more)" if len(duplicates) > 5 else ""
        raise RetbenchError(
            f"{source}: duplicate {what} id(s) {shown}{more}. Fix: give every {what} a unique id."
        )


def _hash_strings(digest: hashlib._Hash, column: Sequence[str]) -> None:
    """Feed a column of strings to ``digest`` a chunk at a time: the chunk's string lengths, an
    encoding tag, then its bytes (so that no two different columns feed the same bytes)."""
    step = 1 << 15
    for start in range(0, len(column), step):
        part = column[start:start + step]
        joined = "".join(part)
        try:  # a copy of the string's own bytes when it is ASCII or Latin-1; UTF-8 otherwise
            encoded = b"L" + joined.encode("latin-1")
        except UnicodeEncodeError:
            encoded = b"U" + joined.encode("utf-8", "surrogatepass")
        digest.update(np.fromiter(map(len, part), dtype="<i8", count=len(part)).tobytes())
        digest.update(encoded)


@dataclass(frozen=True)
class Corpus:
    """Ordered documents: string ids, texts, optional titles and metadata.

    The indexed text of a document is its title followed by its body (:attr:`full_texts`).
    Duplicate ids are an error.
    """

    ids: list[str]
    texts: list[str]
    titles: list[str] | None = None
    metadata: list[dict] | None = None
    name: str = "corpus"
    source: str = "<memory>"

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.texts):
            raise ValueError("ids and texts must have the same length")
        if self.titles is not None and len(self.titles) != len(self.ids):
            raise ValueError("titles must have one entry per document")
        _check_unique(self.ids, "document", self.source)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def full_texts(self) -> list[str]:
        """Title and body joined by a blank line; the text retrievers index."""
        if self.titles is None:
            return list(self.texts)
        return [f"{t}\n{x}" if t else x for t, x in zip(self.titles, self.texts)]

    def content_hash(self) -> str:
        """SHA-256 over ids, titles and texts: the corpus's identity in manifests and caches.

        Hashed a chunk at a time (the chunk's string lengths, an encoding tag, then its bytes),
        which is several times faster than one update per string; memoised on the instance.
        """
        known = self.__dict__.get("_content_hash")
        if known is not None:
            return known
        digest = hashlib.sha256(b"retbench-corpus-2")
        for column in (self.ids, self.titles or [""] * len(self.ids), self.texts):
            _hash_strings(digest, column)
        value = digest.hexdigest()
        object.__setattr__(self, "_content_hash", value)  # frozen dataclass: memo outside the fields
        return value

    def index_of(self) -> dict[str, int]:
        return {d: j for j, d in enumerate(self.ids)}


@dataclass(frozen=True)
class Queries:
    """Ordered queries: ids, texts and optional facet columns (e.g. type, popularity)."""

    ids: list[str]
    texts: list[str]
    facets: dict[str, list] = field(default_factory=dict)
    source: str = "<memory>"

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.texts):
            raise ValueError("ids and texts must have the same length")
        _check_unique(self.ids, "query", self.source)

    def __len__(self) -> int:
        return len(self.ids)

    def content_hash(self) -> str:
        """SHA-256 over ids, texts and facets (by facet name; values as JSON), in query order
        (the order the bootstrap resamples): the queries' identity in manifests. Memoised."""
        known = self.__dict__.get("_content_hash")
        if known is not None:
            return known
        digest = hashlib.sha256(b"retbench-queries-1")
        _hash_strings(digest, self.ids)
        _hash_strings(digest, self.texts)
        for name in sorted(self.facets):
            _hash_strings(digest, [name])
            _hash_strings(digest, [json.dumps(v, sort_keys=True, default=str) for v in self.facets[name]])
        value = digest.hexdigest()
        object.__setattr__(self, "_content_hash", value)
        return value

    def subset(self, keep: Iterable[str]) -> Queries:
        wanted = set(keep)
        rows = [j for j, q in enumerate(self.ids) if q in wanted]
        return Queries(
            ids=[self.ids[j] for j in rows],
            texts=[self.texts[j] for j in rows],
            facets={k: [v[j] for j in rows] for k, v in self.facets.items()},
            source=self.source,
        )


class Qrels(Mapping[str, Mapping[str, int]]):
    """Graded judgments: query id -> {doc id: integer grade}.

    Grades follow TREC: 0 irrelevant, 1 marginal, 2 relevant, 3 perfectly relevant; a negative
    grade is judged but never relevant. Binary metrics count ``grade >= rel_threshold``.
    """

    def __init__(self, judgments: Mapping[str, Mapping[str, int]], source: str = "<memory>"):
        self._data: dict[str, dict[str, int]] = {
            str(q): {str(d): int(g) for d, g in docs.items()} for q, docs in judgments.items()
        }
        self.source = source
        self._content_hash: str | None = None

    def __getitem__(self, query_id: str) -> Mapping[str, int]:
        return self._data[query_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def n_judgments(self) -> int:
        return sum(len(v) for v in self._data.values())

    def relevant(self, query_id: str, rel_threshold: int = 1) -> dict[str, int]:
        return {d: g for d, g in self._data.get(query_id, {}).items() if g >= rel_threshold}

    def queries_with_relevant(self, rel_threshold: int = 1) -> list[str]:
        """Query ids with at least one relevant judgment, in qrels order: the ones that count."""
        return [q for q, docs in self._data.items() if any(g >= rel_threshold for g in docs.values())]

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {q: dict(d) for q, d in self._data.items()}

    def content_hash(self) -> str:
        """SHA-256 over every (query id, doc id, grade), sorted by query then doc id, so that the
        file's line order (which changes no number) does not change it. Memoised."""
        if self._content_hash is not None:
            return self._content_hash
        rows = [(q, d, str(self._data[q][d])) for q in sorted(self._data) for d in sorted(self._data[q])]
        digest = hashlib.sha256(b"retbench-judgments-1")
        for column in zip(*rows) if rows else ((), (), ()):
            _hash_strings(digest, list(column))
        self._content_hash = digest.hexdigest()
        return self._content_hash


@dataclass
class Dataset:
    """A corpus, its queries and its judgments, as loaded from one folder or bundle."""

    name: str
    corpus: Corpus
    queries: Queries
    qrels: Qrels
    source: str
    warnings: list[str] = field(default_factory=list)
    #: The loader that read it (a key of ``corpora.FORMATS``); empty when built in memory.
    format: str = ""
    #: Query id -> the candidate doc ids it is judged against, for collections whose task is
    #: re-ranking a per-query pool (CSFCube). ``None``: every query searches the whole corpus.
    candidates: dict[str, list[str]] | None = None
    #: Judgments removed at load time because their query or document is not in the dataset,
    #: as (query id, doc id, grade); each removal is also counted in :attr:`warnings`.
    unmatched_judgments: list[tuple[str, str, int]] = field(default_factory=list)


class Run:
    """Rankings: query id -> ranked (doc id, score) pairs, best first.

    Array-backed: a CSR layout of ``offsets`` into flat ``doc_index`` / ``scores`` arrays, with
    ``doc_index`` pointing into the ``doc_ids`` vocabulary. A query with an empty ranking is
    still present (its slice is empty).

    >>> run = Run.from_mapping({"q1": [("b", 2.0), ("a", 1.0)], "q2": []})
    >>> run.ranking("q1"), run.ranking("q2"), len(run)
    (['b', 'a'], [], 2)
    """

    __slots__ = ("query_ids", "doc_ids", "offsets", "doc_index", "scores", "_position")

    def __init__(
        self,
        query_ids: Sequence[str],
        doc_ids: Sequence[str] | np.ndarray,
        offsets: np.ndarray,
        doc_index: np.ndarray,
        scores: np.ndarray,
    ):
        self.query_ids = list(query_ids)
        self.doc_ids = np.asarray(doc_ids, dtype=object)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.doc_index = np.asarray(doc_index, dtype=np.int64)
        self.scores = np.asarray(scores, dtype=np.float64)
        if len(self.offsets) != len(self.query_ids) + 1:
            raise ValueError("offsets must have one more entry than query_ids")
        self._position = {q: j for j, q in enumerate(self.query_ids)}

    def __len__(self) -> int:
        return len(self.query_ids)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._position

    def _slice(self, query_id: str) -> slice:
        j = self._position[query_id]
        return slice(int(self.offsets[j]), int(self.offsets[j + 1]))

    def ranking(self, query_id: str) -> list[str]:
        """Doc ids best first; empty for a query the run does not hold."""
        if query_id not in self._position:
            return []
        return [str(d) for d in self.doc_ids[self.doc_index[self._slice(query_id)]]]

    def items(self, query_id: str) -> list[tuple[str, float]]:
        if query_id not in self._position:
            return []
        s = self._slice(query_id)
        return [(str(d), float(x)) for d, x in zip(self.doc_ids[self.doc_index[s]], self.scores[s])]

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def to_mapping(self) -> dict[str, list[tuple[str, float]]]:
        return {q: self.items(q) for q in self.query_ids}

    @classmethod
    def from_mapping(cls, rankings: Mapping[str, Iterable[tuple[str, float]]]) -> Run:
        """Build from query id -> ranked (doc id, score) pairs; the order given is kept."""
        vocabulary: dict[str, int] = {}
        offsets = [0]
        doc_index: list[int] = []
        scores: list[float] = []
        for pairs in rankings.values():
            for doc, score in pairs:
                doc_index.append(vocabulary.setdefault(str(doc), len(vocabulary)))
                scores.append(float(score))
            offsets.append(len(doc_index))
        return cls(
            [str(q) for q in rankings],
            np.array(list(vocabulary), dtype=object),
            np.array(offsets),
            np.array(doc_index, dtype=np.int64),
            np.array(scores, dtype=np.float64),
        )

    def to_trec(self, tag: str) -> str:
        """TREC run format: ``qid Q0 docid rank score tag``, rank from 1, scores at full precision."""
        lines = []
        for j, q in enumerate(self.query_ids):
            start, stop = int(self.offsets[j]), int(self.offsets[j + 1])
            docs = self.doc_ids[self.doc_index[start:stop]]
            for rank, (d, s) in enumerate(zip(docs, self.scores[start:stop]), 1):
                lines.append(f"{q} Q0 {d} {rank} {float(s)!r} {tag}")
        return "\n".join(lines) + ("\n" if lines else "")
