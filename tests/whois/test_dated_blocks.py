"""Registries whose answers carry dates that are not the domain's (issue 27).

NASK (.pl) lists an option on the name (``option created:`` / ``option expiration date:``) and
contact blocks with their own ``last modified:``; NIC Argentina (.ar) gives each object
(domain, ``contact:``, ``nserver:``) its own ``created:``/``changed:``. Only the registration's
dates are the record's, and a date the registration lacks stays null.
"""

from __future__ import annotations

from assetgate.whois.parse import parse_whois
from assetgate.whois.record import FIELD_PATHS, Parsed, field_value
from tests.whois.conftest import sample

NASK_RECORD = {
    "registrar": "Hosting Przykładowy S.A.",
    "dates.created": "2009-06-22T12:00:00Z",
    "dates.updated": "2025-05-30T08:41:17Z",
    "dates.expires": "2026-06-21T14:00:00Z",
    "name_servers": ("ns1.opcja-przyklad.pl", "ns2.hosting-przyklad.com.pl"),
    "status": (),
    "dnssec": "signed",
    "registrant.name": None,
    "registrant.organization": None,
    "registrant.street": (),
    "registrant.postal_code": None,
    "registrant.city": None,
    "registrant.country": None,
}
NICAR_RECORD = {
    "registrar": "nicar",
    "dates.created": "2011-09-14T00:00:00Z",
    "dates.updated": "2025-02-03T11:47:05Z",
    "dates.expires": "2026-09-14T00:00:00Z",
    "name_servers": ("ns1.hosting-ejemplo.com.ar", "ns2.hosting-ejemplo.com.ar"),
    "status": (),
    "dnssec": None,
    "registrant.name": "PÉREZ JUAN CARLOS",
    "registrant.organization": None,
    "registrant.street": (),
    "registrant.postal_code": None,
    "registrant.city": None,
    "registrant.country": None,
}


def fields(parsed: Parsed) -> dict[str, object]:
    return {path: field_value(parsed, path) for path in FIELD_PATHS}


def nask(text: str | None = None) -> Parsed:
    return parse_whois(sample("nask_pl_option.txt") if text is None else text, "pl")


def nicar(text: str | None = None) -> Parsed:
    return parse_whois(sample("nicar_ar_blocks.txt") if text is None else text, "ar")


def test_nask_record_with_an_option_has_every_field_of_the_registration() -> None:
    parsed = nask()
    assert fields(parsed) == NASK_RECORD
    assert (parsed.registered, parsed.domain, parsed.warnings) == (
        True,
        "opcja-przyklad.pl",
        (),
    )
    assert parsed.registrar.url == "https://hosting.test/"


def test_nask_expiration_date_of_the_registration_is_the_expiry() -> None:
    text = sample("nask_pl_option.txt").replace("renewal date:   ", "expiration date:")
    assert "\nexpiration date:" in text
    assert fields(nask(text)) == NASK_RECORD


def test_nask_option_dates_never_fill_the_registration_dates() -> None:
    text = sample("nask_pl_option.txt")
    for line in ("created:               2009.06.22 12:00:00\n",
                 "renewal date:          2026.06.21 14:00:00\n"):  # fmt: skip
        assert line in text
        text = text.replace(line, "")
    parsed = nask(text)
    assert (parsed.dates.created, parsed.dates.expires) == (None, None)
    assert parsed.warnings == ("missing:dates.created", "missing:dates.expires")


def test_nask_date_outside_the_registration_paragraph_is_not_the_domains() -> None:
    # Even a bare ``expiration date:`` in the option's paragraph, or the contact's
    # ``last modified:``, is not the registration's.
    text = (
        sample("nask_pl_option.txt")
        .replace("renewal date:          2026.06.21 14:00:00\n", "")
        .replace("last modified:         2025.05.30 08:41:17\n", "")
        .replace("option expiration date:", "expiration date:")
    )
    parsed = nask(text)
    assert (parsed.dates.updated, parsed.dates.expires) == (None, None)
    assert parsed.dates.created == "2009-06-22T12:00:00Z"


def test_nicar_record_has_every_field_of_the_domain_object() -> None:
    parsed = nicar()
    assert fields(parsed) == NICAR_RECORD
    assert (parsed.registered, parsed.domain, parsed.warnings) == (
        True,
        "libreria-ejemplo.com.ar",
        (),
    )


def test_nicar_created_of_the_contact_or_name_servers_never_wins() -> None:
    text = sample("nicar_ar_blocks.txt").replace("registered:\t2011-09-14 00:00:00\n", "")
    parsed = nicar(text)
    assert parsed.dates.created is None  # not 2008-05-20 (contact) nor 2019-07-01 (nserver)
    assert parsed.warnings == ("missing:dates.created",)


def test_nicar_registered_wins_over_a_created_in_the_domain_object() -> None:
    later = "created:\t2020-01-02 03:04:05\n"
    text = sample("nicar_ar_blocks.txt").replace(
        "registrar:\tnicar\nregistered:", f"registrar:\tnicar\n{later}registered:"
    )
    assert text.count("created:") == 3
    assert fields(nicar(text)) == NICAR_RECORD


def test_nicar_domain_object_dated_by_created() -> None:
    text = sample("nicar_ar_blocks.txt").replace("registered:\t", "created:\t")
    assert fields(nicar(text)) == NICAR_RECORD


def test_nicar_objects_without_blank_lines_between_them() -> None:
    text = sample("nicar_ar_blocks.txt")
    body = text[text.index("domain:") :]
    packed = text[: text.index("domain:")] + body.replace("\n\n", "\n")
    assert "\n\n" not in packed[packed.index("domain:") :]
    parsed = nicar(packed)
    assert fields(parsed) == NICAR_RECORD
    assert parsed.warnings == ()


def test_pl_answer_without_a_domain_name_paragraph_keeps_its_dates() -> None:
    # Second-level registries under .pl (e.g. co.pl) answer in RPSL style, no NASK paragraphs.
    text = "domain:   sklep.co.pl\nnserver:  ns1.co.pl\nchanged:  2024-06-23 09:41:50\n"
    parsed = nask(text)
    assert (parsed.domain, parsed.dates.updated) == ("sklep.co.pl", "2024-06-23T09:41:50Z")
    assert parsed.name_servers == ("ns1.co.pl",)
