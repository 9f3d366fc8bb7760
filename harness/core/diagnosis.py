"""Why a query failed: a category per failed query, read from the words it shares with documents.

A query fails for a system when its first relevant document is missing or ranked below
``fail_rank`` (default 3), or when a registered reading with a failure check
(:class:`FailureCheck`) flags it. The categories, in the order they are checked
(:func:`categories_of` lists them; ``diagnosis.csv`` and the report use these names):

* each registered reading's check, in registry order: the built-in one is ``duplicate versions``
  (:mod:`harness.readings.near_duplicates`: near-duplicate documents take two or more of the top
  ``fail_rank`` places, whether or not a relevant document is among them), checked first because
  deduplicating the collection is its fix whatever else is wrong; the failure's ``rank`` and
  ``first_result`` still say where the first relevant document is, and its ``evidence`` holds the
  reading's rows of the query.

The lexical checks follow for the other failed queries (:data:`CATEGORIES`); they are the cheapest
and separate the two commonest failures:

* ``vocabulary gap`` - no relevant document shares a query term and nothing relevant is
  retrieved: there are no candidates, whatever the ranking.
* ``surface homonymy`` - no relevant document shares a query term, but the first result is a
  non-relevant document that does: a convincing, wrong context.
* ``late rank`` - a relevant document is retrieved, below the fail rank: an ordering problem.
* ``missed`` - relevant documents share query terms but none was retrieved (depth, weighting).

On a collection of judgments only (no document texts, :mod:`corpora.judgments_only`) the words
cannot be read: no reading's check that needs them flags anything, a failure with a relevant
document retrieved is still a ``late rank``, and one without is ``not retrieved``
(:data:`NOT_RETRIEVED`), because which of vocabulary gap, surface homonymy or missed it is cannot
be told without the texts (:data:`TEXTLESS_CATEGORIES`, :func:`unavailable_without_texts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from corpora import Corpus, Qrels, Queries, Run, is_relevant
from corpora.judgments_only import NO_TEXTS
from harness.core.options import FAIL_RANK

VOCABULARY_GAP = "vocabulary gap"
SURFACE_HOMONYMY = "surface homonymy"
LATE_RANK = "late rank"
MISSED = "missed"
#: The lexical categories, in the order they are checked, with what they mean (docs/compare.md's list
#: says the same); the registered readings' checks come first (:func:`categories_of`).
CATEGORIES = {
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


@dataclass(frozen=True)
class FailureCheck:
    """How a registered reading's rows fail their queries in this diagnosis (``Reading.fails``): each
    (``system``, ``query_id``) of its table is a failed query of ``category``, checked before the
    lexical categories (a reading registered earlier wins a query two readings flag); the rows are
    the failure's ``evidence`` (:attr:`harness.core.diagnosis.Failure.evidence`, less those two columns).

    ``category``: its name (``diagnosis.csv``'s ``category``); ``meaning``: what it says, in the
    manifest's ``diagnosis.categories``; ``clause``: report format (``text``, ``md``, ``html``) -> what
    it adds to the definition of a failed query after ", or " (``{fail_rank}`` is filled in);
    ``tally``: the text report's count of a system's failures of it (``{count}`` and ``{fail_rank}``
    filled in; the count is left out when the diagnosis could not read the texts); ``evidence``: a
    failure's rows -> the line the text report prints under it; ``unavailable``: what the manifest
    and the reports say when the collection has no document texts (empty: it needs none)."""

    category: str
    meaning: str
    clause: Mapping[str, str] = field(default_factory=dict, compare=False)
    tally: str = ""
    evidence: Callable[[Sequence[Mapping[str, Any]]], str] | None = field(default=None, repr=False, compare=False)
    unavailable: str = ""


def unavailable_without_texts(checks: Sequence[FailureCheck] = ()) -> list[str]:
    """What the diagnosis cannot do without document texts, as the report and the manifest state it:
    the lexical categories, each check of ``checks`` that needs the texts (the registered readings',
    :func:`harness.core.readings.failure_checks`), the judging page."""
    return [f"diagnosis kinds {VOCABULARY_GAP}, {SURFACE_HOMONYMY} and {MISSED}: unavailable ({NO_TEXTS}); "
            f"a failed query with no relevant document retrieved is '{NOT_RETRIEVED}'",
            *(check.unavailable for check in checks if check.unavailable),
            f"judging page: unavailable ({NO_TEXTS})"]


def categories_of(corpus: Corpus, checks: Sequence[FailureCheck] = ()) -> dict[str, str]:
    """The categories a diagnosis on ``corpus`` may give, in the order they are checked: each of
    ``checks`` (the registered readings', :func:`harness.core.readings.failure_checks`), then
    :data:`CATEGORIES`; :data:`TEXTLESS_CATEGORIES` when its texts are unknown."""
    if not corpus.has_texts:
        return TEXTLESS_CATEGORIES
    return {**{check.category: check.meaning for check in checks}, **CATEGORIES}


@dataclass(frozen=True)
class Failure:
    """One failed query of one system, as the diagnosis lists it: its ``category`` (vocabulary gap,
    surface homonymy, late rank, missed, or a registered reading's, such as duplicate versions), the
    ``rank`` of its first relevant document (None when not found), the ``first_result``, the words
    each relevant document shares with the query, their grades and the ``evidence`` of a reading's
    category: that reading's rows of the query (for duplicate versions, the near-duplicate pairs
    among the top places: ``doc_a``, ``doc_b``, ``rank_a``, ``rank_b``, ``jaccard``)."""

    system: str
    query_id: str
    query: str
    category: str
    rank: int | None
    first_result: str | None
    shared_words: dict[str, list[str]]  # relevant doc id -> words it shares with the query
    grades: dict[str, int]
    evidence: tuple[Mapping[str, Any], ...] = ()  # the rows of the reading whose check flagged it

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
    flagged: Mapping[str, tuple[str, tuple[Mapping[str, Any], ...]]] | None = None,
) -> list[Failure]:
    """Every failed query of ``system``, in ``query_ids`` order: first relevant rank missing or >
    ``fail_rank``, or flagged by a registered reading's check (``flagged``: query id -> its category
    and evidence, :func:`harness.core.readings.flagged_queries`). Without the corpus's texts, by the
    ranks alone (:data:`TEXTLESS_CATEGORIES`)."""
    text_of = dict(zip(queries.ids, queries.texts))
    flagged = flagged or {}
    failed = []
    for q in query_ids:
        relevant = {d: g for d, g in qrels.get(q, {}).items() if is_relevant(g, rel_threshold)}
        ranking = run.ranking(q)
        rank = next((i for i, d in enumerate(ranking, 1) if d in relevant), None)
        flag = flagged.get(q) if corpus.has_texts else None
        if rank is not None and rank <= fail_rank and flag is None:
            continue
        failed.append((q, relevant, ranking[0] if ranking else None, rank, flag))
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
    for q, relevant, first, rank, flag in failed:
        terms = set(analyzer(text_of.get(q, "")))
        shared = {d: sorted(terms & doc_terms.get(d, set())) for d in relevant}
        first_shares = bool(terms & doc_terms.get(first, set())) if first is not None else None
        category, evidence = flag if flag is not None else (
            categorise(rank, any(shared.values()), first_shares, first in relevant), ())
        failures.append(Failure(system, q, text_of.get(q, ""), category, rank, first, shared, relevant, evidence))
    return failures
