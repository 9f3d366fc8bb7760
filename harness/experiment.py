"""Experiment files: a ``bench compare`` configuration in TOML (``bench compare --config FILE``).

Keys are the long options of ``bench compare`` with dashes or underscores; ``systems`` and
``metrics`` may be lists. Options given on the command line override the file::

    corpus = "article"
    systems = ["bm25", "bm25(k1=0.9,b=0.4)", "rrf(bm25,lsa,k=60)"]
    metrics = ["ndcg@5", "mrr"]
    bootstrap_samples = 5000
"""

from __future__ import annotations

import sys
from dataclasses import fields
from pathlib import Path

from corpora import InputFileError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def config_keys() -> list[str]:
    from harness.compare import CompareConfig

    return [f.name for f in fields(CompareConfig)]


def load_experiment(path: Path) -> dict[str, object]:
    """Read an experiment file into ``CompareConfig`` keyword arguments."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputFileError(path, "experiment file not found", fix="check the path given to --config") from None
    except UnicodeDecodeError:
        raise InputFileError(path, "not UTF-8 text", fix="save the file as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise InputFileError(path, f"not valid TOML ({exc.msg if hasattr(exc, 'msg') else exc})", line=line,
                             fix="see the example in `bench compare --help`") from None
    known = set(config_keys())
    out: dict[str, object] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in known:
            raise InputFileError(path, f"unknown key {key!r}", fix=f"use one of {', '.join(sorted(known))}")
        if name in ("systems", "metrics") and isinstance(value, list):
            if not all(isinstance(v, str) for v in value):
                raise InputFileError(path, f"{key} must be a list of strings")
        out[name] = value
    return out
