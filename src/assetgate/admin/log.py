"""How every node learns of a purge: a Redis stream, its publish and its log at once.

The node that answers ``POST /admin/purge`` appends the ``Order`` to the stream
``assetgate:purge:log`` (``XADD``, the newest ``MAX_ENTRIES`` kept). Every process follows it
with a blocking ``XREAD`` from the last entry it applied: a new entry reaches every node within
one round trip, and a node that lost Redis for a while, or was down, reads what it missed when it
is back, from where it stopped, before anything else. The last entry applied is kept on the
node's disk (``<ASSETGATE_RESULT_CACHE_DIR>/.purge-seen``), so a node that starts reads the
entries since it stopped *before it answers a request* (``catch_up`` runs in the lifespan) and
never serves a copy its disk kept from before a purge. Why a stream and not pub/sub: pub/sub
drops what a node did not hear; a separate log beside it would need two writes and a merge.

Each node says what it deleted (``HSET assetgate:purge:acks:<id> <node> <counts>``) and that it is
alive (``ZADD assetgate:purge:nodes``, every ``BLOCK_S``); the answering node waits up to
``ACK_WAIT_S`` for every live node and reports who answered and who did not.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from pathlib import Path
from typing import Final, cast

import redis.asyncio
from redis.exceptions import RedisError

from assetgate.admin.node import Apply
from assetgate.admin.orders import Order

log = logging.getLogger("assetgate.purge")

STREAM: Final = "assetgate:purge:log"
ACKS: Final = "assetgate:purge:acks:"
NODES: Final = "assetgate:purge:nodes"
MAX_ENTRIES: Final = 10_000
BLOCK_S: Final = 1.0
LIVE_S: Final = 5.0  # a node that has not said it is alive for this long is not waited for
ACK_WAIT_S: Final = 1.5
ACK_KEEP_S: Final = 300
RETRY_S: Final = 1.0
SEEN_FILE: Final = ".purge-seen"


def node_name() -> str:
    """This process, as the purge's answer names it: host, pid and a few random characters (two
    apps in one process are two nodes)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


Entries = list[tuple[str, dict[bytes, bytes]]]


def _entries(got: object) -> Entries:
    """``XREAD``'s answer (``[[stream, [(id, fields), ...]]]``) as (id, fields) pairs."""
    found: Entries = []
    for _stream, batch in cast(list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]], got):
        found += [(_text(entry_id), fields) for entry_id, fields in batch]
    return found


class PurgeLog:
    def __init__(self, url: str, state_dir: Path, apply: Apply) -> None:
        # Its own client: a blocking read must not share the cache tier's 0.5 s socket timeout.
        self.client = redis.asyncio.Redis.from_url(
            url, socket_connect_timeout=2.0, socket_timeout=BLOCK_S + 5.0
        )
        self.node = node_name()
        self.apply = apply
        self._seen_path = state_dir / SEEN_FILE
        self._last: str | None = None
        self._down = False

    async def publish(self, order: Order) -> str:
        """Append ``order``: its entry id. Raises when Redis cannot take it."""
        entry = await self.client.xadd(
            STREAM, {"order": order.encode()}, maxlen=MAX_ENTRIES, approximate=True
        )
        return _text(entry)

    async def catch_up(self) -> int:
        """Apply the entries since this node last stopped (before it answers anything); how
        many. Redis down: logged, the follower catches up when it is back."""
        try:
            self._last = await self._start_from()
            applied = 0
            while True:
                got = await self.client.xread({STREAM: self._last}, count=100)
                entries = _entries(got)
                if not entries:
                    return applied
                for entry_id, fields in entries:
                    await self._apply(entry_id, fields)
                    applied += 1
        except (RedisError, OSError) as exc:
            self._went_down(exc)
            return 0

    async def _start_from(self) -> str:
        with contextlib.suppress(OSError):
            seen = self._seen_path.read_text().strip()
            if seen:
                return seen
        # A node that never followed the log: everything in it is news to its disk.
        return "0-0"

    async def follow(self) -> None:
        """Forever: say this node is alive, apply each new entry; a lost Redis is waited for
        and the entries missed meanwhile are read when it is back."""
        while True:
            try:
                if self._last is None:
                    self._last = await self._start_from()
                await self.client.zadd(NODES, {self.node: time.time()})
                got = await self.client.xread(
                    {STREAM: self._last}, block=int(BLOCK_S * 1000), count=100
                )
                for entry_id, fields in _entries(got):
                    await self._apply(entry_id, fields)
                if self._down:
                    self._down = False
                    log.warning("purge log reachable again; missed purges applied")
            except (RedisError, OSError) as exc:
                self._went_down(exc)
                await asyncio.sleep(RETRY_S)

    async def _apply(self, entry_id: str, fields: dict[bytes, bytes]) -> None:
        order = Order.decode(fields.get(b"order", b""))
        counts = self.apply(order) if order is not None else {}
        self._last = entry_id
        key = ACKS + entry_id
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hset(key, self.node, json.dumps(counts))
            pipe.expire(key, ACK_KEEP_S)
            await pipe.execute()
        self._remember(entry_id)

    def _remember(self, entry_id: str) -> None:
        tmp = self._seen_path.with_suffix(f".{uuid.uuid4().hex}.tmp")
        try:
            self._seen_path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(entry_id)
            os.replace(tmp, self._seen_path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    async def acks(self, entry_id: str) -> tuple[dict[str, dict[str, int]], list[str]]:
        """What each node reported for ``entry_id``, waiting up to ``ACK_WAIT_S`` for every
        live node; and the live nodes that did not answer in time."""
        deadline = time.monotonic() + ACK_WAIT_S
        while True:
            live = {
                _text(node)
                for node in await self.client.zrangebyscore(NODES, time.time() - LIVE_S, "+inf")
            }
            raw = await self.client.hgetall(ACKS + entry_id)
            answered = {_text(node): json.loads(counts) for node, counts in raw.items()}
            missing = sorted(live - set(answered))
            if not missing or time.monotonic() >= deadline:
                return answered, missing
            await asyncio.sleep(0.05)

    def _went_down(self, exc: BaseException) -> None:
        if not self._down:
            self._down = True
            log.warning("purge log unreachable (%s); purges applied when it is back", exc)

    async def aclose(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.client.zrem(NODES, self.node)
        await self.client.aclose()
