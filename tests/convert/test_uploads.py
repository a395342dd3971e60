"""Malformed and hostile multipart bodies: always a JSON 4xx, never a 500, nothing left on disk."""

from __future__ import annotations

import io
import zipfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.convert.samples import sample
from tests.waiting import wait_until_async

pytestmark = pytest.mark.anyio

BOUNDARY = "xYzZy0123"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


def part(name: str, data: bytes, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"'
    if filename is not None:
        disposition += f'; filename="{filename}"'
    head = f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
    return head + data + b"\r\n"


def body(*parts: bytes) -> bytes:
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


@pytest.fixture
async def client(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(make_settings(rate_limit="1000/10 seconds")) as c:
        yield c


async def post(client: httpx.AsyncClient, content: bytes, content_type: str) -> httpx.Response:
    return await client.post(
        "/api/convert", content=content, headers={"content-type": content_type}
    )


async def test_hand_built_body_converts(client: httpx.AsyncClient, private_tmp: Path) -> None:
    """The helpers below build valid bodies: the malformed ones differ only where they say."""
    png = sample("png").data
    content = body(part("quality", b"70"), part("images", png, "a.png"))
    response = await post(client, content, MULTIPART)
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/webp"
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "content_type", "message"),
    [
        (b"", "multipart/form-data", "request body: multipart boundary missing"),
        (b"", f"{MULTIPART}", "request body: multipart data ended before its closing boundary"),
        (
            b"garbage that is not multipart at all",
            MULTIPART,
            "request body: malformed multipart data",
        ),
        (
            # Starts well, then the client stops sending: no closing boundary.
            part("images", sample("png").data, "a.png")[:-40],
            MULTIPART,
            "request body: multipart data ended before its closing boundary",
        ),
        (
            # A part without Content-Disposition.
            f"--{BOUNDARY}\r\nContent-Type: image/png\r\n\r\nxx\r\n--{BOUNDARY}--\r\n".encode(),
            MULTIPART,
            "request body: a part has no Content-Disposition form-data name",
        ),
        (
            # A Content-Disposition without a name.
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; filename="a.png"\r\n\r\nxx\r\n'
            f"--{BOUNDARY}--\r\n".encode(),
            MULTIPART,
            "request body: a part has no Content-Disposition form-data name",
        ),
        (
            # Header line without a colon.
            f"--{BOUNDARY}\r\nthis is no header\r\n\r\nxx\r\n--{BOUNDARY}--\r\n".encode(),
            MULTIPART,
            "request body: malformed multipart data",
        ),
        (
            body(part("images", b"x", "a.png")),
            "multipart/form-data; boundary=" + "b" * 300,
            "request body: multipart boundary is too long",
        ),
        (
            body(part("quality", b"9" * 2000), part("images", b"x", "a.png")),
            MULTIPART,
            "request body: form field 'quality' exceeds 1024 bytes",
        ),
        (
            body(*[part(f"f{i}", b"1") for i in range(40)]),
            MULTIPART,
            "request body: more than 32 form fields",
        ),
    ],
)
async def test_malformed_body_is_400(
    client: httpx.AsyncClient,
    private_tmp: Path,
    content: bytes,
    content_type: str,
    message: str,
) -> None:
    response = await post(client, content, content_type)
    assert response.status_code == 400, response.text
    assert response.json() == {"error": message, "code": 400}
    assert "RateLimit" in response.headers
    assert list(private_tmp.iterdir()) == []


async def test_unknown_parts_are_skipped_not_stored(
    client: httpx.AsyncClient, private_tmp: Path
) -> None:
    big = b"z" * 300_000
    content = body(part("attachment", big, "big.bin"), part("images", sample("bmp").data, "a.bmp"))
    response = await post(client, content, MULTIPART)
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/webp"


async def test_first_value_of_a_repeated_option_wins(client: httpx.AsyncClient) -> None:
    png = sample("png").data
    content = body(part("lossless", b"1"), part("lossless", b"junk"), part("images", png, "a.png"))
    response = await post(client, content, MULTIPART)
    assert response.status_code == 200
    assert b"VP8L" in response.content


async def test_file_names_in_utf8_and_with_quotes(client: httpx.AsyncClient) -> None:
    png = sample("png").data
    content = body(part("images", png, "résumé.png"), part("images", png, 'say \\"hi\\".png'))
    response = await post(client, content, MULTIPART)
    assert response.status_code == 200, response.text
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert archive.namelist() == ["résumé.webp", "say _hi_.webp"]


async def test_cap_on_file_count_counts_parts_as_they_start(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    png = sample("png").data
    content = body(*[part("images", png, f"{i}.png") for i in range(4)])
    async with app_client(make_settings(upload_max_files=3)) as c:
        response = await post(c, content, MULTIPART)
    assert response.status_code == 413
    assert response.json() == {"error": "images: more than 3 files in one request", "code": 413}
    assert list(private_tmp.iterdir()) == []


async def test_options_after_the_files_still_apply(client: httpx.AsyncClient) -> None:
    """Files are converted as they arrive; a later option field makes them run again."""
    tiff, png = sample("tiff").data, sample("png").data
    first = body(part("quality", b"5"), part("images", tiff, "a.tiff"))
    last = body(part("images", tiff, "a.tiff"), part("quality", b"5"))
    default = body(part("images", tiff, "a.tiff"))
    answers = [await post(client, content, MULTIPART) for content in (first, last, default)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert answers[0].content == answers[1].content != answers[2].content
    lossless_last = body(part("images", png, "a.png"), part("images", png, "b.png"))
    lossless_last = lossless_last.replace(
        f"--{BOUNDARY}--".encode(), part("lossless", b"1") + f"--{BOUNDARY}--".encode()
    )
    response = await post(client, lossless_last, MULTIPART)
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        for name in ("a.webp", "b.webp"):
            assert b"VP8L" in archive.read(name)


async def test_bad_option_before_the_files_is_400(client: httpx.AsyncClient) -> None:
    content = body(part("quality", b"loud"), part("images", sample("png").data, "a.png"))
    response = await post(client, content, MULTIPART)
    assert response.status_code == 400
    assert response.json()["error"] == "quality: expected an integer 0..100, got 'loud'"


async def test_conversion_starts_before_the_body_ends(
    client: httpx.AsyncClient, private_tmp: Path
) -> None:
    png = sample("png").data
    # The first part ends where the next boundary line is seen, so that line is sent with it.
    delimiter = f"--{BOUNDARY}\r\n".encode()
    head = part("images", png, "a.png") + delimiter
    tail = body(part("images", png, "b.png")).removeprefix(delimiter)

    async def chunks() -> AsyncIterator[bytes]:
        yield head
        # Hold the rest of the body back until the first file has been converted.
        await wait_until_async(
            lambda: list(private_tmp.glob("*/output-*.webp")),
            timeout=30,
            message="the first file converted while the body was open",
        )
        yield tail

    response = await client.post(
        "/api/convert", content=chunks(), headers={"content-type": MULTIPART}
    )
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert archive.namelist() == ["a.webp", "b.webp"]
    assert list(private_tmp.iterdir()) == []


async def test_cap_hit_after_a_conversion_started_leaves_nothing(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    content = body(
        part("images", sample("bmp").data, "small.bmp"),
        part("images", b"\xff\xd8\xff" + b"\x00" * 50_000, "big.jpg"),
    )
    async with app_client(make_settings(upload_max_bytes=20_000)) as c:
        response = await post(c, content, MULTIPART)
    assert response.status_code == 413
    assert response.json()["error"] == "images: file 'big.jpg' exceeds 20000 bytes"
    assert list(private_tmp.iterdir()) == []
