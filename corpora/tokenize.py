"""Batch tokenisation: many texts -> term ids, exactly the tokens of the named analyzer, fast.

The analyzers of :mod:`corpora.analyzers` run one regular expression per text, which costs a
Python object per token: at a million documents that is the dominant cost of indexing. This module
produces the same tokens with a few numpy passes per chunk of texts:

1. lowercase with ``str.lower`` (as the analyzer does), encode every non-ASCII character as one
   ``?`` byte, and map every byte outside ``[a-z0-9]`` to a space, so token boundaries are
   byte-class changes;
2. read each token's bytes eight at a time as unsigned 64-bit words: a token of at most eight bytes
   *is* its key (no hash, so no collision); a longer token chains its words, factorised level by
   level into fresh code ranges, so every distinct token gets a distinct code;
3. drop stop words on the distinct terms, not on the tokens;
4. merge the chunks' vocabularies into one as they come. With a stemmer, stem the vocabulary
   (each distinct word once), never the running tokens.

Conventions: term ids index a vocabulary sorted in ascending string order (scikit-learn's
``CountVectorizer`` order); a document's tokens keep their order; ``offsets`` delimit each text's
slice of ``term_ids`` (CSR style). The steps come from the analyzer's declaration
(:class:`~corpora.analyzers.Analyzer`): its stop words and stemmer. One this path does not implement
(a token pattern other than :data:`FAST_TOKEN_PATTERN`), or a plain function registered by other
code, is called once per text: same result, without the speed (``benchmarks/speed_paths.py``
``tokenize`` times the two).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from corpora.analyzers import Analyzer, get_analyzer
from corpora.memory import release_freed_memory

#: Texts per chunk: bounds the temporary arrays, about ten times the chunk's text. 4,096 rather
#: than 16,384 lowers tokenizing's peak in the same time; 2,048 saved a little more but was slower
#: (``benchmarks/RESULTS.md``, ``notes.memory``).
CHUNK_TEXTS = 4_096
#: Local vocabulary rows that wait before they are merged into the global vocabulary: 1 << 19
#: rather than 1 << 21 lowers tokenizing's peak memory for the same time (``benchmarks/RESULTS.md``,
#: ``notes.memory``).
_MERGE_ROWS = 1 << 19
#: Below these, the heap is not trimmed after a merge or a tokenization (:func:`release_freed_memory`).
_TRIM_FROM_ROWS = 1 << 14
_TRIM_FROM_TOKENS = 1 << 20

#: The tokens the byte scan below finds in lowercased text: an analyzer declaring another pattern
#: is called text by text instead.
FAST_TOKEN_PATTERN = r"[a-z0-9]+"
_SPACE = 0x20
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _byte_table() -> bytes:
    table = bytearray([_SPACE]) * 256
    for c in b"abcdefghijklmnopqrstuvwxyz0123456789":
        table[c] = c
    return bytes(table)


_TABLE = _byte_table()


@dataclass(frozen=True)
class Tokenized:
    """Texts as term ids: text ``i`` is ``term_ids[offsets[i]:offsets[i + 1]]``.

    ``vocabulary[t]`` is the term with id ``t``, in ascending string order.
    """

    offsets: np.ndarray  # int64, n_texts + 1
    term_ids: np.ndarray  # int32
    vocabulary: list[str]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def tokens(self, i: int) -> list[str]:
        """The analyzed tokens of text ``i`` (for tests and diagnosis)."""
        return [self.vocabulary[t] for t in self.term_ids[self.offsets[i]:self.offsets[i + 1]]]


def _declared(analyzer: str) -> Analyzer | None:
    """The declaration of ``analyzer`` when this fast path implements it, else None."""
    declared = get_analyzer(analyzer)
    if isinstance(declared, Analyzer) and declared.token_pattern == FAST_TOKEN_PATTERN:
        return declared
    return None


@dataclass
class _Chunk:
    offsets: np.ndarray  # int64, one more than the chunk's texts, into codes
    codes: np.ndarray  # int32 local term codes
    terms: np.ndarray  # uint64 (n_local_terms x words): each term's bytes, 8 a word, zero padded


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` with ``uniques[codes] == values``, uniques ascending.

    numpy's sort rather than pandas' hash table: as fast here, the same tokens, and indexing no
    longer imports pandas, which stayed in memory through every fit and search
    (``benchmarks/RESULTS.md``, ``notes.memory``).
    """
    uniques, codes = np.unique(values, return_inverse=True)
    return codes.reshape(-1), uniques


