"""A user's own export: documents and queries as JSON Lines or CSV, judgments as a TSV.

Files (the first name found of each kind is used)
    documents  ``corpus.jsonl``, ``corpus.csv``, ``documents.jsonl``, ``documents.csv``, ``docs.jsonl``, ``docs.csv``
    queries    ``queries.jsonl``, ``queries.csv``
    judgments  ``qrels.tsv``, ``qrels.txt``, ``qrels.csv``, ``qrels``, or ``qrels/<split>.tsv`` (a split
               other than the default, ``test``, reads ``qrels/<split>.tsv`` and is an error when
               that file is missing, never read as the one top-level file)
Records
    JSON Lines: one object per line. CSV: a header row, comma separated, RFC 4180 quoting, read
    strictly: a quote that is never closed, or text after a closing quote, is an error at the line
    where the record starts (lenient reading would glue the rest of the file into one value). Each
    record needs an id (``id`` or ``_id``) and a text (``text``, or ``contents`` as Pyserini writes
    it); documents may have a ``title`` (indexed before the text). A JSON text or title must be a
    string (or null, read as empty): an object, an array or a number is an error at its line, not
    indexed as its Python spelling. Any other field is kept: as
    document metadata, or as a query facet (e.g. ``type``, ``popularity``; a JSON field holding a list
    or an object is not a facet and is left out with a warning, see :mod:`corpora.facets`; CSV cells
    stay text). Ids are strings, kept exactly as written (``DOC-17``, ``007``); a JSON integer id
    reads as its digits, a fraction or an object is an error.
Judgments
    ``query-id<TAB>doc-id<TAB>grade`` (a header line allowed; a file without TABs is split on
    whitespace, a ``.csv`` on commas), or TREC's ``qid iter docid grade``. Integer grades: 0 not
    relevant, 1 marginal, 2 relevant, 3 perfect; negative = judged, never relevant.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from corpora.errors import InputFileError
from corpora.facets import scalar_facets
from corpora.model import Corpus, Dataset, Queries
from corpora.readers import DEFAULT_SPLIT, UniqueIds, csv_rows, read_jsonl, refuse_split, require_id, text_field
from corpora.trec_io import QrelsRules, read_qrels_file

DOCUMENT_FILES = ("corpus.jsonl", "corpus.csv", "documents.jsonl", "documents.csv", "docs.jsonl", "docs.csv")
QUERY_FILES = ("queries.jsonl", "queries.csv")
QRELS_FILES = ("qrels.tsv", "qrels.txt", "qrels.csv", "qrels")
ID_KEYS = ("id", "_id")
TEXT_KEYS = ("text", "contents")


def _first(folder: Path, names: tuple[str, ...]) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_file()), None)


def qrels_path(folder: Path, split: str = DEFAULT_SPLIT) -> Path | None:
    """The judgments file: a top-level ``qrels*`` file, else ``qrels/<split>.tsv``; for a split other
    than the default, ``qrels/<split>.tsv`` first."""
    in_folder = folder / "qrels" / f"{split}.tsv"
    if split != DEFAULT_SPLIT and in_folder.is_file():
        return in_folder
    return _first(folder, QRELS_FILES) or (in_folder if in_folder.is_file() else None)


def _splits(folder: Path) -> list[str]:
    return sorted(p.stem for p in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []


def has_top_level_qrels(folder: Path) -> bool:
    return _first(folder, QRELS_FILES) is not None


def looks_like_tabular(folder: Path) -> bool:
    return folder.is_dir() and _first(folder, DOCUMENT_FILES) is not None and \
        _first(folder, QUERY_FILES) is not None and qrels_path(folder) is not None


def iter_records(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) from a JSON Lines or CSV file (by extension); a CSV record's line is
    the one it starts on."""
    if path.suffix.lower() != ".csv":
        yield from read_jsonl(path)
        return
    rows = csv_rows(path)
    header_line, header = next(((n, row) for n, row in rows if row), (1, []))
    if not any(k in header for k in ID_KEYS) or not any(k in header for k in TEXT_KEYS):
        raise InputFileError(path, f"the header row ({', '.join(header) or 'empty'}) needs an 'id' and a 'text' "
                             "column", line=header_line, fix="name the columns id,text (and optionally title)")
    for number, row in rows:
        if len(row) > len(header):
            raise InputFileError(path, f"{len(row)} fields but the header has {len(header)}", line=number,
                                 fix="quote values that contain commas")
        if any(v.strip() for v in row):
            values: list[str | None] = [*row, *[None] * (len(header) - len(row))]  # short rows: as csv.DictReader
            yield number, {k: v for k, v in zip(header, values) if k}


