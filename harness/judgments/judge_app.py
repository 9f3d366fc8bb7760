"""``bench judge``'s judging session: one (query, document) pair of a pool at a time, graded 0–3,
each judgment made durable before the next pair is shown.

The judgments file is a TREC qrels file (``qid 0 docid grade``), appended one line per judgment,
flushed and fsynced before the answer leaves, so a ``kill -9`` loses nothing that was shown as
done. It has one writer: a session locks it (:class:`~harness.judgments.writer_lock.WriterLock`)
and a second session on the same file, by any path, is refused, naming the first. Undo truncates
away the last line this session appended (also fsynced), and only after checking that the file
still ends with exactly that line: the judgments the file held before the session are never
undone. Restarted on the same file, the page resumes at the first pair of the pool the file does
not judge; a file that grades one pair twice with two grades is refused, as ``bench agree`` and
``bench evaluate`` refuse it (:class:`corpora.trec_io.QrelsBuilder`'s one rule for repeats).

Plain Python: the page that serves a session over HTTP, with its defences, is
:mod:`harness.judgments.judge_page` (the ``serve`` extra: FastAPI and uvicorn, as ``bench serve``).
"""

from __future__ import annotations

import csv
import html
import os
import re
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpora import Dataset, InputFileError, RetbenchError
from corpora.input_files import MAX_JUDGMENT_LINE, decode_utf8, read_input_bytes, refuse_nul_bytes
from corpora.number_grammar import parse_grade
from corpora.trec_io import QrelsBuilder
from harness.judgments.writer_lock import WriterLock

__all__ = ["GRADE_SCALE", "JudgingSession", "read_pool"]

#: The grades an assessor gives, with what each means (TREC's graded scale).
GRADE_SCALE: dict[int, str] = {
    0: "Not relevant: nothing useful for the query",
    1: "Marginally relevant: on the topic, but does not answer it",
    2: "Relevant: answers part of the query",
    3: "Highly relevant: answers the query fully",
}
_POOL_FIX = "give the TSV bench pool wrote (a header with query_id and doc_id, then one pair per line)"
_JUDGMENTS_FIX = ("give a qrels file this page wrote (`qid 0 docid grade` per line), or a new file name to start "
                  "afresh")


def read_pool(path: Path) -> list[tuple[str, str]]:
    """The (query id, doc id) pairs of a pool file, in order; a pair listed twice is kept once.

    Read as every input file is (:func:`corpora.input_files.read_input_bytes`: a device or a folder
    is refused, a line is at most 1 MiB), as UTF-8 with or without a byte order mark.
    """
    raw = read_input_bytes(path, max_line=MAX_JUDGMENT_LINE, what="a pool file")
    refuse_nul_bytes(path, raw)
    text = decode_utf8(path, raw)
    rows = list(csv.reader(text.splitlines(), delimiter="\t"))
    if not rows:
        raise InputFileError(path, "is empty", fix=_POOL_FIX)
    header = rows[0]
    if "query_id" not in header or "doc_id" not in header:
        raise InputFileError(path, f"its header {header!r} has no query_id and doc_id columns", line=1, fix=_POOL_FIX)
    q_col, d_col = header.index("query_id"), header.index("doc_id")
    pairs: dict[tuple[str, str], None] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) != len(header) or not row[q_col] or not row[d_col]:
            raise InputFileError(path, f"expected {len(header)} tab-separated fields with a query_id and a doc_id, "
                                 f"got {row!r}", line=number, fix=_POOL_FIX)
        pairs.setdefault((row[q_col], row[d_col]), None)
    if not pairs:
        raise InputFileError(path, "holds no pair to judge", fix=_POOL_FIX)
    return list(pairs)


@dataclass(frozen=True)
class _Line:
    query_id: str
    doc_id: str
    grade: int


@dataclass(frozen=True)
class _Appended:
    """A line this session appended: where it starts in the file, and its bytes."""

    start: int
    data: bytes


