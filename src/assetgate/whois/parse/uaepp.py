"""Hostmaster.ua (.ua, UAEPP): RPSL-like objects under ``% Registrar:`` style headings (pure).

The domain object comes first (``domain``, ``nserver``, ``status``, ``created``/``modified``/
``expires`` with a ``+02`` offset); then one section per role, each introduced by a comment
heading and an underline: ``% Registrar:``, ``% Registrant:``, ``% Administrative Contacts:``,
``% Technical Contacts:``. The headings, not handles, say whose object follows, so they are
kept while the other comment lines are dropped.

Second-level zones that whois.ua does not hold (``lviv.ua``, ``kharkov.ua`` …) are answered
by their own servers; whois.ua relays that answer between ``% REDIRECT BEGIN`` and ``% REDIRECT
END`` comment lines, in ``Domain Name:``-style labels, and it is read with the ICANN rules.

The registrar section gives the handle (``registrar: ua.imena``) and the name
(``organization``): the record carries the name, the handle stays in ``raw``. Contacts carry
each value twice, as ``person`` and ``person-loc`` (the Ukrainian spelling); ``n/a`` means the
registrant left it empty and is skipped, ``not published`` is the registry withholding it.
``address`` lines are the street, then, when there are three or more lines, the region, and the
city last (``1600 Amphitheatre Parkway`` / ``CA`` / ``Mountain View``); ``postal-code`` and
``country`` are fields of their own. An organisation's contact repeats the organisation as the
``person`` (``Google Inc.``, or transliterated ``Inc. Google``): that is no person's name, so
the record's ``name`` stays empty. Only the domain object's ``status`` lines are the domain's;
each contact object's ``status: ok`` / ``linked`` is the contact's.
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.blocks import Block, first, pair, split_address
from assetgate.whois.parse.common import Builder, ContactBuilder, same_party
from assetgate.whois.parse.icann import parse_icann

_HEADING: Final = re.compile(r"^%\s*([A-Za-z][A-Za-z ]*?)\s*:\s*$")
# whois.ua relays the second-level zones it does not hold (lviv.ua, kharkov.ua …) between
# these comment lines, in the zone server's own ``Key: value`` layout.
_REDIRECTED: Final = re.compile(
    r"^%\s*REDIRECT BEGIN\s*$(.*?)(?:^%\s*REDIRECT END\s*$|\Z)", re.MULTILINE | re.DOTALL
)
SECTIONS: Final = {
    "domain record": "domain",  # the older UANIC layout
    "registrar": "registrar",
    "registrant": "registrant",
    "administrative contacts": "admin",
    "administrative contact": "admin",
    "technical contacts": "tech",
    "technical contact": "tech",
    "billing contacts": "billing",
    "billing contact": "billing",
}
DOMAIN_DATES: Final = {
    "created": "created",
    "modified": "updated",
    "changed": "updated",
    "expires": "expires",
}
ABSENT: Final = frozenset({"n/a", "na", "-", "none"})


def split_sections(text: str) -> dict[str, list[Block]]:
    """Objects per section (``domain`` first); a blank line ends an object."""
    out: dict[str, list[Block]] = {"domain": [[]]}
    section = "domain"
    for line in text.splitlines():
        stripped = line.strip()
        heading = _HEADING.match(stripped)
        if heading is not None:
            section = SECTIONS.get(heading[1].lower(), "other")
            out.setdefault(section, []).append([])
            continue
        if stripped.startswith("%") or not stripped:
            if not stripped and out[section][-1]:
                out[section].append([])
            continue
        found = pair(line)
        if found is not None:
            out[section][-1].append(found)
    return {name: [b for b in blocks if b] for name, blocks in out.items()}


def parse_uaepp(text: str) -> Builder:
    relayed = _REDIRECTED.search(text)
    if relayed is not None:  # a second-level zone's own server, relayed: its layout, not UAEPP's
        return parse_icann(relayed[1])
    builder = Builder()
    sections = split_sections(text)
    domain = next(iter(sections["domain"]), [])
    for key, value in domain:
        if key == "domain":
            builder.set_domain(value)
        elif key == "nserver":
            builder.add_name_server(value)
        elif key == "status":
            builder.add_status(value)
        elif key in DOMAIN_DATES:
            builder.set_date(DOMAIN_DATES[key], value)
    for registrar in sections.get("registrar", [])[:1]:
        name = _value(registrar, "organization") or first(registrar, "registrar")
        builder.set_registrar("name", name)  # the name; the handle only when there is none
        builder.set_registrar("url", first(registrar, "url"))
        builder.set_registrar("abuse_email", first(registrar, "abuse-email"))
        builder.set_registrar("abuse_phone", first(registrar, "abuse-phone"))
    for role in ("registrant", "admin", "tech", "billing"):
        for block in sections.get(role, [])[:1]:
            _contact(builder.contact(role), block)
    return builder


def _value(block: Block, key: str) -> str | None:
    """``key``, else ``key-loc``, skipping ``n/a``."""
    for name in (key, f"{key}-loc"):
        value = next((v for k, v in block if k == name and v.lower() not in ABSENT), None)
        if value:
            return value
    return None


def _values(block: Block, key: str) -> list[str]:
    """Every spelling of ``key``: ``person`` and ``person-loc`` may each be the one given."""
    return [v for k, v in block if k in (key, f"{key}-loc") and v.lower() not in ABSENT]


def _lines(block: Block, key: str) -> list[str]:
    for name in (key, f"{key}-loc"):
        lines = [v for k, v in block if k == name and v and v.lower() not in ABSENT]
        if lines:
            return lines
    return []


def _contact(contact: ContactBuilder, block: Block) -> None:
    person = _value(block, "person")
    if not any(same_party(person, org) for org in _values(block, "organization")):
        contact.set("name", person)  # an organisation's contact repeats its name as the person
    for field, key in (
        ("organization", "organization"),
        ("email", "e-mail"),
        ("phone", "phone"),
        ("postal_code", "postal-code"),
        ("country", "country"),
    ):
        contact.set(field, _value(block, key))
    lines = _lines(block, "address")
    if contact.postal_code is None and contact.country is None:
        _free_address(contact, lines)  # older layout: "03110 KYIV" and the country as lines
        return
    known = {contact.postal_code, contact.country}
    lines = [line for line in lines if line not in known]
    if len(lines) >= 2:
        contact.set("city", lines.pop())
        if len(lines) >= 2:
            contact.set("state", lines.pop())
    for line in lines:
        contact.set("street", line)


def _free_address(contact: ContactBuilder, lines: list[str]) -> None:
    address = split_address(lines)
    for line in address.street:
        contact.set("street", line)
    contact.set("postal_code", address.postal_code)
    contact.set("city", address.city)
    if address.after:
        contact.set("country", address.after[-1])
