"""RDAP answers written in the shape registries and registrars send (RFC 9083, RFC 9537)."""

from __future__ import annotations

from typing import Any


def card(*props: list[Any]) -> list[Any]:
    return ["vcard", [["version", {}, "text", "4.0"], *props]]


def registry_domain(name: str, related: str | None) -> dict[str, Any]:
    links: list[dict[str, Any]] = [
        {"value": f"/domain/{name}", "rel": "self", "href": f"/domain/{name}"},
    ]
    if related is not None:
        links.append({"rel": "related", "href": related, "type": "application/rdap+json"})
    return {
        "objectClassName": "domain",
        "rdapConformance": ["rdap_level_0", "icann_rdap_response_profile_0"],
        "handle": "D402200000000000001-LROR",
        "ldhName": name.upper(),
        "links": links,
        "status": [
            "client delete prohibited",
            "client transfer prohibited",
            "server update prohibited",
        ],
        "events": [
            {"eventAction": "registration", "eventDate": "1995-04-30T04:00:00Z"},
            {"eventAction": "expiration", "eventDate": "2026-04-29T04:00:00Z"},
            {"eventAction": "last changed", "eventDate": "2025-04-01T10:00:00.123Z"},
            {"eventAction": "last update of RDAP database", "eventDate": "2025-06-01T12:00:00Z"},
        ],
        "entities": [
            {
                "objectClassName": "entity",
                "handle": "292",
                "roles": ["registrar"],
                "publicIds": [{"type": "IANA Registrar ID", "identifier": "292"}],
                "vcardArray": card(["fn", {}, "text", "Example Registrar, LLC"]),
                "entities": [
                    {
                        "objectClassName": "entity",
                        "roles": ["abuse"],
                        "vcardArray": card(
                            ["fn", {}, "text", ""],
                            ["tel", {"type": "voice"}, "uri", "tel:+1.2025550111"],
                            ["email", {}, "text", "abuse@registrar.test"],
                        ),
                    }
                ],
            }
        ],
        "nameservers": [
            {"objectClassName": "nameserver", "ldhName": "NS1.EXAMPLE.ORG"},
            {"objectClassName": "nameserver", "ldhName": "ns2.example.net."},
        ],
        "secureDNS": {"delegationSigned": False},
        "notices": [{"title": "Terms of Use", "description": ["Service subject to terms."]}],
    }


def registrar_domain(name: str) -> dict[str, Any]:
    return {
        "objectClassName": "domain",
        "rdapConformance": ["rdap_level_0", "redacted"],
        "ldhName": name,
        "port43": "whois.registrar.test",
        "status": ["client transfer prohibited"],
        "entities": [
            {
                "objectClassName": "entity",
                "roles": ["registrant"],
                "vcardArray": card(
                    ["fn", {}, "text", ""],
                    ["org", {}, "text", "Example Foundation"],
                    ["adr", {"cc": "CH"}, "text", ["", "", "", "Geneva", "", "", ""]],
                    ["email", {}, "text", "REDACTED FOR PRIVACY"],
                ),
                "remarks": [{"title": "REDACTED FOR PRIVACY", "type": "object redacted"}],
            },
            {
                "objectClassName": "entity",
                "roles": ["technical", "administrative"],
                "vcardArray": card(
                    ["fn", {}, "text", "Hostmaster"],
                    ["org", {}, "text", "Example Foundation"],
                    [
                        "adr",
                        {},
                        "text",
                        ["", "", ["1 Rue Exemple", "Bâtiment B"], "Geneva", "GE", "1201", "CH"],
                    ],
                    ["tel", {"type": ["voice"]}, "uri", "tel:+41.220000000"],
                    ["tel", {"type": ["fax"]}, "uri", "tel:+41.220000001"],
                    ["email", {}, "text", "hostmaster@example.org"],
                ),
            },
        ],
        "redacted": [
            {"name": {"type": "Registrant Name"}, "method": "emptyValue"},
            {"name": {"type": "Registrant Email"}, "method": "replacementValue"},
        ],
    }
