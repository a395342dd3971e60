"""``assetgate serve`` end to end: the real CLI and uvicorn on loopback, the packaged demo root."""

from __future__ import annotations

import socket

import httpx
import pytest
import pyvips

from assetgate.imaging.formats import sniff
from tests.serve_process import Start


@pytest.fixture
def served(serve_cli: Start) -> str:
    return serve_cli(rate_limit="2/1 minute").base


def raw_get(base: str, target: str) -> bytes:
    """A request line sent byte for byte (an HTTP client library would normalise '..')."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_serve_with_no_arguments_serves_the_demo_root(served: str) -> None:
    response = httpx.get(f"{served}/landscape.jpg?width=200", headers={"accept": "image/jpeg"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/jpeg"
    image = pyvips.Image.new_from_buffer(response.content, "")
    assert (image.width, image.height) == (200, 133)
    webp = httpx.get(f"{served}/spinner.gif?width=48", headers={"accept": "image/webp"})
    assert sniff(webp.content) == "webp"
    assert pyvips.Image.new_from_buffer(webp.content, "", n=-1).get("n-pages") == 8
    head = httpx.head(f"{served}/landscape.jpg?width=200", headers={"accept": "image/jpeg"})
    assert head.headers["content-length"] == str(len(response.content))
    not_modified = httpx.get(
        f"{served}/landscape.jpg?w=200",
        headers={"accept": "image/jpeg", "if-none-match": response.headers["etag"]},
    )
    assert not_modified.status_code == 304
    for target in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/?file=../../etc/passwd"):
        answer = raw_get(served, target)
        assert answer.startswith(b"HTTP/1.1 404"), answer[:80]
        assert b"root:" not in answer
    assert httpx.get(f"{served}/demo.css").status_code == 200
    assert httpx.get(f"{served}/index.html").text.startswith("<!doctype html>")


def test_a_forged_forwarded_for_buys_no_fresh_budget(served: str) -> None:
    """uvicorn's own proxy-header handling is off: only ASSETGATE_TRUSTED_PROXIES is believed."""
    statuses = [
        httpx.post(
            f"{served}/api/convert",
            files={"other": ("a.txt", b"x")},
            headers={"x-forwarded-for": f"203.0.113.{n}"},
        ).status_code
        for n in range(3)
    ]
    assert statuses == [400, 400, 429]
