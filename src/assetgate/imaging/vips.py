"""libvips configured once for a request server (called from the app's lifespan)."""

from __future__ import annotations

import pyvips

from assetgate.settings import Settings


def configure(settings: Settings) -> None:
    # The operation cache only holds memory in a server whose inputs rarely repeat.
    pyvips.cache_set_max(0)
    pyvips.cache_set_max_mem(0)
    pyvips.cache_set_max_files(0)
    # Loaders not hardened against hostile input (magick, matload, …) are refused outright.
    pyvips.block_untrusted_set(True)
    pyvips.concurrency_set(settings.vips_concurrency)
