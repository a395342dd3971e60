"""Rules for talking to upstream servers: the one failure type and the SSRF guard.

A whois answer can name any host as the next server to ask (``Registrar WHOIS Server:``,
``refer:``, an RDAP ``related`` link or redirect). Following such a name blindly turns the
service into a proxy into the operator's network (richardpenman/whois#312), so every server that
the operator did not name must resolve to public addresses only, and the connection is then made
to the address that was checked (no second resolution a DNS-rebinding answer could change).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Final

# Ports an untrusted server may use: whois and HTTPS.
PUBLIC_PORTS: Final = frozenset({43, 443})


class FetchError(Exception):
    """An upstream could not give an answer; ``reason`` is safe to show a client."""

    def __init__(
        self, reason: str, *, rate_limited: bool = False, retry_after_s: int | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.rate_limited = rate_limited
        self.retry_after_s = retry_after_s  # what the upstream's Retry-After asked, if anything


class RefusedServer(FetchError):
    """The server may not be contacted (private address, odd port, IP literal)."""


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


async def public_address(host: str, port: int) -> str:
    """The first address of ``host`` after checking that all its addresses are public."""
    if port not in PUBLIC_PORTS:
        raise RefusedServer(f"server port {port} is not allowed")
    if is_ip_literal(host):
        raise RefusedServer("server given as an IP address is not allowed")
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except (OSError, UnicodeError):
        raise FetchError("server name does not resolve") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses or not all(is_public(a) for a in addresses):
        raise RefusedServer("server resolves to a non-public address")
    return addresses[0]
