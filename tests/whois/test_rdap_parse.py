"""RDAP JSON -> the same record fields as port 43, defensively."""

from __future__ import annotations

from typing import Any

import pytest

from assetgate.whois.parse.rdap import parse_rdap, rdap_status, related_links
from assetgate.whois.record import Contact, Dates, Registrar, merge
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


JSCARD_REGISTRANT = {
    "objectClassName": "entity",
    "roles": ["registrant"],
    "jscard": {
        "@type": "Card",
        "version": "1.0",
        "kind": "individual",
        "name": {"components": [{"kind": "given", "value": "Jane"},
                                {"kind": "surname", "value": "Doe"}]},
        "organizations": {"o1": {"@type": "Organization", "name": "Example Holdings"}},
        "emails": {"e1": {"@type": "EmailAddress", "address": "jane@example.org"}},
        "phones": {"f1": {"number": "tel:+1.5555550100", "features": {"fax": True}},
                   "p1": {"number": "tel:+1.5555550199", "features": {"voice": True}}},
        "addresses": {"a1": {"@type": "Address", "countryCode": "US", "components": [
            {"kind": "number", "value": "1600"}, {"kind": "name", "value": "Example Ave"},
            {"kind": "locality", "value": "Springfield"}, {"kind": "region", "value": "IL"},
            {"kind": "postcode", "value": "62701"}]}},
    },
}  # fmt: skip
REGISTRAR_JSCARD = {
    "objectClassName": "entity",
    "roles": ["registrar"],
    "publicIds": [{"type": "IANA Registrar ID", "identifier": "9999"}],
    "jscard": {"@type": "Card", "version": "1.0", "kind": "org",
               "name": {"full": "Example Registrar, Inc."},
               "links": {"l1": {"@type": "Link", "uri": "https://registrar.example"}}},
}  # fmt: skip


def test_jscontact_cards_are_read_like_jcards() -> None:
    """RFC 9553 cards (issue 40): before, an entity with only ``jscard`` gave no contact."""
    doc = {"objectClassName": "domain", "ldhName": "example.org",
           "entities": [JSCARD_REGISTRANT, REGISTRAR_JSCARD]}  # fmt: skip
    parsed = parse_rdap(doc)
    assert parsed.registrant == Contact(
        name="Jane Doe",
        organization="Example Holdings",
        email="jane@example.org",
        phone="+1.5555550199",
        street=("1600 Example Ave",),
        city="Springfield",
        state="IL",
        postal_code="62701",
        country="US",
    )
    assert parsed.registrar == Registrar(
        name="Example Registrar, Inc.", iana_id="9999", url="https://registrar.example"
    )


def test_jcard_wins_where_both_cards_say_something() -> None:
    jcard = ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", "J. Doe"]]]
    both = {**JSCARD_REGISTRANT, "vcardArray": jcard}
    parsed = parse_rdap({"objectClassName": "domain", "ldhName": "example.org", "entities": [both]})
    assert parsed.registrant.name == "J. Doe"
    assert parsed.registrant.email == "jane@example.org"  # only the JSContact card has one


@pytest.mark.parametrize("card", [None, [], "x", {"name": 5, "emails": [1, "a"], "addresses": 3}])
def test_malformed_jscontact_is_skipped(card: object) -> None:
    entity = {"roles": ["registrant"], "jscard": card}
    parsed = parse_rdap(
        {"objectClassName": "domain", "ldhName": "example.org", "entities": [entity]}
    )
    assert parsed.registrant == Contact()
