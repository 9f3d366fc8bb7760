"""BM25 with Lucene's idf and defaults, over an index of postings with term frequencies.

score(q, d) = sum over distinct query terms t of
    idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl)),
    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

|d| is the number of analyzed tokens of d. A query term counts once however often it repeats
(the article's ``set(token(question))``). The postings, idf and length norms are computed once at
fit time (:class:`~retrievers.bm25.index.BM25Index`); a query touches only its terms' postings and the top k
is selected exactly without sorting every match. Tokens come from :func:`corpora.tokenize.tokenize`,
identical to the analyzer's. A fitted index is reused from the cache of the run context (:mod:`retrievers.cache`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from corpora import DEFAULT_ANALYZER, Corpus, Queries, Run, get_analyzer
from corpora.analyzers import analyzer_fingerprint
from corpora.errors import RetbenchError
from corpora.memory import release_freed_memory
from retrievers.base import Retriever, ScoreRetriever
from retrievers.bm25 import compiled
from retrievers.bm25.shards import BM25Sharding
from retrievers.cache import State
from retrievers.bm25.index import BM25Index, doc_dtype
from retrievers.ranking import doc_id_order
from retrievers.sharding import require_fitted_here
from retrievers.strings import SortedStrings, check_strings, unpack_strings
from retrievers.validation import check_float

#: The files :meth:`BM25.save` writes into its folder: the index (an index cache entry) and its parameters.
SAVED_INDEX = "bm25.idx"
SAVED_PARAMETERS = "bm25.json"


class BM25(BM25Sharding, ScoreRetriever):
    """Okapi BM25 (Lucene idf, k1 = 1.2, b = 0.75 by default) over the chosen analyzer; it can be
    fitted in shards of documents on a cluster (:mod:`retrievers.bm25.shards`)."""

    name = "bm25"
    #: Threads that score batches of queries side by side (scipy's sparse products release the GIL;
    #: it pays at a million documents, not at a hundred thousand). 1 keeps a run on one core.
    threads: ClassVar[int] = 1
    state_version: ClassVar[int] = 3

    def __init__(self, k1: float = 1.2, b: float = 0.75, analyzer: str = DEFAULT_ANALYZER):
        check_float(k1, "k1", "bm25", low=0.0, default=1.2)
        check_float(b, "b", "bm25", low=0.0, high=1.0, default=0.75)
        get_analyzer(analyzer)
        self.k1 = k1
        self.b = b
        self.analyzer = analyzer

    # ----- fitting ---------------------------------------------------------------------------
    def fit(self, corpus: Corpus) -> BM25:
        Retriever.fit(self, corpus)
        state = self.fitted_state("bm25", self._state_params(), corpus, lambda: self._build(corpus),
                                  lambda s: _valid_state(s, len(corpus)))
        return self._use(state)

    def _state_params(self) -> dict[str, Any]:
        """What keys the fitted state besides the corpus (the index cache's and a saved index's key)."""
        return {"k1": float(self.k1), "b": float(self.b), "analyzer": self.analyzer,
                "analyzer_fingerprint": analyzer_fingerprint(self.analyzer), "version": self.state_version}

    def _use(self, state: State) -> BM25:
        for array in state.values():  # read-only, as a loaded or cached index's: one compiled loop serves both
            array.flags.writeable = False
        self._state = state
        self.index = BM25Index(state["indptr"], state["block_starts"], state["docs"], state["tfs"], state["idf"],
                               state["length_class"], state["class_norm"], float(self.k1), len(self.corpus),
                               int(state["block_docs"][0]))
        self._tie_rank = state["tie_rank"]
        self._vocabulary_arrays = (state["vocabulary"], state["vocabulary_offsets"])
        self._term_ids: SortedStrings | None = None
        return self

    def _build(self, corpus: Corpus) -> State:
        index, (blob, offsets) = BM25Index.from_texts(corpus.full_texts, self.analyzer, self.k1, self.b,
                                                      self.run_context.progress.callback())
        tie_rank = doc_id_order(corpus.ids)
        release_freed_memory()  # the build's temporaries (the id sort)
        return {"indptr": index.indptr, "block_starts": index.block_starts, "docs": index.docs, "tfs": index.tfs,
                "block_docs": np.array([index.block_docs], dtype=np.int64), "idf": index.idf,
                "length_class": index.length_class, "class_norm": index.class_norm,
                "tie_rank": tie_rank, "vocabulary": blob, "vocabulary_offsets": offsets}

    # ----- saving and loading ------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        """Write the fitted index into ``folder`` (made if missing): ``bm25.idx``, an index cache
        entry (:mod:`retrievers.cache`: a JSON header and raw arrays, each with its CRC-32; nothing
        pickled), and ``bm25.json``, the parameters it was fitted with. The entry's key holds the
        corpus's content hash, so :meth:`load` accepts it for that corpus only. Both files are
        written to temporary names and renamed: a reader never sees half an index. Returns ``folder``."""
        from retrievers.cache import corpus_digest, entry_key, write_entry

        require_fitted_here(self, "index", "save")
        folder = Path(folder)
        params = self._state_params()
        key = entry_key(self.name, params, corpus_digest(self.corpus))
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name, write in ((SAVED_INDEX, lambda path: write_entry(path, key, self._state)),
                                (SAVED_PARAMETERS, lambda path: path.write_text(json.dumps(
                                    {"retriever": self.name, "params": params, "n_docs": len(self.corpus)},
                                    indent=1, sort_keys=True) + "\n", encoding="utf-8"))):
                temporary = folder / f".{name}.{os.getpid()}.tmp"
                try:
                    write(temporary)
                    os.replace(temporary, folder / name)
                finally:
                    with contextlib.suppress(OSError):
                        temporary.unlink()
        except OSError as exc:
            raise RetbenchError(f"cannot save the BM25 index into {folder}: {exc}. Fix: pass a folder that "
                                "can be written, with room for the index") from exc
        return folder

    @classmethod
    def load(cls, folder: str | Path, corpus: Corpus, *, mmap: bool = True, verify: bool = True) -> BM25:
        """The BM25 fitted on ``corpus`` that :meth:`save` wrote into ``folder``, ready to search,
        without fitting again.

        ``mmap`` (the default): the index's arrays are read-only views of a memory map of the file,
        read from disk where a search reads them and shared through the page cache; False: read
        into memory. ``verify`` (the default): every array's CRC-32 is checked (one read of the file
        through the page cache); False skips only that. Either way the parameters, the corpus (by
        content hash), the file's header, every array's type, shape and place and the index's
        structure are checked: a truncated, damaged or foreign file is a
        :class:`~corpora.errors.RetbenchError`, never a wrong ranking.
        """
        from retrievers.cache import corpus_digest, entry_key, read_entry

        folder = Path(folder)
        fix = f"Fix: save the index again (BM25().fit(corpus).save({str(folder)!r}))"
        try:
            saved = json.loads((folder / SAVED_PARAMETERS).read_text(encoding="utf-8"))
            params = saved["params"]
            retriever = cls(k1=float(params["k1"]), b=float(params["b"]), analyzer=str(params["analyzer"]))
        except FileNotFoundError as exc:
            raise RetbenchError(f"{folder}: no saved BM25 index ({SAVED_PARAMETERS} is missing). {fix}") from exc
        except (OSError, ValueError, KeyError, TypeError, RetbenchError) as exc:
            raise RetbenchError(f"{folder / SAVED_PARAMETERS}: not a saved BM25 index's parameters ({exc}). "
                                f"{fix}") from exc
        if saved.get("retriever") != cls.name or params != retriever._state_params():
            raise RetbenchError(f"{folder}: saved by another version of {cls.name} or with an analyzer that has "
                                f"changed since. {fix}")
        if saved.get("n_docs") != len(corpus):
            raise RetbenchError(f"{folder}: saved for a corpus of {saved.get('n_docs')} documents, given one of "
                                f"{len(corpus)}. Fix: load it with the corpus it was fitted on, or fit this one")
        key = entry_key(cls.name, params, corpus_digest(corpus))
        path = folder / SAVED_INDEX
        try:
            state = read_entry(path, key, mmap_arrays=mmap, verify=verify)
        except FileNotFoundError as exc:
            raise RetbenchError(f"{path}: missing. {fix}") from exc
        except (OSError, ValueError, KeyError, TypeError) as exc:
            if "another corpus" in str(exc):
                raise RetbenchError(f"{path}: fitted on another corpus (its content hash differs). Fix: load it "
                                    "with the corpus it was fitted on, or fit this one") from exc
            raise RetbenchError(f"{path}: damaged ({exc}). {fix}") from exc
        if not _valid_state(state, len(corpus)):
            raise RetbenchError(f"{path}: damaged (its arrays do not fit together). {fix}")
        Retriever.fit(retriever, corpus)
        return retriever._use(state)

    @property
    def vocabulary(self) -> list[str]:
        """The indexed terms, ascending; a term's position is its id."""
        return unpack_strings(*self._vocabulary_arrays)

    @classmethod
    def sweep(cls, settings: Sequence[Retriever], corpus: Corpus, queries: Queries,
              k: int) -> Iterator[Run] | None:
        """Every setting's run, sharing tokens and term statistics (:mod:`retrievers.bm25.sweep`):
        one ``bm25-postings`` state per analyzer, then per setting only the weights of the queries'
        terms. Equal, bit for bit, to fitting and searching each; None for a subclass (whose scoring
        may differ) or a setting of another class."""
        if cls is not BM25 or any(type(setting) is not BM25 for setting in settings):
            return None
        from retrievers.bm25.sweep import BM25Sweep

        bm25s = [setting for setting in settings if isinstance(setting, BM25)]  # all of them, checked above

        def runs() -> Iterator[Run]:
            shared: dict[str, BM25Sweep] = {}  # by analyzer, the one thing a setting may change besides k1, b
            for setting in bm25s:
                if setting.analyzer not in shared:
                    shared[setting.analyzer] = BM25Sweep(corpus, queries, setting.analyzer, cls.name,
                                                          setting.run_context)
                yield shared[setting.analyzer].run(setting.k1, setting.b, k, cls.min_score)

        return runs()

    # ----- querying --------------------------------------------------------------------------
    def encode_queries(self, queries: Queries) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, term ids)`` of the analyzed queries; unknown terms dropped."""
        from corpora.tokenize import encode

        require_fitted_here(self, "index", "search")
        if self._term_ids is None:
            self._term_ids = SortedStrings(*self._vocabulary_arrays)
        return encode(queries.texts, self._term_ids, self.analyzer)

    def score(self, queries: Queries) -> sp.csr_matrix:
        return self.index.score_matrix(*self.encode_queries(queries))

    def search(self, queries: Queries, k: int) -> Run:
        """The top ``k`` over the index's postings, without ranking :meth:`score`'s matrix
        (``ScoreRetriever.search``; ``benchmarks/speed_paths.py`` ``bm25_search`` times the two)."""
        offsets, terms = self.encode_queries(queries)
        tasks = self.run_context.progress
        callback = tasks.callback()
        with tasks.task(compiled.COMPILING) if self._compiles_now() else contextlib.nullcontext():
            run_offsets, docs, scores = self.index.search(offsets, terms, k, self._tie_rank, self.min_score,
                                                          threads=self.threads, progress=callback)
        return Run(queries.ids, self.corpus.id_array(), run_offsets, docs, scores)

    def _compiles_now(self) -> bool:
        """Whether this search runs the compiled loop for the first time in this process (as
        :meth:`BM25Index.search` chooses it), which takes a moment worth a line of progress."""
        return self.index.compiles_by_default() and compiled.compiles_on_first_call()


def _valid_state(state: State, n_docs: int) -> bool:
    """A cached state is used only when its arrays fit together (never trust a file)."""
    try:
        indptr, starts, docs, tfs = state["indptr"], state["block_starts"], state["docs"], state["tfs"]
        idf, length_class, class_norm = state["idf"], state["length_class"], state["class_norm"]
        block, tie_rank = state["block_docs"], state["tie_rank"]
        blob, offsets = state["vocabulary"], state["vocabulary_offsets"]
    except KeyError:
        return False
    unsigned = (np.uint8, np.uint16, np.int32)
    if not (indptr.dtype in (np.int32, np.int64) and indptr.ndim == 2 and block.dtype == np.int64
            and block.shape == (1,) and starts.dtype == np.int64 and tie_rank.dtype == np.int64
            and blob.dtype == np.uint8 and offsets.dtype == np.int64 and idf.dtype == np.float64
            and class_norm.dtype == np.float64 and length_class.dtype in unsigned and tfs.dtype in unsigned):
        return False
    block_docs = int(block[0])
    if not 1 <= block_docs < 2**31 or docs.dtype != doc_dtype(block_docs):
        return False
    n_blocks = max(1, -(-n_docs // block_docs))
    if len(indptr) != n_blocks or indptr.shape[1] != len(offsets) or starts.shape != (n_blocks + 1,):
        return False
    if idf.shape != (len(offsets) - 1,) or length_class.shape != (n_docs,) or class_norm.ndim != 1:
        return False
    if not (np.isfinite(idf).all() and (idf > 0).all() and np.isfinite(class_norm).all() and (class_norm >= 0).all()):
        return False
    if n_docs and int(length_class.max()) >= len(class_norm):
        return False
    if (indptr[:, 0] != 0).any() or any((np.diff(row) < 0).any() for row in indptr):  # a row at a time: small temporaries
        return False
    if starts[0] != 0 or not np.array_equal(np.diff(starts), indptr[:, -1]):
        return False
    if docs.shape != (int(starts[-1]),) or tfs.shape != docs.shape or (len(tfs) and int(tfs.min()) < 1):
        return False
    for number in range(n_blocks):
        width = min(block_docs, n_docs - number * block_docs)
        within = docs[starts[number]:starts[number + 1]]
        if len(within) and int(within.max()) >= width:
            return False
    if len(tie_rank) != n_docs or (n_docs and not (np.bincount(tie_rank.clip(0, n_docs - 1), minlength=n_docs) == 1).all()):
        return False
    try:
        check_strings(blob, offsets)
    except ValueError:
        return False
    return True
