"""The extensions of issue 25 through the app, judged by their pixels: dpr, fit, background,
trim, smart crop, AVIF by Accept, info=1, max_bytes and watermarks."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blurhash
import httpx
import pytest
import pyvips
import thumbhash
from PIL import Image

from assetgate.imaging.formats import sniff
from assetgate.optimizer.signed import sign_url
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

PNG = {"accept": "image/png"}
OLD = {"accept": "image/jpeg,*/*"}
#: Accept headers real browsers send for <img> (current releases).
CHROME = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
FIREFOX = "image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5"
SAFARI = (
    "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,"
    "image/svg+xml,image/*;q=0.8,*/*;q=0.5"
)
SAFARI_15 = "image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5"
OLD_SAFARI = "image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5"
KEY = "k" * 40


def decoded(response: httpx.Response) -> pyvips.Image:
    assert response.status_code == 200, response.text
    return pyvips.Image.new_from_buffer(response.content, "")


def near(got: list[float], want: tuple[int, ...], tolerance: float = 24) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(got, want, strict=False))


def save(path: Path, image: Image.Image, fmt: str = "PNG") -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = make.pillow_bytes(image, fmt)
    path.write_bytes(data)
    return data


def framed() -> Image.Image:
    """A red 60x40 picture in a 20 px white frame (100x80)."""
    image = Image.new("RGB", (100, 80), make.WHITE)
    image.paste((220, 20, 20), (20, 20, 80, 60))
    return image


def busy() -> Image.Image:
    """Flat grey, but for a noisy patch near the right edge: what attention should keep."""
    image = Image.new("RGB", (300, 100), (128, 128, 128))
    noise = Image.effect_noise((60, 100), 100).convert("RGB")
    image.paste(noise, (230, 0))
    return image


# --- geometry -----------------------------------------------------------------------------


async def test_dpr_multiplies_the_width(opt: httpx.AsyncClient) -> None:
    image = decoded(await opt.get("/photo.jpg?dpr=2&width=100", headers=OLD))
    assert (image.width, image.height) == (200, 150)
    same = await opt.get("/photo.jpg?width=200", headers=OLD)
    assert (await opt.get("/photo.jpg?dpr=2&w=100", headers=OLD)).headers["etag"] == (
        same.headers["etag"]
    )
    # still never larger than the source without upscaling
    assert decoded(await opt.get("/photo.jpg?dpr=8&width=400", headers=OLD)).width == 800


async def test_fit_pad_is_exactly_the_box_with_the_background(opt: httpx.AsyncClient) -> None:
    response = await opt.get(
        "/photo.jpg?width=200&height=200&fit=pad&background=0000ff&format=png", headers=PNG
    )
    image = decoded(response)
    assert (image.width, image.height) == (200, 200)
    # 800x600 fits as 200x150, centred: 25 px bands of blue above and below
    assert near(image(100, 5), (0, 0, 255), 2)
    assert near(image(100, 194), (0, 0, 255), 2)
    assert near(image(50, 60), make.RED)  # the red quadrant
    assert near(image(150, 140), (255, 255, 255))  # the white quadrant


async def test_fit_pad_without_background_is_transparent(opt: httpx.AsyncClient) -> None:
    image = decoded(await opt.get("/photo.jpg?w=100&h=100&fit=pad&format=png", headers=PNG))
    assert (image.width, image.height, image.bands) == (100, 100, 4)
    assert image(50, 3)[3] == 0
    assert image(50, 50)[3] == 255
    gravity = decoded(
        await opt.get("/photo.jpg?w=100&h=100&fit=pad&crop_gravity=north&f=png", headers=PNG)
    )
    assert gravity(50, 3)[3] == 255  # placed at the top: the padding is below
    assert gravity(50, 96)[3] == 0


async def test_fit_cover_fills_the_box_and_fill_stretches(opt: httpx.AsyncClient) -> None:
    cover = decoded(await opt.get("/photo.jpg?w=100&h=100&fit=cover", headers=OLD))
    assert (cover.width, cover.height) == (100, 100)
    # 800x600 cut to 600x600 in the middle: red still fills the top-left quarter
    assert near(cover(20, 20), make.RED)
    assert near(cover(80, 80), (255, 255, 255))
    west = decoded(await opt.get("/photo.jpg?w=100&h=100&fit=cover&crop_gravity=west", headers=OLD))
    assert near(west(62, 20), make.RED)  # red reaches 2/3 across when cut from the left
    fill = decoded(await opt.get("/photo.jpg?w=100&h=100&fit=fill", headers=OLD))
    assert (fill.width, fill.height) == (100, 100)
    assert near(fill(45, 45), make.RED)
    assert near(fill(55, 45), make.GREEN)
    inside = decoded(await opt.get("/photo.jpg?w=100&h=100", headers=OLD))
    assert (inside.width, inside.height) == (100, 75)  # the spec's default is unchanged


async def test_background_flattens_alpha_into_jpeg(opt: httpx.AsyncClient) -> None:
    plain = decoded(await opt.get("/alpha.png?format=jpeg", headers=OLD))
    tinted = decoded(await opt.get("/alpha.png?format=jpeg&background=00ff00", headers=OLD))
    source = make.decode(make.png(200, 100, alpha=True))
    x, y = 150, 2  # the white quadrant, nearly transparent (the alpha ramps down the image)
    *rgb, alpha = source(x, y)
    assert alpha < 20

    def over(background: tuple[int, int, int]) -> tuple[int, ...]:
        return tuple(
            round(c * alpha / 255 + b * (1 - alpha / 255))
            for c, b in zip(rgb, background, strict=False)
        )

    assert near(plain(x, y), over((255, 255, 255)), 6)
    assert near(tinted(x, y), over((0, 255, 0)), 6)
    assert tinted(x, y)[0] < 40  # green, not white


async def test_trim_removes_a_uniform_frame(opt: httpx.AsyncClient, docroot: Path) -> None:
    save(docroot / "framed.png", framed())
    image = decoded(await opt.get("/framed.png?trim=true&format=png", headers=PNG))
    assert (image.width, image.height) == (60, 40)
    assert near(image(0, 0), (220, 20, 20), 2)
    assert near(image(59, 39), (220, 20, 20), 2)
    # trim comes first: the width applies to what is left
    assert decoded(await opt.get("/framed.png?trim=10&width=30", headers=PNG)).width == 30
    untouched = decoded(await opt.get("/framed.png?trim=false&format=png", headers=PNG))
    assert untouched.width == 100


async def test_smart_crop_keeps_the_busy_part(opt: httpx.AsyncClient, docroot: Path) -> None:
    save(docroot / "busy.png", busy())
    centre = decoded(await opt.get("/busy.png?crop=100,100&format=png", headers=PNG))
    smart = decoded(
        await opt.get("/busy.png?crop=100,100&crop_gravity=smart&format=png", headers=PNG)
    )
    assert (smart.width, smart.height) == (100, 100)
    assert centre.deviate() < 1  # the middle is flat grey
    assert smart.deviate() > 30  # attention found the noise
    cover = decoded(
        await opt.get("/busy.png?w=50&h=50&fit=cover&crop_gravity=smart&f=png", headers=PNG)
    )
    assert (cover.width, cover.height) == (50, 50)
    assert cover.deviate() > 10  # the noise, averaged down by the resize
    ratio = decoded(
        await opt.get("/busy.png?aspect_ratio=1:1&crop_gravity=smart&f=png", headers=PNG)
    )
    assert (ratio.width, ratio.height) == (100, 100)
    assert ratio.deviate() > 30


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("dpr=9", "dpr"),
        ("dpr=0.5", "dpr"),
        ("dpr=two", "dpr"),
        ("fit=contain", "fit"),
        ("background=red", "background"),
        ("background=12345", "background"),
        ("trim=0", "trim"),
        ("trim=101", "trim"),
        ("max_bytes=0", "max_bytes"),
        ("info=2", "info"),
        ("watermark=a%20b", "watermark"),
        ("watermark=nope", "watermark"),
        ("crop_gravity=clever", "crop_gravity"),
    ],
)
async def test_bad_values_name_the_parameter(
    opt: httpx.AsyncClient, query: str, param: str
) -> None:
    response = await opt.get(f"/photo.jpg?{query}")
    assert response.status_code == 400
    assert response.json()["error"].startswith(f"{param}: ")


# --- AVIF by Accept -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (CHROME, "avif"),
        (FIREFOX, "avif"),
        (SAFARI, "avif"),
        (SAFARI_15, "webp"),
        (OLD_SAFARI, "jpeg"),
        ("image/avif;q=0,image/webp", "webp"),
        (None, "jpeg"),
    ],
)
async def test_avif_by_accept(
    custom_client: Callable[..., Any], accept: str | None, expected: str
) -> None:
    headers = {} if accept is None else {"accept": accept}
    async with custom_client(auto_formats="avif,webp") as client:
        response = await client.get("/photo.jpg?width=300", headers=headers)
    assert response.status_code == 200
    assert sniff(response.content) == expected
    assert response.headers["x-output-format"] == expected
    assert response.headers["vary"] == "Accept"
    image = decoded(response)
    assert (image.width, image.height) == (300, 225)
    assert near(image(30, 30), make.RED, 30)


async def test_avif_only_when_the_operator_lists_it(opt: httpx.AsyncClient) -> None:
    response = await opt.get("/photo.jpg?width=300", headers={"accept": CHROME})
    assert sniff(response.content) == "webp"  # the default ASSETGATE_AUTO_FORMATS=webp


async def test_avif_above_its_limit_falls_back_to_webp(custom_client: Callable[..., Any]) -> None:
    async with custom_client(auto_formats="avif,webp", max_avif_pixels=100_000) as client:
        big = await client.get("/photo.jpg?width=800", headers={"accept": CHROME})
        small = await client.get("/photo.jpg?width=300", headers={"accept": CHROME})
        asked = await client.get("/photo.jpg?width=800&format=avif", headers={"accept": CHROME})
    assert big.status_code == 200
    assert sniff(big.content) == "webp"  # 480 000 px > 100 000: not a 413, WebP
    assert sniff(small.content) == "avif"  # 67 500 px
    assert asked.status_code == 413  # asked for AVIF by name: the spec's limit stands


async def test_avif_and_webp_answers_have_their_own_etags(
    custom_client: Callable[..., Any],
) -> None:
    async with custom_client(auto_formats="avif,webp") as client:
        tags = {
            (await client.head("/photo.jpg?w=100", headers={"accept": accept})).headers["etag"]
            for accept in (CHROME, SAFARI_15, OLD_SAFARI)
        }
        assert len(tags) == 3
        webp_first = await client.get("/photo.jpg?w=100", headers={"accept": CHROME})
    async with custom_client(auto_formats="webp,avif") as client:
        preferred = await client.get("/photo.jpg?w=100", headers={"accept": CHROME})
        only_avif = await client.get("/photo.jpg?w=100", headers={"accept": "image/avif"})
    assert sniff(webp_first.content) == "avif"
    assert sniff(preferred.content) == "webp"
    assert sniff(only_avif.content) == "avif"
    assert preferred.headers["etag"] != webp_first.headers["etag"]


# --- info=1 ---------------------------------------------------------------------------------


async def test_info_describes_the_file(opt: httpx.AsyncClient, files: dict[str, bytes]) -> None:
    response = await opt.get("/photo.jpg?info=1", headers={"accept": CHROME})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "vary" not in response.headers
    facts = response.json()
    assert facts["width"] == 800
    assert facts["height"] == 600
    assert facts["format"] == "jpeg"
    assert facts["frames"] == 1
    assert facts["has_alpha"] is False
    assert facts["orientation"] == 1
    assert facts["color_space"] == "srgb"
    assert facts["bytes"] == len(files["photo.jpg"])
    # the four quadrants are equal: the most common colour is one of them
    assert facts["dominant_color"] in ("#ff0000", "#00ff00", "#0000ff", "#ffffff") or near(
        [int(facts["dominant_color"][i : i + 2], 16) for i in (1, 3, 5)], (255, 255, 255), 8
    )
    again = await opt.get("/?file=photo.jpg&info=1")
    assert again.headers["x-optimizer-cache"] == "HIT"
    assert again.headers["etag"] == response.headers["etag"]
    assert again.content == response.content


async def test_info_placeholders_decode_to_the_image_average(
    opt: httpx.AsyncClient, docroot: Path
) -> None:
    picture = Image.new("RGB", (120, 90), (40, 120, 200))
    picture.paste((240, 200, 40), (0, 0, 40, 90))
    save(docroot / "two.png", picture)
    average = pyvips.Image.new_from_buffer(make.pillow_bytes(picture, "PNG"), "").stats()
    mean = [average(4, band)[0] for band in (1, 2, 3)]
    facts = (await opt.get("/two.png?info=1")).json()
    assert facts["dominant_color"] == "#2878c8"  # (40, 120, 200), two thirds of the pixels
    # BlurHash, decoded by the reference decoder (Wolt's C library)
    blurred = blurhash.decode(facts["blurhash"], 30, 20)
    got = pyvips.Image.new_from_buffer(make.pillow_bytes(blurred, "PNG"), "").stats()
    assert near([got(4, band)[0] for band in (1, 2, 3)], tuple(round(m) for m in mean), 16)
    # ThumbHash, decoded by the thumbhash package
    hashed = list(base64.b64decode(facts["thumbhash"]))
    r, g, b, a = thumbhash.thumb_hash_to_average_rgba(hashed)
    assert near([r * 255, g * 255, b * 255], tuple(round(m) for m in mean), 16)
    assert a == 1.0
    # the tiny placeholder is a WebP of the same picture
    prefix = "data:image/webp;base64,"
    assert facts["placeholder"].startswith(prefix)
    tiny = pyvips.Image.new_from_buffer(base64.b64decode(facts["placeholder"][len(prefix) :]), "")
    assert (tiny.width, tiny.height) == (16, 12)
    assert near(tiny(2, 6), (240, 200, 40), 40)
    assert near(tiny(12, 6), (40, 120, 200), 40)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("oriented6.jpg", {"width": 80, "height": 60, "orientation": 6, "format": "jpeg"}),
        ("alpha.png", {"width": 200, "height": 100, "has_alpha": True, "format": "png"}),
        ("anim.gif", {"frames": 3, "format": "gif"}),
        ("cmyk.jpg", {"color_space": "cmyk"}),
        ("deep.png", {"color_space": "rgb16"}),
        ("still.avif", {"format": "avif", "width": 64, "height": 48}),
    ],
)
async def test_info_values_match_the_file(
    opt: httpx.AsyncClient, name: str, expected: dict[str, Any]
) -> None:
    response = await opt.get(f"/{name}?info=1")
    assert response.status_code == 200, response.text
    facts = response.json()
    assert {key: facts[key] for key in expected} == expected
    if expected.get("has_alpha"):
        _r, _g, _b, a = thumbhash.thumb_hash_to_average_rgba(
            list(base64.b64decode(facts["thumbhash"]))
        )
        assert a < 1.0


async def test_info_is_signed_like_any_transformation(
    custom_client: Callable[..., Any],
) -> None:
    async with custom_client(signing_keys=[KEY]) as client:
        assert (await client.get("/photo.jpg?info=1")).status_code == 403
        signed = await client.get(sign_url("/photo.jpg?info=1", KEY))
    assert signed.status_code == 200
    assert signed.json()["width"] == 800


async def test_info_of_a_bad_file_is_a_clear_error(opt: httpx.AsyncClient) -> None:
    assert (await opt.get("/fake.jpg?info=1")).status_code == 415
    assert (await opt.get("/bomb.png?info=1")).status_code == 413


# --- max_bytes ------------------------------------------------------------------------------


async def test_max_bytes_is_met_with_the_highest_quality_that_fits(
    opt: httpx.AsyncClient,
) -> None:
    full = await opt.get("/noise.jpg?format=webp", headers=OLD)
    budget = len(full.content) // 2
    response = await opt.get(f"/noise.jpg?format=webp&max_bytes={budget}", headers=OLD)
    assert response.status_code == 200
    assert len(response.content) <= budget
    assert response.headers["x-optimizer-budget"] == "met"
    quality = int(response.headers["x-output-quality"])
    assert 10 <= quality < 85
    one_up = await opt.get(f"/noise.jpg?format=webp&quality={quality + 1}", headers=OLD)
    assert len(one_up.content) > budget  # the highest quality that fits
    assert decoded(response).width == 400


async def test_max_bytes_reports_a_budget_nothing_meets(opt: httpx.AsyncClient) -> None:
    response = await opt.get("/noise.jpg?format=jpeg&max_bytes=100", headers=OLD)
    assert response.status_code == 200
    assert response.headers["x-optimizer-budget"] == "exceeded"
    assert response.headers["x-output-quality"] == "10"
    assert len(response.content) > 100
    lowest = await opt.get("/noise.jpg?format=jpeg&quality=10", headers=OLD)
    assert len(response.content) == len(lowest.content)


async def test_max_bytes_that_fits_at_once_costs_nothing(opt: httpx.AsyncClient) -> None:
    response = await opt.get("/photo.jpg?w=100&max_bytes=1000000", headers=OLD)
    assert response.headers["x-output-quality"] == "85"
    assert response.headers["x-optimizer-budget"] == "met"


# --- watermarks -----------------------------------------------------------------------------


def logo(docroot: Path) -> str:
    save(docroot / "marks" / "logo.png", Image.new("RGBA", (40, 20), (0, 0, 255, 255)))
    return json.dumps(
        {
            "logo": {"path": "marks/logo.png", "gravity": "southeast", "margin": 10, "size": 0.1},
            "faint": {"path": "marks/logo.png", "gravity": "northwest", "opacity": 0.5},
        }
    )


async def test_watermark_lands_where_its_gravity_says(
    custom_client: Callable[..., Any], docroot: Path
) -> None:
    save(docroot / "white.png", Image.new("RGB", (400, 300), make.WHITE))
    async with custom_client(watermarks=logo(docroot)) as client:
        image = decoded(await client.get("/white.png?watermark=logo&format=png", headers=PNG))
        faint = decoded(await client.get("/white.png?watermark=faint&format=png", headers=PNG))
        plain = await client.get("/white.png?format=png", headers=PNG)
        unknown = await client.get("/white.png?watermark=nope", headers=PNG)
    # 10 % of 400 px = 40x20, 10 px from the bottom-right corner
    assert near(image(350, 270), (0, 0, 255), 2)
    assert near(image(389, 289), (0, 0, 255), 2)
    assert near(image(395, 295), (255, 255, 255), 2)  # the margin
    assert near(image(345, 270), (255, 255, 255), 2)
    assert near(image(200, 150), (255, 255, 255), 2)
    # 25 % wide (100x50) at the top-left, half opaque: blue over white
    assert near(faint(50, 25), (128, 128, 255), 3)
    assert near(faint(150, 25), (255, 255, 255), 2)
    assert near(decoded(plain)(350, 270), (255, 255, 255), 2)
    assert unknown.status_code == 400
    assert unknown.json()["error"].startswith("watermark: ")


async def test_a_preset_carries_the_watermark(
    custom_client: Callable[..., Any], docroot: Path, tmp_path: Path
) -> None:
    save(docroot / "white.png", Image.new("RGB", (400, 300), make.WHITE))
    presets = tmp_path / "presets.json"
    presets.write_text('{"public": {"watermark": "logo", "format": "png"}}')
    async with custom_client(watermarks=logo(docroot), presets=presets) as client:
        image = decoded(await client.get("/white.png?preset=public", headers=PNG))
    assert near(image(389, 289), (0, 0, 255), 2)


async def test_changing_the_logo_changes_the_etag(
    custom_client: Callable[..., Any], docroot: Path
) -> None:
    config = logo(docroot)
    async with custom_client(watermarks=config) as client:
        first = (await client.head("/photo.jpg?watermark=logo", headers=OLD)).headers["etag"]
    save(docroot / "marks" / "logo.png", Image.new("RGBA", (40, 20), (255, 0, 0, 255)))
    async with custom_client(watermarks=config) as client:
        second = (await client.head("/photo.jpg?watermark=logo", headers=OLD)).headers["etag"]
    assert first != second


async def test_edges_of_trim_and_flattening(opt: httpx.AsyncClient, docroot: Path) -> None:
    (docroot / "dot.png").write_bytes(make.png(2, 2))
    dot = decoded(await opt.get("/dot.png?trim=true&format=png", headers=PNG))
    assert (dot.width, dot.height) == (2, 2)  # too small to trim: left whole, no error
    clear = Image.new("LA", (20, 10), (90, 0))
    clear.paste((90, 255), (10, 0, 20, 10))
    save(docroot / "grey-alpha.png", clear)
    red = decoded(await opt.get("/grey-alpha.png?format=jpeg&background=ff0000", headers=OLD))
    assert red.bands == 3  # a grey image flattened onto a colour shows the colour
    assert near(red(3, 5), (255, 0, 0), 8)
    assert near(red(15, 5), (90, 90, 90), 8)
