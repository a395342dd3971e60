"""HTTP edge of the whois part (interface D): ``/api/whois`` and ``/api/whois/json``.

Order of a request: spend the shared rate-limit budget (cache hits count too, spec §8), read
and normalise ``domain`` (400/403 before any network), look it up through the single-flight
cache, render. A lookup that produced no answer is a 500 carrying an ``error_id`` that is logged
with the reason; an unregistered domain is a normal 200 answer (``registered: false``).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

from publicsuffixlist import PublicSuffixList
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from assetgate.cache import Cache, dataclass_codec
from assetgate.cache.memory import MemoryTier
from assetgate.errors import AppError
from assetgate.operations.upstreams import Upstream
from assetgate.part import Part, part_state
from assetgate.resources import Resources
from assetgate.settings import Settings
from assetgate.web.params import read_bool
from assetgate.whois.bootstrap import BootstrapFile
from assetgate.whois.domain import PARAM, Domain, normalise_tld, parse_domain, registrable
from assetgate.whois.lookup import Resolver, WhoisAnswer
from assetgate.whois.openapi import OPENAPI
from assetgate.whois.rdap import DEFAULT_RETRY_AFTER_S
from assetgate.whois.record import PARTIAL_REFERRAL, REFERRAL_REFUSED
from assetgate.whois.render import render_record, render_text
from assetgate.whois.servers import load_server_config
from assetgate.whois.upstream import FetchError

log = logging.getLogger("assetgate.whois")

NAME: Final = "whois"
#: ``upstream`` labels of ``assetgate_upstream_errors_total``.
RDAP: Final = "rdap"
WHOIS_SERVER: Final = "whois server"
METHODS: Final = ("GET", "HEAD")
RESPONSE_HEADERS: Final = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
ANSWERS_MEMORY_BYTES: Final = 32 * 1024 * 1024
RENDERED_MEMORY_BYTES: Final = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class WhoisState:
    resolver: Resolver
    cache: Cache[WhoisAnswer]  # shared through Redis when ASSETGATE_REDIS_URL is set
    restricted: frozenset[str]
    private_suffix: Callable[[str], str | None]
    # JSON of cache hits, rendered once per answer: a hit then costs no rendering. Keyed by the
    # answers cache's own key (the registrable domain) and checked against the answer itself, so
    # a domain has one rendering, replaced when its answer changes, and an equal answer read
    # back from Redis is a hit too.
    rendered: MemoryTier[tuple[WhoisAnswer, bytes]] = field(
        default_factory=lambda: MemoryTier(RENDERED_MEMORY_BYTES)
    )

    def json_body(self, answer: WhoisAnswer, *, cached: bool, raw: bool) -> bytes:
        if not cached or raw:
            return _json_bytes(render_record(answer, cached=cached, raw=raw))
        key = answer.domain.ascii
        entry = self.rendered.get(key)
        if entry is None or (entry[0] is not answer and entry[0] != answer):
            entry = (answer, _json_bytes(render_record(answer, cached=True, raw=False)))
            self.rendered.put(key, entry, _rendered_weight(*entry), math.inf)
        return entry[1]


def _rendered_weight(answer: WhoisAnswer, body: bytes) -> int:
    """The JSON and the answer it is checked against (which the entry keeps alive), roughly."""
    return len(body) + sum(len(hop.text) for hop in answer.hops)


def _json_bytes(record: dict[str, object]) -> bytes:
    return bytes(JSONResponse(record).body)


@functools.cache
def public_suffixes() -> PublicSuffixList:
    """The ICANN section of the packaged Public Suffix List, parsed once per process (~0.1 s)."""
    return PublicSuffixList(only_icann=True)


def answer_ttl_s(settings: Settings) -> Callable[[WhoisAnswer], float]:
    """Hours for a full answer; minutes for "not registered", unknown or partial answers."""

    def ttl(answer: WhoisAnswer) -> float:
        partial = {PARTIAL_REFERRAL, REFERRAL_REFUSED} & set(answer.warnings)
        if answer.parsed.registered is True and not partial:
            return settings.whois_cache_ttl_s
        return settings.whois_negative_cache_ttl_s

    return ttl


@asynccontextmanager
async def lifespan(res: Resources) -> AsyncIterator[WhoisState]:
    settings = res.settings
    resolver = Resolver(
        servers=load_server_config(settings.whois_servers),
        bootstrap=BootstrapFile(settings.rdap_bootstrap),
        http=res.http,
        timeout_s=settings.whois_timeout_s,
        on_server_error=res.metrics.upstream_errors.labels(WHOIS_SERVER).inc,
    )
    state = WhoisState(
        resolver=resolver,
        cache=res.cache(
            "whois",
            dataclass_codec(WhoisAnswer),
            memory_bytes=ANSWERS_MEMORY_BYTES,
            ttl=answer_ttl_s(settings),
            shared=True,
        ),
        restricted=frozenset(normalise_tld(t) for t in settings.whois_restricted_tlds),
        private_suffix=public_suffixes().privatesuffix,
    )
    try:
        yield state
    finally:
        await state.cache.aclose()


async def whois_text(request: Request) -> Response:
    answer, _cached = await _answer(request)
    return PlainTextResponse(render_text(answer), headers=RESPONSE_HEADERS)


async def whois_json(request: Request) -> Response:
    raw = read_bool(request.query_params, "raw")
    answer, cached = await _answer(request)
    state = part_state(request, NAME, WhoisState)
    body = state.json_body(answer, cached=cached, raw=raw)
    return Response(body, media_type="application/json", headers=RESPONSE_HEADERS)


async def _answer(request: Request) -> tuple[WhoisAnswer, bool]:
    state = part_state(request, NAME, WhoisState)
    domain = read_domain(request.query_params, state)
    return await _lookup(state, domain)


def read_domain(query: QueryParams, state: WhoisState) -> Domain:
    values = query.getlist(PARAM)
    if len(values) > 1:
        raise AppError.bad_param(PARAM, "one domain name", ",".join(values))
    raw = values[0] if values else None
    domain = parse_domain(raw, restricted=state.restricted)
    return registrable(domain, state.private_suffix)


async def _lookup(state: WhoisState, domain: Domain) -> tuple[WhoisAnswer, bool]:
    try:
        return await state.cache.get_or_compute(
            domain.ascii, functools.partial(state.resolver.lookup, domain)
        )
    except FetchError as exc:
        if exc.rate_limited:  # the registry's quota, not our failure: the client may retry
            log.warning("whois %s: upstream quota: %s", domain.ascii, exc.reason)
            wait = str(exc.retry_after_s or DEFAULT_RETRY_AFTER_S)
            raise AppError(
                429,
                f"whois lookup rate limited upstream: {exc.reason}",
                headers={"Retry-After": wait},
            ) from None
        raise AppError.logged(
            500,
            f"whois lookup failed: {exc.reason}",
            log=log,
            context=f"whois {domain.ascii} failed: {exc.reason}",
            level=logging.WARNING,
        ) from None


PART = Part(
    name=NAME,
    prefixes=("/api/whois",),
    endpoints={"/api/whois": whois_text, "/api/whois/json": whois_json},
    methods=METHODS,
    budget=True,
    upstreams=(
        Upstream(RDAP, path_contains="/domain/"),  # RFC 9082 queries, over the shared client
        Upstream(WHOIS_SERVER),  # port 43, not HTTP: counted by the resolver's ``on_server_error``
    ),
    openapi=OPENAPI,
    lifespan=lifespan,
)
