"""Which port-43 server answers for a TLD, how to ask it, and the operator's overrides.

The built-in table is small on purpose: gTLDs are reached over RDAP (their port-43 obligation
ended on 2025-01-28), unknown TLDs through IANA's ``refer:``. What remains are the registries
whose port-43 service still matters (ccTLDs, thin registries) and those needing a decorated
query or a non-UTF-8 charset (GNU whois ``tld_serv_list`` / ``servers_charset_list``).

``ASSETGATE_WHOIS_SERVERS`` names a JSON object:
- ``"<tld>": "host[:port]"`` or ``{"server": "host[:port]", "query": "{domain}/e",
  "charset": "euc-jp"}``: that TLD goes to that server, over the built-in table and RDAP;
- ``"*": …``: the port-43 server for every other TLD (instead of the built-in table and IANA),
  also used when RDAP fails;
- ``"<host.name>": "host[:port]"`` (a key with a dot): where to reach a server of that name, for
  referrals and built-in entries (e.g. a registrar's server behind a relay).
Servers named in this file are trusted: they may be private or loopback addresses.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from assetgate.settings import json_value
from assetgate.whois.charset import JAPANESE, LATIN1

DOMAIN_SLOT: Final = "{domain}"
IANA_HOST: Final = "whois.iana.org"
THIN: Final = "domain {domain}"  # Verisign-style thin registries: domain records only


@dataclass(frozen=True, slots=True)
class Server:
    host: str
    port: int = 43
    query: str = DOMAIN_SLOT
    charsets: tuple[str, ...] = ()
    trusted: bool = False
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or (self.host if self.port == 43 else f"{self.host}:{self.port}")

    def query_line(self, domain: str) -> str:
        return self.query.replace(DOMAIN_SLOT, domain)


def _builtin(host: str, query: str = DOMAIN_SLOT, charsets: tuple[str, ...] = ()) -> Server:
    return Server(host=host, query=query, charsets=charsets)


BUILTIN: Final[Mapping[str, Server]] = {
    "com": _builtin("whois.verisign-grs.com", THIN),
    "net": _builtin("whois.verisign-grs.com", THIN),
    "cc": _builtin("ccwhois.verisign-grs.com", THIN),
    "tv": _builtin("tvwhois.verisign-grs.com", THIN),
    "name": _builtin("whois.nic.name", THIN),
    "org": _builtin("whois.publicinterestregistry.org"),
    "biz": _builtin("whois.nic.biz"),
    "us": _builtin("whois.nic.us"),
    "co": _builtin("whois.nic.co"),
    "me": _builtin("whois.nic.me"),
    "ai": _builtin("whois.nic.ai"),
    "in": _builtin("whois.registry.in"),
    "xyz": _builtin("whois.nic.xyz"),
    "int": _builtin(IANA_HOST),
    "arpa": _builtin(IANA_HOST),
    "jp": _builtin("whois.jprs.jp", "{domain}/e", JAPANESE),
    "de": _builtin("whois.denic.de", "-T dn,ace {domain}"),
    "uk": _builtin("whois.nic.uk"),
    "fr": _builtin("whois.nic.fr"),
    "eu": _builtin("whois.eu"),
    "br": _builtin("whois.registro.br", charsets=LATIN1),
    "nl": _builtin("whois.domain-registry.nl"),
    "be": _builtin("whois.dns.be"),
    "it": _builtin("whois.nic.it"),
    "at": _builtin("whois.nic.at"),
    "ch": _builtin("whois.nic.ch"),
    "li": _builtin("whois.nic.li"),
    "se": _builtin("whois.iis.se"),
    "nu": _builtin("whois.iis.nu"),
    "no": _builtin("whois.norid.no", charsets=LATIN1),
    "dk": _builtin("whois.punktum.dk"),
    "fi": _builtin("whois.fi"),
    "ax": _builtin("whois.ax"),
    "is": _builtin("whois.isnic.is", charsets=LATIN1),
    "pl": _builtin("whois.dns.pl"),
    "cz": _builtin("whois.nic.cz"),
    "sk": _builtin("whois.sk-nic.sk"),
    "hu": _builtin("whois.nic.hu", charsets=LATIN1),
    "lu": _builtin("whois.dns.lu", charsets=LATIN1),
    "ee": _builtin("whois.tld.ee"),
    "lt": _builtin("whois.domreg.lt"),
    "lv": _builtin("whois.nic.lv"),
    "si": _builtin("whois.register.si"),
    "ro": _builtin("whois.rotld.ro"),
    "pt": _builtin("whois.dns.pt"),
    "ie": _builtin("whois.weare.ie"),
    "ru": _builtin("whois.tcinet.ru"),
    "su": _builtin("whois.tcinet.ru"),
    "ua": _builtin("whois.ua"),
    "kz": _builtin("whois.nic.kz"),
    "kg": _builtin("whois.kg", charsets=("cp1251",)),
    "cn": _builtin("whois.cnnic.cn"),
    "tw": _builtin("whois.twnic.net.tw"),
    "hk": _builtin("whois.hkirc.hk"),
    "kr": _builtin("whois.kr"),
    "sg": _builtin("whois.sgnic.sg"),
    "au": _builtin("whois.auda.org.au"),
    "ca": _builtin("whois.cira.ca"),
    "mx": _builtin("whois.mx"),
    "il": _builtin("whois.isoc.org.il"),
    "ir": _builtin("whois.nic.ir"),
    "gg": _builtin("whois.gg"),
    "je": _builtin("whois.je"),
    "gov": _builtin("whois.dotgov.gov"),
}


@dataclass(frozen=True, slots=True)
class ServerTable:
    """The built-in table merged with the operator's file."""

    tlds: Mapping[str, Server] = field(default_factory=dict)
    default: Server | None = None
    aliases: Mapping[str, Server] = field(default_factory=dict)

    def operator_server(self, tld: str) -> Server | None:
        """The operator's server for exactly this TLD (beats RDAP)."""
        return self.tlds.get(tld)

    def port43_server(self, tld: str) -> Server | None:
        """Where port 43 goes when the operator named no server for this TLD."""
        if self.default is not None:
            return _decorated(self.default, BUILTIN.get(tld))
        builtin = BUILTIN.get(tld)
        return None if builtin is None else self.named(builtin.host, builtin)

    def named(self, host: str, template: Server | None = None, port: int = 43) -> Server:
        """The server to use for a host name found in a table or an answer.

        An alias or an operator address makes it trusted; anything else is untrusted and will
        go through the SSRF guard.
        """
        key = host.lower() if port == 43 else f"{host.lower()}:{port}"
        alias = self.aliases.get(key) or self.aliases.get(host.lower())
        if alias is not None:
            return _decorated(replace(alias, label=key), template)
        for server in (*self.tlds.values(), *self.aliases.values(), self.default):
            if server is not None and (server.host, server.port) == (host.lower(), port):
                return _decorated(server, template)
        base = template or Server(host=host.lower(), port=port)
        return replace(base, host=host.lower(), port=port, trusted=False, label="")


