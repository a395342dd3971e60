"""libvips configured once for a request server (called from the app's lifespan).

API:
- ``configure(settings)``: operation cache off (it only holds memory when inputs rarely repeat),
  untrusted loaders blocked, per-image threads from ``ASSETGATE_VIPS_CONCURRENCY``.
- ``engine_version()``: a string naming the decoders/encoders, part of every image ETag so an
  upgrade that changes output bytes also changes the validators.
"""

from __future__ import annotations

import PIL
import pyvips

from assetgate.settings import Settings

#: Bumped when assetgate's own image pipeline changes its output for the same request.
PIPELINE_VERSION = 2


def configure(settings: Settings) -> None:
    pyvips.cache_set_max(0)
    pyvips.cache_set_max_mem(0)
    pyvips.cache_set_max_files(0)
    # Loaders not hardened against hostile input (magick, matload, ...) are refused outright.
    pyvips.block_untrusted_set(True)
    pyvips.concurrency_set(settings.vips_concurrency)


def engine_version() -> str:
    vips = ".".join(str(pyvips.version(i)) for i in range(3))
    return f"pipeline-{PIPELINE_VERSION}/libvips-{vips}/pillow-{PIL.__version__}"
