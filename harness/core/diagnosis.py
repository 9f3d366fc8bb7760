"""Why a query failed: a category per failed query, read from the words it shares with documents.

A query fails for a system when its first relevant document is missing or ranked below
``fail_rank`` (default 3), or when two near-identical versions of one document take two of its top
``fail_rank`` places (the article's fourth failure). The categories, in the order they are checked
(:data:`CATEGORIES` declares them; ``diagnosis.csv`` and the report use these names):

* ``duplicate versions`` - near-duplicate documents (shingle Jaccard >= 0.9, each with a body of at
  least 20 words: a shared title alone is no evidence, :mod:`harness.core.near_duplicates`) take two or
  more of the top ``fail_rank`` places, whether or not a
  relevant document is among them: one answer crowds out others, and the reader may get the stale
  version. Checked first, because deduplicating the collection is its fix whatever else is wrong;
  the failure's ``rank`` and ``first_result`` still say where the first relevant document is.

The lexical checks follow for the other failed queries; they are the cheapest and separate the two
commonest failures:

* ``vocabulary gap`` - no relevant document shares a query term and nothing relevant is
  retrieved: there are no candidates, whatever the ranking.
* ``surface homonymy`` - no relevant document shares a query term, but the first result is a
  non-relevant document that does: a convincing, wrong context.
* ``late rank`` - a relevant document is retrieved, below the fail rank: an ordering problem.
* ``missed`` - relevant documents share query terms but none was retrieved (depth, weighting).

On a collection of judgments only (no document texts, :mod:`corpora.judgments_only`) the words
cannot be read: no near-duplicate check is made, a failure with a relevant document retrieved is
still a ``late rank``, and one without is ``not retrieved`` (:data:`NOT_RETRIEVED`), because which
of vocabulary gap, surface homonymy or missed it is cannot be told without the texts
(:data:`TEXTLESS_CATEGORIES`, :data:`UNAVAILABLE_WITHOUT_TEXTS`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corpora import Corpus, Qrels, Queries, Run, is_relevant
from corpora.judgments_only import NO_TEXTS
from harness.core.near_duplicates import JACCARD_THRESHOLD, near_duplicates
from harness.core.options import FAIL_RANK

DUPLICATE_VERSIONS = "duplicate versions"
VOCABULARY_GAP = "vocabulary gap"
SURFACE_HOMONYMY = "surface homonymy"
LATE_RANK = "late rank"
MISSED = "missed"
#: Every category, in the order it is checked, with what it means (docs/compare.md's list says the same).
CATEGORIES = {
    DUPLICATE_VERSIONS: "near-duplicate documents take two or more of the top fail-rank places",
    VOCABULARY_GAP: "no relevant document shares a query word, nothing relevant retrieved",
    SURFACE_HOMONYMY: "no relevant document shares a query word, a non-relevant one that does comes first",
    LATE_RANK: "a relevant document is retrieved, below the fail rank",
    MISSED: "relevant documents share query words but were not retrieved",
}
NOT_RETRIEVED = "not retrieved"
#: The categories on a collection without document texts: what the ranks alone tell.
TEXTLESS_CATEGORIES = {
    LATE_RANK: CATEGORIES[LATE_RANK],
    NOT_RETRIEVED: f"no relevant document retrieved; whether {VOCABULARY_GAP}, {SURFACE_HOMONYMY} or {MISSED} "
                   f"cannot be told without document texts",
}
#: What the diagnosis cannot do without document texts, as the report and the manifest state it.
UNAVAILABLE_WITHOUT_TEXTS = (
    f"diagnosis kinds {VOCABULARY_GAP}, {SURFACE_HOMONYMY} and {MISSED}: unavailable ({NO_TEXTS}); "
    f"a failed query with no relevant document retrieved is '{NOT_RETRIEVED}'",
    f"near-duplicate check ({DUPLICATE_VERSIONS}): unavailable ({NO_TEXTS})",
    f"judging page: unavailable ({NO_TEXTS})",
)


def categories_of(corpus: Corpus) -> dict[str, str]:
    """The categories a diagnosis on ``corpus`` may give: :data:`CATEGORIES`, or
    :data:`TEXTLESS_CATEGORIES` when its texts are unknown."""
    return CATEGORIES if corpus.has_texts else TEXTLESS_CATEGORIES


@dataclass(frozen=True)
class DuplicatePair:
    """Two near-duplicate documents in a query's top places: their ids, ranks (1-based) and Jaccard."""

    doc_a: str
    doc_b: str
    rank_a: int
    rank_b: int
    jaccard: float


