"""The conversion interface over a real uvicorn on loopback (real sockets, real HTTP/1.1)."""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import live_server
from tests.convert.samples import MAKERS, decode_webp, sample
from tests.waiting import wait_until


@pytest.fixture
def server(make_settings: Callable[..., Settings], private_tmp: Path) -> Iterator[str]:
    settings = make_settings(rate_limit="1000/10 seconds", upload_max_total_bytes=6_000_000)
    with live_server(settings) as base:
        yield base


def wait_empty(directory: Path, timeout_s: float = 10.0) -> list[Path]:
    """What is left in ``directory`` once it is empty, or after ``timeout_s``."""
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not list(directory.iterdir()), timeout=timeout_s)
    return list(directory.iterdir())


def test_every_format_over_real_http(server: str, private_tmp: Path) -> None:
    items = [sample(kind) for kind in MAKERS]
    uploads = [("images", (s.name, s.data, "application/octet-stream")) for s in items]
    with httpx.Client(base_url=server, timeout=30) as client:
        response = client.post("/api/convert", files=uploads)
        single = client.post("/api/convert", files=uploads[:1])
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    assert response.headers["ratelimit-policy"] == '"default";q=1000;w=10'
    assert "transfer-encoding" not in response.headers  # sized, not chunked
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert archive.namelist() == [s.name.rsplit(".", 1)[0] + ".webp" for s in items]
        for s in items:
            webp = archive.read(s.name.rsplit(".", 1)[0] + ".webp")
            assert decode_webp(webp) == (s.width, s.height, s.frames)
    assert single.status_code == 200
    assert single.headers["content-type"] == "image/webp"
    assert decode_webp(single.content) == (items[0].width, items[0].height, 1)
    assert wait_empty(private_tmp) == []


def test_oversized_upload_is_413_over_real_http(server: str, private_tmp: Path) -> None:
    big = b"\xff\xd8\xff" + b"\x00" * 7_000_000
    with httpx.Client(base_url=server, timeout=30) as client:
        response = client.post("/api/convert", files=[("images", ("big.jpg", big, "image/jpeg"))])
    assert response.status_code == 413
    assert response.json() == {"error": "request body exceeds 6000000 bytes", "code": 413}
    assert wait_empty(private_tmp) == []


def test_client_vanishing_mid_upload_leaves_nothing_behind(
    server: str, private_tmp: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host, port = server.removeprefix("http://").split(":")
    head = (
        "POST /api/convert HTTP/1.1\r\n"
        f"Host: {host}\r\n"
        "Content-Type: multipart/form-data; boundary=B0UND\r\n"
        "Content-Length: 1000000\r\n\r\n"
        "--B0UND\r\n"
        'Content-Disposition: form-data; name="images"; filename="a.png"\r\n\r\n'
    ).encode()
    with socket.create_connection((host, int(port))) as conn:
        conn.sendall(head + b"\x89PNG\r\n\x1a\n" + b"\x00" * 200_000)
        # The upload is being written to disk.
        wait_until(lambda: list(private_tmp.glob("*/upload-0")))
    assert wait_empty(private_tmp) == []
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    # And the server still answers.
    with httpx.Client(base_url=server, timeout=10) as client:
        assert client.get("/healthz").status_code == 200


def test_client_vanishing_mid_download_leaves_nothing_behind(
    server: str, private_tmp: Path
) -> None:
    """A large ZIP is streamed from disk; a client that stops reading must not leak it."""
    noisy = sample("tiff")
    uploads = [("images", (f"{i}.tiff", noisy.data, "image/tiff")) for i in range(3)]
    big = photo_like()
    uploads += [("images", (f"big{i}.png", big, "image/png")) for i in range(2)]
    with httpx.Client(base_url=server, timeout=30) as client:
        fields = {"quality": "100"}
        with client.stream("POST", "/api/convert", files=uploads, data=fields) as response:
            assert response.status_code == 200
            assert int(response.headers["content-length"]) > 1_000_000
            next(response.iter_raw(1024))
        # Leaving the block closes the connection with most of the body unread.
    assert wait_empty(private_tmp) == []


def photo_like() -> bytes:
    """A 800x600 noisy PNG: its WebP stays large, so the ZIP spans many chunks."""
    import pyvips

    noise = pyvips.Image.gaussnoise(800, 600, sigma=80, mean=128, seed=3)
    image = noise.bandjoin([noise.rot180(), noise.flip("horizontal")]).cast("uchar")
    return bytes(image.copy(interpretation="srgb").pngsave_buffer(compression=1))
