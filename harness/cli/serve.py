"""``bench serve``: the evals API and dashboard over a folder of results folders, read-only.

A thin adapter over :func:`harness.serve.app.create_app`, run by uvicorn. FastAPI and uvicorn are
the optional ``serve`` extra: without them the command says how to install it (exit 2). It binds
to the loopback address unless ``--host`` names another, and then warns that whoever reaches that
address can read every run under ``--results``. It answers only requests addressed to a loopback
name, to ``--host`` and to each ``--allowed-host`` (against DNS rebinding: :mod:`harness.web.hosts`).

The socket is bound here, before anything is announced, and handed to uvicorn: a port already in
use is one ``error:`` line naming the address and the fix (exit 2), not uvicorn's log and exit 3.
uvicorn speaks HTTP through :class:`harness.web.protocol.BoundedH11Protocol`: a client that does
not send a whole request within its time limit (one that sends less than its ``Content-Length``,
or trickles its headers) is dropped.
"""

from __future__ import annotations

import errno
import os
import socket
from importlib.util import find_spec
from pathlib import Path

import click

from harness.cli import ACCEPT_EDITED_HELP, PathParameter
from harness.cli.declared import as_flags
from harness.errors import RetbenchError
from harness.web.hosts import host_name, is_loopback

__all__ = ["command", "is_loopback", "listen", "missing_dependency"]

#: The packages the serve extra brings that ``bench serve`` and ``bench judge`` import.
NEEDED = ("fastapi", "uvicorn")
INSTALL_HINT = "pip install 'retbench[serve]'"
LOOPBACK = "127.0.0.1"


def missing_dependency(command: str = "bench serve") -> str | None:
    """What must be installed before ``command`` (``bench serve`` or ``bench judge``: the web stack,
    :mod:`harness.web`) can run, or None. Imports nothing."""
    absent = [name for name in NEEDED if find_spec(name) is None]
    if not absent:
        return None
    return (f"{command} needs {' and '.join(absent)}, which {'is' if len(absent) == 1 else 'are'} not installed. "
            f"Fix: {INSTALL_HINT}")


def listen(host: str, port: int, command: str = "bench serve") -> socket.socket:
    """A TCP socket bound to ``host`` (a name or address; IPv6 with or without brackets) and ``port``,
    listening, for ``command``. A failure is a :class:`RetbenchError` naming the address and the fix."""
    address = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    shown = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    family = socket.AF_INET6 if ":" in address else socket.AF_INET  # as uvicorn chooses: localhost is 127.0.0.1
    try:
        found = socket.getaddrinfo(address, port, family=family, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise RetbenchError(f"cannot listen on {shown}: {exc.strerror}. Fix: name an address of this machine "
                            f"with --host (the default, {LOOPBACK}, is reachable from it only)") from None
    family, kind, protocol, _, where = found[0]
    sock = socket.socket(family, kind, protocol)
    try:
        if os.name != "nt":  # as uvicorn does: a restart may bind while the last run's connections wait out
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise RetbenchError(f"cannot listen on {shown}: the port is in use (another {command}, or another "
                                f"server). Fix: stop that one, or choose another port with --port (--port 0 "
                                "takes any free one)") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise RetbenchError(f"cannot listen on {shown}: {exc.strerror}. Fix: choose a port of 1024 or above "
                                "with --port") from None
        raise RetbenchError(f"cannot listen on {shown}: {exc.strerror or exc}. Fix: name an address of this "
                            f"machine with --host (the default, {LOOPBACK}, is reachable from it only)") from None
    return sock


def _allowed(names: tuple[str, ...]) -> list[str]:
    allowed = []
    for name in names:
        try:
            allowed.append(host_name(name))
        except ValueError as exc:
            raise RetbenchError(f"--allowed-host {name!r}: {exc}. Fix: give the name or address clients use, "
                                "without scheme or port, e.g. --allowed-host evals.example (it covers every "
                                "port)") from None
    return allowed


def served_fix(message: str) -> str:
    """A run's error as the dashboard and the API show it: the library's ```accept_edited=True``` named as
    the flag to restart the server with.

    >>> served_fix("was edited; if on purpose, read it as it is with `accept_edited=True`")
    'was edited; if on purpose, read it as it is with bench serve --accept-edited'
    """
    return as_flags(message, {"accept_edited": "bench serve --accept-edited"})


@click.command("serve")
@click.option("--results", type=PathParameter(path_type=Path), default=Path("results"), show_default=True,
              help="The folder whose results folders are served (bench compare's --out), or one results folder.")
@click.option("--host", default=LOOPBACK, show_default=True,
              help="Address to bind; anything but a loopback address is reachable by others (a warning says so).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free one).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Also answer requests addressed to NAME (a host name or address, any port; repeatable). "
                   "Only loopback names and --host are answered otherwise, so no web page can read the runs "
                   "through DNS rebinding.")
@click.option("--accept-edited", is_flag=True, help=ACCEPT_EDITED_HELP)
def command(results: Path, host: str, port: int, allowed_hosts: tuple[str, ...], accept_edited: bool) -> None:
    """Serve the metrics card's evals API (/api/v1/evals) and the dashboard (/) over stored results, read-only.

    New results folders appear without a restart. Needs the serve extra.
    """
    missing = missing_dependency()
    if missing is not None:
        raise RetbenchError(missing)
    if not results.is_dir():
        raise RetbenchError(f"--results {results}: {'is not a folder' if results.exists() else 'no such folder'}. "
                            "Fix: name the folder bench compare wrote into (its --out, default results)")
    allowed = _allowed(allowed_hosts)
    try:
        allowed.append(host_name(host))  # requests addressed to the bound address are this server's own
    except ValueError:
        pass  # not a name a Host header could carry: binding it fails below, or it is answered by loopback names
    from harness.serve.app import create_app
    from harness.web.protocol import uvicorn_server

    app = create_app(results, allowed_hosts=allowed, accept_edited=accept_edited, explain=served_fix)
    sock = listen(host, port)  # bound before anything is announced: a port in use is one error line
    if not is_loopback(host):
        click.echo(f"warning: serving on {host}: anyone who can reach this address can read every run under "
                   f"{results}. Fix: leave --host at {LOOPBACK} unless that is intended", err=True)
    bound = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    click.echo(f"bench serve: {results.resolve()} on http://{shown}:{bound}/ (Ctrl-C stops)", err=True)
    try:
        uvicorn_server(app, sock).run(sockets=[sock])
    finally:
        sock.close()
