"""Load a dataset from a bundled name or a folder, choosing the format from what the folder holds.

Formats are declared once in :data:`FORMATS` (name -> detector, loader, description); ``--format``
choices, help and "unknown format" errors read it. Detection tries them in declaration order and
takes the first match, so the most specific layouts come first: CSFCube, Cystic Fibrosis and
Cranfield are named by their files, SMART by ``.ALL/.QRY/.REL``, BEIR and tabular by file names,
and TREC last, because it has to look inside every file. Every loader has the signature
``load(path, *, split="test") -> Dataset`` and returns the files as read; :func:`load_dataset`
then passes the dataset once through :func:`corpora.inspection.reconcile` (judgments of unknown
ids: a few are counted and skipped, more than 5% or a query losing every relevant judgment stop
loading unless ``allow_unmatched_judgments``). ``docs/corpus-formats.md`` shows every layout with a
minimal example folder.

Besides folders, a corpus argument may name a dataset of another package by a prefix declared in
:data:`SOURCES`: ``irds:<id>`` reads an ir_datasets id (:mod:`corpora.irds`). A source ignores no
option silently: ``format`` and ``split`` are for folders (an ir_datasets id names its split).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from corpora.beir import load_beir, looks_like_beir
from corpora.progress import Progress
from corpora.bundled import bundled_names, bundled_path, bundled_retriever_defaults
from corpora.csfcube import load_csfcube, looks_like_csfcube
from corpora.cystic_fibrosis import load_cystic_fibrosis, looks_like_cystic_fibrosis
from corpora.errors import InputFileError, RetbenchError, UnknownNameError
from corpora.inspection import reconcile
from corpora.irds import PREFIX as IRDS_PREFIX
from corpora.irds import load_irds
from corpora.model import Dataset
from corpora.readers import DEFAULT_SPLIT
from corpora.smart import load_cranfield, load_smart, looks_like_cranfield, looks_like_smart
from corpora.tabular import has_top_level_qrels, load_tabular, looks_like_tabular
from corpora.trec_collection import load_trec, looks_like_trec


@dataclass(frozen=True)
class Format:
    name: str
    detect: Callable[[Path], bool]
    load: Callable[..., Dataset]  # load(path, *, split) -> Dataset
    description: str


FORMATS: dict[str, Format] = {}


def register_format(fmt: Format) -> Format:
    FORMATS[fmt.name] = fmt
    return fmt


def _looks_like_beir_folder(folder: Path) -> bool:
    # corpus.jsonl + queries.jsonl + a top-level qrels file is a tabular export, not BEIR
    return looks_like_beir(folder) and ((folder / "qrels").is_dir() or not has_top_level_qrels(folder))


for _format in (
    Format("csfcube", looks_like_csfcube, load_csfcube,
           "queries-release.csv, test-pid2anns-csfcube-<facet>.json, readable_annotations/"),
    Format("cystic_fibrosis", looks_like_cystic_fibrosis, load_cystic_fibrosis, "cf74..cf79 and cfquery"),
    Format("cranfield", looks_like_cranfield, load_cranfield, "cran.all.1400, cran.qry, cranqrel"),
    Format("smart", looks_like_smart, load_smart,
           "SMART records in <name>.ALL, <name>.QRY, <name>.REL (or <name>.all, query.text, qrels.text)"),
    Format("beir", _looks_like_beir_folder, load_beir, "corpus.jsonl, queries.jsonl, qrels/<split>.tsv"),
    Format("tabular", looks_like_tabular, load_tabular,
           "corpus.jsonl or corpus.csv, queries.jsonl or queries.csv, qrels.tsv"),
    Format("trec", looks_like_trec, load_trec, "<DOC> documents, <top> topics and a qrels file"),
):
    register_format(_format)


@dataclass(frozen=True)
class Source:
    """Datasets named ``<prefix>:<id>`` and read by another package: ``load(id) -> Dataset``, or
    ``load(id, progress=...)`` (a :class:`~corpora.progress.Progress`) when ``reports_progress``."""

    prefix: str
    load: Callable[..., Dataset]
    description: str
    reports_progress: bool = False


SOURCES: dict[str, Source] = {}


def register_source(source: Source) -> Source:
    SOURCES[source.prefix] = source
    return source


register_source(Source(IRDS_PREFIX, load_irds, 'an ir_datasets id, e.g. irds:beir/scifact/test; '
                                                'pip install "retbench[irds]"', reports_progress=True))


def source_of(name: str) -> tuple[Source, str] | None:
    """(source, id) when ``name`` starts with a registered prefix and a colon, else None.

    >>> source_of("irds:beir/scifact/test")[1], source_of("article")
    ('beir/scifact/test', None)
    """
    prefix, colon, rest = str(name).partition(":")
    return (SOURCES[prefix], rest) if colon and prefix in SOURCES else None


def format_names() -> list[str]:
    """Registered format names in detection order (the ``--format`` choices)."""
    return list(FORMATS)


def _bundled(name: str) -> Path | None:
    # only a plain name: bundled_path("/abs/folder") would join to the absolute folder itself
    return bundled_path(name) if name in bundled_names() else None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError as exc:  # e.g. a folder on the way that cannot be searched
        raise InputFileError(path, f"cannot be read ({exc.strerror or exc})",
                             fix="make it readable, or pass another corpus folder") from None


def resolve_corpus(name_or_path: str) -> Path:
    """A bundled corpus name or an existing folder; anything else is a clear error (an empty name
    too: it would read the working folder as a corpus)."""
    if not str(name_or_path).strip():
        raise RetbenchError(f"corpus {str(name_or_path)!r} is empty. Fix: pass a bundled name "
                            f"({', '.join(bundled_names())}) or the path of a corpus folder ('.' for this one)")
    bundled = _bundled(name_or_path)
    if bundled is not None and not _exists(Path(name_or_path)):
        return bundled
    path = Path(name_or_path)
    if not _exists(path):
        raise RetbenchError(
            f"corpus {name_or_path!r}: no such folder and no bundled corpus of that name. "
            f"Bundled: {', '.join(bundled_names())}. Fix: pass a bundled name, the path of a corpus folder, or "
            + ", or ".join(f"{s.prefix}:<id> ({s.description})" for s in SOURCES.values()) + "."
        )
    return path


def detect_format(path: Path) -> Format:
    """The first registered format whose detector accepts the folder."""
    if not path.is_dir():
        raise InputFileError(path, "a corpus is a folder, not a file",
                             fix="pass the folder that holds the corpus files")
    for fmt in FORMATS.values():
        if fmt.detect(path):
            return fmt
    expected = "; ".join(f"{f.name}: {f.description}" for f in FORMATS.values())
    raise InputFileError(path, f"no known corpus layout found (expected {expected})",
                         fix="add the missing files or force a layout with `format`")


def load_dataset(name_or_path: str, *, format: str | None = None, split: str = DEFAULT_SPLIT,
                 allow_unmatched_judgments: bool = False, progress: Progress | None = None,
                 keep_texts: bool = True) -> Dataset:
    """Load a bundled corpus, a folder, or a ``<prefix>:<id>`` of :data:`SOURCES` (``irds:<id>``);
    ``format`` forces a folder loader, ``split`` picks a folder's judgments (a layout with one set of
    judgments refuses any split but the default, ``test``, rather than ignore it).

    ``allow_unmatched_judgments`` skips (with a warning) judgments of unknown ids even when there are
    too many to skip quietly; see :func:`corpora.inspection.reconcile`. ``progress``: the channel a
    slow source reports its reading to (:class:`~corpora.progress.Progress`; None: silent).
    ``keep_texts=False``: a BEIR folder's corpus is kept as its ids only (a
    :class:`~corpora.outline.CorpusOutline`, for a process whose workers read the folder themselves);
    every other layout and source is loaded whole, as with True.
    """
    found = source_of(str(name_or_path))
    if found is not None:
        source, identifier = found
        if format is not None:
            raise RetbenchError(f"corpus {name_or_path!r}: `format={format}` forces the layout of a folder, but "
                                f"{source.prefix}: names a dataset of another package. Fix: drop `format`")
        if split != DEFAULT_SPLIT:
            raise RetbenchError(f"corpus {name_or_path!r}: `split={split}` picks the judgments of a folder, but a "
                                f"{source.prefix}: id names its split itself. Fix: drop `split` and put the split in the "
                                f"id (e.g. {source.prefix}:beir/scifact/test)")
        loaded = source.load(identifier, progress=progress) if source.reports_progress else source.load(identifier)
        return reconcile(loaded, allow_unmatched_judgments=allow_unmatched_judgments)
    path = resolve_corpus(name_or_path)
    if format is not None:
        if format not in FORMATS:
            raise UnknownNameError("corpus format", format, format_names())
        if not path.is_dir():
            raise InputFileError(path, "a corpus is a folder, not a file",
                                 fix="pass the folder that holds the corpus files")
    try:
        chosen = FORMATS[format] if format is not None else detect_format(path)
        dataset = chosen.load(path, split=split, **({"keep_texts": False} if chosen.name == "beir" and not keep_texts
                                                     else {}))
    except OSError as exc:  # a folder or file the layout's own checks met first: never a traceback
        where = exc.filename if exc.filename is not None else path
        raise InputFileError(where, f"cannot be read ({exc.strerror or exc})",
                             fix="make it readable, or pass the folder that holds the corpus files") from None
    dataset.format = dataset.format or chosen.name
    carried = bundled_retriever_defaults(path)
    if carried is not None:  # the bundled article's own experiment: its parameters travel with its corpus
        dataset.corpus = replace(dataset.corpus, retriever_defaults=carried)
    if _bundled(name_or_path) == path:
        dataset.name = name_or_path
    elif not dataset.name:  # "." or "..": a loader's folder.name is empty
        dataset.name = path.resolve().name
    return reconcile(dataset, allow_unmatched_judgments=allow_unmatched_judgments)
