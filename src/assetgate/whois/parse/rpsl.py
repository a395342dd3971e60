"""RPSL-like answers: lower-case ``key: value`` objects separated by blank lines (pure).

RFC 2622 §2 syntax (continuation lines start with a space, tab or ``+``), as used by AFNIC (.fr,
.re, .pm …), registro.br, TCI (.ru/.su), CZ.NIC FRED (.cz; also .ee, .cr …) and many others.
The first object naming the domain carries the dates, status and handles (``holder-c``,
``admin-c``, ``owner-c``, ``registrant``); later objects (``nic-hdl:``, ``contact:``,
``nic-hdl-br:``) are the contacts those handles point to, and ``ns-list``/``nsset`` objects hold
the name servers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from assetgate.whois.parse.blocks import HANDLE_KEYS, Block, handle_index, norm_key, split_address
from assetgate.whois.parse.common import Builder, is_placeholder, key_values
from assetgate.whois.parse.icann import apply_pair, parse_icann
from assetgate.whois.record import SIGNED

HANDLE_ROLES: Final = {
    "holder-c": "registrant",
    "owner-c": "registrant",
    "registrant": "registrant",
    "registrant-c": "registrant",
    "admin-c": "admin",
    "tech-c": "tech",
    "billing-c": "billing",
    "zone-c": "tech",
    "holder": "registrant",
}
DOMAIN_CONTACT_KEYS: Final = {
    "org": "organization",
    "person": "name",
    "e-mail": "email",
    "owner": "name",
}
CONTACT_KEYS: Final = {
    "contact": "name",
    "person": "name",
    "role": "name",
    "name": "name",
    "org": "organization",
    "organization": "organization",
    "organisation": "organization",
    "address": "street",
    "street": "street",
    "city": "city",
    "postal code": "postal_code",
    "postal-code": "postal_code",
    "zip": "postal_code",
    "state": "state",
    "country": "country",
    "phone": "phone",
    "e-mail": "email",
    "email": "email",
}
DOMAIN_EXTRA_DATES: Final = {
    "last-update": "updated",
    "last-updated": "updated",
    "free-date": "",
    "registered": "created",
    "registration": "created",
    "expire-date": "expires",
    "renewal": "expires",
}
# Per-registry spellings, rewritten to the keys above before the rules run.
IEDR_KEYS: Final = {"account": "registrar", "descr": "owner", "ren-status": "status"}
# IEDR's own labels beside the ICANN ones: the holder, the registrar's account, the states.
IEDR_LABELS: Final = {
    "domain holder": "registrant name",
    "account name": "registrar",
    "registrar abuse contact": "registrar abuse contact email",
    "renewal status": "domain status",
    "locked status": "domain status",
}
# ``Locked status: YES`` / ``NO`` is a flag, not a status word: YES is the state "Locked".
IEDR_LOCKED: Final = {"yes": "Locked", "no": ""}
IIS_KEYS: Final = {"state": "registry-state"}
IRNIC_REMARKS: Final = {"(domain holder)": "owner", "(domain holder address)": "holder-address"}
REGISTRAR_URL_KEYS: Final = ("website", "www", "url")
KEY_MATERIAL: Final = frozenset({"dnskey", "ds-rdata", "keyset"})
_CONTINUATION: Final = " \t+"
_ICANN_LABELS: Final = re.compile(
    r"^\s*(?:Domain Name|Registry Domain ID|Registrar):[ \t]", re.MULTILINE
)


def split_blocks(text: str) -> list[Block]:
    """Objects as lists of (lower-case key, value); comments (``%``, ``#``) dropped."""
    blocks: list[Block] = []
    current: Block = []
    for line in text.splitlines():
        if line.startswith(("%", "#")):
            continue
        if not line.strip():
            if current:
                blocks.append(current)
                current = []
            continue
        if line[0] in _CONTINUATION and current:  # RFC 2622 §2 continuation line
            key, value = current[-1]
            more = line.lstrip(_CONTINUATION).strip()
            current[-1] = (key, f"{value} {more}".strip())
            continue
        key, sep, value = line.partition(":")
        key = norm_key(key)
        if sep and 0 < len(key) <= 40 and "http" not in key:
            current.append((key, value.strip()))
    if current:
        blocks.append(current)
    return blocks


def parse_rpsl(text: str) -> Builder:
    return parse_blocks(split_blocks(text))


def parse_iedr(text: str) -> Builder:
    """IEDR (.ie): ``account`` is the registrar, the first ``descr`` the holder's name.

    Since the registry's move to ICANN labels (``Domain Name:``, ``Registrar:``, ``Registrant
    Name:``, ``Domain Status:``), answers in that layout are read line by line like any ICANN
    answer, wherever blank lines fall, not as RPSL objects; IEDR's own labels in that layout
    (``Domain Holder:``, ``Account Name:`` for the registrar, ``Registrar Abuse Contact:``,
    ``Renewal status:``, ``Locked status:``) are read as the ICANN ones they stand for, in either
    layout (the ``Domain:`` answer of 2020 has only these).
    """
    if _ICANN_LABELS.search(text):
        builder = parse_icann(text)
    else:
        builder = parse_blocks(rename(split_blocks(text), IEDR_KEYS))
    for key, value in key_values(text):
        if key == "locked status":
            value = IEDR_LOCKED.get(value.lower(), value)
        if key in IEDR_LABELS:
            apply_pair(builder, IEDR_LABELS[key], value)
    return builder


_ARNES_WITHHELD: Final = re.compile(
    r"^(Domain holder|Tech):[ \t]*\r?\n[ \t]*NOT DISCLOSED\s*$", re.MULTILINE | re.IGNORECASE
)


def parse_arnes(text: str) -> Builder:
    """ARNES (.si): one RPSL object; ``registrant:`` is a handle with no object behind it, so
    it names nobody; ``Domain holder:`` / ``Tech:`` headings over ``NOT DISCLOSED`` say the
    registry withholds that contact. ``status:`` lists EPP words with underscores, comma
    separated without a space (``client_delete_prohibited,client_update_prohibited``)."""
    builder = parse_blocks(split_blocks(text))
    for heading in _ARNES_WITHHELD.findall(text):
        builder.contact(
            "registrant" if heading.lower() == "domain holder" else "tech"
        ).redacted = True
    return builder


def parse_iis(text: str) -> Builder:
    """IIS (.se, .nu): ``status:`` lines are the domain's EPP statuses; ``state:`` is the
    registry's life-cycle word (``active``, ``quarantine``), kept in ``raw`` only."""
    return parse_blocks(rename(split_blocks(text), IIS_KEYS))


def parse_irnic(text: str) -> Builder:
    """IRNIC (.ir): the holder is in ``remarks: (Domain Holder) …`` lines.

    That line is the holder's name, person or organisation; when the holder's object
    (``holder-c``) is an organisation (``org:`` and no ``person:``) it is the organisation,
    and the registrant has no personal name to show.
    """
    blocks = [[_irnic_remark(key, value) for key, value in block] for block in split_blocks(text)]
    holder = next((v.upper() for b in blocks for k, v in b if k == "holder-c"), None)
    found = handle_index(blocks).get(holder or "")
    keys = {k for k, _ in found or ()}
    if "org" in keys and "person" not in keys:
        blocks = rename(blocks, {"owner": "org"})
    return parse_blocks(blocks)


def rename(blocks: Sequence[Block], keys: Mapping[str, str]) -> list[Block]:
    return [[(keys.get(key, key), value) for key, value in block] for block in blocks]


def _irnic_remark(key: str, value: str) -> tuple[str, str]:
    if key == "remarks" and value.startswith("("):
        label, _, rest = value.partition(")")
        renamed = IRNIC_REMARKS.get(label.lower() + ")")
        if renamed is not None:
            return renamed, rest.strip()
    return key, value


def parse_blocks(blocks: Sequence[Block]) -> Builder:
    builder = Builder()
    handles: dict[str, list[str]] = {}
    domain_block = next(
        (b for b in blocks if any(k in ("domain", "domain name") for k, _ in b[:3])), None
    )
    if domain_block is not None:
        _apply_domain_block(builder, domain_block, handles)
    index = handle_index(b for b in blocks if b is not domain_block)
    for handle, roles in handles.items():
        for role in roles if handle in index else ():
            apply_contact_block(builder, role, index[handle])
    for block in blocks:
        if block is domain_block or not block:
            continue
        if block[0][0] == "registrar":
            _apply_registrar_block(builder, block)
        for key, value in block:
            if key == "nserver":
                builder.add_name_server(value)
            elif key in KEY_MATERIAL and value:
                builder.set_dnssec(SIGNED)
    return builder


def apply_contact_block(builder: Builder, role: str, block: Block) -> None:
    contact = builder.contact(role)
    organisation = any(k == "type" and v.upper().startswith("ORG") for k, v in block)
    # Street lines stay as published; the code, city and country are read from them too,
    # unless the object gives them as fields of their own.
    address = split_address(v for k, v in block if k == "address")
    if not any(CONTACT_KEYS.get(k) in ("postal_code", "city") for k, _ in block):
        contact.set("postal_code", address.postal_code)
        contact.set("city", address.city)
    if address.after and not any(k == "country" for k, _ in block):
        contact.set("country", address.after[-1])
    for position, (key, value) in enumerate(block):
        if key in HANDLE_KEYS[:2] or (position == 0 and key in HANDLE_KEYS):
            continue  # the handle itself, not a name
        field = CONTACT_KEYS.get(key)
        if key == "anonymous" and value.upper() in ("YES", "Y", "TRUE"):
            contact.redacted = True
        elif field == "name" and organisation:
            contact.set("organization", value)
        elif field is not None:
            contact.set(field, value)


def _apply_domain_block(builder: Builder, block: Block, handles: dict[str, list[str]]) -> None:
    for key, value in block:
        if key in HANDLE_ROLES:
            if is_placeholder(value):
                builder.contact(HANDLE_ROLES[key]).redacted = True
            else:
                handles.setdefault(value.upper(), []).append(HANDLE_ROLES[key])
        elif key in DOMAIN_CONTACT_KEYS:
            builder.contact("registrant").set(DOMAIN_CONTACT_KEYS[key], value)
        elif key == "holder-address":
            _holder_address(builder, value)
        elif key in DOMAIN_EXTRA_DATES:
            if DOMAIN_EXTRA_DATES[key]:
                builder.set_date(DOMAIN_EXTRA_DATES[key], value)
        elif key != "source":
            apply_pair(builder, key, value)


def _holder_address(builder: Builder, value: str) -> None:
    """IRNIC's one-line address: ``street, city, province, CC``."""
    contact = builder.contact("registrant")
    contact.set("street", value)
    parts = [part.strip() for part in value.split(",")]
    if len(parts) >= 4 and len(parts[-1]) == 2 and parts[-1].isalpha():
        contact.set("city", parts[-3])
        contact.set("country", parts[-1])


def _apply_registrar_block(builder: Builder, block: Block) -> None:
    if builder.registrar.get("name", "").upper() != block[0][1].upper():
        return
    for key, value in block:
        if key in REGISTRAR_URL_KEYS:
            builder.set_registrar("url", value)
        elif key == "abuse-mailbox":
            builder.set_registrar("abuse_email", value)
