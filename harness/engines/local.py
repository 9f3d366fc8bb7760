"""The local engine: everything in this process, as ``bench compare`` has always run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from corpora import Corpus
from harness.engines.base import DatasetOrigin, Engine, EngineRecord, EngineRun


class LocalEngine(Engine):
    """Fit, search, evaluate and resample in this process (the default)."""

    name = "local"
    description = "this process (the default)"

    @contextlib.contextmanager
    def running(self, corpus: Corpus, origin: DatasetOrigin | None) -> Iterator[EngineRun]:
        yield EngineRun(EngineRecord(self.name))
