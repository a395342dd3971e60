"""Real registry answers of 2023-2026 (sources in samples/current/README.md): whole records.

Every field of ``Parsed`` is asserted, the empty ones included. Before issue 40: the .ve answer
(FRED layout) was ``unparsed_format`` with every field empty; the .com.ua holder's city and
region were swapped; the .si statuses came out as two raw ``client_…`` words and the handle
``G830057`` as the holder's name. Before the second pass: the ``ne.jp`` holder (``[Network
Service Name]``) was empty, a redacted .ie holder gave ``missing:registrant.name`` (withheld, not
missed), and NASK's ``renewal date: not defined`` gave ``unparsed_date`` and
``missing:dates.expires`` (the registry says there is none); a stored .jp answer whose
``[有効期限]`` label lost a character (``[有効限]``) had no expiry; IEDR's ``Locked status: YES``
became a status "YES" and its ``Registrar Abuse Contact:`` was dropped; UARNet's ``Registrar
Abuse Email/Phone`` (a lviv.ua answer relayed by whois.ua) were dropped; an ac.jp answer whose
``[Registered Date]`` is blank (JPRS has none for it) gave ``missing:dates.created``. The .ar
answer passed before too: it pins which object's date is the domain's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assetgate.whois.parse import parse_whois
from assetgate.whois.parse.fred import split_fred_address
from assetgate.whois.record import Contact, Dates, Parsed, Registrar

CURRENT = Path(__file__).parent / "samples" / "current"
MARKMONITOR_VE = Contact(
    organization="Markmonitor Inc.",
    street=("2150 S Bonito Way Suite 150",),
    city="Meridian",
    state="Id",
    postal_code="83642",
    country="US",
)
GOOGLE_UA = Contact(
    name="Domain Administrator",
    organization="Google LLC",
    email="dns-admin@google.com",
    phone="+1.6502530000",
    street=("1600 Amphitheatre Parkway",),
    city="Mountain View",
    state="CA",
    postal_code="94043",
    country="US",
)
NS_GOOGLE = ("ns1.google.com", "ns2.google.com", "ns3.google.com", "ns4.google.com")
RECORDS = [
    pytest.param(
        "nicve_google.co.ve.txt",
        "ve",
        Parsed(
            registered=True,
            domain="google.co.ve",
            registrar=Registrar(name="NIC-VE"),
            dates=Dates(created="2003-03-05T20:00:00Z", expires="2026-05-07T00:00:00Z"),
            name_servers=NS_GOOGLE,
            registrant=Contact(
                organization="Google Llc",
                street=("1600 Amphitheatre Parkway",),
                city="Mountain View",
                state="Ca",
                postal_code="94043",
                country="US",
            ),
            contacts={"admin": MARKMONITOR_VE, "tech": MARKMONITOR_VE},
        ),
        id="ve-fred",
    ),
    pytest.param(
        "hostmaster_google.com.ua.txt",
        "ua",
        Parsed(
            registered=True,
            domain="google.com.ua",
            registrar=Registrar(
                name="MarkMonitor Inc.",
                url="http://markmonitor.com",
                abuse_email="abusecomplaints@markmonitor.com",
                abuse_phone="+12083895740",
            ),
            dates=Dates(
                created="2002-12-03T22:00:00Z",
                updated="2025-11-02T10:12:28Z",
                expires="2026-12-03T22:00:00Z",
            ),
            status=("clientDeleteProhibited", "clientTransferProhibited", "clientUpdateProhibited"),
            name_servers=NS_GOOGLE,
            registrant=GOOGLE_UA,
            contacts={"admin": GOOGLE_UA},
        ),
        id="com.ua",
    ),
    pytest.param(
        "iedr_google.ie.txt",
        "ie",
        Parsed(
            registered=True,
            domain="google.ie",
            registrar=Registrar(
                name="Markmonitor Inc",
                url="http://www.eMarkmonitor.com",
                abuse_email="abusecomplaints@markmonitor.com",
                abuse_phone="+1.2086851865",
                whois_server="whois.weare.ie",
            ),
            dates=Dates(
                created="2002-03-21T00:00:00Z",
                updated="2025-05-05T14:18:36Z",
                expires="2026-03-21T14:13:27Z",
            ),
            status=("serverDeleteProhibited", "serverTransferProhibited", "serverUpdateProhibited"),
            name_servers=NS_GOOGLE[:3],
            dnssec="unsigned",
            registrant=Contact(name="Google LLC"),
            referral="whois.weare.ie",
        ),
        id="ie",
    ),
    pytest.param(
        "arnes_google.si.txt",
        "si",
        Parsed(
            registered=True,
            domain="google.si",
            registrar=Registrar(name="Markmonitor Inc.", url="http://www.markmonitor.com"),
            dates=Dates(created="2005-04-04T00:00:00Z", expires="2027-07-19T00:00:00Z"),
            status=("clientDeleteProhibited", "clientUpdateProhibited"),
            name_servers=NS_GOOGLE,
            registrant=Contact(redacted=True),
            contacts={"tech": Contact(redacted=True)},
        ),
        id="si",
    ),
    pytest.param(
        "jprs_google.ne.jp.txt",
        "jp",
        Parsed(
            registered=True,
            domain="google.ne.jp",
            dates=Dates(
                created="2003-09-11T00:00:00Z",
                updated="2026-06-11T07:08:44Z",
                expires="2026-09-30T00:00:00Z",
            ),
            status=("Connected", "AgentChangeLocked"),
            name_servers=NS_GOOGLE,
            registrant=Contact(organization="グーグル合同会社"),
        ),
        id="ne.jp",
    ),
    pytest.param(
        "iedr_peter.ie.txt",
        "ie",
        Parsed(
            registered=True,
            domain="peter.ie",
            registrar=Registrar(
                name="Blacknight Solutions",
                url="https://www.blacknight.com",
                abuse_email="abuse@blacknight.com",
                abuse_phone="+353.599183072",
                whois_server="whois.weare.ie",
            ),
            dates=Dates(
                created="2015-07-21T23:00:00Z",
                updated="2026-04-24T17:38:50Z",
                expires="2027-07-22T13:55:38Z",
            ),
            status=("clientTransferProhibited",),
            name_servers=(
                "ns1.blacknight.com",
                "ns2.blacknight.com",
                "ns3.blacknight.com",
                "ns4.blacknight.com",
            ),
            dnssec="unsigned",
            registrant=Contact(redacted=True),
            referral="whois.weare.ie",
        ),
        id="ie-redacted-holder",
    ),
    pytest.param(
        "nask_whois.pl.txt",
        "pl",
        Parsed(
            registered=True,
            domain="whois.pl",
            registrar=Registrar(name="NASK"),
            dates=Dates(created="2001-07-06T13:00:00Z", updated="2004-08-24T13:03:31Z"),
            name_servers=("bilbo.nask.org.pl", "eomer.nask.net.pl", "kirdan.nask.net.pl"),
            dnssec="unsigned",
        ),
        id="pl-renewal-not-defined",
    ),
    pytest.param(
        "jprs_amazon.jp.txt",
        "jp",
        Parsed(
            registered=True,
            domain="amazon.jp",
            dates=Dates(
                created="2010-09-22T00:00:00Z",
                updated="2020-09-30T16:05:09Z",
                expires="2021-09-30T00:00:00Z",
            ),
            status=("Active",),
            name_servers=(
                "ns1.p31.dynect.net",
                "ns2.p31.dynect.net",
                "pdns1.ultradns.net",
                "pdns2.ultradns.net",
                "pdns3.ultradns.org",
                "pdns4.ultradns.org",
                "pdns5.ultradns.info",
                "pdns6.ultradns.co.uk",
            ),
            registrant=Contact(
                name="Amazon, Inc.",
                email="hostmaster@amazon.com",
                phone="+81.342884000",
                street=("Meguro-ku", "Arco Tower Annex", "8-1, Shimomeguro 1-chome"),
                postal_code="150-0002",
            ),
        ),
        id="jp-expiry-label-damaged",
    ),
    pytest.param(
        "iedr_own_labels_google.ie.txt",
        "ie",
        Parsed(
            registered=True,
            domain="google.ie",
            registrar=Registrar(
                name="Markmonitor Inc", abuse_email="abusecomplaints@markmonitor.com"
            ),
            dates=Dates(created="2002-03-21T00:00:00Z", expires="2021-03-21T00:00:00Z"),
            status=("Locked", "Active"),
            name_servers=NS_GOOGLE[:3],
            registrant=Contact(name="Google, Inc"),
        ),
        id="ie-own-labels",
    ),
    pytest.param(
        "relay_example.lviv.ua.txt",
        "ua",
        Parsed(
            registered=True,
            domain="example.lviv.ua",
            registrar=Registrar(
                name="ua.imena",
                url="http://www.imena.ua",
                abuse_email="abuse@imena.ua",
                abuse_phone="+380.442010102",
                whois_server="whois.uar.net",
            ),
            dates=Dates(
                created="2018-11-25T22:00:00Z",
                updated="2021-10-17T07:34:03Z",
                expires="2023-10-16T21:00:00Z",
            ),
            status=("clientTransferProhibited",),
            name_servers=("mia.ns.cloudflare.com", "oswald.ns.cloudflare.com"),
            referral="whois.uar.net",
        ),
        id="lviv.ua-relayed",
    ),
    pytest.param(
        "nicar_google.ar.txt",
        "ar",
        Parsed(
            registered=True,
            domain="google.ar",
            registrar=Registrar(name="nicar"),
            # the domain object's own `registered:` (2019), not the holder contact's
            # `created:` (2013) nor the name-server object's
            dates=Dates(
                created="2019-11-01T12:21:37Z",
                updated="2019-11-01T12:28:38Z",
                expires="2020-11-01T00:00:00Z",
            ),
            name_servers=("ns1.markmonitor.com", "ns3.markmonitor.com"),
            registrant=Contact(name="GOOGLE INC."),
        ),
        id="ar-dated-objects",
    ),
    pytest.param(
        "jprs_titech.ac.jp.txt",
        "jp",
        Parsed(
            registered=True,
            domain="titech.ac.jp",
            dates=Dates(updated="2023-03-31T16:04:55Z", expires="2024-03-31T00:00:00Z"),
            status=("Connected",),
            name_servers=(
                "ns.fujisawa.wide.ad.jp",
                "ns1.noc.titech.ac.jp",
                "ns2.noc.titech.ac.jp",
            ),
            registrant=Contact(organization="Tokyo Institute of Technology"),
        ),
        id="ac.jp-blank-registered-date",
    ),
]


@pytest.mark.parametrize(("fixture", "tld", "expected"), RECORDS)
def test_whole_record(fixture: str, tld: str, expected: Parsed) -> None:
    assert parse_whois((CURRENT / fixture).read_text(encoding="utf-8"), tld) == expected


@pytest.mark.parametrize(("fixture", "tld", "expected"), RECORDS)
def test_whole_record_over_crlf(fixture: str, tld: str, expected: Parsed) -> None:
    text = (CURRENT / fixture).read_text(encoding="utf-8").replace("\n", "\r\n")
    assert parse_whois(text, tld) == expected


def test_ua_organisation_repeated_as_person_is_no_name() -> None:
    """Hostmaster writes an organisation's name into ``person`` (transliterated word order
    too: ``Inc. Google``); before, it became the holder's personal name."""
    text = (CURRENT / "hostmaster_google.com.ua.txt").read_text(encoding="utf-8")
    text = text.replace("person-loc:       Domain Administrator", "person-loc:       Inc. Google")
    text = text.replace("organization-loc: Google LLC", "organization-loc: Google Inc.")
    parsed = parse_whois(text, "ua")
    assert parsed.registrant.name is None
    assert parsed.registrant.organization == "Google Inc."


