"""Per-format parsers over registry answers written in each registry's own layout."""

from __future__ import annotations

import pytest

from assetgate.whois.charset import JAPANESE, decode
from assetgate.whois.parse import format_for, parse_whois, sniff_format
from assetgate.whois.parse.common import status_codes
from assetgate.whois.record import Contact, Dates, Registrar
from tests.whois.conftest import QUOTA_BANNER, sample


def test_icann_thin_registry_answer() -> None:
    parsed = parse_whois(sample("verisign_com.txt"), "com")
    assert parsed.registered is True
    assert parsed.domain == "example.com"
    assert parsed.registrar == Registrar(
        name="Example Registrar, Inc.",
        iana_id="376",
        url="http://www.registrar.test",
        abuse_email="abuse@registrar.test",
        abuse_phone="+1.2025550123",
        whois_server="whois.registrar.test",
    )
    assert parsed.dates == Dates(
        created="1995-08-14T04:00:00Z",
        updated="2024-08-14T07:01:34Z",
        expires="2026-08-13T04:00:00Z",
    )
    assert parsed.status == (
        "clientDeleteProhibited",
        "clientTransferProhibited",
        "clientUpdateProhibited",
    )
    assert parsed.name_servers == ("a.iana-servers.net", "b.iana-servers.net")
    assert parsed.dnssec == "signed"
    assert parsed.referral == "whois.registrar.test"
    assert parsed.warnings == ()


def test_icann_registrar_answer_redactions_and_offsets() -> None:
    parsed = parse_whois(sample("registrar_com.txt"))
    # -0700 offsets converted to UTC: the same instants the registry gives.
    assert parsed.dates.created == "1995-08-14T04:00:00Z"
    assert parsed.dates.expires == "2026-08-13T04:00:00Z"
    assert parsed.registrant == Contact(
        organization="Example Holdings LLC", state="CA", country="US", redacted=True
    )
    admin = parsed.contacts["admin"]
    assert (admin.email, admin.name, admin.redacted) == (None, None, True)  # web-form URL
    assert parsed.contacts["tech"] == Contact(
        name="Hostmaster Team",
        organization="Example Holdings LLC",
        email="hostmaster@example.com",
        phone="+1.2025550199",
        street=("1 Example Way", "Suite 100"),
        city="Springfield",
        state="CA",
        postal_code="90000",
        country="US",
    )
    assert "billing" not in parsed.contacts


@pytest.mark.parametrize("name", ["jprs_general_en.txt", "jprs_general_ja.txt"])
def test_jprs_general_use_layout_in_both_languages(name: str) -> None:
    parsed = parse_whois(sample(name), "jp")
    assert parsed.domain == "example.jp"
    assert parsed.dates == Dates(
        created="2001-02-07T00:00:00Z",
        updated="2025-02-28T16:05:03Z",  # 2025/03/01 01:05:03 (JST)
        expires="2026-02-28T00:00:00Z",
    )
    assert parsed.status == ("Active",)
    assert parsed.registrant.email == "hostmaster@example.jp"
    assert parsed.registrant.postal_code == "100-0001"
    assert parsed.registrant.phone == "03-1234-5678"


def test_jprs_japanese_labels_keep_one_address_and_the_japanese_name() -> None:
    parsed = parse_whois(sample("jprs_general_ja.txt"), "jp")
    assert parsed.registrant.name == "株式会社エグザンプル"
    assert parsed.registrant.street == ("東京都千代田区", "千代田1-1-1")
    assert parsed.dnssec == "signed"


def test_jprs_english_continuation_lines() -> None:
    parsed = parse_whois(sample("jprs_general_en.txt"), "jp")
    assert parsed.registrant.street == ("Chiyoda-ku, Tokyo", "1-1-1 Chiyoda")
    assert parsed.name_servers == ("ns1.example.jp", "ns2.example.net")
    assert parsed.dnssec is None


@pytest.mark.parametrize(
    ("name", "organization"),
    [("jprs_cojp.txt", "Example Corporation"), ("jprs_cojp_ja.txt", "エグザンプル株式会社")],
)
def test_jprs_cojp_layout(name: str, organization: str) -> None:
    parsed = parse_whois(sample(name), "jp")
    assert parsed.domain == "example.co.jp"
    assert parsed.registrant.organization == organization
    assert parsed.dates == Dates(
        created="2000-03-01T00:00:00Z",
        updated="2025-03-31T16:02:03Z",
        expires="2026-03-31T00:00:00Z",  # [State] Connected (2026/03/31)
    )
    assert parsed.status[0] == "Connected"


