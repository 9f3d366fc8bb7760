"""A finished comparison as a value: :class:`CompareResult`.

:func:`harness.compare` returns one; nothing is written until :meth:`CompareResult.write` stores it
as a results folder (:mod:`harness.store.write`), and :meth:`CompareResult.report` is a report of the
folder it would write, read in memory (the text ``bench compare`` prints, HTML, Markdown, LaTeX:
:mod:`harness.report.formats`), so it equals ``bench report`` of that folder. Its data is
:class:`~harness.core.record.CompareRecord`, which those modules read without importing this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ParameterError, RetbenchError
from harness.core.record import CompareRecord

__all__ = ["CompareResult"]

# The renderers and the results store are imported where a result is rendered or written, so that
# computing a comparison loads neither (the core imports no presentation).


@dataclass
class CompareResult(CompareRecord):
    """A :class:`~harness.core.record.CompareRecord` that can print and store itself."""

    def report(self, format: str = "text", *, show_failures: int | None = None, show_queries: int | None = None,
               heading: bool = True, command_line: Sequence[str] | None = None) -> str:
        """A report of the comparison.

        ``format="text"`` (the default): the report ``bench compare`` prints: the dataset's summary
        line (unless ``heading`` is False), the leaderboard, the means, the rank of the first
        relevant document, the comparisons, effect size and power, one table per facet,
        risk–coverage and the diagnosis. ``show_failures=None`` lists every failed query
        (``report.txt``); a number abridges the diagnosis to that many per system (the terminal's
        ``--show-failures``). ``show_queries=None`` gives the rank table whole; a number, its first
        that many queries (:func:`harness.report.text.terminal_cut` says what a terminal gets).
        Whole, it is ``report.txt`` less its last newline, and ``bench report --format text`` of the
        folder.

        ``format="html"``, ``"md"`` or ``"latex"`` (:data:`harness.report.formats.REPORT_FORMATS`):
        the report ``bench report`` makes of the results folder :meth:`write` would store; its command
        line is ``command_line`` (default ``sys.argv``), as :meth:`write` records it. ``html``
        needs the ``report`` extra (matplotlib).

        Every format is made from that folder as read in memory (:func:`harness.store.read.open_record`:
        nothing is written), so it is the same text as the report of the folder.
        """
        from harness.report.formats import REPORT_FORMATS, TEXT, check_formats, parse_formats
        from harness.report.text import render_text
        from harness.report.view import ReportView

        if not isinstance(format, str):  # e.g. report(10) from before the format came first
            names = [TEXT, *(n for n in REPORT_FORMATS if n != TEXT)]
            raise ParameterError("format", "report", f"a str, one of {', '.join(names)} (pass "
                                 "show_failures by keyword)", format)
        (name,) = parse_formats([format])
        if name == TEXT:
            for parameter, value in (("show_failures", show_failures), ("show_queries", show_queries)):
                if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                    raise ParameterError(parameter, "report", "None or an int >= 0", value)
        elif show_failures is not None or show_queries is not None or not heading:
            raise RetbenchError(f"show_failures, show_queries and heading shape the {TEXT} report only, not {name}. "
                                "Fix: leave them out")
        check_formats([name])
        # the folder write() would store, read in memory (less report.txt and the run files, which no report reads)
        view = ReportView.of_result(self, list(command_line) if command_line is not None else None)
        if name == TEXT:
            return render_text(view, show_failures, show_queries, heading)
        return REPORT_FORMATS[name].render(view)

    def write(self, out: Path | str, *, command_line: Sequence[str] | None = None,
              say: Callable[[str], None] | None = None, reports: Sequence[str] | str = ()) -> Path:
        """Store the comparison as a new results folder under ``out`` (created if missing) and
        return its path; ``report.txt`` there is :meth:`report` whole. ``command_line`` is recorded
        in the manifest (default ``sys.argv``); ``say`` hears notes such as a removed stale staging
        folder (default: stderr). ``reports`` (``"html,md"`` or a list of
        :data:`~harness.report.formats.REPORT_FORMATS` names) are made from the folder before it is
        renamed into place and kept beside its files (``report.html``, ``report.md``,
        ``report.tex``). An unusable ``out`` is a :class:`~corpora.RetbenchError`."""
        from harness.report.formats import TEXT, check_formats, parse_formats, report_files
        from harness.store.folder import out_folder
        from harness.store.read import open_staged
        from harness.store.write import write_results

        formats = [name for name in parse_formats(reports) if name != TEXT]  # report.txt is always written
        check_formats(formats)  # before anything is written
        arguments = {} if say is None else {"say": say}
        derived = (lambda staging: report_files(open_staged(staging), formats)) if formats else None
        return write_results(self, out_folder(out), list(command_line) if command_line is not None else None,
                             report=self.report() + "\n", derived=derived, **arguments)
