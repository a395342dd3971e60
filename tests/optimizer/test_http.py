"""The optimizer over HTTP: every §7.1 row, headers of §2.3, negotiation, pass-through, 304."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from PIL import Image

from assetgate.app import create_app
from assetgate.imaging.formats import sniff
from assetgate.settings import Settings
from tests.conftest import _with_state
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

WEBP = {"accept": "image/avif,image/webp,image/apng,*/*;q=0.8"}
OLD = {"accept": "image/jpeg,image/png,*/*;q=0.5"}


def decoded(response: httpx.Response) -> tuple[str | None, int, int]:
    image = make.decode(response.content)
    return sniff(response.content), image.width, image.height


def assert_error(response: httpx.Response, status: int, mentions: str = "") -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status
    assert mentions in body["error"]
    # no filesystem path leaks (the pointer to the pages, /ui/, is a URL path)
    assert "/" not in body["error"].replace("1..", "").replace("/ui/", "")
    assert "Traceback" not in response.text


# --- 200: transform ------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/photo.jpg?width=200", "/?file=photo.jpg&width=200"])
async def test_both_forms_transform(
    opt: httpx.AsyncClient, url: str, files: dict[str, bytes]
) -> None:
    response = await opt.get(url, headers=OLD)
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/jpeg"
    assert decoded(response) == ("jpeg", 200, 150)
    headers = response.headers
    assert headers["x-optimizer-cache"] == "MISS"  # the result cache is on by default
    assert "x-optimizer-status" not in headers
    assert headers["x-output-format"] == "jpeg"
    assert headers["x-original-size"] == str(len(files["photo.jpg"]))
    assert headers["x-compressed-size"] == str(len(response.content))
    assert headers["content-length"] == str(len(response.content))
    assert re.fullmatch(r"-?[0-9]+(\.[0-9]+)?%", headers["x-compression-ratio"])
    ratio = float(headers["x-compression-ratio"][:-1])
    expected = (1 - len(response.content) / len(files["photo.jpg"])) * 100
    assert abs(ratio - expected) < 0.1
    assert headers["etag"].startswith('"')
    assert headers["last-modified"].endswith("GMT")
    assert headers["cache-control"].startswith("public")
    assert headers["vary"] == "Accept"
    assert headers["access-control-allow-origin"] == "*"


async def test_webp_when_accepted(opt: httpx.AsyncClient) -> None:
    response = await opt.get("/photo.jpg?w=300", headers=WEBP)
    assert response.headers["content-type"] == "image/webp"
    assert response.headers["x-output-format"] == "webp"
    assert response.headers["vary"] == "Accept"
    assert decoded(response) == ("webp", 300, 225)


async def test_webp_refused_with_q0(opt: httpx.AsyncClient) -> None:
    response = await opt.get("/photo.jpg?w=300", headers={"accept": "image/webp;q=0, */*"})
    assert response.headers["x-output-format"] == "jpeg"


@pytest.mark.parametrize(
    ("query", "fmt"),
    [
        ("format=png", "png"),
        ("f=gif", "gif"),
        ("format=jpg", "jpeg"),
        ("f=avif", "avif"),
        ("format=webp", "webp"),
    ],
)
async def test_explicit_format_does_not_vary(opt: httpx.AsyncClient, query: str, fmt: str) -> None:
    response = await opt.get(f"/photo.jpg?w=100&{query}", headers=WEBP)
    assert response.status_code == 200
    assert decoded(response) == (fmt, 100, 75)
    assert response.headers["x-output-format"] == fmt
    assert "vary" not in response.headers


@pytest.mark.parametrize(
    ("name", "query", "expected"),
    [
        ("still.bmp", "w=32", ("jpeg", 32, 24)),
        ("still.tga", "w=32", ("jpeg", 32, 24)),
        ("still.tiff", "w=32", ("jpeg", 32, 24)),
        ("still.ppm", "w=32", ("jpeg", 32, 24)),
        ("still.pgm", "w=32", ("jpeg", 32, 24)),
        ("still.pbm", "w=32", ("jpeg", 32, 24)),
        ("still.heic", "w=32", ("jpeg", 32, 24)),
        ("still.avif", "w=32", ("avif", 32, 24)),
        ("still.webp", "w=32", ("webp", 32, 24)),
        ("alpha.png", "w=50", ("png", 50, 25)),
        ("palette.png", "w=20", ("png", 20, 15)),
        ("deep.png", "w=20", ("png", 20, 15)),
        ("cmyk.jpg", "w=20", ("jpeg", 20, 15)),
        ("oriented6.jpg", "w=40", ("jpeg", 40, 30)),
        ("anim.gif", "w=20", ("gif", 20, 15)),
        ("anim.png", "w=20", ("png", 20, 15)),
    ],
)
async def test_every_input_format_without_webp(
    opt: httpx.AsyncClient, name: str, query: str, expected: tuple[str, int, int]
) -> None:
    response = await opt.get(f"/{name}?{query}", headers=OLD)
    assert response.status_code == 200, response.text
    assert decoded(response) == expected


async def test_non_output_format_with_alpha_becomes_png(
    opt: httpx.AsyncClient, docroot: Any
) -> None:
    (docroot / "alpha.tiff").write_bytes(
        make.pillow_bytes(make.quadrants(20, 10).convert("RGBA"), "TIFF")
    )
    response = await opt.get("/alpha.tiff?w=10", headers=OLD)
    assert decoded(response) == ("png", 10, 5)


async def test_cmyk_output_is_cyan(opt: httpx.AsyncClient) -> None:
    response = await opt.get("/cmyk.jpg?w=20&format=png")
    red, green, blue = make.decode(response.content)(5, 5)[:3]
    assert red < 90
    assert green > 120
    assert blue > 180


async def test_orientation_is_applied_and_gps_stripped(opt: httpx.AsyncClient) -> None:
    response = await opt.get("/oriented6.jpg?width=80&format=png")
    image = make.decode(response.content)
    assert (image.width, image.height) == (80, 60)
    assert image(5, 5)[:3] == [230.0, 20.0, 20.0] or image(5, 5)[0] > 190
    for name in ("jpeg", "webp"):
        body = (await opt.get(f"/oriented6.jpg?width=70&format={name}")).content
        assert b"Exif" not in body
        assert b"GPS" not in body


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("anim.gif", "gif"),
        ("anim.webp", "webp"),
        ("anim.png", "webp"),
        ("anim.gif", "webp"),
        ("anim.webp", "gif"),
    ],
)
async def test_animations_stay_animated(opt: httpx.AsyncClient, name: str, fmt: str) -> None:
    response = await opt.get(f"/{name}?width=20&format={fmt}")
    assert response.status_code == 200
    import pyvips

    image = pyvips.Image.new_from_buffer(response.content, "", n=-1)
    assert sniff(response.content) == fmt
    assert image.get("n-pages") == 3
    assert (image.width, image.get("page-height")) == (20, 15)


async def test_animation_to_still_format_is_first_frame(opt: httpx.AsyncClient) -> None:
    response = await opt.get("/anim.gif?format=png")
    image = make.decode(response.content)
    assert (image.width, image.height) == (40, 30)
    assert image(3, 3)[0] > 200  # first frame is red


@pytest.mark.parametrize(
    "query",
    [
        "crop=100,100&crop_gravity=southeast",
        "crop=100,100,10,10",
        "focus_crop=100,100,0.5,0.5",
        "aspect_ratio=16:9&width=160",
        "flip=1&flop=1&rotate=90",
        "blur=20",
        "sharpen=true",
        "sharpen=80",
        "brightness=50",
        "gamma=-40",
        "contrast=60",
        "saturation=-100",
        "hue=50",
        "tint=ff8800",
        "sepia=100",
        "upscaling=resampling&width=1000",
    ],
)
async def test_every_operation_renders(opt: httpx.AsyncClient, query: str) -> None:
    response = await opt.get(f"/photo.jpg?{query}&format=png")
    assert response.status_code == 200, response.text
    assert response.headers["x-optimizer-cache"] == "MISS"
    assert sniff(response.content) == "png"


async def test_crop_box_content(opt: httpx.AsyncClient) -> None:
    # photo.jpg: red top-left, green top-right, blue bottom-left, white bottom-right.
    cases = {
        "crop=100,100&crop_gravity=northeast": (0.0, 1.0),  # green: red channel low
        "crop=100,100,0,500": (0.0, 0.0),  # blue
        "focus_crop=50,50,0.1,0.1": (1.0, 0.0),  # red
    }
    for query, (red_high, green_high) in cases.items():
        image = make.decode((await opt.get(f"/photo.jpg?{query}&format=png")).content)
        red, green, _ = image(image.width // 2, image.height // 2)[:3]
        assert (red > 128) == bool(red_high), query
        assert (green > 128) == bool(green_high), query


# --- pass-through -----------------------------------------------------------------------------


async def test_public_url_without_parameters_is_the_file(
    opt: httpx.AsyncClient, files: dict[str, bytes]
) -> None:
    for name in ("photo.jpg", "notes.txt", "bomb.png", "dir/nested.jpg"):
        response = await opt.get(f"/{name}?v=123", headers=WEBP)
        assert response.status_code == 200
        assert response.content == files[name]
        assert response.headers["x-optimizer-status"] == "passthrough"
        assert "x-optimizer-cache" not in response.headers
        assert "vary" not in response.headers
        assert response.headers["etag"]
        assert response.headers["last-modified"]


async def test_same_format_no_transform_is_passthrough(
    opt: httpx.AsyncClient, files: dict[str, bytes]
) -> None:
    for url in (
        "/?file=photo.jpg",
        "/photo.jpg?quality=85",
        "/photo.jpg?format=jpg&rotate=0",
        "/anim.png?min=0",
    ):
        response = await opt.get(url, headers=OLD)
        assert response.status_code == 200, url
        name = url.split("?")[0].strip("/") or "photo.jpg"
        assert response.content == files[name], url
        assert response.headers["x-optimizer-status"] == "passthrough"
        assert "x-optimizer-cache" not in response.headers
        assert response.headers["content-length"] == str(len(files[name]))
        assert response.headers["x-original-size"] == str(len(files[name]))


async def test_never_bigger_for_a_pure_reencode(opt: httpx.AsyncClient, docroot: Any) -> None:
    source = make.pillow_bytes(make.quadrants(200, 150), "JPEG", quality=20)
    (docroot / "small.jpg").write_bytes(source)
    response = await opt.get("/small.jpg?quality=100", headers=OLD)
    assert response.content == source
    assert response.headers["x-optimizer-status"] == "passthrough"
    assert response.headers["content-type"] == "image/jpeg"
    # With geometry the re-encode is served even when bigger.
    resized = await opt.get("/small.jpg?quality=100&width=199", headers=OLD)
    assert resized.headers["x-optimizer-cache"] == "MISS"
    assert int(resized.headers["x-compressed-size"]) > len(source)
    assert resized.headers["x-compression-ratio"].startswith("-")


def _bilevel_noise_png(side: int = 64) -> bytes:
    """A 1-bit noise PNG: tiny as PNG, large as any lossy re-encode."""
    noise = Image.frombytes("1", (side, side), random.Random(7).randbytes(side * side // 8))
    return make.pillow_bytes(noise, "PNG")


async def test_never_bigger_respects_an_explicit_format(
    opt: httpx.AsyncClient, docroot: Any
) -> None:
    source = _bilevel_noise_png()
    (docroot / "dots.png").write_bytes(source)
    explicit = await opt.get("/dots.png?format=webp&quality=100", headers=WEBP)
    assert explicit.headers["x-output-format"] == "webp"
    assert len(explicit.content) > len(source)  # asked for WebP: gets WebP, even bigger
    negotiated = await opt.get("/dots.png?quality=100", headers=WEBP)
    assert negotiated.content == source
    assert negotiated.headers["x-output-format"] == "png"
    assert negotiated.headers["x-optimizer-status"] == "passthrough"
    assert negotiated.headers["vary"] == "Accept"


async def test_never_bigger_for_a_webp_source_and_a_client_without_webp(
    opt: httpx.AsyncClient, docroot: Any
) -> None:
    """The answer is WebP either way (the source's format), so the smaller original wins."""
    source = make.pillow_bytes(make.quadrants(64, 48), "WEBP", quality=5)
    (docroot / "tiny.webp").write_bytes(source)
    response = await opt.get("/tiny.webp?q=100", headers=OLD)
    assert response.status_code == 200
    assert response.headers["x-output-format"] == "webp"
    assert response.headers["x-optimizer-status"] == "passthrough"
    assert response.content == source


# --- HEAD, OPTIONS, 405 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["/photo.jpg?w=100", "/photo.jpg", "/?file=photo.jpg", "/photo.jpg?w=0", "/missing.jpg"]
)
async def test_head_is_get_without_body(opt: httpx.AsyncClient, url: str) -> None:
    get = await opt.get(url)
    head = await opt.head(url)
    assert head.status_code == get.status_code
    assert head.content == b""
    # a fresh request id each; the GET filled the result cache, so the HEAD is a HIT
    skip = {"date", "x-request-id", "x-optimizer-cache", "cache-status"}
    assert {k: v for k, v in head.headers.items() if k not in skip} == {
        k: v for k, v in get.headers.items() if k not in skip
    }
    assert head.headers["content-length"] == str(len(get.content))


