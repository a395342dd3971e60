"""Bind the listening socket before anything is printed, so a busy port is one line and exit 2.

uvicorn binds inside ``Server.run`` after the banner and logs a traceback-shaped error; binding
here first lets ``assetgate serve`` refuse like every other start-up error, naming the setting.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping


class ListenError(Exception):
    """The address cannot be listened on; the message names the setting to change."""


def bind(host: str, port: int, named: Mapping[str, str]) -> socket.socket:
    """A bound, inheritable socket (uvicorn's workers take it over), or ``ListenError``.

    ``named`` maps ``host``/``port`` to the flag or variable the value came from.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    shown = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
    sock = socket.socket(family=family)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ListenError(_describe(exc, shown, named)) from None
    sock.set_inheritable(True)
    return sock


def _describe(exc: OSError, shown: str, named: Mapping[str, str]) -> str:
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return f"{named['host']}: cannot listen on {shown}: no such local address"
    if exc.errno == errno.EADDRINUSE:
        return f"{named['port']}: cannot listen on {shown}: address already in use"
    if exc.errno == errno.EACCES:
        return f"{named['port']}: cannot listen on {shown}: permission denied (ports below 1024)"
    reason = (exc.strerror or type(exc).__name__).lower()
    return f"{named['port']}: cannot listen on {shown}: {reason}"
