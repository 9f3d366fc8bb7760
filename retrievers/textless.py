"""A comparison on a collection of judgments only (no document texts): its systems and documents.

On a :class:`~corpora.judgments_only.TextlessCorpus` only runs can be compared (``run(PATH)``, a run
given in Python) and fusions of them, which read rankings, never texts; any other retriever is
refused in one line before anything is fitted. The corpus's documents become the judged ones and
every document the runs rank (:func:`corpora.judgments_only.with_documents`), so no run names a
document the collection lacks. What the diagnosis and the pages cannot do without texts is said
in the report and the manifest (:func:`~harness.core.diagnosis.unavailable_without_texts`).
"""

from __future__ import annotations

from collections.abc import Sequence

from corpora import Dataset, RetbenchError
from corpora.judgments_only import NO_TEXTS, with_documents
from retrievers import Retriever
from retrievers.fusion import Fusion
from retrievers.run_file import RunSystem

__all__ = ["with_run_documents"]


def with_run_documents(dataset: Dataset, retrievers: Sequence[Retriever]) -> Dataset:
    """``dataset`` (judgments only) with every document of the runs among ``retrievers`` (and their
    fusions' children) in its corpus; a retriever that reads texts is refused."""
    documents: list[str] = []
    stack = list(reversed(retrievers))
    while stack:
        retriever = stack.pop()
        if isinstance(retriever, RunSystem):
            documents.extend(retriever.documents(dataset.corpus.name))
        elif isinstance(retriever, Fusion):
            stack.extend(reversed(retriever.children))
        else:
            raise RetbenchError(
                f"system {retriever.label!r}: the collection {dataset.name!r} is judgments only ({NO_TEXTS}), and "
                f"{retriever.name} reads the documents' texts. Fix: compare run files (run(PATH)) and fusions of "
                "them, or give a corpus that holds the documents")
    return with_documents(dataset, documents)
