"""``bench report``: a report of a stored results folder, as HTML, Markdown, LaTeX or the text
``bench compare`` printed (a tune folder's as HTML or Markdown).

A thin adapter over the renderers of each kind of folder (a comparison's:
:func:`harness.report.formats.render_report`; a tune's: :func:`harness.tuning.report.render_tune_report`;
a suite's: :func:`harness.suite.report.render_suite_report`): it reads the folder, renders it
and prints the report, or writes it to ``-o FILE`` through a temporary file in the same folder (a
reader never sees half a report, and an error leaves nothing). The report is a pure function of the
folder: the same as ``bench compare --report`` wrote into it, and as ``result.report(format)``
(a suite's report written with ``-o`` elsewhere links each collection's report through the path
from there to the suite folder: :mod:`harness.suite.view`).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

import harness.readings  # noqa: F401  (registers the built-in readings a folder's reports show)
from corpora.output_files import check_output, write_output
from harness.cli import ACCEPT_EDITED_HELP, OutputPath, PathParameter, warn
from harness.report.formats import REPORT_FORMATS, check_formats, format_for_path, render_report
from harness.store.read import open_results
from harness.suite.report import render_suite_report
from harness.suite.store import is_suite_folder, open_suite
from harness.suite.view import report_links
from harness.tuning.report import render_tune_report
from harness.tuning.view import is_tune_folder

_DEFAULT = "html"


@click.command("report")
@click.argument("run_dir", metavar="RUN_DIR", type=PathParameter(path_type=Path))
@click.option("--format", "report_format", type=click.Choice(list(REPORT_FORMATS)), default=None,
              help="; ".join(f"{f.name}: {f.description}" for f in REPORT_FORMATS.values())
                   + " [default: from the suffix of -o ("
                   + ", ".join(s for f in REPORT_FORMATS.values() for s in f.suffixes)
                   + f"), else {_DEFAULT}].")
@click.option("-o", "--output", type=OutputPath(), default=None,
              help="Write the report to this file instead of printing it (- prints it).")
@click.option("--accept-edited", is_flag=True, help=ACCEPT_EDITED_HELP)
def command(run_dir: Path, report_format: str | None, output: Path | None, accept_edited: bool) -> None:
    """Report a results folder of `bench compare` as HTML, Markdown, LaTeX or text (its report.txt),
    of `bench tune` as HTML (with the metric drawn over the grid) or Markdown, or a suite folder
    (`bench compare` with several --corpus) as HTML or Markdown.

    RUN_DIR is the folder a run wrote (results/<run-id>). The report is made from its files alone,
    so a past folder gives the report it gave when it was written.
    """
    name = report_format or (format_for_path(output) if output is not None else None) or _DEFAULT
    if output is not None:
        check_output(output, "-o", dash=True)
    check_formats([name])
    folder = open_results(run_dir, accept_edited=accept_edited, say=warn)
    if is_suite_folder(folder):  # a suite folder (bench compare with several --corpus)
        text = render_suite_report(open_suite(folder), name, links=report_links(_suite_from(folder.path, output)))[1]
    elif is_tune_folder(folder):  # a parameter search's folder (bench tune)
        text = render_tune_report(folder, name)
    else:
        text = render_report(folder, name)
    if output is None:
        click.echo(text, nl=False)
        return
    if write_output(output, text, "-o", dash=True).file is not None:
        click.echo(f"{name} report: {output}", err=True)


def _suite_from(suite: Path, output: Path | None) -> str:
    """The suite folder's path from the folder of ``-o`` (POSIX separators), through which a suite
    report written there links each collection's report; "" (the suite folder itself, as the report
    kept in it reads them) when it is printed."""
    if output is None or str(output) == "-":
        return ""
    try:
        relative = os.path.relpath(suite.resolve(), output.resolve().parent)
    except ValueError:  # another drive (Windows): no relative path
        return suite.resolve().as_uri()
    return "" if relative == "." else Path(relative).as_posix()
