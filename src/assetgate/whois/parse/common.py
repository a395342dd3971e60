"""What every whois text parser shares (pure): line splitting, value cleaning and a builder.

Registries disagree on layout but agree on meaning, so each per-format parser only maps its
labels onto the ``Builder`` below; the builder owns the rules of the record: placeholders such as
``REDACTED FOR PRIVACY`` become ``None`` with ``redacted: true``, statuses lose their ICANN URL,
name servers are lower case without the trailing dot or glue addresses, dates go through
``parse_date`` and an unreadable date is a warning, never an error.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Final

from assetgate.whois.parse.blocks import COMMENT_PREFIXES
from assetgate.whois.parse.dates import parse_date
from assetgate.whois.record import (
    EMPTY_CONTACT,
    SIGNED,
    UNPARSED_DATE,
    UNSIGNED,
    Contact,
    Dates,
    Parsed,
    Registrar,
)

# RFC 5731 §2.3 EPP statuses, keyed by lower case for canonical spelling.
EPP_STATUSES: Final = {
    s.lower(): s
    for s in [
        "ok",
        "inactive",
        "pendingCreate",
        "pendingDelete",
        "pendingRenew",
        "pendingRestore",
        "pendingTransfer",
        "pendingUpdate",
        "clientDeleteProhibited",
        "clientHold",
        "clientRenewProhibited",
        "clientTransferProhibited",
        "clientUpdateProhibited",
        "serverDeleteProhibited",
        "serverHold",
        "serverRenewProhibited",
        "serverTransferProhibited",
        "serverUpdateProhibited",
        "addPeriod",
        "autoRenewPeriod",
        "renewPeriod",
        "transferPeriod",
        "redemptionPeriod",
    ]
}

_PLACEHOLDER: Final = re.compile(
    r"""^\W*(?:
        redacted\b.* | data\s+redacted.* | \[?redacted\]? | privacy\s+redacted.*
      | data\s+protected.* | not\s+disclosed.* | non-public\s+data.* | gdpr\s+masked.*
      | statutory\s+masking\s+enabled.* | hidden\s+upon\s+user\s+request.* | withheld.*
      | private | privacy | personal\s+data.* | ano\s+nymous | not\s+available\s+from\s+registry
      | (?:please\s+)?(?:query|contact|ask)\s+the\s+(?:rdds|registrar|whois).*
      | select\s+request\s+email\s+form.* | identity\s+protected.*
      | not\s+published
    )\W*$""",
    re.IGNORECASE | re.VERBOSE,
)
# "Key: value", and "Key:value" as older Afilias/CentralNic answers write it.
_KEY_VALUE: Final = re.compile(r"^\s*([^\s:%#>][^:]{0,80}?)\s*:\s*(.*?)\s*$")
_IP_TAIL: Final = re.compile(r"[\s\[(,]")
# A registry handle after a registrar's name; the name is the field, the handle stays in raw.
# A date the registry says it has none of (NASK: ``renewal date: not defined`` for a name with
# no renewal, such as the registry's own): no date, and no ``unparsed_date``/``missing:`` warning.
NO_DATE: Final = frozenset({"not defined"})
_HANDLE_SUFFIX: Final = re.compile(r"\s*\((?=[A-Z0-9-]*\d)[A-Z0-9]+(?:-[A-Z0-9]+)+\)$")
_BRACKETED: Final = re.compile(r"\(\s*([A-Za-z]+)\s*\)$")
_WORD: Final = re.compile(r"\w+")


_UNSIGNED_WORDS: Final = ("unsigned", "no", "not signed", "inactive", "false", "off", "none")
_SIGNED_WORDS: Final = ("signed", "yes", "active", "true", "on", "y")


def is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value))


def clean(value: str | None) -> str | None:
    """Strip; empty -> ``None``. Placeholders are handled by the builder, not here."""
    if value is None:
        return None
    text = value.strip()
    return text or None


def key_values(text: str) -> Iterator[tuple[str, str]]:
    """``Key: value`` lines as (lower-case key with single spaces, stripped value)."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(COMMENT_PREFIXES):
            continue
        match = _KEY_VALUE.match(line)
        if match is None:
            continue
        key = " ".join(match[1].lower().split())
        yield key.rstrip("."), (match[2] or "").strip()


def status_codes(value: str, *, split: bool = True) -> list[str]:
    """``clientHold https://icann.org/epp#clientHold`` -> ``["clientHold"]``; keep ccTLD words.

    ``Delete Prohibited by Registrar (clientDeleteProhibited)`` -> the EPP code in brackets.
    ``split=False`` for registries that write one status per line, commas and all.
    """
    text = re.sub(r"\(?\s*https?://\S*\)?", "", value).strip().rstrip(".").strip()
    if not text:
        return []
    bracketed = _BRACKETED.search(text)
    if bracketed is not None and bracketed[1].lower() in EPP_STATUSES:
        return [EPP_STATUSES[bracketed[1].lower()]]
    words = text.replace("_", " ").split()
    joined = words[0].lower() + "".join(w.capitalize() for w in words[1:])
    if joined.lower() in EPP_STATUSES:
        return [EPP_STATUSES[joined.lower()]]
    if "," in text and split:  # ARNES: "client_delete_prohibited,client_update_prohibited"
        return [code for part in text.split(",") for code in status_codes(part, split=False)]
    return [text]


