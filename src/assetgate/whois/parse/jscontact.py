"""JSContact cards (RFC 9553) in RDAP entities, read as the jCard properties they replace (pure).

RDAP is moving from jCard (``vcardArray``, RFC 7095) to JSContact (the ``jscard`` member of an
entity, draft-ietf-regext-rdap-jscontact; ``jscard_0`` in early deployments). A registry in
transition may send either or both, so a card is turned into the jCard property list the RDAP
parser already reads (``fn``, ``org``, ``email``, ``tel``, ``url``, ``adr``) and appended after
the entity's own jCard: where both say something, the jCard value is read first, and a card
that only JSContact carries is read all the same. Malformed members are skipped, never raised.
"""

from __future__ import annotations

from typing import Any, Final

MEMBERS: Final = ("jscard", "jscard_0")
# RFC 9553 §2.5.1.1 address component kinds that belong to the street line, in their order.
STREET_KINDS: Final = frozenset(
    {"number", "name", "building", "floor", "apartment", "room", "block", "direction",
     "postOfficeBox", "subdistrict", "district", "landmark"}
)  # fmt: skip


def jscontact_properties(entity: dict[str, Any]) -> list[list[Any]]:
    """The entity's JSContact card as jCard properties (``[name, params, type, value]``)."""
    card = next((entity[m] for m in MEMBERS if isinstance(entity.get(m), dict)), None)
    if card is None:
        return []
    props: list[list[Any]] = []
    name = _name(card.get("name"))
    if name is not None:
        props.append(["fn", {}, "text", name])
    for org in _members(card.get("organizations")):
        if isinstance(org.get("name"), str):
            props.append(["org", {}, "text", org["name"]])
    for email in _members(card.get("emails")):
        if isinstance(email.get("address"), str):
            props.append(["email", {}, "text", email["address"]])
    for phone in _members(card.get("phones")):
        if isinstance(phone.get("number"), str):
            features = phone.get("features")
            kinds = [k for k, on in features.items() if on] if isinstance(features, dict) else []
            props.append(["tel", {"type": kinds or ["voice"]}, "uri", phone["number"]])
    for link in _members(card.get("links")):
        if isinstance(link.get("uri"), str):
            props.append(["url", {}, "uri", link["uri"]])
    for address in _members(card.get("addresses")):
        props.append(_adr(address))
        break
    return props


def _name(name: object) -> str | None:
    if not isinstance(name, dict):
        return None
    if isinstance(name.get("full"), str):
        return str(name["full"])
    parts = [
        c["value"]
        for c in _list(name.get("components"))
        if isinstance(c, dict) and isinstance(c.get("value"), str) and c.get("kind") != "separator"
    ]
    return " ".join(parts) if parts else None


def _adr(address: dict[str, Any]) -> list[Any]:
    """jCard ``adr`` value: ``["", "", [street], locality, region, postcode, country]``."""
    street: list[str] = []
    found: dict[str, str] = {}
    for component in _list(address.get("components")):
        if not isinstance(component, dict) or not isinstance(component.get("value"), str):
            continue
        kind = component.get("kind")
        if kind in STREET_KINDS:
            street.append(component["value"])
        elif isinstance(kind, str):
            found.setdefault(kind, component["value"])
    line = " ".join(street) or (address["full"] if isinstance(address.get("full"), str) else "")
    value = ["", "", [line] if line else [], found.get("locality", ""), found.get("region", ""),
             found.get("postcode", ""), found.get("country", "")]  # fmt: skip
    code = address.get("countryCode")
    return ["adr", {"cc": code} if isinstance(code, str) else {}, "text", value]


def _members(value: object) -> list[dict[str, Any]]:
    """A JSContact ``Id[Object]`` map's values (a list accepted too), objects only."""
    items = value.values() if isinstance(value, dict) else _list(value)
    return [item for item in items if isinstance(item, dict)]


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
