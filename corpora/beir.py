"""BEIR folders: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``, ``qrels/<split>.tsv``."""

from __future__ import annotations

from pathlib import Path

from corpora.errors import InputFileError
from corpora.facets import scalar_facets
from corpora.model import Corpus, Dataset, Qrels, Queries
from corpora.readers import UniqueIds, parse_grade, read_jsonl, read_text_lines, require_id
from corpora.trec import QrelsBuilder


def looks_like_beir(folder: Path) -> bool:
    return (folder / "corpus.jsonl").is_file() and (folder / "queries.jsonl").is_file()


def read_corpus_jsonl(path: Path, name: str) -> Corpus:
    ids: list[str] = []
    texts: list[str] = []
    titles: list[str] = []
    metadata: list[dict] = []
    seen = UniqueIds("document id", fix="give every document a unique id")
    for number, record in read_jsonl(path):
        doc_id = require_id(path, number, record)
        seen.add(doc_id, path, number)
        ids.append(doc_id)
        texts.append(str(record.get("text") or ""))
        titles.append(str(record.get("title") or ""))
        metadata.append(dict(record.get("metadata") or {}))
    if not ids:
        raise InputFileError(path, "the corpus holds no documents", fix="add one JSON object per document")
    return Corpus(ids, texts, titles, metadata, name=name, source=str(path))


def read_queries_jsonl(path: Path) -> tuple[Queries, list[str]]:
    """Queries and warnings. Every field but the id and the text is a facet, and so is each field of a
    ``metadata`` object (lifted to the top level; it wins over a top-level field of the same name);
    a field holding a list or an object is left out, with a warning (:func:`corpora.facets.scalar_facets`)."""
    ids: list[str] = []
    texts: list[str] = []
    facets: dict[str, list] = {}
    seen = UniqueIds("query id", fix="give every query a unique id", starts_a_line=True)
    for number, record in read_jsonl(path):
        query_id = require_id(path, number, record)
        seen.add(query_id, path, number)
        ids.append(query_id)
        texts.append(str(record.get("text") or ""))
        extra = {k: v for k, v in record.items() if k not in ("_id", "id", "text")}
        if isinstance(extra.get("metadata"), dict) or extra.get("metadata") is None:
            extra.update(extra.pop("metadata", None) or {})
        for key in set(facets) | set(extra):
            facets.setdefault(key, [None] * (len(ids) - 1)).append(extra.get(key))
    scalars, warnings = scalar_facets(facets, str(path))
    return Queries(ids, texts, scalars, source=str(path)), warnings


def read_qrels_tsv(path: Path) -> tuple[Qrels, list[str]]:
    """``query-id<TAB>corpus-id<TAB>score`` with an optional header line; returns qrels and warnings.

    A pair judged twice with two grades is an error (which one would be right?); the same grade
    twice is counted in the warnings.
    """
    builder = QrelsBuilder()
    for number, line in read_text_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        if number == 1 and fields and fields[0].strip().lower() in ("query-id", "query_id", "qid"):
            continue
        if len(fields) == 4:  # TREC qrels: qid iter docid grade
            fields = [fields[0], fields[2], fields[3]]
        if len(fields) != 3:
            raise InputFileError(
                path, f"expected 3 tab-separated fields (query-id, corpus-id, score), got {len(fields)}",
                line=number, fix="write one judgment per line: query-id<TAB>corpus-id<TAB>grade",
            )
        query_id, doc_id, grade = (f.strip() for f in fields)
        builder.add(query_id, doc_id, parse_grade(path, number, grade), path, number)
    return Qrels(builder.judgments, source=str(path)), builder.warnings(str(path))


def load_beir(folder: Path, *, split: str = "test", name: str | None = None) -> Dataset:
    name = name or folder.name
    corpus = read_corpus_jsonl(folder / "corpus.jsonl", name)
    queries, facet_warnings = read_queries_jsonl(folder / "queries.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        available = sorted(p.stem for p in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
        fix = f"choose one of the splits {', '.join(available)} with --split" if available else \
            "add qrels/<split>.tsv with query-id, corpus-id, score columns"
        raise InputFileError(qrels_path, "judgments file not found", fix=fix)
    qrels, warnings = read_qrels_tsv(qrels_path)
    return Dataset(name, corpus, queries, qrels, source=str(folder), warnings=[*facet_warnings, *warnings])
