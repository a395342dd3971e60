"""One lookup, end to end: route the TLD, ask RDAP or port 43, follow referrals, parse.

Routing (docs/whois.md): the operator's server for the TLD (``ASSETGATE_WHOIS_SERVERS``)
wins; otherwise RDAP when the bootstrap covers the TLD; otherwise, or when RDAP fails, port 43
at the operator's ``*`` server, the built-in table, or the server IANA's ``refer:`` names. A
registry answer that points to a registrar's server is followed at most ``MAX_REFERRALS``
times, never back to a server already asked, and never to a non-public address unless the
operator named it. A failed referral keeps the registry's answer with a warning; only a failed
registry answer is a fetch failure. The whole chain shares one deadline. A failure names the
server that failed by its public name (``whois.example-registry.net:43: connection refused``);
a server the operator configured by address is named by the TLD it serves, never its address.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final

import httpx

from assetgate.cache.memory import MemoryTier
from assetgate.whois.bootstrap import BootstrapFile, origin
from assetgate.whois.charset import decode
from assetgate.whois.domain import Domain
from assetgate.whois.parse import parse_whois
from assetgate.whois.parse.rdap import parse_rdap, related_links
from assetgate.whois.port43 import query_port43
from assetgate.whois.rdap import domain_url, fetch_rdap
from assetgate.whois.record import (
    PARTIAL_REFERRAL,
    RATE_LIMITED_UPSTREAM,
    RDAP_FALLBACK,
    REFERRAL_REFUSED,
    UNSUPPORTED,
    Parsed,
    Protocol,
    contact_sources,
    merge,
)
from assetgate.whois.servers import IANA_HOST, Server, ServerTable, parse_address
from assetgate.whois.upstream import FetchError, RefusedServer, public_address

MAX_REFERRALS: Final = 2
HOST_CONCURRENCY: Final = 2  # politeness: queries in flight per upstream server
IANA_REFER_TTL_S: Final = 3 * 86400.0
IANA_REFER_MAX_ENTRIES: Final = 4096
_LABEL: Final = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})+")


@dataclass(frozen=True, slots=True)
class Hop:
    """One answer as received: ``text`` is the decoded whois text or the RDAP JSON text."""

    protocol: Protocol
    server: str
    role: str
    query: str
    text: str
    document: Any = None
    status: int = 200


@dataclass(frozen=True, slots=True)
class WhoisAnswer:
    domain: Domain
    hops: tuple[Hop, ...]
    parsed: Parsed
    fetched_at: datetime
    warnings: tuple[str, ...] = ()
    # role -> the server whose answer gave that contact (registry or registrar hop)
    contacts_from: tuple[tuple[str, str], ...] = ()


def whois_label(server: Server, tld: str | None) -> str:
    """What a client may read about ``server``: a public name, not the operator's address."""
    if server.label:  # an operator alias: the key is the public name it stands for
        return server.label if ":" in server.label else f"{server.label}:43"
    if not server.trusted:  # from the built-in table, IANA or an answer: public already
        return f"{server.host}:{server.port}"
    return f"whois server for .{tld}" if tld else "operator whois server"


def whois_shown(server: Server, tld: str | None) -> str:
    """How an answer names the server it came from (``source.server``, the text's ``#`` lines).

    Like ``whois_label``: a server the operator configured by address is named by the TLD it
    serves, so a successful answer never shows an internal address either (docs/whois.md).
    """
    if server.label or not server.trusted:
        return server.name
    return f"whois server for .{tld}" if tld else "operator whois server"


def rdap_shown(url: str, trusted: frozenset[tuple[str, str, int]], tld: str) -> str:
    """An RDAP URL as an answer shows it: the operator's servers by their TLD, not address."""
    return f"RDAP server for .{tld}" if origin(url) in trusted else url


def rdap_label(base: str, trusted: frozenset[tuple[str, str, int]], tld: str) -> str:
    scheme, host, port = origin(base)
    if (scheme, host, port) in trusted:  # from the operator's bootstrap file
        return f"RDAP server for .{tld}"
    return host if port == 443 else f"{host}:{port}"


def named_failure(label: str, exc: FetchError) -> FetchError:
    """``exc`` with the failing server's ``label`` in front; same type, same rate-limit flag."""
    return type(exc)(
        f"{label}: {exc.reason}", rate_limited=exc.rate_limited, retry_after_s=exc.retry_after_s
    )


def referral_target(value: str) -> tuple[str, int] | None:
    """``whois://whois.example.com:43/`` or ``whois.example.com`` -> (host, port); else None."""
    text = value.strip()
    lowered = text.lower()
    if "://" in lowered and not lowered.startswith("whois://"):
        return None  # a web page, rwhois or anything that is not port 43
    text = text[len("whois://") :] if lowered.startswith("whois://") else text
    try:
        host, port = parse_address(text.split("/", 1)[0])
    except ValueError:
        return None
    return (host, port) if _HOST.fullmatch(host) and len(host) <= 253 else None


