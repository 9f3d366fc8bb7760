"""A retriever that returns a ranking fixed in advance: the fake every test can use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from corpora import Queries
from retrievers.base import Retriever


class FixedRun(Retriever):
    """Returns the given rankings (query id -> doc ids, best first), truncated at ``k``.

    Scores count down from the length of the whole ranking, so they do not depend on ``k``.

    >>> from corpora import Queries
    >>> FixedRun({"q1": ["b", "a"]}).search(Queries(["q1"], ["x"]), 1)
    {'q1': [('b', 2.0)]}
    """

    name = "fixed"

    def __init__(self, rankings: Mapping[str, Sequence[str]] | None = None):
        self.rankings = {q: list(d) for q, d in (rankings or {}).items()}

    def search(self, queries: Queries, k: int) -> dict[str, list[tuple[str, float]]]:
        out = {}
        for q in queries.ids:
            docs = self.rankings.get(q, [])
            out[q] = [(d, float(len(docs) - i)) for i, d in enumerate(docs[:k])]
        return out

    def non_default_params(self) -> dict:
        return {}
