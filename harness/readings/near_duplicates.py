"""Duplicate versions: two near-identical documents taking two of a query's top places.

The article's fourth failure: a collection that holds several versions of one document (an old
and a new policy page, a page and its copy) lets one answer crowd the top of a ranking, pushing
out the others. For each query, every pair of documents among its top ``fail_rank`` results (3 by
default, the diagnosis's fail rank) is compared:

Shingles (:func:`shingles`)
    A document's text (title and body, :attr:`corpora.Corpus.full_texts`) is lower-cased and cut
    into words (runs of Unicode letters, digits and ``_``); its shingles are the set of its runs of
    :data:`SHINGLE_SIZE` (2) consecutive words. A text shorter than that has one shingle, all its
    words; an empty text none. Why 2: a version differs from another by a few replaced words (a
    price, a date), and each replaced word inside a text of s shingles changes k shingles on each
    side (k the shingle size), so e of them give Jaccard ``(s - k e) / (s + k e)``, at least 0.9 only
    when ``s >= 19 k e``. With k = 2 one replaced word is tolerated from about 40 words on, two from
    about 80 (k = 3 would need 60 and 115, missing the short versions of a help-centre page); a run
    of two words still keeps word order, so a text and a shuffle of its words are not duplicates.
Near-duplicates
    Two documents whose shingle sets have Jaccard ``|A & B| / |A | B| >= threshold``
    (:data:`JACCARD_THRESHOLD`, 0.9), each with a body (:attr:`corpora.Corpus.texts`, the text
    without its title) of at least :data:`MIN_BODY_WORDS` (20) words. Two empty texts have Jaccard 0
    (nothing shows they are the same); a document the corpus does not hold has no text.
Enough text to tell
    A title alone is no evidence: two records of *different* papers often share one (CACM's title-only
    records of an algorithm and of a later remark on it), and a short text cannot say more. Below
    about 38 shingles a Jaccard of 0.9 tolerates no replaced word at all (see above), so on a short
    text the check could only find exact copies, which different documents share by chance (a title,
    a one-line abstract, "no abstract"). A document whose body has fewer than :data:`MIN_BODY_WORDS`
    words is therefore never half of a pair, whatever its title.

What it can see: copies and versions of a document with a substantial body, a few replaced words
apart (a price, a date), among a query's top places. What it cannot see: title-only or short records
(never flagged, even when they are true copies), versions that differ in more than about one word
in twenty (rewritten, reordered, translated), copies that never meet in one query's top
``fail_rank``, and duplicates that are the same answer in different words.
Exact, at any size
    Only pairs inside one query's top ``fail_rank`` are compared: at most ``fail_rank * (fail_rank - 1)
    / 2`` per query, shingled once per distinct document and intersected as rows of one sparse
    document x shingle matrix. The cost grows with queries x fail_rank^2, not with the corpus, so
    exact Jaccard stays affordable where an all-pairs search of the corpus would need MinHash.

The reading (one module, registered as an add-on is: docs/adding-a-reading.md)
    :func:`compute` gives ``duplicates.csv`` (``system`` and :data:`DUPLICATE_COLUMNS`) from each
    system's run and the collection's texts (nothing when the collection has none); its rows fail
    their queries as ``duplicate versions`` (:data:`DUPLICATE_VERSIONS`, :data:`CHECK`), checked
    before the diagnosis's lexical categories (:mod:`harness.core.diagnosis`). Its record is the
    manifest's ``diagnosis.duplicates`` (queries with duplicate versions per system) and
    ``diagnosis.near_duplicates`` (the shingle size, threshold and minimum body), and its HTML
    section lists the pairs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import sparse

from corpora import Corpus, Run
from corpora.judgments_only import NO_TEXTS
from harness.core.options import FAIL_RANK
from harness.core.readings import FailureCheck, Reading, ReadingInputs, register

# The reports' helpers are imported where a section is rendered, so that computing a comparison loads none.
if TYPE_CHECKING:
    from harness.core.record import CompareRecord
    from harness.report.view import ReportView

__all__ = ["CHECK", "DUPLICATE_COLUMNS", "DUPLICATE_VERSIONS", "JACCARD_THRESHOLD", "MIN_BODY_WORDS", "SHINGLE_SIZE",
           "compute", "html_body", "jaccard_of_pairs", "manifest_entries", "near_duplicates", "shingle_matrix",
           "shingles"]

#: Words per shingle.
SHINGLE_SIZE = 2
#: Jaccard of the shingle sets from which two documents are near-duplicates.
JACCARD_THRESHOLD = 0.9
#: Words a document's body (its text without the title) needs before it can be called a duplicate:
#: about twice a long title, half of the ~40 words from which one replaced word is tolerated.
MIN_BODY_WORDS = 20
#: Columns of :func:`near_duplicates`: one row per near-duplicate pair inside a query's top places.
DUPLICATE_COLUMNS = ["query_id", "doc_a", "doc_b", "rank_a", "rank_b", "jaccard"]
_WORD = re.compile(r"\w+")


def shingles(text: str, size: int = SHINGLE_SIZE) -> set[tuple[str, ...]]:
    """The set of ``size`` consecutive lower-cased words of ``text``.

    >>> sorted(shingles("Refunds are paid, refunds ARE paid"))
    [('are', 'paid'), ('paid', 'refunds'), ('refunds', 'are')]
    >>> shingles("Refunds", 2), shingles("")
    ({('refunds',)}, set())
    """
    words = _WORD.findall(text.lower())
    if len(words) < size:
        return {tuple(words)} if words else set()
    return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}


def shingle_matrix(texts: Sequence[str], size: int = SHINGLE_SIZE) -> sparse.csr_matrix:
    """A binary (texts x distinct shingles) CSR matrix: row i marks the shingles of ``texts[i]``."""
    vocabulary: dict[tuple[str, ...], int] = {}
    indptr = [0]
    indices: list[int] = []
    for text in texts:
        indices.extend(sorted(vocabulary.setdefault(s, len(vocabulary)) for s in shingles(text, size)))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float64)
    return sparse.csr_matrix((data, np.array(indices, dtype=np.int64), np.array(indptr, dtype=np.int64)),
                             shape=(len(texts), len(vocabulary)))


def jaccard_of_pairs(matrix: sparse.csr_matrix, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Exact Jaccard of the shingle sets of rows ``left[i]`` and ``right[i]`` of a binary matrix (0 when both are empty).

    >>> m = shingle_matrix(["a b c d", "a b c e", "x y z"])
    >>> jaccard_of_pairs(m, np.array([0, 0]), np.array([1, 2])).tolist()  # {ab, bc, cd} vs {ab, bc, ce}: 2/4
    [0.5, 0.0]
    """
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    if not len(left):
        return np.empty(0)
    shared = np.asarray(matrix[left].multiply(matrix[right]).sum(axis=1)).ravel()
    sizes = np.diff(matrix.indptr)
    union = sizes[left] + sizes[right] - shared
    return np.divide(shared, union, out=np.zeros(len(left)), where=union > 0)