def _read_judgments(path: Path) -> tuple[list[_Line], list[str]]:
    """The judgments of an existing judgments file, in file order, and the warnings reading gave.

    Read as ``bench agree`` and ``bench evaluate`` read it: a pair judged twice follows
    :class:`~corpora.trec_io.QrelsBuilder`'s rule (two grades are an error naming both lines; the same
    grade again counts once, with a warning), so a file this page resumes is one they accept. Blank lines and ``#`` comments are skipped; a
    last line without its newline is complete (the newline is added before the next judgment).
    """
    if not path.exists():
        return [], []
    raw = read_input_bytes(path, max_line=MAX_JUDGMENT_LINE, what="a qrels file")
    refuse_nul_bytes(path, raw)
    builder = QrelsBuilder()
    lines = []
    for number, text in enumerate(decode_utf8(path, raw).split("\n"), start=1):
        if not text.strip() or text.startswith("#"):
            continue
        fields = text.split()
        if len(fields) != 4:
            raise InputFileError(path, f"expected `qid 0 docid grade`, got {text.strip()!r}", line=number,
                                 fix=_JUDGMENTS_FIX)
        grade = parse_grade(path, number, fields[3])
        builder.add(fields[0], fields[2], grade, path, number)
        lines.append(_Line(fields[0], fields[2], grade))
    return lines, builder.warnings(str(path))


def _highlight(text: str, terms: set[str], analyze: Callable[[str], Sequence[str]]) -> str:
    """``text`` as HTML, each word whose analyzed form is a query term in ``<mark>``."""
    parts = []
    for piece in re.split(r"(\w+)", text):
        escaped = html.escape(piece)
        if piece and re.fullmatch(r"\w+", piece) and terms.intersection(analyze(piece)):
            escaped = f"<mark>{escaped}</mark>"
        parts.append(escaped)
    return "".join(parts)


