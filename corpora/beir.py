"""BEIR folders: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``, ``qrels/<split>.tsv``.

A text or title must be a JSON string (null reads as empty), an id a string or an integer, a
document's ``metadata`` an object: anything else is an error at its line (see
:func:`corpora.readers.text_field` and :func:`~corpora.readers.require_id`).
"""

from __future__ import annotations

from pathlib import Path

from corpora.errors import InputFileError
from corpora.facets import scalar_facets
from corpora.model import Corpus, Dataset, Queries
from corpora.outline import read_outline_jsonl
from corpora.readers import UniqueIds, document_metadata, read_jsonl, require_id, text_field
from corpora.trec_io import QrelsRules, read_qrels_file


def looks_like_beir(folder: Path) -> bool:
    return (folder / "corpus.jsonl").is_file() and (folder / "queries.jsonl").is_file()


def read_corpus_jsonl(path: Path, name: str, start: int = 0, stop: int | None = None) -> Corpus:
    """The documents of ``corpus.jsonl``; with ``start``/``stop``, only documents ``start:stop``
    (a worker's shard: the other lines are not parsed)."""
    ids: list[str] = []
    texts: list[str] = []
    titles: list[str] = []
    metadata: list[dict] = []
    seen = UniqueIds("document id", fix="give every document a unique id")
    for number, record in read_jsonl(path, start, stop):
        doc_id = require_id(path, number, record)
        seen.add(doc_id, path, number)
        ids.append(doc_id)
        texts.append(text_field(path, number, record, "text", "document"))
        titles.append(text_field(path, number, record, "title", "document"))
        metadata.append(document_metadata(path, number, record))
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
        texts.append(text_field(path, number, record, "text", "query"))
        extra = {k: v for k, v in record.items() if k not in ("_id", "id", "text")}
        if isinstance(extra.get("metadata"), dict) or extra.get("metadata") is None:
            extra.update(extra.pop("metadata", None) or {})
        for key in set(facets) | set(extra):
            facets.setdefault(key, [None] * (len(ids) - 1)).append(extra.get(key))
    scalars, warnings = scalar_facets(facets, str(path))
    return Queries(ids, texts, scalars, source=str(path)), warnings


#: BEIR's ``qrels/<split>.tsv``: ``query-id<TAB>corpus-id<TAB>score`` (TREC's four fields accepted
#: too), its header line optional; the same grade twice is counted, two grades are an error (as in
#: every reader).
QRELS_RULES = QrelsRules(layout="any", separator="tab", header="named")


def load_beir(folder: Path, *, split: str = "test", name: str | None = None, keep_texts: bool = True) -> Dataset:
    """The dataset of a BEIR folder; ``keep_texts=False`` keeps the corpus's ids only
    (:func:`corpora.outline.read_outline_jsonl`: the same content hash, the texts read again on demand)."""
    name = name or folder.name
    corpus = read_corpus_jsonl(folder / "corpus.jsonl", name) if keep_texts else \
        read_outline_jsonl(folder / "corpus.jsonl", name)
    queries, facet_warnings = read_queries_jsonl(folder / "queries.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        available = sorted(p.stem for p in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
        fix = f"choose one of the splits {', '.join(available)} with `split`" if available else \
            "add qrels/<split>.tsv with query-id, corpus-id, score columns"
        raise InputFileError(qrels_path, "judgments file not found", fix=fix)
    judgments = read_qrels_file(qrels_path, QRELS_RULES)
    return Dataset(name, corpus, queries, judgments.qrels, source=str(folder),
                   warnings=[*facet_warnings, *judgments.warnings])
