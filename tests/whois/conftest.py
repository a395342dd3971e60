"""Loopback whois (port 43) and RDAP servers with registry-format answers, and the app on them.

The app is configured the way an operator would: ``ASSETGATE_WHOIS_SERVERS`` (a JSON file mapping
TLDs, ``*`` and registrar server names to the loopback servers) and ``ASSETGATE_RDAP_BOOTSTRAP``
(a bootstrap file naming the loopback RDAP server for .org and .rdapdown).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.serve_process import pick_port
from tests.whois.fakes import HttpReply, RdapServer, Reply, ReplySpec, WhoisServer
from tests.whois.rdap_samples import registrar_domain, registry_domain

SAMPLES = Path(__file__).parent / "samples"
QUOTA_BANNER = "Query rate limit exceeded. Please try again later.\r\n"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def thin(domain: str, referral: str | None = "whois.registrar.test") -> str:
    """The Verisign-style thin registry answer for ``domain``, referring to ``referral``."""
    text = sample("verisign_com.txt").replace("EXAMPLE.COM", domain.upper())
    if referral is None:
        return "".join(line for line in text.splitlines(True) if "WHOIS Server" not in line)
    return text.replace("whois.registrar.test", referral)


def registrar_text(domain: str, referral: str = "whois.registrar.test") -> str:
    text = sample("registrar_com.txt").replace("example.com", domain)
    return text.replace(
        "Registrar WHOIS Server: whois.registrar.test", f"Registrar WHOIS Server: {referral}"
    )


def registry_replies() -> dict[str, ReplySpec]:
    jprs_ja = sample("jprs_general_ja.txt")
    return {
        "domain example.com": thin("example.com"),
        "domain example.net": thin("example.net", None),
        "domain nope.com": 'No match for "NOPE.COM".\r\n>>> Last update: 2025-06-01 <<<\r\n',
        "domain ssrf.com": thin("ssrf.com", "localhost"),
        "domain ssrfip.com": thin("ssrfip.com", "10.0.0.1"),
        "domain ssrfport.com": thin("ssrfport.com", "whois.elsewhere.test:8043"),
        "domain slowreg.com": thin("slowreg.com"),
        "domain hops.com": thin("hops.com"),
        "domain quota.com": QUOTA_BANNER,
        "domain flaky.com": [QUOTA_BANNER, thin("flaky.com", None)],
        "domain shared.com": Reply(thin("shared.com", None).encode(), delay_s=0.3),
        "example.jp/e": Reply(jprs_ja.encode("iso-2022-jp"), chunk_bytes=7, chunk_delay_s=0.0005),
        "sjis.jp/e": jprs_ja.replace("EXAMPLE.JP", "SJIS.JP").encode("shift_jis"),
        "english.jp/e": sample("jprs_general_en.txt").replace("EXAMPLE.JP", "ENGLISH.JP"),
        "example.co.jp/e": sample("jprs_cojp_ja.txt").encode("euc-jp"),
        "english.co.jp/e": sample("jprs_cojp.txt").replace("EXAMPLE.CO.JP", "ENGLISH.CO.JP"),
        "nope.jp/e": "[ JPRS database provides information. ]\n\nNo match!!\n",
        "treaty.int": sample("iana_int.txt"),
        "-T dn,ace example.de": sample("denic_de.txt"),
        "-T dn,ace xn--bcher-kva.de": sample("denic_de.txt").replace(
            "example.de", "xn--bcher-kva.de"
        ),
        "-T dn,ace nope-nothing-here.de": sample("denic_free.txt"),
        "example.co.uk": sample("nominet_uk.txt"),
        "nope-nothing-here.co.uk": sample("nominet_nomatch.txt"),
        "example.fr": sample("afnic_fr.txt"),
        "exemplo.com.br": sample("registrobr.txt").encode("iso-8859-1"),
        "example.eu": sample("eurid_eu.txt"),
        "nope-nothing-here.eu": sample("eurid_available.txt"),
        "example.fi": sample("fi_dotted.txt"),
        "example.kz": sample("kz_dotted.txt"),
        "example.ru": sample("ru_rpsl.txt"),
        "example.cz": sample("fred_cz.txt"),
        "example.slow": Reply(b"Domain Name: EXAMPLE.SLOW\r\n", delay_s=5.0),
        "example.big": Reply(b"Domain Name: EXAMPLE.BIG\r\n" + b"% padding\r\n" * 40_000),
        "example.weird": "hello\nthis answer is in no whois format we know\n",
        "example.empty": b"",
        "example.rdapdown": thin("example.rdapdown", None),
        "example.nl": sample("sidn_nl.txt").replace("\n", "\r\n"),
        "partial.nl": sample("sidn_nl.txt")
        .replace("example.nl", "partial.nl")
        .replace("Registrar:", "Reseller:"),
        "example.is": sample("isnic_is.txt").replace("dæmi.is", "example.is").encode("iso-8859-1"),
    }


def registrar_replies() -> dict[str, ReplySpec]:
    return {
        "example.com": registrar_text("example.com"),
        "slowreg.com": Reply(registrar_text("slowreg.com").encode(), delay_s=5.0),
        "hops.com": registrar_text("hops.com", referral="whois.reseller.test"),
    }


@dataclass
class Env:
    registry: WhoisServer
    registrar: WhoisServer
    reseller: WhoisServer
    third: WhoisServer
    rdap: RdapServer
    servers_file: Path
    bootstrap_file: Path
    make: Callable[..., Settings]

    def settings(self, **overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "whois_servers": self.servers_file,
            "rdap_bootstrap": self.bootstrap_file,
            "whois_timeout_s": 1.0,
            "rate_limit": "1000/10 seconds",
        }
        values.update(overrides)
        return self.make(**values)

    def client(self, **overrides: Any) -> app_client:
        return app_client(self.settings(**overrides))


def closed_port() -> int:
    """A port nobody listens on: from this worker's share, so no other test's server takes it."""
    return pick_port()


@pytest.fixture
async def env(tmp_path: Path, make_settings: Callable[..., Settings]) -> AsyncIterator[Env]:
    registry = await WhoisServer(registry_replies(), default='No match for "{query}".\r\n').start()
    registrar = await WhoisServer(registrar_replies()).start()
    reseller = await WhoisServer(
        {"hops.com": registrar_text("hops.com", referral="whois.third.test")}
    ).start()
    third = await WhoisServer({"hops.com": registrar_text("hops.com")}).start()
    rdap = await RdapServer().start()
    _rdap_routes(rdap)
    tlds = [
        "com",
        "net",
        "jp",
        "int",
        "de",
        "uk",
        "fr",
        "br",
        "eu",
        "fi",
        "kz",
        "ru",
        "cz",
        "slow",
        "big",
        "weird",
        "empty",
        "nl",
        "is",
    ]
    servers: dict[str, str] = {tld: registry.address for tld in tlds}
    servers |= {
        "*": registry.address,
        "closed": f"127.0.0.1:{closed_port()}",
        "whois.registrar.test": registrar.address,
        "whois.reseller.test": reseller.address,
        "whois.third.test": third.address,
    }
    servers_file = tmp_path / "whois-servers.json"
    servers_file.write_text(json.dumps(servers))
    bootstrap_file = tmp_path / "dns.json"
    bootstrap_file.write_text(
        json.dumps({"version": "1.0", "services": [[["org", "rdapdown"], [f"{rdap.base}/rdap/"]]]})
    )
    yield Env(
        registry, registrar, reseller, third, rdap, servers_file, bootstrap_file, make_settings
    )
    for server in (registry, registrar, reseller, third, rdap):
        await server.close()


def _rdap_routes(rdap: RdapServer) -> None:
    base = rdap.base
    rdap.routes.update(
        {
            "/rdap/domain/example.org": HttpReply(
                200, registry_domain("example.org", f"{base}/registrar/domain/example.org")
            ),
            "/registrar/domain/example.org": HttpReply(200, registrar_domain("example.org")),
            "/rdap/domain/example.rdapdown": HttpReply(503, {"errorCode": 503}),
            "/rdap/domain/moved.org": HttpReply(
                302, b"", {"Location": "/rdap-v2/domain/moved.org"}
            ),
            "/rdap-v2/domain/moved.org": HttpReply(200, registry_domain("moved.org", None)),
            "/rdap/domain/ssrf.org": HttpReply(
                200, registry_domain("ssrf.org", "http://localhost:9/domain/ssrf.org")
            ),
            "/rdap/domain/ratelimited.org": HttpReply(
                429, {"errorCode": 429}, {"Retry-After": "7"}
            ),
            # quotas as registries really signal them (issue 40): rdap.nic.biz, rdap.zdnsgtld.com
            "/rdap/domain/quota403.org": HttpReply(
                403,
                {
                    "errorCode": 403,
                    "title": "Forbidden",
                    "description": ["Number of allowed queries exceeded"],
                },
            ),
            "/rdap/domain/quota422.org": HttpReply(422, {"errorCode": 422}),
            "/rdap/domain/forbidden.org": HttpReply(403, {"errorCode": 403, "title": "Forbidden"}),
            "/rdap/domain/broken.org": HttpReply(200, b"{not json"),
            "/rdap/domain/big.org": HttpReply(200, b"[" + b"0," * 600_000 + b"0]"),
        }
    )


@pytest.fixture
async def client(env: Env) -> AsyncIterator[httpx.AsyncClient]:
    async with env.client() as c:
        yield c
