"""SMART / Glasgow collections (ADI, CISI, MED, Cranfield): ``.I .T .W …`` records.

Files
    Documents ``*.ALL`` (Cranfield: ``cran.all.1400``), queries ``*.QRY`` (``cran.qry``), judgments
    ``*.REL`` (``cranqrel``); ``*.REL.OLD`` and ``*.BLN`` (Boolean queries) are not read.
Records
    ``.I <id>`` starts a record; a marker is a line holding only ``.`` and a capital letter (trailing
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
    The layout is read from the first line: ``qid docid`` or ``qid docid 0 0.000000`` (SMART, every
    listed pair relevant: grade 1), ``qid 0 docid grade`` (TREC, MED.REL) or ``qid docid code``
    (Cranfield). Queries without judgments (36 in CISI) stay in the queries; the harness leaves them
    out of averages and says how many.

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
from corpora.inspection import reconcile
from corpora.model import Corpus, Dataset, Qrels, Queries, normalise_numeric_id
from corpora.readers import UniqueIds, parse_grade, read_text_lines
from corpora.trec import QrelsBuilder

_MARKER = re.compile(r"^\.([A-Z])\s*$")
_ID_MARKER = re.compile(r"^\.I(?:\s+(\S*))?\s*$")
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


def read_records(path: Path) -> list[SmartRecord]:
    """Every record of a SMART file, with the marker rules of the module docstring."""
    records: list[SmartRecord] = []
    seen = UniqueIds("record id", fix="give every record a unique .I id")
    current: SmartRecord | None = None
    letter: str | None = None
    for number, line in read_text_lines(path):
        id_marker = _ID_MARKER.match(line)
        if id_marker:
            identifier = normalise_numeric_id(id_marker.group(1) or "")
            if not identifier:
                raise InputFileError(path, "'.I' marker without a record id", line=number, fix="write '.I <id>'")
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
    records = read_records(path)
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
    records = read_records(path)
    if not records:
        raise InputFileError(path, "no '.I' query found", fix="check the queries file")
    texts = ["\n".join(t for t in (r.text("T", " "), r.text("W")) if t) for r in records]
    return Queries([r.id for r in records], texts, source=str(path))


def read_judgments(path: Path, *, cranfield: bool = False) -> tuple[Qrels, list[str]]:
    """Any of the SMART judgment layouts (see the module docstring); returns qrels and warnings."""
    builder = QrelsBuilder()
    layout: str | None = None
    for number, line in read_text_lines(path):
        fields = line.split()
        if not fields:
            continue
        if layout is None:
            if len(fields) == 4:
                layout = "smart" if "." in fields[3] else "trec"
            elif len(fields) in (2, 3):
                layout = f"{len(fields)}-column"
            else:
                raise InputFileError(path, f"unrecognised judgment line with {len(fields)} fields", line=number,
                                     fix="use 'qid docid', 'qid docid 0 0.000000', 'qid 0 docid grade' or "
                                         "'qid docid code'")
        expected = {"smart": 4, "trec": 4, "2-column": 2, "3-column": 3}[layout]
        if len(fields) != expected:
            raise InputFileError(path, f"expected {expected} fields like the first line ({layout} layout), "
                                 f"got {len(fields)}", line=number)
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
                             fix="keep one documents (.ALL), one queries (.QRY) and one judgments (.REL) file")
    return candidates[0]


def smart_files(folder: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """(documents, queries, judgments) candidates by name: ``*.ALL*``, ``*.QRY``, ``*.REL``/``*qrel``."""
    files = [p for p in sorted(folder.iterdir()) if p.is_file()] if folder.is_dir() else []
    docs = [p for p in files if re.search(r"\.all(\.\d+)?$", p.name, re.I)]
    queries = [p for p in files if re.search(r"\.qry$", p.name, re.I)]
    rels = [p for p in files if re.search(r"(\.rel|qrels?)$", p.name, re.I)]
    return docs, queries, rels


def _starts_with_record(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(256).decode("ascii", errors="replace")
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
    """Load an ADI, CISI, MED or other SMART folder (``split`` is unused: one judgment set)."""
    folder = Path(folder)
    docs, queries, rels = smart_files(folder)
    corpus = read_corpus(_one(folder, "documents (.ALL)", docs), folder.name)
    query_set = read_queries(_one(folder, "queries (.QRY)", queries))
    qrels, warnings = read_judgments(_one(folder, "judgments (.REL)", rels))
    dataset = Dataset(folder.name, corpus, query_set, qrels, source=str(folder), warnings=warnings, format="smart")
    return reconcile(dataset)


def load_cranfield(folder: Path, *, split: str = "test") -> Dataset:
    """Load Cranfield 1400: positional query numbers and Cleverdon codes mapped to grades."""
    folder = Path(folder)
    docs, queries, rels = smart_files(folder)
    corpus = read_corpus(_one(folder, "documents (cran.all.1400)", docs), folder.name)
    original = read_queries(_one(folder, "queries (cran.qry)", queries))
    positions = [str(j) for j in range(1, len(original) + 1)]
    query_set = Queries(positions, original.texts, {"original_id": list(original.ids)}, source=original.source)
    qrels, warnings = read_judgments(_one(folder, "judgments (cranqrel)", rels), cranfield=True)
    dataset = Dataset(folder.name, corpus, query_set, qrels, source=str(folder), warnings=warnings,
                      format="cranfield")
    return reconcile(dataset)
