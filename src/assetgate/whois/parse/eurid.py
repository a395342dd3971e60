"""EURid (.eu, .ею, .ευ): ``Domain:`` then indented sections (pure).

No dates are published. ``Registrant:`` shows only ``NOT DISCLOSED!`` (so the registrant is
redacted); ``Technical:`` and ``Registrar:`` hold ``Key: value`` lines; ``Name servers:`` one
host per line with optional glue in brackets; ``Keys:`` DNSSEC key material. Unregistered:
``Status: AVAILABLE``.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.blocks import sections
from assetgate.whois.parse.common import Builder, is_placeholder
from assetgate.whois.record import SIGNED

CONTACT_SECTIONS: Final = {"registrant": "registrant", "technical": "tech", "billing": "billing"}
CONTACT_FIELDS: Final = {
    "name": "name",
    "organisation": "organization",
    "organization": "organization",
    "email": "email",
    "phone": "phone",
}


def parse_eurid(text: str) -> Builder:
    builder = Builder()
    for header, lines in sections(text):
        if header == "":
            label, _, value = lines[0].partition(":")
            label = label.strip().lower()
            if label == "domain":
                builder.set_domain(value)
            elif label == "status" and value.strip().upper() == "AVAILABLE":
                builder.not_found = True
        elif header in CONTACT_SECTIONS:
            _apply_contact(builder, CONTACT_SECTIONS[header], lines)
        elif header == "registrar":
            for line in lines:
                label, _, value = line.partition(":")
                if label.strip().lower() == "name":
                    builder.set_registrar("name", value)
                elif label.strip().lower() in ("website", "url"):
                    builder.set_registrar("url", value)
        elif header == "name servers":
            for line in lines:
                builder.add_name_server(line)
        elif header == "keys" and lines:
            builder.set_dnssec(SIGNED)
    return builder


def _apply_contact(builder: Builder, role: str, lines: list[str]) -> None:
    contact = builder.contact(role)
    for line in lines:
        if is_placeholder(line):
            contact.redacted = True
            continue
        label, sep, value = line.partition(":")
        field = CONTACT_FIELDS.get(label.strip().lower())
        if sep and field is not None:
            contact.set(field, value)
