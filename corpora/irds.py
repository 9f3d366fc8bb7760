"""Datasets of the ir_datasets package, by id: ``load_dataset("irds:beir/scifact/test")`` and
``bench compare --corpus irds:beir/scifact/test`` (the prefix PyTerrier uses for the same ids).

ir_datasets (``pip install "retbench[irds]"``) knows hundreds of test collections by id, keeps
hash-checked copies of their files under ``$IR_DATASETS_HOME`` (default ``~/.ir_datasets``) and
fetches a missing file when it is first read, as it would for any of its users. retbench starts no
download of its own: it asks ir_datasets for the documents, queries and judgments of the id, and when
ir_datasets cannot provide them (offline, say) the error names the files ir_datasets expects, which
of them are missing, and where it looks for them.

What is read, and how:

* documents: ``doc_id``; a ``text`` field as the text and a ``title`` field as the title, as a BEIR
  folder's ``corpus.jsonl`` gives them (so a BEIR collection reads the same through ir_datasets as
  from its folder); a document type without a ``text`` field gives its ``default_text()`` (e.g.
  title and body of MS MARCO documents). Other fields are not read. Documents stream from
  ``docs_iter()`` into the corpus's id and text lists, the one copy held.
* queries: ``query_id`` and the ``text`` field, else ``default_text()`` (a TREC topic's title);
  other fields are not read (they are long descriptions and narratives, not facets to group by).
* judgments: ``qrels_iter()``'s ``query_id``, ``doc_id`` and ``relevance``; the same pair judged
  twice with the same grade counts once (with a warning), with two grades it is an error.

The id names the split (``beir/scifact/test``, ``msmarco-passage/dev/small``): ``split`` does not
apply, and neither does ``format`` (both are for folders).
"""

from __future__ import annotations

import difflib
import numbers
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from corpora.progress import Progress
from corpora.errors import RetbenchError
from corpora.model import Corpus, Dataset, Qrels, Queries
from corpora.trec_io import QrelsBuilder

#: The prefix of an ir_datasets id in a corpus argument.
PREFIX = "irds"
_PROGRESS_EVERY = 10_000  # documents between two progress updates
#: Attributes of ir_datasets' download and cache objects that hold a file path it reads.
_PATH_ATTRIBUTES = ("_path", "_cache_path", "_extract_path", "extract_path")


def _import_ir_datasets(dataset_id: str) -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise RetbenchError(f"corpus {PREFIX}:{dataset_id}: reading ir_datasets ids needs the ir_datasets package, "
                            'which is not installed. Fix: pip install "retbench[irds]"') from None
    return ir_datasets


def _registered_ids(ir_datasets: Any) -> list[str]:
    return sorted(ir_datasets.registry)


def _find(ir_datasets: Any, dataset_id: str) -> Any:
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        pass
    close = difflib.get_close_matches(dataset_id, _registered_ids(ir_datasets), n=5, cutoff=0.6)
    hint = f" (close: {', '.join(close)})" if close else ""
    raise RetbenchError(f"corpus {PREFIX}:{dataset_id}: ir_datasets has no dataset {dataset_id!r}{hint}. "
                        "Fix: check the id (`ir_datasets list` prints every one)")


def _check_parts(ir_datasets: Any, dataset_id: str, dataset: Any) -> None:
    """Documents, queries and judgments must all be there: a benchmark needs the three."""
    missing = [part for part in ("docs", "queries", "qrels") if not getattr(dataset, f"has_{part}")()]
    if not missing:
        return
    complete = []
    for other in _registered_ids(ir_datasets):
        if other.startswith(dataset_id + "/"):
            candidate = ir_datasets.registry[other]
            if candidate.has_docs() and candidate.has_queries() and candidate.has_qrels():
                complete.append(other)
    fix = f"name one of its subsets that has all three, e.g. {', '.join(complete[:5])}" if complete else \
        "name a dataset with documents, queries and judgments (qrels)"
    raise RetbenchError(f"corpus {PREFIX}:{dataset_id}: the dataset has no {' and no '.join(missing)} in ir_datasets "
                        f"(a benchmark needs documents, queries and judgments). Fix: {fix}")


def expected_files(component: Any) -> list[Path]:
    """The files an ir_datasets component (a docs, queries or qrels handler) reads or caches, found
    by walking its download and cache objects (their ``_path``, ``_cache_path`` and extraction
    paths), in the order met, each once."""
    found: list[Path] = []
    seen: set[int] = set()

    def walk(value: Any, depth: int) -> None:
        if depth > 12 or id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, (list, tuple, set)):
            for item in value:
                walk(item, depth + 1)
            return
        if isinstance(value, dict):
            for item in value.values():
                walk(item, depth + 1)
            return
        if not type(value).__module__.startswith("ir_datasets") or not hasattr(value, "__dict__"):
            return
        attributes = vars(value)
        if type(value).__name__ != "RelativePath":  # its _path is relative to what it wraps
            for name in _PATH_ATTRIBUTES:
                path = attributes.get(name)
                if isinstance(path, (str, os.PathLike)) and os.fspath(path) != os.devnull \
                        and Path(path) not in found:
                    found.append(Path(path))
        for item in attributes.values():
            walk(item, depth + 1)

    walk(component, 0)
    return found