def _chain_codes(first: np.ndarray, pending: np.ndarray,
                 next_word: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, int]:
    """Compact codes such that equal codes <=> equal chains of words.

    ``first`` holds every item's first word; ``pending`` the items that have a second one.
    ``next_word(items, level)`` returns those items' word at ``level`` and whether each has more.
    A chained item is recoded into a fresh range of codes at every level, so an item never shares
    a code with a shorter one; codes left unused by that are squeezed out at the end.
    """
    ident, uniques = _factorize(first)
    n_codes = len(uniques)
    level = 1
    while len(pending):
        word, more = next_word(pending, level)
        word_codes, word_uniques = _factorize(word)
        chained, chained_uniques = _factorize(ident[pending] * len(word_uniques) + word_codes)
        ident[pending] = n_codes + chained
        n_codes += len(chained_uniques)
        pending = pending[more]
        level += 1
    used = np.zeros(n_codes, dtype=bool)
    used[ident] = True
    renumber = np.cumsum(used) - 1
    return renumber[ident], int(renumber[-1]) + 1 if n_codes else 0


def _any_occurrence(codes: np.ndarray, n: int) -> np.ndarray:
    """One index of ``codes`` per code value (which one does not matter: they are all equal)."""
    where = np.empty(n, dtype=np.int64)
    where[codes] = np.arange(len(codes))
    return where


