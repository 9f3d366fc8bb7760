"""Load a dataset from a bundled name or a folder, choosing the format from what the folder holds.

Formats are declared once in :data:`FORMATS` (name -> detector, loader); ``--format`` forces one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corpora.beir import load_beir, looks_like_beir
from corpora.bundled import bundled_names, bundled_path
from corpora.errors import InputFileError, RetbenchError, UnknownNameError
from corpora.model import Dataset


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


register_format(Format("beir", looks_like_beir, load_beir,
                       "corpus.jsonl, queries.jsonl, qrels/<split>.tsv"))


def resolve_corpus(name_or_path: str) -> Path:
    """A bundled corpus name or an existing folder; anything else is a clear error."""
    bundled = bundled_path(name_or_path)
    if bundled is not None and not Path(name_or_path).exists():
        return bundled
    path = Path(name_or_path)
    if not path.exists():
        raise RetbenchError(
            f"corpus {name_or_path!r}: no such folder and no bundled corpus of that name. "
            f"Bundled: {', '.join(bundled_names())}. Fix: pass a bundled name or the path of a corpus folder."
        )
    return path


def load_dataset(name_or_path: str, *, format: str | None = None, split: str = "test") -> Dataset:
    path = resolve_corpus(name_or_path)
    if format is not None:
        if format not in FORMATS:
            raise UnknownNameError("corpus format", format, sorted(FORMATS))
        chosen = FORMATS[format]
    else:
        if not path.is_dir():
            raise InputFileError(path, "a corpus is a folder, not a file",
                                 fix="pass the folder that holds the corpus files")
        matches = [f for f in FORMATS.values() if f.detect(path)]
        if not matches:
            expected = "; ".join(f"{f.name}: {f.description}" for f in FORMATS.values())
            raise InputFileError(path, f"no known corpus layout found (expected {expected})",
                                 fix="add the missing files or force a layout with --format")
        chosen = matches[0]
    dataset = chosen.load(path, split=split)
    if bundled_path(name_or_path) == path:
        dataset.name = name_or_path
    return dataset
