"""libvips configured once for a request server (called from the app's lifespan).

API:
- ``configure(settings)``: operation cache off (it only holds memory when inputs rarely repeat),
  untrusted loaders blocked, per-image threads from ``ASSETGATE_VIPS_CONCURRENCY``, and at most
  two glibc malloc arenas (``limit_malloc_arenas``).
- ``engine_version()``: a string naming the decoders/encoders, part of every image ETag so an
  upgrade that changes output bytes also changes the validators.
"""

from __future__ import annotations

import ctypes
import os
from typing import Final

import PIL
import pyvips

from assetgate import stop
from assetgate.settings import Settings

#: Bumped when assetgate's own image pipeline changes its output for the same request.
PIPELINE_VERSION = 2

M_ARENA_MAX: Final = -8  # glibc <malloc.h>
MALLOC_ARENAS: Final = 2


def configure(settings: Settings) -> None:
    pyvips.cache_set_max(0)
    pyvips.cache_set_max_mem(0)
    pyvips.cache_set_max_files(0)
    # Loaders not hardened against hostile input (magick, matload, ...) are refused outright.
    pyvips.block_untrusted_set(True)
    pyvips.concurrency_set(settings.vips_concurrency)
    limit_malloc_arenas()


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas, unless the operator set ``MALLOC_ARENA_MAX`` or the
    ``glibc.malloc.arena_max`` tunable (which win).

    glibc gives each new thread an arena of its own, up to 8 per core, and memory freed into one
    arena is not reused by the others. Render threads and libvips' workers each touching tens of
    megabytes then leave every arena holding its peak: measured with two worker processes at
    c=16 on 1920x1080 PNG -> WebP, peak RSS 419 MB with the default, 328 MB with two arenas, at
    the same throughput (the fix imgproxy and imaginary users reach for too). Returns whether
    the limit was set (False off glibc, where ``mallopt`` is absent or refuses).
    """
    if "MALLOC_ARENA_MAX" in os.environ or "glibc.malloc.arena_max" in os.environ.get(
        "GLIBC_TUNABLES", ""
    ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_ARENA_MAX, arenas))


def killable(image: pyvips.Image) -> pyvips.Image:
    """``image``, which is about to be computed, killed from libvips' eval callback (once per
    tile or strip) when the current job's ``stop.Stop`` says so: the client went away or the
    render ran out of time. Outside the CPU door it is returned untouched."""
    job = stop.current()
    if job is None:
        return image

    def on_eval(target: pyvips.Image, progress: object) -> None:
        if job.reason is not None:
            target.set_kill(True)

    image.set_progress(True)
    image.signal_connect("eval", on_eval)
    return image


def engine_version() -> str:
    vips = ".".join(str(pyvips.version(i)) for i in range(3))
    return f"pipeline-{PIPELINE_VERSION}/libvips-{vips}/pillow-{PIL.__version__}"
