"""TREC collections: SGML documents, ``<top>`` topics and ``qid iter docid grade`` qrels.

A TREC folder is recognised by what its files hold, not by their names: every file (up to three
folder levels deep, ``.gz`` read transparently; ``README``/``SOURCE``/``LICENSE`` and ``*.md`` skipped)
whose head contains ``<DOC>`` is a documents file, one containing ``<top>`` a topics file, one whose
name contains ``qrel`` or whose first line has four fields ending in an integer a qrels file.
The scan lists at most :data:`MAX_SCANNED_ENTRIES` files and folders, and a file or folder it
cannot read is an error naming it: ``/`` or a home folder is refused, never read for minutes.

Documents
    ``<DOC> … </DOC>`` blocks. ``<DOCNO>`` is the id (kept exactly as written). The title is the
    text of ``<TITLE>`` (or ``<HEADLINE>``, ``<HL>``, ``<HEAD>``, ``<DOCTITLE>``); the body is the
    text of everything else in the block with the tags removed (``<TEXT>`` or no tag at all, as in
    Vaswani). ``<DOCID>`` and ``<DOCHDR>`` hold no prose and are left out. HTML entities are decoded.
Topics
    ``<top>`` blocks with ``<num>``, ``<title>`` and optionally ``<desc>``, ``<narr>`` or any other tag,
    closing tags present or not, labels such as ``Number:``, ``Topic:`` or ``Description:`` removed. The
    query text is the title (the description when there is no title); every other field is kept as
    a query facet (``description``, ``narrative``, …). Topic numbers are normalised (``051`` -> ``51``)
    in topics and qrels alike, since TREC topic files pad them and qrels do not.
Qrels
    ``qid iter docid grade`` (whitespace separated; ``iter`` ignored; ``qid docid grade`` and a
    header line accepted), read by :func:`corpora.trec_io.read_qrels_file` with :data:`QRELS_RULES`.
    Lines starting with ``#`` are comments. The same pair twice with the same grade is counted in
    the warnings; with different grades it is an error. When several qrels files are found, those whose name contains ``split``
    are used if any, otherwise all of them are merged (and the warnings say so). A split other
    than the default (``test``) must be in some qrels file's name: otherwise it is an error, never
    read as all the judgments.
"""

from __future__ import annotations

import gzip
import html
import itertools
import os
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

from corpora.errors import InputFileError
from corpora.model import Corpus, Dataset, Queries, normalise_numeric_id
from corpora.input_files import decode_utf8, read_input_bytes
from corpora.readers import DEFAULT_SPLIT, UniqueIds
from corpora.trec_io import QrelsRules, read_qrels_file

_SKIP_NAMES = re.compile(r"^(readme|source|license|licence|copying)(\..*)?$|\.md$", re.I)
_DOC_TAG = re.compile(r"<(/?)DOC>", re.I)
_DOCNO = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.I | re.S)
_TITLE = re.compile(r"<(TITLE|HEADLINE|HL|HEAD|DOCTITLE)>(.*?)</\1>", re.I | re.S)
_DROPPED = re.compile(r"<(DOCNO|DOCID|DOCHDR)>.*?</\1>", re.I | re.S)
_ANY_TAG = re.compile(r"<[^<>]{1,80}>")
_TOP_BLOCK = re.compile(r"<top>(.*?)</top>", re.I | re.S)
_TOPIC_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9_-]*)>")
_TOPIC_LABEL = re.compile(
    r"^(number|topic|title|description|narrative|domain|summary|concept\(s\)|definition\(s\)|factor\(s\))\s*:\s*",
    re.I)
_FACET_NAMES = {"desc": "description", "narr": "narrative", "dom": "domain", "con": "concepts",
                "def": "definitions", "fac": "factors", "smry": "summary"}
