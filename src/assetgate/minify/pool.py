"""Where a CSS/JS render runs: minifying in the minify pool, a plain gzip through the work gate.

A transformation goes through ``minify`` (``ASSETGATE_MINIFY_WORKERS`` threads, each driving one
``minify.sandbox`` process, and a ``ASSETGATE_MINIFY_TIMEOUT_S`` deadline that kills the process):
however hostile the file, minifying holds at most that many cores for that long, and image work
through the work gate goes on. A job past the deadline answers the original bytes with
``X-Minify-Skipped: timeout`` (docs/optimizer.md); a client that leaves kills its job too.
A gzip alone is linear and cheap, so it goes through the work gate with the images.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from starlette.types import Receive

from assetgate.cpu.workgate import WorkGate
from assetgate.minify.render import Rendered, render_file
from assetgate.minify.sandbox import Sandbox
from assetgate.minify.spec import AssetPlan
from assetgate.settings import Settings


def default_minify_workers() -> int:
    """Half the cores, at least one: the rest stays for images whatever the CSS/JS asks."""
    return max(1, (os.cpu_count() or 1) // 2)


@dataclass(slots=True)
class MinifyPool:
    renders: WorkGate  # the shared work gate (images, gzip)
    minify: WorkGate  # the minifier door: as many threads as sandbox processes
    sandbox: Sandbox

    @classmethod
    def from_settings(cls, settings: Settings, renders: WorkGate) -> MinifyPool:
        workers = settings.minify_workers or default_minify_workers()
        return cls(
            renders=renders,
            minify=WorkGate(
                workers,
                settings.render_queue,
                queue_wait_s=settings.render_queue_wait_s,
                timeout_s=settings.minify_timeout_s,
            ),
            sandbox=Sandbox(workers),
        )

    async def render(
        self, path: Path, plan: AssetPlan, max_bytes: int, receive: Receive | None = None
    ) -> Rendered:
        if plan.transform == "none":
            return await self.renders.run(render_file, path, plan, max_bytes, receive=receive)
        transform = self.sandbox.transform
        return await self.minify.run(render_file, path, plan, max_bytes, transform, receive=receive)

    def close(self) -> None:
        self.minify.close()
        self.sandbox.close()
