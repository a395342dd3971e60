"""SWITCH (.ch, .li): a heading line ending in ``:``, the values on the lines below it (pure).

Blocks are separated by blank lines: ``Domain name:``, ``Holder of domain name:`` and
``Technical contact:`` (free-text postal blocks: organisation, person, street, ``CH-8001
Zürich``, country, then ``Contractual Language: …``), ``Registrar:``, ``Name servers:`` (a host,
sometimes with its addresses in brackets), ``First registration date:`` (``since 31.01.2000``),
and one-line pairs such as ``DNSSEC:N``.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.blocks import pair, split_address
from assetgate.whois.parse.common import Builder, ContactBuilder

CONTACTS: Final = {"holder of domain name": "registrant", "technical contact": "tech"}


def parse_switch(text: str) -> Builder:
    builder = Builder()
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            blocks.append([])
        elif not stripped.lower().startswith(("whois:", "see http")):
            blocks[-1].append(stripped)
    for block in blocks:
        if not block:
            continue
        heading = block[0][:-1].strip().lower() if block[0].endswith(":") else None
        values = block[1:]
        if heading is None:
            for line in block:
                found = pair(line) or _tight_pair(line)
                if found is not None and found[0] == "dnssec":
                    builder.set_dnssec(found[1])
        elif heading == "domain name" and values:
            builder.set_domain(values[0])
        elif heading in CONTACTS:
            lines = [v for v in values if pair(v) is None]
            if lines:
                _contact(builder.contact(CONTACTS[heading]), lines)
        elif heading == "registrar" and values:
            builder.set_registrar("name", values[0])
        elif heading == "name servers":
            for value in values:
                builder.add_name_server(value.replace("\t", " "))
        elif heading == "first registration date" and values:
            builder.set_date("created", values[0])
        elif heading == "dnssec" and values:
            builder.set_dnssec(values[0])
    return builder


def _tight_pair(line: str) -> tuple[str, str] | None:
    key, sep, value = line.partition(":")
    return (key.strip().lower(), value.strip()) if sep else None


def _contact(contact: ContactBuilder, lines: list[str]) -> None:
    """Name lines (organisation, then person), the street, ``CH-8001 Zürich``, the country.

    The postal line fixes the others: the line before it is the street, the lines before that
    are the names, so a one-line holder is a name and a two-line one an organisation and a person.
    """
    address = split_address(lines[1:])
    if address.postal_code is None:
        contact.set("name", lines[0])
        for line in lines[1:]:
            contact.set("street", line)
        return
    names, street = [lines[0], *address.street[:-1]], address.street[-1:]
    if len(names) >= 2:
        contact.set("organization", names.pop(0))
    contact.set("name", names.pop(0))
    for line in [*names, *street]:
        contact.set("street", line)
    contact.set("postal_code", address.postal_code)
    contact.set("city", address.city)
    if address.after:
        contact.set("country", address.after[-1])