@pytest.mark.parametrize("first", ["Domain Name", "Domain"])
def test_iedr_own_labels(first: str) -> None:
    """IEDR's labels as issue 40 quotes them, with or without the ICANN ``Domain Name:`` line
    (the captured answer of 2020 in this layout is ``iedr_own_labels_google.ie.txt`` above; a
    lock word other than YES/NO is kept as written)."""
    text = (
        f"{first}: example.ie\nDomain Holder: Example Holdings Limited\n"
        "Account Name: Example Registrar Ltd\nRegistration Date: 21-March-2002\n"
        "Renewal Date: 21-March-2027\nRenewal status: Active\nLocked status: NRP\n"
        "Name Server: ns1.example.ie\n"
    )
    parsed = parse_whois(text, "ie")
    assert parsed.registrar.name == "Example Registrar Ltd"
    assert parsed.registrant.name == "Example Holdings Limited"
    assert parsed.dates == Dates(created="2002-03-21T00:00:00Z", expires="2027-03-21T00:00:00Z")
    assert parsed.status == ("Active", "NRP")


@pytest.mark.parametrize(
    ("lines", "parts"),
    [
        (["1600 Amphitheatre Parkway", "Mountain View", "94043", "CA", "US"],
         (["1600 Amphitheatre Parkway"], "Mountain View", "94043", "CA", "US")),
        (["2150 S Bonito Way", "Suite 150", "Meridian", "83642", "ID", "US"],
         (["2150 S Bonito Way", "Suite 150"], "Meridian", "83642", "ID", "US")),
        (["Dlouhá 1", "Praha 1", "110 00", "CZ"], (["Dlouhá 1"], "Praha 1", "110 00", None, "CZ")),
        (["Calle 1", "Caracas", "VE"], (["Calle 1"], "Caracas", None, None, "VE")),
        ([], ([], None, None, None, None)),
    ],
)  # fmt: skip
def test_fred_address_order(lines: list[str], parts: tuple[object, ...]) -> None:
    assert split_fred_address(lines) == parts


