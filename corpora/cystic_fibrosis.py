"""The Cystic Fibrosis collection (Shaw, Wood, Wood & Tibbo 1991): ``cf74``..``cf79`` and ``cfquery``.

Files
    Records of two-letter fields: the tag in columns 1-2, a space, the value; continuation lines are
    indented (a few are not, e.g. ``a.m.`` in cf79, so any line that does not start with a known tag is
    a continuation). Documents start at ``PN``; ``RN`` is the id the judgments use. Queries have ``QN``
    (number), ``QU`` (text), ``NR`` (number of judged documents) and ``RD`` (pairs of doc number and a
    four-digit score string).
Documents
    Title ``TI``; body ``AB`` (abstract) or, for 455 records without one, ``EX`` (an extract). ``AU``,
    ``SO``, ``MJ``, ``MN``, ``PN`` and ``AN`` go to metadata; ``RF``/``CT`` (references, citations) are not
    text. Ids are normalised: ``RN 00001`` and ``RD`` entry ``139`` are both plain numbers (``"1"``,
    ``"139"``), as are the query numbers (``QN 00001`` -> ``"1"``).
Grades: the four judges combined by their sum
    Each ``RD`` pair carries four 0-2 scores (0 not, 1 marginally, 2 highly relevant), one per judge
    (REW, REW's colleagues, REW's post-doc, JBW). The grade is their **sum, 0-8**, because:

    * every judge counts the same (the collection names no judge as the reference), and the sum is
      proportional to their mean, so linear-gain nDCG on the sum equals nDCG on the mean judge;
    * agreement raises the grade: ``2222`` (8) outranks ``0002`` (2) and ``0001`` (1);
    * every listed pair has at least one non-zero score, so at the default threshold (grade >= 1)
      the relevant set is exactly the listed set - the one ``NR`` counts and the published binary
      results on CF use; nothing is lost and no judge's threshold is invented.

    Grades above 3 lie outside the TREC 0-3 scale; a stricter binary reading is one
    ``--rel-threshold`` away (e.g. 3: at least "highly" from one judge plus a second vote). An
    ``NR`` count that disagrees with the ``RD`` list is reported in the warnings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from corpora.errors import InputFileError
from corpora.model import Corpus, Dataset, Queries, Qrels, normalise_numeric_id
from corpora.readers import UniqueIds, read_text_lines, refuse_split
from corpora.trec_io import QrelsBuilder
from corpora.wording import counted

DOCUMENT_TAGS = frozenset("PN RN AN AU TI SO MJ MN AB EX RF CT".split())
QUERY_TAGS = frozenset("QN QU NR RD".split())
_METADATA = {"PN": "paper_number", "AN": "medline_accession", "AU": "authors", "SO": "source",
             "MJ": "major_subjects", "MN": "minor_subjects"}
_DOC_FILE = re.compile(r"^cf\d\d$", re.I)
_SCORES = re.compile(r"^[012]{4}$")

Record = dict[str, list[tuple[int, str]]]  # tag -> (line, text) for each line of the field


def iter_records(path: Path, tags: frozenset[str], start: str) -> Iterator[tuple[int, Record]]:
    """(first line, record) for each record; a record begins at its ``start`` tag."""
    record: Record = {}
    first = 0
    tag: str | None = None
    for number, line in read_text_lines(path):
        head = line[:2]
        if head in tags and (len(line) == 2 or line[2] == " "):
            if head == start:
                if record:
                    yield first, record
                record, first = {}, number
            elif not record:
                raise InputFileError(path, f"field {head} before the first {start} record start", line=number,
                                     fix=f"start every record with a {start} line")
            tag = head
            record.setdefault(tag, []).append((number, line[3:].strip()))
        elif line.strip():
            if tag is None:
                raise InputFileError(path, f"text before the first {start} record start", line=number,
                                     fix=f"start every record with a {start} line")
            record[tag].append((number, line.strip()))
    if record:
        yield first, record


def _text(record: Record, tag: str) -> str:
    return " ".join(t for _, t in record.get(tag, []) if t)


def _require_id(path: Path, record: Record, tag: str, first: int) -> str:
    value = normalise_numeric_id(_text(record, tag))
    if not value:
        raise InputFileError(path, f"record has no {tag} number", line=first, fix=f"add a '{tag} <number>' line")
    return value


def read_documents(paths: list[Path], name: str) -> Corpus:
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    metadata: list[dict] = []
    seen = UniqueIds("record number RN", fix="give every record a unique RN")
    for path in paths:
        for first, record in iter_records(path, DOCUMENT_TAGS, "PN"):
            doc_id = _require_id(path, record, "RN", first)
            seen.add(doc_id, path, first)
            ids.append(doc_id)
            titles.append(_text(record, "TI"))
            texts.append(_text(record, "AB") or _text(record, "EX"))
            metadata.append({key: _text(record, tag) for tag, key in _METADATA.items() if tag in record})
    if not ids:
        raise InputFileError(paths[0] if paths else "cf74", "no document record found",
                             fix="check the cf74..cf79 files")
    return Corpus(ids, texts, titles, metadata, name=name, source=", ".join(str(p) for p in paths))


def read_queries(path: Path) -> tuple[Queries, Qrels, list[str]]:
    """Queries, their combined-grade judgments (sum of the four judges) and warnings."""
    ids: list[str] = []
    texts: list[str] = []
    builder = QrelsBuilder()
    mismatched: list[str] = []
    seen = UniqueIds("query number QN", fix="give every query a unique QN", starts_a_line=True)
    for first, record in iter_records(path, QUERY_TAGS, "QN"):
        query_id = _require_id(path, record, "QN", first)
        seen.add(query_id, path, first)
        ids.append(query_id)
        texts.append(_text(record, "QU"))
        listed = 0
        for number, line in record.get("RD", []):
            tokens = line.split()
            if len(tokens) % 2:
                raise InputFileError(path, "RD entries come in pairs of document number and 4-digit score",
                                     line=number, fix="write pairs such as '139 1222'")
            for doc, scores in zip(tokens[::2], tokens[1::2]):
                if not doc.isdigit() or not _SCORES.match(scores):
                    raise InputFileError(path, f"RD entry {doc} {scores!r} is not a document number and four "
                                         "0-2 scores", line=number)
                builder.add(query_id, normalise_numeric_id(doc), sum(int(s) for s in scores), path, number)
                listed += 1
        expected = _text(record, "NR")
        if expected and expected.isdigit() and int(expected) != listed:
            mismatched.append(f"{query_id} (NR {int(expected)}, listed {listed})")
    if not ids:
        raise InputFileError(path, "no QN query record found", fix="check the cfquery file")
    warnings = builder.warnings(str(path))
    if mismatched:
        warnings.append(f"{path}: {counted(len(mismatched), 'query lists', 'queries list')} a number of documents "
                        "other than their NR: "
                        + ", ".join(mismatched[:5]))
    return Queries(ids, texts, source=str(path)), Qrels(builder.judgments, source=str(path)), warnings


def _files(folder: Path) -> tuple[list[Path], Path]:
    return (sorted(p for p in folder.iterdir() if p.is_file() and _DOC_FILE.match(p.name)),
            folder / "cfquery")


def looks_like_cystic_fibrosis(folder: Path) -> bool:
    if not folder.is_dir():
        return False
    docs, queries = _files(folder)
    return bool(docs) and queries.is_file()


def load_cystic_fibrosis(folder: Path, *, split: str = "test") -> Dataset:
    """Load the CF folder (one judgment set: a ``split`` other than the default is an error). Grades:
    see the module docstring."""
    folder = Path(folder)
    refuse_split(folder, "cystic_fibrosis", split, "the judgments in cfquery")
    docs, query_file = _files(folder)
    if not docs:
        raise InputFileError(folder, "no cf74..cf79 document files found", fix="add the cfNN document files")
    corpus = read_documents(docs, folder.name)
    queries, qrels, warnings = read_queries(query_file)
    dataset = Dataset(folder.name, corpus, queries, qrels, source=str(folder), warnings=warnings,
                      format="cystic_fibrosis")
    return dataset
