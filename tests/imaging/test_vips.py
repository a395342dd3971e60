"""libvips and process settings for a server: operation cache off, malloc arenas capped."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys

import pytest
import pyvips

from assetgate.imaging.vips import configure, engine_version, malloc_arenas
from assetgate.settings import Settings

# A fresh interpreter: N threads start together and each mallocs; glibc then prints one block per
# arena to stderr (malloc_stats). Whether the cap is asked for comes from argv.
_ARENAS_PROBE = """
import ctypes, sys, threading
from assetgate.imaging.vips import limit_malloc_arenas
if sys.argv[1] == "cap":
    assert limit_malloc_arenas(2)
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
barrier = threading.Barrier(8)
held = []
def work():
    barrier.wait()
    held.append(libc.malloc(1 << 20))
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc.malloc_stats()
"""

glibc_only = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc", reason="malloc arenas are a glibc feature"
)


def _arenas(mode: str, **env: str) -> int:
    environment = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env
    done = subprocess.run(
        [sys.executable, "-c", _ARENAS_PROBE, mode],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
        timeout=60,
    )
    return len(re.findall(r"^Arena \d+:", done.stderr, flags=re.MULTILINE))


@glibc_only
def test_malloc_arenas_are_capped_at_two() -> None:
    assert _arenas("free") > 2  # the control: glibc's default gives new threads new arenas
    assert _arenas("cap") <= 2


@glibc_only
def test_operator_malloc_arena_max_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    from assetgate.imaging.vips import limit_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas(2) is False


def test_one_arena_for_each_thread_that_allocates_unless_set(tmp_path: os.PathLike[str]) -> None:
    assert malloc_arenas(Settings(root=tmp_path, render_workers=3)) == 8
    assert malloc_arenas(Settings(root=tmp_path, render_workers=1)) == 4
    assert malloc_arenas(Settings(root=tmp_path, render_workers=3, malloc_arenas=2)) == 2


@glibc_only
def test_the_server_caps_the_arenas_it_derives(tmp_path: os.PathLike[str]) -> None:
    """``configure`` (the app's lifespan) caps the arenas at the derived count: 4 for one render
    thread, so 8 threads allocating at once share 4 arenas."""
    probe = _ARENAS_PROBE.replace(
        'if sys.argv[1] == "cap":\n    assert limit_malloc_arenas(2)',
        "from assetgate.imaging.vips import configure\n"
        "from assetgate.settings import Settings\n"
        f"configure(Settings(root={str(tmp_path)!r}, render_workers=1))",
    )
    assert "configure(" in probe
    environment = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run(
        [sys.executable, "-c", probe, "configure"],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
        timeout=60,
    )
    assert 2 < len(re.findall(r"^Arena \d+:", done.stderr, flags=re.MULTILINE)) <= 4


def test_configure_turns_the_operation_cache_off(tmp_path: os.PathLike[str]) -> None:
    configure(Settings(root=tmp_path))
    assert pyvips.cache_get_max() == 0
    assert pyvips.cache_get_max_mem() == 0


def test_engine_version_names_the_pipeline_and_libraries() -> None:
    assert re.fullmatch(r"pipeline-\d+/libvips-\d+\.\d+\.\d+/pillow-[\w.]+", engine_version())


@glibc_only
def test_operator_glibc_tunable_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    from assetgate.imaging.vips import limit_malloc_arenas

    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=4")
    assert limit_malloc_arenas(2) is False
