"""Which addresses an origin fetch may connect to: public unicast only, unless the operator says so.

The host of a configured origin is resolved first, every address it resolves to is checked, and
the connection goes to the checked address (the name is sent as ``Host`` and TLS SNI): a second
lookup that answers differently (DNS rebinding) never gets a say. Refused, as imgproxy 4.0.12
hardened its list: loopback, private (RFC 1918, ULA), link-local, CGNAT (100.64/10), multicast,
unspecified, reserved and documentation ranges, and the IPv6 forms that carry an IPv4 address
inside (IPv4-mapped, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32)
when the address inside is one of those or the form cannot be checked (docs/sources.md).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Final

import anyio

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT: Final = ipaddress.ip_network("100.64.0.0/10")
_NAT64: Final = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_SIX_TO_FOUR: Final = ipaddress.ip_network("2002::/16")
_TEREDO: Final = ipaddress.ip_network("2001::/32")


class Refused(Exception):
    """The origin's address is not one a fetch may reach (the message names no address)."""


def _public_v4(address: ipaddress.IPv4Address) -> bool:
    return address.is_global and address not in _CGNAT and not address.is_multicast


def public(address: IPAddress) -> bool:
    """Whether ``address`` is a public unicast address, looking inside IPv6 transition forms."""
    if isinstance(address, ipaddress.IPv4Address):
        return _public_v4(address)
    if address.ipv4_mapped is not None:
        return _public_v4(address.ipv4_mapped)
    if any(address in net for net in _NAT64):
        return _public_v4(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address in _SIX_TO_FOUR:
        return _public_v4(ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF))
    if address in _TEREDO:
        return False  # the client address inside is obfuscated and often private: never
    return address.is_global and not address.is_multicast


async def resolve(host: str, port: int, *, allow_private: bool) -> str:
    """The address to connect to for ``host``; ``Refused`` when it resolves to none or to one
    that is not public (every answer is checked, not only the first)."""
    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise Refused("its host name does not resolve") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]
    if not addresses:
        raise Refused("its host name does not resolve")
    if not allow_private and not all(public(address) for address in addresses):
        raise Refused(
            "it resolves to a private or reserved address (ASSETGATE_ORIGIN_ALLOW_PRIVATE=true "
            "allows it)"
        )
    return str(addresses[0])


def literal_private(host: str) -> bool:
    """``host`` is ``localhost`` or an address the guard refuses, known without a lookup."""
    if host.lower().rstrip(".") == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        return not public(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return False  # a name: only its lookup can tell
