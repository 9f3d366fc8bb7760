"""Corpora shipped inside the package, addressable by name (``--corpus article``)."""

from __future__ import annotations

from pathlib import Path

BUNDLED_ROOT = Path(__file__).resolve().parent / "bundled"
DEFAULT_CORPUS = "article"


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
