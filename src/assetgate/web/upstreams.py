"""Counting failed upstream requests by upstream (``assetgate_upstream_errors_total``).

Every HTTP upstream goes through the one shared ``httpx.AsyncClient``, so one client subclass
sees them all: a connection error, a timeout, a 429 or a 5xx counts against the upstream the
request went to. The upstream is named from the request: the library catalog's hosts, RDAP's
``/domain/<name>`` paths, and the npm registry for the rest (its host may come from the npm
configuration at start). Port-43 whois queries do not use HTTP; the whois part counts those.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import urlsplit

import httpx
from prometheus_client import Counter

NPM_REGISTRY: Final = "npm registry"
LIBRARY_CATALOG: Final = "library catalog"
WHOIS_SERVER: Final = "whois server"
RDAP: Final = "rdap"


def _origin(scheme: str, host: str, port: int | None) -> str:
    return f"{host}:{port or (443 if scheme == 'https' else 80)}"


def hosts_of(urls: Iterable[str | None]) -> frozenset[str]:
    """The ``host:port`` of each URL (two upstreams may share a host on different ports)."""
    parts = [urlsplit(url) for url in urls if url]
    return frozenset(_origin(p.scheme, p.hostname, p.port) for p in parts if p.hostname)


def upstream_of(url: httpx.URL, library_hosts: frozenset[str]) -> str:
    if _origin(url.scheme, url.host, url.port) in library_hosts:
        return LIBRARY_CATALOG
    if "/domain/" in url.path:
        return RDAP
    return NPM_REGISTRY


def failed(status: int) -> bool:
    return status == 429 or status >= 500


class CountingClient(httpx.AsyncClient):
    """The shared client, counting failures; never changes what the caller sees.

    A subclass rather than a transport wrapper: a custom transport would make httpx ignore the
    proxy settings of the environment (HTTPS_PROXY), which a deployment may rely on.
    """

    def __init__(self, *, errors: Counter, library_hosts: frozenset[str], **options: Any) -> None:
        super().__init__(**options)
        self._errors = errors
        self._library_hosts = library_hosts

    async def send(self, request: httpx.Request, **options: Any) -> httpx.Response:
        try:
            response = await super().send(request, **options)
        except httpx.TransportError:
            self._count(request)
            raise
        if failed(response.status_code):
            self._count(request)
        return response

    def _count(self, request: httpx.Request) -> None:
        self._errors.labels(upstream_of(request.url, self._library_hosts)).inc()