@pytest.mark.parametrize(
    ("name", "charset"),
    [
        ("jprs_general_state_en.txt", "us-ascii"),
        ("jprs_general_state_ja.txt", "iso-2022-jp"),
        ("jprs_general_state_ja.txt", "euc-jp"),
        ("jprs_general_state_ja.txt", "shift_jis"),
    ],
)
def test_jprs_general_use_expiry_in_the_state_line(name: str, charset: str) -> None:
    """No ``[Expires on]``/``[有効期限]``: the date in ``[Status]``/``[状態]`` is the expiry."""
    data = sample(name).replace("\n", "\r\n").encode(charset)
    text, used = decode(data, JAPANESE)
    parsed = parse_whois(text, "jp")
    assert used == ("utf-8" if charset == "us-ascii" else charset)
    assert parsed.domain == "leaving.jp"
    assert parsed.dates == Dates(
        created="2001-02-07T00:00:00Z",
        updated="2025-02-28T16:05:03Z",
        expires="2026-04-30T00:00:00Z",  # To be suspended (2026/04/30)
    )
    assert (parsed.status, parsed.warnings) == (("To be suspended",), ())


@pytest.mark.parametrize("state", ["Active (2026/04/30)", "Active\uff082026/04/30\uff09"])
def test_jprs_expiry_label_wins_over_the_state_date(state: str) -> None:
    text = sample("jprs_general_en.txt").replace("Active", state)
    parsed = parse_whois(text, "jp")
    assert (parsed.dates.expires, parsed.status) == ("2026-02-28T00:00:00Z", ("Active",))
    without_label = text.replace("[Expires on]                    2026/02/28\n", "")
    assert parse_whois(without_label, "jp").dates.expires == "2026-04-30T00:00:00Z"


def test_jprs_sniffed_without_tld() -> None:
    assert sniff_format(sample("jprs_cojp.txt")) == "jprs"
    assert sniff_format(sample("jprs_general_en.txt")) == "jprs"


def test_iana_int() -> None:
    parsed = parse_whois(sample("iana_int.txt"), "int")
    assert parsed.registered is True
    assert parsed.domain == "treaty.int"
    assert parsed.dates == Dates(created="1997-08-26T00:00:00Z", updated="2024-02-07T00:00:00Z")
    assert parsed.name_servers == ("ns1.treaty.int", "ns2.treaty.int")
    assert parsed.registrant.organization == "Example Treaty Organization"
    assert parsed.registrant.street == ("Boulevard de l'Exemple 1", "1000 Brussels", "Belgium")
    assert parsed.contacts["admin"].email == "hostmaster@treaty.int"
    assert parsed.contacts["tech"].name == "Network Operations"
    assert parsed.registrar == Registrar()


def test_iana_tld_record_gives_the_referral() -> None:
    assert parse_whois(sample("iana_tld.txt"), "int").referral == "whois.nic.example-tld.test"


def test_denic() -> None:
    parsed = parse_whois(sample("denic_de.txt"), "de")
    assert parsed.registered is True
    assert parsed.status == ("connect",)
    assert parsed.dates == Dates(updated="2018-03-12T20:44:25Z")
    assert parsed.name_servers == ("ns1.example.net", "ns2.example.net")
    assert parsed.dnssec == "signed"


def test_denic_contact_sections() -> None:
    text = (
        sample("denic_de.txt") + "\n[Tech-C]\nType: ROLE\nName: Hostmaster\nEmail: hm@example.de\n"
    )
    assert parse_whois(text, "de").contacts["tech"] == Contact(
        name="Hostmaster", email="hm@example.de"
    )


def test_denic_free_is_not_registered() -> None:
    parsed = parse_whois(sample("denic_free.txt"), "de")
    assert (parsed.registered, parsed.domain) == (False, "nope-nothing-here.de")


def test_nominet() -> None:
    parsed = parse_whois(sample("nominet_uk.txt"), "uk")
    assert parsed.domain == "example.co.uk"
    assert parsed.registrar.name == "Example Registrar Ltd"
    assert parsed.registrar.url == "https://www.registrar.test"
    assert parsed.dates == Dates(
        created="2014-06-11T00:00:00Z",
        updated="2025-05-10T00:00:00Z",
        expires="2026-06-11T00:00:00Z",
    )
    assert parsed.status == ("Registered until expiry date",)
    assert parsed.name_servers == ("ns1.example.net", "ns2.example.net")
    assert sniff_format(sample("nominet_uk.txt")) == "nominet"


