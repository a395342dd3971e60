"""NASK (.pl): ``key: value`` lines, name servers continued on key-less lines (pure).

``nameservers:`` gives the first host and the next indented lines the others; dates are
``2001.03.15 13:00:00``; ``renewal date`` (``expiration date`` in some answers) is the expiry.
The answer is paragraphs: the registration (``DOMAIN NAME:`` … ``renewal date:``), then the
option on the name (``option created:`` / ``option expiration date:``, a reservation that is not
the domain's, or ``no option``), ``dnssec:``, contact blocks with their own ``last modified:``.
Dates are read from the registration's paragraph only, so no other paragraph's date can win.
``REGISTRAR:`` is a heading followed by flush lines: name, postal address, phone, e-mail, web.
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.blocks import continued_pairs, sections
from assetgate.whois.parse.common import Builder
from assetgate.whois.parse.icann import DATE_KEYS, apply_pair

DATES: Final = {
    "created": "created",
    "last modified": "updated",
    "renewal date": "expires",
    "expiration date": "expires",
}
_PARAGRAPHS: Final = re.compile(r"\n[ \t]*\n")


def parse_nask(text: str) -> Builder:
    builder = Builder()
    for key, values in continued_pairs(registration(text)):
        if key in DATES or key in DATE_KEYS:
            builder.set_date(DATES.get(key) or DATE_KEYS[key], values[0] if values else None)
    for key, values in continued_pairs(text):
        if key.startswith("option") or key == "registrar" or key in DATES or key in DATE_KEYS:
            continue  # dates come from the registration's paragraph only
        if key == "nameservers":
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


def registration(text: str) -> str:
    """The paragraph that starts with ``DOMAIN NAME:`` (the whole text if none does)."""
    for paragraph in _PARAGRAPHS.split(text.replace("\r\n", "\n")):
        if paragraph.lstrip().upper().startswith("DOMAIN NAME:"):
            return paragraph
    return text
