"""Which ``Host`` headers ``bench serve`` and ``bench judge`` answer: their defence against DNS rebinding.

A web page can point a name of its own at 127.0.0.1 (DNS rebinding); the browser then sends the
page's requests to the local server and lets the page read the answers, since to the browser they
come from the page's own site. Such a request still names the page's site in its ``Host`` header,
so a server that answers only to its own names cannot be read this way.

Both servers answer to the loopback names (``localhost``, any address in 127.0.0.0/8, ``[::1]``;
any port), which no other site can take; ``bench serve`` also to the names it is given: the address
it binds when that is not a loopback one, and any name allowed explicitly. Any other ``Host``, a
malformed one, or a request without exactly one, is refused (:class:`AllowedHosts` decides;
:class:`harness.web.guards.HostCheck` answers 400). Plain Python, no web framework.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

__all__ = ["AllowedHosts", "host_name", "is_loopback"]

#: A DNS name: dot-separated labels of letters, digits, ``-`` and ``_`` (lower case once normalised).
_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")
#: A ``Host`` header: a name or IPv4 address, or an IPv6 address in brackets; then an optional port.
_HEADER = re.compile(r"(?:\[(?P<ipv6>[^\[\]]+)\]|(?P<name>[^:\[\]]+))(?::[0-9]*)?")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``localhost``, 127.0.0.0/8, ``::1``).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0"), is_loopback("[::1]")
    (True, True, False, True)
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(value: str) -> str:
    """``value`` (a host name or address) in the form :class:`AllowedHosts` compares: a name in lower
    case, an address in its canonical form (IPv6 without brackets). A port, scheme, path or wildcard
    is a ``ValueError``: a name is allowed on every port, and only whole names are.

    >>> host_name("Evals.Example"), host_name("[0:0::1]"), host_name("192.0.2.7")
    ('evals.example', '::1', '192.0.2.7')
    """
    text = value.strip()
    try:
        return str(ipaddress.ip_address(text[1:-1] if text.startswith("[") and text.endswith("]") else text))
    except ValueError:
        pass
    name = text.lower()
    if not _NAME.fullmatch(name):
        raise ValueError(f"{value!r} is not a host name or address (no scheme, port, path or wildcard)")
    return name


def _header_host(header: str) -> str | None:
    """The host a ``Host`` header names, as :func:`host_name` writes it; None when it is malformed."""
    match = _HEADER.fullmatch(header)
    if match is None:
        return None
    if match["ipv6"] is not None:
        try:
            return str(ipaddress.IPv6Address(match["ipv6"]))
        except ValueError:
            return None
    try:
        return host_name(match["name"])
    except ValueError:
        return None


class AllowedHosts:
    """The ``Host`` headers a server answers: loopback ones on any port, and those naming ``names``.

    >>> hosts = AllowedHosts(["evals.example"])
    >>> [hosts.allows(h) for h in ("127.0.0.1:8000", "[::1]:80", "localhost", "EVALS.example:9", "evil.example")]
    [True, True, True, True, False]
    """

    def __init__(self, names: Iterable[str] = ()):
        self.names = frozenset(host_name(name) for name in names)

    def allows(self, header: str | None) -> bool:
        """Whether to answer a request whose ``Host`` header is ``header`` (None: none, or several)."""
        if header is None:
            return False
        host = _header_host(header)
        return host is not None and (host in self.names or is_loopback(host))
