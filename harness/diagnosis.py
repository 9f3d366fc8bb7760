"""Why a query failed: a category per failed query, read from the words it shares with documents.

A query fails for a system when its first relevant document is missing or ranked below
``fail_rank`` (default 3). The lexical check comes first because it is the cheapest and separates
the two commonest failures:

* ``vocabulary gap`` - no relevant document shares a query term and nothing relevant is
  retrieved: there are no candidates, whatever the ranking.
* ``surface homonymy`` - no relevant document shares a query term, but the first result is a
  non-relevant document that does: a convincing, wrong context.
* ``late rank`` - a relevant document is retrieved, below the fail rank: an ordering problem.
* ``missed`` - relevant documents share query terms but none was retrieved (depth, weighting).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corpora import Corpus, Qrels, Queries, Run, is_relevant

VOCABULARY_GAP = "vocabulary gap"
SURFACE_HOMONYMY = "surface homonymy"
LATE_RANK = "late rank"
MISSED = "missed"


@dataclass(frozen=True)
class Failure:
    system: str
    query_id: str
    query: str
    category: str
    rank: int | None
    first_result: str | None
    shared_words: dict[str, list[str]]  # relevant doc id -> words it shares with the query
    grades: dict[str, int]

    def shared_words_text(self) -> str:
        return "; ".join(f"{d}: {' '.join(w) if w else '-'}" for d, w in self.shared_words.items())


def categorise(rank: int | None, relevant_shares: bool, first_result_shares: bool | None,
               first_result_relevant: bool) -> str:
    """The failure category from the lexical facts of one query.

    >>> categorise(None, False, None, False), categorise(None, False, True, False), categorise(13, False, True, False)
    ('vocabulary gap', 'surface homonymy', 'late rank')
    """
    if rank is not None:
        return LATE_RANK
    if relevant_shares:
        return MISSED
    if first_result_shares and not first_result_relevant:
        return SURFACE_HOMONYMY
    return VOCABULARY_GAP


def diagnose(
    system: str,
    run: Run,
    corpus: Corpus,
    queries: Queries,
    qrels: Qrels,
    analyzer: Callable[[str], list[str]],
    query_ids: Sequence[str],
    fail_rank: int = 3,
    rel_threshold: int = 1,
) -> list[Failure]:
    """Every failed query of ``system`` (first relevant rank missing or > ``fail_rank``)."""
    text_of = dict(zip(queries.ids, queries.texts))
    doc_position = corpus.index_of()
    full_texts = corpus.full_texts
    token_cache: dict[str, set[str]] = {}

    def doc_terms(doc_id: str) -> set[str]:
        if doc_id not in token_cache:
            j = doc_position.get(doc_id)
            token_cache[doc_id] = set(analyzer(full_texts[j])) if j is not None else set()
        return token_cache[doc_id]

    failures = []
    for q in query_ids:
        relevant = {d: g for d, g in qrels.get(q, {}).items() if is_relevant(g, rel_threshold)}
        ranking = run.ranking(q)
        rank = next((i for i, d in enumerate(ranking, 1) if d in relevant), None)
        if rank is not None and rank <= fail_rank:
            continue
        terms = set(analyzer(text_of.get(q, "")))
        shared = {d: sorted(terms & doc_terms(d)) for d in relevant}
        first = ranking[0] if ranking else None
        first_shares = bool(terms & doc_terms(first)) if first is not None else None
        category = categorise(rank, any(shared.values()), first_shares, first in relevant)
        failures.append(Failure(system, q, text_of.get(q, ""), category, rank, first, shared, relevant))
    return failures
