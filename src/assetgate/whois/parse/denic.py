"""DENIC (.de): ``Key: Value`` with DENIC's own labels (pure).

Public answers (query ``-T dn,ace <name>``) show ``Domain``, ``Nserver``, ``Dnskey``,
``Status`` (``connect``; ``free`` when unregistered, ``failed``/``invalid`` otherwise) and
``Changed`` only: no creation or expiry date and no registrar. Older or authorised answers add
``[Holder]``, ``[Admin-C]``, ``[Tech-C]``, ``[Zone-C]`` sections, mapped onto contacts here.
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.common import Builder, key_values
from assetgate.whois.record import SIGNED

SECTION_ROLES: Final = {
    "holder": "registrant",
    "admin-c": "admin",
    "tech-c": "tech",
    "zone-c": "tech",
}
CONTACT_FIELDS: Final = {
    "name": "name",
    "organisation": "organization",
    "address": "street",
    "postalcode": "postal_code",
    "city": "city",
    "countrycode": "country",
    "phone": "phone",
    "email": "email",
}
_SECTION: Final = re.compile(r"^\s*\[([A-Za-z-]+)\]\s*$")


def parse_denic(text: str) -> Builder:
    builder = Builder()
    role: str | None = None
    for line in text.splitlines():
        section = _SECTION.match(line)
        if section is not None:
            role = SECTION_ROLES.get(section[1].lower())
            continue
        for key, value in key_values(line):
            if role is not None:
                field = CONTACT_FIELDS.get(key)
                if field is not None:
                    builder.contact(role).set(field, value)
            else:
                _apply(builder, key, value)
    return builder


def _apply(builder: Builder, key: str, value: str) -> None:
    if key == "domain":
        builder.set_domain(value)
    elif key == "nserver":
        builder.add_name_server(value)
    elif key == "dnskey" and value:
        builder.set_dnssec(SIGNED)
    elif key == "status":
        if value.lower() == "free":
            builder.not_found = True
        else:
            builder.add_status(value)
    elif key == "changed":
        builder.set_date("updated", value)
