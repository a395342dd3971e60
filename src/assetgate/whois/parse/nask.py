"""NASK (.pl): ``key: value`` lines, name servers continued on key-less lines (pure).

``nameservers:`` gives the first host and the next indented lines the others; dates are
``2001.03.15 13:00:00``; ``renewal date`` is the expiry, while ``option created`` / ``option
expiration date`` belong to an option on the name (a reservation), not to the domain.
``REGISTRAR:`` is a heading followed by flush lines: name, postal address, phone, e-mail, web.
"""

from __future__ import annotations

from typing import Final

from assetgate.whois.parse.blocks import continued_pairs, sections
from assetgate.whois.parse.common import Builder
from assetgate.whois.parse.icann import apply_pair

DATES: Final = {"created": "created", "last modified": "updated", "renewal date": "expires"}


def parse_nask(text: str) -> Builder:
    builder = Builder()
    for key, values in continued_pairs(text):
        if key.startswith("option") or key == "registrar":
            continue
        if key in DATES:
            builder.set_date(DATES[key], values[0] if values else None)
        elif key == "nameservers":
            for value in values:
                builder.add_name_server(value)
        else:
            for value in values:
                apply_pair(builder, key, value)
    for section in sections(text, flush=True):
        if section.heading == "registrar" and section.lines:
            builder.set_registrar("name", section.lines[0])
            for line in section.lines[1:]:
                if line.startswith(("www.", "http://", "https://")):
                    builder.set_registrar("url", line)
    return builder
