"""Per registry format: our fixture, its TLD, and every value the registry publishes in it.

One table serves two uses: ``test_registry_formats.py`` checks each value, and ``coverage``
(``python -m tests.whois.coverage``) counts, per registry format, how many of the expected
values the parser finds: the figure in the whois reference page. Values the parser is known
to miss stay in the table (under ``KNOWN_MISSES``) so the figure stays honest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from assetgate.whois.parse import parse_whois
from assetgate.whois.record import Parsed, field_value
from tests.whois.conftest import sample

Expected = dict[str, object]


@dataclass(frozen=True)
class Case:
    registry: str
    fixture: str
    tld: str
    expected: Expected


def _ns(*hosts: str) -> tuple[str, ...]:
    return tuple(sorted(hosts))


CASES: Final = (
    Case("SIDN .nl", "sidn_nl.txt", "nl", {
        "registrar": "Voorbeeld Registrar B.V.", "dates.created": "1999-05-27T00:00:00Z",
        "dates.updated": "2024-11-08T00:00:00Z", "status": ("active",),
        "name_servers": _ns("ns1.example.nl", "ns2.example.net"), "dnssec": "signed",
    }),
    Case("SIDN layout .aw", "setar_aw.txt", "aw", {
        "registrar": "Example Caribbean Registrar N.V.", "dates.created": "2017-03-02T00:00:00Z",
        "dates.updated": "2025-02-14T00:00:00Z", "status": ("active",),
        "name_servers": _ns("ns1.example.aw", "ns2.example.aw"), "dnssec": "unsigned",
    }),
    Case("DNS Belgium .be", "dnsbe_be.txt", "be", {
        "registrar": "Voorbeeld Registrar NV", "dates.created": "2001-01-02T00:00:00Z",
        "status": ("NOT AVAILABLE", "clientTransferProhibited"),
        "name_servers": _ns("ns1.example.be", "ns2.example.be"), "dnssec": "signed",
    }),
    Case("Norid .no", "norid_no.txt", "no", {
        "registrar": "Eksempel Registrar AS", "dates.created": "1999-11-15T00:00:00Z",
        "dates.updated": "2024-11-16T00:00:00Z",
        "name_servers": _ns("ns1.eksempel.no", "ns2.eksempel.net"), "dnssec": "signed",
    }),
    Case("IEDR .ie", "iedr_ie.txt", "ie", {
        "registrar": "Example Registrar Ltd", "dates.created": "1999-07-27T00:00:00Z",
        "dates.expires": "2026-07-27T00:00:00Z", "status": ("Active",),
        "name_servers": _ns("ns1.example.ie", "ns2.example.net"),
        "registrant.name": "Example Trading Limited",
    }),
    Case("Island Networks .gg", "island_gg.txt", "gg", {
        "registrar": "Example Channel Registrar Ltd", "dates.created": "2003-04-30T00:00:00Z",
        "status": ("Active", "Registered until cancelled"),
        "name_servers": _ns("ns1.example.gg", "ns2.example.net"),
        "registrant.name": "Example Holdings Limited",
    }),
    Case("Island Networks .je", "island_je.txt", "je", {
        "registrar": "Example Channel Registrar Ltd", "dates.created": "2010-03-01T12:30:00Z",
        "status": ("Active", "Registered until cancelled"),
        "name_servers": _ns("ns1.example.je", "ns2.example.je"),
        "registrant.name": "Exemple Jersey Trust Company",
    }),
    Case("Freenom .tk", "freenom_tk.txt", "tk", {
        "dates.created": "2015-05-29T00:00:00Z", "dates.expires": "2026-05-29T00:00:00Z",
        "name_servers": _ns("ns1.example.net", "ns2.example.net"),
        "registrant.name": "Jan Voorbeeld", "registrant.organization": "Example Foundation",
        "registrant.street": ("Voorbeeldlaan 5",), "registrant.postal_code": "1011 AB",
        "registrant.city": "Amsterdam", "registrant.country": "Netherlands",
    }),
    Case("Freenom .ml", "freenom_ml.txt", "ml", {
        "dates.created": "2016-11-03T00:00:00Z", "dates.expires": "2026-11-03T00:00:00Z",
        "name_servers": _ns("ns01.example.net", "ns02.example.net"),
        "registrant.name": "Amadou Exemple", "registrant.organization": "Exemple Commerce SARL",
        "registrant.street": ("Rue 123, Porte 45",), "registrant.city": "Bamako",
        "registrant.country": "Mali",
    }),
    Case("IRNIC .ir", "irnic_ir.txt", "ir", {
        "dates.updated": "2024-01-10T00:00:00Z", "dates.expires": "2026-02-21T00:00:00Z",
        "name_servers": _ns("ns1.example.ir", "ns2.example.ir"),
        "registrant.organization": "Example Trading Company",
        "registrant.street": ("No. 12, Example Street, Tehran, Tehran, IR",),
        "registrant.city": "Tehran", "registrant.country": "IR",
    }),
    Case("CNNIC .cn", "cnnic_cn.txt", "cn", {
        "registrar": "示例注册服务有限公司", "dates.created": "2003-03-17T12:20:05Z",
        "dates.expires": "2026-03-17T12:48:36Z",
        "status": ("clientDeleteProhibited", "clientTransferProhibited"),
        "name_servers": _ns("ns1.example.cn", "ns2.example.cn"), "dnssec": "unsigned",
        "registrant.name": "示例科技有限公司",
    }),
    Case("ISNIC .is", "isnic_is.txt", "is", {
        "dates.created": "2000-01-18T00:00:00Z", "dates.expires": "2027-01-18T00:00:00Z",
        "name_servers": _ns("ns1.hysing.is", "ns2.hysing.net"), "dnssec": "unsigned",
        "registrant.name": "Dæmi ehf.",
        "registrant.street": ("Laugavegur 1", "101 Reykjavík", "Iceland"),
        "registrant.postal_code": "101", "registrant.city": "Reykjavík",
        "registrant.country": "Iceland",
    }),
    Case("NIC Argentina .ar", "nicar_ar.txt", "ar", {
        "registrar": "nicar", "dates.created": "2005-04-11T00:00:00Z",
        "dates.updated": "2024-03-28T14:21:20Z", "dates.expires": "2026-04-11T00:00:00Z",
        "name_servers": _ns("ns1.ejemplo.com.ar", "ns2.ejemplo.net"),
        "registrant.name": "EJEMPLO SOCIEDAD ANONIMA",
    }),
    Case("NIC Argentina .ar, dated objects", "nicar_ar_blocks.txt", "ar", {
        "registrar": "nicar", "dates.created": "2011-09-14T00:00:00Z",
        "dates.updated": "2025-02-03T11:47:05Z", "dates.expires": "2026-09-14T00:00:00Z",
        "name_servers": _ns("ns1.hosting-ejemplo.com.ar", "ns2.hosting-ejemplo.com.ar"),
        "registrant.name": "PÉREZ JUAN CARLOS",
    }),
    Case("IIS .nu", "iis_nu.txt", "nu", {
        "registrar": "Exempel Registrar AB", "dates.created": "2005-06-02T00:00:00Z",
        "dates.updated": "2024-05-12T00:00:00Z", "dates.expires": "2026-06-02T00:00:00Z",
        "status": ("serverUpdateProhibited",),
        "name_servers": _ns("ns1.example.nu", "ns2.example.net"), "dnssec": "signed",
    }),
    Case("NASK .pl", "nask_pl.txt", "pl", {
        "registrar": "Przykładowy Rejestrator Sp. z o.o.",
        "dates.created": "2001-03-15T13:00:00Z", "dates.updated": "2024-02-20T10:11:12Z",
        "dates.expires": "2026-03-14T13:00:00Z",
        "name_servers": _ns("ns1.przyklad.pl", "ns2.przyklad.net"), "dnssec": "unsigned",
    }),
    Case("NASK .pl, option and contact", "nask_pl_option.txt", "pl", {
        "registrar": "Hosting Przykładowy S.A.",
        "dates.created": "2009-06-22T12:00:00Z", "dates.updated": "2025-05-30T08:41:17Z",
        "dates.expires": "2026-06-21T14:00:00Z",
        "name_servers": _ns("ns1.opcja-przyklad.pl", "ns2.hosting-przyklad.com.pl"),
        "dnssec": "signed",
    }),
    Case("Traficom .fi", "traficom_fi.txt", "fi", {
        "registrar": "Esimerkki Rekisteröijä Oy", "dates.created": "2011-02-14T10:20:30Z",
        "dates.updated": "2025-02-02T00:00:00Z", "dates.expires": "2027-02-14T10:20:30Z",
        "status": ("Registered",), "name_servers": _ns("ns1.esimerkki.fi", "ns2.esimerkki.net"),
        "dnssec": "signed", "registrant.name": "Esimerkki Osakeyhtiö",
        "registrant.street": ("Mannerheimintie 10 A",), "registrant.postal_code": "00100",
        "registrant.city": "Helsinki", "registrant.country": "Finland",
    }),
    Case("JPRS .jp general-use", "jprs_general_en.txt", "jp", {
        "dates.created": "2001-02-07T00:00:00Z", "dates.updated": "2025-02-28T16:05:03Z",
        "dates.expires": "2026-02-28T00:00:00Z", "status": ("Active",),
        "name_servers": _ns("ns1.example.jp", "ns2.example.net"),
        "registrant.name": "Example Japan K.K.", "registrant.postal_code": "100-0001",
        "registrant.street": ("Chiyoda-ku, Tokyo", "1-1-1 Chiyoda"),
    }),
    Case("JPRS .jp general-use (Japanese)", "jprs_general_ja.txt", "jp", {
        "dates.created": "2001-02-07T00:00:00Z", "dates.updated": "2025-02-28T16:05:03Z",
        "dates.expires": "2026-02-28T00:00:00Z", "status": ("Active",),
        "name_servers": _ns("ns1.example.jp", "ns2.example.jp"), "dnssec": "signed",
        "registrant.name": "株式会社エグザンプル", "registrant.postal_code": "100-0001",
    }),
    Case("JPRS .jp general-use, expiry in the state line", "jprs_general_state_en.txt", "jp", {
        "dates.created": "2001-02-07T00:00:00Z", "dates.expires": "2026-04-30T00:00:00Z",
        "status": ("To be suspended",), "registrant.name": "Example Japan K.K.",
    }),
    Case("JPRS .jp general-use, expiry in the state line (Japanese)", "jprs_general_state_ja.txt",
         "jp", {
        "dates.created": "2001-02-07T00:00:00Z", "dates.expires": "2026-04-30T00:00:00Z",
        "status": ("To be suspended",), "registrant.name": "株式会社エグザンプル",
    }),
    Case("JPRS co.jp", "jprs_cojp.txt", "jp", {
        "dates.created": "2000-03-01T00:00:00Z", "dates.updated": "2025-03-31T16:02:03Z",
        "dates.expires": "2026-03-31T00:00:00Z",
        "registrant.organization": "Example Corporation",
    }),
    Case("IANA .int", "iana_int.txt", "int", {
        "dates.created": "1997-08-26T00:00:00Z", "dates.updated": "2024-02-07T00:00:00Z",
        "name_servers": _ns("ns1.treaty.int", "ns2.treaty.int"),
        "registrant.organization": "Example Treaty Organization",
        "registrant.street": ("Boulevard de l'Exemple 1", "1000 Brussels", "Belgium"),
    }),
)  # fmt: skip

# (registry, field): published in the fixture, not found by the parser; listed, not hidden.
KNOWN_MISSES: Final[frozenset[tuple[str, str]]] = frozenset()


def parse_case(case: Case) -> Parsed:
    return parse_whois(sample(case.fixture), case.tld)


def found(parsed: Parsed, field: str, expected: object) -> bool:
    return field_value(parsed, field) == expected


def coverage_rows() -> list[tuple[str, int, int]]:
    """(registry format, fields found, fields expected) over our own fixtures."""
    rows = []
    for case in CASES:
        parsed = parse_case(case)
        hits = sum(found(parsed, f, v) for f, v in case.expected.items())
        rows.append((case.registry, hits, len(case.expected)))
    return rows