def _decorated(server: Server, builtin: Server | None) -> Server:
    """An operator server standing in for a registry keeps that registry's query and charset."""
    if builtin is None:
        return server
    query = server.query if server.query != DOMAIN_SLOT else builtin.query
    return replace(server, query=query, charsets=server.charsets or builtin.charsets)


def parse_server_config(data: object) -> ServerTable:
    """The JSON object of ``ASSETGATE_WHOIS_SERVERS`` -> ``ServerTable``; ValueError if bad."""
    if not isinstance(data, dict):
        raise ValueError("whois servers file: expected a JSON object")
    tlds: dict[str, Server] = {}
    aliases: dict[str, Server] = {}
    default: Server | None = None
    for raw_key, value in data.items():
        key = str(raw_key).strip().lower().strip(".") if raw_key != "*" else "*"
        server = _parse_entry(key, value)
        if key == "*":
            default = server
        elif "." in key or ":" in key:
            aliases[key] = server
        elif key:
            tlds[key] = _decorated(server, BUILTIN.get(key))
        else:
            raise ValueError("whois servers file: empty key")
    return ServerTable(tlds=tlds, default=default, aliases=aliases)


def load_server_config(value: str | os.PathLike[str] | None) -> ServerTable:
    """ASSETGATE_WHOIS_SERVERS: the JSON itself or its file (``settings.json_value``)."""
    if value is None:
        return ServerTable()
    return parse_server_config(json_value(value))


def parse_address(text: str) -> tuple[str, int]:
    """``host``, ``host:port``, ``[v6]:port`` -> (host, port); ValueError when malformed."""
    text = text.strip()
    host, port_text = text, ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    if not host or any(c.isspace() or c in "/@?#" for c in host):
        raise ValueError(f"bad server address {text!r}")
    port = int(port_text) if port_text.isdigit() else 43
    if (port_text and not port_text.isdigit()) or not 0 < port < 65536:
        raise ValueError(f"bad port in {text!r}")
    return host.lower(), port


def _parse_entry(key: str, value: object) -> Server:
    if isinstance(value, str):
        host, port = parse_address(value)
        return Server(host=host, port=port, trusted=True)
    if isinstance(value, dict) and isinstance(value.get("server"), str):
        host, port = parse_address(value["server"])
        query = value.get("query", DOMAIN_SLOT)
        charset = value.get("charset")
        if not isinstance(query, str) or query.count(DOMAIN_SLOT) != 1 or "\n" in query:
            raise ValueError(f"whois servers file: {key}: query must hold {DOMAIN_SLOT} once")
        if "\r" in query or (charset is not None and not isinstance(charset, str)):
            raise ValueError(f"whois servers file: {key}: bad query or charset")
        charsets = (charset,) if isinstance(charset, str) else ()
        return Server(host=host, port=port, query=query, charsets=charsets, trusted=True)
    raise ValueError(f'whois servers file: {key}: expected "host[:port]" or {{"server": …}}')
