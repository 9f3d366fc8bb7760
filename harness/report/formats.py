"""The report formats of a comparison's results folder, declared once: what ``bench report --format``,
``bench compare --report``, :meth:`harness.comparison.CompareResult.report` and ``bench tune
--report`` accept, the file each is kept in inside a results folder, and the function that renders
it. A parameter search's folder (``bench tune``) is reported in the same files by the renderers of
:mod:`harness.tuning.report`, which say which of these formats they make; a suite folder's by
:mod:`harness.suite.report`. Both live above this module, which knows neither.

``text`` is the report ``bench compare`` prints; every comparison's folder keeps it as ``report.txt``
(asked for with ``--report``, it is that file). Every format is a pure function of the results
folder (:class:`harness.report.view.ReportView`), so ``bench report`` on a past folder gives the
same text as the report written with it. Only ``html`` draws charts, and so needs matplotlib
(the ``report`` extra): :func:`check_formats` says so before any work is done.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from corpora import UnknownNameError
from harness.report.plots import require_matplotlib
from harness.report.html import render_html
from harness.report.latex import render_latex
from harness.report.markdown import render_markdown
from harness.report.text import render_text
from harness.report.view import ReportView
from harness.store.read import ResultsFolder, one_comparison, open_results

__all__ = ["REPORT_FORMATS", "TEXT", "ReportFormat", "check_formats", "format_for_path", "parse_formats",
           "render_report", "report_files"]

#: The format of a result's ``report()`` that is its printed text (``bench compare``'s or ``bench tune``'s);
#: a comparison's folder always keeps it (``report.txt``), whatever else it is asked for.
TEXT = "text"


def _text_file(view: ReportView) -> str:
    """``report.txt``: the whole text report, ending in a newline."""
    return render_text(view) + "\n"


@dataclass(frozen=True)
class ReportFormat:
    """One report format: its ``file`` inside a results folder, the ``suffixes`` of an output file
    that imply it, what it is, its renderer, and whether it draws charts (needs matplotlib)."""

    name: str
    file: str
    suffixes: tuple[str, ...]
    description: str
    render: Callable[[ReportView], str]
    charts: bool = False


#: Format name -> its declaration, in the order they are listed.
REPORT_FORMATS: dict[str, ReportFormat] = {
    f.name: f for f in (
        ReportFormat("html", "report.html", (".html", ".htm"), "one self-contained page with charts (needs the "
                     "report extra)", render_html, charts=True),
        ReportFormat("md", "report.md", (".md", ".markdown"), "GitHub-flavoured Markdown for a pull-request "
                     "comment", render_markdown),
        ReportFormat("latex", "report.tex", (".tex",), "a booktabs table for a paper, in a document pdflatex "
                     "compiles", render_latex),
        ReportFormat(TEXT, "report.txt", (".txt",), "the report bench compare prints, with the whole diagnosis "
                     "(every folder keeps it)", _text_file),
    )
}


def parse_formats(formats: str | Sequence[str]) -> list[str]:
    """Format names from ``html,md`` or a list, in the order given, each once; an unknown name is an
    :class:`~corpora.UnknownNameError` listing the valid ones."""
    names = [f.strip() for f in formats.split(",")] if isinstance(formats, str) else [str(f).strip() for f in formats]
    chosen: list[str] = []
    for name in names:
        if not name:
            continue
        if name not in REPORT_FORMATS:
            raise UnknownNameError("report format", name, list(REPORT_FORMATS))
        if name not in chosen:
            chosen.append(name)
    return chosen


def check_formats(formats: Sequence[str]) -> None:
    """Raise now, before any work, when a format needs what is not installed (matplotlib)."""
    for name in formats:
        if REPORT_FORMATS[name].charts:
            require_matplotlib(f"the {name} report's charts")


def format_for_path(path: str | PathLike[str]) -> str | None:
    """The format an output file's suffix implies (``report.md`` -> ``md``), or None."""
    suffix = Path(path).suffix.lower()
    for name, declared in REPORT_FORMATS.items():
        if suffix in declared.suffixes:
            return name
    return None


def render_report(folder: ResultsFolder | str | PathLike[str], format: str) -> str:
    """The report of the comparison's results folder ``folder`` in ``format`` (a key of
    :data:`REPORT_FORMATS`); a folder of another kind is an :class:`~corpora.InputFileError` saying
    what it is (:func:`~harness.store.read.one_comparison`)."""
    (name,) = parse_formats([format])
    check_formats([name])
    results = one_comparison(folder if isinstance(folder, ResultsFolder) else open_results(folder))
    return REPORT_FORMATS[name].render(ReportView(results))


def report_files(folder: ResultsFolder | str | PathLike[str], formats: Sequence[str]) -> Mapping[str, str]:
    """File name inside the comparison's results folder -> text, for each of ``formats``, from one
    reading of it."""
    names = parse_formats(formats)
    check_formats(names)
    results = one_comparison(folder if isinstance(folder, ResultsFolder) else open_results(folder))
    view = ReportView(results)
    return {REPORT_FORMATS[name].file: REPORT_FORMATS[name].render(view) for name in names}