@contextmanager
def _provided_by_ir_datasets(dataset_id: str, part: str, handler: Callable[[], Any]) -> Iterator[None]:
    """Turn a failure of ir_datasets' own code while it provides ``part`` into one error that names
    the files it expects, which are missing and where it keeps them; ours pass through."""
    try:
        yield
    except RetbenchError:
        raise
    except Exception as exc:  # whatever ir_datasets (or a download library under it) raised
        try:
            files = expected_files(handler())
        except Exception:  # the diagnosis must not hide the failure it explains
            files = []
        missing = [p for p in files if not p.exists()]
        home = os.environ.get("IR_DATASETS_HOME") or str(Path.home() / ".ir_datasets")
        where = (f" It expects {len(files)} file(s); missing: {', '.join(str(p) for p in missing)}."
                 if missing else f" Its files: {', '.join(str(p) for p in files)}." if files else "")
        raise RetbenchError(
            f"corpus {PREFIX}:{dataset_id}: ir_datasets could not provide the {part}: {type(exc).__name__}: "
            f"{str(exc).strip() or '(no message)'}.{where} ir_datasets keeps its copies under {home} "
            "($IR_DATASETS_HOME). Fix: let ir_datasets download them once (it needs the network), or copy the files "
            "to the paths above (ir_datasets' documentation of the dataset says where to get them)") from exc


def _text_reader(cls: Any, what: str) -> Callable[[Any], str]:
    """How to read the text of a record of ``cls``: its ``text`` field, else ``default_text()``."""
    if "text" in getattr(cls, "_fields", ()):
        return lambda record: str(record.text or "")
    if callable(getattr(cls, "default_text", None)):
        return lambda record: str(record.default_text() or "")
    raise RetbenchError(f"ir_datasets' {what} type {getattr(cls, '__name__', cls)!r} has neither a text field nor "
                        "default_text(). Fix: upgrade ir_datasets (pip install -U ir_datasets)")


def _read_corpus(dataset_id: str, dataset: Any, progress: Progress) -> Corpus:
    cls = dataset.docs_cls()
    text_of = _text_reader(cls, "document")
    with_titles = {"text", "title"} <= set(getattr(cls, "_fields", ()))
    ids: list[str] = []
    texts: list[str] = []
    titles: list[str] = []
    with _provided_by_ir_datasets(dataset_id, "documents", dataset.docs_handler):
        total = dataset.docs_count()
        with progress.task("reading documents", total=total) as task:
            for doc in dataset.docs_iter():
                ids.append(str(doc.doc_id))
                texts.append(text_of(doc))
                if with_titles:
                    titles.append(str(doc.title or ""))
                if len(ids) % _PROGRESS_EVERY == 0:
                    task.update(len(ids))
            task.update(len(ids))
    if not ids:
        raise RetbenchError(f"corpus {PREFIX}:{dataset_id}: ir_datasets gave no documents. "
                            "Fix: name a dataset that has documents")
    return Corpus(ids, texts, titles if with_titles else None, None, name=dataset_id, source=f"{PREFIX}:{dataset_id}")


def _read_queries(dataset_id: str, dataset: Any) -> Queries:
    text_of = _text_reader(dataset.queries_cls(), "query")
    ids: list[str] = []
    texts: list[str] = []
    with _provided_by_ir_datasets(dataset_id, "queries", dataset.queries_handler):
        for query in dataset.queries_iter():
            ids.append(str(query.query_id))
            texts.append(text_of(query))
    return Queries(ids, texts, source=f"{PREFIX}:{dataset_id} queries")


def _read_qrels(dataset_id: str, dataset: Any) -> tuple[Qrels, list[str]]:
    source = f"{PREFIX}:{dataset_id} qrels"
    place = Path(source)  # where QrelsBuilder's messages say a judgment is: the judgment's number
    builder = QrelsBuilder()
    with _provided_by_ir_datasets(dataset_id, "judgments", dataset.qrels_handler):
        for number, qrel in enumerate(dataset.qrels_iter(), 1):
            builder.add(str(qrel.query_id), str(qrel.doc_id), _grade(qrel.relevance, source, number), place, number)
    if not builder.judgments:
        raise RetbenchError(f"corpus {PREFIX}:{dataset_id}: ir_datasets gave no judgments. "
                            "Fix: name a dataset with judgments (qrels)")
    return Qrels(builder.judgments, source=source), builder.warnings(source)


def _grade(value: Any, source: str, number: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise RetbenchError(f"{source}: judgment {number}: grade {value!r} is not an integer. "
                            "Fix: judgments need integer grades (TREC: 0 irrelevant, 1, 2, 3)")
    return int(value)


def load_irds(dataset_id: str, progress: Progress | None = None) -> Dataset:
    """The documents, queries and judgments of an ir_datasets id, as a :class:`~corpora.Dataset`
    named by the id (format ``"irds"``); see the module docstring for what is read. The reading of
    the documents is the task ``reading documents`` of ``progress`` (None: silent)."""
    if not dataset_id:
        raise RetbenchError(f"corpus {PREFIX}:: no ir_datasets id after the prefix. "
                            f"Fix: write the id, e.g. {PREFIX}:beir/scifact/test")
    ir_datasets = _import_ir_datasets(dataset_id)
    dataset = _find(ir_datasets, dataset_id)
    _check_parts(ir_datasets, dataset_id, dataset)
    corpus = _read_corpus(dataset_id, dataset, progress or Progress())
    queries = _read_queries(dataset_id, dataset)
    qrels, warnings = _read_qrels(dataset_id, dataset)
    return Dataset(dataset_id, corpus, queries, qrels, source=f"{PREFIX}:{dataset_id}", warnings=warnings,
                   format=PREFIX)
