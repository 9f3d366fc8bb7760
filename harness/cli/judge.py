"""``bench judge``: a judging page on loopback for the pairs of a pool (``bench pool``'s TSV).

The page is :func:`harness.judgments.judge_page.create_app`, run by uvicorn on a socket bound to
127.0.0.1 here (a port in use is one ``error:`` line), as ``bench serve`` runs its own
(:func:`harness.web.protocol.uvicorn_server`). FastAPI and uvicorn are the ``serve`` extra: without
them the command says how to install it (exit 2) before it reads anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from corpora import DEFAULT_ANALYZER, get_analyzer, load_dataset
from corpora.output_files import check_output
from harness.cli import OutputPath, PathParameter
from harness.cli.serve import LOOPBACK, listen, missing_dependency
from harness.errors import RetbenchError
from harness.judgments.judge_app import JudgingSession, read_pool


@click.command("judge")
@click.argument("pool", type=PathParameter(path_type=Path, dir_okay=False))
@click.option("--corpus", required=True, help="The corpus the pool was made from (a bundled name or a folder).")
@click.option("--out", "out", required=True, type=OutputPath(),
              help="The judgments file: TREC qrels lines `qid 0 docid grade`, appended; an existing one resumes.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port on 127.0.0.1 (0: any free one).")
def command(pool: Path, corpus: str, out: Path, port: int) -> None:
    """Judge the pairs of POOL in a browser: the query and the document (query terms highlighted),
    the grade scale 0-3, the progress. Keys 0-3 (or the buttons) record the shown pair's grade and
    show the next; u undoes the last judgment this server made. Each judgment is appended to --out
    and fsynced before the next pair shows, so killing the server loses nothing; restarted, it
    resumes at the first unjudged pair. One server per --out: a second one on the same file is
    refused. Ctrl-C stops it. Needs the serve extra.
    """
    missing = missing_dependency("bench judge")
    if missing is not None:
        raise RetbenchError(missing)
    # where the grades land, before anything is loaded: a regular file (or a link to one) outside any
    # results folder; never a stream, a device or /dev/null, which would lose every grade
    check_output(out, "--out", appends=True, inputs={"the pool": pool})
    pairs = read_pool(pool)
    dataset = load_dataset(corpus)
    from harness.judgments.judge_page import create_app
    from harness.web.protocol import uvicorn_server

    with JudgingSession(pairs, dataset, out, get_analyzer(DEFAULT_ANALYZER)) as session:  # locks --out
        for warning in session.warnings:
            click.echo(f"warning: {warning}", err=True)
        sock = listen(LOOPBACK, port, command="bench judge")  # loopback only: the page writes
        try:
            address = f"http://{LOOPBACK}:{sock.getsockname()[1]}/"
            session.announce(address)  # a refused second server names it
            state = session.state()
            click.echo(f"judging page: {address}  ({state['done']} of {state['total']} judged; judgments in {out})")
            sys.stdout.flush()  # a reader of a pipe (a script, a test) learns the address now, not at exit
            uvicorn_server(create_app(session), sock).run(sockets=[sock])
        finally:
            sock.close()
