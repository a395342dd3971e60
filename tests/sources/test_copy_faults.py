"""Issue 35, items 6, 7 and 13: the source cache when its copies vanish, its disk fills up, or a
crashed run left partial downloads; a real origin on loopback, a real size-limited tmpfs."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.sources.images import quadrant_bmp, size_of, solid_bmp
from tests.sources.servers import Origin

pytestmark = pytest.mark.anyio


@pytest.fixture
def node(
    make_settings: Callable[..., Settings], tmp_path: Path, origin: Origin
) -> Callable[..., Settings]:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "root": f"{origin.base}/static",
            "origin_allow_private": True,
            "source_read_timeout_s": 5.0,
            "source_cache_dir": tmp_path / "sources",
            "result_cache_bytes": 0,  # every request reads its source
            "source_ttl_s": 0,  # every request asks the origin (a 304 when unchanged)
        }
        return make_settings(**{**values, **overrides})

    return build


def copies_in(directory: Path) -> list[Path]:
    return [
        path
        for path in directory.rglob("*")
        if path.is_file() and path.suffix == ".bmp" and path.parent.name != "tmp"
    ]


async def test_a_304_for_a_copy_that_vanished_fetches_it_again(
    node: Callable[..., Settings], origin: Origin
) -> None:
    """Another process sharing the directory evicted the copy: the node sent its validators,
    the origin said 304, and the answer was a 404 for an object that exists."""
    origin.file("/static/q.bmp", quadrant_bmp())
    settings = node()
    async with app_client(settings) as client:
        assert (await client.get("/q.bmp?width=16&format=png")).status_code == 200
        for copy in copies_in(settings.source_cache_dir):
            copy.unlink()
        again = await client.get("/q.bmp?width=16&format=png")
    assert again.status_code == 200, again.text
    assert size_of(again.content) == (16, 12)
    assert "If-None-Match" not in origin.headers[-1]  # fetched whole, not revalidated


async def test_a_copy_vanishing_while_the_origin_answers_304_is_fetched_again(
    node: Callable[..., Settings], origin: Origin
) -> None:
    body = quadrant_bmp()
    tag = '"v1"'
    settings = node()

    def answer(handler: BaseHTTPRequestHandler) -> None:
        if handler.headers.get("If-None-Match") == tag:
            for copy in copies_in(settings.source_cache_dir):  # the other process evicts now
                copy.unlink()
            handler.send_response(304)
            handler.send_header("ETag", tag)
            handler.end_headers()
            return
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("ETag", tag)
        handler.end_headers()
        handler.wfile.write(body)

    origin.routes["/static/q.bmp"] = answer
    async with app_client(settings) as client:
        first = await client.get("/q.bmp?width=16&format=png")
        second = await client.get("/q.bmp?width=16&format=png")
    assert [first.status_code, second.status_code] == [200, 200], second.text
    assert [bool(h.get("If-None-Match")) for h in origin.headers] == [False, True, False]


async def test_partial_downloads_a_crash_left_are_removed_at_start_and_counted(
    node: Callable[..., Settings], origin: Origin
) -> None:
    settings = node()
    tmp = settings.source_cache_dir / "tmp"
    tmp.mkdir(parents=True)
    # No process 999999999 (above pid_max); a name without a pid predates pids in the name.
    left = [tmp / "999999999.aa.part", tmp / "0123456789abcdef.part"]
    for part in left:
        part.write_bytes(b"\0" * 1000)
    live = tmp / f"{os.getppid()}.cc.part"  # a live process's download: left alone
    live.write_bytes(b"\0")
    origin.file("/static/q.bmp", quadrant_bmp())
    async with app_client(settings) as client:
        metrics = (await client.get("/metrics")).text
        assert (await client.get("/q.bmp?width=8")).status_code == 200
    assert not any(part.exists() for part in left)
    assert live.exists()
    assert 'assetgate_source_cache_events_total{event="partial_removed"} 2.0' in metrics


# --- a full disk: a real tmpfs of 2 MiB ---------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (needs root and mount); skipped where it cannot be mounted."""
    mount = shutil.which("mount")
    target = tmp_path / "small"
    target.mkdir()
    if os.geteuid() != 0 or mount is None:
        pytest.skip("mounting a size-limited tmpfs needs root")
    made = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(target)],
        capture_output=True,
        timeout=10,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode(errors='replace')[:200]}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False, timeout=10)


def fill(directory: Path, leave_bytes: int) -> Path:
    """A filler file taking all but ``leave_bytes`` of the filesystem's free space."""
    filler = directory / "filler"
    free = shutil.disk_usage(directory).free
    with filler.open("wb") as out, contextlib.suppress(OSError):
        out.write(b"\0" * max(0, free - leave_bytes))
    return filler


async def test_a_full_disk_evicts_copies_then_answers_503_and_readyz_says_full(
    node: Callable[..., Settings], origin: Origin, small_disk: Path
) -> None:
    """ENOSPC was a 500 with a traceback and /readyz said ok; nothing was evicted."""
    photo = solid_bmp((200, 10, 10), 400, 300)  # 360 KB each
    for name in "abcdef":
        origin.file(f"/static/{name}.bmp", photo)
    settings = node(source_cache_dir=small_disk / "sources")
    async with app_client(settings) as client:
        for name in "ab":
            assert (await client.get(f"/{name}.bmp?width=8")).status_code == 200
        filler = fill(small_disk, 100 * 1024)  # room for neither c nor d until a, b go
        made_room = await client.get("/c.bmp?width=8")
        assert made_room.status_code == 200, made_room.text
        assert len(copies_in(settings.source_cache_dir)) < 3  # a or b evicted for it
        filler.unlink()
        for copy in copies_in(settings.source_cache_dir):
            copy.unlink()  # as another process would: nothing this one can free is left
        filler = fill(small_disk, 0)
        full = await client.get("/d.bmp?width=8")
        ready = await client.get("/readyz")
        metrics = (await client.get("/metrics")).text
        filler.unlink()
        back = await client.get("/e.bmp?width=8")
        ready_again = await client.get("/readyz")
    assert full.status_code == 503
    assert full.json() == {"error": "source cache is full, retry later", "code": 503}
    assert full.headers["retry-after"] == "5"
    assert ready.status_code == 200  # degraded: held copies and other sources still served
    assert ready.json()["checks"]["source_cache"] == "full (new objects answered 503)"
    assert "source_cache" in ready.json()["degraded"]
    assert 'assetgate_source_cache_events_total{event="disk_full"} 1.0' in metrics
    assert 'assetgate_source_cache_events_total{event="evicted_for_space"}' in metrics
    assert back.status_code == 200
    assert ready_again.json()["checks"]["source_cache"] == "ok"
    assert list((settings.source_cache_dir / "tmp").glob("*.part")) == []
