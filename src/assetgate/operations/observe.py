"""Request id, access log line and request metrics: one pure ASGI middleware around the app.

Pure ASGI (not Starlette's BaseHTTPMiddleware, which runs the app in a task group and copies every
body chunk through a stream) so a 304 or a cache hit pays a few microseconds, not a task. It sits
outside Starlette's error middleware, so the 500 of an unexpected exception is counted, logged
and carries ``X-Request-Id`` like every other answer.

The request id comes from ``X-Request-Id`` when the socket peer is a trusted proxy
(ASSETGATE_TRUSTED_PROXIES) and the value is short and plain; otherwise it is generated.

The ``interface`` label is the part that owns the path's prefix: each part declares its prefixes,
``app.py`` hands them here as ``Interfaces``; this floor knows no part by name.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assetgate.operations.logs import ACCESS_LOGGER, REQUEST_ID
from assetgate.operations.metrics import Metrics
from assetgate.web.cachestatus import cache_state
from assetgate.web.ratelimit import Network, client_address, trusted_peer

access_log = logging.getLogger(ACCESS_LOGGER)

#: The label of a path no part owns, and of the app's own paths (/healthz, /metrics, …).
OTHER: Final = "other"
REJECTED: Final = frozenset({429, 503})

_REQUEST_ID_OK = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")
# Query parameters never written to a log: URL signatures and anything named like a credential.
_SECRET_NAMES: Final = frozenset({"s", "sig", "signature", "token", "key", "code", "password"})
_SECRET_PARTS: Final = ("token", "secret", "passw", "auth", "signature", "apikey", "api_key")
# Values that look like a token whatever their name: long hex/base64url strings and JWTs.
_TOKEN_VALUE = re.compile(r"[A-Za-z0-9_-]{32,}|eyJ[\w-]+\.[\w-]+\.[\w-]*")
# A query ``urlencode(parse_qsl(...))`` writes back unchanged: ``name=value`` pairs of characters
# it never escapes, each with its ``=`` (a bare ``name`` would come back as ``name=``).
_PLAIN_QUERY = re.compile(
    r"[A-Za-z0-9._~-]+=[A-Za-z0-9._~-]*(?:&[A-Za-z0-9._~-]+=[A-Za-z0-9._~-]*)*"
)


@dataclass(frozen=True, slots=True)
class Interfaces:
    """Path prefix -> interface label, longest prefix first; ``own`` paths are the app's."""

    prefixes: tuple[tuple[str, str], ...] = ()
    own: frozenset[str] = frozenset()

    @classmethod
    def of(cls, owned: Iterable[tuple[str, str]], own: Iterable[str] = ()) -> Interfaces:
        """``owned``: (prefix, label) pairs; a prefix owns itself and everything below it
        (``/npm`` owns ``/npm/x``, not ``/npmx``; ``/`` owns every path)."""
        ordered = sorted(owned, key=lambda pair: len(pair[0]), reverse=True)
        return cls(tuple((prefix.rstrip("/"), label) for prefix, label in ordered), frozenset(own))


def owns(prefix: str, path: str) -> bool:
    """``prefix`` (without a trailing ``/``) is ``path`` or a folder above it."""
    return path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] == "/")


def interface_of(path: str, interfaces: Interfaces) -> str:
    """The ``interface`` label of a request path."""
    if path in interfaces.own:
        return OTHER
    for prefix, label in interfaces.prefixes:  # ``owns``, inlined: this runs for every request
        if path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] == "/"):
            return label
    return OTHER


def _secret(name: str, value: str) -> bool:
    lowered = name.lower()
    if lowered in _SECRET_NAMES or any(part in lowered for part in _SECRET_PARTS):
        return True
    return _TOKEN_VALUE.fullmatch(value) is not None


def loggable_path(path: str, query_string: bytes) -> str:
    """``path?query`` without signatures, credentials or token-like values."""
    if not query_string:
        return path
    query = query_string.decode("latin-1")
    if _PLAIN_QUERY.fullmatch(query) and not any(
        _secret(*pair.split("=", 1)) for pair in query.split("&")
    ):
        return f"{path}?{query}"  # what parsing and encoding it again would give, cheaper
    pairs = parse_qsl(query, keep_blank_values=True)
    kept = [(name, value) for name, value in pairs if not _secret(name, value)]
    return f"{path}?{urlencode(kept)}" if kept else path


