"""An ``WhoisAnswer`` -> the two response bodies: the text view and the JSON record (pure).

The text view is the raw view: every hop's answer as received (decoded to UTF-8, control
characters removed), each under a ``# server (role, protocol)`` line. An RDAP answer has no text
of its own, so it is rendered with the ICANN RDDS labels (``Domain Name:``, ``Registrar:``,
``Registrant Name:`` …) that readers of port-43 output already know.
"""

from __future__ import annotations

from typing import Any, Final

from assetgate.whois.lookup import Hop, WhoisAnswer
from assetgate.whois.parse.rdap import vcard
from assetgate.whois.record import RecordSource, make_record

ROLE_LABELS: Final = {
    "registrant": "Registrant",
    "administrative": "Admin",
    "technical": "Tech",
    "billing": "Billing",
    "abuse": "Registrar Abuse Contact",
    "reseller": "Reseller",
}
MAX_ENTITY_DEPTH: Final = 3


def render_text(answer: WhoisAnswer, *, rdap_as_json: bool = False) -> str:
    parts = []
    for hop in answer.hops:
        kind = "whois port 43" if hop.protocol == "whois" else "RDAP"
        where = hop.server if hop.protocol == "whois" else hop.query
        parts.append(f"# {where} ({hop.role}, {kind})\n{_hop_body(answer, hop, rdap_as_json)}\n")
    return "\n".join(parts)


def render_record(answer: WhoisAnswer, *, cached: bool, raw: bool) -> dict[str, Any]:
    first = answer.hops[0]
    source = RecordSource(
        protocol=first.protocol,
        server=first.server,
        hops=len(answer.hops),
        fetched_at=answer.fetched_at,
        cached=cached,
        contacts_from=dict(answer.contacts_from),
    )
    return make_record(
        domain=answer.domain.ascii,
        domain_unicode=answer.domain.unicode,
        tld=answer.domain.tld,
        parsed=answer.parsed,
        source=source,
        warnings=answer.warnings,
        raw=render_text(answer, rdap_as_json=True) if raw else None,
    )


def _hop_body(answer: WhoisAnswer, hop: Hop, rdap_as_json: bool) -> str:
    if hop.protocol == "whois":
        return hop.text.rstrip("\n")
    if hop.status == 404:
        return f'No match for "{answer.domain.ascii}": the RDAP server answered 404 Not Found.'
    if rdap_as_json:
        return hop.text.rstrip("\n")
    return "\n".join(rdap_lines(hop.document))


def rdap_lines(doc: object) -> list[str]:
    """An RDAP domain object as ``Label: value`` lines."""
    if not isinstance(doc, dict):
        return []
    lines = _pairs(
        ("Domain Name", doc.get("ldhName")),
        ("Unicode Name", doc.get("unicodeName")),
        ("Registry Domain ID", doc.get("handle")),
    )
    lines += [f"Domain Status: {s}" for s in _list(doc.get("status")) if isinstance(s, str)]
    for event in _dicts(doc.get("events")):
        action, date = event.get("eventAction"), event.get("eventDate")
        if isinstance(action, str) and isinstance(date, str):
            lines.append(f"{action[:1].upper()}{action[1:]}: {date}")
    for server in _dicts(doc.get("nameservers")):
        lines += _pairs(("Name Server", server.get("ldhName")))
    secure = doc.get("secureDNS")
    if isinstance(secure, dict) and isinstance(secure.get("delegationSigned"), bool):
        lines.append(f"DNSSEC: {'signedDelegation' if secure['delegationSigned'] else 'unsigned'}")
    lines += _entity_lines(doc.get("entities"), 0)
    for kind in ("remarks", "notices"):
        for note in _dicts(doc.get(kind)):
            title = note.get("title")
            text = " ".join(d for d in _list(note.get("description")) if isinstance(d, str))
            lines.append(f"{kind[:-1].title()}: {title if isinstance(title, str) else ''} {text}")
    return [line.rstrip() for line in lines]


def _entity_lines(entities: object, depth: int) -> list[str]:
    lines: list[str] = []
    if depth > MAX_ENTITY_DEPTH:
        return lines
    for entity in _dicts(entities):
        card: dict[str, list[Any]] = {}
        for prop in vcard(entity):
            if len(prop) >= 4 and not (prop[0] == "tel" and "fax" in str(prop[1])):
                card.setdefault(prop[0], prop)
        for role in (r for r in _list(entity.get("roles")) if isinstance(r, str)):
            if role == "registrar":
                lines += _pairs(
                    ("Registrar", _value(card, "fn")), ("Registrar URL", _value(card, "url"))
                )
                for public_id in _dicts(entity.get("publicIds")):
                    lines += _pairs(("Registrar IANA ID", public_id.get("identifier")))
                continue
            label = ROLE_LABELS.get(role, role.title())
            lines += _pairs(
                (f"{label} Name", _value(card, "fn")),
                (f"{label} Organization", _value(card, "org")),
                (f"{label} Street", _value(card, "adr")),
                (f"{label} Email", _value(card, "email")),
                (f"{label} Phone", _value(card, "tel")),
            )
        lines += _entity_lines(entity.get("entities"), depth + 1)
    return lines


def _value(card: dict[str, list[Any]], name: str) -> str | None:
    prop = card.get(name)
    if prop is None:
        return None
    value = prop[3]
    if isinstance(value, list):
        flat: list[str] = []
        for item in value:
            flat += [i for i in item if isinstance(i, str)] if isinstance(item, list) else [item]
        value = ", ".join(v for v in flat if isinstance(v, str) and v)
    return value.removeprefix("tel:") if isinstance(value, str) else None


def _pairs(*pairs: tuple[str, object]) -> list[str]:
    return [f"{label}: {value}" for label, value in pairs if isinstance(value, str) and value]


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in _list(value) if isinstance(v, dict)]


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