@pytest.mark.parametrize("url", ["/", "/photo.jpg", "/?file=photo.jpg"])
async def test_options(opt: httpx.AsyncClient, url: str) -> None:
    response = await opt.options(
        url, headers={"origin": "http://example.test", "access-control-request-method": "GET"}
    )
    assert response.status_code == 204
    assert response.headers["allow"] == "GET, HEAD, OPTIONS"
    assert response.headers["access-control-allow-origin"] == "*"
    assert "GET" in response.headers["access-control-allow-methods"]
    assert response.content == b""


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "TRACE", "PROPFIND"])
@pytest.mark.parametrize("url", ["/", "/photo.jpg?w=10", "/?file=photo.jpg"])
async def test_other_methods_are_405(opt: httpx.AsyncClient, method: str, url: str) -> None:
    response = await opt.request(method, url)
    assert_error(response, 405, method)
    assert response.headers["allow"] == "GET, HEAD, OPTIONS"


# --- 4xx/5xx rows of §7.1 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "param"),
    [
        ("/", "file"),
        ("/?width=10", "file"),
        ("/?file=", "file"),
        ("/photo.jpg?width=0", "width"),
        ("/photo.jpg?w=50001", "w"),
        ("/?file=photo.jpg&height=x", "height"),
        ("/photo.jpg?rotate=45", "rotate"),
        ("/photo.jpg?format=bmp", "format"),
        ("/photo.jpg?face_crop=1", "face_crop"),
        ("/?file=photo.jpg&face_crop=0.5,0.5", "face_crop"),
        ("/photo.jpg?crop=10,10,900,10", "crop"),
        ("/photo.jpg?tint=red", "tint"),
        ("/photo.jpg?quality=101", "quality"),
        ("/missing.jpg?width=0", "width"),  # parameters are checked first
        ("/photo.jpg?flip=", "flip"),  # an empty switch is a question without an answer
        ("/?file=photo.jpg&w=10&flop=", "flop"),
        ("/photo.jpg?sharpen=", "sharpen"),
    ],
)
async def test_400_names_the_parameter(opt: httpx.AsyncClient, url: str, param: str) -> None:
    assert_error(await opt.get(url), 400, param)


