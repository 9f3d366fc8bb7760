"""``bench serve``: the evals API and dashboard over a folder of results folders, read-only.

A thin adapter over :func:`harness.serve.app.create_app`, run by uvicorn. FastAPI and uvicorn are
the optional ``serve`` extra: without them the command says how to install it (exit 2). It binds
to the loopback address unless ``--host`` names another, and then warns that whoever reaches that
address can read every run under ``--results``.
"""

from __future__ import annotations

import ipaddress
from importlib.util import find_spec
from pathlib import Path

import click

from harness.cli import ACCEPT_EDITED_HELP
from harness.errors import RetbenchError

#: The packages the serve extra brings that the command imports.
NEEDED = ("fastapi", "uvicorn")
INSTALL_HINT = "pip install 'retbench[serve]'"
LOOPBACK = "127.0.0.1"


def missing_dependency() -> str | None:
    """What must be installed before ``bench serve`` can run, or None. Imports nothing."""
    absent = [name for name in NEEDED if find_spec(name) is None]
    if not absent:
        return None
    return (f"bench serve needs {' and '.join(absent)}, which {'is' if len(absent) == 1 else 'are'} not installed. "
            f"Fix: {INSTALL_HINT}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``localhost``, 127.0.0.0/8, ``::1``).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0"), is_loopback("::1")
    (True, True, False, True)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command("serve")
@click.option("--results", type=click.Path(path_type=Path), default=Path("results"), show_default=True,
              help="The folder whose results folders are served (bench compare's --out), or one results folder.")
@click.option("--host", default=LOOPBACK, show_default=True,
              help="Address to bind; anything but a loopback address is reachable by others (a warning says so).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on.")
@click.option("--accept-edited", is_flag=True, help=ACCEPT_EDITED_HELP)
def command(results: Path, host: str, port: int, accept_edited: bool) -> None:
    """Serve the metrics card's evals API (/api/v1/evals) and the dashboard (/) over stored results, read-only.

    New results folders appear without a restart. Needs the serve extra.
    """
    missing = missing_dependency()
    if missing is not None:
        raise RetbenchError(missing)
    if not results.is_dir():
        raise RetbenchError(f"--results {results}: {'is not a folder' if results.exists() else 'no such folder'}. "
                            "Fix: name the folder bench compare wrote into (its --out, default results)")
    if not is_loopback(host):
        click.echo(f"warning: serving on {host}: anyone who can reach this address can read every run under "
                   f"{results}. Fix: leave --host at {LOOPBACK} unless that is intended", err=True)
    import uvicorn

    from harness.serve.app import create_app

    click.echo(f"bench serve: {results.resolve()} on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    uvicorn.run(create_app(results, accept_edited=accept_edited), host=host, port=port, log_level="warning")
