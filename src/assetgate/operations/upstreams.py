"""Counting failed upstream requests by upstream (``assetgate_upstream_errors_total``).

Every HTTP upstream goes through the one shared ``httpx.AsyncClient``, so one client subclass
sees them all: a connection error, a timeout, a 429 or a 5xx counts against the upstream the
request went to. The upstreams and their labels are the parts' (each ``Part`` declares its
``Upstream`` rules and ``app.py`` hands them here): a request is named by the host of a URL the
settings give, else by a path fragment, else by the one rule declared for the rest (a host that
may come from the npm configuration at start). An upstream that is not HTTP (port-43 whois) is
declared with no rule and counted by its part.

The same client says why an upstream fails: one log line per upstream and change of state
(answering → failing with a cause, one cause → another, failing → answering again), naming the
exception class, its root cause and the first line of its message, e.g. a TLS verification
failure. It verifies certificates against the system's trust store (``truststore``), as curl, apt
and pip on the machine do, not against the certificates bundled with certifi.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import httpx
import truststore
from prometheus_client import Counter

from assetgate.breaker import Breaker
from assetgate.settings import Settings

#: The label of a request no declared rule names.
UNNAMED: Final = "other"


def _origin(scheme: str, host: str, port: int | None) -> str:
    return f"{host}:{port or (443 if scheme == 'https' else 80)}"


def hosts_of(urls: Iterable[str | None]) -> frozenset[str]:
    """The ``host:port`` of each URL (two upstreams may share a host on different ports)."""
    parts = [urlsplit(url) for url in urls if url]
    return frozenset(_origin(p.scheme, p.hostname, p.port) for p in parts if p.hostname)


@dataclass(frozen=True, slots=True)
class Upstream:
    """An upstream a part talks to: its ``upstream`` label and how the shared client knows its
    requests. ``urls`` picks the settings that name its servers (their ``host:port``);
    ``path_contains`` a fragment of its request paths; ``rest`` makes it the label of every
    request no other rule names. None of the three: not HTTP, the part counts it itself."""

    label: str
    urls: Callable[[Settings], Iterable[str | None]] | None = None
    path_contains: str | None = None
    rest: bool = False


@dataclass(frozen=True, slots=True)
class UpstreamNames:
    """The declared rules, resolved against the settings once: a host first, a path fragment
    next, the rest last (so a catalog on the registry's host but its own port stays apart)."""

    hosts: Mapping[str, str]
    paths: tuple[tuple[str, str], ...]
    rest: str = UNNAMED

    @classmethod
    def of(cls, upstreams: Iterable[Upstream], settings: Settings) -> UpstreamNames:
        hosts: dict[str, str] = {}
        paths: list[tuple[str, str]] = []
        rest = UNNAMED
        for upstream in upstreams:
            if upstream.urls is not None:
                hosts.update(dict.fromkeys(hosts_of(upstream.urls(settings)), upstream.label))
            if upstream.path_contains is not None:
                paths.append((upstream.path_contains, upstream.label))
            if upstream.rest:
                if rest != UNNAMED:
                    both = f"{rest!r} and {upstream.label!r}"
                    raise ValueError(f"upstreams {both} both claim the rest")
                rest = upstream.label
        return cls(hosts, tuple(paths), rest)


def upstream_of(url: httpx.URL, names: UpstreamNames) -> str:
    named = names.hosts.get(_origin(url.scheme, url.host, url.port))
    if named is not None:
        return named
    for fragment, label in names.paths:
        if fragment in url.path:
            return label
    return names.rest


def failed(status: int) -> bool:
    return status == 429 or status >= 500


def system_trust() -> ssl.SSLContext:
    """Certificate checks by the system's trust store (a company CA installed with
    update-ca-certificates counts; ``SSL_CERT_FILE``/``SSL_CERT_DIR`` still override on Linux)."""
    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


DETAIL_MAX: Final = 200
log = logging.getLogger("assetgate.upstreams")


def root_cause(exc: BaseException) -> BaseException:
    """The innermost exception of the chain: the ``SSLCertVerificationError`` under httpx's
    ``ConnectError``, the ``ConnectionRefusedError`` under a connect failure."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


def describe_failure(exc: BaseException) -> dict[str, str]:
    root = root_cause(exc)
    text = str(root) or str(exc)
    detail = text.strip().splitlines()[0][:DETAIL_MAX] if text.strip() else ""
    described = {"error": type(exc).__name__, "detail": detail}
    if root is not exc:
        described["cause"] = type(root).__name__
    return described


class UpstreamStates:
    """Each upstream's ``Breaker`` (whether it is failing) and last cause; a log line only when
    either changes. The breakers never refuse a request (the client only counts and says why):
    what a part does about a failing upstream is the part's."""

    def __init__(self) -> None:
        self._breakers: dict[str, Breaker] = {}
        self._causes: dict[str, tuple[tuple[str, str], ...]] = {}

    def breaker(self, upstream: str) -> Breaker:
        found = self._breakers.get(upstream)
        if found is None:
            found = self._breakers[upstream] = Breaker(
                cooldown_s=0.0, on_close=lambda _s: _answers_again(upstream)
            )
        return found

    def failed(self, upstream: str, described: dict[str, str]) -> None:
        self.breaker(upstream).failed()
        state = tuple(sorted(described.items()))
        if self._causes.get(upstream) == state:
            return
        self._causes[upstream] = state
        cause = f" ({described['cause']})" if "cause" in described else ""
        detail = f": {described['detail']}" if described["detail"] else ""
        log.warning(
            "upstream %s failing: %s%s%s",
            upstream,
            described["error"],
            cause,
            detail,
            extra={"fields": {"upstream": upstream, **described}},
        )

    def answered(self, upstream: str) -> None:
        self._causes.pop(upstream, None)
        breaker = self._breakers.get(upstream)
        if breaker is not None:
            breaker.succeeded()


def _answers_again(upstream: str) -> None:
    log.info("upstream %s answers again", upstream, extra={"fields": {"upstream": upstream}})


class CountingClient(httpx.AsyncClient):
    """The shared client, counting failures; never changes what the caller sees.

    A subclass rather than a transport wrapper: a custom transport would make httpx ignore the
    proxy settings of the environment (HTTPS_PROXY), which a deployment may rely on.
    """

    def __init__(self, *, errors: Counter, names: UpstreamNames, **options: Any) -> None:
        super().__init__(**{"verify": system_trust(), **options})
        self._errors = errors
        self._names = names
        self.states = UpstreamStates()

    async def send(self, request: httpx.Request, **options: Any) -> httpx.Response:
        upstream = upstream_of(request.url, self._names)
        try:
            response = await super().send(request, **options)
        except httpx.TransportError as exc:
            self._errors.labels(upstream).inc()
            self.states.failed(upstream, describe_failure(exc))
            raise
        if failed(response.status_code):
            self._errors.labels(upstream).inc()
            self.states.failed(upstream, {"error": f"HTTP {response.status_code}", "detail": ""})
        else:
            self.states.answered(upstream)
        return response
