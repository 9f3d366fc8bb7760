"""Any PyTerrier transformer as a retriever, benchmarked beside the baselines.

In Python, wrap the pipeline object::

    import pyterrier as pt
    from harness import compare
    from retrievers import BM25, PyTerrierRetriever

    bm25 = pt.terrier.Retriever(index, wmodel="BM25")           # built over the same documents
    compare({"bm25": BM25(), "terrier": PyTerrierRetriever(bm25 % 100)}, dataset, ["ndcg@10"])

On the command line a spec names it by import path: ``--systems "bm25,terrier=pyterrier(pipeline=
my_module:make_pipeline)"``. The path names a transformer object, or a function that is called with
the fitted :class:`~corpora.Corpus` and returns one (so it can index the very documents retbench
compares on, e.g. with ``pt.IterDictIndexer``); the module must be importable (on ``PYTHONPATH``).

:meth:`PyTerrierRetriever.search` hands the pipeline PyTerrier's topics frame (columns ``qid``, ``query``)
and reads the results frame it returns (``qid``, ``docno``, ``score``) as :meth:`corpora.Run.from_dataframe`
does: each query ranked by score descending, ties by docno descending, PyTerrier's ``rank`` column
ignored, which is how PyTerrier's own evaluation (``pt.Experiment``, through trec_eval's code) ranks
them; then the top ``k``. Query texts are passed as they are: a Terrier retriever whose query
parser trips on punctuation needs PyTerrier's own cure in the pipeline (``pt.rewrite.tokenise()``).
A docno that is not a document of the corpus is an error naming the system.

Nothing here imports PyTerrier: any object with PyTerrier's ``transform(topics) -> results`` works,
which is also what the tests use where PyTerrier (or the Java it needs for Terrier's own retrievers)
is not installed.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, Union

import numpy as np

from corpora import Corpus, Queries, RetbenchError, Run
from corpora.run import run_from_table
from retrievers.base import Retriever

if TYPE_CHECKING:
    import pandas as pd


class Transformer(Protocol):
    """PyTerrier's transformer interface, the one method this adapter calls."""

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame: ...


#: What ``pipeline`` may be: ``module:attr`` (a spec's text), a transformer, or a function
#: corpus -> transformer (callable, so it is not spelled out here, which keeps ``bench retrievers`` readable).
Pipeline = Union[str, Transformer]


def _is_transformer(value: object) -> bool:
    return not isinstance(value, type) and callable(getattr(value, "transform", None))


def _describe(value: object) -> str:
    """A stable, space-free name for a pipeline object: its class (a repr may hold an address)."""
    kind = value if isinstance(value, type) else type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _resolve(path: str) -> object:
    module_name, colon, attr = path.partition(":")
    if not colon or not module_name or not attr:
        raise RetbenchError(f"pyterrier pipeline {path!r}: expected module:attribute. Fix: name the module and "
                            "the transformer or function in it, e.g. pyterrier(pipeline=my_module:make_pipeline)")
    try:
        module = import_module(module_name)
    except ImportError as exc:
        raise RetbenchError(f"pyterrier pipeline {path!r}: cannot import module {module_name!r} ({exc}). "
                            "Fix: check the spelling and that the module is on PYTHONPATH") from None
    except Exception as exc:  # the user's module raised while being imported
        raise RetbenchError(f"pyterrier pipeline {path!r}: importing {module_name!r} failed: "
                            f"{type(exc).__name__}: {exc}") from exc
    value = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise RetbenchError(f"pyterrier pipeline {path!r}: {module_name!r} has no attribute {attr!r}. "
                                "Fix: name a PyTerrier transformer or a function corpus -> transformer")
        value = getattr(value, part)
    return value


class PyTerrierRetriever(Retriever):
    """A PyTerrier transformer (a retriever or a whole pipeline), ranked as PyTerrier's evaluation ranks it.

    ``pipeline``: a transformer object; a function called with the fitted corpus that returns one;
    or, from a spec, ``module:attr`` naming either.
    """

    name = "pyterrier"

    def __init__(self, pipeline: Pipeline | None = None):
        if pipeline is None:
            raise RetbenchError("pyterrier needs a pipeline. Fix: in Python, PyTerrierRetriever(transformer); in a spec, "
                                "pyterrier(pipeline=my_module:make_pipeline) naming a transformer or a function "
                                "corpus -> transformer")
        self.pipeline = pipeline
        target = _resolve(pipeline) if isinstance(pipeline, str) else pipeline
        if not (_is_transformer(target) or callable(target)):
            raise RetbenchError(f"pyterrier pipeline {self._shown()!r} is a {type(target).__name__}, neither a "
                                "transformer (an object with transform(topics)) nor a function corpus -> "
                                "transformer. Fix: pass a PyTerrier transformer")
        self._target = target
        self._transformer: Any = target if _is_transformer(target) else None

    def _shown(self) -> str:
        return self.pipeline if isinstance(self.pipeline, str) else _describe(self.pipeline)

    def get_params(self) -> dict[str, Any]:
        return {"pipeline": self._shown()}

    def non_default_params(self) -> dict[str, Any]:
        return {"pipeline": self._shown()}

    def fit(self, corpus: Corpus) -> PyTerrierRetriever:
        super().fit(corpus)
        if not _is_transformer(self._target):
            made = self._target(corpus)
            if not _is_transformer(made):
                raise RetbenchError(f"pyterrier pipeline {self._shown()!r}: the function returned a "
                                    f"{type(made).__name__}, not a transformer (an object with transform(topics)). "
                                    "Fix: return the PyTerrier pipeline")
            self._transformer = made
        return self

    def search(self, queries: Queries, k: int) -> Run:
        import pandas as pd

        topics = pd.DataFrame({"qid": pd.Series(queries.ids, dtype=object),
                               "query": pd.Series(queries.texts, dtype=object)})
        results = self._transformer.transform(topics)
        owner = f"retriever {self.label!r}: the pipeline's results"
        if not hasattr(results, "columns") or not hasattr(results, "__getitem__"):
            raise RetbenchError(f"{owner} are a {type(results).__name__}, not a DataFrame. Fix: end the pipeline "
                                "with a retriever or re-ranker (its results have qid, docno, score)")
        if not len(results):
            return Run.from_mapping({})
        run = run_from_table(lambda name: results[name].to_numpy(), list(results.columns), owner, "trec")
        return _top(run, k)


def _top(run: Run, k: int) -> Run:
    """The first ``k`` results of every query of ``run``."""
    lengths = run.lengths()
    position = np.arange(len(run.doc_index)) - np.repeat(run.offsets[:-1], lengths)
    keep = position < k
    offsets = np.concatenate([[0], np.cumsum(np.minimum(lengths, k))])
    return Run(run.query_ids, run.doc_ids, offsets, run.doc_index[keep], run.scores[keep])
