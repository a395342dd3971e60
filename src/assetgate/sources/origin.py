"""An origin web server as a source: ``/<path>`` is ``<origin>/<prefix>/<path>``.

Safe by construction (docs/sources.md): only the configured origin is contacted, at an address
checked by ``guard.resolve`` (the name goes as ``Host`` and SNI); a redirect is followed only on
the same scheme, host and port, at most ``MAX_REDIRECTS`` times; the connection has a connect
deadline and the whole fetch a read deadline; the body is read by ``web.upstream_body`` (at most
one content coding, undone off the event loop) and its decoded bytes counted while it streams:
the fetch stops at the size cap. The client ignores proxy variables: a proxy would connect by
name, past the address check.
"""

from __future__ import annotations

import logging
from typing import Final
from urllib.parse import quote, urljoin, urlsplit

import anyio
import httpx

from assetgate.errors import AppError
from assetgate.sources import guard
from assetgate.sources.locations import Origin
from assetgate.sources.remote import Sink, Validators, copy_capped, failed, timed_out, too_large
from assetgate.web.upstream_body import BadBody, BodyOverCap, decoded_chunks

log = logging.getLogger("assetgate.sources")

MAX_REDIRECTS: Final = 3
OK: Final = "ok"


class OriginSource:
    kind = "http"

    def __init__(
        self,
        name: str,
        origin: Origin,
        *,
        allow_private: bool,
        connect_timeout_s: float,
        read_timeout_s: float,
    ) -> None:
        self.name = name
        self.origin = origin
        self.ident = origin.ident
        self.allow_private = allow_private
        self.read_timeout_s = read_timeout_s
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s),
            follow_redirects=False,
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(
        self, key: str, known: Validators | None, sink: Sink, max_bytes: int
    ) -> Validators | None:
        try:
            with anyio.fail_after(self.read_timeout_s):
                return await self._fetch(key, known, sink, max_bytes)
        except (TimeoutError, httpx.TimeoutException):
            raise timed_out(self.name, self.read_timeout_s) from None
        except guard.AddressRefused as exc:
            raise failed(self.name, f"refused: {exc}") from None
        except httpx.HTTPError as exc:
            log.warning("source %s: %s", self.name, type(exc).__name__)
            raise failed(self.name, "unreachable") from None

    async def _fetch(
        self, key: str, known: Validators | None, sink: Sink, max_bytes: int
    ) -> Validators | None:
        path = f"{self.origin.base}/{quote(key, safe='/')}"
        headers = {"Accept-Encoding": "identity", "User-Agent": "assetgate"}
        if known is not None and known.etag:
            headers["If-None-Match"] = known.etag
        if known is not None and known.last_modified:
            headers["If-Modified-Since"] = known.last_modified
        for _ in range(MAX_REDIRECTS + 1):
            response = await self._open(path, headers)
            try:
                if response.status_code in (301, 302, 303, 307, 308):
                    path = self._same_origin(path, response.headers.get("location", ""))
                    continue
                return await self._read(response, known, sink, max_bytes)
            finally:
                await response.aclose()
        raise failed(self.name, "too many redirects")

    async def _read(
        self, response: httpx.Response, known: Validators | None, sink: Sink, max_bytes: int
    ) -> Validators | None:
        status = response.status_code
        if status == 304 and known is not None:
            return None
        if status in (404, 410):
            raise AppError.not_found()
        if status != 200:
            raise failed(self.name, f"answered {status}")
        try:
            await copy_capped(decoded_chunks(response, max_bytes), sink, max_bytes)
        except BodyOverCap:
            raise too_large(max_bytes) from None
        except BadBody as exc:
            raise failed(self.name, exc.reason) from None
        return Validators(response.headers.get("etag"), response.headers.get("last-modified"))

    async def _open(self, path: str, headers: dict[str, str]) -> httpx.Response:
        origin = self.origin
        address = await guard.resolve(origin.host, origin.port, allow_private=self.allow_private)
        literal = f"[{address}]" if ":" in address else address
        request = self._client.build_request(
            "GET",
            f"{origin.scheme}://{literal}:{origin.port}{path}",
            headers={**headers, "Host": origin.authority},
            extensions={"sni_hostname": origin.host} if origin.scheme == "https" else {},
        )
        return await self._client.send(request, stream=True)

    def _same_origin(self, path: str, location: str) -> str:
        """The path a redirect points to, when it stays on this origin; else 502."""
        here = f"{self.origin.scheme}://{self.origin.authority}"
        target = urlsplit(urljoin(here + path, location))
        port = target.port or (443 if target.scheme == "https" else 80)
        if (target.scheme, target.hostname, port) != (
            self.origin.scheme,
            self.origin.host.lower(),
            self.origin.port,
        ) or not location:
            raise failed(self.name, "redirected to another origin (not followed)")
        return target.path + (f"?{target.query}" if target.query else "")

    async def check(self) -> str:
        """Whether the origin's name resolves to an allowed address and it answers at all."""
        try:
            with anyio.fail_after(2.0):
                response = await self._open(self.origin.base or "/", {})
                await response.aclose()
                return OK if response.status_code < 500 else f"failing ({response.status_code})"
        except guard.AddressRefused:
            return "refused (address not allowed: ASSETGATE_ORIGIN_ALLOW_PRIVATE)"
        except (TimeoutError, httpx.HTTPError) as exc:
            return f"unreachable ({type(exc).__name__})"
