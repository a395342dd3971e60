"""libvips configured once for a request server (called from the app's lifespan).

API:
- ``configure(settings)``: operation cache off (it only holds memory when inputs rarely repeat),
  untrusted loaders blocked, per-image threads from ``ASSETGATE_VIPS_CONCURRENCY``, at most
  glibc malloc arenas capped by ``ASSETGATE_MALLOC_ARENAS`` (``malloc_arenas``,
  ``limit_malloc_arenas``), libvips' INFO/DEBUG lines kept in C unless the ``pyvips`` logger
  wants them (``route_libvips_log``).
- ``killable(image)``: a context manager; the computation of ``image`` inside it is killed when
  the current job's ``stop.Stop`` is abandoned or expires.
- ``engine_version()``: a string naming the decoders/encoders, part of every image ETag so an
  upgrade that changes output bytes also changes the validators.
"""

from __future__ import annotations

import ctypes
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import PIL
import pyvips

from assetgate.cpu import stop
from assetgate.settings import Settings

#: Bumped when assetgate's own image pipeline changes its output for the same request.
PIPELINE_VERSION = 4

M_ARENA_MAX: Final = -8  # glibc <malloc.h>
# GLib <gmessages.h> levels: fatal/recursion flags, error, critical, warning, message.
_WARNING_AND_UP: Final = 1 | 2 | 1 << 2 | 1 << 3 | 1 << 4 | 1 << 5
_ALL_LEVELS: Final = _WARNING_AND_UP | 1 << 6 | 1 << 7  # ... and info, debug


def configure(settings: Settings) -> None:
    pyvips.cache_set_max(0)
    pyvips.cache_set_max_mem(0)
    pyvips.cache_set_max_files(0)
    # Loaders not hardened against hostile input (magick, matload, ...) are refused outright.
    pyvips.block_untrusted_set(True)
    pyvips.concurrency_set(settings.vips_concurrency)
    limit_malloc_arenas(malloc_arenas(settings))
    route_libvips_log(logging.getLogger("pyvips").isEnabledFor(logging.INFO))


def route_libvips_log(verbose: bool) -> None:
    """Which libvips log lines pyvips' handler passes to Python's ``pyvips`` logger.

    pyvips takes every level, but the server keeps that logger at WARNING (``operations.logs``),
    so the ~12 INFO lines of each render ("selected loader", "threadpool completed", ...) each made
    a trip from C into Python, taking the GIL, only to be dropped there (visible in a ``perf``
    profile of the 12 MP JPEG -> 800 path). Not verbose: INFO and DEBUG stay with GLib's default
    handler, which drops them unless ``G_MESSAGES_DEBUG`` asks for them."""
    glib, ffi = pyvips.glib_lib, pyvips.ffi
    glib.g_log_remove_handler(b"VIPS", pyvips._log_handler_id)
    levels = _ALL_LEVELS if verbose else _WARNING_AND_UP
    pyvips._log_handler_id = glib.g_log_set_handler(
        b"VIPS", levels, pyvips._log_handler_cb, ffi.NULL
    )


def malloc_arenas(settings: Settings) -> int:
    """``ASSETGATE_MALLOC_ARENAS``, or one arena for each thread that allocates at once: every
    render thread and its libvips worker, the event loop and one more."""
    return settings.malloc_arenas or 2 * settings.render_workers + 2


def limit_malloc_arenas(arenas: int) -> bool:
    """Cap glibc's malloc arenas, unless the operator set ``MALLOC_ARENA_MAX`` or the
    ``glibc.malloc.arena_max`` tunable (which win).

    glibc gives each new thread an arena of its own, up to 8 per core, and memory freed into one
    arena is not reused by the others: fewer arenas keep less memory at the peak. Too few make
    the threads that allocate at once queue for an arena's lock. Two arenas (the former cap,
    chosen for RSS) cost 0.4 ms of CPU per 1 MP render at c=4 (6 % of the throughput) against
    one arena per allocating thread, for 10-20 MiB less peak RSS at c=16 (docs/benchmarks.md,
    "Malloc arenas"). Returns whether the limit was set (False off glibc, where ``mallopt`` is
    absent or refuses).
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


@contextmanager
def killable(image: pyvips.Image) -> Iterator[pyvips.Image]:
    """``image``, to be computed inside the block; libvips ends that computation at its next
    tile when the current job's ``stop.Stop`` is set from another thread (the client went away,
    or the render ran out of time). Outside the CPU door nothing is registered."""
    job = stop.current()
    if job is None:
        yield image
        return
    with job.watching(lambda: image.set_kill(True)):
        yield image


def engine_version() -> str:
    vips = ".".join(str(pyvips.version(i)) for i in range(3))
    return f"pipeline-{PIPELINE_VERSION}/libvips-{vips}/pillow-{PIL.__version__}"
