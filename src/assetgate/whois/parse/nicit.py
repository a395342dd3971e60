"""Registro .it (.it): top-level ``Key: value`` lines, then sections under bare headings (pure).

``Domain``, ``Status`` (EPP words, several joined by ``/``), ``Signed`` (DNSSEC yes/no),
``Created``, ``Last Update``, ``Expire Date``; then ``Registrant``, ``Admin Contact``,
``Technical Contacts``, ``Registrar`` and ``Nameservers`` headings, each followed by indented
lines. A contact's ``Address`` continues on key-less lines in a fixed order: street lines, city,
postal code, province, country code. The registrar section gives ``Organization`` (the name)
and ``Name`` (its handle, e.g. ``EXAMPLE-REG``): the record holds the organisation, the handle
stays in ``raw``. ``Status: AVAILABLE`` is an unregistered name.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.blocks import pair, split_address
from assetgate.whois.parse.common import Builder, ContactBuilder

SECTIONS: Final = {
    "registrant": "registrant",
    "admin contact": "admin",
    "technical contacts": "tech",
    "technical contact": "tech",
    "registrar": "registrar",
    "nameservers": "ns",
    "main nameservers": "ns",
}
DATES: Final = {"created": "created", "last update": "updated", "expire date": "expires"}
CONTACT: Final = {
    "name": "name",
    "organization": "organization",
    "phone": "phone",
    "email": "email",
    "e-mail": "email",
}

Entry = tuple[str, list[str]]  # key, values (continuation lines appended)


def parse_nicit(text: str) -> Builder:
    builder = Builder()
    section = ""
    entries: dict[str, list[Entry]] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("*"):
            continue
        found = pair(line)
        indented = line[:1].isspace()
        if not indented and found is None:
            section = SECTIONS.get(stripped.lower(), "other")
            continue
        current = entries.setdefault(section if indented else "", [])
        if found is not None:
            current.append((found[0], [found[1]] if found[1] else []))
        elif section == "ns" or not current:
            current.append(("", [stripped]))
        else:
            current[-1][1].append(stripped)  # continuation of the previous key (Address)
    for key, values in entries.get("", []):
        _top(builder, key, values[0] if values else "")
    for key, values in entries.get("ns", []):
        for value in values if not key else ():
            builder.add_name_server(value)
    registrar = dict(entries.get("registrar", []))
    name = registrar.get("organization") or registrar.get("name")
    builder.set_registrar("name", name[0] if name else None)
    web = registrar.get("web")
    builder.set_registrar("url", web[0] if web else None)
    for role in ("registrant", "admin", "tech"):
        if role in entries:
            _contact(builder.contact(role), entries[role])
    return builder


def _top(builder: Builder, key: str, value: str) -> None:
    if key == "domain":
        builder.set_domain(value)
    elif key == "status" and value.strip().upper() == "AVAILABLE":
        builder.not_found = True
    elif key == "status":
        for word in value.split("/"):
            builder.add_status(word)
    elif key == "signed":
        builder.set_dnssec(value)
    elif key in DATES:
        builder.set_date(DATES[key], value)


def _contact(contact: ContactBuilder, entries: list[Entry]) -> None:
    for key, values in entries:
        if key in CONTACT and values:
            contact.set(CONTACT[key], values[0])
        elif key == "address":
            _address(contact, values)


def _address(contact: ContactBuilder, lines: list[str]) -> None:
    if len(lines) >= 5:  # street…, city, postal code, province, country code
        *street, city, code, province, country = lines
        contact.set("city", city)
        contact.set("postal_code", code)
        contact.set("state", province)
        contact.set("country", country)
    else:
        address = split_address(lines)
        street = address.street
        contact.set("postal_code", address.postal_code)
        contact.set("city", address.city)
    for line in street:
        contact.set("street", line)
