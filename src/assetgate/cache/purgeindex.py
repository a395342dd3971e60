"""The purge index: a source path -> the tier keys kept for it, so a purge finds every variant.

The result cache is keyed by ETag (engine, content fingerprint, variant): nothing in a key names
the path, and a path's variants are unbounded (every width, format, quality). So whoever stores an
entry for a path also adds its tier key here (``Cache.put`` / ``share_as`` with ``path``): the
variant's key and the alias "by source" a remote copy's variant is also stored under. A purge
takes the paths it names (and every path under a prefix) with their keys, and deletes those keys
in every tier (docs/caching.md, "Purge").

With ``ASSETGATE_REDIS_URL`` the index is one Redis set per path (``assetgate:purge:path:<path>``),
so every node adds to one index and the node that answers the purge finds what the others
stored; a prefix is a ``SCAN`` over those names. Without Redis it is this process's own memory,
bounded (``MAX_LOCAL_PATHS``): one process is then all there is to purge. An add is a background
write that never delays an answer; Redis down loses the add (logged once, by the Redis tier's rule).
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Final

import redis.asyncio
from cachetools import LRUCache
from redis.exceptions import RedisError

log = logging.getLogger("assetgate.cache")

PREFIX: Final = "assetgate:purge:path:"
MAX_LOCAL_PATHS: Final = 100_000
MAX_PENDING: Final = 256
OP_TIMEOUT_S: Final = 2.0
_GLOB: Final = re.compile(r"([*?\[\]\\])")


def glob_escape(text: str) -> str:
    """``text`` literally inside a Redis ``MATCH`` pattern."""
    return _GLOB.sub(r"\\\1", text)


class PurgeIndex:
    def __init__(self, client: redis.asyncio.Redis | None = None) -> None:
        self.client = client
        self._local: LRUCache[str, set[str]] = LRUCache(MAX_LOCAL_PATHS)
        self._adds: set[asyncio.Task[None]] = set()
        self._warned = False

    def add(self, path: str, key: str) -> None:
        """Remember that ``key`` (a tier key) was stored for ``path``; in the background."""
        if self.client is None:
            self._local.setdefault(path, set()).add(key)
            return
        if len(self._adds) >= MAX_PENDING:
            return
        task = asyncio.get_running_loop().create_task(self._add(path, key))
        self._adds.add(task)
        task.add_done_callback(self._adds.discard)

    async def _add(self, path: str, key: str) -> None:
        assert self.client is not None
        try:
            async with asyncio.timeout(OP_TIMEOUT_S):
                await self.client.sadd(PREFIX + path, key)
        except (RedisError, OSError, TimeoutError) as exc:
            if not self._warned:
                self._warned = True
                log.warning("purge index not written (%s); a purge may miss a variant", exc)

    async def settle(self) -> None:
        """Let the adds in flight land (a purge right after a render must see its keys)."""
        if self._adds:
            await asyncio.wait(set(self._adds), timeout=OP_TIMEOUT_S)

    async def take(self, paths: list[str], prefixes: list[str]) -> dict[str, set[str]]:
        """The paths named, and every indexed path under a prefix, with their keys; taken out
        of the index (a purged path starts over). Raises ``RedisError``/``OSError`` when Redis
        cannot answer: a purge must not claim to have found nothing."""
        await self.settle()
        if self.client is None:
            named = set(paths) | {
                path for path in list(self._local) if path.startswith(tuple(prefixes))
            }
            return {path: self._local.pop(path, set()) for path in named}
        client = self.client
        names = {PREFIX + path for path in paths}
        for prefix in prefixes:
            async for found in client.scan_iter(
                match=PREFIX + glob_escape(prefix) + "*", count=1000
            ):
                names.add(found.decode() if isinstance(found, bytes) else str(found))
        taken: dict[str, set[str]] = {}
        for name in sorted(names):
            async with client.pipeline(transaction=True) as pipe:
                pipe.smembers(name)
                pipe.delete(name)
                members, _ = await pipe.execute()
            taken[name.removeprefix(PREFIX)] = {
                member.decode() if isinstance(member, bytes) else str(member) for member in members
            }
        return taken