def _scan(texts: Sequence[str], stop_words: frozenset[bytes]) -> _Chunk:
    """Tokenise one chunk into local term codes, dropping stop words."""
    parts = [t.lower() for t in texts]  # as the analyzer does (KELVIN SIGN -> k, so before the table)
    text_lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    # one byte per code point (``?`` for non-ASCII), so byte positions are character positions
    data = b" " + " ".join(parts).encode("ascii", "replace").translate(_TABLE) + b" " * 16
    buf = np.frombuffer(data, dtype=np.uint8)
    is_token = buf != _SPACE
    edges = np.flatnonzero(is_token[1:] != is_token[:-1]) + 1
    starts, sizes = edges[0::2], edges[1::2] - edges[0::2]
    begins = np.ones(len(parts) + 1, dtype=np.int64)
    np.cumsum(text_lengths + 1, out=begins[1:])
    begins[1:] += 1
    offsets = np.searchsorted(starts, begins)

    words = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=data, strides=(1,))

    def word_at(items: np.ndarray, level: int) -> np.ndarray:
        rest = sizes[items] - 8 * level
        return words[starts[items] + 8 * level] & _MASKS[np.clip(rest, 0, 8)]

    codes, n_terms = _chain_codes(word_at(np.arange(len(starts)), 0), np.flatnonzero(sizes > 8),
                                  lambda items, level: (word_at(items, level), sizes[items] > 8 * (level + 1)))
    where = _any_occurrence(codes, n_terms)
    n_words = max(1, -(-int(sizes[where].max(initial=0)) // 8))
    terms = np.zeros((n_terms, n_words), dtype=np.uint64)
    terms[:, 0] = word_at(where, 0)
    longer = np.flatnonzero(sizes[where] > 8)
    for level in range(1, n_words):
        longer = longer[sizes[where[longer]] > 8 * level]
        terms[longer, level] = word_at(where[longer], level)

    stop = _is_stop(terms, stop_words)
    if stop.any():
        keep = ~stop[codes]
        kept_before = np.zeros(len(codes) + 1, dtype=np.int64)
        np.cumsum(keep, out=kept_before[1:])
        offsets = kept_before[offsets]
        codes = (np.cumsum(~stop) - 1)[codes[keep]]
        terms = terms[~stop]
    return _Chunk(offsets, codes.astype(np.int32), terms)


def _as_bytes(terms: np.ndarray) -> np.ndarray:
    """Rows of little-endian words -> fixed-width bytes (trailing NULs drop out on conversion)."""
    return np.ascontiguousarray(terms, dtype="<u8").view(f"S{8 * terms.shape[1]}").ravel()


def _is_stop(terms: np.ndarray, stop_words: frozenset[bytes]) -> np.ndarray:
    """Which rows of ``terms`` (words of 8 bytes) spell a stop word."""
    stop = np.zeros(len(terms), dtype=bool)
    if not stop_words or not len(terms):
        return stop
    single = terms[:, 1] == 0 if terms.shape[1] > 1 else np.ones(len(terms), dtype=bool)
    keys = np.array([int.from_bytes(w, "little") for w in stop_words if len(w) <= 8], dtype=np.uint64)
    stop[single] = np.isin(terms[single, 0], keys)
    width = 8 * terms.shape[1]
    longer = [w for w in stop_words if 8 < len(w) <= width]
    if longer:
        rows = np.flatnonzero(~single)
        stop[rows] = np.isin(_as_bytes(terms[rows]), np.array(longer, dtype="S"))
    return stop


def _chunks(texts: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(texts), size):
        yield texts[start:start + size]


class _Merger:
    """Chunks' local codes -> one global vocabulary, merged a few chunks at a time.

    Merging every chunk at the end would hold every chunk's local vocabulary at once (hundreds of
    MB at a million documents); merging as they come keeps one global table and a bounded backlog.
    A term keeps the global id it got first, so codes written early stay right.
    """

    def __init__(self, texts: Sequence[str], terms: np.ndarray | None = None):
        # global vocabulary, one row of words per id (``terms``: one an earlier merger built, kept growing)
        self.terms = np.zeros((0, 1), dtype=np.uint64) if terms is None else terms
        self.offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        # a token takes a character and a separator: a bound that costs address space, not memory
        self.codes = np.empty((sum(map(len, texts)) + len(texts)) // 2 + 16, dtype=np.int32)
        self.n_texts = self.n_tokens = 0
        self.backlog: list[_Chunk] = []

    def add(self, chunk: _Chunk) -> None:
        self.backlog.append(chunk)
        if sum(len(c.terms) for c in self.backlog) >= _MERGE_ROWS:
            self.flush()

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Offsets, global codes and each global code's bytes (fixed-width ``S`` array)."""
        offsets, codes = self.codes_so_far()
        return offsets, codes, _as_bytes(self.terms)

    def codes_so_far(self) -> tuple[np.ndarray, np.ndarray]:
        """Offsets and global codes of every text added (all merged first)."""
        self.flush()
        codes = self.codes
        try:
            codes.resize(self.n_tokens, refcheck=False)  # gives the unused tail back
        except ValueError:
            codes = codes[:self.n_tokens].copy()
        return self.offsets, codes

    def flush(self) -> None:
        if not self.backlog:
            return
        known = len(self.terms)
        n_words = max(self.terms.shape[1], *(c.terms.shape[1] for c in self.backlog))
        rows = np.zeros((known + sum(len(c.terms) for c in self.backlog), n_words), dtype=np.uint64)
        rows[:known, :self.terms.shape[1]] = self.terms
        at = known
        for chunk in self.backlog:
            rows[at:at + len(chunk.terms), :chunk.terms.shape[1]] = chunk.terms
            at += len(chunk.terms)

        def next_word(items: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
            more = rows[items, level + 1] != 0 if level + 1 < n_words else np.zeros(len(items), dtype=bool)
            return rows[items, level], more

        pending = np.flatnonzero(rows[:, 1] != 0) if n_words > 1 else np.empty(0, dtype=np.int64)
        codes, n_codes = _chain_codes(rows[:, 0], pending, next_word)
        global_id = np.full(n_codes, -1, dtype=np.int64)
        global_id[codes[:known]] = np.arange(known)
        ids = global_id[codes[known:]]
        unseen = np.flatnonzero(ids < 0)
        if len(unseen):
            fresh, first_seen = _factorize(codes[known:][unseen])
            ids[unseen] = known + fresh
            self.terms = np.concatenate([rows[:known], rows[known + unseen[_any_occurrence(fresh, len(first_seen))]]])
        elif self.terms.shape[1] < n_words:
            self.terms = rows[:known]
        at = 0
        for chunk in self.backlog:
            mapping = ids[at:at + len(chunk.terms)].astype(np.int32)
            at += len(chunk.terms)
            self._write(mapping[chunk.codes], chunk.offsets)
        self.backlog = []
        # The merge's and the chunks' temporaries, kept by the C heap otherwise: trimming after each
        # large merge lowers what is in use before the vocabulary is sorted, and the peak
        # (benchmarks/RESULTS.md, notes.memory). A small one (a query) has little to give back and
        # would pay the trim's walk of the whole heap: it doubled one query's search time.
        if len(rows) >= _TRIM_FROM_ROWS:
            release_freed_memory()

    def _write(self, codes: np.ndarray, offsets: np.ndarray) -> None:
        if self.n_tokens + len(codes) > len(self.codes):  # only texts that lowercase longer get here
            grown = np.empty(2 * (self.n_tokens + len(codes)), dtype=np.int32)
            grown[:self.n_tokens] = self.codes[:self.n_tokens]
            self.codes = grown
        self.codes[self.n_tokens:self.n_tokens + len(codes)] = codes
        self.offsets[self.n_texts + 1:self.n_texts + len(offsets)] = offsets[1:] + self.n_tokens
        self.n_texts += len(offsets) - 1
        self.n_tokens += len(codes)


def _fallback(texts: Sequence[str], analyzer: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    analyze = get_analyzer(analyzer)
    vocabulary: dict[str, int] = {}
    offsets = [0]
    codes: list[int] = []
    for text in texts:  # the analyzer is opaque: one call per text
        codes.extend(vocabulary.setdefault(t, len(vocabulary)) for t in analyze(text))
        offsets.append(len(codes))
    return np.array(offsets, dtype=np.int64), np.array(codes, dtype=np.int32), list(vocabulary)


def _raw(texts: Sequence[str], analyzer: str, chunk_texts: int,
         progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets, codes and each code's term (unordered), the analyzer applied in full.

    Terms come as a fixed-width ``S`` array on the fast path, as an object array of ``str`` when
    stemmed or analyzed by an unknown analyzer.
    """
    declared = _declared(analyzer)
    if declared is None:
        offsets, codes, words = _fallback(texts, analyzer)
        return offsets, codes, np.array(words, dtype=object)
    stop_words = frozenset(w.encode("ascii") for w in declared.stop_words if w.isascii())  # no other matches
    merger = _Merger(texts)
    for part in _chunks(texts, chunk_texts):
        merger.add(_scan(part, stop_words))
        if progress is not None:
            progress(merger.n_texts + sum(len(c.offsets) - 1 for c in merger.backlog), len(texts))
    offsets, codes, terms = merger.result()  # its last merge gave the heap's free pages back
    if declared.stemmer is not None and len(terms):
        stems = [declared.stem(w) for w in terms.astype("U").tolist()]
        stem_ids, stem_terms = _factorize(np.array(stems, dtype=object))
        return offsets, stem_ids.astype(np.int32)[codes], np.asarray(stem_terms, dtype=object)
    return offsets, codes, terms


def _sorted_vocabulary(terms: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The order that sorts ``terms`` ascending (code point order, as ``sorted``) and the sorted list.

    ASCII words are sorted as bytes by numpy rather than by ``sorted``
    (``benchmarks/speed_paths.py`` ``sorted_vocabulary``).
    """
    if not len(terms):
        return np.empty(0, dtype=np.int64), []
    if terms.dtype == object:
        words = terms.tolist()
        if all(w.isascii() for w in words):  # byte order is code point order for ASCII
            terms = np.array([w.encode("ascii") for w in words], dtype="S")
        else:
            order = np.array(sorted(range(len(words)), key=words.__getitem__), dtype=np.int64)
            return order, [words[i] for i in order.tolist()]
    order = np.argsort(terms, kind="stable")
    return order, terms[order].astype("U").tolist()


def tokenize(texts: Sequence[str], analyzer: str = "article", *, chunk_texts: int = CHUNK_TEXTS,
             progress: Callable[[int, int], None] | None = None) -> Tokenized:
    """Analyze every text and build the vocabulary (sorted ascending) of the terms that occur.

    ``progress(done, total)`` is called after each chunk of texts.

    >>> t = tokenize(["The Pro plan costs 49 euros.", "Can I get my money back?"])
    >>> t.vocabulary
    ['49', 'back', 'costs', 'euros', 'get', 'money', 'plan', 'pro']
    >>> t.tokens(0), t.tokens(1)
    (['pro', 'plan', 'costs', '49', 'euros'], ['get', 'money', 'back'])
    """
    offsets, codes, terms = _raw(texts, analyzer, chunk_texts, progress)
    order, vocabulary = _sorted_vocabulary(terms)
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    for start in range(0, len(codes), 1 << 22):  # in place, a block at a time: no second token array
        codes[start:start + (1 << 22)] = rank[codes[start:start + (1 << 22)]]
    if len(codes) >= _TRIM_FROM_TOKENS:  # a large fit's temporaries; a query's are not worth the trim
        release_freed_memory()
    return Tokenized(offsets, codes, vocabulary)


def streams(analyzer: str) -> bool:
    """Whether :class:`BlockTokenizer` tokenizes for ``analyzer``: the fast path's pattern, no stemmer."""
    declared = _declared(analyzer)
    return declared is not None and declared.stemmer is None


class BlockTokenizer:
    """:func:`tokenize`'s tokens, a block of texts at a time, so that no one holds every token at once.

    :meth:`blocks` yields each block's ``(offsets, term ids)``; the ids are provisional (a term's id
    is the order it was first seen in, the same in every block), because the sorted vocabulary is
    known only at the end: :meth:`vocabulary` then gives it and each provisional id's place in it.
    Same tokens as :func:`tokenize` (the same scan and merge); only for an analyzer that
    :func:`streams` (a stemmer maps several words to one term, which a provisional id cannot).
    """

    def __init__(self, texts: Sequence[str], analyzer: str, *, chunk_texts: int = CHUNK_TEXTS):
        declared = _declared(analyzer)
        if declared is None or declared.stemmer is not None:
            raise ValueError(f"analyzer {analyzer!r} is not tokenized a block at a time; use tokenize()")
        self.texts = texts
        self.chunk_texts = chunk_texts
        self.stop_words = frozenset(w.encode("ascii") for w in declared.stop_words if w.isascii())
        self.terms = np.zeros((0, 1), dtype=np.uint64)  # by provisional id

    @property
    def n_terms(self) -> int:
        """Distinct terms seen so far: the provisional ids are ``0..n_terms - 1``."""
        return len(self.terms)

    def blocks(self, block_texts: int,
               progress: Callable[[int, int], None] | None = None) -> Iterable[tuple[np.ndarray, np.ndarray]]:
        """Each block of ``block_texts`` texts as ``(offsets int64, provisional term ids int32)``;
        ``progress(done, total)`` after each chunk of texts."""
        total = len(self.texts)
        for first in range(0, total, block_texts):
            part = self.texts[first:first + block_texts]
            merger = _Merger(part, self.terms)
            for chunk in _chunks(part, self.chunk_texts):
                merger.add(_scan(chunk, self.stop_words))
                if progress is not None:
                    progress(first + merger.n_texts + sum(len(c.offsets) - 1 for c in merger.backlog), total)
            held = [merger]
            del merger, part
            yield self._block(held)

    def _block(self, held: list[_Merger]) -> tuple[np.ndarray, np.ndarray]:
        """The block of the merger in ``held`` (taken out): its ``(offsets, codes)``, merged into
        :attr:`terms`. Yielded straight from here, so that the generator keeps no reference to the
        block's tokens while the caller works on them: as the generator's locals they lived on until
        the next block, on top of the postings built from them (``benchmarks/RESULTS.md``,
        ``bm25_memory``)."""
        merger = held.pop()
        block = merger.codes_so_far()
        self.terms = merger.terms
        return block

    def vocabulary(self) -> tuple[np.ndarray, list[str]]:
        """``(rank, vocabulary)``: the terms seen, ascending (as :func:`tokenize` sorts them), and
        ``rank[provisional id]``, the term's id in that order (int32)."""
        order, vocabulary = _sorted_vocabulary(_as_bytes(self.terms))
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        return rank, vocabulary


def encode(texts: Sequence[str], vocabulary: Mapping[str, int], analyzer: str = "article",
           *, chunk_texts: int = CHUNK_TEXTS) -> tuple[np.ndarray, np.ndarray]:
    """Analyze texts against a fixed vocabulary (term -> id): ``(offsets, term_ids)``.

    Tokens outside the vocabulary are dropped; the order of the remaining tokens is kept. A
    vocabulary with a ``positions(terms)`` method (:class:`retrievers.strings.SortedStrings`) is
    asked for all the distinct terms at once (an int64 array, -1 where absent).

    >>> encode(["money back, money!", "nothing"], {"back": 0, "money": 1})
    (array([0, 3, 3]), array([1, 0, 1], dtype=int32))
    """
    offsets, codes, terms = _raw(texts, analyzer, chunk_texts)
    words = terms.astype("U").tolist() if terms.dtype != object else terms.tolist()
    positions = getattr(vocabulary, "positions", None)  # a table that looks up many terms at once
    lookup = positions(words) if positions is not None else \
        np.fromiter((vocabulary.get(w, -1) for w in words), dtype=np.int64, count=len(words))
    ids = lookup[codes]
    keep = ids >= 0
    kept_before = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    return kept_before[offsets], ids[keep].astype(np.int32)