_HEAD_BYTES = 65536
#: The most files and folders the scan of a TREC folder lists, all levels together: 100,000. A
#: collection's folder holds far fewer (WT10g's 1.7 million pages are 5,157 files); a folder with
#: more is not one collection's (``/``, a home folder), and listing it all would take long.
MAX_SCANNED_ENTRIES = 100_000


def read_text(path: Path) -> str:
    """A whole UTF-8 (optionally gzipped) file, ``\\r`` removed; bad bytes are an error naming the line.
    Read within :func:`corpora.input_files.read_input_bytes`'s bounds."""
    raw = read_input_bytes(path, what="a TREC documents or topics file", gzipped=path.suffix == ".gz")
    return decode_utf8(path, raw).replace("\r", "")


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


class _LineCounter:
    """Line numbers of increasing positions in one text, counted incrementally (linear overall)."""

    def __init__(self, text: str) -> None:
        self.text, self.position, self.line = text, 0, 1

    def __call__(self, position: int) -> int:
        if position < self.position:
            return _line_of(self.text, position)
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line


def _clean(text: str) -> str:
    """Tags removed, entities decoded, each line's whitespace collapsed, blank lines dropped."""
    text = html.unescape(_ANY_TAG.sub(" ", text))
    return "\n".join(" ".join(line.split()) for line in text.split("\n") if line.strip())


# ----- documents -------------------------------------------------------------------------------
def iter_documents(path: Path) -> Iterator[tuple[str, str, str, int]]:
    """(docno, title, body, line of ``<DOC>``) for each document of one SGML file."""
    text = read_text(path)
    line_of = _LineCounter(text)
    open_at: int | None = None
    for tag in _DOC_TAG.finditer(text):
        closing = tag.group(1) == "/"
        if not closing:
            if open_at is not None:
                raise InputFileError(path, "<DOC> is not closed by </DOC> before the next <DOC>",
                                     line=_line_of(text, open_at), fix="add the missing </DOC>")
            open_at = tag.end()
            continue
        if open_at is None:
            raise InputFileError(path, "</DOC> without an opening <DOC>", line=_line_of(text, tag.start()))
        block, start, open_at = text[open_at:tag.start()], open_at, None
        docno = _DOCNO.search(block)
        if docno is None or not docno.group(1).strip():
            raise InputFileError(path, "document has no <DOCNO>…</DOCNO> id", line=_line_of(text, start),
                                 fix="give every <DOC> a non-empty <DOCNO>")
        titles = [_clean(m.group(2)) for m in _TITLE.finditer(block)]
        body = _clean(_TITLE.sub(" ", _DROPPED.sub(" ", block)))
        yield _clean(docno.group(1)), " ".join(t for t in titles if t), body, line_of(start)
    if open_at is not None:
        raise InputFileError(path, "<DOC> is not closed by </DOC> at the end of the file",
                             line=_line_of(text, open_at), fix="add the missing </DOC>")


def read_documents(paths: list[Path], name: str) -> Corpus:
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    seen = UniqueIds("document id", fix="give every document a unique <DOCNO>")
    for path in paths:
        for docno, title, body, line in iter_documents(path):
            seen.add(docno, path, line)
            ids.append(docno)
            titles.append(title)
            texts.append(body)
    if not ids:
        raise InputFileError(paths[0], "no <DOC> … </DOC> document found", fix="check the documents file")
    return Corpus(ids, texts, titles, name=name, source=", ".join(str(p) for p in paths))


# ----- topics ----------------------------------------------------------------------------------
def _topic_fields(block: str) -> dict[str, str]:
    """Tag name (lower case) -> text up to the next tag, for one ``<top>`` block."""
    fields: dict[str, str] = {}
    tags = list(_TOPIC_TAG.finditer(block))
    for j, tag in enumerate(tags):
        if tag.group(1) == "/":
            continue
        end = tags[j + 1].start() if j + 1 < len(tags) else len(block)
        value = _TOPIC_LABEL.sub("", " ".join(html.unescape(block[tag.end():end]).split()))
        key = tag.group(2).lower()
        fields[key] = f"{fields[key]} {value}".strip() if key in fields else value
    return fields


