"""Issue 24, item 3: the conversion output is bounded, and its files go as soon as they can.

Twenty small, highly compressible PNGs at ``quality=100`` once made an 811 MB ZIP from a 1.1 MB
request, held on disk for as long as the client kept the connection open. A PNG of a repeated
64x8 noise tile is ~15 KB at 1000x1000 and its WebP at quality 100 ~2.7 MB: here, smaller caps
make the same shape cheap to test, over real HTTP.
"""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from PIL import Image

from assetgate.convert import sending
from assetgate.settings import Settings
from tests.conftest import live_server
from tests.convert.test_uvicorn import wait_empty
from tests.imaging import factory as make

SIDE = 600


def compressible_png(side: int = SIDE, seed: int = 1) -> bytes:
    """A repeated 64x8 noise tile: deflate finds the repeats, a WebP encoder does not."""
    rng = random.Random(seed)
    tile = Image.frombytes("RGB", (64, 8), bytes(rng.randrange(256) for _ in range(64 * 8 * 3)))
    image = Image.new("RGB", (side, side))
    for y in range(0, side, 8):
        for x in range(0, side, 64):
            image.paste(tile, (x, y))
    return make.pillow_bytes(image, "PNG", compress_level=9)


def upload(name: str, data: bytes) -> tuple[str, tuple[str, bytes, str]]:
    return ("images", (name, data, "image/png"))


def test_the_sample_is_a_compression_bomb() -> None:
    import pyvips

    png = compressible_png()
    webp = pyvips.Image.new_from_buffer(png, "").webpsave_buffer(Q=100, effort=2)
    assert len(png) < 20_000
    assert len(webp) > 50 * len(png)


def test_a_file_over_the_per_file_cap_is_413_naming_it(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    settings = make_settings(rate_limit="1000/10 seconds", convert_output_max_bytes=300_000)
    files = [upload("small.png", make.png(64, 48)), upload("bomb.png", compressible_png())]
    with live_server(settings) as base:
        started = time.process_time()  # the server is a thread here: its work is counted
        response = httpx.post(base + "/api/convert", files=files, data={"quality": "100"})
        took = time.process_time() - started
    assert response.status_code == 413
    body = response.json()
    assert body["code"] == 413
    assert "'bomb.png'" in body["error"]
    assert "per file (ASSETGATE_CONVERT_OUTPUT_MAX_BYTES)" in body["error"]
    assert took < 5
    assert wait_empty(private_tmp) == []


def test_a_file_growing_past_20_times_its_upload_is_413_within_the_byte_caps(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    """Issue 35, item 13: a 55 KB PNG converted to a 40.5 MB WebP (740x) within the caps. Here a
    ~15 KB PNG would make a ~2.7 MB WebP (180x) under the default 64 MiB cap; a photo passes."""
    bomb = compressible_png(1000)
    settings = make_settings(rate_limit="1000/10 seconds")
    with live_server(settings) as base:
        refused = httpx.post(
            base + "/api/convert", files=[upload("bomb.png", bomb)], data={"quality": "100"}
        )
        photo = httpx.post(
            base + "/api/convert",
            files=[("images", ("photo.jpg", make.noise_jpeg(1200, 900), "image/jpeg"))],
            data={"quality": "100"},
        )
    assert refused.status_code == 413
    error = refused.json()["error"]
    assert "'bomb.png'" in error
    assert f"its {len(bomb)} bytes, over the limit of 20 times (ASSETGATE_CONVERT_MAX_GROWTH)" in (
        error
    )
    assert photo.status_code == 200
    assert photo.headers["content-type"] == "image/webp"
    assert wait_empty(private_tmp) == []


def test_an_answer_over_the_total_cap_is_413_naming_the_file_that_broke_it(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    settings = make_settings(rate_limit="1000/10 seconds", convert_output_max_total_bytes=2_000_000)
    files = [upload(f"tile{i}.png", compressible_png(seed=i)) for i in range(8)]
    with live_server(settings) as base:
        alone = httpx.post(base + "/api/convert", files=files[:1], data={"quality": "100"})
        assert alone.status_code == 200
        one = len(alone.content)
        assert 300_000 < one < 2_000_000  # a few fit, eight do not
        response = httpx.post(base + "/api/convert", files=files, data={"quality": "100"})
    assert response.status_code == 413
    error = response.json()["error"]
    assert error.startswith("images: 'tile")
    assert "per answer (ASSETGATE_CONVERT_OUTPUT_MAX_TOTAL_BYTES)" in error
    # The file at which the sum in upload order goes over (sizes differ a little by seed).
    named = int(error.split("'tile", 1)[1].split(".png", 1)[0])
    assert named in (2_000_000 // one, 2_000_000 // one + 1), (named, one)
    assert wait_empty(private_tmp) == []


def test_the_uploads_go_before_the_answer_and_the_rest_when_the_client_stalls(
    make_settings: Callable[..., Settings],
    private_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sending, "STALL_S", 1.0)
    settings = make_settings(rate_limit="1000/10 seconds")
    files = [upload(f"tile{i}.png", compressible_png(seed=i)) for i in range(6)]
    with live_server(settings) as base:
        port = int(base.rsplit(":", 1)[1])
        request = httpx.Request("POST", base + "/api/convert", files=files, data={"quality": "100"})
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            head = b"POST /api/convert HTTP/1.1\r\n"  # the headers below hold the Host
            head += b"".join(f"{k}: {v}\r\n".encode() for k, v in request.headers.items())
            sock.sendall(head + b"\r\n" + request.read())
            first = sock.recv(4096)
            assert first.startswith(b"HTTP/1.1 200")
            # The answer is being sent: only the archive is left in the request's directory.
            (workdir,) = private_tmp.iterdir()
            assert [p.name for p in workdir.iterdir()] == ["archive.zip"]
            # The client reads nothing more: after the stall deadline the directory goes.
            started = time.monotonic()
            assert wait_empty(private_tmp, timeout_s=10) == []
            assert time.monotonic() - started < 8  # the stall deadline, not wait_empty's 10 s