@dataclass
class JudgingSession:
    """The state of one judging session: the pool, the documents, the judgments file.

    The session holds the judgments file's writer lock from construction until :meth:`close` (or
    the process's end); use it as a context manager, or call :meth:`close`. A second session on the
    same file meanwhile is a :class:`~corpora.RetbenchError` naming this one. :attr:`warnings` are
    what reading the existing file gave.
    """

    pool: list[tuple[str, str]]
    dataset: Dataset
    out: Path
    analyze: Callable[[str], Sequence[str]]
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self._queries = dict(zip(self.dataset.queries.ids, self.dataset.queries.texts))
        self._docs = self.dataset.corpus.index_of()
        for number, (query, doc) in enumerate(self.pool, start=1):
            if query not in self._queries:
                raise RetbenchError(f"pool pair {number} (query {query!r}) names a query the corpus "
                                    f"{self.dataset.name!r} does not hold. Fix: give the `corpus` the pool was made "
                                    "from")
            if doc not in self._docs:
                raise RetbenchError(f"pool pair {number} (document {doc!r}) names a document the corpus "
                                    f"{self.dataset.name!r} does not hold. Fix: give the `corpus` the pool was made "
                                    "from")
        folder = self.out.parent  # "." for a bare file name
        if not folder.is_dir():
            raise RetbenchError(f"`out` {self.out}: its folder {folder} does not exist. Fix: create it, or name a "
                                "file in an existing folder")
        if self.out.is_dir():
            raise RetbenchError(f"`out` {self.out} is a folder. Fix: name a file")
        self._closed = False
        self._writer = WriterLock(self.out, "bench judge")  # before reading: no one else appends meanwhile
        try:
            self._lines, self.warnings = _read_judgments(self.out)
        except BaseException:
            self._writer.close()
            raise
        self._appended: list[_Appended] = []  # this session's lines still in the file, oldest first
        # the pairs the file judges, kept as lines are appended and undone (a line this session appends
        # judges a pair no earlier line judges: only the shown, unjudged pair is judged)
        self._judged = {(line.query_id, line.doc_id) for line in self._lines}

    def close(self) -> None:
        """Let the judgments file go (its lock); the session writes no more. Again: nothing."""
        with self._lock:
            self._closed = True
            self._writer.close()

    def __enter__(self) -> JudgingSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def announce(self, address: str) -> None:
        """Record the address the session is served at in its lock, for a refused second server to name."""
        self._writer.record(address)

    # ----- state ---------------------------------------------------------------------------------

    def current(self) -> tuple[str, str] | None:
        """The first pair of the pool the judgments file does not judge (None: all are judged)."""
        return next((pair for pair in self.pool if pair not in self._judged), None)

    def state(self) -> dict[str, Any]:
        done = sum(pair in self._judged for pair in self.pool)
        pair = self.current()
        shown = None
        if pair is not None:
            query_text = self._queries[pair[0]]
            terms = set(self.analyze(query_text))
            j = self._docs[pair[1]]
            corpus = self.dataset.corpus
            title = corpus.titles[j] if corpus.titles else ""
            shown = {"query_id": pair[0], "doc_id": pair[1], "query": query_text,
                     "title_html": _highlight(title or "", terms, self.analyze),
                     "text_html": _highlight(corpus.texts[j], terms, self.analyze)}
        last = self._lines[-1] if self._lines else None
        return {"done": done, "total": len(self.pool), "pair": shown, "undoable": len(self._appended),
                "last": {"query_id": last.query_id, "doc_id": last.doc_id, "grade": last.grade} if last else None}

    # ----- writes ----------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise LookupError("this session is closed: it writes no more (restart bench judge)")

    def judge(self, query_id: str, doc_id: str, grade: int) -> dict[str, Any]:
        """Record ``grade`` for the shown pair (which must be ``(query_id, doc_id)``: a stale page or a
        repeated key cannot judge another one), durably, and return the next state."""
        with self._lock:
            self._check_open()
            if grade not in GRADE_SCALE:
                raise ValueError(f"grade must be one of {sorted(GRADE_SCALE)}")
            if self.current() != (query_id, doc_id):
                raise LookupError("that pair is not the one shown now")
            line = f"{query_id} 0 {doc_id} {grade}\n".encode("utf-8")
            new_file = not self.out.exists()
            with open(self.out, "a+b") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size:
                    handle.seek(size - 1)
                    if handle.read(1) != b"\n":
                        line = b"\n" + line  # the last line lacked its newline: it stays whole
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            if new_file:
                _fsync_folder(self.out)
                self._writer.hold_target()  # the file exists now: lock it too (a hard link to it finds that)
            start = size + (1 if line.startswith(b"\n") else 0)
            self._appended.append(_Appended(start, line[start - size:]))
            self._lines.append(_Line(query_id, doc_id, grade))
            self._judged.add((query_id, doc_id))
            return self.state()

    def undo(self) -> dict[str, Any]:
        """Remove the last judgment this session appended (truncated away and fsynced); its pair is
        shown again. Nothing from before the session, nor a file whose end is no longer that line
        (another program wrote to it), is ever truncated: :class:`LookupError` says why."""
        with self._lock:
            self._check_open()
            if not self._appended:
                # nothing appended: every line read is one the file held before the session
                kept = f"the {len(self._lines)} judgment(s) the file held before are kept; " if self._lines else ""
                raise LookupError(f"nothing to undo: this session has judged nothing yet ({kept}edit "
                                  f"{self.out.name} to change an earlier judgment)")
            last = self._appended[-1]
            end = last.start + len(last.data)
            try:
                handle = open(self.out, "r+b")
            except FileNotFoundError:
                raise LookupError(f"{self.out.name} is gone: nothing to undo") from None
            with handle:
                size = os.fstat(handle.fileno()).st_size
                handle.seek(last.start)
                if size != end or handle.read(len(last.data)) != last.data:
                    raise LookupError(f"{self.out.name} no longer ends with the line this session wrote last "
                                      "(another program changed it): undo refused, nothing removed. Fix: edit the "
                                      "file by hand, then restart bench judge")
                handle.truncate(last.start)
                handle.flush()
                os.fsync(handle.fileno())
            self._appended.pop()
            undone = self._lines.pop()
            self._judged.discard((undone.query_id, undone.doc_id))
            return self.state()


def _fsync_folder(path: Path) -> None:
    """Make a new file's name durable too (its folder's entry)."""
    try:
        descriptor = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
