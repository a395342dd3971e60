"""RDAP JSON -> the same record fields as port 43, defensively."""

from __future__ import annotations

from typing import Any

import pytest

from assetgate.whois.parse.rdap import parse_rdap, rdap_status, related_links
from assetgate.whois.record import Contact, Dates, merge
from tests.whois.rdap_samples import registrar_domain, registry_domain


def test_registry_object() -> None:
    parsed = parse_rdap(
        registry_domain("example.org", "https://rdap.registrar.test/domain/example.org")
    )
    assert parsed.domain == "example.org"
    assert parsed.dates == Dates(
        created="1995-04-30T04:00:00Z",
        updated="2025-04-01T10:00:00Z",
        expires="2026-04-29T04:00:00Z",
    )
    assert parsed.status == (
        "clientDeleteProhibited",
        "clientTransferProhibited",
        "serverUpdateProhibited",
    )
    assert parsed.name_servers == ("ns1.example.org", "ns2.example.net")
    assert parsed.dnssec == "unsigned"
    assert parsed.registrar.name == "Example Registrar, LLC"
    assert parsed.registrar.iana_id == "292"
    assert parsed.registrar.abuse_email == "abuse@registrar.test"
    assert parsed.registrar.abuse_phone == "+1.2025550111"


def test_registrar_object_redactions_rfc9537_and_jcard() -> None:
    parsed = parse_rdap(registrar_domain("example.org"))
    assert parsed.registrant == Contact(
        organization="Example Foundation", city="Geneva", country="CH", redacted=True
    )
    tech = Contact(
        name="Hostmaster",
        organization="Example Foundation",
        email="hostmaster@example.org",
        phone="+41.220000000",
        street=("1 Rue Exemple", "Bâtiment B"),
        city="Geneva",
        state="GE",
        postal_code="1201",
        country="CH",
    )
    assert parsed.contacts == {"tech": tech, "admin": tech}
    assert parsed.registrar.whois_server == "whois.registrar.test"


def test_registry_and_registrar_merge() -> None:
    registry = parse_rdap(registry_domain("example.org", None))
    merged = merge(registry, parse_rdap(registrar_domain("example.org")))
    assert merged.status == registry.status  # the registry is authoritative for status
    assert merged.registrant.organization == "Example Foundation"
    assert merged.registrar.iana_id == "292"


def test_related_links() -> None:
    doc = registry_domain("example.org", "https://rdap.registrar.test/domain/example.org")
    assert related_links(doc) == ["https://rdap.registrar.test/domain/example.org"]
    assert related_links(registry_domain("example.org", None)) == []


@pytest.mark.parametrize(
    ("word", "code"),
    [("active", "ok"), ("client transfer prohibited", "clientTransferProhibited"),
     ("server hold", "serverHold"), ("pending delete", "pendingDelete"),
     ("redemption period", "redemptionPeriod"), ("associated", "associated")],
)  # fmt: skip
def test_rfc8056_status_mapping(word: str, code: str) -> None:
    assert rdap_status(word) == code


@pytest.mark.parametrize(
    "doc",
    [
        None,
        [],
        "x",
        {"ldhName": 5, "events": "x", "entities": [1, None, {"roles": "registrar"}]},
        {"entities": [{"roles": ["registrant"], "vcardArray": ["vcard", [["fn"], 3, []]]}]},
        {"events": [{"eventAction": "registration", "eventDate": "garbage"}]},
        {"secureDNS": {"delegationSigned": "yes"}, "nameservers": [{"ldhName": None}]},
        {"redacted": [{"name": "x"}, 3, {"name": {"type": 4}}]},
    ],
)
def test_non_conformant_json_never_raises(doc: Any) -> None:
    parsed = parse_rdap(doc)
    assert parsed.name_servers == ()
