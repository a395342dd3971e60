"""Dotted-label formats: ``created............: 30.6.2006`` (.fi, .ax), ``Domain
Name............:`` (.kz) (pure).

Labels are padded with dots up to a column; sections are introduced by a bare line
(``Holder``, ``Registrar``, ``Organization Using Domain Name``, ``Administrative
Contact/Agent``) and decide whose ``name``/``address``/``phone`` the following lines are.
Traficom (.fi) writes the postal code and the city as further ``address`` lines, so a
contact's address lines go through ``split_address`` (street lines, then code and city).
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.blocks import split_address
from assetgate.whois.parse.common import Builder
from assetgate.whois.parse.icann import apply_pair

_DOTTED: Final = re.compile(r"^\s*([^.:\n][^:\n]*?)\s*(?:\.{2,}\s*:?|:)\s*(.*?)\s*$")
_STATUS_NOTE: Final = re.compile(r"\s+-(?:\s|$)")
SECTION_ROLES: Final = (
    ("holder", "registrant"),
    ("registrant", "registrant"),
    ("organization using", "registrant"),
    ("admin", "admin"),
    ("tech", "tech"),
    ("billing", "billing"),
    ("registrar", "registrar"),
)
CONTACT_FIELDS: Final = {
    "name": "name",
    "organization name": "organization",
    "organization": "organization",
    "address": "address",
    "street address": "address",
    "postal": "postal_code",
    "postal code": "postal_code",
    "city": "city",
    "state": "state",
    "country": "country",
    "phone": "phone",
    "phone number": "phone",
    "email": "email",
    "email address": "email",
    "holder email": "email",
}
DOMAIN_FIELDS: Final = {
    "domain": "domain",
    "domain name": "domain",
    "status": "status",
    "domain status": "status",
    "created": "created",
    "domain created": "created",
    "expires": "expires",
    "modified": "updated",
    "last modified": "updated",
    "nserver": "ns",
    "primary server": "ns",
    "secondary server": "ns",
    "dnssec": "dnssec",
    "current registar": "registrar",
    "current registrar": "registrar",
    "registrar": "registrar",
}


def parse_dotted(text: str) -> Builder:
    builder = Builder()
    section: str | None = None
    addresses: dict[str, list[str]] = {}
    key = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("%", "#")):
            continue
        match = _DOTTED.match(line)
        if match is None or (":" not in line and ".." not in line):
            if line[:1].isspace() and DOMAIN_FIELDS.get(key) == "status":
                _apply(builder, key, stripped)  # .kz: one more status, indented, no label
                continue
            section, key = _section(stripped), ""
            continue
        key, value = " ".join(match[1].lower().split()), match[2]
        if section in ("registrant", "admin", "tech", "billing") and key in CONTACT_FIELDS:
            if CONTACT_FIELDS[key] == "address":
                addresses.setdefault(section, []).append(value)
            else:
                builder.contact(section).set(CONTACT_FIELDS[key], value)
        elif section == "registrar" and key in ("registrar", "name", "www", "website"):
            builder.set_registrar("name" if key in ("registrar", "name") else "url", value)
        else:
            _apply(builder, key, value)
    for role, lines in addresses.items():
        contact = builder.contact(role)
        if contact.postal_code is not None or contact.city is not None:
            for line in lines:  # the registry gave code and city as fields: lines are street
                contact.set("street", line)
            continue
        address = split_address(lines)
        for street in address.street:
            contact.set("street", street)
        contact.set("postal_code", address.postal_code)
        contact.set("city", address.city)
        for line in address.after:
            contact.set("street", line)
    return builder


def _section(line: str) -> str | None:
    lowered = line.lower()
    for word, role in SECTION_ROLES:
        if lowered.startswith(word):
            return role
    return None


def _apply(builder: Builder, key: str, value: str) -> None:
    target = DOMAIN_FIELDS.get(key)
    if target == "domain":
        builder.set_domain(value)
    elif target == "status":
        builder.add_status(_STATUS_NOTE.split(value)[0])  # "ok - Normal state."
    elif target in ("created", "expires", "updated"):
        builder.set_date(target, value)
    elif target == "ns":
        builder.add_name_server(value)
    elif target == "dnssec":
        builder.set_dnssec(value)
    elif target == "registrar":
        builder.set_registrar("name", value)
    else:
        apply_pair(builder, key, value)
