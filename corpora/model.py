"""The data model every other layer speaks: corpus, queries, judgments (qrels) and runs.

Corpus, queries, judgments, the dataset that holds them and the one rule of relevance live here;
:class:`Run`, which grew the conversions to other tools' forms, lives in :mod:`corpora.run` and is
imported here, so that every layer still imports the data model from one place. Over 400 lines:
four small types and one rule, kept together on purpose.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, overload

import numpy as np

from corpora.cells import QUANTILE_BUCKETS, FacetCells, cut
from corpora.errors import RetbenchError, UnknownNameError
from corpora.frames import QRELS_COLUMNS, grade_column, id_column, pick_columns
from corpora.id_hashes import duplicate_pairs, factorize_blocks, hash_ids
from corpora.run import Run

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Corpus", "Dataset", "JudgmentArrays", "Qrels", "Queries", "Run", "is_relevant", "normalise_numeric_id"]


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
    repeated: list[str] = []
    for identifier in ids:
        if identifier in seen:
            repeated.append(identifier)
        seen.add(identifier)
    if repeated:
        shown = ", ".join(repr(d) for d in repeated[:5])
        more = f" (and {len(repeated) - 5} more)" if len(repeated) > 5 else ""
        raise RetbenchError(
            f"{source}: duplicate {what} id(s) {shown}{more}. Fix: give every {what} a unique id."
        )


#: Strings per chunk of a hashed column (:func:`hash_chunk`): a reader that streams a column feeds
#: it in chunks of exactly this many, counted from the column's start, to get the same digest.
HASH_CHUNK = 1 << 15
#: The digest a corpus's content hash starts from (:meth:`Corpus.content_hash`).
CORPUS_HASH_PREFIX = b"retbench-corpus-2"


def hash_chunk(digest: hashlib._Hash, part: Sequence[str]) -> None:
    """Feed one chunk of a column of strings to ``digest``: the chunk's string lengths, an encoding
    tag, then its bytes (so that no two different columns feed the same bytes)."""
    joined = "".join(part)
    try:  # a copy of the string's own bytes when it is ASCII or Latin-1; UTF-8 otherwise
        encoded = b"L" + joined.encode("latin-1")
    except UnicodeEncodeError:
        encoded = b"U" + joined.encode("utf-8", "surrogatepass")
    digest.update(np.fromiter(map(len, part), dtype="<i8", count=len(part)).tobytes())
    digest.update(encoded)


def _hash_strings(digest: hashlib._Hash, column: Sequence[str]) -> None:
    """Feed a column of strings to ``digest`` a chunk of :data:`HASH_CHUNK` at a time."""
    for start in range(0, len(column), HASH_CHUNK):
        hash_chunk(digest, column[start:start + HASH_CHUNK])


def full_text(title: str, text: str) -> str:
    """A document's indexed text: its title and body joined by a newline (the body alone without a title)."""
    return f"{title}\n{text}" if title else text


