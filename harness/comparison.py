"""A finished comparison as a value: :class:`CompareResult`.

:func:`harness.compare` returns one; nothing is written until :meth:`CompareResult.write` stores it
as a results folder (:mod:`harness.results`), and :meth:`CompareResult.report` is the text
``bench compare`` prints (:mod:`harness.report`). Its data is :class:`~harness.record.CompareRecord`,
which those modules read without importing this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from corpora import summary_line
from harness.record import CompareRecord
from harness.report import render
from harness.results import write_results

__all__ = ["CompareResult"]


@dataclass
class CompareResult(CompareRecord):
    """A :class:`~harness.record.CompareRecord` that can print and store itself."""

    def report(self, show_failures: int | None = None, *, heading: bool = True) -> str:
        """The report ``bench compare`` prints: the dataset's summary line (unless ``heading`` is
        False), the leaderboard, the means, the rank of the first relevant document, the
        comparisons, effect size and power, one table per facet, risk–coverage and the diagnosis.
        ``show_failures=None`` lists every failed query (``report.txt``); a number abridges the
        diagnosis to that many per system (the terminal's ``--show-failures``)."""
        body = render(self, show_failures)
        return f"{summary_line(self.dataset)}\n{body}" if heading else body

    def write(self, out: Path | str, *, command_line: Sequence[str] | None = None,
              say: Callable[[str], None] | None = None) -> Path:
        """Store the comparison as a new results folder under ``out`` (created if missing) and
        return its path; ``report.txt`` there is :meth:`report` whole. ``command_line`` is recorded
        in the manifest (default ``sys.argv``); ``say`` hears notes such as a removed stale staging
        folder (default: stderr). An unusable ``out`` is a :class:`~corpora.RetbenchError`."""
        arguments = {} if say is None else {"say": say}
        return write_results(self, Path(out), list(command_line) if command_line is not None else None,
                             report=self.report() + "\n", **arguments)