def test_ua_second_level_zone_relayed_by_whois_ua() -> None:
    """whois.ua relays lviv.ua & co. from their own servers between REDIRECT lines (the wrapper
    and the ``Domain Name:`` first line are as in a public test suite's fixture; the further
    labels are the usual ICANN ones, not copied from a captured answer). Before: the relayed
    answer was read as UAEPP objects and gave nothing (``unparsed_format``)."""
    text = (
        "% This is the Ukrainian Whois query server #P.\n"
        "% The object shown below is NOT in the UAEPP database.\n"
        "% It has been obtained by querying a remote server:\n"
        "% (whois.lviv.ua) at port 43.\n%\n% REDIRECT BEGIN\n\n"
        "Domain Name: example.lviv.ua\nRegistrar: Example Registrar\n"
        "Creation Date: 2005-03-01\nExpiration Date: 2027-03-01\n"
        "Name Server: ns1.example.lviv.ua\n\n% REDIRECT END\n"
    )
    parsed = parse_whois(text, "ua")
    assert parsed.domain == "example.lviv.ua"
    assert parsed.registrar.name == "Example Registrar"
    assert parsed.dates == Dates(created="2005-03-01T00:00:00Z", expires="2027-03-01T00:00:00Z")
    assert parsed.name_servers == ("ns1.example.lviv.ua",)


def test_ne_jp_network_service_name_in_english_output() -> None:
    """The ``/e`` answer has only ``d. [Network Service Name]``: it is the holder too."""
    text = (CURRENT / "jprs_google.ne.jp.txt").read_text(encoding="utf-8")
    english = "\n".join(
        line for line in text.splitlines() if not re.search(r"\[[^\]]*[^\x00-\x7f]", line)
    )
    assert "ネットワークサービス名" not in english
    assert parse_whois(english, "jp").registrant == Contact(organization="Google Japan G.K.")
