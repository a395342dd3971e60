"""POST /api/convert through the real app (ASGI): every input format, ZIPs, every §7.2 row."""

from __future__ import annotations

import io
import threading
import zipfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import httpx
import pytest
from PIL import Image

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.convert.samples import (
    MAKERS,
    Sample,
    decode_webp,
    jpeg_with_metadata,
    riff_chunks,
    sample,
)
from tests.cpu.gates import admitted
from tests.errors import assert_json_error
from tests.waiting import wait_until_async

pytestmark = pytest.mark.anyio

Files = list[tuple[str, tuple[str, bytes, str]]]


def files(*samples: Sample) -> Files:
    return [("images", (s.name, s.data, "application/octet-stream")) for s in samples]


@pytest.fixture
async def convert_client(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> AsyncIterator[httpx.AsyncClient]:
    # A generous budget: these tests are about conversion, not the rate limit.
    async with app_client(make_settings(rate_limit="1000/10 seconds")) as client:
        yield client


def assert_error(response: httpx.Response, status: int, *fragments: str) -> dict[str, object]:
    body = assert_json_error(response, status, *fragments)
    if status == 500:
        assert isinstance(body["error_id"], str)
        assert len(body["error_id"]) >= 8
    assert "upload-" not in response.text  # never the work directory's name
    return body


# --- success ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(MAKERS))
async def test_each_input_format_becomes_one_webp(
    convert_client: httpx.AsyncClient, kind: str, private_tmp: Path
) -> None:
    item = sample(kind)
    response = await convert_client.post("/api/convert", files=files(item))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/webp"
    stem = item.name.rsplit(".", 1)[0]
    assert response.headers["content-disposition"] == f'attachment; filename="{stem}.webp"'
    assert int(response.headers["content-length"]) == len(response.content)
    assert decode_webp(response.content) == (item.width, item.height, item.frames)
    assert "RateLimit" in response.headers
    assert "RateLimit-Policy" in response.headers
    assert list(private_tmp.iterdir()) == []


async def test_every_format_in_one_zip_in_upload_order(
    convert_client: httpx.AsyncClient, private_tmp: Path
) -> None:
    items = [sample(kind) for kind in MAKERS]
    response = await convert_client.post("/api/convert", files=files(*items))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    assert response.headers["content-disposition"] == 'attachment; filename="images.zip"'
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert names == [item.name.rsplit(".", 1)[0] + ".webp" for item in items]
        for name, item in zip(names, items, strict=True):
            info = archive.getinfo(name)
            assert info.compress_type == zipfile.ZIP_STORED
            assert decode_webp(archive.read(name)) == (item.width, item.height, item.frames)
    assert list(private_tmp.iterdir()) == []


async def test_zip_names_are_unique_and_sanitised(convert_client: httpx.AsyncClient) -> None:
    png = sample("png").data
    uploads = [
        ("images", ("a.png", png, "image/png")),
        ("images", ("../../etc/a.png", png, "image/png")),
        ("images", ("A.PNG", png, "image/png")),
        ("images", ("C:\\temp\\b.png", png, "image/png")),
        ("images", ("...hidden.png", png, "image/png")),
        ("images", ("фото.png", png, "image/png")),
    ]
    response = await convert_client.post("/api/convert", files=uploads)
    assert response.status_code == 200, response.text
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert archive.namelist() == [
            "a.webp",
            "a-1.webp",
            "A-2.webp",
            "b.webp",
            "hidden.webp",
            "фото.webp",
        ]


async def test_orientation_applied_and_metadata_stripped(
    convert_client: httpx.AsyncClient,
) -> None:
    item = jpeg_with_metadata()
    response = await convert_client.post("/api/convert", files=files(item))
    assert response.status_code == 200, response.text
    assert decode_webp(response.content) == (60, 90, 1)
    assert riff_chunks(response.content) == [b"VP8 "]
    for secret in (b"SecretCam", b"Exif", b"GPS", b"ICCP", b"XMP"):
        assert secret not in response.content


async def test_quality_and_lossless_fields(convert_client: httpx.AsyncClient) -> None:
    upload = files(sample("tiff"))

    async def size(**fields: str) -> bytes:
        response = await convert_client.post("/api/convert", files=upload, data=fields)
        assert response.status_code == 200, response.text
        return response.content

    low, high = await size(quality="5"), await size(quality="100")
    assert len(low) < len(high)
    assert riff_chunks(await size()) == [b"VP8 "]
    assert riff_chunks(await size(lossless="1")) == [b"VP8L"]
    assert riff_chunks(await size(lossless="0")) == [b"VP8 "]


async def test_animation_stays_animated_losslessly(convert_client: httpx.AsyncClient) -> None:
    response = await convert_client.post(
        "/api/convert", files=files(sample("gif")), data={"lossless": "1"}
    )
    assert response.status_code == 200
    assert decode_webp(response.content) == (32, 24, 4)
    with Image.open(io.BytesIO(response.content), formats=["WEBP"]) as image:
        durations = []
        for index in range(4):
            image.seek(index)
            image.load()
            durations.append(image.info["duration"])
        assert image.info["loop"] == 0
    assert durations == [100, 100, 100, 100]


async def test_empty_parts_are_ignored_beside_real_ones(convert_client: httpx.AsyncClient) -> None:
    uploads = [("images", ("", b"", "application/octet-stream")), *files(sample("png"))]
    response = await convert_client.post("/api/convert", files=uploads)
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/webp"


# --- §7.2: 400 no images uploaded -------------------------------------------------------------


NOT_MULTIPART = (
    'no images uploaded: send multipart/form-data and put each file in the form field "images"'
)


async def test_no_body_is_400(convert_client: httpx.AsyncClient) -> None:
    body = assert_error(await convert_client.post("/api/convert"), 400)
    assert body == {"error": NOT_MULTIPART, "code": 400}


async def test_other_fields_only_is_400(convert_client: httpx.AsyncClient) -> None:
    response = await convert_client.post(
        "/api/convert",
        data={"quality": "80"},
        files=[("image", ("a.png", sample("png").data, "image/png"))],
    )
    assert response.json() == {
        "error": 'no images uploaded: put each file in the form field "images" '
        "(fields received: quality, image)",
        "code": 400,
    }
    response = await convert_client.post("/api/convert", data={"quality": "80"}, files=[])
    assert response.json() == {"error": NOT_MULTIPART, "code": 400}


async def test_one_named_empty_file_is_an_unsupported_image(
    convert_client: httpx.AsyncClient,
) -> None:
    """Not "no images uploaded" (a 400 the schema's empty binary would not allow): a file came."""
    response = await convert_client.post("/api/convert", files=[("images", ("a.png", b""))])
    assert_error(response, 500, "'a.png'", "is empty (0 bytes), not an image")


async def test_only_empty_parts_is_400(convert_client: httpx.AsyncClient) -> None:
    uploads = [("images", ("", b"", "application/octet-stream"))] * 2
    response = await convert_client.post("/api/convert", files=uploads)
    assert response.json() == {
        "error": 'no images uploaded: the "images" parts carried no file',
        "code": 400,
    }


async def test_json_body_is_400(convert_client: httpx.AsyncClient) -> None:
    response = await convert_client.post("/api/convert", json={"images": ["a.png"]})
    assert response.json() == {"error": NOT_MULTIPART, "code": 400}


@pytest.mark.parametrize(
    ("fields", "param"), [({"quality": "101"}, "quality"), ({"lossless": "yes"}, "lossless")]
)
async def test_bad_option_is_400_naming_the_field(
    convert_client: httpx.AsyncClient, fields: dict[str, str], param: str
) -> None:
    response = await convert_client.post("/api/convert", files=files(sample("png")), data=fields)
    assert_error(response, 400, f"{param}: expected")


# --- §7.2: 500 unsupported image, naming the file ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "why"),
    [
        ("notes.txt", b"hello", "extension .txt"),
        ("noext", sample("png").data, "no file extension"),
        ("drawing.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>", "extension .svg"),
        ("fake.png", b"this is not a png at all", "not a supported image"),
        ("truncated.png", sample("png").data[:60], "not a supported image"),
        ("icon.png", b"\x00\x00\x01\x00\x01\x00\x10\x10" + b"\x00" * 64, "not a supported image"),
        ("empty.png", b"", "is empty (0 bytes), not an image"),  # was left out silently
        ("images", b"", "is empty (0 bytes), not an image"),  # as schemathesis names a part
    ],
)
async def test_unsupported_upload_is_500_naming_the_file(
    convert_client: httpx.AsyncClient, private_tmp: Path, name: str, data: bytes, why: str
) -> None:
    uploads = [*files(sample("png")), ("images", (name, data, "application/octet-stream"))]
    response = await convert_client.post("/api/convert", files=uploads)
    assert_error(response, 500, f"'{name}'", why)
    assert response.json()["error"].startswith("images: ")
    assert "RateLimit" in response.headers
    assert list(private_tmp.iterdir()) == []


