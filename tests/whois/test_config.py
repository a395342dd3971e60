"""Server table, operator file, RDAP bootstrap, referral names and the SSRF guard."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from assetgate.whois.bootstrap import BootstrapFile, load_bootstrap, parse_bootstrap
from assetgate.whois.lookup import referral_target
from assetgate.whois.rdap import pin_url
from assetgate.whois.servers import (
    BUILTIN,
    Server,
    load_server_config,
    parse_address,
    parse_server_config,
)
from assetgate.whois.upstream import FetchError, RefusedServer, is_public, public_address

pytestmark = pytest.mark.anyio


def test_builtin_decorations_and_charsets() -> None:
    assert BUILTIN["com"].query_line("example.com") == "domain example.com"
    assert BUILTIN["jp"].query_line("example.jp") == "example.jp/e"
    assert BUILTIN["de"].query_line("xn--bcher-kva.de") == "-T dn,ace xn--bcher-kva.de"
    assert BUILTIN["uk"].query_line("example.co.uk") == "example.co.uk"
    assert "iso-2022-jp" in BUILTIN["jp"].charsets
    assert BUILTIN["br"].charsets == ("iso-8859-1",)
    assert not any(server.trusted for server in BUILTIN.values())


def test_operator_file() -> None:
    table = parse_server_config(
        {
            "JP": "127.0.0.1:4343",
            ".fr": {"server": "[::1]:4344", "query": "-V x {domain}", "charset": "iso-8859-1"},
            "*": "relay.internal",
            "whois.registrar.test": "10.0.0.5:43",
        }
    )
    jp = table.operator_server("jp")
    assert jp == Server("127.0.0.1", 4343, "{domain}/e", BUILTIN["jp"].charsets, trusted=True)
    fr = table.operator_server("fr")
    assert fr is not None
    assert (fr.host, fr.port, fr.query_line("a.fr")) == (
        "::1",
        4344,
        "-V x a.fr",
    )
    assert table.operator_server("com") is None
    # "*" stands in for the registry: it keeps that registry's decoration.
    default_com = table.port43_server("com")
    assert default_com is not None
    assert (default_com.host, default_com.trusted) == ("relay.internal", True)
    assert default_com.query_line("a.com") == "domain a.com"
    alias = table.named("whois.registrar.test")
    assert (alias.host, alias.port, alias.trusted, alias.name) == (
        "10.0.0.5",
        43,
        True,
        "whois.registrar.test",
    )
    stranger = table.named("whois.elsewhere.test")
    assert (stranger.trusted, stranger.port) == (False, 43)
    assert table.named("10.0.0.5").trusted  # an operator address is trusted under any name


def test_builtin_server_names_go_through_aliases() -> None:
    table = parse_server_config({"whois.jprs.jp": "127.0.0.1:4343"})
    jp = table.port43_server("jp")
    assert jp is not None
    assert (jp.host, jp.port, jp.trusted) == ("127.0.0.1", 4343, True)
    assert jp.query_line("a.jp") == "a.jp/e"


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"com": 43},
        {"com": "bad host:43"},
        {"com": "host:notaport"},
        {"com": "host:70000"},
        {"com": {"server": "h", "query": "no slot"}},
        {"com": {"server": "h", "query": "{domain}\r\n{domain}"}},
        {"": "h"},
    ],
)
def test_bad_operator_file(data: object) -> None:
    with pytest.raises(ValueError, match=r"whois servers file|bad"):
        parse_server_config(data)


def test_load_server_config(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"com": "127.0.0.1:1"}))
    assert load_server_config(path).operator_server("com") is not None
    assert load_server_config(None).operator_server("com") is None
    path.write_text("{")
    with pytest.raises(ValueError, match=str(path)):
        load_server_config(path)


@pytest.mark.parametrize(
    ("text", "address"),
    [("h.test", ("h.test", 43)), ("H.Test:4343", ("h.test", 4343)), ("[::1]:7", ("::1", 7))],
)
def test_parse_address(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


def test_shipped_bootstrap_snapshot() -> None:
    snapshot = load_bootstrap(None)
    assert not snapshot.trusted
    assert snapshot.bases("example.com") == ("https://rdap.verisign.com/com/v1/",)
    assert snapshot.bases("www.example.co.uk")
    assert snapshot.bases("example.jp") == ()  # .jp is not in the bootstrap: port 43
    assert snapshot.bases("treaty.int") == ()
    assert all(u.startswith("https://") for urls in snapshot.services.values() for u in urls)
    # Every gTLD with RDAP in IANA's bootstrap of 2025, not a hand-picked few.
    assert len(snapshot.services) > 1100
    for name in ("x.shop", "x.top", "x.club", "x.blog", "x.xyz", "x.info", "x.app", "x.nl"):
        assert snapshot.bases(name), name


def test_operator_bootstrap(tmp_path: Path) -> None:
    path = tmp_path / "dns.json"
    path.write_text(
        json.dumps(
            {"services": [[["Org", "co.example"], ["http://127.0.0.1:8/r", "https://r.test/"]]]}
        )
    )
    boot = load_bootstrap(path)
    assert boot.trusted
    assert boot.bases("a.org") == ("https://r.test/", "http://127.0.0.1:8/r/")  # HTTPS first
    assert boot.bases("a.co.example") == boot.bases("a.org")  # longest label match
    assert ("http", "127.0.0.1", 8) in boot.trusted_origins()
    with pytest.raises(ValueError, match="services"):
        parse_bootstrap({"x": 1}, trusted=True)


@pytest.mark.parametrize(
    ("value", "target"),
    [
        ("whois.registrar.test", ("whois.registrar.test", 43)),
        ("WHOIS.Registrar.Test", ("whois.registrar.test", 43)),
        ("whois://whois.registrar.test:43/", ("whois.registrar.test", 43)),
        ("whois.registrar.test:4343", ("whois.registrar.test", 4343)),
        ("http://www.registrar.test", None),
        ("rwhois://rwhois.registrar.test:4321", None),
        ("localhost", None),
        ("whois registrar", None),
        ("-h evil.test", None),
        ("", None),
    ],
)
def test_referral_target(value: str, target: tuple[str, int] | None) -> None:
    assert referral_target(value) == target


@pytest.mark.parametrize(
    ("address", "public"),
    [("8.8.8.8", True), ("2001:4860:4860::8888", True), ("127.0.0.1", False), ("10.1.2.3", False),
     ("192.168.1.1", False), ("169.254.169.254", False), ("::1", False), ("fe80::1%eth0", False),
     ("100.64.0.1", False), ("224.0.0.1", False), ("::ffff:127.0.0.1", False), ("0.0.0.0", False)],
)  # fmt: skip
def test_is_public(address: str, public: bool) -> None:
    assert is_public(address) is public


async def test_guard_refuses_loopback_names_ip_literals_and_odd_ports() -> None:
    with pytest.raises(RefusedServer, match="non-public"):
        await public_address("localhost", 43)
    with pytest.raises(RefusedServer, match="IP address"):
        await public_address("10.0.0.1", 43)
    with pytest.raises(RefusedServer, match="port"):
        await public_address("whois.example.test", 8080)
    assert issubclass(RefusedServer, FetchError)  # a refusal is a fetch failure of that hop


def test_pin_url_keeps_path_and_port() -> None:
    assert (
        pin_url("https://rdap.test/v1/domain/a.com", "192.0.2.1")
        == "https://192.0.2.1/v1/domain/a.com"
    )
    assert (
        pin_url("https://rdap.test:8443/x?y=1", "2001:db8::1") == "https://[2001:db8::1]:8443/x?y=1"
    )


def _write_bootstrap(path: Path, base: str, bump_s: int) -> None:
    path.write_text(json.dumps({"services": [[["com"], [base]]]}))
    os.utime(path, (1_700_000_000 + bump_s, 1_700_000_000 + bump_s))


def test_operator_bootstrap_is_reloaded_when_the_file_changes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    now = [0.0]
    path = tmp_path / "dns.json"
    _write_bootstrap(path, "https://a.test/", 0)
    live = BootstrapFile(path, clock=lambda: now[0])
    assert live.current().bases("x.com") == ("https://a.test/",)
    _write_bootstrap(path, "https://b.test/", 1)
    assert live.current().bases("x.com") == ("https://a.test/",)  # looked at every 30 s only
    now[0] = 31.0
    assert live.current().bases("x.com") == ("https://b.test/",)
    assert ("https", "b.test", 443) in live.trusted_origins()
    assert ("https", "a.test", 443) not in live.trusted_origins()
    path.write_text(json.dumps({"services": [[5, ["https://c.test/"]], ["com", 5]]}))
    now[0] = 62.0
    with caplog.at_level(logging.WARNING, logger="assetgate.whois"):
        assert live.current().bases("x.com") == ("https://b.test/",)  # wrong shape: kept
    path.write_text("{not json")
    now[0] = 62.0 + 31.0
    with caplog.at_level(logging.WARNING, logger="assetgate.whois"):
        assert live.current().bases("x.com") == ("https://b.test/",)  # the last good one
    assert "keeping the last good RDAP bootstrap" in caplog.text
    path.unlink()
    now[0] = 124.0
    assert live.current().bases("x.com") == ("https://b.test/",)


def test_a_bad_operator_bootstrap_stops_the_start(tmp_path: Path) -> None:
    path = tmp_path / "dns.json"
    path.write_text("[]")
    with pytest.raises(ValueError, match="RDAP bootstrap"):
        BootstrapFile(path)


def test_the_shipped_snapshot_is_never_reread() -> None:
    now = [0.0]
    live = BootstrapFile(None, clock=lambda: now[0])
    first = live.current()
    now[0] = 1000.0
    assert live.current() is first
    assert live.trusted_origins() == frozenset()


def test_rdap_override_list_covers_rdap_only_tlds(tmp_path: Path) -> None:
    """Issue 40: .io/.sh/.ac/.me went RDAP-only on 2025-08-04 while IANA's file lacked .io.
    Before: no RDAP server for them (port 43, which no longer answers)."""
    from assetgate.whois.bootstrap import load_bootstrap

    shipped = load_bootstrap(None)
    for tld in ("io", "sh", "ac", "me"):
        assert shipped.bases(f"example.{tld}") == ("https://rdap.identitydigital.services/rdap/",)
    operator = tmp_path / "dns.json"
    operator.write_text(
        '{"services": [[["sh"], ["https://rdap.operator.example/"]], [["com"], ["https://c.example/"]]]}'
    )
    mine = load_bootstrap(operator)
    assert mine.bases("example.sh") == ("https://rdap.operator.example/",)  # the operator wins
    assert mine.bases("example.io") == (
        "https://rdap.identitydigital.services/rdap/",
    )  # gap filled
    # the operator's servers are trusted, the list's are not (they stay behind the SSRF guard)
    assert ("https", "rdap.operator.example", 443) in mine.trusted_origins()
    assert ("https", "rdap.identitydigital.services", 443) not in mine.trusted_origins()