def test_nominet_no_match() -> None:
    assert parse_whois(sample("nominet_nomatch.txt"), "uk").registered is False


def test_afnic_handles_resolve_to_contacts() -> None:
    parsed = parse_whois(sample("afnic_fr.txt"), "fr")
    assert parsed.domain == "example.fr"
    assert parsed.registrar.name == "EXAMPLE REGISTRAR"
    assert parsed.registrar.url == "http://www.registrar.test"
    assert parsed.dates == Dates(
        created="2003-11-14T23:00:00Z",
        updated="2025-01-06T09:10:11Z",
        expires="2026-03-31T22:00:00Z",
    )
    assert parsed.name_servers == ("ns1.example.fr", "ns2.example.net")
    assert parsed.registrant.organization == "Exemple SA"  # type: ORGANIZATION
    assert parsed.registrant.email == "contact@example.fr"
    assert parsed.contacts["admin"] == Contact(redacted=True)  # "Ano Nymous", anonymous: YES
    assert parsed.contacts["tech"].street == ("2 rue du Serveur", "69000 Lyon")


def test_registrobr() -> None:
    parsed = parse_whois(sample("registrobr.txt"), "br")
    assert parsed.domain == "exemplo.com.br"
    assert parsed.registrant.organization == "Exemplo Comunicação e Participações Ltda"  # a CNPJ
    assert parsed.registrant.name == "João da Silva"
    assert parsed.dates == Dates(
        created="1999-02-21T00:00:00Z",
        updated="2024-03-15T00:00:00Z",
        expires="2026-02-21T00:00:00Z",
    )
    assert parsed.status == ("published",)


def test_registrobr_person_owner_stays_a_name() -> None:
    text = sample("registrobr.txt").replace("00.000.000/0001-00", "000.000.000-00")
    parsed = parse_whois(text, "br")
    assert parsed.registrant.name == "Exemplo Comunicação e Participações Ltda"
    assert parsed.registrant.organization is None


def test_eurid() -> None:
    parsed = parse_whois(sample("eurid_eu.txt"), "eu")
    assert parsed.registered is True
    assert parsed.registrar.name == "Example Registrar BV"
    assert parsed.dates == Dates()
    assert parsed.registrant == Contact(redacted=True)  # NOT DISCLOSED!
    assert parsed.contacts["tech"].email == "tech@registrar.test"
    assert parsed.name_servers == ("ns1.example.eu", "ns2.example.net")
    assert parsed.dnssec == "signed"


def test_eurid_available() -> None:
    assert parse_whois(sample("eurid_available.txt"), "eu").registered is False


def test_dotted_fi() -> None:
    parsed = parse_whois(sample("fi_dotted.txt"), "fi")
    assert parsed.domain == "example.fi"
    assert parsed.dates == Dates(
        created="2006-06-30T12:00:00Z",
        updated="2025-01-01T00:00:00Z",
        expires="2026-06-30T12:00:00Z",
    )
    assert parsed.registrant.name == "Esimerkki Oy"
    assert parsed.registrant.city == "Helsinki"
    assert parsed.registrar.name == "Example Registrar Oy"
    assert parsed.dnssec == "unsigned"
    assert sniff_format(sample("fi_dotted.txt")) == "dotted"


def test_dotted_kz() -> None:
    parsed = parse_whois(sample("kz_dotted.txt"), "kz")
    assert parsed.domain == "example.kz"
    assert parsed.status == ("ok",)
    assert parsed.dates.created == "2003-09-02T19:00:00Z"
    assert parsed.registrant.organization == "Example LLP"
    assert parsed.contacts["admin"].email == "admin@example.kz"
    assert parsed.name_servers == ("ns1.example.kz", "ns2.example.kz")
    assert parsed.registrar.name == "HOSTER.KZ"


def test_rpsl_ru() -> None:
    parsed = parse_whois(sample("ru_rpsl.txt"), "ru")
    assert parsed.status == ("REGISTERED", "DELEGATED", "VERIFIED")
    assert parsed.dates.expires == "2026-03-05T21:00:00Z"
    assert parsed.registrant.organization == "Example LLC"
    assert parsed.name_servers == ("ns1.example.ru", "ns2.example.net")


