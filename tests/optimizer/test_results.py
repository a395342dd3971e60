"""The optimizer's result cache: HIT/MISS/BYPASS, content keys, one render per miss, restarts."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import pyvips

from tests.conftest import app_client
from tests.serve_process import Start

pytestmark = pytest.mark.anyio

JPEG = {"accept": "image/jpeg"}


def pnm(colour: tuple[int, int, int], width: int = 64, height: int = 48) -> bytes:
    """Raw RGB: two colours of one size have exactly the same number of bytes."""
    return f"P6\n{width} {height}\n255\n".encode() + bytes(colour) * (width * height)


def centre(body: bytes) -> list[float]:
    image = pyvips.Image.new_from_buffer(body, "")
    return list(image.getpoint(image.width // 2, image.height // 2))


def entries(root: Path) -> list[Path]:
    return [
        p for p in root.rglob("*") if p.is_file() and p.parent.name != "tmp" and p.name[0] != "."
    ]


async def test_a_repeat_is_a_hit_with_the_same_bytes_and_etag(
    opt: httpx.AsyncClient, tmp_path: Path
) -> None:
    first = await opt.get("/photo.jpg?w=200", headers=JPEG)
    second = await opt.get("/photo.jpg?w=200", headers=JPEG)
    assert first.status_code == second.status_code == 200
    assert (first.headers["x-optimizer-cache"], second.headers["x-optimizer-cache"]) == (
        "MISS",
        "HIT",
    )
    assert second.content == first.content
    assert second.headers["etag"] == first.headers["etag"]
    assert second.headers["x-output-format"] == "jpeg"
    assert pyvips.Image.new_from_buffer(second.content, "").width == 200
    assert len(entries(tmp_path / "results")) == 1


async def test_turned_off_every_answer_is_bypass(
    custom_client: Callable[..., Any], tmp_path: Path
) -> None:
    async with custom_client(result_cache_bytes=0) as client:
        answers = [await client.get("/photo.jpg?w=120", headers=JPEG) for _ in range(2)]
    assert [a.headers["x-optimizer-cache"] for a in answers] == ["BYPASS", "BYPASS"]
    assert not (tmp_path / "results").exists()


async def test_a_rewrite_with_the_old_size_and_mtime_is_never_answered_from_the_old_entry(
    make_settings: Callable[..., Any], docroot: Path
) -> None:
    source = docroot / "swatch.pnm"
    source.write_bytes(pnm((255, 0, 0)))
    async with app_client(make_settings()) as client:
        red = await client.get("/swatch.pnm?w=32&format=png")
        before = source.stat()
        source.write_bytes(pnm((0, 0, 255)))  # cp -p / rsync -t: same size, old mtime restored
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert source.stat().st_size == before.st_size
        blue = await client.get("/swatch.pnm?w=32&format=png")
    assert red.headers["x-optimizer-cache"] == blue.headers["x-optimizer-cache"] == "MISS"
    assert centre(red.content) == [255, 0, 0]
    assert centre(blue.content) == [0, 0, 255]
    assert blue.headers["etag"] != red.headers["etag"]


async def test_concurrent_identical_misses_render_once(custom_client: Callable[..., Any]) -> None:
    # One render thread and no queue: every job beyond the first running one is a 503.
    async with custom_client(render_workers=1, render_queue=0) as client:
        distinct = await asyncio.gather(
            *(client.get(f"/photo.jpg?w={100 + i}", headers=JPEG) for i in range(8))
        )
        same = await asyncio.gather(
            *(client.get("/photo.jpg?w=300", headers=JPEG) for _ in range(8))
        )
    assert 503 in {r.status_code for r in distinct}  # the requests really did overlap
    assert [r.status_code for r in same] == [200] * 8  # one job served all eight
    assert len({r.content for r in same}) == 1
    assert {r.headers["x-optimizer-cache"] for r in same} <= {"MISS", "HIT"}


async def test_a_damaged_entry_is_a_miss_and_errors_are_never_kept(
    make_settings: Callable[..., Any], files: dict[str, bytes], tmp_path: Path
) -> None:
    settings = make_settings()
    async with app_client(settings) as client:
        good = await client.get("/photo.jpg?w=150", headers=JPEG)
        for _ in range(2):
            bad = await client.get("/fake.jpg?w=150", headers=JPEG)
            assert bad.status_code == 415
            assert "x-optimizer-cache" not in bad.headers
    stored = entries(tmp_path / "results")
    assert len(stored) == 1  # the image; never the error
    stored[0].write_bytes(stored[0].read_bytes()[:-100])  # truncated
    async with app_client(settings) as client:  # a new process: empty memory
        again = await client.get("/photo.jpg?w=150", headers=JPEG)
        assert again.headers["x-optimizer-cache"] == "MISS"
        assert again.content == good.content
        assert (await client.get("/photo.jpg?w=150", headers=JPEG)).headers[
            "x-optimizer-cache"
        ] == "HIT"


def test_the_result_cache_survives_a_restart_of_the_server(
    serve_cli: Start, docroot: Path, tmp_path: Path
) -> None:
    (docroot / "swatch.pnm").write_bytes(pnm((0, 128, 0), 400, 300))
    answers = []
    for _ in range(2):
        server = serve_cli(root=str(docroot), result_cache_dir=str(tmp_path / "shared"))
        answers.append(httpx.get(f"{server.base}/swatch.pnm?w=100&format=png", timeout=30))
        server.stop()
    assert [a.status_code for a in answers] == [200, 200]
    assert [a.headers["x-optimizer-cache"] for a in answers] == ["MISS", "HIT"]
    assert answers[1].content == answers[0].content
    assert centre(answers[1].content) == [0, 128, 0]