@pytest.mark.parametrize(
    "url",
    ["/missing.jpg", "/missing.jpg?w=10", "/?file=missing.jpg", "/dir", "/dir?w=1", "/?file=dir"],
)
async def test_404(opt: httpx.AsyncClient, url: str) -> None:
    assert_error(await opt.get(url), 404)
    assert (await opt.get(url)).json() == {"error": "not found", "code": 404}


@pytest.mark.parametrize(
    "url",
    [
        "/bomb.png?w=10",
        "/?file=bomb.gif",
        "/bomb.jpg?format=webp",
        "/bomb.bmp?w=1",
        "/photo.jpg?width=5700&upscaling=resampling",
        "/photo.jpg?format=avif&width=2400&upscaling=resampling",
    ],
)
async def test_413(opt: httpx.AsyncClient, url: str) -> None:
    assert_error(await opt.get(url), 413)


async def test_413_for_source_bytes(custom_client: Callable[..., Any]) -> None:
    async with custom_client(max_source_bytes=1000) as client:
        assert_error(await client.get("/photo.jpg?w=10"), 413)
        assert (await client.get("/photo.jpg")).status_code == 200  # static files are not limited


@pytest.mark.parametrize(
    "url",
    [
        "/notes.txt?w=10",
        "/?file=notes.txt",
        "/fake.jpg?w=10",
        "/cut.jpg?w=10",
        "/cut.png?format=webp",
        "/cut.jpg?quality=50",
    ],
)
async def test_415(opt: httpx.AsyncClient, url: str) -> None:
    assert_error(await opt.get(url), 415)