def test_fred_cz() -> None:
    parsed = parse_whois(sample("fred_cz.txt"), "cz")
    assert parsed.registrant.organization == "Příklad s.r.o."
    assert parsed.contacts["admin"].name == "Petr Svoboda"
    assert parsed.dates.expires == "2026-03-12T00:00:00Z"
    assert parsed.name_servers == ("ns1.example.cz", "ns2.example.net")
    assert parsed.dnssec == "signed"
    assert sniff_format(sample("fred_cz.txt")) == "fred"


@pytest.mark.parametrize(
    "text",
    [
        'No match for "NOPE.COM".\n>>> Last update of whois database: 2025-06-01T12:00:00Z <<<',
        "No match!!",
        "NOT FOUND",
        "%% NOT FOUND",
        "No entries found for the selected source(s).",
        "Domain not found.",
        "The queried object does not exist: DOMAIN NOT FOUND",
        "% This query returned 0 objects.",
        "Status: AVAILABLE",
        "nope.example is available for registration",
    ],
)
def test_not_found_answers(text: str) -> None:
    parsed = parse_whois(text)
    assert parsed.registered is False
    assert parsed.warnings == ()


@pytest.mark.parametrize(
    "text",
    [
        QUOTA_BANNER,
        "WHOIS LIMIT EXCEEDED - SEE WWW.PIR.ORG/WHOIS FOR DETAILS",
        "%ERROR:201: access denied\nYou have exceeded your query limit",
        "Your IP has been BLACKLISTED",
        "% Error: 55000000002 Connection refused; access control limit reached.",
        "Too many requests, try again later",
        "Your query quota has been exceeded. Please wait.",
        "% Daily lookup limit was reached for 192.0.2.1",
    ],
)
def test_quota_banners_are_not_data(text: str) -> None:
    parsed = parse_whois(text)
    assert parsed.registered is None
    assert "rate_limited_upstream" in parsed.warnings


def test_not_found_words_inside_a_real_record_do_not_hide_it() -> None:
    text = sample("verisign_com.txt") + "\nNo match for other names means nothing here.\n"
    assert parse_whois(text, "com").registered is True


def test_unknown_format_is_a_warning() -> None:
    parsed = parse_whois("hello\nthis is not whois\n")
    assert (parsed.registered, parsed.warnings) == (None, ("unparsed_format",))


def test_unreadable_date_is_a_warning_not_an_error() -> None:
    parsed = parse_whois("Domain Name: x.uk\nCreation Date: before Aug-1996\nRegistrar: R\n")
    assert parsed.dates.created is None
    assert "unparsed_date" in parsed.warnings


@pytest.mark.parametrize(
    ("value", "codes"),
    [
        ("clientHold https://icann.org/epp#clientHold", ["clientHold"]),
        (
            "clientTransferProhibited (https://www.icann.org/epp#clientTransferProhibited)",
            ["clientTransferProhibited"],
        ),
        ("CLIENTHOLD", ["clientHold"]),
        ("ok", ["ok"]),
        ("REGISTERED, DELEGATED", ["REGISTERED", "DELEGATED"]),
        ("Registered until expiry date.", ["Registered until expiry date"]),
        ("", []),
    ],
)
def test_status_codes(value: str, codes: list[str]) -> None:
    assert status_codes(value) == codes


@pytest.mark.parametrize(
    ("tld", "name"),
    [("jp", "jprs"), ("int", "iana"), ("de", "denic"), ("uk", "nominet"), ("fr", "rpsl"),
     ("br", "registrobr"), ("eu", "eurid"), ("fi", "dotted"), ("com", "icann"), (None, "icann")],
)  # fmt: skip
def test_format_chosen_by_tld(tld: str | None, name: str) -> None:
    assert format_for(tld, "Domain Name: example\n") == name


@pytest.mark.parametrize(
    "placeholder",
    ["REDACTED FOR PRIVACY", "Redacted for privacy purposes", "Data Protected", "Not Disclosed",
     "Non-Public Data", "GDPR Masked", "Statutory Masking Enabled", "REDACTED | EU Data Subject",
     "Hidden upon user request", "Withheld for Privacy Purposes"],
)  # fmt: skip
def test_redacted_placeholders_become_null(placeholder: str) -> None:
    text = (
        f"Domain Name: a.com\nRegistrar: R\nRegistrant Name: {placeholder}\nRegistrant Country: DE"
    )
    assert parse_whois(text).registrant == Contact(country="DE", redacted=True)
