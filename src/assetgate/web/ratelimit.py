"""The shared request budget: one moving window per client, over the ``limits`` library.

Spec §8: more than 100 requests in 10 seconds answers 429, and the budget is shared among the
rate-limited interfaces, so every part spends from the same key (the client address), never a
per-route one. Storage is ``memory://`` (one process) or ``redis://host:port`` (one budget for
every worker and machine that points at the same Redis); ``ASSETGATE_RATE_LIMIT_STORAGE`` wins,
else ``ASSETGATE_REDIS_URL``, else memory. Several worker processes on ``memory://`` would each
keep a budget of their own and multiply the limit, so ``assetgate serve`` refuses that
(``shared_budget_problem``) instead of doing it silently.

What a client sees (draft-ietf-httpapi-ratelimit-headers-10, RFC 6585 §4, RFC 9110 §10.2.3):
every limited response carries ``RateLimit-Policy: "default";q=100;w=10`` and
``RateLimit: "default";r=<remaining>;t=<seconds>``; over the budget the answer is a 429 JSON
error with ``Retry-After`` and the same two fields.

The limiter is a safety valve, not the service: when the storage is unreachable it lets requests
through and logs a warning (``fail_open``), or answers 503 with ``Retry-After`` when configured
closed. It never turns a storage failure into a 500. A storage that hangs (a paused Redis accepts
connections and never answers) must not cost every request its timeouts: one answer gets
``STORAGE_DEADLINE_S``, and a failure opens its ``Breaker`` (``assetgate.breaker``, the one every
dependency has) with no request probing: requests then skip the storage at once (the same
fail-open or 503 answer) while one background task asks it every ``PROBE_INTERVAL_S``; the first
answer closes the breaker. One warning when it opens, one line when it closes.

The client address comes from the socket. ``X-Forwarded-For`` is believed only when the socket
peer is a configured trusted proxy, and then only as far back as the chain stays trusted: a client
can prepend anything it likes, so the right-most untrusted hop is the one that counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import logging
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from limits import RateLimitItem, parse
from limits.aio.storage import Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from assetgate.breaker import Breaker
from assetgate.errors import AppError, Unavailable
from assetgate.settings import Settings

log = logging.getLogger("assetgate.ratelimit")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

POLICY_NAME: Final = "default"
# One namespace for the whole service: every part spends from the same budget (spec §8).
KEY_NAMESPACE: Final = "assetgate"
# A storage that does not answer within these bounds counts as unreachable; a rate limiter must
# never hold a request longer than the work it protects.
STORAGE_CONNECT_TIMEOUT_S: Final = 1.0
STORAGE_STREAM_TIMEOUT_S: Final = 1.0
# One request's whole exchange with the storage (a hit and the window's stats, ~2 round trips).
STORAGE_DEADLINE_S: Final = 0.5
# While the breaker is open, the background probe asks the storage this often.
PROBE_INTERVAL_S: Final = 1.0
# Retry-After of the fail-closed 503.
OUTAGE_RETRY_AFTER_S: Final = 5
_REDIS_SCHEMES: Final = ("redis", "rediss", "redis+unix", "valkey", "valkeys", "valkey+unix")
UNKNOWN_CLIENT: Final = "unknown"


@dataclass(frozen=True, slots=True)
class Policy:
    """A quota of ``quota`` requests per ``window_s`` seconds (the RateLimit-Policy item)."""

    quota: int
    window_s: int
    name: str = POLICY_NAME


@dataclass(frozen=True, slots=True)
class Quota:
    """What is left of a client's budget after this request."""

    policy: Policy
    remaining: int
    reset_s: int


def parse_rule(rule: str) -> RateLimitItem:
    """``"100/10 seconds"`` (``limits`` notation) -> one rate-limit item; ValueError when bad."""
    try:
        item = parse(rule)
    except ValueError as exc:
        raise ValueError(f"rate limit {rule!r} is not in limits notation: {exc}") from None
    if item.amount < 1:
        raise ValueError(f"rate limit {rule!r} must allow at least one request")
    return item


def make_policy(item: RateLimitItem) -> Policy:
    return Policy(quota=item.amount, window_s=int(item.get_expiry()))


