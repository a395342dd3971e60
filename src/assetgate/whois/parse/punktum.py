"""Punktum dk / DK Hostmaster (.dk): ``Key: value`` lines under bare section names (pure).

The domain's lines come first (``Domain``, ``DNS`` = the domain name again in DNS form, not a
name server, ``Registered``, ``Expires``, ``DNSSEC``, ``Status``); then sections headed by a
line without a colon: ``Registrant`` and ``Administrator`` (``Handle``, ``Name``,
``Address`` lines, ``Postalcode``, ``City``, ``Country``, ``Phone``) and
``Nameservers`` (``Hostname`` and its ``Handle`` per server). Handles stay in ``raw``.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.blocks import pair
from assetgate.whois.parse.common import Builder

SECTIONS: Final = {
    "registrant": "registrant",
    "administrator": "admin",
    "technical contact": "tech",
    "nameservers": "ns",
}
DOMAIN: Final = {"registered": "created", "expires": "expires", "updated": "updated"}
CONTACT: Final = {
    "name": "name",
    "address": "street",
    "postalcode": "postal_code",
    "city": "city",
    "country": "country",
    "phone": "phone",
    "email": "email",
}


def parse_punktum(text: str) -> Builder:
    builder = Builder()
    section = "domain"
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        found = pair(line)
        if found is None:
            section = SECTIONS.get(stripped.lower(), "other")
            continue
        key, value = found
        if section == "domain":
            _domain(builder, key, value)
        elif section == "ns" and key == "hostname":
            builder.add_name_server(value)
        elif section in ("registrant", "admin", "tech") and key in CONTACT:
            builder.contact(section).set(CONTACT[key], value)
    return builder


def _domain(builder: Builder, key: str, value: str) -> None:
    if key == "domain":
        builder.set_domain(value)
    elif key in DOMAIN:
        builder.set_date(DOMAIN[key], value)
    elif key == "status":
        builder.add_status(value)
    elif key == "dnssec":
        builder.set_dnssec(value)
    elif key == "registrar":
        builder.set_registrar("name", value)
