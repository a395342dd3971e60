"""The parsed whois record: one stable JSON shape for every registry and both protocols.

Every key is always present (``null`` or ``[]`` when a registry does not say), so a client can
read ``record["dates"]["expires"]`` without probing. The shape is docs/whois.md's; the
frozen dataclasses here are what the parsers produce, ``make_record`` turns them into JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypeVar

Protocol = Literal["whois", "rdap"]
_Filled = TypeVar("_Filled", "Registrar", "Dates")
ROLES: Final = ("admin", "tech", "billing")

# warnings[] vocabulary, declared once.
UNPARSED_FORMAT: Final = "unparsed_format"
RATE_LIMITED_UPSTREAM: Final = "rate_limited_upstream"
PARTIAL_REFERRAL: Final = "partial_referral"
REFERRAL_REFUSED: Final = "referral_refused"
UNPARSED_DATE: Final = "unparsed_date"
RDAP_FALLBACK: Final = "rdap_failed_used_whois"
UNSUPPORTED: Final = "whois_unsupported"
MISSING: Final = "missing:"  # + a field path: the registry publishes it, the parser found none

# dnssec is one of these (or null); the registry's own wording stays in ``raw``.
SIGNED: Final = "signed"
UNSIGNED: Final = "unsigned"

# Field paths a registry format may publish; ``missing:<path>`` names the ones not found.
FIELD_PATHS: Final = (
    "registrar",
    "dates.created",
    "dates.updated",
    "dates.expires",
    "name_servers",
    "status",
    "dnssec",
    "registrant.name",
    "registrant.organization",
    "registrant.street",
    "registrant.postal_code",
    "registrant.city",
    "registrant.country",
)


@dataclass(frozen=True, slots=True)
class Contact:
    name: str | None = None
    organization: str | None = None
    email: str | None = None
    phone: str | None = None
    street: tuple[str, ...] = ()
    city: str | None = None
    state: str | None = None
    postal_code: str | None = None
    country: str | None = None
    redacted: bool = False

    def is_empty(self) -> bool:
        return self == EMPTY_CONTACT


EMPTY_CONTACT: Final = Contact()


@dataclass(frozen=True, slots=True)
class Registrar:
    name: str | None = None
    iana_id: str | None = None
    url: str | None = None
    abuse_email: str | None = None
    abuse_phone: str | None = None
    whois_server: str | None = None


@dataclass(frozen=True, slots=True)
class Dates:
    """ISO 8601 UTC strings ending in ``Z``, or ``None``."""

    created: str | None = None
    updated: str | None = None
    expires: str | None = None


@dataclass(frozen=True, slots=True)
class Parsed:
    """What one answer (one hop) says about the domain.

    ``registered`` is ``None`` when the text neither shows data nor says "not found";
    ``referral`` is the next whois server the answer points to, if any.
    """

    registered: bool | None = None
    domain: str | None = None
    registrar: Registrar = Registrar()
    dates: Dates = Dates()
    status: tuple[str, ...] = ()
    name_servers: tuple[str, ...] = ()
    dnssec: str | None = None
    registrant: Contact = EMPTY_CONTACT
    contacts: dict[str, Contact] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    referral: str | None = None

    def has_data(self) -> bool:
        """Anything beyond the echoed name and a status word ("free" is a status too)."""
        return bool(
            self.registrar.name
            or self.dates != Dates()
            or self.name_servers
            or not self.registrant.is_empty()
            or self.contacts
        )


@dataclass(frozen=True, slots=True)
class RecordSource:
    protocol: Protocol
    server: str
    hops: int
    fetched_at: datetime
    cached: bool = False
    contacts_from: Mapping[str, str] = field(default_factory=dict)


def contact_sources(answers: Sequence[tuple[str, str, Parsed]]) -> dict[str, str]:
    """Which answer gave each contact of the merged record: role -> ``"<hop>: <server>"``
    (``registry: …``, ``referral 1: …``) for the (hop, server, parsed) answers ``merge`` folded
    in order (a later answer's non-empty contact wins, as there)."""
    out: dict[str, str] = {}
    for hop, server, parsed in answers:
        if not parsed.registrant.is_empty():
            out["registrant"] = f"{hop}: {server}"
        for role, contact in parsed.contacts.items():
            if not contact.is_empty():
                out[role] = f"{hop}: {server}"
    return out


def merge(first: Parsed, second: Parsed) -> Parsed:
    """Registry answer ``first`` completed by the registrar's ``second``.

    The registry is authoritative for dates, status and delegation; the registrar knows the
    contacts, so its non-empty contacts win.
    """
    contacts = dict(first.contacts)
    for role, contact in second.contacts.items():
        if not contact.is_empty():
            contacts[role] = contact
    merged = replace(
        first,
        registered=first.registered if first.registered is not None else second.registered,
        domain=first.domain or second.domain,
        registrar=_fill(first.registrar, second.registrar),
        dates=_fill(first.dates, second.dates),
        status=first.status or second.status,
        name_servers=first.name_servers or second.name_servers,
        dnssec=first.dnssec or second.dnssec,
        registrant=first.registrant if second.registrant.is_empty() else second.registrant,
        contacts=contacts,
        warnings=_unique(first.warnings + second.warnings),
    )
    # A field the registry lacks but the registrar gave is no longer missing.
    kept = tuple(w for w in merged.warnings if not _filled(merged, w))
    return replace(merged, warnings=kept)


def _filled(parsed: Parsed, warning: str) -> bool:
    return warning.startswith(MISSING) and bool(field_value(parsed, warning.removeprefix(MISSING)))


def field_value(parsed: Parsed, path: str) -> object:
    """The value at a ``FIELD_PATHS`` path (``registrar`` is the registrar's name)."""
    head, _, tail = path.partition(".")
    value: object = getattr(parsed, head)
    if head == "registrar":
        return parsed.registrar.name
    return getattr(value, tail) if tail else value


def missing(parsed: Parsed, paths: tuple[str, ...]) -> tuple[str, ...]:
    """``missing:<path>`` warnings for the ``paths`` a registered record has no value for.

    A holder the registry redacted (``REDACTED FOR PRIVACY``, ``NOT DISCLOSED``) has its fields
    withheld, not missed by the parser: no ``missing:registrant.*`` for it.
    """
    if parsed.registered is not True:
        return ()
    withheld = "registrant." if parsed.registrant.redacted else None
    return tuple(
        MISSING + path
        for path in paths
        if not field_value(parsed, path) and not (withheld and path.startswith(withheld))
    )


def make_record(
    *,
    domain: str,
    domain_unicode: str,
    tld: str,
    parsed: Parsed,
    source: RecordSource,
    warnings: tuple[str, ...] = (),
    raw: str | None = None,
) -> dict[str, Any]:
    """The JSON object of ``/api/whois/json``; ``raw`` is added only when asked for."""
    record: dict[str, Any] = {
        "domain": domain,
        "domain_unicode": domain_unicode,
        "tld": tld,
        "registered": parsed.registered,
        "source": {
            "protocol": source.protocol,
            "server": source.server,
            "hops": source.hops,
            "fetched_at": iso_utc(source.fetched_at),
            "cached": source.cached,
            "contacts_from": dict(source.contacts_from),
        },
        "registrar": _as_dict(parsed.registrar),
        "dates": _as_dict(parsed.dates),
        "status": list(parsed.status),
        "name_servers": list(parsed.name_servers),
        "dnssec": parsed.dnssec,
        "registrant": contact_dict(parsed.registrant),
        "contacts": {
            role: contact_dict(parsed.contacts.get(role, EMPTY_CONTACT)) for role in ROLES
        },
        "warnings": list(_unique(parsed.warnings + warnings)),
    }
    if raw is not None:
        record["raw"] = raw
    return record


def contact_dict(contact: Contact) -> dict[str, Any]:
    out = _as_dict(contact)
    out["street"] = list(contact.street)
    return out


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _as_dict(value: Contact | Registrar | Dates) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in fields(value)}


def _fill(first: _Filled, second: _Filled) -> _Filled:
    changes = {
        f.name: getattr(second, f.name)
        for f in fields(first)
        if getattr(first, f.name) is None and getattr(second, f.name) is not None
    }
    return replace(first, **changes) if changes else first


def _unique(items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
