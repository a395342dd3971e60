"""What the package library's lifespan builds and its routes share: the store, the packages, what
may be served, the ES module builder, search, the page's files, and the access-time writes still
running."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from assetgate.packages.esm.modules import Modules
from assetgate.packages.ingest import Packages
from assetgate.packages.policy import OPEN, ServePolicy
from assetgate.packages.search import Search
from assetgate.packages.store import Store
from assetgate.web.static import StaticFile

log = logging.getLogger("assetgate.packages")


@dataclass(slots=True)
class PackagesState:
    store: Store
    packages: Packages
    modules: Modules
    search: Search
    static: Mapping[str, StaticFile]
    policy: ServePolicy = OPEN
    flushing: set[asyncio.Future[None]] = field(default_factory=set)

    def flush_touches_soon(self) -> None:
        """Write the batch of access times on a worker thread, without making the answer wait.

        The job is held until it ends: its failure is logged, and the lifespan waits for it
        (``settle``) before the store closes, instead of racing the close."""
        job = asyncio.get_running_loop().run_in_executor(None, self.store.flush_touches)
        self.flushing.add(job)
        job.add_done_callback(self._flushed)

    def _flushed(self, job: asyncio.Future[None]) -> None:
        self.flushing.discard(job)
        error = None if job.cancelled() else job.exception()
        if error is not None:
            log.warning("package store: access times not written (%s: %s)",
                        type(error).__name__, error)  # fmt: skip

    async def settle(self) -> None:
        """Wait for the access-time writes still running (their failures are logged)."""
        await asyncio.gather(*self.flushing, return_exceptions=True)