def near_duplicates(run: Run, corpus: Corpus, query_ids: Sequence[str] | None = None, fail_rank: int = FAIL_RANK,
                    threshold: float = JACCARD_THRESHOLD, shingle_size: int = SHINGLE_SIZE,
                    min_body_words: int = MIN_BODY_WORDS) -> pd.DataFrame:
    """Near-duplicate pairs inside each query's top ``fail_rank`` (:data:`DUPLICATE_COLUMNS`).

    ``query_ids``: the queries to look at, in order (default: the run's). A document whose body has
    fewer than ``min_body_words`` words is in no pair (too little text to tell). Rows by query, then
    by the ranks of the pair (``rank_a < rank_b``, 1-based).
    """
    if fail_rank < 1 or shingle_size < 1 or min_body_words < 0 or not 0.0 < threshold <= 1.0:
        raise ValueError("fail_rank and shingle_size must be >= 1, min_body_words >= 0 and threshold in (0, 1]")
    wanted = list(run.query_ids if query_ids is None else query_ids)
    position = {q: j for j, q in enumerate(run.query_ids)}
    tops: list[tuple[str, list[int]]] = []  # query, run vocabulary indices of its top documents
    for q in wanted:
        j = position.get(q)
        if j is not None:
            start, stop = int(run.offsets[j]), int(run.offsets[j + 1])
            tops.append((q, run.doc_index[start:min(stop, start + fail_rank)].tolist()))
    seen = sorted({d for _, top in tops for d in top})
    row_of = {d: i for i, d in enumerate(seen)}
    if run.doc_ids is corpus.id_array():  # the harness's runs: a run position is a corpus position
        positions: list[int | None] = list(seen)
    else:
        corpus_row = corpus.positions_of(str(run.doc_ids[d]) for d in seen)
        positions = [corpus_row.get(str(run.doc_ids[d])) for d in seen]
    # only these documents' texts are read (corpus.documents_at: a corpus whose texts are elsewhere reads no other)
    held = [j for j in positions if j is not None]
    full, bodies = corpus.documents_at(held)
    text_of = dict(zip(held, full))
    body_of = dict(zip(held, bodies))
    texts = [text_of[j] if j is not None else "" for j in positions]
    enough = {d for d, j in zip(seen, positions) if j is not None and _has_words(body_of[j], min_body_words)}
    matrix = shingle_matrix(texts, shingle_size)
    pairs = [(q, a, b, ra, rb) for q, top in tops for (ra, a), (rb, b) in combinations(enumerate(top, 1), 2)
             if a in enough and b in enough]
    left = np.array([row_of[a] for _, a, _, _, _ in pairs], dtype=np.int64)
    right = np.array([row_of[b] for _, _, b, _, _ in pairs], dtype=np.int64)
    jaccard = jaccard_of_pairs(matrix, left, right)
    rows = [(q, str(run.doc_ids[a]), str(run.doc_ids[b]), ra, rb, float(x))
            for (q, a, b, ra, rb), x in zip(pairs, jaccard) if x >= threshold]
    return pd.DataFrame(rows, columns=DUPLICATE_COLUMNS)