def make_headers(quota: Quota) -> dict[str, str]:
    """The two IETF fields of draft-ietf-httpapi-ratelimit-headers-10 (structured-field lists)."""
    policy = quota.policy
    return {
        "RateLimit-Policy": f'"{policy.name}";q={policy.quota};w={policy.window_s}',
        "RateLimit": f'"{policy.name}";r={max(0, quota.remaining)};t={max(0, quota.reset_s)}',
    }


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """Trusted proxies as addresses or CIDR networks; ValueError names the bad entry."""
    networks: list[Network] = []
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"trusted proxy {text!r} is not an address or network") from None
    return tuple(networks)


def _parse_hop(text: str) -> Address | None:
    """One X-Forwarded-For entry: ``1.2.3.4``, ``1.2.3.4:5678``, ``::1`` or ``[::1]:80``."""
    hop = text.strip()
    if hop.startswith("["):
        hop = hop[1:].split("]", 1)[0]
    elif hop.count(":") == 1:
        hop = hop.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(hop)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_trusted(address: Address, trusted: Sequence[Network]) -> bool:
    return any(address.version == net.version and address in net for net in trusted)


def trusted_peer(peer: str | None, trusted: tuple[Network, ...]) -> bool:
    """Whether the socket peer is a configured proxy (whose headers are believed)."""
    return bool(trusted) and peer is not None and _trusted_peer(peer, trusted)


@functools.lru_cache(maxsize=1024)  # a handful of proxies ask again and again: parse once
def _trusted_peer(peer: str, trusted: tuple[Network, ...]) -> bool:
    address = _parse_hop(peer)
    return address is not None and _is_trusted(address, trusted)


def client_address(
    peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]
) -> str:
    """The address a budget is charged to.

    ``forwarded_for`` holds the raw ``X-Forwarded-For`` header lines in order. Walking from the
    right, each trusted hop hands over to the address it saw; the first untrusted (or the
    left-most) address wins. An unparsable entry stops the walk at the last address we trust to
    have been written by a proxy, so garbage can never reset a client's budget.
    """
    if peer is None:
        return UNKNOWN_CLIENT
    current = _parse_hop(peer)
    if current is None:
        return peer
    if not trusted or not _is_trusted(current, trusted):
        return str(current)
    hops = [hop for line in forwarded_for for hop in line.split(",") if hop.strip()]
    for raw in reversed(hops):
        hop = _parse_hop(raw)
        if hop is None:
            break
        current = hop
        if not _is_trusted(current, trusted):
            break
    return str(current)


def _storage_options(uri: str) -> dict[str, float | bool | str]:
    """Redis through redis-py, the client the rest of the service already uses (``limits``
    defaults to coredis, which would be a second Redis client to install and keep up)."""
    options: dict[str, float | bool | str] = {"wrap_exceptions": True}
    if uri.split("://", 1)[0].removeprefix("async+") in _REDIS_SCHEMES:
        options["implementation"] = "redispy"
        options["socket_connect_timeout"] = STORAGE_CONNECT_TIMEOUT_S
        options["socket_timeout"] = STORAGE_STREAM_TIMEOUT_S
    return options


def open_storage(uri: str) -> Storage:
    """An async ``limits`` storage for ``memory://`` or ``redis://…`` (``async+`` implied)."""
    async_uri = uri if uri.startswith("async+") else f"async+{uri}"
    storage = storage_from_string(async_uri, **_storage_options(uri))
    if not isinstance(storage, Storage):  # pragma: no cover - limits always honours async+
        raise ValueError(f"rate limit storage {uri!r} has no asynchronous implementation")
    return storage


MEMORY_STORAGE: Final = "memory://"


def storage_uri(settings: Settings) -> str:
    """The explicit storage, else the shared Redis, else this process's memory."""
    return settings.rate_limit_storage or settings.redis_url or MEMORY_STORAGE


