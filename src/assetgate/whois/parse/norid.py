"""Norid (.no): dotted labels in handle-keyed objects (pure).

``Domain Information`` holds ``NORID Handle``, ``Domain Name``, ``Registrar Handle``, ``Tech-c
Handle``, one ``Name Server Handle`` per server and ``DNSSEC``; the next object
(``Additional information:``) holds ``Created:`` and ``Last updated:``. The registrar, the name
servers and the role contacts are objects later in the same answer, found by their handle
(``Registrar Name``, ``Name Server Hostname``, ``Name``). Norid publishes no holder, no expiry
and no status over port 43.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.blocks import Block, first, handle_index
from assetgate.whois.parse.common import Builder
from assetgate.whois.parse.rpsl import split_blocks

CONTACT_HANDLES: Final = {"tech-c handle": "tech", "admin-c handle": "admin"}
CONTACT_KEYS: Final = {
    "name": "name",
    "post address": "street",
    "postal code": "postal_code",
    "postal area": "city",
    "country": "country",
    "phone number": "phone",
    "email address": "email",
}


def norid_objects(text: str) -> list[Block]:
    """Objects split at blank lines and also at every ``NORID Handle`` line, which always
    starts a new object, so objects written without a blank line between them stay apart."""
    objects: list[Block] = []
    for block in split_blocks(text):
        current: Block = []
        for key, value in block:
            if key == "norid handle" and current:
                objects.append(current)
                current = []
            current.append((key, value))
        objects.append(current)
    return objects


def parse_norid(text: str) -> Builder:
    builder = Builder()
    blocks = norid_objects(text)
    position = next((i for i, b in enumerate(blocks) if first(b, "domain name")), None)
    if position is None:
        return builder
    domain = blocks[position]
    index = handle_index([*blocks[:position], *blocks[position + 1 :]])
    for key, value in domain:
        if key == "domain name":
            builder.set_domain(value)
        elif key == "registrar handle":
            # The name when the answer holds the registrar's object, else its handle: the
            # only name the answer gives for the registrar.
            builder.set_registrar("name", _referenced(index, value, "registrar name") or value)
        elif key == "domain holder handle" and value.upper() in index:
            _contact(builder, "registrant", index[value.upper()])
        elif key == "name server handle":
            builder.add_name_server(_referenced(index, value, "name server hostname") or "")
        elif key in CONTACT_HANDLES and value.upper() in index:
            _contact(builder, CONTACT_HANDLES[key], index[value.upper()])
        elif key == "dnssec":
            builder.set_dnssec(value)
    for block in blocks[position + 1 : position + 2]:  # "Additional information:"
        builder.set_date("created", first(block, "created"))
        builder.set_date("updated", first(block, "last updated"))
    return builder


def _referenced(index: dict[str, Block], handle: str, key: str) -> str | None:
    block = index.get(handle.upper())
    if block is None:
        return None
    return first(block, key)


def _contact(builder: Builder, role: str, block: Block) -> None:
    contact = builder.contact(role)
    for key, value in block:
        if key in CONTACT_KEYS:
            contact.set(CONTACT_KEYS[key], value)
