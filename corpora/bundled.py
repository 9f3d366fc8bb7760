"""Corpora shipped inside the package, addressable by name (``--corpus article``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BUNDLED_ROOT = Path(__file__).resolve().parent / "bundled"
DEFAULT_CORPUS = "article"
#: The file of a bundled corpus that holds the retriever parameters of its own experiment
#: (:attr:`corpora.Corpus.retriever_defaults`): retriever name -> parameter -> value.
RETRIEVER_DEFAULTS_FILE = "retriever_defaults.json"


def bundled_names() -> list[str]:
    return sorted(p.name for p in BUNDLED_ROOT.iterdir() if (p / "corpus.jsonl").is_file())


def bundled_path(name: str) -> Path | None:
    path = BUNDLED_ROOT / name
    return path if (path / "corpus.jsonl").is_file() else None


def bundled_description(name: str) -> str:
    """The first paragraph of the corpus's README.md after its heading, on one line ("" without one)."""
    readme = BUNDLED_ROOT / name / "README.md"
    if not readme.is_file():
        return ""
    paragraphs = [" ".join(block.split()) for block in readme.read_text(encoding="utf-8").split("\n\n")]
    text = [p for p in paragraphs if p and not p.startswith("#")]
    return text[0] if text else ""


def bundled_retriever_defaults(folder: Path) -> dict[str, dict[str, Any]] | None:
    """The retriever parameters a bundled corpus carries (:data:`RETRIEVER_DEFAULTS_FILE`), when
    ``folder`` is a bundled corpus's folder (by name or by path) that has them; else None.

    The article's are its experiment's: LSA to 6 dimensions, fusions 10 deep, so that its table
    comes out as printed; every other corpus gets the retrievers' rules (:mod:`retrievers.defaults`).
    """
    folder = Path(folder).resolve()
    if folder.parent != BUNDLED_ROOT or not (folder / RETRIEVER_DEFAULTS_FILE).is_file():
        return None
    return json.loads((folder / RETRIEVER_DEFAULTS_FILE).read_text(encoding="utf-8"))