@pytest.mark.parametrize(
    ("disabled", "url"),
    [
        ("heif", "/still.heic?w=10"),
        ("avif", "/still.avif?w=10"),
        ("avif", "/photo.jpg?format=avif"),
        ("webp", "/photo.jpg?format=webp"),
        ("gif,bmp", "/still.bmp"),
        ("jpg", "/?file=photo.jpg"),
    ],
)
async def test_501_when_a_codec_is_disabled(
    custom_client: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, disabled: str, url: str
) -> None:
    monkeypatch.setenv("ASSETGATE_DISABLED_CODECS", disabled)
    async with custom_client() as client:
        response = await client.get(url + ("&" if "?" in url else "?") + "q=80")
        assert_error(response, 501)


async def test_disabled_webp_is_not_negotiated(custom_client: Callable[..., Any]) -> None:
    async with custom_client(disabled_codecs=["webp"]) as client:
        response = await client.get("/photo.jpg?w=100", headers=WEBP)
        assert response.status_code == 200
        assert response.headers["x-output-format"] == "jpeg"


async def test_unexpected_error_is_500_with_error_id(
    files: dict[str, bytes], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object) -> object:
        raise RuntimeError("/secret/path exploded")

    monkeypatch.setattr("assetgate.optimizer.render.run", explode)
    app = create_app(settings)
    async with app.router.lifespan_context(app) as state:
        transport = httpx.ASGITransport(app=_with_state(app, state), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.get("/photo.jpg?w=10")
    assert response.status_code == 500
    body = response.json()
    assert body["code"] == 500
    assert re.fullmatch(r"[0-9a-f]{16}", body["error_id"])
    assert "secret" not in response.text


async def test_503_when_the_queue_is_full(custom_client: Callable[..., Any], docroot: Any) -> None:
    import anyio

    big = make.noise_jpeg(2000, 1500)
    (docroot / "big.jpg").write_bytes(big)
    async with custom_client(render_workers=1, render_queue=0) as client:
        statuses: list[int] = []
        retry: list[str] = []

        async def one(index: int) -> None:
            response = await client.get(f"/big.jpg?format=png&blur=5&w={1000 + index}")
            statuses.append(response.status_code)
            if response.status_code == 503:
                retry.append(response.headers["retry-after"])

        async with anyio.create_task_group() as group:
            for index in range(4):
                group.start_soon(one, index)
        assert statuses.count(200) >= 1
        assert statuses.count(503) >= 1
        assert set(statuses) <= {200, 503}
        assert all(int(value) >= 1 for value in retry)


@pytest.mark.parametrize("orientation", range(1, 9))
async def test_every_exif_orientation_over_http(
    opt: httpx.AsyncClient, docroot: Any, orientation: int
) -> None:
    (docroot / f"o{orientation}.jpg").write_bytes(make.oriented_jpeg(orientation, 80, 60))
    response = await opt.get(f"/o{orientation}.jpg?width=40&format=png")
    image = make.decode(response.content)
    assert (image.width, image.height) == (40, 30)
    red, green, blue = image(3, 3)[:3]
    assert red > 180
    assert green < 80
    assert blue < 80
    assert image(37, 3)[1] > 150  # green top right
    assert image(3, 27)[2] > 180  # blue bottom left


async def test_output_wider_than_webp_allows(opt: httpx.AsyncClient, docroot: Any) -> None:
    """WebP stores at most 16383 px a side: never negotiated for such output, 413 if asked for."""
    (docroot / "pano.jpg").write_bytes(make.pillow_bytes(make.quadrants(20000, 20), "JPEG"))
    negotiated = await opt.get("/pano.jpg?blur=1", headers=WEBP)
    assert negotiated.status_code == 200
    assert negotiated.headers["x-output-format"] == "jpeg"
    assert negotiated.headers["vary"] == "Accept"
    assert (make.decode(negotiated.content).width, make.decode(negotiated.content).height) == (
        20000,
        20,
    )
    small = await opt.get("/pano.jpg?w=2000", headers=WEBP)
    assert small.headers["x-output-format"] == "webp"
    assert make.decode(small.content).width == 2000
    explicit = await opt.get("/pano.jpg?format=webp", headers=WEBP)
    assert explicit.status_code == 413
    assert explicit.json() == {
        "error": "WebP output 20000x20 is over the format's limit of 16383 px a side",
        "code": 413,
    }
    turned = await opt.get("/pano.jpg?rotate=90&f=webp", headers=WEBP)
    assert turned.status_code == 413


async def test_static_public_url_carries_the_original_size(
    opt: httpx.AsyncClient, files: dict[str, bytes]
) -> None:
    for url in ("/photo.jpg", "/style.css", "/notes.txt"):
        response = await opt.get(url)
        name = url.strip("/")
        assert response.status_code == 200, url
        assert response.headers["x-optimizer-status"] == "passthrough"
        assert response.headers["x-original-size"] == str(len(files[name])), url


async def test_animation_over_the_pixel_limit_in_all_frames_is_413(custom_client: Any) -> None:
    """40x30 frames (1,200 px each) pass a 2,000 px limit one by one; three kept frames do not."""
    async with custom_client(max_input_pixels=2000) as client:
        kept = await client.get("/anim.gif?w=40&format=webp")
        first_frame = await client.get("/anim.gif?w=40&format=png")
    assert kept.status_code == 413
    assert kept.json()["code"] == 413
    assert "3 frames" in kept.json()["error"]
    assert first_frame.status_code == 200
    assert make.decode(first_frame.content).height == 30


@pytest.mark.parametrize(
    ("query", "size", "corner"),
    [
        ("w=1000&flip=1", (1000, 750), make.BLUE),  # bottom-left quadrant now on top
        ("w=1000&rotate=90", (750, 1000), make.BLUE),
        ("w=1000&rotate=180", (1000, 750), make.WHITE),
        ("w=1000&rotate=270&flop=1", (750, 1000), make.RED),  # flop, then turn left
    ],
)
@pytest.mark.parametrize("name", ["big.jpg", "big.png"])
async def test_turning_a_shrunk_large_image(
    opt: httpx.AsyncClient,
    docroot: Any,
    name: str,
    query: str,
    size: tuple[int, int],
    corner: tuple[int, int, int],
) -> None:
    """Shrink-on-load decodes sequentially; flip/rotate must not read it out of order (was 415)."""
    fmt = "JPEG" if name.endswith(".jpg") else "PNG"
    (docroot / name).write_bytes(make.pillow_bytes(make.quadrants(2400, 1800), fmt))
    response = await opt.get(f"/{name}?{query}&format=png")
    assert response.status_code == 200, response.text
    image = make.decode(response.content)
    assert (image.width, image.height) == size
    assert all(abs(a - b) <= 40 for a, b in zip(image(10, 10)[:3], corner, strict=True))


async def test_a_webp_source_enlarged_past_webps_limit(
    opt: httpx.AsyncClient, docroot: Any
) -> None:
    (docroot / "wide.webp").write_bytes(make.pillow_bytes(make.quadrants(10000, 10), "WEBP"))
    response = await opt.get("/wide.webp?w=17000&upscaling=resampling", headers=WEBP)
    assert response.status_code == 200, response.text
    assert response.headers["x-output-format"] == "jpeg"
    assert make.decode(response.content).width == 17000


@pytest.mark.parametrize(
    ("query", "corner"),
    [
        ("flip", make.BLUE),  # bare: true, as imgproxy and thumbor read it
        ("flip&flop", make.WHITE),
        ("w=40&flip&format=png", make.BLUE),
        ("flip=false", make.RED),
    ],
)
@pytest.mark.parametrize("form", ["/quads.png?", "/?file=quads.png&"])
async def test_a_bare_switch_means_true(
    opt: httpx.AsyncClient, docroot: Any, form: str, query: str, corner: tuple[int, int, int]
) -> None:
    (docroot / "quads.png").write_bytes(make.pillow_bytes(make.quadrants(40, 30), "PNG"))
    response = await opt.get(f"{form}{query}", headers=OLD)
    assert response.status_code == 200, response.text
    image = make.decode(response.content)
    assert (image.width, image.height) == (40, 30)
    assert tuple(image(2, 2)[:3]) == corner


async def test_a_bare_sharpen_is_the_default_strength(opt: httpx.AsyncClient) -> None:
    bare = await opt.get("/photo.jpg?sharpen&format=png")
    named = await opt.get("/photo.jpg?sharpen=true&format=png")
    assert bare.status_code == named.status_code == 200
    assert bare.headers["etag"] == named.headers["etag"]
    assert bare.content == named.content
