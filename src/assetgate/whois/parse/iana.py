"""IANA's own answers: .int (and .arpa) domains and the TLD records used for referral (pure).

RPSL-like objects: ``domain:``, then an ``organisation:`` object (the registrant, address lines
repeated), ``contact: administrative|technical`` objects, ``nserver:`` lines with glue
addresses after the host, ``created:``/``changed:`` as ``YYYY-MM-DD``, ``source: IANA``. There
is no registrar and no expiry: .int registrations are kept by IANA itself. A TLD record has
``refer:``/``whois:``, the port-43 server of that TLD's registry.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.common import Builder
from assetgate.whois.parse.icann import apply_pair
from assetgate.whois.parse.rpsl import CONTACT_KEYS, split_blocks

CONTACT_ROLES: Final = {"administrative": "admin", "technical": "tech", "billing": "billing"}


def parse_iana(text: str) -> Builder:
    builder = Builder()
    for block in split_blocks(text):
        first_key, first_value = block[0]
        if first_key == "contact":
            role = CONTACT_ROLES.get(first_value.lower())
            if role is not None:
                _apply_contact(builder, role, block[1:])
        elif first_key == "organisation":
            _apply_contact(builder, "registrant", block)
        else:
            for key, value in block:
                if key == "changed":
                    builder.set_date("updated", value)
                elif key not in ("source", "organisation", "address", "contact"):
                    apply_pair(builder, key, value)
    return builder


def _apply_contact(builder: Builder, role: str, pairs: list[tuple[str, str]]) -> None:
    contact = builder.contact(role)
    for key, value in pairs:
        field = CONTACT_KEYS.get(key)
        if field is not None:
            contact.set(field, value)