def _topic_blocks(text: str) -> Iterator[tuple[str, int]]:
    if re.search(r"</top>", text, re.I):
        for match in _TOP_BLOCK.finditer(text):
            yield match.group(1), match.start()
    else:  # no closing tags at all: a topic runs to the next <top>
        opens = list(re.finditer(r"<top>", text, re.I))
        for j, tag in enumerate(opens):
            end = opens[j + 1].start() if j + 1 < len(opens) else len(text)
            yield text[tag.end():end], tag.start()


def read_topics(paths: list[Path]) -> Queries:
    ids: list[str] = []
    texts: list[str] = []
    facets: dict[str, list] = {}
    seen = UniqueIds("topic number", fix="give every topic a unique number", starts_a_line=True)
    for path in paths:
        text = read_text(path)
        line_of = _LineCounter(text)
        for block, start in _topic_blocks(text):
            fields = _topic_fields(block)
            line = line_of(start)
            number = normalise_numeric_id(fields.pop("num", ""))
            if not number:
                raise InputFileError(path, "topic has no <num> number", line=line,
                                     fix="write '<num> Number: 7' (or '<num>7</num>') in every <top>")
            seen.add(number, path, line)
            title = fields.pop("title", "")
            if not title and "desc" not in fields:
                raise InputFileError(path, f"topic {number} has no <title> (and no <desc>)", line=line,
                                     fix="add the query text after <title>")
            extra = {_FACET_NAMES.get(k, k): v for k, v in fields.items()}
            ids.append(number)
            texts.append(title or extra["description"])
            for key in set(facets) | set(extra):
                facets.setdefault(key, [None] * (len(ids) - 1)).append(extra.get(key))
    if not ids:
        raise InputFileError(paths[0], "no <top> topic found", fix="check the topics file")
    return Queries(ids, texts, facets, source=", ".join(str(p) for p in paths))


# ----- qrels -----------------------------------------------------------------------------------
#: TREC collections' qrels: 4 fields (or 3), whitespace separated, a header line allowed, topic
#: numbers unpadded like the topics (a pair judged twice: :class:`~corpora.trec_io.QrelsBuilder`).
QRELS_RULES = QrelsRules(layout="any", separator="whitespace", header="non-numeric", normalise_query_ids=True)


# ----- the folder ------------------------------------------------------------------------------
def _unreadable(path: Path, exc: Exception) -> InputFileError:
    return InputFileError(path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})",
                          fix="make it readable, or pass the folder that holds only the collection's files")


def _candidate_files(folder: Path, depth: int = 3) -> list[Path]:
    """The files a TREC folder's scan looks into: up to ``depth`` folder levels, in name order,
    hidden and skipped names (:data:`_SKIP_NAMES`) left out.

    Bounded: more than :data:`MAX_SCANNED_ENTRIES` files and folders is an error (the folder is not
    one collection's), and so is a folder or file that cannot be read, since skipping it could drop
    documents silently.
    """
    files: list[Path] = []
    listed = 0

    def visit(current: Path, levels: int) -> None:
        nonlocal listed
        try:
            with os.scandir(current) as scan:
                names = [entry.name for entry in itertools.islice(scan, MAX_SCANNED_ENTRIES - listed + 1)]
        except OSError as exc:
            raise _unreadable(current, exc) from None
        listed += len(names)
        if listed > MAX_SCANNED_ENTRIES:
            raise InputFileError(folder, f"more than {MAX_SCANNED_ENTRIES:,} files and folders within {depth} "
                                 "levels: more than a TREC collection's folder holds, so the scan stops here",
                                 fix="pass the folder that holds the collection's documents, topics and qrels")
        for name in sorted(names):
            entry = current / name
            if name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError as exc:
                raise _unreadable(entry, exc) from None
            if is_dir and levels > 1:
                visit(entry, levels - 1)
            elif is_file and not _SKIP_NAMES.search(name):
                files.append(entry)

    visit(folder, depth)
    return files