def request_id_from(header: bytes | None, from_trusted_proxy: bool) -> str:
    """The proxy's id when it is believable, else a fresh one."""
    if header is not None and from_trusted_proxy:
        text = header.decode("latin-1")
        if _REQUEST_ID_OK.fullmatch(text):
            return text
    return os.urandom(16).hex()  # as unique as a uuid4, a quarter of the cost


@dataclass(frozen=True, slots=True)
class _Series:
    """The labelled children of one (interface, status): ``labels()`` takes a lock and a dict."""

    metrics: Metrics
    requests: Counter
    latency: Histogram
    rejected: Counter | None

    @classmethod
    def of(cls, metrics: Metrics, interface: str, status: int) -> _Series:
        label = str(status)
        rejected = metrics.rejected.labels(interface, label) if status in REJECTED else None
        return cls(
            metrics,
            metrics.requests.labels(interface, label),
            metrics.latency.labels(interface, label),
            rejected,
        )


class Observe:
    """Wraps the whole app: ``X-Request-Id`` on every answer, one access line, request metrics."""

    def __init__(
        self, app: ASGIApp, *, trusted: Sequence[Network], interfaces: Interfaces = Interfaces()
    ) -> None:
        self.app = app
        self.trusted = tuple(trusted)
        self.interfaces = interfaces
        # (interface, status) -> the labelled children, for the lifespan's Metrics only
        self._series: dict[tuple[str, int], _Series] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        header_id: bytes | None = None
        forwarded: list[str] = []
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                header_id = value
            elif name == b"x-forwarded-for":
                forwarded.append(value.decode("latin-1"))
        client = scope.get("client")
        peer = client[0] if client else None
        from_proxy = trusted_peer(peer, self.trusted)
        request_id = request_id_from(header_id, from_proxy)
        echoed = request_id.encode("latin-1")
        answer: dict[str, Any] = {"status": 500, "bytes": 0, "cache": None, "done": False}

        async def observed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                headers = list(message.get("headers", ()))
                for name, value in headers:
                    if name.lower() == b"cache-status":  # every part's file answers say it
                        answer["cache"] = cache_state(value)
                headers.append((b"x-request-id", echoed))
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body":
                answer["bytes"] += len(message.get("body", b""))
                answer["done"] = not message.get("more_body", False)
            await send(message)

        token = REQUEST_ID.set(request_id)
        try:
            await self.app(scope, receive, observed_send)
        except Exception:
            # Starlette's error middleware re-raises after it has sent the 500 (and our handler
            # logged it with its error_id): a complete answer needs no second traceback.
            if not answer["done"]:
                raise
        finally:
            duration = time.perf_counter() - start
            path = scope.get("path", "")
            interface = interface_of(path, self.interfaces)
            status = int(answer["status"])
            self._count(scope, interface, status, duration)
            if access_log.isEnabledFor(logging.INFO):
                fields = {
                    "method": scope.get("method"),
                    "path": loggable_path(path, scope.get("query_string", b"")),
                    "interface": interface,
                    "status": status,
                    "duration_ms": round(duration * 1000, 3),
                    "bytes": answer["bytes"],
                    "cache": answer["cache"],
                    "client": client_address(peer, forwarded, self.trusted) if from_proxy else peer,
                }
                # ``handle`` a record made here: ``info`` would also walk the stack for the
                # caller's file and line, which no access line shows.
                access_log.handle(
                    access_log.makeRecord(
                        ACCESS_LOGGER, logging.INFO, __file__, 0, "request", (), None,
                        extra={"fields": fields, "request_id": request_id},
                    )
                )  # fmt: skip
            REQUEST_ID.reset(token)

    def _count(self, scope: Scope, interface: str, status: int, duration: float) -> None:
        state = scope.get("state")
        metrics = state.get("metrics") if isinstance(state, dict) else None
        if not isinstance(metrics, Metrics):
            return  # no lifespan ran (an app under a bare test transport)
        series = self._series.get((interface, status))
        if series is None or series.metrics is not metrics:
            series = self._series[(interface, status)] = _Series.of(metrics, interface, status)
        series.requests.inc()
        series.latency.observe(duration)
        if series.rejected is not None:
            series.rejected.inc()
