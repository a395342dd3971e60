"""Which addresses an origin fetch may connect to: public unicast only, unless the operator says so.

The host of a configured origin is resolved first, every address it resolves to is checked, and
the connection goes to the checked address (the name is sent as ``Host`` and TLS SNI): a second
lookup that answers differently (DNS rebinding) never gets a say. Refused, as imgproxy 4.0.12
hardened its list: loopback, private (RFC 1918, ULA), link-local, CGNAT (100.64/10), multicast,
unspecified, reserved and documentation ranges, and the IPv6 forms that carry an IPv4 address
inside (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, SIIT ::ffff:0:0:0/96, NAT64
64:ff9b::/96, 6to4 2002::/16) when the address inside is one of those; forms whose inside cannot
be checked (Teredo 2001::/32, local-use NAT64 64:ff9b:1::/48) are refused. An IPv6 address outside
all of these passes only inside global unicast 2000::/3 (``[::127.0.0.1]`` and
``[::ffff:0:7f00:1]`` both passed; Python 3.11's ``is_global`` calls them global). See
docs/sources.md.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Final

import anyio

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT: Final = ipaddress.ip_network("100.64.0.0/10")
#: Forms with an IPv4 address in their last 32 bits: mapped, compatible (deprecated, ::/96 also
#: holds :: and ::1), SIIT's IPv4-translated, the well-known NAT64 prefix.
_LOW_32: Final = (
    ipaddress.ip_network("::ffff:0:0/96"),
    ipaddress.ip_network("::/96"),
    ipaddress.ip_network("::ffff:0:0:0/96"),
    ipaddress.ip_network("64:ff9b::/96"),
)
_SIX_TO_FOUR: Final = ipaddress.ip_network("2002::/16")
#: Never: Teredo hides the client address inside, local-use NAT64 places it by its own prefix;
#: 3fff::/20 is documentation (RFC 9637, newer than Python 3.11's table).
_NEVER: Final = (
    ipaddress.ip_network("2001::/32"),
    ipaddress.ip_network("64:ff9b:1::/48"),
    ipaddress.ip_network("3fff::/20"),
)
_GLOBAL_UNICAST: Final = ipaddress.ip_network("2000::/3")


class AddressRefused(Exception):
    """The origin's address is not one a fetch may reach (the message names no address)."""


def _public_v4(address: ipaddress.IPv4Address) -> bool:
    return address.is_global and address not in _CGNAT and not address.is_multicast


def embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 transition form carries, or None when it is no such form."""
    if any(address in net for net in _LOW_32):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _SIX_TO_FOUR:
        return ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF)
    return None


def public(address: IPAddress) -> bool:
    """Whether ``address`` is a public unicast address, looking inside IPv6 transition forms."""
    if isinstance(address, ipaddress.IPv4Address):
        return _public_v4(address)
    inside = embedded_v4(address)
    if inside is not None:
        return _public_v4(inside)
    if any(address in net for net in _NEVER):
        return False
    return address in _GLOBAL_UNICAST and address.is_global and not address.is_multicast


async def resolve(host: str, port: int, *, allow_private: bool) -> str:
    """The address to connect to for ``host``; ``AddressRefused`` when it resolves to none or to one
    that is not public (every answer is checked, not only the first)."""
    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise AddressRefused("its host name does not resolve") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]
    if not addresses:
        raise AddressRefused("its host name does not resolve")
    if not allow_private and not all(public(address) for address in addresses):
        raise AddressRefused(
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