def _text(path: Path, number: int, record: dict, what: str) -> str:
    for key in TEXT_KEYS:
        if key in record:
            return text_field(path, number, record, key, what)
    raise InputFileError(path, f"record has no 'text' field (it has {', '.join(map(repr, record)) or 'none'})",
                         line=number, fix="put the text in a field named 'text'")


def read_documents(path: Path, name: str) -> Corpus:
    ids: list[str] = []
    texts: list[str] = []
    titles: list[str] = []
    metadata: list[dict] = []
    seen = UniqueIds("document id", fix="give every document a unique id")
    for number, record in iter_records(path):
        doc_id = require_id(path, number, record, ID_KEYS)
        seen.add(doc_id, path, number)
        ids.append(doc_id)
        texts.append(_text(path, number, record, "document"))
        titles.append(text_field(path, number, record, "title", "document"))
        metadata.append({k: v for k, v in record.items() if k not in (*ID_KEYS, *TEXT_KEYS, "title")})
    if not ids:
        raise InputFileError(path, "the corpus holds no documents", fix="add one record per document")
    return Corpus(ids, texts, titles, metadata, name=name, source=str(path))


def read_queries(path: Path) -> tuple[Queries, list[str]]:
    """Queries and warnings; every field but the id and the text is a facet, except one holding a list
    or an object (JSON Lines), which is left out with a warning (:func:`corpora.facets.scalar_facets`)."""
    ids: list[str] = []
    texts: list[str] = []
    facets: dict[str, list] = {}
    seen = UniqueIds("query id", fix="give every query a unique id", starts_a_line=True)
    for number, record in iter_records(path):
        query_id = require_id(path, number, record, ID_KEYS)
        seen.add(query_id, path, number)
        ids.append(query_id)
        texts.append(_text(path, number, record, "query"))
        extra = {k: v for k, v in record.items() if k not in (*ID_KEYS, *TEXT_KEYS)}
        for key in set(facets) | set(extra):
            facets.setdefault(key, [None] * (len(ids) - 1)).append(extra.get(key))
    if not ids:
        raise InputFileError(path, "the file holds no queries", fix="add one record per query")
    scalars, warnings = scalar_facets(facets, str(path))
    return Queries(ids, texts, scalars, source=str(path)), warnings


def qrels_rules(path: Path) -> QrelsRules:
    """A tabular export's judgments: ``query-id doc-id grade`` (TREC's four fields accepted too),
    comma-separated in a ``.csv`` file, else tab-separated (or whitespace), a header line allowed;
    the same grade twice is counted, two grades are an error (as in every reader)."""
    return QrelsRules(layout="any", separator="comma" if path.suffix.lower() == ".csv" else "tab",
                      header="non-numeric")


def load_tabular(folder: Path, *, split: str = "test") -> Dataset:
    """Load a folder of documents, queries and judgments (see the module docstring)."""
    folder = Path(folder)
    docs, queries, judgments = _first(folder, DOCUMENT_FILES), _first(folder, QUERY_FILES), qrels_path(folder, split)
    if split != DEFAULT_SPLIT and (judgments is None or judgments.parent == folder):
        splits = _splits(folder)
        if judgments is not None and not splits:
            refuse_split(folder, "tabular", split, judgments.name)
        raise InputFileError(folder / "qrels" / f"{split}.tsv", f"judgments of split {split!r} not found",
                             fix=f"choose one of the splits {', '.join(splits)} with `split`" if splits else
                             "add qrels/<split>.tsv, or leave out `split`")
    for found, names in ((docs, DOCUMENT_FILES), (queries, QUERY_FILES), (judgments, QRELS_FILES)):
        if found is None:
            raise InputFileError(folder, f"none of {', '.join(names)} found",
                                 fix="name the files as listed, or force another layout with `format`")
    corpus = read_documents(docs, folder.name)
    query_set, facet_warnings = read_queries(queries)
    read = read_qrels_file(judgments, qrels_rules(judgments))
    dataset = Dataset(folder.name, corpus, query_set, read.qrels, source=str(folder),
                      warnings=[*facet_warnings, *read.warnings], format="tabular")
    return dataset
