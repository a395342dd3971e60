"""ISOC-IL (.il): RPSL-like, the domain's lines spread over several objects (pure).

``query:`` / ``reg-name:`` + ``domain:`` / ``descr:`` … ``changed:`` are separate objects for
one domain, so every object without a ``nic-hdl`` is the domain's. The holder is the ``descr``
lines (name, then the postal address: street, city, postal code, country in that order), the
expiry is ``validity: 16-06-2026`` (day first; ``N/A`` for names that do not expire), the
``changed:`` lines are the history (``… 19990616 (Assigned)`` is the creation, the last line
the latest update), and the registrar is a closing object ``registrar name:`` + ``registrar
info:`` (its web site). E-mail addresses are written ``name AT host``.
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.blocks import Block, handle_index
from assetgate.whois.parse.common import Builder, ContactBuilder
from assetgate.whois.parse.dates import parse_date
from assetgate.whois.parse.rpsl import HANDLE_ROLES, split_blocks

_AT: Final = re.compile(r"\s+AT\s+")
_POSTAL: Final = re.compile(r"^\d{5}(?:\d{2})?$")


def parse_isocil(text: str) -> Builder:
    builder = Builder()
    blocks = split_blocks(text)
    contacts = [b for b in blocks if any(k == "nic-hdl" for k, _ in b)]
    contact_ids = {id(b) for b in contacts}  # by identity: list equality is quadratic here
    index = handle_index(contacts)
    descr: list[str] = []
    changes: list[str] = []
    for block in blocks:
        if id(block) in contact_ids:
            continue
        for key, value in block:
            if key == "domain":
                builder.set_domain(value)
            elif key == "descr":
                descr.append(value)
            elif key == "nserver":
                builder.add_name_server(value)
            elif key == "status":
                builder.add_status(value)
            elif key == "dnssec":
                builder.set_dnssec(value)
            elif key == "validity" and parse_date(value):
                builder.set_date("expires", value)
            elif key == "changed":
                changes.append(value)
            elif key == "registrar name":
                builder.set_registrar("name", value)
            elif key == "registrar info":
                builder.set_registrar("url", value)
            elif key in ("e-mail", "phone"):
                field = "email" if key == "e-mail" else key
                builder.contact("registrant").set(field, _email(value))
            elif key in HANDLE_ROLES and value.upper() in index:
                _person(builder.contact(HANDLE_ROLES[key]), index[value.upper()])
    created = next((c for c in changes if "(assigned)" in c.lower()), None)
    builder.set_date("created", created)
    builder.set_date("updated", changes[-1] if changes else None)
    _holder(builder.contact("registrant"), descr)
    return builder


def _email(value: str) -> str:
    return _AT.sub("@", value)


def _holder(contact: ContactBuilder, lines: list[str]) -> None:
    """``Name``, street…, city, postal code, country (the code follows the city)."""
    if not lines:
        return
    contact.set("name", lines[0])
    rest = lines[1:]
    code = next((i for i, line in enumerate(rest) if _POSTAL.match(line)), None)
    if code is not None:
        contact.set("postal_code", rest[code])
        if code > 0:
            contact.set("city", rest[code - 1])
        if code + 1 < len(rest):
            contact.set("country", rest[-1])
        rest = rest[: max(code - 1, 0)]
    for line in rest:
        contact.set("street", line)


def _person(contact: ContactBuilder, block: Block) -> None:
    for key, value in block:
        if key == "person":
            contact.set("name", value)
        elif key == "e-mail":
            contact.set("email", _email(value))
        elif key == "phone":
            contact.set("phone", value)
