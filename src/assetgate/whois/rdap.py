"""RDAP over the shared httpx client (RFC 9082 queries, RFC 7480 HTTP rules).

``GET <base>domain/<A-label>`` with ``Accept: application/rdap+json``. 200 is a domain object,
404 "not registered"; 429, 422 and a 403 whose body speaks of a quota are the server's rate
limit (``rate_limited``, with the ``Retry-After`` it asked for, else 60 s). Redirects (rdap.org-
style bootstraps, a registry moving hosts) are followed by hand, at most ``MAX_REDIRECTS``, each
target checked like the first URL: an origin from the operator's bootstrap file is trusted;
anything else must be HTTPS on a public address, and the request is pinned to the address that
was checked (the URL carries the IP, ``Host`` and TLS SNI carry the name, so the certificate is
still verified against the name). Bodies are read by ``web.upstream_body``, up to
``RDAP_MAX_BYTES`` decoded bytes. Failure reasons are bare ("answered 503"): the caller prefixes
the server's public name.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Final
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from assetgate.web.upstream_body import BadBody, BodyOverCap, decoded_chunks, read_body
from assetgate.whois.bootstrap import origin
from assetgate.whois.upstream import FetchError, RefusedServer, public_address

RDAP_MAX_BYTES: Final = 1024 * 1024
MAX_REDIRECTS: Final = 3
ACCEPT: Final = "application/rdap+json, application/json;q=0.9"
REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
# How registries say "over your quota": 429 (RFC 7480 §5.5), 403 with a quota message
# ("Number of allowed queries exceeded", rdap.nic.biz), 422 (rdap.zdnsgtld.com).
QUOTA_STATUSES: Final = frozenset({429, 403, 422})
QUOTA_WORDS: Final = ("allowed queries", "exceeded", "quota", "rate limit", "too many")
QUOTA_BODY_BYTES: Final = 16 * 1024
DEFAULT_RETRY_AFTER_S: Final = 60


@dataclass(frozen=True, slots=True)
class RdapAnswer:
    url: str
    status: int
    document: Any
    text: str


def domain_url(base: str, domain: str) -> str:
    return f"{base.rstrip('/')}/domain/{domain}"


async def fetch_rdap(
    http: httpx.AsyncClient,
    url: str,
    *,
    trusted: Collection[tuple[str, str, int]],
    timeout_s: float,
) -> RdapAnswer:
    """One RDAP lookup; 200 and 404 return, everything else raises ``FetchError``."""
    if timeout_s <= 0:
        raise FetchError("timed out")
    for _ in range(MAX_REDIRECTS + 1):
        request_url, headers, extensions = await _pinned(url, trusted)
        try:
            async with http.stream(
                "GET", request_url, headers=headers, extensions=extensions, timeout=timeout_s
            ) as response:
                if response.status_code in REDIRECTS and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                if response.status_code == 404:
                    return RdapAnswer(url, 404, None, "")
                if response.status_code in QUOTA_STATUSES:
                    await _raise_if_quota(response)
                if response.status_code != 200:
                    raise FetchError(f"answered {response.status_code}")
                body = await _read_capped(response)
        except httpx.TimeoutException:
            raise FetchError("timed out") from None
        except httpx.HTTPError:
            raise FetchError("could not be reached") from None
        return _decoded(url, body)
    raise FetchError("redirected too often")


async def _pinned(
    url: str, trusted: Collection[tuple[str, str, int]]
) -> tuple[str, dict[str, str], dict[str, Any]]:
    headers = {"Accept": ACCEPT}
    scheme, host, port = origin(url)
    if (scheme, host, port) in trusted:
        return url, headers, {}
    if scheme != "https" or not host:
        raise RefusedServer("RDAP server must use HTTPS")
    address = await public_address(host, port)
    return pin_url(url, address), {**headers, "Host": urlsplit(url).netloc}, {"sni_hostname": host}


def pin_url(url: str, address: str) -> str:
    """``url`` with its host replaced by the checked ``address`` (brackets for IPv6)."""
    parts = urlsplit(url)
    host = f"[{address}]" if ":" in address else address
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


async def _raise_if_quota(response: httpx.Response) -> None:
    """429 and 422 are quotas; a 403 is one when its body says so (else a plain refusal)."""
    if response.status_code == 403:
        body = bytearray()
        with contextlib.suppress(BodyOverCap, BadBody):  # what was read so far is enough to tell
            async for chunk in decoded_chunks(response, QUOTA_BODY_BYTES):
                body += chunk
        text = body.decode("utf-8", "replace").lower()
        if not any(word in text for word in QUOTA_WORDS):
            return
    raise FetchError(
        f"over its query quota (answered {response.status_code})",
        rate_limited=True,
        retry_after_s=retry_after(response.headers.get("retry-after")),
    )


def retry_after(value: str | None) -> int:
    """Seconds from ``Retry-After`` (delta-seconds or HTTP date), bounded to 1 s .. 1 h."""
    if value is None:
        return DEFAULT_RETRY_AFTER_S
    text = value.strip()
    if text.isdigit():
        seconds = int(text)
    else:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return DEFAULT_RETRY_AFTER_S
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = int((when - datetime.now(UTC)).total_seconds())
    return min(max(seconds, 1), 3600)


async def _read_capped(response: httpx.Response) -> bytes:
    """The decoded body (``web.upstream_body``: one coding at most, undone off the loop)."""
    try:
        return await read_body(response, RDAP_MAX_BYTES)
    except BodyOverCap:
        raise FetchError(f"answer exceeds {RDAP_MAX_BYTES // 1024} KiB") from None
    except BadBody as exc:
        raise FetchError(exc.reason) from None


def _decoded(url: str, body: bytes) -> RdapAnswer:
    try:
        text = body.decode("utf-8-sig")
        document = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise FetchError("sent invalid JSON") from None
    if not isinstance(document, dict):
        raise FetchError("sent no domain object")
    return RdapAnswer(url, 200, document, text)
