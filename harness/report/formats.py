"""The report formats of a results folder, declared once: what ``bench report --format``,
``bench compare --report``, ``bench tune --report``, :meth:`harness.core.result.CompareResult.report`
and :meth:`harness.tuning.search.TuneResult.report` accept, the file each is kept in inside a results
folder, and the functions that render it: one for a comparison's folder, one (or none) for a
parameter search's (its manifest's ``kind`` is ``tune``: :func:`harness.report.tune_view.is_tune_folder`).

``text`` is the report ``bench compare`` prints; every comparison's folder keeps it as ``report.txt``
(asked for with ``--report``, it is that file). Every format is a pure function of the results
folder (:class:`harness.report.view.ReportView`, or :class:`harness.report.tune_view.TuneView` for a
tune folder), so ``bench report`` on a past folder gives the same text as the report written with it. Only ``html`` draws charts, and so needs matplotlib
(the ``report`` extra): :func:`check_formats` says so before any work is done.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from corpora import RetbenchError, UnknownNameError
from harness.report.plots import require_matplotlib
from harness.report.html import render_html
from harness.report.latex import render_latex
from harness.report.markdown import render_markdown
from harness.report.text import render_text
from harness.report.tune import render_tune_html, render_tune_markdown
from harness.report.view import ReportView
from harness.store.read import ResultsFolder, open_results
from harness.report.tune_view import TuneView, is_tune_folder

__all__ = ["REPORT_FORMATS", "TEXT", "ReportFormat", "check_formats", "format_for_path", "parse_formats",
           "render_report", "report_files", "tune_formats"]

#: The format of a result's ``report()`` that is its printed text (``bench compare``'s or ``bench tune``'s);
#: a comparison's folder always keeps it (``report.txt``), whatever else it is asked for.
TEXT = "text"


def _text_file(view: ReportView) -> str:
    """``report.txt``: the whole text report, ending in a newline."""
    return render_text(view) + "\n"


@dataclass(frozen=True)
class ReportFormat:
    """One report format: its ``file`` inside a results folder, the ``suffixes`` of an output file
    that imply it, what it is, its renderer, whether it draws charts (needs matplotlib), and its
    renderer of a tune folder (None: the format has none)."""

    name: str
    file: str
    suffixes: tuple[str, ...]
    description: str
    render: Callable[[ReportView], str]
    charts: bool = False
    render_tune: Callable[[TuneView], str] | None = None


#: Format name -> its declaration, in the order they are listed.
REPORT_FORMATS: dict[str, ReportFormat] = {
    f.name: f for f in (
        ReportFormat("html", "report.html", (".html", ".htm"), "one self-contained page with charts (needs the "
                     "report extra)", render_html, charts=True, render_tune=render_tune_html),
        ReportFormat("md", "report.md", (".md", ".markdown"), "GitHub-flavoured Markdown for a pull-request "
                     "comment", render_markdown, render_tune=render_tune_markdown),
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


def tune_formats() -> list[str]:
    """The formats that can report a tune folder."""
    return [name for name, declared in REPORT_FORMATS.items() if declared.render_tune is not None]


def _not_for_tune(name: str, where: str) -> RetbenchError:
    return RetbenchError(f"{where}: the {name} report is not available for tune folders (it is a table of compared "
                         f"systems). Fix: use {' or '.join(tune_formats())}")


def check_formats(formats: Sequence[str], *, tune: bool = False, parameter: str = "reports") -> None:
    """Raise now, before any work, when a format needs what is not installed (matplotlib), or,
    with ``tune``, when it cannot report a tune folder (the error names ``parameter``, which was
    given the formats)."""
    for name in formats:
        if tune and REPORT_FORMATS[name].render_tune is None:
            raise _not_for_tune(name, f"`{parameter}={name}`")
        if REPORT_FORMATS[name].charts:
            require_matplotlib(f"the {name} report's charts")


def format_for_path(path: str | PathLike[str]) -> str | None:
    """The format an output file's suffix implies (``report.md`` -> ``md``), or None."""
    suffix = Path(path).suffix.lower()
    for name, declared in REPORT_FORMATS.items():
        if suffix in declared.suffixes:
            return name
    return None


def _renderer(results: ResultsFolder, names: Sequence[str]) -> Callable[[str], str]:
    """Format name -> its text, from one reading of the folder, by the renderers of its kind."""
    if is_tune_folder(results):
        renderers: dict[str, Callable[[TuneView], str]] = {}
        for name in names:
            render_tune = REPORT_FORMATS[name].render_tune
            if render_tune is None:
                raise _not_for_tune(name, f"{results.path} (written by bench tune)")
            renderers[name] = render_tune
        tune_view = TuneView(results)
        return lambda name: renderers[name](tune_view)
    view = ReportView(results)
    return lambda name: REPORT_FORMATS[name].render(view)


def render_report(folder: ResultsFolder | str | PathLike[str], format: str) -> str:
    """The report of the results folder ``folder`` in ``format`` (a key of :data:`REPORT_FORMATS`)."""
    (name,) = parse_formats([format])
    check_formats([name])
    results = folder if isinstance(folder, ResultsFolder) else open_results(folder)
    return _renderer(results, [name])(name)


def report_files(folder: ResultsFolder | str | PathLike[str], formats: Sequence[str]) -> Mapping[str, str]:
    """File name inside the results folder -> text, for each of ``formats``, from one reading of it."""
    names = parse_formats(formats)
    check_formats(names)
    results = folder if isinstance(folder, ResultsFolder) else open_results(folder)
    render = _renderer(results, names)
    return {REPORT_FORMATS[name].file: render(name) for name in names}
