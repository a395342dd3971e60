"""The build pool: where ES module builds run, apart from the work gate's threads.

A build is a node + esbuild process group that may take its whole deadline (3,000 CommonJS files
requiring each other took 20 s). On the work gate, three such builds held every CPU slot and image
renders got 503s (issue 35, item 4). Here builds have their own door, as minifying has
(``minify.pool``): ``ASSETGATE_ESM_BUILD_WORKERS`` threads (half the cores, at least one), each
driving one build, at most ``ASSETGATE_ESM_BUILD_QUEUE`` waiting, each waiting at most a build's
deadline (then 503 with ``Retry-After``). A job whose callers all left is stopped: its process
group is killed (``esm.bundler``).
"""

from __future__ import annotations

import os
from typing import Final

from assetgate.cpu.workgate import WorkGate
from assetgate.settings import Settings

# Laying the package's files out (hard links) before the bundler's own deadline starts.
LAYOUT_SLACK_S: Final = 10.0


def default_build_workers() -> int:
    return max(1, (os.cpu_count() or 1) // 2)


def build_pool(settings: Settings) -> WorkGate:
    return WorkGate(
        settings.esm_build_workers or default_build_workers(),
        settings.esm_build_queue,
        queue_wait_s=settings.esm_build_timeout_s,
        timeout_s=settings.esm_build_timeout_s + LAYOUT_SLACK_S,
    )
