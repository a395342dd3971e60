"""RDAP domain object (RFC 9083) -> ``Parsed`` (pure, defensive).

Registries' JSON is often non-conformant (asyncwhois#63), so every access checks its type and a
malformed member is skipped, never raised. Mapping: ``events`` registration / expiration / last
changed -> dates; ``status`` RDAP words -> EPP codes (RFC 8056 §2: ``active`` is ``ok``,
``client transfer prohibited`` is ``clientTransferProhibited``); entities by role with their
jCard (RFC 7095) or JSContact card (RFC 9553, ``jscontact.py``) -> registrar and contacts;
``secureDNS.delegationSigned`` -> dnssec. Redaction is read from placeholder values, ``REDACTED
FOR PRIVACY`` remarks and RFC 9537 ``redacted[]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from assetgate.whois.parse.common import EPP_STATUSES, Builder, ContactBuilder
from assetgate.whois.parse.jscontact import jscontact_properties
from assetgate.whois.record import SIGNED, UNSIGNED, Parsed

EVENT_DATES: Final = {"registration": "created", "expiration": "expires", "last changed": "updated"}
CONTACT_ROLES: Final = {
    "registrant": "registrant",
    "administrative": "admin",
    "technical": "tech",
    "billing": "billing",
}
REDACTED_PREFIXES: Final = {
    "registrant": "registrant",
    "admin": "admin",
    "administrative": "admin",
    "tech": "tech",
    "technical": "tech",
    "billing": "billing",
}
RDAP_MEDIA_TYPE: Final = "application/rdap+json"


def parse_rdap(doc: object) -> Parsed:
    builder = Builder()
    if not isinstance(doc, dict):
        return builder.freeze()
    builder.set_domain(_str(doc.get("ldhName")) or _str(doc.get("unicodeName")) or "")
    for status in _list(doc.get("status")):
        if isinstance(status, str):
            builder.add_status(rdap_status(status))
    for event in _dicts(doc.get("events")):
        target = EVENT_DATES.get(_str(event.get("eventAction")).lower())
        if target is not None:
            builder.set_date(target, _str(event.get("eventDate")))
    for server in _dicts(doc.get("nameservers")):
        builder.add_name_server(_str(server.get("ldhName")) or _str(server.get("unicodeName")))
    secure = doc.get("secureDNS")
    if isinstance(secure, dict) and isinstance(secure.get("delegationSigned"), bool):
        builder.set_dnssec(SIGNED if secure["delegationSigned"] else UNSIGNED)
    if _str(doc.get("port43")):
        builder.set_registrar("whois_server", _str(doc.get("port43")))
    for entity in _walk_entities(doc.get("entities"), depth=0):
        _apply_entity(builder, entity)
    _apply_redactions(builder, doc.get("redacted"))
    return builder.freeze()


def rdap_status(word: str) -> str:
    """RFC 8056 §2 mapping to EPP spelling; other RDAP words are kept."""
    words = word.strip().split()
    if not words:
        return word
    if [w.lower() for w in words] == ["active"]:
        return "ok"
    joined = words[0].lower() + "".join(w.capitalize() for w in words[1:])
    return EPP_STATUSES.get(joined.lower(), word.strip())


def related_links(doc: object) -> list[str]:
    """``links`` with ``rel: related`` to another RDAP server (the registrar's), in order."""
    if not isinstance(doc, dict):
        return []
    out: list[str] = []
    for link in _dicts(doc.get("links")):
        href = _str(link.get("href"))
        media = _str(link.get("type"))
        related = _str(link.get("rel")) == "related" and media in ("", RDAP_MEDIA_TYPE)
        if related and "/domain/" in href and href not in out:
            out.append(href)
    return out


def _apply_entity(builder: Builder, entity: dict[str, Any]) -> None:
    roles = {r.lower() for r in _list(entity.get("roles")) if isinstance(r, str)}
    card = vcard(entity) + jscontact_properties(entity)  # jCard first, then its successor
    if "registrar" in roles:
        builder.set_registrar("name", _first(card, "fn") or _first(card, "org"))
        builder.set_registrar("url", _first(card, "url"))
        for public_id in _dicts(entity.get("publicIds")):
            if "iana" in _str(public_id.get("type")).lower():
                builder.set_registrar("iana_id", _str(public_id.get("identifier")))
        if _str(entity.get("port43")):
            builder.set_registrar("whois_server", _str(entity.get("port43")))
    if "abuse" in roles:
        builder.set_registrar("abuse_email", _first(card, "email"))
        builder.set_registrar("abuse_phone", _tel(card))
    for role in roles:
        if role in CONTACT_ROLES:
            _fill_contact(builder.contact(CONTACT_ROLES[role]), entity, card)


def _fill_contact(contact: ContactBuilder, entity: dict[str, Any], card: list[list[Any]]) -> None:
    if any("redacted" in _str(r.get("title")).lower() for r in _dicts(entity.get("remarks"))):
        contact.redacted = True
    name = _first(card, "fn")
    if name == "" and any(p and p[0] == "fn" for p in card):
        contact.redacted = True  # an emptied fn is how many registries redact
    contact.set("name", name)
    contact.set("organization", _first(card, "org"))
    contact.set("email", _first(card, "email"))
    contact.set("phone", _tel(card))
    for prop in card:
        if prop[0] == "adr" and len(prop) >= 4:
            _fill_address(contact, prop[1], prop[3])
            break


def _fill_address(contact: ContactBuilder, params: object, value: object) -> None:
    if isinstance(value, list) and len(value) >= 7:
        street = value[2]
        for line in street if isinstance(street, list) else [street]:
            if isinstance(line, str):
                contact.set("street", line)
        contact.set("city", _str(value[3]))
        contact.set("state", _str(value[4]))
        contact.set("postal_code", _str(value[5]))
        contact.set("country", _str(value[6]))
    if isinstance(params, dict):
        contact.set("country", _str(params.get("cc")))


def _apply_redactions(builder: Builder, redacted: object) -> None:
    """RFC 9537: ``{"name": {"type": "Registrant Email"}, ...}`` marks that contact redacted."""
    for item in _dicts(redacted):
        name = item.get("name")
        label = ""
        if isinstance(name, dict):
            label = _str(name.get("type")) or _str(name.get("description"))
        first_word = label.strip().split(" ", 1)[0].lower() if label.strip() else ""
        role = REDACTED_PREFIXES.get(first_word)
        if role is not None:
            builder.contact(role).redacted = True


def vcard(entity: dict[str, Any]) -> list[list[Any]]:
    """The property list of ``vcardArray`` (``["vcard", [[name, params, type, value], …]]``)."""
    array = entity.get("vcardArray")
    if isinstance(array, list) and len(array) == 2 and isinstance(array[1], list):
        return [p for p in array[1] if isinstance(p, list) and p and isinstance(p[0], str)]
    return []


def _first(card: list[list[Any]], name: str) -> str | None:
    for prop in card:
        if prop[0] == name and len(prop) >= 4:
            value = prop[3]
            if isinstance(value, list):
                value = " ".join(v for v in value if isinstance(v, str) and v)
            return value if isinstance(value, str) else None
    return None


def _tel(card: list[list[Any]]) -> str | None:
    for prop in card:
        if prop[0] == "tel" and len(prop) >= 4 and isinstance(prop[3], str):
            kinds = prop[1].get("type", "voice") if isinstance(prop[1], dict) else "voice"
            if "fax" not in str(kinds):
                return prop[3].removeprefix("tel:")
    return None


def _walk_entities(entities: object, depth: int) -> Iterator[dict[str, Any]]:
    if depth > 3:
        return
    for entity in _dicts(entities):
        yield entity
        yield from _walk_entities(entity.get("entities"), depth + 1)


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in _list(value) if isinstance(v, dict)]


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""
