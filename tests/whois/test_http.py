"""The two endpoints through the real app, against the loopback whois and RDAP servers.

Covers every row of spec §7.3 (400, 403, 500, 429), 405, the registry formats end to end
(charsets on the wire, decorations sent), referral and its SSRF guard, RDAP with redirect and
registrar link, fallback from RDAP to port 43, caching and single-flight.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from assetgate.whois.openapi import CONTACT_SCHEMA, RECORD_SCHEMA
from tests.whois.conftest import Env, closed_port, thin
from tests.whois.fakes import Reply

pytestmark = pytest.mark.anyio

JSON = "/api/whois/json"
TEXT = "/api/whois"


def assert_shape(value: Any, schema: dict[str, Any]) -> None:
    """Every required key of the record schema is present, recursively."""
    for key in schema.get("required", []):
        assert key in value, key
        sub = schema["properties"][key]
        if "required" in sub and value[key] is not None:
            assert_shape(value[key], sub)


async def get_json(client: httpx.AsyncClient, domain: str, **params: str) -> dict[str, Any]:
    response = await client.get(JSON, params={"domain": domain, **params})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert_shape(body, RECORD_SCHEMA)
    return body


# --- §7.3 rows ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [TEXT, JSON])
async def test_missing_domain_is_400(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 400
    assert response.json() == {"error": "domain: required parameter is missing", "code": 400}


@pytest.mark.parametrize("path", [TEXT, JSON])
async def test_restricted_tld_is_403(client: httpx.AsyncClient, env: Env, path: str) -> None:
    for domain in ("example.edu", "EXAMPLE.EDU.", "ｅｘａｍｐｌｅ．ｅｄｕ", "www.army.mil", "EDU."):
        response = await client.get(path, params={"domain": domain})
        assert response.status_code == 403, domain
        body = response.json()
        assert body["code"] == 403
        assert body["error"] in (
            "whois of .edu domains is restricted",
            "whois of .mil domains is restricted",
        )
    assert env.registry.queries == []


# Every spelling of a restricted name (issue: "example.edu.." once normalised to an empty TLD and
# went to the "*" server). Raw query strings, so the percent-encoding is exactly what is sent.
RESTRICTED_SPELLINGS_403 = [
    "example.edu", "EXAMPLE.EDU", "Example.Edu", "example.edu.", "EXAMPLE.EDU.",
    "www.example.edu", "ｅｘａｍｐｌｅ．ｅｄｕ", "ｅｘａｍｐｌｅ．ｅｄｕ．", "example%E3%80%82edu",
    "example%EF%BD%A1edu", "b%C3%BCcher.edu", "xn--bcher-kva.edu", "XN--BCHER-KVA.EDU.",
    "example%2Eedu", "example%2eEDU%2E", "army.mil", "ARMY.MIL.", "%EF%BD%8D%EF%BD%89%EF%BD%8C",
    "%D0%BF%D1%80%D0%B8%D0%BC%D0%B5%D1%80.%D1%80%D1%84", "xn--e1afmkfd.xn--p1ai",
    "XN--E1AFMKFD.XN--P1AI.", "%D0%9F%D0%A0%D0%98%D0%9C%D0%95%D0%A0.%D0%A0%D0%A4",
]  # fmt: skip
RESTRICTED_SPELLINGS_400 = [
    "example.edu..", "EXAMPLE.EDU..", "example.edu...", "example..edu", ".example.edu",
    "example.edu%2E%2E", "example%2Eedu%2E%2E", "example.edu%E3%80%82%E3%80%82",
    "example%EF%BC%8Eedu%EF%BC%8E%EF%BC%8E", "xn--bcher-kva.edu..", "xn--e1afmkfd.xn--p1ai..",
    "%20example.edu", "example.edu%20", "example.edu+", "+example.edu", "example%20.edu",
    "example.edu%09", "example.edu%0A", "example.edu%0D%0A", "example.edu%E3%80%80",
    "example.edu%C2%A0", "example%252Eedu", "example.edu%252E", "example.edu%00", "..", ".",
]  # fmt: skip


async def test_every_spelling_of_a_restricted_tld_is_refused(env: Env) -> None:
    async with env.client(whois_restricted_tlds=["edu", "mil", "рф"]) as client:
        for path in (TEXT, JSON):
            for spelling in RESTRICTED_SPELLINGS_403:
                response = await client.get(f"{path}?domain={spelling}")
                assert response.status_code == 403, spelling
                assert response.json()["error"].startswith("whois of ."), spelling
            for spelling in RESTRICTED_SPELLINGS_400:
                response = await client.get(f"{path}?domain={spelling}")
                assert response.status_code == 400, spelling
                body = response.json()
                assert body["error"].startswith("domain: expected "), spelling
                assert body["code"] == 400
    assert env.registry.queries == []
    assert env.rdap.requests == []


async def test_two_trailing_dots_are_400_naming_empty_labels(client: httpx.AsyncClient) -> None:
    response = await client.get(JSON, params={"domain": "example.edu.."})
    assert response.status_code == 400
    assert response.json() == {
        "error": "domain: expected a domain name without empty labels, got 'example.edu..'",
        "code": 400,
    }


async def test_restricted_tlds_are_configurable(env: Env) -> None:
    async with env.client(whois_restricted_tlds=["edu", "mil", "DE"]) as client:
        assert (await client.get(JSON, params={"domain": "example.de"})).status_code == 403
        assert (await client.get(JSON, params={"domain": "example.edu"})).status_code == 403


@pytest.mark.parametrize(
    ("domain", "reason"),
    [
        ("example.slow", "whois server for .slow: timed out"),
        ("example.big", "whois server for .big: answer exceeds 256 KiB"),
        ("example.closed", "whois server for .closed: connection refused"),
        ("example.empty", "whois server for .empty: gave no answer for this domain"),
    ],
)
@pytest.mark.parametrize("path", [TEXT, JSON])
async def test_fetch_failure_is_500_with_error_id(
    client: httpx.AsyncClient, path: str, domain: str, reason: str
) -> None:
    response = await client.get(path, params={"domain": domain})
    assert response.status_code == 500
    body = response.json()
    assert body["error"] == f"whois lookup failed: {reason}"
    assert body["code"] == 500
    assert len(body["error_id"]) == 16
    assert "127.0.0.1" not in response.text


@pytest.mark.parametrize("path", [TEXT, JSON])
async def test_port_43_quota_banner_is_429(client: httpx.AsyncClient, path: str) -> None:
    """Before issue 40: 500, as if the service had failed; the client may simply retry later."""
    response = await client.get(path, params={"domain": "quota.com"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "60"
    assert response.json()["error"] == (
        "whois lookup rate limited upstream: whois server for .com: rate limited the query"
    )


async def test_fetch_failure_error_id_is_logged(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    response = await client.get(JSON, params={"domain": "example.closed"})
    error_id = response.json()["error_id"]
    logged = [r.getMessage() for r in caplog.records if error_id in r.getMessage()]
    assert any("whois server for .closed: connection refused" in m for m in logged)
    assert not any("127.0.0.1" in m for m in logged)


async def test_registry_with_its_own_layout_crlf_and_raw_dnssec_wording(
    client: httpx.AsyncClient,
) -> None:
    record = await get_json(client, "example.nl", raw="1")
    assert record["registrar"]["name"] == "Voorbeeld Registrar B.V."
    assert record["registrar"]["abuse_email"] == "abuse@registrar.test"
    assert record["name_servers"] == ["ns1.example.nl", "ns2.example.net"]
    assert record["dnssec"] == "signed"
    assert "DNSSEC:      yes" in record["raw"]  # the registry's own wording, only here
    assert record["warnings"] == []


async def test_latin1_registry_resolves_the_registrant_handle(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "example.is")
    assert record["registrant"]["name"] == "Dæmi ehf."
    assert record["registrant"]["city"] == "Reykjavík"
    assert record["registrant"]["postal_code"] == "101"
    assert record["contacts"]["tech"]["name"] == "Hýsing hf."
    assert record["dates"]["created"] == "2000-01-18T00:00:00Z"
    assert record["dnssec"] == "unsigned"


async def test_unfound_published_field_is_a_warning(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "partial.nl")
    assert record["registered"] is True
    assert record["registrar"]["name"] is None
    assert record["warnings"] == ["missing:registrar"]


async def test_rate_limit_429_counts_cache_hits(env: Env) -> None:
    async with env.client(rate_limit="3/10 seconds") as client:
        statuses = []
        for _ in range(4):
            response = await client.get(JSON, params={"domain": "example.com"})
            statuses.append(response.status_code)
        assert statuses == [200, 200, 200, 429]
        assert response.json() == {"error": "rate limit exceeded", "code": 429}
        assert int(response.headers["retry-after"]) >= 1
        assert "ratelimit" in response.headers
        # The budget is shared by both endpoints, and bad requests spend it too.
        assert (await client.get(TEXT, params={"domain": "example.com"})).status_code == 429
        assert (await client.get(TEXT)).status_code == 429
    assert env.registry.queries == ["domain example.com"]  # one fetch, then cache hits


async def test_rate_limit_fields_on_success_and_error(client: httpx.AsyncClient) -> None:
    ok = await client.get(JSON, params={"domain": "nope.com"})
    bad = await client.get(JSON)
    for response in (ok, bad):
        assert response.headers["ratelimit-policy"] == '"default";q=1000;w=10'
        assert response.headers["ratelimit"].startswith('"default";r=')


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize("path", [TEXT, JSON])
async def test_other_methods_are_405_json(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    response = await client.request(method, path, params={"domain": "example.com"})
    assert response.status_code == 405
    assert response.json()["code"] == 405
    assert "GET" in response.headers["allow"]


# --- injection ------------------------------------------------------------------------------


INJECTIONS = [
    "example.com\r\nexample.org",
    "example.com\n-h evil.test",
    "example.com example.org",
    "-h evil.test example.com",
    "-T dn,ace example.de",
    "=example.com",
    "!EXAMPLE-HANDLE",
    "－h.com",
    "example.com/e",
    "example.com:43",
    "help",
    "example.com\x00",
    "example.com\u2028x",
    "*.com",
]


@pytest.mark.parametrize("path", [TEXT, JSON])
async def test_injection_attempts_never_reach_a_server(
    client: httpx.AsyncClient, env: Env, path: str
) -> None:
    for domain in INJECTIONS:
        response = await client.get(path, params={"domain": domain})
        assert response.status_code == 400, domain
        assert response.json()["error"].startswith("domain: expected "), domain
    assert env.registry.queries == []
    assert env.rdap.requests == []


async def test_encoded_crlf_in_the_raw_query_string(client: httpx.AsyncClient, env: Env) -> None:
    response = await client.get(f"{JSON}?domain=example.com%0D%0Adomain%20other.com")
    assert response.status_code == 400
    assert env.registry.queries == []


async def test_repeated_domain_parameter_is_400(client: httpx.AsyncClient) -> None:
    response = await client.get(f"{JSON}?domain=example.com&domain=example.org")
    assert response.status_code == 400
    assert response.json()["error"].startswith("domain: expected one domain name")


async def test_bad_raw_flag_is_400(client: httpx.AsyncClient) -> None:
    response = await client.get(JSON, params={"domain": "example.com", "raw": "maybe"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("raw: ")


# --- .com thin registry and referral --------------------------------------------------------


async def test_com_thin_registry_then_registrar(client: httpx.AsyncClient, env: Env) -> None:
    record = await get_json(client, "example.com")
    assert env.registry.queries == ["domain example.com"]
    assert env.registrar.queries == ["example.com"]
    assert record["domain"] == "example.com"
    assert record["registered"] is True
    assert record["source"]["protocol"] == "whois"
    assert record["source"]["hops"] == 2
    assert record["source"]["cached"] is False
    assert record["source"]["fetched_at"].endswith("Z")
    assert set(record["source"]["contacts_from"].values()) == {"referral 1: whois.registrar.test"}
    assert record["registrar"] == {
        "name": "Example Registrar, Inc.",
        "iana_id": "376",
        "url": "http://www.registrar.test",
        "abuse_email": "abuse@registrar.test",
        "abuse_phone": "+1.2025550123",
        "whois_server": "whois.registrar.test",
    }
    assert record["dates"] == {
        "created": "1995-08-14T04:00:00Z",
        "updated": "2024-08-14T07:01:34Z",
        "expires": "2026-08-13T04:00:00Z",
    }
    assert record["status"] == [
        "clientDeleteProhibited",
        "clientTransferProhibited",
        "clientUpdateProhibited",
    ]
    assert record["name_servers"] == ["a.iana-servers.net", "b.iana-servers.net"]
    assert record["dnssec"] == "signed"
    assert record["registrant"]["name"] is None
    assert record["registrant"]["organization"] == "Example Holdings LLC"
    assert record["registrant"]["redacted"] is True
    assert record["contacts"]["tech"]["email"] == "hostmaster@example.com"
    assert record["contacts"]["billing"] == {
        key: [] if key == "street" else False if key == "redacted" else None
        for key in CONTACT_SCHEMA["required"]
    }
    assert record["warnings"] == []
    assert "raw" not in record


async def test_text_marks_each_hop(client: httpx.AsyncClient, env: Env) -> None:
    response = await client.get(TEXT, params={"domain": "example.com"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["x-content-type-options"] == "nosniff"
    text = response.text
    registry_mark = "# whois server for .com (registry, whois port 43)\n"
    registrar_mark = "# whois.registrar.test (referral 1, whois port 43)\n"
    assert text.startswith(registry_mark)
    assert text.index(registrar_mark) > text.index("   Domain Name: EXAMPLE.COM")
    assert "Registrant Organization: Example Holdings LLC" in text
    assert env.registry.address not in text  # the operator's server, by the TLD it serves


@pytest.mark.parametrize("domain", ["example.com", "example.org", "example.nl"])
async def test_success_names_operator_servers_by_tld_not_address(
    client: httpx.AsyncClient, env: Env, domain: str
) -> None:
    """docs/whois.md: an operator-configured server is named by the TLD it serves, on success
    as on failure (port 43 from ASSETGATE_WHOIS_SERVERS, RDAP from ASSETGATE_RDAP_BOOTSTRAP)."""
    tld = domain.rsplit(".", 1)[1]
    record = await get_json(client, domain, raw="1")
    kind = "RDAP" if tld == "org" else "whois"
    assert record["source"]["server"] == f"{kind} server for .{tld}"
    text = (await client.get(TEXT, params={"domain": domain})).text
    assert text.startswith(f"# {kind} server for .{tld} (registry, ")
    # The answers' own content (an RDAP document's links) is the registry's; our naming is in
    # the "#" line of each hop and in source.
    marks = [line for line in (text + record["raw"]).splitlines() if line.startswith("# ")]
    assert marks
    for shown in (*marks, str(record["source"])):
        assert "127.0.0.1" not in shown
        assert env.registry.address not in shown
        assert env.rdap.base not in shown


async def test_raw_only_on_request(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "example.com", raw="1")
    assert record["raw"].startswith("# ")
    assert "Registrar WHOIS Server: whois.registrar.test" in record["raw"]


async def test_subdomain_is_cut_to_the_registrable_domain(
    client: httpx.AsyncClient, env: Env
) -> None:
    record = await get_json(client, "WWW.Example.COM.")
    assert record["domain"] == "example.com"
    assert env.registry.queries == ["domain example.com"]


async def test_not_found_is_200_registered_false(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "nope.com")
    assert record["registered"] is False
    assert record["registrar"]["name"] is None
    assert record["dates"] == {"created": None, "updated": None, "expires": None}
    assert record["status"] == []
    text = await client.get(TEXT, params={"domain": "nope.com"})
    assert (text.status_code, 'No match for "NOPE.COM".' in text.text) == (200, True)


@pytest.mark.parametrize("domain", ["ssrf.com", "ssrfip.com"])
async def test_referral_to_private_address_is_refused(
    client: httpx.AsyncClient, env: Env, domain: str
) -> None:
    record = await get_json(client, domain)
    assert record["registered"] is True
    assert record["source"]["hops"] == 1
    assert record["warnings"] == ["referral_refused"]
    assert record["registrar"]["name"] == "Example Registrar, Inc."  # registry data kept


async def test_referral_to_an_odd_port_is_refused(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "ssrfport.com")
    assert record["warnings"] == ["referral_refused"]


async def test_slow_registrar_keeps_the_registry_answer(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "slowreg.com")
    assert record["registered"] is True
    assert record["dates"]["expires"] == "2026-08-13T04:00:00Z"
    assert record["warnings"] == ["partial_referral"]


async def test_referrals_stop_after_two_hops(client: httpx.AsyncClient, env: Env) -> None:
    record = await get_json(client, "hops.com")
    assert record["source"]["hops"] == 3
    assert env.registrar.queries == ["hops.com"]
    assert env.reseller.queries == ["hops.com"]
    assert env.third.queries == []


# --- other registries end to end ------------------------------------------------------------


async def test_jp_iso_2022_jp_in_small_chunks(env: Env) -> None:
    # Hundreds of 7-byte chunks, each after a sleep: the decoding is under test, not the
    # deadline, so a loaded machine gets a generous one (the env's 1 s ended it at 16 min load).
    async with env.client(whois_timeout_s=20.0) as client:
        record = await get_json(client, "example.jp")
        text = (await client.get(TEXT, params={"domain": "example.jp"})).text
    assert env.registry.queries == ["example.jp/e"]
    assert record["registrant"]["name"] == "株式会社エグザンプル"
    assert record["registrant"]["street"] == ["東京都千代田区", "千代田1-1-1"]
    assert record["dates"]["updated"] == "2025-02-28T16:05:03Z"
    assert "[登録者名]                      株式会社エグザンプル" in text


@pytest.mark.parametrize(
    ("domain", "organization", "name"),
    [
        ("example.co.jp", "エグザンプル株式会社", None),  # EUC-JP, co.jp layout
        ("english.co.jp", "Example Corporation", None),
        ("sjis.jp", None, "株式会社エグザンプル"),  # Shift_JIS, general-use layout
        ("english.jp", None, "Example Japan K.K."),
    ],
)
async def test_jp_layouts_and_charsets(
    client: httpx.AsyncClient, domain: str, organization: str | None, name: str | None
) -> None:
    record = await get_json(client, domain)
    assert record["registered"] is True
    assert record["domain"] == domain
    assert record["registrant"]["organization"] == organization
    assert record["registrant"]["name"] == name
    assert record["dates"]["created"] is not None


async def test_jp_no_match(client: httpx.AsyncClient) -> None:
    assert (await get_json(client, "nope.jp"))["registered"] is False


async def test_int(client: httpx.AsyncClient, env: Env) -> None:
    record = await get_json(client, "treaty.int")
    assert env.registry.queries == ["treaty.int"]
    assert record["registered"] is True
    assert record["registrant"]["organization"] == "Example Treaty Organization"
    assert record["contacts"]["admin"]["email"] == "hostmaster@treaty.int"
    assert record["dates"] == {
        "created": "1997-08-26T00:00:00Z",
        "updated": "2024-02-07T00:00:00Z",
        "expires": None,
    }


async def test_de_idn_query_flags(client: httpx.AsyncClient, env: Env) -> None:
    record = await get_json(client, "bücher.de")
    assert env.registry.queries == ["-T dn,ace xn--bcher-kva.de"]
    assert (record["domain"], record["domain_unicode"]) == ("xn--bcher-kva.de", "bücher.de")
    assert record["status"] == ["connect"]
    assert (await get_json(client, "nope-nothing-here.de"))["registered"] is False


@pytest.mark.parametrize(
    ("domain", "field", "expected"),
    [
        ("example.co.uk", ("registrar", "name"), "Example Registrar Ltd"),
        ("example.fr", ("registrant", "organization"), "Exemple SA"),
        (
            "exemplo.com.br",
            ("registrant", "organization"),
            "Exemplo Comunicação e Participações Ltda",
        ),
        ("example.eu", ("registrar", "name"), "Example Registrar BV"),
        ("example.fi", ("dates", "created"), "2006-06-30T12:00:00Z"),
        ("example.kz", ("registrar", "name"), "HOSTER.KZ"),
        ("example.ru", ("dates", "expires"), "2026-03-05T21:00:00Z"),
        ("example.cz", ("registrant", "organization"), "Příklad s.r.o."),
    ],
)
async def test_cctld_formats(
    client: httpx.AsyncClient, domain: str, field: tuple[str, str], expected: str
) -> None:
    record = await get_json(client, domain)
    assert record["registered"] is True
    assert record[field[0]][field[1]] == expected


@pytest.mark.parametrize("domain", ["nope-nothing-here.co.uk", "nope-nothing-here.eu"])
async def test_cctld_not_found(client: httpx.AsyncClient, domain: str) -> None:
    assert (await get_json(client, domain))["registered"] is False


async def test_unknown_format_is_200_with_warning(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "example.weird")
    assert record["registered"] is None
    assert record["warnings"] == ["unparsed_format"]


# --- RDAP -----------------------------------------------------------------------------------


async def test_rdap_registry_and_registrar(client: httpx.AsyncClient, env: Env) -> None:
    record = await get_json(client, "example.org")
    assert [path for path, _ in env.rdap.requests] == [
        "/rdap/domain/example.org",
        "/registrar/domain/example.org",
    ]
    assert env.rdap.requests[0][1]["accept"].startswith("application/rdap+json")
    assert env.registry.queries == []
    assert record["source"] == {
        "protocol": "rdap",
        "server": "RDAP server for .org",
        "hops": 2,
        "fetched_at": record["source"]["fetched_at"],
        "cached": False,
        # the registrar's RDAP answer (the registry's `related` link) gave the contacts
        "contacts_from": {
            "registrant": "referral 1: RDAP server for .org",
            "admin": "referral 1: RDAP server for .org",
            "tech": "referral 1: RDAP server for .org",
        },
    }
    assert record["status"] == [
        "clientDeleteProhibited",
        "clientTransferProhibited",
        "serverUpdateProhibited",
    ]
    assert record["dates"]["updated"] == "2025-04-01T10:00:00Z"
    assert record["name_servers"] == ["ns1.example.org", "ns2.example.net"]
    assert record["dnssec"] == "unsigned"
    assert record["registrar"]["iana_id"] == "292"
    assert record["registrant"] == {
        "name": None,
        "organization": "Example Foundation",
        "email": None,
        "phone": None,
        "street": [],
        "city": "Geneva",
        "state": None,
        "postal_code": None,
        "country": "CH",
        "redacted": True,
    }
    assert record["contacts"]["tech"]["phone"] == "+41.220000000"


async def test_rdap_rendered_as_text(client: httpx.AsyncClient, env: Env) -> None:
    response = await client.get(TEXT, params={"domain": "example.org"})
    text = response.text
    # the bootstrap file is the operator's: its server is named by the TLD, not its address
    assert text.startswith("# RDAP server for .org (registry, RDAP)\n")
    assert "Domain Name: EXAMPLE.ORG\n" in text
    assert "Registration: 1995-04-30T04:00:00Z\n" in text
    assert "Registrar: Example Registrar, LLC\n" in text
    assert "# RDAP server for .org (referral 1, RDAP)\n" in text
    assert "Tech Phone: +41.220000000\n" in text
    assert "{" not in text


async def test_rdap_raw_is_the_json(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "example.org", raw="true")
    assert '"ldhName": "EXAMPLE.ORG"' in record["raw"]


async def test_rdap_404_is_not_registered(client: httpx.AsyncClient) -> None:
    record = await get_json(client, "nope.org")
    assert (record["registered"], record["source"]["protocol"]) == (False, "rdap")
    text = (await client.get(TEXT, params={"domain": "nope.org"})).text
    assert "404 Not Found" in text


async def test_rdap_redirect_is_followed(client: httpx.AsyncClient, env: Env) -> None:
    record = await get_json(client, "moved.org")
    assert record["domain"] == "moved.org"
    assert record["registered"] is True
    assert [p for p, _ in env.rdap.requests] == [
        "/rdap/domain/moved.org",
        "/rdap-v2/domain/moved.org",
    ]


async def test_rdap_related_link_to_an_untrusted_http_host_is_refused(
    client: httpx.AsyncClient,
) -> None:
    record = await get_json(client, "ssrf.org")
    assert record["warnings"] == ["referral_refused"]
    assert record["source"]["hops"] == 1


@pytest.mark.parametrize(
    ("domain", "registered"),
    [
        ("example.rdapdown", True),
        ("forbidden.org", False),  # a 403 that is no quota: a refusal, port 43 may still answer
        ("broken.org", False),
        ("big.org", False),
    ],
)
async def test_rdap_failure_falls_back_to_port_43(
    client: httpx.AsyncClient, env: Env, domain: str, registered: bool
) -> None:
    record = await get_json(client, domain)
    assert record["source"]["protocol"] == "whois"
    assert record["registered"] is registered
    assert record["warnings"] == ["rdap_failed_used_whois"]
    assert env.registry.queries == [domain]


@pytest.mark.parametrize(
    ("domain", "retry_after", "why"),
    [
        ("ratelimited.org", "7", "over its query quota (answered 429)"),
        ("quota403.org", "60", "over its query quota (answered 403)"),
        ("quota422.org", "60", "over its query quota (answered 422)"),
    ],
)
async def test_registry_quota_is_429_with_retry_after(
    client: httpx.AsyncClient, env: Env, domain: str, retry_after: str, why: str
) -> None:
    """Before: a 403/422 quota was a 500 after a pointless port-43 try; a 429 fell back too."""
    response = await client.get(JSON, params={"domain": domain})
    assert response.status_code == 429
    assert response.headers["retry-after"] == retry_after
    assert response.json()["error"] == (
        f"whois lookup rate limited upstream: RDAP server for .org: {why}"
    )
    assert env.registry.queries == []  # no port-43 query behind the registry's back
    again = await client.get(JSON, params={"domain": domain})
    assert again.status_code == 429  # never cached


async def test_rdap_and_port_43_both_failing_is_500(env: Env, tmp_path: Any) -> None:
    servers = tmp_path / "no-default.json"
    servers.write_text(f'{{"whois.iana.org": "127.0.0.1:{closed_port()}"}}')  # IANA down too
    async with env.client(whois_servers=servers) as client:
        response = await client.get(JSON, params={"domain": "example.rdapdown"})
    assert response.status_code == 500
    assert response.json()["error"] == (
        "whois lookup failed: RDAP server for .rdapdown: answered 503; whois fallback: "
        "whois.iana.org:43: connection refused"
    )


# --- IANA referral for TLDs nobody configured -----------------------------------------------


async def test_unknown_tld_goes_through_iana_refer(env: Env, tmp_path: Any) -> None:
    from tests.whois.conftest import sample
    from tests.whois.fakes import WhoisServer

    iana = await WhoisServer({"exampletld": sample("iana_tld.txt")}).start()
    registry = await WhoisServer(
        {"example.exampletld": "Domain Name: EXAMPLE.EXAMPLETLD\nRegistrar: R\n"},
        default='No match for "{query}".',
    ).start()
    servers = tmp_path / "iana.json"
    servers.write_text(
        f'{{"whois.iana.org": "{iana.address}", '
        f'"whois.nic.example-tld.test": "{registry.address}"}}'
    )
    try:
        async with env.client(whois_servers=servers) as client:
            first = await get_json(client, "example.exampletld")
            second = await get_json(client, "other.exampletld")
    finally:
        await iana.close()
        await registry.close()
    assert first["registered"] is True
    assert first["source"]["server"] == "whois.nic.example-tld.test"
    assert second["registered"] is False  # default reply of the fake: nothing for that name
    assert iana.queries == ["exampletld"]  # the IANA answer is cached per TLD


# --- caching --------------------------------------------------------------------------------


async def test_positive_answers_are_cached(client: httpx.AsyncClient, env: Env) -> None:
    first = await get_json(client, "example.com")
    second = await get_json(client, "example.com")
    text = await client.get(TEXT, params={"domain": "example.com"})
    assert (first["source"]["cached"], second["source"]["cached"]) == (False, True)
    assert second["source"]["fetched_at"] == first["source"]["fetched_at"]
    assert text.status_code == 200
    assert env.registry.queries == ["domain example.com"]


async def test_negative_answers_use_the_negative_ttl(env: Env) -> None:
    async with env.client(whois_negative_cache_ttl_s=0) as client:
        await get_json(client, "nope.com")
        await get_json(client, "nope.com")
        await get_json(client, "example.com")
        await get_json(client, "example.com")
    assert env.registry.queries == ["domain nope.com"] * 2 + ["domain example.com"]


async def test_errors_are_not_cached(client: httpx.AsyncClient, env: Env) -> None:
    first = await client.get(JSON, params={"domain": "flaky.com"})
    second = await client.get(JSON, params={"domain": "flaky.com"})
    assert (first.status_code, second.status_code) == (
        429,
        200,
    )  # a quota banner first (not cached), then the answer
    assert env.registry.queries == ["domain flaky.com"] * 2


async def test_concurrent_lookups_share_one_fetch(client: httpx.AsyncClient, env: Env) -> None:
    responses = await asyncio.gather(
        *(client.get(JSON, params={"domain": "shared.com"}) for _ in range(5))
    )
    assert [r.status_code for r in responses] == [200] * 5
    assert env.registry.queries == ["domain shared.com"]


async def test_an_upstream_server_gets_two_queries_at_a_time_and_is_then_forgotten(
    env: Env,
) -> None:
    # Politeness per server (HOST_CONCURRENCY), and no per-server state left behind: referral
    # names come from upstream answers, so a map of every server ever asked would only grow.
    names = [f"polite{n}.com" for n in range(6)]
    for name in names:
        env.registry.replies[f"domain {name}"] = Reply(thin(name, None).encode(), delay_s=0.1)
    app = env.client()
    async with app as client:
        answers = await asyncio.gather(*(client.get(JSON, params={"domain": n}) for n in names))
        resolver = app.state["whois"].resolver
        assert [a.status_code for a in answers] == [200] * 6
        assert env.registry.most_open == 2
        assert resolver._slots == {}


async def test_openapi_documents_both_endpoints(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert set(paths[TEXT]["get"]["responses"]) >= {"200", "400", "403", "429", "500"}
    schema = paths[JSON]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema["required"] == RECORD_SCHEMA["required"]


# --- configuration through the environment --------------------------------------------------


async def test_configured_through_environment_variables(
    env: Env, monkeypatch: pytest.MonkeyPatch, docroot: Any
) -> None:
    from assetgate.settings import Settings
    from tests.conftest import app_client

    monkeypatch.setenv("ASSETGATE_WHOIS_SERVERS", str(env.servers_file))
    monkeypatch.setenv("ASSETGATE_RDAP_BOOTSTRAP", str(env.bootstrap_file))
    monkeypatch.setenv("ASSETGATE_WHOIS_RESTRICTED_TLDS", "edu,mil,jp")
    settings = Settings(root=docroot)
    async with app_client(settings) as client:
        assert (await client.get(JSON, params={"domain": "example.jp"})).status_code == 403
        assert (await get_json(client, "example.org"))["source"]["protocol"] == "rdap"
        assert (await get_json(client, "example.com"))["source"]["hops"] == 2


async def test_a_bad_servers_file_stops_the_start(env: Env, tmp_path: Any) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"com": "no spaces allowed:43"}')
    with pytest.raises(ValueError, match="bad server address"):
        async with env.client(whois_servers=bad):
            pass