@dataclass(frozen=True)
class Failure:
    """One failed query of one system, as the diagnosis lists it: its ``category`` (vocabulary gap,
    surface homonymy, late rank, missed, duplicate versions), the ``rank`` of its first relevant
    document (None when not found), the ``first_result``, the words each relevant document shares
    with the query, their grades and the near-duplicate pairs among the top places."""

    system: str
    query_id: str
    query: str
    category: str
    rank: int | None
    first_result: str | None
    shared_words: dict[str, list[str]]  # relevant doc id -> words it shares with the query
    grades: dict[str, int]
    duplicates: tuple[DuplicatePair, ...] = ()  # near-duplicate pairs in the top fail_rank places

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
    fail_rank: int = FAIL_RANK,
    rel_threshold: int = 1,
    duplicate_threshold: float = JACCARD_THRESHOLD,
) -> list[Failure]:
    """Every failed query of ``system``, in ``query_ids`` order: first relevant rank missing or >
    ``fail_rank``, or near-duplicates (shingle Jaccard >= ``duplicate_threshold``) in the top
    ``fail_rank`` places. Without the corpus's texts, by the ranks alone (:data:`TEXTLESS_CATEGORIES`)."""
    text_of = dict(zip(queries.ids, queries.texts))
    pairs: dict[str, list[DuplicatePair]] = {}
    found = near_duplicates(run, corpus, query_ids, fail_rank, duplicate_threshold) if corpus.has_texts else None
    for row in found.itertuples(index=False) if found is not None else ():
        pairs.setdefault(row.query_id, []).append(DuplicatePair(row.doc_a, row.doc_b, int(row.rank_a),
                                                                int(row.rank_b), float(row.jaccard)))
    failed = []
    for q in query_ids:
        relevant = {d: g for d, g in qrels.get(q, {}).items() if is_relevant(g, rel_threshold)}
        ranking = run.ranking(q)
        rank = next((i for i, d in enumerate(ranking, 1) if d in relevant), None)
        duplicates = tuple(pairs.get(q, ()))
        if rank is not None and rank <= fail_rank and not duplicates:
            continue
        failed.append((q, relevant, ranking[0] if ranking else None, rank, duplicates))
    if not corpus.has_texts:
        return [Failure(system, q, text_of.get(q, ""), LATE_RANK if rank is not None else NOT_RETRIEVED, rank, first,
                        {}, relevant) for q, relevant, first, rank, _ in failed]
    # the texts read: each failed query's relevant documents and first result, once each, together
    # (corpus.documents_at: a corpus whose texts are elsewhere reads only these)
    position = corpus.positions_of({d for _, relevant, first, _, _ in failed for d in [*relevant, first] if d is not None})
    read = sorted(position, key=position.__getitem__)
    full, _ = corpus.documents_at([position[d] for d in read])
    doc_terms = {d: set(analyzer(text)) for d, text in zip(read, full)}
    failures = []
    for q, relevant, first, rank, duplicates in failed:
        terms = set(analyzer(text_of.get(q, "")))
        shared = {d: sorted(terms & doc_terms.get(d, set())) for d in relevant}
        first_shares = bool(terms & doc_terms.get(first, set())) if first is not None else None
        category = DUPLICATE_VERSIONS if duplicates else categorise(rank, any(shared.values()), first_shares,
                                                                     first in relevant)
        failures.append(Failure(system, q, text_of.get(q, ""), category, rank, first, shared, relevant, duplicates))
    return failures
