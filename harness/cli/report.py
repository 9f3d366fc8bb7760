"""``bench report``: a report of a stored results folder, as HTML, Markdown, LaTeX or the text
``bench compare`` printed (a tune folder's as HTML or Markdown).

A thin adapter over :func:`harness.report.formats.render_report`: it reads the folder, renders it
and prints the report, or writes it to ``-o FILE`` through a temporary file in the same folder (a
reader never sees half a report, and an error leaves nothing). The report is a pure function of the
folder: the same as ``bench compare --report`` wrote into it, and as ``result.report(format)``.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from corpora import RetbenchError
from harness.cli import ACCEPT_EDITED_HELP, PathParameter, warn
from harness.report.formats import REPORT_FORMATS, check_formats, format_for_path, render_report
from harness.store.read import open_results
from harness.suite.report import render_suite_report
from harness.suite.store import is_suite_folder, open_suite

_DEFAULT = "html"


def _check_output(path: Path) -> None:
    """Before any work: ``-o`` names a file (not a folder) in a folder that exists and can be written to."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise RetbenchError(f"-o {path}: is a folder. Fix: name a file, e.g. {path / 'report.html'}")
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise RetbenchError(f"-o {path}: {folder} is not a folder you can write to. Fix: create it, or name a file "
                            "in a folder you can write to")


def _write(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file beside it, renamed into place."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise RetbenchError(f"-o {path}: cannot be written ({exc.strerror or exc}). Fix: name a file in a folder "
                            "you can write to") from None


@click.command("report")
@click.argument("run_dir", metavar="RUN_DIR", type=PathParameter(path_type=Path))
@click.option("--format", "report_format", type=click.Choice(list(REPORT_FORMATS)), default=None,
              help="; ".join(f"{f.name}: {f.description}" for f in REPORT_FORMATS.values())
                   + " [default: from the suffix of -o ("
                   + ", ".join(s for f in REPORT_FORMATS.values() for s in f.suffixes)
                   + f"), else {_DEFAULT}].")
@click.option("-o", "--output", type=PathParameter(dir_okay=True, path_type=Path), default=None,
              help="Write the report to this file instead of printing it.")
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
        _check_output(output)
    check_formats([name])
    folder = open_results(run_dir, accept_edited=accept_edited, say=warn)
    if is_suite_folder(folder):  # a suite folder (bench compare with several --corpus)
        text = render_suite_report(open_suite(folder), name)[1]
    else:
        text = render_report(folder, name)
    if output is None:
        click.echo(text, nl=False)
        return
    _write(output, text)
    click.echo(f"{name} report: {output}", err=True)
