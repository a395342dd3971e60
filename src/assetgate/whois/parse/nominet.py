"""Nominet (.uk): indented sections with free-text values (pure).

``Domain name:``, ``Registrant:``, ``Registrar:`` (``Name [Tag = TAG]`` then ``URL: …``),
``Relevant dates:`` (``Registered on: 11-Jun-2014``, ``Expiry date:``, ``Last updated:``),
``Registration status:`` (a sentence, kept as the status), ``Name servers:`` (host, then
optional glue addresses), ``DNSSEC:``. Unregistered: ``No match for "x.uk".``
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.blocks import sections
from assetgate.whois.parse.common import Builder

DATE_LABELS: Final = {
    "registered on": "created",
    "expiry date": "expires",
    "renewal date": "expires",
    "last updated": "updated",
}
_TAG: Final = re.compile(r"\s*\[Tag\s*=\s*[^\]]*\]\s*$", re.IGNORECASE)


def parse_nominet(text: str) -> Builder:
    builder = Builder()
    for header, lines in sections(text):
        if not lines:
            continue
        if header == "domain name":
            builder.set_domain(lines[0])
        elif header == "registrant":
            builder.contact("registrant").set("name", lines[0])
        elif header == "registrant's address":
            for line in lines:
                builder.contact("registrant").set("street", line)
        elif header == "registrar":
            _apply_registrar(builder, lines)
        elif header == "relevant dates":
            for line in lines:
                label, _, value = line.partition(":")
                target = DATE_LABELS.get(" ".join(label.lower().split()))
                if target is not None:
                    builder.set_date(target, value)
        elif header == "registration status":
            builder.add_status(" ".join(lines))
        elif header == "name servers":
            for line in lines:
                builder.add_name_server(line)
        elif header == "dnssec":
            builder.set_dnssec(lines[0])
    return builder


def _apply_registrar(builder: Builder, lines: list[str]) -> None:
    builder.set_registrar("name", _TAG.sub("", lines[0]))
    for line in lines[1:]:
        label, _, value = line.partition(":")
        if label.strip().lower() == "url":
            builder.set_registrar("url", value)
