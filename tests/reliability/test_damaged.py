"""Damaged means error, in both interfaces: 415 from the optimizer, 500 naming the file from the
conversion interface; harmless camera quirks keep working; a header over the limits is 413."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.imaging import factory as make
from tests.reliability import hostile

pytestmark = pytest.mark.anyio

DAMAGED: dict[str, Callable[[], bytes]] = {
    "lie.jpg": hostile.lying_jpeg,
    "cutdata.gif": hostile.cut_gif_data,
    "chunk.png": hostile.png_chunk_length_lie,
    **{
        f"cut{int(keep * 100)}.{ext}": (
            lambda build=build, keep=keep: make.truncated(build(), keep)
        )
        for ext, build in {
            "jpg": lambda: make.noise_jpeg(300, 200),
            "png": lambda: make.png(300, 200, alpha=True),
            "gif": lambda: make.gif(60, 40, 3),
            "webp": lambda: make.webp(300, 200),
        }.items()
        for keep in (0.3, 0.6, 0.9)
    },
}
HARMLESS: dict[str, Callable[[], bytes]] = {
    "extraneous.jpg": hostile.jpeg_with_extraneous_bytes,
    "noeoi.jpg": hostile.jpeg_without_eoi,
}
POLYGLOTS: dict[str, Callable[[], bytes]] = {
    "polyglot.gif": hostile.polyglot_gif_html,
    "polyglot.jpg": hostile.polyglot_jpeg_zip,
}
BOMBS: dict[str, Callable[[], bytes]] = {
    "bomb.png": make.bomb_png,
    "bomb.jpg": make.bomb_jpeg,
    "bomb.gif": make.bomb_gif,
    "bomb.bmp": make.bomb_bmp,
    "bomb.tga": make.bomb_tga,
    "bomb.ppm": make.bomb_ppm,
    "bomb.webp": make.bomb_webp,
    "bomb.tiff": make.bomb_tiff,
    "bomb.heic": make.bomb_heic,
    "bomb.avif": make.bomb_avif,
}
#: HEIF/AVIF claims over the limit that libheif hides (crop box) or refuses to read.
HEIF_BOMBS: dict[str, Callable[[], bytes]] = {
    "bomb.heic": make.bomb_heic,
    "bomb.avif": make.bomb_avif,
    "bomb2g.heic": lambda: make.claim_ispe(make.heic(), 2**31, 2**31),
    "bombwide.avif": lambda: make.claim_ispe(make.avif(), 0xFFFFFFFF, 1),
}
SMALL_HEIF: dict[str, Callable[[], bytes]] = {
    "small.heic": lambda: make.heic(64, 48),
    "small.avif": lambda: make.avif(64, 48),
}


@pytest.fixture(scope="module")
def corpus() -> dict[str, bytes]:
    builders = {**DAMAGED, **HARMLESS, **POLYGLOTS, **BOMBS, **HEIF_BOMBS, **SMALL_HEIF}
    return {name: build() for name, build in builders.items()}


@pytest.fixture
async def client(
    corpus: dict[str, bytes], docroot: Path, make_settings: Callable[..., Settings]
) -> AsyncIterator[httpx.AsyncClient]:
    for name, data in corpus.items():
        (docroot / name).write_bytes(data)
    async with app_client(make_settings(rate_limit="10000/1 second")) as c:
        yield c


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    assert "traceback" not in response.text.lower()
    message = response.json()["error"]
    assert isinstance(message, str)
    return message


@pytest.mark.parametrize("name", sorted(DAMAGED))
async def test_damaged_is_415_from_the_optimizer_and_never_cached(
    client: httpx.AsyncClient, name: str
) -> None:
    for query in (
        "blur=1&format=png",
        "w=100&format=jpeg",
        "w=2000&upscaling=resampling&format=webp",
    ):
        response = await client.get(f"/{name}?{query}")
        assert "truncated or corrupt" in _error(response, 415) or "header" in response.text
        assert "max-age" not in response.headers.get("cache-control", "")


@pytest.mark.parametrize("name", sorted(DAMAGED))
async def test_damaged_is_a_500_naming_the_file_from_conversion(
    client: httpx.AsyncClient, corpus: dict[str, bytes], name: str
) -> None:
    response = await client.post("/api/convert", files={"images": (name, corpus[name])})
    message = _error(response, 500)
    assert name in message
    assert response.json()["error_id"]


@pytest.mark.parametrize("name", sorted({**HARMLESS, **SMALL_HEIF}))
async def test_harmless_quirks_and_small_heif_still_decode_in_both_interfaces(
    client: httpx.AsyncClient, corpus: dict[str, bytes], name: str
) -> None:
    source = make.decode(corpus[name])  # the header only: 64x48 for the HEIC and AVIF
    rendered = await client.get(f"/{name}?format=png&blur=1")
    assert rendered.status_code == 200, rendered.text
    assert rendered.content.startswith(b"\x89PNG")
    image = make.decode(rendered.content)
    assert (image.width, image.height) == (source.width, source.height)
    converted = await client.post("/api/convert", files={"images": (name, corpus[name])})
    assert converted.status_code == 200, converted.text
    assert converted.content[8:12] == b"WEBP"
    webp = make.decode(converted.content)
    assert (webp.width, webp.height) == (source.width, source.height)


@pytest.mark.parametrize("name", sorted(POLYGLOTS))
async def test_a_polyglot_is_an_image_or_a_415_never_markup(
    client: httpx.AsyncClient, name: str
) -> None:
    for query in ("blur=1&format=png", ""):
        response = await client.get(f"/{name}?{query}")
        assert response.status_code in (200, 415), response.text
        assert response.headers["content-type"].startswith(("image/", "application/json"))
        if response.status_code == 200:
            assert response.headers["x-content-type-options"] == "nosniff"


async def test_the_lying_jpeg_and_the_cut_gif_are_the_issues_reproductions(
    corpus: dict[str, bytes],
) -> None:
    assert len(corpus["lie.jpg"]) < 1000
    assert make.decode(corpus["lie.jpg"]).width == 7000  # the header does lie
    assert len(corpus["cutdata.gif"]) < 1200


@pytest.mark.parametrize("name", sorted(BOMBS))
async def test_a_header_over_the_limits_is_413_in_both_interfaces(
    client: httpx.AsyncClient, corpus: dict[str, bytes], name: str
) -> None:
    _error(await client.get(f"/{name}?format=png"), 413)
    response = await client.post("/api/convert", files={"images": (name, corpus[name])})
    assert name in _error(response, 413)


@pytest.mark.parametrize("name", sorted(HEIF_BOMBS))
async def test_a_heif_claiming_more_than_the_limit_is_413_whatever_follows(
    client: httpx.AsyncClient, corpus: dict[str, bytes], name: str
) -> None:
    # ``/?file=`` without other parameters goes through the optimizer (a plain public URL is a
    # static file).
    for url in (f"/{name}?width=100", f"/{name}?format=png", f"/?file={name}"):
        message = _error(await client.get(url), 413)
        assert "over the input limit of 50 MP" in message, message
    response = await client.post("/api/convert", files={"images": (name, corpus[name])})
    message = _error(response, 413)
    assert name in message
    assert "over the input limit of 50 MP" in message, message


@pytest.mark.parametrize(
    "filename",
    ["../../etc/passwd.png", "a\x00b.png", "<script>.png", "..png", "x" * 5000 + ".png", "é😀.png"],
)
async def test_hostile_upload_names_are_answered_without_a_5xx(
    client: httpx.AsyncClient, filename: str
) -> None:
    response = await client.post("/api/convert", files={"images": (filename, make.png(8, 8))})
    assert response.status_code in (200, 400, 500), response.text
    if response.status_code == 500:  # spec §7.2: a name without an image extension
        assert "extension" in response.json()["error"]
    if response.status_code == 200:
        disposition = response.headers["content-disposition"]
        assert "/" not in disposition.split("filename=")[1].split(";")[0]


async def test_a_part_without_a_filename_is_not_an_upload(client: httpx.AsyncClient) -> None:
    boundary = "b0undary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="images"\r\n'
        f"Content-Type: image/png\r\n\r\n{{}}\r\n--{boundary}--\r\n"
    ).encode()
    response = await client.post(
        "/api/convert",
        content=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert _error(response, 400) == 'no images uploaded: the "images" parts carried no file'