async def test_first_bad_file_in_upload_order_is_reported(
    convert_client: httpx.AsyncClient,
) -> None:
    uploads = [
        ("images", ("one.png", sample("png").data, "image/png")),
        ("images", ("two.png", b"garbage", "image/png")),
        ("images", ("three.png", b"garbage", "image/png")),
    ]
    assert_error(await convert_client.post("/api/convert", files=uploads), 500, "'two.png'")


async def test_disabled_codec_is_an_unsupported_image(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(make_settings(disabled_codecs=["gif"])) as client:
        response = await client.post("/api/convert", files=files(sample("gif")))
    assert_error(response, 500, "'banner.gif'", "not a supported image")


# --- limits -----------------------------------------------------------------------------------


async def test_pixel_limit_is_413_naming_the_file(make_settings: Callable[..., Settings]) -> None:
    async with app_client(make_settings(max_input_pixels=1000)) as client:
        response = await client.post("/api/convert", files=files(sample("png")))
    assert_error(response, 413, "'alpha.png'", "50x40")


async def test_wider_than_webp_allows_is_413_naming_the_file(
    convert_client: httpx.AsyncClient,
) -> None:
    """20000x20 is a valid 0.4 MP JPEG, but WebP stores at most 16383 px a side."""
    wide = _pil_jpeg(20000, 20)
    response = await convert_client.post(
        "/api/convert", files=[("images", ("pano.jpg", wide, "image/jpeg"))]
    )
    assert_error(response, 413, "'pano.jpg'", "20000x20", "16383")


def _pil_jpeg(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, "JPEG")
    return buffer.getvalue()


async def test_frame_limit_is_413(make_settings: Callable[..., Settings]) -> None:
    async with app_client(make_settings(max_animation_frames=3)) as client:
        response = await client.post("/api/convert", files=files(sample("gif")))
    assert_error(response, 413, "'banner.gif'", "4 frames")


async def test_too_many_files_is_413(make_settings: Callable[..., Settings]) -> None:
    async with app_client(make_settings(upload_max_files=2)) as client:
        response = await client.post("/api/convert", files=files(*[sample("bmp")] * 3))
    assert_error(response, 413, "more than 2 files")


async def test_file_over_the_size_cap_is_413(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    async with app_client(make_settings(upload_max_bytes=1000)) as client:
        response = await client.post("/api/convert", files=files(sample("png")))
    assert_error(response, 413, "'alpha.png'", "exceeds 1000 bytes")
    assert list(private_tmp.iterdir()) == []


async def test_declared_body_over_the_total_cap_is_413(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(make_settings(upload_max_total_bytes=4000)) as client:
        response = await client.post("/api/convert", files=files(sample("png")))
    assert_error(response, 413, "request body exceeds 4000 bytes")


async def test_streamed_body_over_the_total_cap_is_413(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    """Without a Content-Length the cap is enforced while the bytes arrive."""
    request = httpx.Request("POST", "http://x/", files=files(sample("png"), sample("tiff")))
    content_type = request.headers["content-type"]
    body = request.read()
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 1000):
            sent.append(start)
            yield body[start : start + 1000]

    async with app_client(make_settings(upload_max_total_bytes=5000)) as client:
        response = await client.post(
            "/api/convert", content=chunks(), headers={"content-type": content_type}
        )
    assert_error(response, 413, "request body exceeds 5000 bytes")
    assert len(sent) < len(body) // 1000  # stopped reading early
    assert list(private_tmp.iterdir()) == []


# --- methods ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "OPTIONS"])
async def test_other_methods_are_405_json(convert_client: httpx.AsyncClient, method: str) -> None:
    response = await convert_client.request(method, "/api/convert")
    assert_error(response, 405, f"method {method} is not allowed")
    assert response.headers["allow"] == "POST"


async def test_head_is_405_without_body(convert_client: httpx.AsyncClient) -> None:
    response = await convert_client.head("/api/convert")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.content == b""


async def test_openapi_documents_the_interface(convert_client: httpx.AsyncClient) -> None:
    document = (await convert_client.get("/openapi.json")).json()
    operation = document["paths"]["/api/convert"]["post"]
    assert set(operation["responses"]) >= {"200", "400", "413", "429", "500"}
    schema = operation["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert schema["required"] == ["images"]
    assert set(schema["properties"]) == {"images", "quality", "lossless"}


async def test_conversions_and_the_optimizer_share_one_cpu_door(
    make_settings: Callable[..., Settings], docroot: Path
) -> None:
    """One worker, no queue: while a job holds the door, a conversion and an image render are
    both refused with 503 (so they go through the same door); once it is free both work."""
    (docroot / "photo.png").write_bytes(sample("png").data)
    harness = app_client(make_settings(render_workers=1, render_queue=0))
    client = await harness.__aenter__()
    try:
        gate = harness.state["resources"].gate
        release = threading.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(gate.run, release.wait, 5)
            await wait_until_async(lambda: admitted(gate) == 1)
            converted = await client.post("/api/convert", files=files(sample("png")))
            rendered = await client.get("/photo.png?w=10&format=webp")
            release.set()
        assert_error(converted, 503)
        assert converted.headers["retry-after"] == "1"
        assert rendered.status_code == 503
        assert (await client.post("/api/convert", files=files(sample("png")))).status_code == 200
        assert (await client.get("/photo.png?w=10&format=webp")).status_code == 200
    finally:
        await harness.__aexit__()
