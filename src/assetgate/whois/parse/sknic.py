"""SK-NIC (.sk): ``Key: value`` objects, the contacts and the registrar referenced by handle.

The domain object (``Domain:``, ``Created:``, ``Valid Until:`` = the expiry, ``Updated:``,
``Domain Status:``, ``Nameserver:``) names the registrant and the registrar by handle
(``Domain registrant: H``, ``Registrar: H``); the objects after it start with the same label
and the handle and carry ``Name:``, ``Organization:``, ``Street:``, ``City:``, ``Postal Code:``,
``Country Code:``, ``Phone:``, ``Email:``. The record takes the registrar's and the contacts'
names from those objects (the handles stay in ``raw``), the handle only when the answer has no
object for it. The layout before 2017 (``Domain-name``, ``Valid-date``, ``dns_name``,
``Admin-name`` … with spaces instead of a colon) is read by the same table.
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.blocks import Block, first, pair
from assetgate.whois.parse.common import Builder, ContactBuilder

ROLES: Final = {
    "domain registrant": "registrant",
    "registrant": "registrant",
    "registrar": "registrar",
    "administrative contact": "admin",
    "admin contact": "admin",
    "technical contact": "tech",
    "tech contact": "tech",
}
DOMAIN: Final = {
    "domain": "domain",
    "domain-name": "domain",
    "created": "created",
    "valid until": "expires",
    "valid-date": "expires",
    "updated": "updated",
    "last-update": "updated",
    "domain status": "status",
    "domain-status": "status",
    "nameserver": "ns",
    "dns_name": "ns",
    "dnssec": "dnssec",
}
CONTACT: Final = {
    "name": "name",
    "organization": "organization",
    "street": "street",
    "city": "city",
    "postal code": "postal_code",
    "state/province": "state",
    "country code": "country",
    "phone": "phone",
    "email": "email",
}
OLD_ROLES: Final = {"admin": "admin", "tech": "tech"}
OLD_CONTACT: Final = {"name": "name", "address": "street", "telephone": "phone", "email": "email"}
_OLD_PAIR: Final = re.compile(r"^([A-Za-z][\w.-]*)\s{2,}(\S.*?)\s*$")


def objects(text: str) -> list[Block]:
    out: list[Block] = [[]]
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            if out[-1]:
                out.append([])
            continue
        if stripped.startswith("%"):
            continue
        found = pair(line)
        if found is None:
            old = _OLD_PAIR.match(stripped)
            found = (old[1].lower(), old[2]) if old else None
        if found is not None:
            out[-1].append(found)
    return [block for block in out if block]


def parse_sknic(text: str) -> Builder:
    builder = Builder()
    blocks = objects(text)
    domain = next((b for b in blocks if first(b, "domain", "domain-name")), None)
    if domain is None:
        return builder
    named: dict[tuple[str, str], Block] = {}  # (role, handle) -> its object
    for block in blocks:
        role = ROLES.get(block[0][0])
        if block is not domain and role is not None:
            named[(role, block[0][1].upper())] = block
    for key, value in domain:
        target = DOMAIN.get(key)
        if target == "domain":
            builder.set_domain(value)
        elif target in ("created", "updated", "expires"):
            builder.set_date(target, value)
        elif target == "status":
            builder.add_status(value)
        elif target == "ns":
            builder.add_name_server(value)
        elif target == "dnssec":
            builder.set_dnssec(value)
        elif key in ROLES:
            _referenced(builder, ROLES[key], value, named.get((ROLES[key], value.upper())))
        elif "-" in key and key.split("-")[0] in OLD_ROLES:
            prefix, _, rest = key.partition("-")
            if rest in OLD_CONTACT:
                builder.contact(OLD_ROLES[prefix]).set(OLD_CONTACT[rest], value)
    for (role, handle), block in named.items():  # objects the domain does not reference
        done = "name" in builder.registrar if role == "registrar" else role in builder.contacts
        if not done:
            _referenced(builder, role, handle, block)
    return builder


def _referenced(builder: Builder, role: str, handle: str, block: Block | None) -> None:
    if role == "registrar":
        name = first(block, "name", "organization") if block else None
        builder.set_registrar("name", name or handle)
        if block:
            builder.set_registrar("url", first(block, "url", "website"))
        return
    if block is not None:
        _contact(builder.contact(role), block)


def _contact(contact: ContactBuilder, block: Block) -> None:
    for key, value in block[1:]:
        if key in CONTACT:
            contact.set(CONTACT[key], value)
