"""Indented-section registries: a heading line, then the value(s) indented under it (pure).

One rule table serves the registries that share this shape (each as it publishes it):
- SIDN ``.nl`` (and SETAR ``.aw``): ``Registrar:`` block (name, then postal address),
  ``Abuse Contact:``, ``Domain nameservers:``, top-level ``Status:``, ``DNSSEC: yes|no``,
  ``Creation Date:``, ``Updated Date:``;
- DNS Belgium ``.be``: ``Registrar:`` block of ``Name:``/``Website:`` pairs, ``Nameservers:``,
  ``Keys:`` (empty when unsigned), ``Status: NOT AVAILABLE`` (the registry's state, kept as
  written like SIDN's ``active``) plus the EPP statuses under ``Flags:``,
  ``Registered: Tue Jan 2 2001``;
- Island Networks ``.gg``/``.je``: ``Domain Status:``, ``Registrant:``, ``Registrar:`` as
  ``Name (url)``, ``Relevant dates:`` with ``Registered on 30th April 2003 at 00:00:00.000``;
- Freenom ``.tk``/``.ml``/``.ga``/``.cf``/``.gq``: the domain line ``EXAMPLE.TK is Active`` (its
  one status), ``Organisation:`` or ``Owner contact:`` as a
  free-text postal block or as ``Key: value`` lines, ``Domain Nameservers:``, and
  ``Domain registered: 01/15/2015`` month first.
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.blocks import Section, pair, sections, split_address
from assetgate.whois.parse.common import Builder, ContactBuilder, is_placeholder
from assetgate.whois.parse.dates import month_first
from assetgate.whois.parse.icann import CONTACT_FIELDS, apply_pair
from assetgate.whois.record import SIGNED, UNSIGNED

CONTACT_HEADINGS: Final = {
    "registrant": "registrant",
    "holder": "registrant",
    "organisation": "registrant",
    "organization": "registrant",
    "owner contact": "registrant",
    "admin contact": "admin",
    "administrative contact": "admin",
    "tech contact": "tech",
    "technical contact": "tech",
    "registrar technical contacts": "tech",
    "billing contact": "billing",
}
NS_HEADINGS: Final = frozenset({"nameservers", "name servers", "domain nameservers"})
STATUS_HEADINGS: Final = frozenset({"flags", "domain status", "status", "registration status"})
DOMAIN_HEADINGS: Final = frozenset({"domain", "domain name"})
TOP_DATES: Final = {  # registry-specific top-level labels, on top of the ICANN ones
    "domain registered": "created",
    "record will expire on": "expires",
    "record expires on": "expires",
}
MONTH_FIRST_KEYS: Final = frozenset(TOP_DATES)
RELEVANT_DATES: Final = (
    ("registered on", "created"),
    ("registration date", "created"),
    ("expiry date", "expires"),
    ("expires on", "expires"),
    ("renewal date", "expires"),
    ("last updated", "updated"),
)
# "Name (https://…)", "Name (www.…)" and "Name (registrar.example)": a host name, not words.
_URL_IN_PARENS: Final = re.compile(
    r"^(.*?)\s*\((https?://[^)\s]+|www\.[^)\s]+|[a-z0-9-]+(?:\.[a-z0-9-]+)+/?)\)\s*$",
    re.IGNORECASE,
)
_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_PHONE: Final = re.compile(r"^\+?[\d .()-]{6,}$")
# The registrant's sentence in .be / .nl answers: the data exists but is not shown here.
_NOT_SHOWN: Final = re.compile(r"not\s+shown|see\s+www|please\s+visit", re.IGNORECASE)


def parse_sectioned(text: str) -> Builder:
    builder = Builder()
    for section in sections(text):
        if section.heading == "":
            _top_level(builder, section.lines[0])
        else:
            _section(builder, section)
    return builder


def _top_level(builder: Builder, line: str) -> None:
    found = pair(line)
    if found is None:
        return
    key, value = found
    if key in TOP_DATES:
        builder.set_date(TOP_DATES[key], month_first(value) if key in MONTH_FIRST_KEYS else value)
    elif key == "status" and value.upper() in ("AVAILABLE", "FREE"):
        builder.not_found = True  # a record that is not registered has no status to keep
    elif key == "registered":
        builder.set_date("created", value)
    elif key != "record maintained by":
        apply_pair(builder, key, value)


def _section(builder: Builder, section: Section) -> None:
    heading, lines = section
    if heading in DOMAIN_HEADINGS and lines:
        # Freenom: "EXAMPLE.TK is Active", the one status its format shows
        name, _, state = lines[0].partition(" is ")
        builder.set_domain(name)
        if state.strip():
            builder.add_status(state, split=False)
    elif heading in CONTACT_HEADINGS:
        _contact(builder.contact(CONTACT_HEADINGS[heading]), section)
    elif heading == "registrar":
        _registrar(builder, section)
    elif heading == "abuse contact":
        for line in lines:
            builder.set_registrar("abuse_email" if "@" in line else "abuse_phone", line)
    elif heading in NS_HEADINGS:
        for line in lines:
            builder.add_name_server(line)
    elif heading in STATUS_HEADINGS:
        for line in lines:  # one status per line, as listed: a comma does not start another
            builder.add_status(line, split=False)
    elif heading == "keys":
        builder.set_dnssec(SIGNED if lines else UNSIGNED)
    elif heading == "dnssec" and lines:
        builder.set_dnssec(lines[0])
    elif heading == "relevant dates":
        for line in lines:
            _relevant_date(builder, line)


def _relevant_date(builder: Builder, line: str) -> None:
    lowered = line.lower()
    for label, target in RELEVANT_DATES:
        if lowered.startswith(label):
            builder.set_date(target, line[len(label) :].lstrip(" :"))
            return


def _registrar(builder: Builder, section: Section) -> None:
    pairs = section.pairs()
    for key, value in pairs:
        if key in ("name", "registrar", "organisation", "organization"):
            builder.set_registrar("name", value)
        elif key in ("website", "url", "www"):
            builder.set_registrar("url", value)
    free = section.free_lines()
    if free and "name" not in builder.registrar:
        named = _URL_IN_PARENS.match(free[0])  # Island Networks: "Name (http://…)"
        builder.set_registrar("name", named[1] if named else free[0])
        if named:
            builder.set_registrar("url", named[2])


def _contact(contact: ContactBuilder, section: Section) -> None:
    pairs = section.pairs()
    for key, value in pairs:
        target = CONTACT_FIELDS.get(key) or {"zipcode": "postal_code", "fax": ""}.get(key)
        if target:
            contact.set(target, value)
    free = section.free_lines()
    if any(is_placeholder(line) or _NOT_SHOWN.search(line) for line in free):
        contact.redacted = True
        return
    if free and contact.name is None and contact.organization is None:
        _free_text_contact(contact, free)


def _free_text_contact(contact: ContactBuilder, lines: list[str]) -> None:
    """Freenom / Island Networks: name (or organisation, name), street, code, city, country."""
    if len(lines) == 1:
        contact.set("name", lines[0])
        return
    rest = [line for line in lines if not (_EMAIL.match(line) or _PHONE.match(line))]
    if len(rest) >= 4:  # organisation, person, address…, country
        contact.set("organization", rest.pop(0))
    contact.set("name", rest.pop(0))
    if len(rest) >= 2:
        contact.set("country", rest.pop())
    address = split_address(rest)
    if address.postal_code is None and len(address.street) >= 2:
        address.city = address.street.pop()  # no postal code: the last line is the town
    for street in address.street:
        contact.set("street", street)
    contact.set("postal_code", address.postal_code)
    contact.set("city", address.city)
