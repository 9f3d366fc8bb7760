"""What a loaded dataset holds, and what is wrong with it: the checks behind ``bench corpora``.

Two jobs, both pure functions of a :class:`~corpora.model.Dataset`:

* :func:`reconcile` runs once after every loader. Judgments whose query or document is not in the
  dataset cannot be evaluated. A few are a defect the metrics survive: they are removed, kept in
  ``Dataset.unmatched_judgments`` and counted, with the first ids, in ``Dataset.warnings``. Many
  mean the files do not belong together (another split, another id column, a sample of the
  corpus), and the averages would quietly describe something else, so loading stops with an
  :class:`~corpora.errors.InputFileError` when more than :data:`UNMATCHED_LIMIT` (5%) of the
  judgments are unmatched, or when any query of the queries file loses every relevant judgment
  (it would silently drop out of the averages). ``allow_unmatched_judgments=True``
  (``--allow-unmatched-judgments``) accepts that and keeps the warnings. Every real collection in
  the test data has no unmatched judgment at all. When *no* judgment is left, or the corpus is
  empty, or no query has a relevant judgment, the data is unusable whatever the flag.
* :func:`describe` counts documents, queries, judgments, grades, empty texts, queries without a
  relevant judgment (which the harness excludes from averages), and the unmatched judgments;
  :func:`summary_line` is the one-line version ``bench compare`` prints before it runs, and
  :func:`report_lines` the full table of ``bench corpora show``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from corpora.errors import InputFileError
from corpora.model import Dataset, Qrels
from corpora.wording import counted

#: Grade from which a judgment counts as relevant in these checks (the harness default).
REL_THRESHOLD = 1
#: Largest share of a judgments file that may name unknown ids before loading stops (see above).
UNMATCHED_LIMIT = 0.05
_SHOWN = 5  # ids quoted in a message before "and N more"


def quote_ids(ids: list[str], total: int | None = None) -> str:
    """Up to five of ``ids``, quoted, and how many more (``total``: the count, when ``ids`` holds
    only the first): how a message names the ids it is about.

    >>> quote_ids(["a", "b", "c", "d", "e", "f"])
    "'a', 'b', 'c', 'd', 'e' and 1 more"
    """
    total = len(ids) if total is None else total
    shown = ", ".join(repr(i) for i in ids[:_SHOWN])
    return shown + (f" and {total - _SHOWN} more" if total > _SHOWN else "")


def _name_s(count: int) -> str:
    return "names" if count == 1 else "name"


def _share(part: int, whole: int) -> str:
    return f"{part:,} of {counted(whole, 'judgment', spec=',')} ({100 * part / whole:.1f}%)"


def reconcile(dataset: Dataset, *, allow_unmatched_judgments: bool = False) -> Dataset:
    """Remove judgments that name an unknown query or document, counting them in the warnings.

    Raises :class:`InputFileError` when the corpus is empty, when every judgment is unmatched, or
    when no query has a relevant judgment; and, unless ``allow_unmatched_judgments``, when more than
    :data:`UNMATCHED_LIMIT` of the judgments are unmatched or a query of the queries file loses all
    of its relevant judgments. Idempotent: a second call finds nothing to remove.
    """
    if len(dataset.corpus) == 0:
        raise InputFileError(dataset.corpus.source, "the corpus holds no documents",
                             fix="check that the documents file is the right one and not empty")
    doc_ids = set(dataset.corpus.ids)
    query_ids = set(dataset.queries.ids)
    kept: dict[str, dict[str, int]] = {}
    unknown_query: list[tuple[str, str, int]] = []
    unknown_doc: list[tuple[str, str, int]] = []
    for query_id, docs in dataset.qrels.items():
        for doc_id, grade in docs.items():
            if query_id not in query_ids:
                unknown_query.append((query_id, doc_id, grade))
            elif doc_id not in doc_ids:
                unknown_doc.append((query_id, doc_id, grade))
            else:
                kept.setdefault(query_id, {})[doc_id] = grade
    source = dataset.qrels.source
    unmatched = len(unknown_query) + len(unknown_doc)
    detail = []
    if unknown_doc:
        detail.append(f"{len(unknown_doc):,} {_name_s(len(unknown_doc))} document ids not in the corpus "
                      f"({quote_ids(sorted({d for _, d, _ in unknown_doc}))}; the corpus has ids like "
                      f"{quote_ids(dataset.corpus.ids[:3])})")
    if unknown_query:
        detail.append(f"{len(unknown_query):,} {_name_s(len(unknown_query))} query ids not in the queries "
                      f"({quote_ids(sorted({q for q, _, _ in unknown_query}))}; the queries have ids like "
                      f"{quote_ids(dataset.queries.ids[:3])})")
    if not kept:
        if unmatched == 0:
            raise InputFileError(source, "the judgments file holds no judgments",
                                 fix="add lines of query id, doc id and grade")
        raise InputFileError(source, f"none of the {counted(unmatched, 'judgment')} can be used: " + "; ".join(detail),
                             fix="make the judgments use the same ids as the documents and queries files")
    if not unmatched:
        return _require_relevant(dataset)
    total = unmatched + sum(len(docs) for docs in kept.values())
    lost = [q for q, docs in dataset.qrels.items()
            if q in query_ids and any(g >= REL_THRESHOLD for g in docs.values())
            and not any(g >= REL_THRESHOLD for g in kept.get(q, {}).values())]
    if lost:
        detail.append(f"{counted(len(lost), 'query loses', 'queries lose', spec=',')} every relevant "
                      f"judgment and would leave the averages ({quote_ids(lost)})")
    too_many = unmatched > UNMATCHED_LIMIT * total
    if not allow_unmatched_judgments and (too_many or lost):
        why = (f"more than the {UNMATCHED_LIMIT:.0%} that is skipped with a warning" if too_many
               else "and skipping them would drop a query from the averages")
        raise InputFileError(
            source, f"{_share(unmatched, total)} cannot be matched, {why}: {'; '.join(detail)}",
            fix="check that the documents, queries and judgments files belong together (the same ids, the same "
                "split), or pass `allow_unmatched_judgments=True` to skip them and evaluate the rest")
    dataset.qrels = Qrels(kept, source=source)
    dataset.unmatched_judgments = [*dataset.unmatched_judgments, *unknown_query, *unknown_doc]
    dataset.warnings.append(f"{source}: skipped {_share(unmatched, total)} that cannot be matched: "
                            + "; ".join(detail))
    return _require_relevant(dataset)


def _require_relevant(dataset: Dataset) -> Dataset:
    if not dataset.qrels.queries_with_relevant(REL_THRESHOLD):
        raise InputFileError(dataset.qrels.source, f"no query has a relevant judgment (grade >= {REL_THRESHOLD}), "
                             "so no metric can be computed", fix="mark relevant documents with a grade of 1 or more")
    return dataset


@dataclass(frozen=True)
class DatasetStats:
    """Counts behind ``bench corpora show``; every list holds ids in dataset order."""

    name: str
    format: str
    source: str
    n_documents: int
    empty_documents: list[str]
    n_queries: int
    empty_queries: list[str]
    n_judgments: int
    judged_queries: int
    grade_histogram: dict[int, int]
    evaluated_queries: list[str]  # at least one judgment with grade >= REL_THRESHOLD
    unevaluated_queries: list[str]  # in the queries, no relevant judgment: excluded from averages
    unknown_document_judgments: int
    unknown_documents: list[str]
    unknown_query_judgments: int
    unknown_queries: list[str]
    facets: list[str]
    pooled_queries: int
    pool_sizes: tuple[int, int] | None  # (smallest, largest) candidate pool
    warnings: list[str] = field(default_factory=list)


def describe(dataset: Dataset) -> DatasetStats:
    """Count everything ``show``/``validate`` report; pure, no I/O."""
    corpus, queries, qrels = dataset.corpus, dataset.queries, dataset.qrels
    relevant = set(qrels.queries_with_relevant(REL_THRESHOLD))
    known_queries = set(queries.ids)
    # only the unmatched judgments are looked up: a million ids' set is not made for none
    doc_ids = set(corpus.ids) if dataset.unmatched_judgments else set()
    unknown_query = [(q, d) for q, d, _ in dataset.unmatched_judgments if q not in known_queries]
    unknown_doc = [(q, d) for q, d, _ in dataset.unmatched_judgments if q in known_queries and d not in doc_ids]
    histogram = Counter(g for docs in qrels.values() for g in docs.values())
    pools = dataset.candidates or {}
    sizes = [len(v) for v in pools.values()]
    return DatasetStats(
        name=dataset.name,
        format=dataset.format,
        source=dataset.source,
        n_documents=len(corpus),
        empty_documents=corpus.blank_documents(),
        n_queries=len(queries),
        empty_queries=[q for q, t in zip(queries.ids, queries.texts) if not t.strip()],
        n_judgments=qrels.n_judgments(),
        judged_queries=sum(1 for docs in qrels.values() if docs),
        grade_histogram=dict(sorted(histogram.items())),
        evaluated_queries=[q for q in queries.ids if q in relevant],
        unevaluated_queries=[q for q in queries.ids if q not in relevant],
        unknown_document_judgments=len(unknown_doc),
        unknown_documents=sorted({d for _, d in unknown_doc}),
        unknown_query_judgments=len(unknown_query),
        unknown_queries=sorted({q for q, _ in unknown_query}),
        facets=list(queries.facets),
        pooled_queries=len(pools),
        pool_sizes=(min(sizes), max(sizes)) if sizes else None,
        warnings=list(dataset.warnings),
    )


def _histogram(grades: dict[int, int]) -> str:
    return " ".join(f"{g}:{n:,}" for g, n in grades.items()) or "none"


def summary_line(dataset: Dataset) -> str:
    """One line: what ``bench compare`` will evaluate, and what it leaves out.

    >>> from corpora.model import Corpus, Queries
    >>> ds = Dataset("toy", Corpus(["d1", "d2"], ["x", ""]), Queries(["q1", "q2"], ["x", "y"]),
    ...              Qrels({"q1": {"d1": 2, "d2": 0}}), source="<memory>")
    >>> summary_line(ds)
    'toy: 2 documents (1 empty), 2 queries, 2 judgments (grades 0:1 2:1); 1 query evaluated, 1 without a relevant judgment excluded from averages'
    """
    s = describe(dataset)
    empty = f" ({len(s.empty_documents):,} empty)" if s.empty_documents else ""
    if not dataset.corpus.has_texts:  # judgments only (corpora.judgments_only): ids, no texts
        empty = " (judged or ranked by a run; no texts)"
    line = (f"{s.name}: {counted(s.n_documents, 'document', spec=',')}{empty}, "
            f"{counted(s.n_queries, 'query', spec=',')}, "
            f"{counted(s.n_judgments, 'judgment', spec=',')} (grades {_histogram(s.grade_histogram)}); "
            f"{counted(len(s.evaluated_queries), 'query', spec=',')} evaluated, "
            f"{len(s.unevaluated_queries):,} without a relevant judgment excluded from averages")
    skipped = s.unknown_document_judgments + s.unknown_query_judgments
    if skipped:
        line += f"; {counted(skipped, 'judgment', spec=',')} of unknown ids skipped"
    if s.pooled_queries:
        line += f"; per-query candidate pools of {s.pool_sizes[0]}-{s.pool_sizes[1]} docs"
    return line


def report_lines(stats: DatasetStats) -> list[str]:
    """The table ``bench corpora show`` prints, one string per line."""
    def row(label: str, value: str) -> str:
        return f"  {label:<30}{value}"

    lines = [f"{stats.name} ({stats.format or 'unknown format'}) from {stats.source}"]
    lines.append(row("documents", f"{stats.n_documents:,}"))
    lines.append(row("empty documents", f"{len(stats.empty_documents):,}"
                     + (f" ({quote_ids(stats.empty_documents)})" if stats.empty_documents else "")))
    lines.append(row("queries", f"{stats.n_queries:,}"))
    if stats.empty_queries:
        lines.append(row("empty queries", f"{len(stats.empty_queries):,} ({quote_ids(stats.empty_queries)})"))
    if stats.facets:
        lines.append(row("query facets", ", ".join(stats.facets)))
    lines.append(row("judgments", f"{stats.n_judgments:,} over {counted(stats.judged_queries, 'query', spec=',')}"))
    lines.append(row("grade histogram", _histogram(stats.grade_histogram)))
    lines.append(row(f"evaluated (grade >= {REL_THRESHOLD})", counted(len(stats.evaluated_queries), "query", spec=",")))
    excluded = stats.unevaluated_queries
    lines.append(row("no relevant judgment", f"{counted(len(excluded), 'query', spec=',')}, excluded from averages"
                     + (f" ({quote_ids(excluded)})" if excluded else "")))
    lines.append(row("judgments of unknown docs", f"{stats.unknown_document_judgments:,}"
                     + (f" ({quote_ids(stats.unknown_documents)})" if stats.unknown_documents else "")))
    lines.append(row("judgments of unknown queries", f"{stats.unknown_query_judgments:,}"
                     + (f" ({quote_ids(stats.unknown_queries)})" if stats.unknown_queries else "")))
    lines.append(row("duplicate ids", "none (a duplicate document or query id stops loading)"))
    if stats.pool_sizes:
        lines.append(row("candidate pools", f"{counted(stats.pooled_queries, 'query', spec=',')}, "
                         f"{stats.pool_sizes[0]:,}-{counted(stats.pool_sizes[1], 'document', spec=',')} each"))
    lines.append(row("warnings", f"{len(stats.warnings):,}"))
    lines.extend(f"    - {w}" for w in stats.warnings)
    return lines

