"""JPRS (.jp) bracket format: ``[Label]   value``, English (``/e``) or Japanese labels.

Two layouts share the syntax (moneals/whois-parsed#10):
- general-use ``.jp``: ``[Registrant]``, ``[Created on]``, ``[Expires on]``, ``[Status] Active``,
  then a ``Contact Information:`` block (the registrant's public contact point); without an
  ``[Expires on]``/``[有効期限]`` line the expiry is the date in the state line,
  ``[Status] To be suspended (2026/04/30)`` (``[Expires on]`` wins when both are present);
- attribute-type ``co.jp``/``ac.jp``/…: ``a. [Domain Name]``, ``g. [Organization]`` (``ne.jp``:
  ``d. [Network Service Name]``),
  ``[State] Connected (2026/03/31)`` (the date the registration runs to), ``[Registered Date]``,
  no expiry label.
Continuation lines (multi-line postal addresses) are indented with no bracket.
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.whois.parse.common import Builder
from assetgate.whois.record import SIGNED

_LINE: Final = re.compile(r"^\s*(?:[a-z]\.\s*)?\[([^\]\[]{1,40})\]\s*(.*?)\s*$")
# The date the registration runs to, after the state word: ``Connected (2026/03/31)``, and in the
# general-use layout without an expiry label ``To be suspended (2026/04/30)``; full-width
# parentheses tolerated for Japanese output.
_STATE_DATE: Final = re.compile(r"^(.*?)\s*[(（]\s*(\d{4}[/-]\d{1,2}[/-]\d{1,2})\s*[)）]\s*$")

# ``[有効期限]`` (expiry) as some stored answers have it with a character lost in a lossy
# decode (``[有効限]``); no other JPRS label starts with 有効 ("valid").
_EXPIRY_PREFIX: Final = "有効"

LABELS: Final = {
    "domain name": "domain",
    "ドメイン名": "domain",
    "registrant": "registrant.name",
    "登録者名": "registrant.name",
    "organization": "registrant.organization",
    "組織名": "registrant.organization",
    # ne.jp names the network service, not an organisation: it is the holder all the same
    # (``c. [ネットワークサービス名]`` / ``d. [Network Service Name]``; its kana reading
    # ``b. [ねっとわーくさーびすめい]`` is not a name and is skipped)
    "network service name": "registrant.organization",
    "ネットワークサービス名": "registrant.organization",
    "name server": "ns",
    "ネームサーバ": "ns",
    "signing key": "dnskey",
    "署名鍵": "dnskey",
    "created on": "created",
    "registered date": "created",
    "登録年月日": "created",
    "expires on": "expires",
    "有効期限": "expires",
    "last updated": "updated",
    "last update": "updated",
    "最終更新": "updated",
    "status": "state",
    "state": "state",
    "状態": "state",
    "lock status": "lock",
    "ロック状態": "lock",
    "name": "registrant.name",
    "名前": "registrant.name",
    "email": "registrant.email",
    "postal code": "registrant.postal_code",
    "郵便番号": "registrant.postal_code",
    "postal address": "registrant.street",
    "住所": "registrant.street",
    "phone": "registrant.phone",
    "電話番号": "registrant.phone",
}


def parse_jprs(text: str) -> Builder:
    builder = Builder()
    target: str | None = None
    address_label: str | None = None  # bilingual answers give the address twice: keep one
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            if target == "registrant.street" and line.startswith((" ", "\t")) and line.strip():
                builder.contact("registrant").set("street", line)
            else:
                target = None
            continue
        label = match[1].strip().lower()
        target = LABELS.get(label) or ("expires" if label.startswith(_EXPIRY_PREFIX) else None)
        if target == "registrant.street":
            if address_label not in (None, label):
                target = None
                continue
            address_label = label
        if target is not None:
            _apply(builder, target, match[2])
    return builder


def _apply(builder: Builder, target: str, value: str) -> None:
    if target.startswith("registrant."):
        builder.contact("registrant").set(target.removeprefix("registrant."), value)
    elif target == "domain":
        builder.set_domain(value)
    elif target == "ns":
        builder.add_name_server(value)
    elif target == "dnskey":
        if value:
            builder.set_dnssec(SIGNED)
    elif target in ("created", "expires", "updated"):
        if value:
            builder.set_date(target, value)
        else:  # ``[Registered Date]`` left blank: JPRS has no such date (old ac.jp names)
            builder.stated_absent.add(f"dates.{target}")
    elif target == "state":
        dated = _STATE_DATE.match(value)
        if dated is not None:  # "Connected (2026/03/31)", "To be suspended (2026/04/30)"
            builder.add_status(dated[1])
            builder.set_date("expires", dated[2])
        elif value:
            builder.add_status(value)
    elif target == "lock" and value:
        builder.add_status(value)