def document_fingerprints(ids: Sequence[str], titles: Sequence[str] | None, texts: Sequence[str]) -> np.ndarray:
    """One 64-bit BLAKE2b digest per document over its id, title and body (uint64, little-endian):
    what lets a worker that read documents ``a:b`` itself, or a reader that fetched a few, check
    them against the copy the corpus was hashed from without the texts (:meth:`Corpus.fingerprints`)."""
    titles = titles if titles is not None else [""] * len(ids)
    blake2b = hashlib.blake2b
    digests = b"".join(blake2b(f"{len(i)}:{len(t)}:{i}{t}{x}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
                       for i, t, x in zip(ids, titles, texts))
    return np.frombuffer(digests, dtype="<u8")


def fingerprints_digest(fingerprints: np.ndarray) -> str:
    """SHA-256 of a run of :func:`document_fingerprints` (what a shard's reader is checked against)."""
    return hashlib.sha256(np.ascontiguousarray(fingerprints, dtype="<u8").tobytes()).hexdigest()


@dataclass(frozen=True)
class Corpus:
    """Ordered documents: string ids, texts, optional titles and metadata.

    The indexed text of a document is its title followed by its body (:attr:`full_texts`).
    Duplicate ids are an error.

    ``retriever_defaults``: parameters the collection carries for retrievers that choose a
    parameter for the collection (retriever name -> parameter -> value; :mod:`retrievers.defaults`),
    e.g. the bundled article's own experiment, ``{"lsa": {"dims": 6}}``. They win over the
    retriever's rule from the collection's size; a parameter given to the retriever wins over both.
    Not part of the corpus's identity (:meth:`content_hash`).
    """

    ids: list[str]
    texts: list[str]
    titles: list[str] | None = None
    metadata: list[dict] | None = None
    name: str = "corpus"
    source: str = "<memory>"
    retriever_defaults: Mapping[str, Mapping[str, Any]] | None = field(default=None, compare=False)
    #: Whether the documents' texts are known: False for a collection of judgments only
    #: (:class:`corpora.judgments_only.TextlessCorpus`), where what reads a text is unavailable.
    has_texts: ClassVar[bool] = True

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
        """Title and body joined by a newline; the text retrievers index. Without titles, the
        texts themselves (not a copy: 8 MB a million documents, held through a fit)."""
        if self.titles is None:
            return self.texts
        return [full_text(t, x) for t, x in zip(self.titles, self.texts)]

    def documents_at(self, positions: Sequence[int]) -> tuple[list[str], list[str]]:
        """The full texts (:attr:`full_texts`) and the bodies of the documents at ``positions``, in
        that order: what a reading of a few documents asks for (the diagnosis), answered without
        the whole corpus's texts where the corpus does not hold them (:class:`corpora.outline.CorpusOutline`)."""
        titles = self.titles
        bodies = [self.texts[j] for j in positions]
        return ([full_text(titles[j], x) for j, x in zip(positions, bodies)] if titles is not None else list(bodies),
                bodies)

    def blank_documents(self) -> list[str]:
        """The ids of the documents whose full text is blank (whitespace only), in corpus order."""
        return [d for d, t in zip(self.ids, self.full_texts) if not t.strip()]

    def fingerprints(self) -> np.ndarray:
        """:func:`document_fingerprints` of the corpus, memoised on the instance."""
        known = self.__dict__.get("_fingerprints")
        if known is None:
            known = document_fingerprints(self.ids, self.titles, self.texts)
            object.__setattr__(self, "_fingerprints", known)  # frozen dataclass: memo outside the fields
        return known

    def content_hash(self) -> str:
        """SHA-256 over ids, titles and texts: the corpus's identity in manifests and caches.

        Hashed a chunk at a time (the chunk's string lengths, an encoding tag, then its bytes),
        which is several times faster than one update per string; memoised on the instance.
        """
        known = self.__dict__.get("_content_hash")
        if known is not None:
            return known
        digest = hashlib.sha256(CORPUS_HASH_PREFIX)
        for column in (self.ids, self.titles or [""] * len(self.ids), self.texts):
            _hash_strings(digest, column)
        value = digest.hexdigest()
        object.__setattr__(self, "_content_hash", value)  # frozen dataclass: memo outside the fields
        return value

    def index_of(self) -> dict[str, int]:
        return {d: j for j, d in enumerate(self.ids)}

    def positions_of(self, doc_ids: Iterable[str]) -> dict[str, int]:
        """The position of each of ``doc_ids`` that the corpus holds: one scan of the ids, for a
        few ids (no index of every id is built, which at a million documents costs ~100 MB)."""
        wanted = set(doc_ids)
        return {d: j for j, d in enumerate(self.ids) if d in wanted} if wanted else {}

    def id_array(self) -> np.ndarray:
        """The ids as a read-only numpy object array, the ``doc_ids`` of a :class:`Run` over this
        corpus: made on first use and kept, once rather than per search."""
        known = self.__dict__.get("_id_array")
        if known is None:
            known = np.asarray(self.ids, dtype=object)
            known.flags.writeable = False
            object.__setattr__(self, "_id_array", known)  # frozen dataclass: memo outside the fields
        return known


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

    def cells(self, facet: str, query_ids: Sequence[str] | None = None,
              buckets: int = QUANTILE_BUCKETS) -> FacetCells:
        """Facet ``facet`` cut into cells over ``query_ids`` (default: every query, in order): which
        queries fall in which value, or quantile bucket of a numeric facet (:func:`corpora.cells.cut`).
        A facet the queries lack is an error that lists theirs; an id not among the queries, a ``ValueError``.

        >>> Queries(["a", "b", "c"], ["x", "y", "z"], {"type": ["q", "p", None]}).cells("type").cell_of
        {'a': 'q', 'b': 'p', 'c': '(missing)'}
        """
        if facet not in self.facets:
            if not self.facets:
                raise RetbenchError(f"facet {facet!r} was asked for, but the queries ({self.source}) have no facets. "
                                    "Fix: give them in a facets file (query id + one column per facet)")
            raise UnknownNameError("facet", facet, list(self.facets))
        ids = list(self.ids) if query_ids is None else list(query_ids)
        known = set(self.ids)
        absent = [q for q in ids if q not in known]
        if absent:
            raise ValueError(f"query ids not among the queries: {absent[:5]}")
        return cut(facet, dict(zip(self.ids, self.facets[facet])), ids, buckets)

    def subset(self, keep: Iterable[str]) -> Queries:
        wanted = set(keep)
        rows = [j for j, q in enumerate(self.ids) if q in wanted]
        return Queries(
            ids=[self.ids[j] for j in rows],
            texts=[self.texts[j] for j in rows],
            facets={k: [v[j] for j in rows] for k, v in self.facets.items()},
            source=self.source,
        )


@overload
def is_relevant(grade: int, rel_threshold: int) -> bool: ...
@overload
def is_relevant(grade: np.ndarray, rel_threshold: int) -> np.ndarray: ...


def is_relevant(grade: int | np.ndarray, rel_threshold: int) -> bool | np.ndarray:
    """Whether a judged document counts as relevant: ``grade >= rel_threshold`` and ``grade >= 0``.

    The one definition of "relevant" in retbench (binary metrics, the evaluator's vectorised join,
    :meth:`Qrels.relevant`, the diagnosis). A negative grade is judged but never relevant, whatever
    the threshold (trec_eval: "in the pool, unjudged"). Works element-wise on an integer array.

    >>> is_relevant(2, 1), is_relevant(0, 1), is_relevant(0, 0), is_relevant(-1, 0)
    (True, False, True, False)
    >>> is_relevant(np.array([-1, 0, 1, 2]), 1).tolist()
    [False, False, True, True]
    """
    return (grade >= rel_threshold) & (grade >= 0)


@dataclass(frozen=True, eq=False)
class JudgmentArrays:
    """Judgments as parallel arrays, one entry per (query, doc) pair: the evaluator's input form.

    ``query_ids``/``doc_ids`` are object arrays of strings, ``grades`` int64. The query codes
    (``query_codes``, positions in ``query_vocabulary``, queries in order of first appearance) and
    the doc-id hashes (:func:`corpora.id_hashes.hash_ids`) are computed on first use and kept, as
    pytrec_eval's ``RelevanceEvaluator`` prepares its qrels once for every run it evaluates.
    """

    query_ids: np.ndarray
    doc_ids: np.ndarray
    grades: np.ndarray

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalise the dtypes once, here
        set_(self, "query_ids", np.asarray(self.query_ids, dtype=object))
        set_(self, "doc_ids", np.asarray(self.doc_ids, dtype=object))
        set_(self, "grades", np.asarray(self.grades, dtype=np.int64))
        if not len(self.query_ids) == len(self.doc_ids) == len(self.grades):
            raise ValueError("query_ids, doc_ids and grades must have the same length")

    def __len__(self) -> int:
        return len(self.grades)

    @cached_property
    def _factorized(self) -> tuple[np.ndarray, np.ndarray]:
        return factorize_blocks(self.query_ids)

    @property
    def query_codes(self) -> np.ndarray:
        """Per judgment, the position of its query in :attr:`query_vocabulary` (int64)."""
        return self._factorized[0]

    @property
    def query_vocabulary(self) -> np.ndarray:
        """Every judged query id once, in order of first appearance."""
        return self._factorized[1]

    @cached_property
    def doc_hashes(self) -> np.ndarray:
        """:func:`~corpora.id_hashes.hash_ids` of :attr:`doc_ids`, computed once."""
        return hash_ids(self.doc_ids)

    def repeated(self) -> np.ndarray:
        """Indices of the judgments whose (query, doc) pair occurred before (exact)."""
        return duplicate_pairs(self.query_codes, self.doc_ids, self.doc_hashes)


class Qrels(Mapping[str, Mapping[str, int]]):
    """Graded judgments: query id -> {doc id: integer grade}.

    Grades follow TREC: 0 irrelevant, 1 marginal, 2 relevant, 3 perfectly relevant; a negative
    grade is judged but never relevant. Binary metrics count :func:`is_relevant` judgments
    (``grade >= rel_threshold`` and ``grade >= 0``); graded metrics use the grade itself.

    Two views of the same judgments, each built on first use and kept: the mapping, and
    :attr:`arrays` (:class:`JudgmentArrays`, what the evaluator joins a run with). Qrels read from
    a file (:func:`corpora.trec_io.read_qrels`) start as arrays and build the mapping only if asked.
    """

    def __init__(self, judgments: Mapping[str, Mapping[str, int]], source: str = "<memory>"):
        self._data: dict[str, dict[str, int]] | None = {
            str(q): {str(d): int(g) for d, g in docs.items()} for q, docs in judgments.items()
        }
        self._arrays: JudgmentArrays | None = None
        self.source = source
        self._content_hash: str | None = None

    @classmethod
    def from_arrays(cls, query_ids: Sequence[str] | np.ndarray, doc_ids: Sequence[str] | np.ndarray,
                    grades: Sequence[int] | np.ndarray, source: str = "<memory>") -> Qrels:
        """Qrels from parallel columns, one judgment per row; a (query, doc) pair given twice is a
        ``ValueError`` (file readers name its line instead).

        >>> qrels = Qrels.from_arrays(["q1", "q2", "q1"], ["a", "b", "c"], [1, 0, -1])
        >>> qrels.to_dict(), qrels.queries_with_relevant()
        ({'q1': {'a': 1, 'c': -1}, 'q2': {'b': 0}}, ['q1'])
        """
        arrays = JudgmentArrays(np.asarray(query_ids, dtype=object), np.asarray(doc_ids, dtype=object),
                                np.asarray(grades, dtype=np.int64))
        repeated = arrays.repeated()
        if len(repeated):
            first = int(repeated[0])
            raise ValueError(f"document {arrays.doc_ids[first]!r} is judged twice for query "
                             f"{arrays.query_ids[first]!r}")
        return cls._of_arrays(arrays, source)

    @classmethod
    def _of_arrays(cls, arrays: JudgmentArrays, source: str) -> Qrels:
        """Judgments held as checked arrays (no repeated pair); the mapping is built only if asked."""
        qrels = cls({}, source)
        qrels._data, qrels._arrays = None, arrays
        return qrels

    @property
    def _judgments(self) -> dict[str, dict[str, int]]:
        if self._data is None:
            arrays = self.arrays
            data: dict[str, dict[str, int]] = {}
            for q, d, g in zip(arrays.query_ids.tolist(), arrays.doc_ids.tolist(), arrays.grades.tolist()):
                data.setdefault(q, {})[d] = g
            self._data = data
        return self._data

    @property
    def arrays(self) -> JudgmentArrays:
        """The judgments as :class:`JudgmentArrays` (built once; queries in mapping order)."""
        if self._arrays is None:
            data = self._judgments
            self._arrays = JudgmentArrays(
                np.array([q for q, docs in data.items() for _ in docs], dtype=object),
                np.array([d for docs in data.values() for d in docs], dtype=object),
                np.array([g for docs in data.values() for g in docs.values()], dtype=np.int64))
        return self._arrays

    def __getitem__(self, query_id: str) -> Mapping[str, int]:
        return self._judgments[query_id]

    def __iter__(self) -> Iterator[str]:
        if self._data is None:  # read from a file: every query has a judgment
            return iter(self.arrays.query_vocabulary.tolist())
        return iter(self._data)

    def __len__(self) -> int:
        return len(self.arrays.query_vocabulary) if self._data is None else len(self._data)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._judgments

    def n_judgments(self) -> int:
        return len(self.arrays) if self._data is None else sum(len(v) for v in self._data.values())

    def relevant(self, query_id: str, rel_threshold: int = 1) -> dict[str, int]:
        """The :func:`is_relevant` judgments of ``query_id`` (doc id -> grade); empty when none."""
        return {d: g for d, g in self._judgments.get(query_id, {}).items() if is_relevant(g, rel_threshold)}

    def queries_with_relevant(self, rel_threshold: int = 1) -> list[str]:
        """Query ids with at least one :func:`is_relevant` judgment, in qrels order: the ones that count."""
        arrays = self.arrays
        has = np.zeros(len(arrays.query_vocabulary), dtype=bool)
        has[arrays.query_codes[is_relevant(arrays.grades, rel_threshold)]] = True
        return [str(q) for q in arrays.query_vocabulary[has]]

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {q: dict(d) for q, d in self._judgments.items()}

    # ----- other tools' forms -----------------------------------------------------------------

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, source: str = "DataFrame") -> Qrels:
        """Judgments from a DataFrame with PyTerrier's columns ``qid, docno, label`` or ir_measures'
        ``query_id, doc_id, relevance`` (other columns are ignored).

        Ids are strings (a column of integers is read as its decimal text); grades are integers (a
        float column is accepted when every value is a whole number). A missing id, a grade that is
        not an integer and a (query, doc) pair in two rows are errors
        (:class:`~corpora.RetbenchError`) naming the row (counted from 0, as ``df.iloc`` counts).

        >>> import pandas as pd
        >>> frame = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "b"], "label": [2, 0]})
        >>> Qrels.from_dataframe(frame).to_dict()
        {'q1': {'a': 2, 'b': 0}}
        """
        if not (hasattr(frame, "columns") and hasattr(frame, "__getitem__")):
            raise RetbenchError(f"Qrels.from_dataframe: got a {type(frame).__name__}, not a pandas DataFrame. "
                                "Fix: pass a DataFrame (pandas.DataFrame(...))")
        return qrels_from_table(lambda name: frame[name].to_numpy(), list(frame.columns), source)

    def to_dataframe(self) -> pd.DataFrame:
        """The judgments as PyTerrier holds them: columns ``qid, docno, label`` (int64), one row per
        judgment, queries in qrels order.

        >>> Qrels({"q1": {"a": 2, "b": -1}}).to_dataframe().to_dict("list")
        {'qid': ['q1', 'q1'], 'docno': ['a', 'b'], 'label': [2, -1]}
        """
        import pandas as pd

        arrays = self.arrays
        return pd.DataFrame({"qid": pd.Series(arrays.query_ids, dtype=object),
                             "docno": pd.Series(arrays.doc_ids, dtype=object), "label": arrays.grades})

    @classmethod
    def from_ranx(cls, qrels: Any) -> Qrels:
        """Judgments from a ranx ``Qrels``, or its dict form ``{query id: {doc id: grade}}``
        (pytrec_eval's too); grades must be integers."""
        data = qrels.to_dict() if hasattr(qrels, "to_dict") else qrels
        if not isinstance(data, Mapping):
            raise RetbenchError(f"Qrels.from_ranx: got a {type(qrels).__name__}, not a ranx Qrels or a dict "
                                "{query id: {doc id: grade}}. Fix: pass ranx.Qrels(...) or its to_dict()")
        columns = {"qid": np.array([str(q) for q, docs in data.items() for _ in docs], dtype=object),
                   "docno": np.array([str(d) for docs in data.values() for d in docs], dtype=object),
                   "label": np.array([g for docs in data.values() for g in docs.values()])}
        return qrels_from_table(columns.__getitem__, list(columns), "ranx qrels")

    def to_ranx(self, name: str | None = None) -> Any:
        """The judgments as a ranx ``Qrels`` (``name`` its name), grades as they are (negative ones
        too: ranx counts a grade > 0 as relevant, retbench :func:`is_relevant`). Needs ranx
        (``pip install "retbench[ranx]"``)."""
        try:
            import ranx
        except ImportError:
            raise RetbenchError("Qrels.to_ranx needs ranx, which is not installed. "
                                'Fix: pip install "retbench[ranx]"') from None
        data = self.to_dict()
        return ranx.Qrels(data, name=name) if any(data.values()) else ranx.Qrels(name=name)

    def content_hash(self) -> str:
        """SHA-256 over every (query id, doc id, grade), sorted by query then doc id, so that the
        file's line order (which changes no number) does not change it. Memoised."""
        if self._content_hash is not None:
            return self._content_hash
        data = self._judgments
        rows = [(q, d, str(data[q][d])) for q in sorted(data) for d in sorted(data[q])]
        digest = hashlib.sha256(b"retbench-judgments-1")
        for column in zip(*rows) if rows else ((), (), ()):
            _hash_strings(digest, list(column))
        self._content_hash = digest.hexdigest()
        return self._content_hash



def qrels_from_table(column: Callable[[str], np.ndarray], columns: Sequence[object], source: str) -> Qrels:
    """The judgments of a table read a column at a time (``column(name)`` -> its values), in either
    convention of :data:`~corpora.frames.QRELS_COLUMNS`; every problem an error naming ``source``
    and the row."""
    query_name, doc_name, grade_name = pick_columns(columns, QRELS_COLUMNS, source, "judgments")
    qids = id_column(column(query_name), query_name, source)
    docs = id_column(column(doc_name), doc_name, source)
    grades = grade_column(column(grade_name), grade_name, source)
    arrays = JudgmentArrays(qids, docs, grades)
    repeated = arrays.repeated()
    if len(repeated):
        row = int(repeated.min())
        first = int(np.flatnonzero((qids == qids[row]) & (docs == docs[row]))[0])
        raise RetbenchError(f"{source}: row {row}: document {docs[row]!r} is judged twice for query "
                            f"{qids[row]!r} (first at row {first}). Fix: keep one judgment per (query, document)")
    return Qrels._of_arrays(arrays, source)

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

