"""Domain validation and normalisation: what reaches a whois server is a clean A-label."""

from __future__ import annotations

import pytest

from assetgate.errors import AppError
from assetgate.whois.domain import Domain, normalise_tld, parse_domain, registrable

RESTRICTED = frozenset({"edu", "mil"})


@pytest.mark.parametrize(
    ("raw", "ascii_name", "unicode_name", "tld"),
    [
        ("example.com", "example.com", "example.com", "com"),
        ("EXAMPLE.COM", "example.com", "example.com", "com"),
        ("example.com.", "example.com", "example.com", "com"),
        ("ＥＸＡＭＰＬＥ．ＣＯＭ", "example.com", "example.com", "com"),
        ("example。jp", "example.jp", "example.jp", "jp"),
        ("bücher.de", "xn--bcher-kva.de", "bücher.de", "de"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de", "bücher.de", "de"),
        ("faß.de", "xn--fa-hia.de", "faß.de", "de"),  # IDNA 2008: no transitional mapping
        ("ドメイン.jp", "xn--eckwd4c7c.jp", "ドメイン.jp", "jp"),
        ("пример.рф", "xn--e1afmkfd.xn--p1ai", "пример.рф", "xn--p1ai"),
        ("a-b.example.co.uk", "a-b.example.co.uk", "a-b.example.co.uk", "uk"),
    ],
)
def test_normalises_to_a_labels(raw: str, ascii_name: str, unicode_name: str, tld: str) -> None:
    assert parse_domain(raw, restricted=RESTRICTED) == Domain(ascii_name, unicode_name, tld)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "example.com\r\nexample.org",
        "example.com\n",
        "example.com\r",
        "example .com",
        "example.com foo",
        "\texample.com",
        "example.com\x00",
        "-h example.com",
        "-hexample.com",
        "=example.com",
        "!EXAMPLE-HANDLE",
        "－h.com",  # full-width hyphen-minus maps to '-'
        "＝example.com",
        "example.com/e",
        "example.com:43",
        "user@example.com",
        "example.com?x",
        "example.com#x",
        "*.example.com",
        "example.com\u2028",
        "example..com",
        ".example.com",
        "-example.com",
        "example-.com",
        "ab--cd.com",
        "xn--zz.com",
        "a_b.com",
        "com",
        "192.0.2.1",
        "1.2.3.4.5",
        "a" * 64 + ".com",
        ".".join(["a" * 60] * 5) + ".com",
        "x" * 2000,
    ],
)
def test_rejects_bad_input_with_400_naming_domain(raw: str) -> None:
    with pytest.raises(AppError) as caught:
        parse_domain(raw, restricted=RESTRICTED)
    assert (caught.value.status, caught.value.param) == (400, "domain")
    assert caught.value.message.startswith("domain: ")


def test_missing_is_400() -> None:
    with pytest.raises(AppError) as caught:
        parse_domain(None, restricted=RESTRICTED)
    assert (caught.value.status, caught.value.message) == (
        400,
        "domain: required parameter is missing",
    )


@pytest.mark.parametrize(
    "raw",
    [
        "example.edu",
        "EXAMPLE.EDU",
        "x.edu.",
        "EDU.",
        "ｅｘａｍｐｌｅ．ｅｄｕ",
        "ＥＤＵ",
        "army.mil",
        "a.b.mil",
    ],
)
def test_restricted_tlds_after_normalisation_are_403(raw: str) -> None:
    with pytest.raises(AppError) as caught:
        parse_domain(raw, restricted=RESTRICTED)
    assert caught.value.status == 403
    assert "restricted" in caught.value.message


@pytest.mark.parametrize(
    "raw",
    ["example.edu..", "example.edu...", "example..edu", ".example.edu", "..", ".",
     "example.edu。。", "example．edu．．", "example｡edu｡｡", "example.edu.。", "a.b..c"],
)  # fmt: skip
def test_empty_labels_are_400_before_the_restricted_check(raw: str) -> None:
    with pytest.raises(AppError) as caught:
        parse_domain(raw, restricted=RESTRICTED)
    assert (caught.value.status, caught.value.param) == (400, "domain")
    assert caught.value.message.startswith("domain: expected a domain name without empty labels")


def test_only_the_last_label_is_the_tld() -> None:
    assert parse_domain("example.edu.au", restricted=RESTRICTED).tld == "au"


def test_configured_restricted_tlds_are_normalised() -> None:
    restricted = {normalise_tld(t) for t in ("EDU", ".Mil", "рф")}
    assert restricted == {"edu", "mil", "xn--p1ai"}
    with pytest.raises(AppError) as caught:
        parse_domain("пример.РФ", restricted=restricted)
    assert caught.value.status == 403


def test_registrable_cuts_subdomains_with_the_icann_suffix_list() -> None:
    suffixes = {"www.example.co.uk": "example.co.uk", "co.uk": None}.get
    cut = registrable(parse_domain("www.example.co.uk", restricted=RESTRICTED), suffixes)
    assert cut == Domain("example.co.uk", "example.co.uk", "uk")
    whole = parse_domain("co.uk", restricted=RESTRICTED)
    assert registrable(whole, suffixes) is whole


def test_ascii_fast_path_agrees_with_full_idna() -> None:
    """Random LDH-ish names: the fast path and IDNA 2008/UTS 46 accept and map them alike."""
    import random

    import idna

    rng = random.Random(7)
    alphabet = "abcXYZ019-."
    for _ in range(5000):
        raw = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) + ".com"
        try:
            mapped = idna.uts46_remap(raw, std3_rules=True, transitional=False)
            expected: str | None = idna.encode(mapped, uts46=False).decode()
        except idna.IDNAError:
            expected = None
        try:
            got: str | None = parse_domain(raw, restricted=RESTRICTED).ascii
        except AppError:
            got = None
        if expected is not None and expected.startswith("-"):
            expected = None  # a leading '-' is refused before IDNA: it is a whois flag
        assert got == expected, raw
