"""FRED (CZ.NIC's registry software: .cz, .ve, .cr, and the other registries that run it) (pure).

The answer is RPSL-like objects separated by blank lines: the domain object (``domain:``,
``registrant:`` and ``admin-c:`` handles, ``nsset:``/``keyset:`` handles, ``registrar:`` handle,
``status:`` sentences, ``registered: 05.06.2002 20:00:00``, ``changed:``, ``expire: 06.05.2021``),
then one ``contact:`` object per handle (``org:``, ``name:``, ``address:`` lines, ``phone:``,
``e-mail:``, and the contact's *own* ``created:``/``changed:``, never the domain's), the
``nsset:`` object (``nserver: host (addresses)``, ``tech-c:``) and the ``keyset:`` object.
Older FRED answers (.fo) give the name servers as an object without a handle and a contact's
address as ``street:``/``city:``/``postal code:``/``country:`` fields.

``address:`` lines come in a fixed order: street lines, the city, the postal code, an optional
state or province, and the country code last (``1600 Amphitheatre Parkway`` / ``Mountain View``
/ ``94043`` / ``CA`` / ``US``). Status sentences (``Sponsoring registrar change forbidden``) are
kept whole: FRED never lists two statuses on one line. The registrar is a handle
(``REG-MARKMONITOR``, ``NIC-VE``), the only name the answer gives. A ``keyset`` means signed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from assetgate.whois.parse.blocks import Block, first
from assetgate.whois.parse.common import Builder, ContactBuilder
from assetgate.whois.parse.rpsl import split_blocks
from assetgate.whois.record import SIGNED

DOMAIN_DATES: Final = {"registered": "created", "changed": "updated", "expire": "expires"}
ROLES: Final = {"registrant": "registrant", "admin-c": "admin", "tech-c": "tech"}
CONTACT_FIELDS: Final = {
    "org": "organization",
    "name": "name",
    "phone": "phone",
    "e-mail": "email",
    "email": "email",
    "street": "street",
    "city": "city",
    "postal code": "postal_code",
    "sp": "state",
    "country": "country",
}
_COUNTRY: Final = re.compile(r"^[A-Z]{2}$")
_POSTAL: Final = re.compile(r"^[A-Z]{0,3}[- ]?\d[\dA-Z -]{1,9}$")
SNIFF: Final = re.compile(
    r"^registered:\s+\d{2}\.\d{2}\.\d{4}|^% Whoisd Server Version", re.MULTILINE
)


def parse_fred(text: str) -> Builder:
    builder = Builder()
    blocks = split_blocks(text)
    domain = next((b for b in blocks if b and b[0][0] == "domain"), None)
    if domain is None:
        return builder
    handles: dict[str, list[str]] = {}
    nssets: set[str] = set()
    keysets: set[str] = set()
    for key, value in domain:
        if key == "domain":
            builder.set_domain(value)
        elif key in ROLES and value:
            handles.setdefault(value.upper(), []).append(ROLES[key])
        elif key == "nsset" and value:
            nssets.add(value.upper())
        elif key == "keyset" and value:
            keysets.add(value.upper())
        elif key == "registrar":
            builder.set_registrar("name", value)
        elif key == "status":
            builder.add_status(value, split=False)
        elif key in DOMAIN_DATES:
            builder.set_date(DOMAIN_DATES[key], value)
    for block in blocks:
        kind, handle = block[0][0], block[0][1].upper()
        if (kind == "nsset" and handle in nssets) or kind == "nserver":  # older: no handle
            for key, value in block:
                if key == "nserver":
                    builder.add_name_server(value)
                elif key == "tech-c" and value:
                    handles.setdefault(value.upper(), []).append("tech")
        elif kind == "keyset" and handle in keysets and first(block, "dnskey", "ds"):
            builder.set_dnssec(SIGNED)
    contacts = {b[0][1].upper(): b for b in blocks if b[0][0] == "contact" and b[0][1]}
    for handle, roles in handles.items():
        for role in dict.fromkeys(roles):
            if handle in contacts:
                _contact(builder.contact(role), contacts[handle])
    return builder


def _contact(contact: ContactBuilder, block: Block) -> None:
    for key, value in block[1:]:
        field = CONTACT_FIELDS.get(key)
        if field is not None:
            contact.set(field, value)
    street, city, postal_code, state, country = split_fred_address(
        [v for k, v in block if k == "address" and v.strip()]
    )
    for line in street:
        contact.set("street", line)
    contact.set("city", city)
    contact.set("postal_code", postal_code)
    contact.set("state", state)
    contact.set("country", country)


def split_fred_address(
    lines: Sequence[str],
) -> tuple[list[str], str | None, str | None, str | None, str | None]:
    """Street lines, city, postal code, state, country: FRED's order, read from the end.

    The country code is the last line; the postal code the last postal-shaped line before it
    (never the first, ``1600 Amphitheatre Parkway`` is a street); the line before the postal
    code is the city and a line between it and the country the state. Without a postal code
    the last line left is the city.
    """
    rest = [line.strip() for line in lines]
    country = rest.pop() if rest and _COUNTRY.match(rest[-1]) else None
    at = next((i for i in range(len(rest) - 1, 0, -1) if _POSTAL.match(rest[i])), None)
    if at is None:
        city = rest.pop() if len(rest) >= 2 else None
        return rest, city, None, None, country
    state = " ".join(rest[at + 1 :]) or None
    return rest[: at - 1], rest[at - 1], rest[at], state, country