def _has_words(text: str, count: int) -> bool:
    """True when ``text`` holds at least ``count`` words (stops reading at the count)."""
    if count <= 0:
        return True
    for seen, _ in enumerate(_WORD.finditer(text), 1):
        if seen >= count:
            return True
    return False


# ----- the reading: computed, recorded, failing its queries, shown ------------------------------

#: The diagnosis category of a query whose top places hold near-duplicates.
DUPLICATE_VERSIONS = "duplicate versions"


def _evidence(pairs: Sequence[Mapping[str, Any]]) -> str:
    """The text report's line under a failed query: its pairs, on one line however many there are (at
    most fail_rank * (fail_rank - 1) / 2)."""
    return "near-duplicates: " + "; ".join(
        f"{p['doc_a']} (rank {p['rank_a']}) ~ {p['doc_b']} (rank {p['rank_b']}), shingle Jaccard {p['jaccard']:.3f}"
        for p in pairs)


#: How its rows fail their queries (checked first: deduplicating the collection is the fix whatever else is wrong).
CHECK = FailureCheck(
    category=DUPLICATE_VERSIONS,
    meaning="near-duplicate documents take two or more of the top fail-rank places",
    clause={"text": "near-duplicate documents in the top {fail_rank}", "md": "near-duplicates in the top {fail_rank}",
            "html": "when near-duplicate documents take two of its top {fail_rank} places"},
    tally="{count} with duplicate versions in the top {fail_rank}",
    evidence=_evidence,
    unavailable=f"near-duplicate check ({DUPLICATE_VERSIONS}): unavailable ({NO_TEXTS})",
)


def compute(inputs: ReadingInputs) -> dict[str, pd.DataFrame]:
    """Every system's near-duplicate pairs in the top ``fail_rank`` places of each evaluated query, in
    the systems' order (none without the collection's texts: nothing can be compared)."""
    corpus = inputs.dataset.corpus if inputs.dataset is not None else None
    frames = []
    if corpus is not None and corpus.has_texts:
        with inputs.progress.task("near-duplicates"):
            for system in inputs.systems:
                found = near_duplicates(system.run, corpus, inputs.queries.ids, inputs.config.readings.fail_rank)
                found.insert(0, "system", system.label)
                frames.append(found)
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["system", *DUPLICATE_COLUMNS])
    return {"duplicates": frame}


def manifest_entries(record: CompareRecord) -> dict[str, Any]:
    """The manifest's ``diagnosis.duplicates`` (system -> queries with duplicate versions, every system
    listed) and, when the collection has texts, ``diagnosis.near_duplicates`` (how pairs were found)."""
    counts = {s.label: 0 for s in record.systems}
    for system, count in record.table("duplicates").groupby("system", sort=False)["query_id"].nunique().items():
        counts[str(system)] = int(count)
    found = {"shingle_words": SHINGLE_SIZE, "jaccard_threshold": JACCARD_THRESHOLD, "min_body_words": MIN_BODY_WORDS}
    return {"duplicates": counts, **({"near_duplicates": found} if record.dataset.corpus.has_texts else {})}


def html_body(frame: pd.DataFrame, view: ReportView) -> str:
    """The HTML report's section: how pairs are found and the pairs (or why none could be looked for)."""
    from corpora.wording import counted
    from harness.report.html import OPEN_QUERIES
    from harness.report.parts import html_cell, html_details, html_escape, html_table

    diagnosis = view.manifest["diagnosis"]
    if "near_duplicates" not in diagnosis and view.unavailable:  # no texts to compare
        return "".join(f'<p class="note">{html_escape(line)}</p>' for line in view.unavailable
                       if line.startswith("near-duplicate check"))
    settings = diagnosis.get("near_duplicates", {})
    body = settings.get("min_body_words")  # absent in folders written before the minimum existed
    bodies = f", each with a body of at least {body} words" if body else ""
    note = (f'<p class="note">Near-duplicate documents (shingles of {settings.get("shingle_words", 2)} words, Jaccard '
            f"&ge; {settings.get('jaccard_threshold', 0.9)}{bodies}) in a query's top places.</p>")
    if frame.empty:
        return note + '<p class="note">None found.</p>'
    rows = ["<tr>" + "".join([html_cell(r.system), html_cell(r.query_id), html_cell(f"{r.doc_a} (rank {r.rank_a})"),
                              html_cell(f"{r.doc_b} (rank {r.rank_b})"), html_cell(f"{r.jaccard:.3f}", numeric=True)])
            + "</tr>" for r in frame.itertuples(index=False)]
    table = html_table(["system", "query", "document", "near-duplicate", "Jaccard"], rows, numeric_from=4)
    return note + html_details(counted(len(rows), "pair"), table, open_=len(rows) <= OPEN_QUERIES)


register(Reading("duplicates", "duplicates.csv", ("system", "query_id", "doc_a", "doc_b"), ("rank_a", "rank_b"),
                 columns="system, query_id, doc_a, doc_b, rank_a, rank_b, jaccard", compute=compute,
                 record=manifest_entries, record_in="diagnosis", fails=CHECK, render={"html": html_body},
                 title="Duplicate versions", anchor="duplicates", order=80))
