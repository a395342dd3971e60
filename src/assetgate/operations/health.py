"""``/readyz``: can this process do its work now? (``/healthz`` only says it is alive.)

Ready means the directories it writes are writable and the shared Redis answers when one is
configured. A load balancer takes a node that is not ready out of rotation; an orchestrator must
not restart it for that (the liveness probe is ``/healthz``). Answers name the failed check but
never a path or an address.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Final

import redis.asyncio as aioredis

PROBE_TIMEOUT_S: Final = 1.0
OK: Final = "ok"

Check = Callable[[], Awaitable[str]]


def _writable(directory: Path) -> str:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".readyz-", dir=directory)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return f"not writable ({exc.strerror or type(exc).__name__})"
    return OK


def writable_dir(directory: Path) -> Check:
    async def check() -> str:
        return await asyncio.to_thread(_writable, directory)

    return check


def redis_ping(url: str) -> Check:
    async def check() -> str:
        client = aioredis.Redis.from_url(
            url, socket_connect_timeout=PROBE_TIMEOUT_S, socket_timeout=PROBE_TIMEOUT_S
        )
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S * 2):
                await client.ping()
        except Exception as exc:  # any client or socket error means "not reachable"
            return f"unreachable ({type(exc).__name__})"
        finally:
            await client.aclose()
        return OK

    return check


def storage_check(probe: Callable[[], Awaitable[bool]]) -> Check:
    """A ``limits`` storage's own ``check()`` (any backend it supports)."""

    async def check() -> str:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S * 2):
                answered = await probe()
        except Exception as exc:
            return f"unreachable ({type(exc).__name__})"
        return OK if answered else "unreachable"

    return check


async def readiness(
    checks: Mapping[str, Check], degrading: Mapping[str, Check] | None = None
) -> tuple[int, dict[str, object]]:
    """(200 or 503, body): every check runs at once; the body says which failed.

    ``degrading`` checks (remote sources, the shared result store) are reported beside the others
    but do not make the node unready: it still answers from its source cache and renders
    locally, and taking every node out of rotation because a shared store is down would turn a
    slower service into none. Their failures are listed under ``degraded``."""
    degrading = degrading or {}
    names = [*checks, *degrading]
    every = {**checks, **degrading}
    results = await asyncio.gather(*(every[name]() for name in names))
    outcome = dict(zip(names, results, strict=True))
    failed = [name for name in checks if outcome[name] != OK]
    degraded = [name for name in degrading if outcome[name] != OK]
    body: dict[str, object] = {"status": "unready" if failed else "ready", "checks": outcome}
    if failed:
        body["failed"] = failed
    if degraded:
        body["degraded"] = degraded
    return (503 if failed else 200), body