def shared_budget_problem(settings: Settings) -> str | None:
    """Why these settings would multiply the budget across worker processes, or None.

    A machine-local shared store would still leave each machine with its own budget and add a
    lock round trip to every request; Redis is the one store that shares it everywhere, and one
    process already uses every core for images. So: Redis, or one worker.
    """
    if settings.workers < 2 or not settings.rate_limit_parts:
        return None
    if not storage_uri(settings).startswith(MEMORY_STORAGE):
        return None
    return (
        f"ASSETGATE_RATE_LIMIT_STORAGE: memory:// keeps one budget per worker process, so "
        f"{settings.workers} workers would allow {settings.workers}x ASSETGATE_RATE_LIMIT; "
        f"set ASSETGATE_REDIS_URL (or a redis:// storage), or run one worker"
    )


class RateLimiter:
    """One shared budget; ``hit`` charges a request and answers with the header fields."""

    def __init__(
        self,
        rule: str,
        storage_uri: str,
        *,
        fail_open: bool = True,
        trusted_proxies: Iterable[str] = (),
    ) -> None:
        self.item: RateLimitItem = parse_rule(rule)
        self.policy = make_policy(self.item)
        self.storage = open_storage(storage_uri)
        self.strategy = MovingWindowRateLimiter(self.storage)
        self.fail_open = fail_open
        self.trusted = parse_networks(trusted_proxies)
        # Open: the storage is skipped; no request probes (math.inf), the background task closes
        # it (``_wait_for_storage``).
        self.breaker = Breaker(
            cooldown_s=math.inf, on_open=self._went_down, on_close=self._came_back
        )
        self._probe: asyncio.Task[None] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimiter:
        return cls(
            settings.rate_limit,
            storage_uri(settings),
            fail_open=settings.rate_limit_fail_open,
            trusted_proxies=settings.trusted_proxies,
        )

    def client_key(self, peer: str | None, forwarded_for: Sequence[str] = ()) -> str:
        return client_address(peer, forwarded_for, self.trusted)

    async def hit(self, client: str) -> dict[str, str]:
        """Charge one request to ``client``.

        Returns the RateLimit fields for the response (empty while the storage is down and the
        limiter fails open). Raises a 429 AppError (with ``Retry-After`` and the fields) when the
        budget is spent, or a 503 when the storage is down and the limiter fails closed.
        """
        if not self.breaker.allows():
            return self._outage_answer()
        try:
            async with asyncio.timeout(STORAGE_DEADLINE_S):
                allowed = await self.strategy.hit(self.item, KEY_NAMESPACE, client)
                stats = await self.strategy.get_window_stats(self.item, KEY_NAMESPACE, client)
        except Exception as exc:
            # Whatever the storage client raises (StorageError, a socket error, a timeout, a
            # protocol error after a restart) means "no answer": decided by policy, never a 500.
            # CancelledError is a BaseException and still propagates.
            self.breaker.failed(exc)
            return self._outage_answer()
        reset_s = max(1, math.ceil(stats.reset_time - time.time()))
        quota = Quota(self.policy, stats.remaining, reset_s)
        headers = make_headers(quota)
        if not allowed:
            raise AppError.rate_limited(reset_s, headers)
        return headers

    def _went_down(self, exc: BaseException | None) -> None:
        action = "letting requests through" if self.fail_open else "answering 503"
        log.warning(
            "rate limit storage unreachable (%s: %s); %s until it answers again",
            type(exc).__name__,
            (str(exc) or f"no answer within {STORAGE_DEADLINE_S:g} s")[:200],
            action,
        )
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(self._wait_for_storage())

    def _came_back(self, down_for_s: float) -> None:
        log.warning("rate limit storage reachable again after %.1f s; limiting resumed", down_for_s)

    def _outage_answer(self) -> dict[str, str]:
        if self.fail_open:
            return {}
        raise Unavailable(
            "rate limiter unavailable, retry later",
            headers={"Retry-After": str(OUTAGE_RETRY_AFTER_S)},
        )

    async def _wait_for_storage(self) -> None:
        """The breaker's background probe: closes it at the storage's first answer."""
        while True:
            await asyncio.sleep(PROBE_INTERVAL_S)
            with contextlib.suppress(Exception):
                async with asyncio.timeout(STORAGE_DEADLINE_S):
                    if await self.storage.check():
                        break
        self.breaker.succeeded()

    async def aclose(self) -> None:
        """Stop the background probe (the app's lifespan ends)."""
        if self._probe is not None:
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probe
            self._probe = None
