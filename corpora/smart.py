"""SMART / Glasgow collections (ADI, CISI, MED, Cranfield): ``.I .T .W …`` records.

Files
    Two namings are recognised, as the collections are distributed: the Glasgow one, documents
    ``<NAME>.ALL`` (Cranfield: ``cran.all.1400``), queries ``<NAME>.QRY`` (``cran.qry``), judgments
    ``<NAME>.REL`` (``cranqrel``); and the one of CACM and its copies, ``<name>.all``, ``query.text``
    and ``qrels.text``. Case does not matter. ``*.REL.OLD`` and ``*.BLN`` (Boolean queries) are not
    read. A folder holding two candidates of one kind is an error naming them (never a guess).
Records
    ``.I <id>`` starts a record; a line that starts with ``.I`` but holds more than one id is an error.
    A bare ``.I`` as the last non-blank line of a file (some copies end so) closes the file; anywhere
    else it is an error. A marker is a line holding only ``.`` and a capital letter (trailing
    spaces allowed, ``\\r`` stripped): ``.T`` title, ``.A`` authors, ``.B`` source, ``.W`` abstract,
    ``.X`` citations, ``.K`` keywords, ``.C``, ``.N``. A repeated marker continues its field (CISI's several
    ``.A`` blocks, ADI's two ``.T``, Cranfield docs 576 and 578 with two ``.W``). Once ``.W`` has begun, a
    marker of a field the record already had is a stray line inside the abstract (Cranfield doc 240
    has ``.A`` and ``.B`` there): the marker is dropped and its text stays in the abstract.
    A document's title is ``.T`` and its body ``.W``; ``.A``, ``.B``, ``.K``, ``.C``, ``.N`` go to metadata;
    ``.X`` (citation triples) is not text and is left out. A query's text is its ``.T`` (CISI's
    bibliographic queries have one) followed by its ``.W``. Ids are normalised (``001`` -> ``1``).
    Whitespace is collapsed within each line (MED pads lines to 72 columns).
Judgments
    Every line of one file has the same number of fields, and the layout is decided by the whole file:

    * ``qid docid`` (SMART, every listed pair relevant: grade 1);
    * ``qid docid code`` (Cranfield; elsewhere the third field is the grade);
    * four fields: SMART ``qid docid 0 0.000000`` (ADI, CISI; CACM's ``01 1410  0 0``) when the third
      and fourth fields are zero on every line, every listed pair relevant; TREC ``qid 0 docid grade``
      (MED.REL) when the second field is the same on every line. A file that fits both readings, or
      neither, is an error naming it: the two put the document in different columns, so a guess
      could silently read every judgment wrong.

    Queries without judgments (36 in CISI) stay in the queries; the harness leaves them out of
    averages and says how many.

Cranfield (:func:`load_cranfield`)
    ``cranqrel`` numbers queries 1..225 *by position* in ``cran.qry``, whose own ``.I`` ids are
    ``001, 002, 004, …, 365``. The query ids of the dataset are those positions (``"1"``..``"225"``,
    as ir_datasets does); the ``.I`` id is kept in the ``original_id`` facet. Relevance codes follow
    Cleverdon's scale from ``cranqrel.readme``, where *lower is more relevant*; they are mapped to
    grades where higher is better:

    ====  ===================================================  =====
    code  Cleverdon (``cranqrel.readme``)                      grade
    ====  ===================================================  =====
    1     complete answer to the question                      4
    2     high degree of relevance                             3
    3     useful as background or for methods                  2
    4     minimum interest (e.g. historical)                   1
    -1    undocumented; one per query, seemingly the query's   0
          own source paper
    ====  ===================================================  =====

    So grade = 5 - code for codes 1-4: every listed pair but the ``-1`` one is relevant at the
    default threshold (the usual binary reading of Cranfield), and graded metrics keep all four of
    Cleverdon's levels (one above the TREC 0-3 range: linear-gain nDCG is unaffected by the scale).
    ``-1`` becomes 0, judged but not relevant, since the readme gives it no relevance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from corpora.errors import InputFileError
from corpora.model import Corpus, Dataset, Qrels, Queries, normalise_numeric_id
from corpora.number_grammar import parse_grade, read_score
from corpora.readers import UniqueIds, read_text_lines, refuse_split
from corpora.trec_io import QrelsBuilder

_MARKER = re.compile(r"^\.([A-Z])\s*$")
_ID_MARKER = re.compile(r"^\.I(?:\s+(\S*))?\s*$")
_ID_LINE = re.compile(r"^\.I(\s|$)")  # any line that means to start a record
_METADATA_FIELDS = {"A": "authors", "B": "source", "K": "keywords", "C": "c", "N": "n"}
CRANFIELD_GRADES = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}


@dataclass
class SmartRecord:
    """One ``.I`` record: its id, the line it starts on, and field letter -> text lines."""

    id: str
    line: int
    fields: dict[str, list[str]] = field(default_factory=dict)

    def text(self, letter: str, separator: str = "\n") -> str:
        return separator.join(self.fields.get(letter, []))


def read_records(path: Path, *, what: str = "record id", starts_a_line: bool = False) -> list[SmartRecord]:
    """Every record of a SMART file, with the marker rules of the module docstring.

    ``what`` names the ids in messages; ``starts_a_line`` marks query ids (see :class:`UniqueIds`).
    """
    records: list[SmartRecord] = []
    seen = UniqueIds(what, fix="give every record a unique .I id", starts_a_line=starts_a_line)
    current: SmartRecord | None = None
    letter: str | None = None
    bare_at: int | None = None  # line of a bare '.I': fine only if nothing but blank lines follows
    for number, line in read_text_lines(path):
        if bare_at is not None and line.strip():
            raise InputFileError(path, "'.I' marker without a record id", line=bare_at, fix="write '.I <id>'")
        id_marker = _ID_MARKER.match(line)
        if id_marker is None and _ID_LINE.match(line):
            raise InputFileError(path, f"record marker {line.strip()!r} holds more than one id", line=number,
                                 fix="write one id after '.I', e.g. '.I 12'")
        if id_marker:
            identifier = normalise_numeric_id(id_marker.group(1) or "")
            if not identifier:
                bare_at, current, letter = number, None, None
                continue
            seen.add(identifier, path, number)
            current, letter = SmartRecord(identifier, number), None
            records.append(current)
            continue
        marker = _MARKER.match(line)
        if current is None:
            if line.strip():
                raise InputFileError(path, "text before the first '.I' record marker", line=number,
                                     fix="start every record with a '.I <id>' line")
            continue
        if marker:
            new = marker.group(1)
            stray = letter == "W" and new != "W" and new in current.fields
            if not stray:
                letter = new
                current.fields.setdefault(letter, [])
            continue
        if letter is None:
            if line.strip():
                raise InputFileError(path, f"text in record {current.id} before any field marker (.T, .W, …)",
                                     line=number, fix="put a field marker such as '.W' before the text")
            continue
        cleaned = " ".join(line.split())
        if cleaned:
            current.fields[letter].append(cleaned)
    return records


def read_corpus(path: Path, name: str) -> Corpus:
    records = read_records(path, what="document id")
    if not records:
        raise InputFileError(path, "no '.I' record found: the corpus is empty", fix="check the documents file")
    metadata = []
    for record in records:
        meta = {key: record.text(letter, "; ") for letter, key in _METADATA_FIELDS.items() if letter in record.fields}
        metadata.append(meta)
    return Corpus(
        ids=[r.id for r in records],
        texts=[r.text("W") for r in records],
        titles=[r.text("T", " ") for r in records],
        metadata=metadata,
        name=name,
        source=str(path),
    )


def read_queries(path: Path) -> Queries:
    records = read_records(path, what="query id", starts_a_line=True)
    if not records:
        raise InputFileError(path, "no '.I' query found", fix="check the queries file")
    texts = ["\n".join(t for t in (r.text("T", " "), r.text("W")) if t) for r in records]
    return Queries([r.id for r in records], texts, source=str(path))


def _is_zero(text: str) -> bool:
    """Whether a field is a zero (``0``, ``0.000000``) as the one number grammar reads it."""
    return read_score(text) == 0.0


def _four_field_layout(path: Path, rows: list[tuple[int, list[str]]]) -> str:
    """``"smart"`` (qid docid 0 0) or ``"trec"`` (qid iter docid grade), decided by every line."""
    not_smart = next(((n, f) for n, f in rows if not (_is_zero(f[2]) and _is_zero(f[3]))), None)
    first_iteration = rows[0][1][1]
    not_trec = next(((n, f) for n, f in rows if f[1] != first_iteration), None)
    if not_smart is None and not_trec is None:
        raise InputFileError(
            path, f"the judgment layout is ambiguous: every line fits SMART 'query doc 0 0' (document in field 2) "
            f"and TREC 'query {first_iteration} doc grade' (document in field 3)",
            fix="write the judgments as 'query-id doc-id' pairs (SMART) or as TREC 'query-id 0 doc-id grade' lines")
    if not_trec is not None and not_smart is not None:
        raise InputFileError(
            path, "four fields per line, but neither layout fits: SMART 'query doc 0 0' needs fields 3 and 4 zero "
            f"(line {not_smart[0]} has {' '.join(not_smart[1])!r}); TREC 'query iteration doc grade' needs the "
            f"same iteration on every line (line 1 has {first_iteration!r}, line {not_trec[0]} "
            f"{not_trec[1][1]!r})", line=not_trec[0],
            fix="write 'query-id doc-id 0 0' (SMART) or 'query-id 0 doc-id grade' (TREC) on every line")
    return "smart" if not_smart is None else "trec"


def read_judgments(path: Path, *, cranfield: bool = False) -> tuple[Qrels, list[str]]:
    """Any of the SMART judgment layouts (see the module docstring); returns qrels and warnings."""
    rows = [(number, line.split()) for number, line in read_text_lines(path) if line.strip()]
    builder = QrelsBuilder()
    if not rows:
        return Qrels({}, source=str(path)), []
    width = len(rows[0][1])
    if width not in (2, 3, 4):
        raise InputFileError(path, f"unrecognised judgment line with {width} fields", line=rows[0][0],
                             fix="use 'qid docid', 'qid docid 0 0.000000', 'qid 0 docid grade' or 'qid docid code'")
    for number, fields in rows:
        if len(fields) != width:
            raise InputFileError(path, f"expected {width} fields like the first line, got {len(fields)}",
                                 line=number, fix="write every judgment in the layout of the first line")
    layout = _four_field_layout(path, rows) if width == 4 else f"{width}-column"
    for number, fields in rows:
        if layout == "trec":
            query_id, doc_id, grade = fields[0], fields[2], parse_grade(path, number, fields[3])
        elif layout == "3-column":
            query_id, doc_id, grade = fields[0], fields[1], parse_grade(path, number, fields[2])
        else:
            query_id, doc_id, grade = fields[0], fields[1], 1
        if cranfield:
            if grade not in CRANFIELD_GRADES:
                raise InputFileError(path, f"Cranfield relevance code {grade} is not one of "
                                     f"{', '.join(map(str, CRANFIELD_GRADES))}", line=number)
            grade = CRANFIELD_GRADES[grade]
        builder.add(normalise_numeric_id(query_id), normalise_numeric_id(doc_id), grade, path, number)
    return Qrels(builder.judgments, source=str(path)), builder.warnings(str(path))


# ----- finding the files -------------------------------------------------------------------------
def _one(folder: Path, kind: str, candidates: list[Path]) -> Path:
    if len(candidates) != 1:
        found = ", ".join(p.name for p in candidates) or "none"
        raise InputFileError(folder, f"expected exactly one {kind} file, found {found}",
                             fix="keep one documents (.ALL), one queries (.QRY or query.text) and one judgments "
                                 "(.REL or qrels.text) file")
    return candidates[0]


_DOCUMENT_NAMES = re.compile(r"\.all(\.\d+)?$", re.I)  # ADI.ALL, cacm.all, cran.all.1400
_QUERY_NAMES = re.compile(r"\.qry$|^quer(y|ies)\.te?xt$", re.I)  # CISI.QRY, cran.qry, query.text
_JUDGMENT_NAMES = re.compile(r"\.rel$|qrels?$|^qrels?\.te?xt$", re.I)  # MED.REL, cranqrel, qrels.text


def smart_files(folder: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """(documents, queries, judgments) candidates by name; see "Files" in the module docstring."""
    files = [p for p in sorted(folder.iterdir()) if p.is_file()] if folder.is_dir() else []
    docs = [p for p in files if _DOCUMENT_NAMES.search(p.name)]
    queries = [p for p in files if _QUERY_NAMES.search(p.name)]
    rels = [p for p in files if _JUDGMENT_NAMES.search(p.name)]
    return docs, queries, rels


def _starts_with_record(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(256).decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:
        return False
    first = next((line for line in head.splitlines() if line.strip()), "")
    return _ID_MARKER.match(first.rstrip("\r")) is not None


def looks_like_smart(folder: Path) -> bool:
    docs, queries, rels = smart_files(folder)
    return bool(docs and queries and rels) and _starts_with_record(docs[0])


def looks_like_cranfield(folder: Path) -> bool:
    return looks_like_smart(folder) and any(p.name.lower() == "cranqrel" for p in smart_files(folder)[2])


def load_smart(folder: Path, *, split: str = "test") -> Dataset:
    """Load an ADI, CISI, MED or other SMART folder (one judgment set: a ``split`` other than the
    default is an error)."""
    folder = Path(folder)
    docs, queries, rels = smart_files(folder)
    refuse_split(folder, "smart", split, ", ".join(p.name for p in rels) or "a .REL file")
    corpus = read_corpus(_one(folder, "documents (.ALL)", docs), folder.name)
    query_set = read_queries(_one(folder, "queries (.QRY, query.text)", queries))
    qrels, warnings = read_judgments(_one(folder, "judgments (.REL, qrels.text)", rels))
    return Dataset(folder.name, corpus, query_set, qrels, source=str(folder), warnings=warnings, format="smart")


def load_cranfield(folder: Path, *, split: str = "test") -> Dataset:
    """Load Cranfield 1400: positional query numbers and Cleverdon codes mapped to grades (one
    judgment set: a ``split`` other than the default is an error)."""
    folder = Path(folder)
    docs, queries, rels = smart_files(folder)
    refuse_split(folder, "cranfield", split, ", ".join(p.name for p in rels) or "cranqrel")
    corpus = read_corpus(_one(folder, "documents (cran.all.1400)", docs), folder.name)
    original = read_queries(_one(folder, "queries (cran.qry)", queries))
    positions = [str(j) for j in range(1, len(original) + 1)]
    query_set = Queries(positions, original.texts, {"original_id": list(original.ids)}, source=original.source)
    qrels, warnings = read_judgments(_one(folder, "judgments (cranqrel)", rels), cranfield=True)
    return Dataset(folder.name, corpus, query_set, qrels, source=str(folder), warnings=warnings,
                   format="cranfield")
