"""Whole records for the registry layouts of issue 27: every field of ``Parsed`` is asserted.

Each fixture in ``samples/`` was written here in the registry's published layout (none is a
copy of a real answer). A field the answer does not carry must come out ``None``/empty, never a
neighbour's value; where the registry gives a handle and a name, the record holds the name.
"""

from __future__ import annotations

import random

import pytest

from assetgate.whois.parse import PARSERS, parse_whois
from assetgate.whois.parse.blocks import split_address
from assetgate.whois.record import Contact, Dates, Parsed, Registrar
from tests.whois.conftest import sample

RECORDS = [
    pytest.param(
        "hostmaster_ua.txt",
        "ua",
        Parsed(
            registered=True,
            domain="pryklad.com.ua",
            registrar=Registrar(
                name="Example Registrar LLC",
                iana_id=None,
                url="https://registrar.example.com.ua",
                abuse_email="abuse@registrar.example.com.ua",
                abuse_phone="+380.441234567",
                whois_server=None,
            ),
            dates=Dates(
                created="2004-03-14T22:00:00Z",
                updated="2025-02-11T12:20:31Z",
                expires="2026-03-14T22:00:00Z",
            ),
            status=("clientDeleteProhibited", "clientTransferProhibited", "clientUpdateProhibited"),
            name_servers=("ns1.pryklad.com.ua", "ns2.pryklad.net"),
            dnssec=None,
            registrant=Contact(
                name="Олена Приклад",
                organization="Pryklad LLC",
                email="owner@pryklad.com.ua",
                phone="+380.447654321",
                street=("12 Khreshchatyk St.",),
                city="Kyiv",
                state="Kyiv Oblast",
                postal_code="01001",
                country="UA",
                redacted=False,
            ),
            contacts={
                "admin": Contact(
                    name="Hostmaster",
                    organization=None,
                    email="hostmaster@pryklad.com.ua",
                    phone="+380.447654000",
                    street=(),
                    city=None,
                    state=None,
                    postal_code=None,
                    country="UA",
                    redacted=True,
                ),
                "tech": Contact(
                    name="Example Registrar Support",
                    organization=None,
                    email="support@registrar.example.com.ua",
                    phone="+380.441234500",
                    street=("Peremohy Ave. 5",),
                    city="Kyiv",
                    state=None,
                    postal_code="03056",
                    country="UA",
                    redacted=False,
                ),
            },
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "weare_ie.txt",
        "ie",
        Parsed(
            registered=True,
            domain="sampla.ie",
            registrar=Registrar(
                name="Example Irish Registrar Ltd",
                iana_id=None,
                url="https://registrar.example.ie",
                abuse_email="abuse@registrar.example.ie",
                abuse_phone="+353.11234567",
                whois_server="whois.weare.ie",
            ),
            dates=Dates(
                created="2008-05-21T00:00:00Z",
                updated="2025-01-14T09:30:00Z",
                expires="2026-05-21T00:00:00Z",
            ),
            status=("ok", "clientTransferProhibited"),
            name_servers=("ns1.sampla.ie", "ns2.example.net"),
            dnssec="unsigned",
            registrant=Contact(
                name="Sampla Teoranta",
                organization=None,
                email=None,
                phone=None,
                street=(),
                city=None,
                state=None,
                postal_code=None,
                country=None,
                redacted=False,
            ),
            contacts={},
            warnings=(),
            referral="whois.weare.ie",
        ),
    ),
    pytest.param(
        "norid_handles_no.txt",
        "no",
        Parsed(
            registered=True,
            domain="eksempel2.no",
            registrar=Registrar(
                name="REG1234-NORID",
                iana_id=None,
                url=None,
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="2005-09-01T00:00:00Z", updated="2025-01-20T00:00:00Z", expires=None
            ),
            status=(),
            name_servers=(),
            dnssec="unsigned",
            registrant=Contact(
                name=None,
                organization=None,
                email=None,
                phone=None,
                street=(),
                city=None,
                state=None,
                postal_code=None,
                country=None,
                redacted=False,
            ),
            contacts={},
            warnings=("missing:name_servers",),
            referral=None,
        ),
    ),
    pytest.param(
        "traficom_fi_foreign.txt",
        "fi",
        Parsed(
            registered=True,
            domain="esimerkki-intl.fi",
            registrar=Registrar(
                name="Example Registrar Oy",
                iana_id=None,
                url="www.registrar.test",
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="2012-05-03T08:00:00Z",
                updated="2025-03-17T13:30:38Z",
                expires="2026-05-03T08:00:00Z",
            ),
            status=("Registered",),
            name_servers=("ns1.example.com", "ns2.example.com"),
            dnssec="unsigned",
            registrant=Contact(
                name="Example International Inc.",
                organization=None,
                email=None,
                phone=None,
                street=("1600 Example Parkway",),
                city="Mountain View",
                state=None,
                postal_code="94043",
                country="United States of America",
                redacted=False,
            ),
            contacts={},
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "nicve_ve.txt",
        "ve",
        Parsed(
            registered=True,
            domain="ejemplo.com.ve",
            registrar=Registrar(
                name=None,
                iana_id=None,
                url=None,
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="2010-10-27T12:23:43Z",
                updated="2025-01-05T08:00:00Z",
                expires="2026-10-27T12:23:43Z",
            ),
            status=("ACTIVO",),
            name_servers=("ns1.ejemplo.com.ve", "ns2.hosting.example"),
            dnssec=None,
            registrant=Contact(
                name="Ejemplo Venezuela C.A.",
                organization="Ejemplo Venezuela C.A.",
                email="dominios@ejemplo.com.ve",
                phone="+582121234567",
                street=("5 Avenida Principal de Los Ruices",),
                city="Caracas",
                state="Miranda",
                postal_code=None,
                country="VE",
                redacted=False,
            ),
            contacts={
                "admin": Contact(
                    name="Maria Ejemplo",
                    organization="Ejemplo Venezuela C.A.",
                    email="maria@ejemplo.com.ve",
                    phone="+582121234567",
                    street=("5 Avenida Principal de Los Ruices",),
                    city="Caracas",
                    state="Miranda",
                    postal_code=None,
                    country="VE",
                    redacted=False,
                ),
                "tech": Contact(
                    name="Soporte Hosting",
                    organization="Hosting Ejemplo S.A.",
                    email="soporte@hosting.example",
                    phone="2418246437",
                    street=("Torre Norte, Piso 3",),
                    city="Valencia",
                    state="Carabobo",
                    postal_code=None,
                    country="VE",
                    redacted=False,
                ),
            },
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "isoc_il.txt",
        "il",
        Parsed(
            registered=True,
            domain="dugma.co.il",
            registrar=Registrar(
                name="Example Israeli Registrar Ltd",
                iana_id=None,
                url="https://registrar.example.co.il",
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="1999-06-16T00:00:00Z",
                updated="2025-01-02T00:00:00Z",
                expires="2026-06-16T00:00:00Z",
            ),
            status=("Transfer Locked",),
            name_servers=("ns1.dugma.co.il", "ns2.example.net"),
            dnssec="unsigned",
            registrant=Contact(
                name="Dugma Ltd",
                organization=None,
                email="domains@dugma.co.il",
                phone="+972 3 5550100",
                street=("12 HaArbaa St.",),
                city="Tel Aviv",
                state=None,
                postal_code="6473912",
                country="Israel",
                redacted=False,
            ),
            contacts={
                "admin": Contact(
                    name="Dana Dugma",
                    organization=None,
                    email="dana@dugma.co.il",
                    phone="+972 3 5550100",
                    street=(),
                    city=None,
                    state=None,
                    postal_code=None,
                    country=None,
                    redacted=False,
                ),
                "tech": Contact(
                    name="Dana Dugma",
                    organization=None,
                    email="dana@dugma.co.il",
                    phone="+972 3 5550100",
                    street=(),
                    city=None,
                    state=None,
                    postal_code=None,
                    country=None,
                    redacted=False,
                ),
            },
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "sknic_sk.txt",
        "sk",
        Parsed(
            registered=True,
            domain="priklad.sk",
            registrar=Registrar(
                name="Example Registrar s.r.o.",
                iana_id=None,
                url=None,
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="2003-07-24T00:00:00Z",
                updated="2025-06-19T00:00:00Z",
                expires="2026-07-24T00:00:00Z",
            ),
            status=("clientTransferProhibited",),
            name_servers=("ns1.priklad.sk", "ns2.priklad.net"),
            dnssec=None,
            registrant=Contact(
                name="Jan Priklad",
                organization="Priklad s.r.o.",
                email="jan@priklad.sk",
                phone="+421.212345678",
                street=("Hlavna 1",),
                city="Bratislava",
                state=None,
                postal_code="811 01",
                country="SK",
                redacted=False,
            ),
            contacts={},
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "punktum_dk.txt",
        "dk",
        Parsed(
            registered=True,
            domain="eksempel.dk",
            registrar=Registrar(
                name=None,
                iana_id=None,
                url=None,
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="1999-01-10T00:00:00Z", updated=None, expires="2026-03-31T00:00:00Z"
            ),
            status=("Active",),
            name_servers=("ns1.eksempel.dk", "ns2.example.net"),
            dnssec="signed",
            registrant=Contact(
                name="Eksempel ApS",
                organization=None,
                email=None,
                phone=None,
                street=("Vesterbrogade 1",),
                city="København V",
                state=None,
                postal_code="1620",
                country="DK",
                redacted=False,
            ),
            contacts={},
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "island_gg_epp.txt",
        "gg",
        Parsed(
            registered=True,
            domain="sample.gg",
            registrar=Registrar(
                name="Example Channel Registrar Ltd",
                iana_id=None,
                url="https://www.registrar.example.gg",
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(created="2010-03-12T09:15:00Z", updated=None, expires=None),
            status=(
                "Active",
                "clientDeleteProhibited",
                "clientTransferProhibited",
                "Renewed, pending payment",
            ),
            name_servers=("ns1.sample.gg", "ns2.example.net"),
            dnssec=None,
            registrant=Contact(
                name="Sample Holdings Limited",
                organization=None,
                email=None,
                phone=None,
                street=(),
                city=None,
                state=None,
                postal_code=None,
                country=None,
                redacted=False,
            ),
            contacts={},
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "freenom_gq.txt",
        "gq",
        Parsed(
            registered=True,
            domain="ejemplo.gq",
            registrar=Registrar(
                name=None,
                iana_id=None,
                url=None,
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="2016-07-01T00:00:00Z", updated=None, expires="2026-07-01T00:00:00Z"
            ),
            status=("Active",),
            name_servers=("ns01.example.net", "ns02.example.net"),
            dnssec=None,
            registrant=Contact(
                name="Pedro Ejemplo",
                organization="Ejemplo Guinea S.L.",
                email="pedro@ejemplo.test",
                phone="+240 333 000 111",
                street=("Calle de la Independencia 4",),
                city="Malabo",
                state=None,
                postal_code=None,
                country="Equatorial Guinea",
                redacted=False,
            ),
            contacts={},
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "kz_foreign.txt",
        "kz",
        Parsed(
            registered=True,
            domain="example-intl.kz",
            registrar=Registrar(
                name="HOSTER.KZ",
                iana_id=None,
                url=None,
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="2005-06-07T13:01:43Z", updated="2025-01-28T03:16:59Z", expires=None
            ),
            status=("clientDeleteProhibited", "clientRenewProhibited", "clientTransferProhibited"),
            name_servers=("ns1.example.com", "ns2.example.com"),
            dnssec=None,
            registrant=Contact(
                name="Example International Inc.",
                organization="Example International Inc.",
                email=None,
                phone=None,
                street=("2400 Example Bayshore Pkwy",),
                city="Mountain View",
                state="CA",
                postal_code="94043",
                country="US",
                redacted=False,
            ),
            contacts={
                "admin": Contact(
                    name="DNS Admin",
                    organization=None,
                    email="dns@example.test",
                    phone="+1.6505550000",
                    street=(),
                    city=None,
                    state=None,
                    postal_code=None,
                    country=None,
                    redacted=False,
                )
            },
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "irnic_foreign_ir.txt",
        "ir",
        Parsed(
            registered=True,
            domain="nemune.ir",
            registrar=Registrar(
                name=None,
                iana_id=None,
                url=None,
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created=None, updated="2025-02-18T00:00:00Z", expires="2026-05-20T00:00:00Z"
            ),
            status=(),
            name_servers=("ns1.example.com", "ns2.example.com"),
            dnssec=None,
            registrant=Contact(
                name=None,
                organization="Example International Inc.",
                email="dns@example.test",
                phone="+1 650 555 0000",
                street=("1600 Example Parkway, Mountain View, California, US",),
                city="Mountain View",
                state=None,
                postal_code=None,
                country="US",
                redacted=False,
            ),
            contacts={
                "admin": Contact(
                    name=None,
                    organization="Example International Inc.",
                    email="dns@example.test",
                    phone="+1 650 555 0000",
                    street=("1600 Example Parkway, Mountain View, California, US",),
                    city=None,
                    state=None,
                    postal_code=None,
                    country=None,
                    redacted=False,
                ),
                "tech": Contact(
                    name="Reza Example",
                    organization="Example Hosting",
                    email="reza@hosting.example",
                    phone="+98 21 5555 0000",
                    street=("No. 5, Example Alley, Tehran, Tehran, IR",),
                    city=None,
                    state=None,
                    postal_code=None,
                    country=None,
                    redacted=False,
                ),
            },
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "nicit_it.txt",
        "it",
        Parsed(
            registered=True,
            domain="esempio.it",
            registrar=Registrar(
                name="Esempio Registrar S.p.A.",
                iana_id=None,
                url="https://www.registrar.example.it",
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(
                created="2001-03-05T00:00:00Z",
                updated="2025-03-21T00:52:18Z",
                expires="2026-03-05T00:00:00Z",
            ),
            status=("clientDeleteProhibited", "clientUpdateProhibited"),
            name_servers=("ns1.esempio.it", "ns2.example.net"),
            dnssec="unsigned",
            registrant=Contact(
                name=None,
                organization="Esempio S.r.l.",
                email=None,
                phone=None,
                street=("Via Roma, 1",),
                city="Milano",
                state="MI",
                postal_code="20121",
                country="IT",
                redacted=False,
            ),
            contacts={
                "admin": Contact(
                    name="Mario Esempio",
                    organization="Esempio S.r.l.",
                    email=None,
                    phone=None,
                    street=("Via Roma, 1", "Scala B"),
                    city="Milano",
                    state="MI",
                    postal_code="20121",
                    country="IT",
                    redacted=False,
                ),
                "tech": Contact(
                    name="Supporto Tecnico",
                    organization="Esempio Hosting S.p.A.",
                    email=None,
                    phone=None,
                    street=(),
                    city=None,
                    state=None,
                    postal_code=None,
                    country=None,
                    redacted=False,
                ),
            },
            warnings=(),
            referral=None,
        ),
    ),
    pytest.param(
        "switch_ch.txt",
        "ch",
        Parsed(
            registered=True,
            domain="beispiel.ch",
            registrar=Registrar(
                name="Beispiel Registrar AG",
                iana_id=None,
                url=None,
                abuse_email=None,
                abuse_phone=None,
                whois_server=None,
            ),
            dates=Dates(created="2000-01-31T00:00:00Z", updated=None, expires=None),
            status=(),
            name_servers=("ns1.beispiel.ch", "ns2.example.net"),
            dnssec="signed",
            registrant=Contact(
                name="Anna Beispiel",
                organization="Beispiel AG",
                email=None,
                phone=None,
                street=("Bahnhofstrasse 1",),
                city="Zürich",
                state=None,
                postal_code="CH-8001",
                country="Switzerland",
                redacted=False,
            ),
            contacts={
                "tech": Contact(
                    name="Hosting Support",
                    organization=None,
                    email=None,
                    phone=None,
                    street=("Seestrasse 10",),
                    city="Luzern",
                    state=None,
                    postal_code="CH-6004",
                    country="Switzerland",
                    redacted=False,
                )
            },
            warnings=(),
            referral=None,
        ),
    ),
]


@pytest.mark.parametrize(("fixture", "tld", "expected"), RECORDS)
def test_whole_record(fixture: str, tld: str, expected: Parsed) -> None:
    assert parse_whois(sample(fixture), tld) == expected


@pytest.mark.parametrize(("fixture", "tld", "expected"), RECORDS)
def test_whole_record_over_crlf(fixture: str, tld: str, expected: Parsed) -> None:
    assert parse_whois(sample(fixture).replace("\n", "\r\n"), tld) == expected


def test_ua_registrar_handle_only_when_no_name() -> None:
    text = sample("hostmaster_ua.txt").replace("organization:     Example Registrar LLC\n", "")
    text = text.replace('organization-loc: ТОВ "Приклад Реєстратор"\n', "")
    assert parse_whois(text, "ua").registrar.name == "ua.example"


def test_sknic_registrar_handle_only_when_the_answer_has_no_object() -> None:
    text = sample("sknic_sk.txt").split("\nRegistrar:                    REG-EXAMPLE\nName")[0]
    assert parse_whois(text, "sk").registrar.name == "REG-EXAMPLE"


def test_norid_objects_without_blank_lines_are_still_resolved() -> None:
    text = sample("norid_no.txt").replace("\n\nNORID Handle", "\nNORID Handle")
    parsed = parse_whois(text, "no")
    assert parsed.name_servers == ("ns1.eksempel.no", "ns2.eksempel.net")
    assert parsed.registrar.name == "Eksempel Registrar AS"


def test_ie_icann_layout_with_blank_lines_between_groups() -> None:
    parsed = parse_whois(sample("weare_ie.txt"), "ie")
    assert (parsed.registrar.name, parsed.registrant.name) == (
        "Example Irish Registrar Ltd",
        "Sampla Teoranta",
    )
    assert parsed.status == ("ok", "clientTransferProhibited")


def test_dk_dns_line_is_the_domain_not_a_name_server() -> None:
    assert "eksempel.dk" not in parse_whois(sample("punktum_dk.txt"), "dk").name_servers


@pytest.mark.parametrize(
    ("lines", "street", "code", "city"),
    [
        (
            ["1600 Example Parkway", "Mountain View, CA 94043"],
            ("1600 Example Parkway", "Mountain View, CA 94043"),
            None,
            None,
        ),
        (
            ["Mannerheimintie 10 A", "00100", "Helsinki"],
            ("Mannerheimintie 10 A",),
            "00100",
            "Helsinki",
        ),
        (["Laugavegur 1", "101 Reykjavík"], ("Laugavegur 1",), "101", "Reykjavík"),
        (["2400 Example Bayshore Pkwy"], ("2400 Example Bayshore Pkwy",), None, None),
    ],
)
def test_a_leading_house_number_is_street(
    lines: list[str], street: tuple[str, ...], code: str | None, city: str | None
) -> None:
    address = split_address(lines)
    assert (tuple(address.street), address.postal_code, address.city) == (street, code, city)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (  # CZ.NIC: street, city, code, state, country
            ["1600 Example Parkway", "Mountain View", "94043", "CA", "US"],
            (("1600 Example Parkway",), "94043", "Mountain View", ("CA", "US")),
        ),
        (  # AFNIC: the last postal-shaped line, not the house number before it
            ["Example Corp", "10400 Overland Rd.", "PMB 155", "83709 Boise"],
            (("Example Corp", "10400 Overland Rd.", "PMB 155"), "83709", "Boise", ()),
        ),
        (  # Traficom: the code alone, the city on the next line
            ["Domain Administrator", "Mannerheimintie 12 B", "00100", "HELSINKI"],
            (("Domain Administrator", "Mannerheimintie 12 B"), "00100", "HELSINKI", ()),
        ),
        (
            ["Voorbeeldlaan 5", "1011 AB", "Amsterdam", "Netherlands"],
            (("Voorbeeldlaan 5",), "1011 AB", "Amsterdam", ("Netherlands",)),
        ),
    ],
)
def test_postal_line_is_the_last_one_shaped_like_it(
    lines: list[str], expected: tuple[tuple[str, ...], str, str, tuple[str, ...]]
) -> None:
    address = split_address(lines)
    got = (tuple(address.street), address.postal_code, address.city, tuple(address.after))
    assert got == expected


def test_key_value_without_a_space_after_the_colon() -> None:
    text = (
        "Domain ID:D1234-LRCC\nDomain Name:EXAMPLE.BZ\nCreated On:12-Feb-2006 18:08:52 UTC\n"
        "Expiration Date:12-Feb-2027 18:08:52 UTC\nSponsoring Registrar:Example Registrar, Inc. "
        "(R22-LRCC)\nStatus:CLIENT TRANSFER PROHIBITED\nRegistrant Name:Jane Example\n"
        "Name Server:NS1.EXAMPLE.NET\nName Server:\n"
    )
    parsed = parse_whois(text, "bz")
    assert parsed.domain == "example.bz"
    assert (parsed.dates.created, parsed.dates.expires) == (
        "2006-02-12T18:08:52Z",
        "2027-02-12T18:08:52Z",
    )
    assert parsed.registrar.name == "Example Registrar, Inc."  # the handle stays in raw
    assert parsed.status == ("clientTransferProhibited",)
    assert (parsed.registrant.name, parsed.name_servers) == ("Jane Example", ("ns1.example.net",))


@pytest.mark.parametrize(
    ("line", "name", "url"),
    [
        (
            "Example Ltd (https://www.registrar.example.gg)",
            "Example Ltd",
            "https://www.registrar.example.gg",
        ),
        ("Example Ltd (www.registrar.example.gg)", "Example Ltd", "www.registrar.example.gg"),
        ("Example Ltd (registrar.example.gg/)", "Example Ltd", "registrar.example.gg/"),
        ("Example Ltd (Jersey)", "Example Ltd (Jersey)", None),
    ],
)
def test_island_registrar_url_in_brackets(line: str, name: str, url: str | None) -> None:
    text = sample("island_gg_epp.txt").replace(
        "Example Channel Registrar Ltd (https://www.registrar.example.gg)", line
    )
    registrar = parse_whois(text, "gg").registrar
    assert (registrar.name, registrar.url) == (name, url)


HOSTILE_TEXTS = [":", "::\n:\n", "Domain:\n:\n   x\n", "% Registrar:\n:", "Titular:\n", "- \n"]


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_no_parser_raises_on_garbled_answers(name: str) -> None:
    """A line of only ':' once made the sectioned and EURid parsers raise IndexError (a 500)."""
    rnd = random.Random(name)
    alphabet = ":.\n %-()\tTitular: Registrar:\nnic-hdl: x\nHostname: a\n% Registrar:\n- 0aZ@"
    texts = HOSTILE_TEXTS + [
        "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 300))) for _ in range(300)
    ]
    for text in texts:
        PARSERS[name](text)  # must not raise
        assert parse_whois(text, None).registered in (None, True, False)


def test_switch_not_found_and_chinese_postal_code() -> None:
    text = "whois: This information is subject to an Acceptable Use Policy.\n\n"
    text += "We do not have an entry in our database matching your query.\n"
    assert parse_whois(text, "ch").registered is False
    holder = "Holder of domain name:\nLi Example\nRoom 2, Example Road\nCN-410000 Changsha\nChina\n"
    parsed = parse_whois("Domain name:\nli-example.ch\n\n" + holder, "ch")
    holder_found = (parsed.registrant.name, parsed.registrant.street[0])
    assert holder_found == ("Li Example", "Room 2, Example Road")
    assert (parsed.registrant.postal_code, parsed.registrant.city) == ("CN-410000", "Changsha")


def test_not_found_above_terms_that_mention_excessive_queries() -> None:
    text = (
        "Domain Name: sample-free.gg\nDomain Status: Available\n\n"
        "You may not: (a) republish any or all of this notice; or\n(d) make excessive queries.\n"
    )
    parsed = parse_whois(text, "gg")
    assert (parsed.registered, parsed.warnings) == (False, ())


@pytest.mark.parametrize(
    "text",
    [
        "Domain Name: free-name.cx\nDomain Status: No Object Found\n",
        "%ERROR: no entries found\n",
        '% Object "free-name.cat" NOT FOUND.\n',
        '"free-name.se" not found.\n',
        'No domain records were found to match "free-name.coop"\n',
        "Domain free-name.ci not found\n",
        "No records matching free-name.ax found.\n",
        "query_status: 220 Available\n",
        "% Unfortunately, No Results Were Found\n",
        "The domain free-name.fj was not found!\n",
        "%error 230 No Objects Found\n",
        "FREE-NAME.CO.CA is available.\n",
        "Domain free-name.tm is available for purchase\n",
        "free-name.cl: no existe\n",
        "Nincs találat / No match\n",
        "Domain name free-name.bg does not exist in database!\n",
        "The domain has not been registered.\n",
        'Status: AVAILABLE (No match for domain "free-name.sx")\n',
    ],
)
def test_not_found_wordings(text: str) -> None:
    assert parse_whois(text, None).registered is False


def test_a_throttled_answer_that_also_says_no_entries_is_rate_limited() -> None:
    text = "%% RL Net [##########] - RL IP [..........]\n%% Too many requests...\n\n"
    text += "%% No entries found in the Database.\n"
    parsed = parse_whois(text, "fr")
    assert (parsed.registered, parsed.warnings) == (None, ("rate_limited_upstream",))


def test_rpsl_contact_object_without_nic_hdl_key_and_explicit_city() -> None:
    """``registrant: HANDLE`` plus a ``contact: HANDLE`` object: the handle is never the name."""
    text = (
        "domain:       daemi.fo\nregistrant:   ID001234\nstatus:       paid and in zone\n"
        "registered:   03.06.2010 03:34:05\nexpire:       03.01.2027\n\n"
        "contact:      ID001234\norg:          Daemi Sp/f\nstreet:       Vegur 1\n"
        "city:         Torshavn\npostal code:  110\ncountry:      FO\n\n"
        "nserver:      ns1.daemi.fo\n"
    )
    registrant = parse_whois(text, "fo").registrant
    assert (registrant.name, registrant.organization) == (None, "Daemi Sp/f")
    assert (registrant.street, registrant.city, registrant.postal_code, registrant.country) == (
        ("Vegur 1",),
        "Torshavn",
        "110",
        "FO",
    )