def same_party(name: str | None, organization: str | None) -> bool:
    """``Google Inc.`` / ``Inc. Google`` / ``MarkMonitor Inc``: the organisation written again
    where a person's name belongs (the same words, in any order, case and punctuation aside)."""
    if not name or not organization:
        return False
    words = [set(_WORD.findall(text.lower())) for text in (name, organization)]
    return bool(words[0]) and words[0] == words[1]


def name_server(value: str) -> str | None:
    """``NS1.Example.COM. 192.0.2.1`` -> ``ns1.example.com``; addresses alone -> ``None``."""
    host = _IP_TAIL.split(value.strip(), maxsplit=1)[0].strip().rstrip(".").lower()
    if not host or "." not in host:
        return None
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host
    return None


def dnssec_value(value: str) -> str | None:
    """Every registry's wording -> ``signed`` / ``unsigned``; unknown wording -> ``None``."""
    lowered = " ".join(value.strip().lower().replace("_", " ").split())
    if not lowered:
        return None
    if lowered.startswith(_UNSIGNED_WORDS) or lowered in ("n", "0", "false"):
        return UNSIGNED
    if lowered.startswith(_SIGNED_WORDS) or "signeddelegation" in lowered:
        return SIGNED
    return None


@dataclass(slots=True)
class ContactBuilder:
    name: str | None = None
    organization: str | None = None
    email: str | None = None
    phone: str | None = None
    street: list[str] = field(default_factory=list)
    city: str | None = None
    state: str | None = None
    postal_code: str | None = None
    country: str | None = None
    redacted: bool = False

    def set(self, name: str, value: str | None) -> None:
        """Set a field once; a placeholder marks the contact redacted instead."""
        text = clean(value)
        if text is None:
            return
        if is_placeholder(text) or (name == "email" and "@" not in text):
            self.redacted = True
            return
        if name == "street":
            if text not in self.street:
                self.street.append(text)
        elif getattr(self, name) is None:
            setattr(self, name, text)

    def freeze(self) -> Contact:
        contact = Contact(
            name=self.name,
            organization=self.organization,
            email=self.email,
            phone=self.phone,
            street=tuple(self.street),
            city=self.city,
            state=self.state,
            postal_code=self.postal_code,
            country=self.country,
            redacted=self.redacted,
        )
        return EMPTY_CONTACT if contact == EMPTY_CONTACT else contact


@dataclass(slots=True)
class Builder:
    """Mutable accumulator a parser fills line by line; ``freeze()`` gives the ``Parsed``."""

    domain: str | None = None
    registrar: dict[str, str] = field(default_factory=dict)
    dates: dict[str, str | None] = field(default_factory=dict)
    status: list[str] = field(default_factory=list)
    name_servers: list[str] = field(default_factory=list)
    dnssec: str | None = None
    contacts: dict[str, ContactBuilder] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    referral: str | None = None
    not_found: bool = False
    stated_absent: set[str] = field(default_factory=set)  # field paths the answer says are unset

    def set_domain(self, value: str) -> None:
        if self.domain is None and clean(value):
            self.domain = value.strip().rstrip(".").lower()

    def set_registrar(self, name: str, value: str | None) -> None:
        text = clean(value)
        if text is None or (name == "iana_id" and not text.isdigit()):
            return  # "not applicable" is no IANA id
        if name == "name":
            text = _HANDLE_SUFFIX.sub("", text) or text  # "MarkMonitor, Inc. (R22-LRCC)"
        if name not in self.registrar and not is_placeholder(text):
            self.registrar[name] = text

    def set_date(self, name: str, value: str | None) -> None:
        """``name`` is created, updated or expires; the first readable value wins."""
        text = clean(value)
        if text is None or self.dates.get(name):
            return
        if text.casefold() in NO_DATE:
            self.stated_absent.add(f"dates.{name}")
            return
        parsed = parse_date(text)
        if parsed is None:
            self.warn(UNPARSED_DATE)
        self.dates[name] = parsed

    def add_status(self, value: str, *, split: bool = True) -> None:
        for code in status_codes(value, split=split):
            if code not in self.status:
                self.status.append(code)

    def add_name_server(self, value: str) -> None:
        host = name_server(value)
        if host is not None and host not in self.name_servers:
            self.name_servers.append(host)

    def set_dnssec(self, value: str) -> None:
        if self.dnssec is None:
            self.dnssec = dnssec_value(value)

    def set_referral(self, value: str) -> None:
        text = clean(value)
        if self.referral is None and text is not None:
            self.referral = text

    def contact(self, role: str) -> ContactBuilder:
        return self.contacts.setdefault(role, ContactBuilder())

    def warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)

    def freeze(self) -> Parsed:
        contacts = {role: c.freeze() for role, c in self.contacts.items() if role != "registrant"}
        registrant = self.contacts.get("registrant", ContactBuilder()).freeze()
        parsed = Parsed(
            domain=self.domain,
            registrar=Registrar(**self.registrar),
            dates=Dates(**self.dates),
            status=tuple(self.status),
            name_servers=tuple(sorted(self.name_servers)),
            dnssec=self.dnssec,
            registrant=registrant,
            contacts={role: c for role, c in contacts.items() if not c.is_empty()},
            warnings=tuple(self.warnings),
            referral=self.referral,
        )
        if self.not_found and not parsed.has_data():
            return Parsed(registered=False, domain=self.domain, warnings=parsed.warnings)
        return replace(parsed, registered=True) if parsed.has_data() else parsed