@dataclass(slots=True)
class _Slot:
    """One upstream server's politeness limit and how many queries hold or wait for it."""

    semaphore: asyncio.Semaphore
    users: int = 0


class Resolver:
    """Everything a lookup needs, built once in the part's lifespan."""

    def __init__(
        self,
        *,
        servers: ServerTable,
        bootstrap: BootstrapFile,
        http: httpx.AsyncClient,
        timeout_s: float,
        on_server_error: Callable[[], None] = lambda: None,
    ) -> None:
        self._on_server_error = on_server_error  # counts failed port-43 queries (metrics)
        self._servers = servers
        self._bootstrap = bootstrap
        self._http = http
        self._timeout_s = timeout_s
        # per upstream server while a query to it is in flight or waiting, then dropped: referral
        # names come from upstream answers, so the map must not grow with every one ever seen
        self._slots: dict[str, _Slot] = {}
        # made-up TLDs must not pile up: one unit of budget per TLD
        self._refer: MemoryTier[tuple[Server | None]] = MemoryTier(IANA_REFER_MAX_ENTRIES)

    async def lookup(self, domain: Domain) -> WhoisAnswer:
        """The answer for ``domain``; ``FetchError`` when no source produced one."""
        try:
            async with asyncio.timeout(self._timeout_s + 1.0):  # waits for a slot count too
                return await self._lookup(domain)
        except TimeoutError:
            raise FetchError("whois lookup timed out") from None

    async def _lookup(self, domain: Domain) -> WhoisAnswer:
        deadline = self._now() + self._timeout_s
        operator = self._servers.operator_server(domain.tld)
        bases = () if operator is not None else self._bootstrap.current().bases(domain.ascii)
        if not bases:
            server = operator or await self._port43_server(domain.tld, deadline)
            return await self._port43(domain, server, deadline)
        try:
            return await self._rdap(domain, bases, deadline)
        except FetchError as rdap_error:
            if rdap_error.rate_limited:
                raise  # a registry's quota: asking its port 43 (gone for most gTLDs) won't help
            try:
                server = await self._port43_server(domain.tld, deadline)
                answer = await self._port43(domain, server, deadline)
            except FetchError as exc:
                raise FetchError(
                    f"{rdap_error.reason}; whois fallback: {exc.reason}",
                    rate_limited=rdap_error.rate_limited or exc.rate_limited,
                ) from None
            return replace(answer, warnings=(*answer.warnings, RDAP_FALLBACK))

    # --- port 43 ---------------------------------------------------------------------------

    async def _port43(self, domain: Domain, server: Server, deadline: float) -> WhoisAnswer:
        line = server.query_line(domain.ascii)
        first, parsed = await self._whois_hop(server, line, deadline, domain.tld, "registry")
        if parsed.registered is None:
            label = whois_label(server, domain.tld)
            if RATE_LIMITED_UPSTREAM in parsed.warnings:
                raise FetchError(f"{label}: rate limited the query", rate_limited=True)
            if UNSUPPORTED in parsed.warnings or not first.text.strip():
                raise FetchError(f"{label}: gave no answer for this domain")
        hops, warnings = [first], []
        folded: list[tuple[str, str, Parsed]] = [(first.role, first.server, parsed)]
        visited: set[object] = {server.name, (server.host, server.port)}
        current = merged = parsed
        for count in range(1, MAX_REFERRALS + 1):
            if merged.registered is not True or not current.referral:
                break
            target = referral_target(current.referral)
            if target is None:
                if "://" not in current.referral or current.referral.startswith("whois:"):
                    warnings.append(REFERRAL_REFUSED)  # e.g. "localhost": not a public name
                break
            next_server = self._servers.named(target[0], port=target[1])
            # Loops are caught by name; an untrusted name is also caught by its address. Operator
            # aliases may share one address (a relay), so for them the name alone counts.
            address = (next_server.host, next_server.port)
            if next_server.name in visited or (not next_server.trusted and address in visited):
                break
            visited |= {next_server.name, address}
            try:
                hop, current = await self._whois_hop(
                    next_server, domain.ascii, deadline, None, f"referral {count}"
                )
            except RefusedServer:
                warnings.append(REFERRAL_REFUSED)
                break
            except FetchError:
                warnings.append(PARTIAL_REFERRAL)
                break
            hops.append(hop)
            if current.registered is not True:
                warnings.append(PARTIAL_REFERRAL)
                warnings.extend(w for w in current.warnings if w == RATE_LIMITED_UPSTREAM)
                break
            merged = merge(merged, current)
            folded.append((hop.role, hop.server, current))
        sources = tuple(contact_sources(folded).items())
        return WhoisAnswer(domain, tuple(hops), merged, datetime.now(UTC), tuple(warnings), sources)

    async def _whois_hop(
        self, server: Server, line: str, deadline: float, tld: str | None, role: str
    ) -> tuple[Hop, Parsed]:
        try:
            address = server.host
            if not server.trusted:
                if server.port != 43:
                    raise RefusedServer("referral to a port other than 43")
                address = await public_address(server.host, server.port)
            async with self._slot(server.name):
                try:
                    data = await query_port43(
                        address, server.port, line, timeout_s=deadline - self._now()
                    )
                except FetchError:
                    self._on_server_error()
                    raise
        except FetchError as exc:
            raise named_failure(whois_label(server, tld), exc) from None
        text, _charset = decode(data, server.charsets)
        hop = Hop("whois", whois_shown(server, tld), role, line, text)
        return hop, parse_whois(text, tld)

    async def _port43_server(self, tld: str, deadline: float) -> Server:
        server = self._servers.port43_server(tld)
        if server is not None:
            return server
        cached = self._refer.get(tld)
        if cached is not None:
            (found,) = cached
        else:
            found = await self._ask_iana(tld, deadline)
            self._refer.put(tld, (found,), 1, IANA_REFER_TTL_S)
        if found is None:
            raise FetchError(f"no whois server is known for .{tld}")
        return found

    async def _ask_iana(self, tld: str, deadline: float) -> Server | None:
        iana = self._servers.named(IANA_HOST)
        _hop, parsed = await self._whois_hop(iana, tld, deadline, "int", "iana")
        target = referral_target(parsed.referral or "")
        return None if target is None else self._servers.named(target[0], port=target[1])

    # --- RDAP ------------------------------------------------------------------------------

    async def _rdap(self, domain: Domain, bases: tuple[str, ...], deadline: float) -> WhoisAnswer:
        error = FetchError("no RDAP server")
        for base in bases:
            url = domain_url(base, domain.ascii)
            try:
                answer = await fetch_rdap(
                    self._http,
                    url,
                    trusted=self._bootstrap.trusted_origins(),
                    timeout_s=deadline - self._now(),
                )
            except FetchError as exc:
                trusted = self._bootstrap.trusted_origins()
                error = named_failure(rdap_label(base, trusted, domain.tld), exc)
                continue
            now = datetime.now(UTC)
            trusted = self._bootstrap.trusted_origins()
            shown_base = rdap_shown(base, trusted, domain.tld)
            shown_url = rdap_shown(url, trusted, domain.tld)
            if answer.status == 404:
                hop = Hop("rdap", shown_base, "registry", shown_url, "", status=404)
                unregistered = Parsed(registered=False, domain=domain.ascii)
                return WhoisAnswer(domain, (hop,), unregistered, now)
            parsed = replace(parse_rdap(answer.document), registered=True)
            hops = [Hop("rdap", shown_base, "registry", shown_url, answer.text, answer.document)]
            folded = [("registry", shown_base, parsed)]
            warnings: list[str] = []
            for link in related_links(answer.document)[:1]:
                try:
                    related = await fetch_rdap(
                        self._http,
                        link,
                        trusted=self._bootstrap.trusted_origins(),
                        timeout_s=deadline - self._now(),
                    )
                except FetchError as exc:
                    refused = isinstance(exc, RefusedServer)
                    warnings.append(REFERRAL_REFUSED if refused else PARTIAL_REFERRAL)
                    break
                if related.status != 200:
                    warnings.append(PARTIAL_REFERRAL)
                    break
                shown = rdap_shown(link, trusted, domain.tld)
                hops.append(Hop("rdap", shown, "referral 1", shown, related.text, related.document))
                registrar = parse_rdap(related.document)
                parsed = merge(parsed, registrar)
                folded.append(("referral 1", shown, registrar))
            sources = tuple(contact_sources(folded).items())
            return WhoisAnswer(domain, tuple(hops), parsed, now, tuple(warnings), sources)
        raise error

    # --- helpers ---------------------------------------------------------------------------

    @asynccontextmanager
    async def _slot(self, name: str) -> AsyncIterator[None]:
        slot = self._slots.get(name)
        if slot is None:
            slot = self._slots[name] = _Slot(asyncio.Semaphore(HOST_CONCURRENCY))
        slot.users += 1
        try:
            async with slot.semaphore:
                yield
        finally:
            slot.users -= 1
            if slot.users == 0:
                del self._slots[name]

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()