def _head(path: Path) -> str:
    """The first :data:`_HEAD_BYTES` of a file (gunzipped), as text for sniffing. An empty file has
    none and is not opened (a kernel file such as ``/proc/kmsg`` says size 0 and may never end);
    a file that cannot be read is an error, since skipping it could drop documents silently."""
    try:
        if path.stat().st_size == 0:
            return ""
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as handle:
                raw = handle.read(_HEAD_BYTES)
        else:
            with path.open("rb") as handle:
                raw = handle.read(_HEAD_BYTES)
    except EOFError:
        raw = b""  # a truncated archive: reading the whole file names the problem
    except (OSError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        if isinstance(exc, OSError) and exc.errno is None:  # not gzip after all: its bytes are still a head
            return ""
        raise _unreadable(path, exc) from None
    return raw.decode("utf-8", errors="replace")


def classify_files(folder: Path) -> dict[str, list[Path]]:
    """``{"documents": [...], "topics": [...], "qrels": [...]}`` by sniffing each file's head."""
    found: dict[str, list[Path]] = {"documents": [], "topics": [], "qrels": []}
    for path in _candidate_files(folder):
        head = _head(path)
        if re.search(r"<DOC>", head, re.I):
            found["documents"].append(path)
        elif re.search(r"<top>", head, re.I):
            found["topics"].append(path)
        elif "qrel" in path.name.lower() or _looks_like_qrels_line(head):
            found["qrels"].append(path)
    return found


def _looks_like_qrels_line(head: str) -> bool:
    for line in head.split("\n"):
        if line.strip() and not line.startswith("#"):
            fields = line.split()
            return len(fields) == 4 and "<" not in line and re.fullmatch(r"-?\d+", fields[3]) is not None
    return False


def looks_like_trec(folder: Path) -> bool:
    """True when the folder holds at least one ``<DOC>`` file and one ``<top>`` file."""
    if not folder.is_dir():
        return False
    found = classify_files(folder)
    return bool(found["documents"]) and bool(found["topics"])


def load_trec(folder: Path, *, split: str = "test") -> Dataset:
    """Load a TREC folder (see the module docstring for the formats)."""
    folder = Path(folder)
    found = classify_files(folder)
    for kind, what in (("documents", "<DOC> documents"), ("topics", "<top> topics"), ("qrels", "qrels")):
        if not found[kind]:
            raise InputFileError(folder, f"no {what} file found in the TREC folder",
                                 fix=f"add a {what} file (a qrels file's name should contain 'qrels')")
    warnings: list[str] = []
    qrels_paths = found["qrels"]
    named = [p for p in qrels_paths if split in p.name]
    if split != DEFAULT_SPLIT and not named:
        raise InputFileError(folder, f"split {split!r} asked for, but no qrels file's name contains it (qrels "
                             f"files: {', '.join(p.name for p in qrels_paths)})",
                             fix=f"name a split that a qrels file's name contains, or leave out `split` "
                                 f"to read {'all of them' if len(qrels_paths) > 1 else 'it'}")
    if len(qrels_paths) > 1:
        if named:
            qrels_paths = named
        if len(qrels_paths) > 1:
            warnings.append(f"merged {len(qrels_paths)} qrels files: {', '.join(p.name for p in qrels_paths)}")
    corpus = read_documents(found["documents"], folder.name)
    queries = read_topics(found["topics"])
    judgments = read_qrels_file(qrels_paths, QRELS_RULES)
    dataset = Dataset(folder.name, corpus, queries, judgments.qrels, source=str(folder),
                      warnings=warnings + judgments.warnings, format="trec")
    return dataset
