"""Shared fingerprints: what each node learnt about a remote object, for the other nodes.

With a result store, a node that fingerprinted a remote copy shares ``{fingerprint, size, mtime,
checked}`` under ``sources/<the copy's ident>`` (``share``). A node that holds no copy of the
object can then name the variant's ETag, the result store's key, without fetching the source
(``read``): node B answers what node A rendered. Every node names an object alike (the source
cache's ident, known without I/O), so the reader can start its other read by that name (the
variant's alias, ``optimizer.variants``) while the fingerprint is read: one round trip (from
Redis when ``ASSETGATE_REDIS_URL`` is set: the entry is kept there too, for the TTL; else from
the store, beside the variant). An entry is trusted for ``ASSETGATE_SOURCE_TTL_S`` after the node
that wrote it last heard from the source, the same staleness every node's own copy is allowed
(``0``: never trusted).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Final

from assetgate.cache import SharedTier
from assetgate.cache.objects import ObjectTier
from assetgate.serving.versions import FileVersion
from assetgate.sources.copies import RemoteCopy
from assetgate.web.caching import http_date

PREFIX: Final = "sources/"
#: A version read from another node's entry has no stat identity here: no file is held.
NOT_HERE: Final = (0, 0, 0, 0, 0)
_FINGERPRINT = re.compile(r"[0-9a-f]{32}")


class SharedFingerprints:
    """The index of shared fingerprints in the result store (and Redis, when configured)."""

    def __init__(self, index: ObjectTier, fast_index: SharedTier | None, ttl_s: float) -> None:
        self.index = index
        self.fast_index = fast_index
        self.ttl_s = ttl_s  # ASSETGATE_SOURCE_TTL_S: how long an entry is trusted
        self._writes: set[asyncio.Task[None]] = set()

    async def read(self, ident: str) -> FileVersion | None:
        """The version of the object ``ident`` another node identified and shared, or None (no
        recent entry). It is a version without a file here: enough for its variants' validators
        and for reading what that node rendered, never for rendering."""
        data = None
        if self.fast_index is not None:
            data = await self.fast_index.get(PREFIX + ident)
        if data is None:
            data = await self.index.get(PREFIX + ident, counted=False)
        return None if data is None else self._trusted(data)

    def _trusted(self, data: bytes) -> FileVersion | None:
        try:
            entry = json.loads(data)
            fingerprint, size = str(entry["fingerprint"]), int(entry["size"])
            mtime, checked = float(entry["mtime"]), float(entry["checked"])
        except (ValueError, KeyError, TypeError):
            return None
        if not _FINGERPRINT.fullmatch(fingerprint) or time.time() - checked >= self.ttl_s:
            return None
        return FileVersion(NOT_HERE, size, mtime, fingerprint, http_date(mtime), None)

    def share(self, copy: RemoteCopy, version: FileVersion) -> None:
        """After a request fingerprinted ``copy``: share its fingerprint (once per answer from
        the source, in the background). A copy dropped or replaced since the request found it
        (a purge, a newer object) shares nothing: its fingerprint may no longer be the object's."""
        entry = copy.entry
        if not entry.held or entry.indexed >= entry.checked or version.size != entry.size:
            return
        entry.indexed = entry.checked
        checked = time.time() - (time.monotonic() - entry.checked)
        record = {
            "fingerprint": version.fingerprint,
            "size": version.size,
            "mtime": version.mtime,
            "checked": checked,
        }
        data = json.dumps(record).encode()
        self.index.put_later(PREFIX + copy.ident, data)
        if self.fast_index is not None and self.ttl_s > 0:
            put = self.fast_index.set(PREFIX + copy.ident, data, self.ttl_s)
            task = asyncio.get_running_loop().create_task(put)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    async def purge(self, idents: set[str]) -> int:
        """Delete the entries of the objects ``idents`` (the result store's index and Redis): no
        node names a purged object's variants without asking its source again. How many were
        held. Raises when the store or Redis cannot answer."""
        names = sorted(PREFIX + ident for ident in idents)
        deleted = await self.index.delete(names)
        if self.fast_index is not None:
            deleted = max(deleted, await self.fast_index.delete(names))
        return deleted

    async def aclose(self) -> None:
        if self._writes:  # fingerprints on their way to Redis: bounded by its op timeout
            await asyncio.wait(set(self._writes), timeout=2.0)
