"""Registries with their own layouts: every published value, the ugly wire cases, warnings."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from assetgate.whois.charset import LATIN1, decode
from assetgate.whois.parse import format_for, parse_whois
from assetgate.whois.parse.blocks import continued_pairs, handle_index, sections, split_address
from assetgate.whois.parse.common import dnssec_value
from assetgate.whois.parse.published import PUBLISHED
from assetgate.whois.parse.rpsl import split_blocks
from assetgate.whois.record import FIELD_PATHS, Parsed, field_value, merge
from tests.whois.conftest import QUOTA_BANNER, sample
from tests.whois.coverage import table
from tests.whois.registry_table import CASES, KNOWN_MISSES, Case, coverage_rows, parse_case

VALUES = [
    pytest.param(case, field, value, id=f"{case.fixture}:{field}")
    for case in CASES
    for field, value in case.expected.items()
]


@pytest.mark.parametrize(("case", "field", "value"), VALUES)
def test_published_value_is_found(case: Case, field: str, value: object) -> None:
    found = field_value(parse_case(case), field)
    if (case.registry, field) in KNOWN_MISSES:
        assert found != value, "fixed: drop it from KNOWN_MISSES"
    else:
        assert found == value


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.fixture)
def test_every_fixture_is_a_registered_record_without_warnings(case: Case) -> None:
    parsed = parse_case(case)
    assert parsed.registered is True
    assert parsed.domain is not None
    assert parsed.domain.endswith(case.tld)
    assert parsed.warnings == ()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.fixture)
def test_crlf_gives_the_same_record(case: Case) -> None:
    text = sample(case.fixture).replace("\n", "\r\n")
    assert parse_whois(text, case.tld) == parse_case(case)


@pytest.mark.parametrize(
    ("fixture", "tld"),
    [("isnic_is.txt", "is"), ("norid_no.txt", "no"), ("nicar_ar.txt", "ar"),
     ("nicar_ar_blocks.txt", "ar"), ("traficom_fi.txt", "fi")],
)  # fmt: skip
def test_latin1_on_the_wire(fixture: str, tld: str) -> None:
    text, used = decode(sample(fixture).encode("iso-8859-1"), LATIN1)
    assert used == "iso-8859-1"
    assert parse_whois(text, tld) == parse_whois(sample(fixture), tld)


def test_isnic_registrant_is_resolved_by_handle_with_non_ascii_address() -> None:
    text, _ = decode(sample("isnic_is.txt").encode("iso-8859-1"), LATIN1)
    parsed = parse_whois(text, "is")
    assert parsed.registrant.city == "Reykjavík"
    assert parsed.contacts["tech"].name == "Hýsing hf."  # tech-c HYS34-IS, second object


@pytest.mark.parametrize(
    "banner",
    [QUOTA_BANNER, "% Excessive querying, grace period of 60 seconds started.\n",
     "%% Maximum query rate reached\n"],
)  # fmt: skip
@pytest.mark.parametrize("case", CASES[:6], ids=lambda c: c.fixture)
def test_rate_limit_banner_after_a_record_keeps_the_record(case: Case, banner: str) -> None:
    parsed = parse_whois(sample(case.fixture) + "\n" + banner, case.tld)
    assert parsed == parse_case(case)


@pytest.mark.parametrize(
    "banner",
    ["% Excessive querying, grace period of 60 seconds started.\n",
     "%% Maximum query rate reached\n", "# Query rate limit exceeded\r\n"],
)  # fmt: skip
def test_rate_limit_banner_alone_is_not_a_record(banner: str) -> None:
    parsed = parse_whois(banner, "be")
    assert parsed.registered is None
    assert parsed.warnings == ("rate_limited_upstream",)


def test_trailing_copyright_banner_is_not_data() -> None:
    head = sample("sidn_nl.txt").split("Record maintained by")[0]
    assert parse_whois(head, "nl") == parse_case(CASES[0])


def test_missing_fields_are_named_in_warnings() -> None:
    text = sample("sidn_nl.txt").replace("Registrar:", "Reseller:").replace("DNSSEC:", "x:")
    assert parse_whois(text, "nl").warnings == ("missing:registrar", "missing:dnssec")


def test_not_registered_answers_get_no_missing_warnings() -> None:
    assert parse_whois("Domain name: nope.nl\nStatus: free\n", "nl").warnings == ()


def test_registrar_hop_clears_a_missing_warning() -> None:
    registry = Parsed(registered=True, domain="a.com", warnings=("missing:registrar",))
    registrar = parse_whois(sample("registrar_com.txt"))
    assert "missing:registrar" not in merge(registry, registrar).warnings
    unfilled = merge(registry, replace(registrar, registrar=Parsed().registrar))
    assert "missing:registrar" in unfilled.warnings


@pytest.mark.parametrize(
    ("wording", "value"),
    [("yes", "signed"), ("no", "unsigned"), ("Signed", "signed"), ("Unsigned", "unsigned"),
     ("signed delegation", "signed"), ("unsigned delegation", "unsigned"),
     ("signedDelegation", "signed"), ("Inactive", "unsigned"), ("something else", None)],
)  # fmt: skip
def test_dnssec_wording_is_normalised(wording: str, value: str | None) -> None:
    assert dnssec_value(wording) == value


@pytest.mark.parametrize(
    ("tld", "name"),
    [("nl", "sectioned"), ("be", "sectioned"), ("gg", "sectioned"), ("tk", "sectioned"),
     ("no", "norid"), ("ie", "iedr"), ("ir", "irnic"), ("pl", "nask"), ("is", "rpsl"),
     ("ar", "nicar"), ("nu", "iis"), ("se", "iis"), ("ua", "uaepp"), ("ve", "nicve"),
     ("il", "isocil"),
     ("sk", "sknic"), ("dk", "punktum"), ("it", "nicit"), ("ch", "switch"),
     ("cn", "icann"), ("fi", "dotted")],
)  # fmt: skip
def test_registry_formats_chosen_by_tld(tld: str, name: str) -> None:
    assert format_for(tld, "") == name


def test_published_fields_are_known_paths() -> None:
    for tld, paths in PUBLISHED.items():
        assert set(paths) <= set(FIELD_PATHS), tld


def test_norid_is_sniffed_without_tld() -> None:
    assert parse_whois(sample("norid_no.txt")).registrar.name == "Eksempel Registrar AS"


def test_iedr_answer_in_icann_labels_still_parses() -> None:
    text = (
        "Domain Name: example.ie\nRegistrar: Example Registrar Ltd\n"
        "Creation Date: 1999-07-27T00:00:00Z\nRegistry Expiry Date: 2026-07-27T00:00:00Z\n"
        "Domain Status: ok https://icann.org/epp#ok\nRegistrant Name: Example Trading Limited\n"
        "Name Server: ns1.example.ie\nDNSSEC: unsigned\n"
    )
    parsed = parse_whois(text, "ie")
    assert (parsed.registrar.name, parsed.registrant.name) == (
        "Example Registrar Ltd",
        "Example Trading Limited",
    )
    assert parsed.dates.expires == "2026-07-27T00:00:00Z"
    assert (parsed.status, parsed.dnssec, parsed.warnings) == (("ok",), "unsigned", ())


def test_dns_belgium_without_flags_or_keys() -> None:
    text = sample("dnsbe_be.txt")
    text = text.split("Keys:")[0] + "Keys:\n\nFlags:\n\n"
    parsed = parse_whois(text, "be")
    assert (parsed.status, parsed.dnssec, parsed.warnings) == (("NOT AVAILABLE",), "unsigned", ())


def test_dns_belgium_state_is_a_status_beside_the_flags() -> None:
    parsed = parse_whois(sample("dnsbe_be.txt"), "be")
    assert parsed.status == ("NOT AVAILABLE", "clientTransferProhibited")


def test_dns_belgium_available_is_not_registered() -> None:
    text = "% .be Whois Server 6.1\n\nDomain:\tfree-name.be\nStatus:\tAVAILABLE\n"
    parsed = parse_whois(text, "be")
    assert (parsed.registered, parsed.status) == (False, ())


def test_nask_option_dates_are_not_the_expiry() -> None:
    text = sample("nask_pl.txt").replace("renewal date:          2026.03.14 13:00:00\n", "")
    parsed = parse_whois(text, "pl")
    assert parsed.dates.expires is None
    assert parsed.warnings == ("missing:dates.expires",)


def test_freenom_dates_are_month_first() -> None:
    text = sample("freenom_tk.txt").replace("05/29/2015", "03/04/2015")
    assert parse_whois(text, "tk").dates.created == "2015-03-04T00:00:00Z"  # 4 March


def test_coverage_table_counts_every_registry() -> None:
    rows = coverage_rows()
    assert len(rows) == len(CASES)
    assert sum(r[1] for r in rows) / sum(r[2] for r in rows) >= 0.95
    assert all(hits > 0 for _, hits, _ in rows)
    reference = Path(__file__).parents[2] / "docs" / "whois.md"
    assert table() in reference.read_text(encoding="utf-8"), "rerun python -m tests.whois.coverage"


# --- the reusable shapes -------------------------------------------------------------------


def test_sections_heading_and_indented_lines() -> None:
    found = sections("Domain: a.be\n\nRegistrar:\n\tName: R\n\tWebsite: w\n\nKeys:\n\nx: 1\n")
    assert [(s.heading, s.lines) for s in found] == [
        ("", ["Domain: a.be"]),
        ("registrar", ["Name: R", "Website: w"]),
        ("keys", []),
        ("", ["x: 1"]),
    ]
    assert found[1].get("website") == "w"


def test_flush_sections_take_lines_up_to_the_blank_line() -> None:
    found = sections("REGISTRAR:\nName Ltd\nStreet 1\n\nfooter\n", flush=True)
    assert [(s.heading, s.lines) for s in found] == [
        ("registrar", ["Name Ltd", "Street 1"]),
        ("", ["footer"]),
    ]


def test_handle_index_finds_objects_by_the_handle_they_define() -> None:
    blocks = split_blocks(
        "domain: a.is\nregistrant: AB1-IS\n\nrole: A\nnic-hdl: ab1-is\n\n"
        "NORID Handle.....: N1\nName.....: B\n\ncontact: C1\nname: C\n"
    )
    index = handle_index(blocks)
    assert sorted(index) == ["AB1-IS", "C1", "N1"]
    assert index["AB1-IS"][0] == ("role", "A")


def test_continued_pairs() -> None:
    text = "nameservers: ns1.a.pl.\n             ns2.a.pl.\ncreated: 2001.01.01\n"
    assert list(continued_pairs(text)) == [
        ("nameservers", ["ns1.a.pl.", "ns2.a.pl."]),
        ("created", ["2001.01.01"]),
    ]


@pytest.mark.parametrize(
    ("lines", "street", "postal_code", "city", "after"),
    [
        (["Katu 1", "00100", "Helsinki"], ["Katu 1"], "00100", "Helsinki", []),
        (["Laugavegur 1", "101 Reykjavík", "Iceland"], ["Laugavegur 1"], "101", "Reykjavík",
         ["Iceland"]),
        (["1 Rue X", "F-75008 Paris"], ["1 Rue X"], "F-75008", "Paris", []),
        (["Laan 5", "1011 AB Amsterdam"], ["Laan 5"], "1011 AB", "Amsterdam", []),
        (["Only a street"], ["Only a street"], None, None, []),
    ],
)  # fmt: skip
def test_split_address(
    lines: list[str], street: list[str], postal_code: str | None, city: str | None, after: list[str]
) -> None:
    address = split_address(lines)
    assert (address.street, address.postal_code, address.city, address.after) == (
        street,
        postal_code,
        city,
        after,
    )
