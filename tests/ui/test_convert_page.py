"""/ui/convert in real Chromium: per-file results and errors, drag and drop, the ZIP download."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image
from playwright.async_api import expect

from assetgate.settings import Settings
from tests.conftest import live_server
from tests.ui.conftest import fits_width, keep_screenshot, open_page
from tests.ui.images import BLUE, RED, decode, near, png_bytes

pytestmark = pytest.mark.anyio

DROP_SCRIPT = """([name, bytes]) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([new Uint8Array(bytes)], name, { type: "image/png" }));
  const zone = document.getElementById("drop");
  const init = { dataTransfer: transfer, bubbles: true, cancelable: true };
  zone.dispatchEvent(new DragEvent("drop", init));
}"""


async def test_each_file_gets_its_result_or_its_error(
    browser, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    red = tmp_path / "red.png"
    red.write_bytes(png_bytes(64, 32, RED))
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8\xff\xe0 this is not really a jpeg" * 10)
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser, viewport={"width": 1100, "height": 800})
        await page.goto(f"{base}/ui/convert")
        await page.locator("#files").set_input_files([str(red), str(broken)])
        status = page.locator("#status")
        await expect(status).to_have_text("1 converted, 1 failed.", timeout=20_000)
        rows = page.locator("#results tbody tr")
        await expect(rows).to_have_count(2)
        good, bad = rows.nth(0), rows.nth(1)
        assert await good.get_attribute("class") == "converted"
        cells = await good.locator("td").all_text_contents()
        assert cells[0] == "red.png"
        assert cells[1] == f"{red.stat().st_size} B"
        assert cells[4] == "Download red.webp"
        assert await bad.get_attribute("class") == "failed"
        error = await bad.locator(".error").text_content() or ""
        assert "broken.jpg" in error
        # The preview shows the converted pixels: a red 64 x 32 image.
        thumb = good.locator("img.thumb")
        await expect(thumb).to_have_js_property("naturalWidth", 64)
        shot = decode(await thumb.screenshot())
        assert near(shot.getpixel((shot.width // 2, shot.height // 2)), RED)
        assert await page.locator("#zip").is_disabled()  # one converted file: no ZIP yet

        # Drag and drop a second image onto the zone.
        blue = png_bytes(40, 40, BLUE)
        await page.evaluate(DROP_SCRIPT, ["blue.png", list(blue)])
        await expect(status).to_have_text("2 converted, 1 failed.", timeout=20_000)
        await expect(page.locator("#zip")).to_be_enabled()
        path = tmp_path / "convert.png"
        await page.screenshot(path=str(path))
        keep_screenshot(path)

        # The single WebP download is the service's answer.
        async with page.expect_download() as single:
            await good.locator("a").click()
        webp = Path(await (await single.value).path())
        with Image.open(webp) as image:
            assert (image.format, image.size) == ("WEBP", (64, 32))

        async with page.expect_download() as download_info:
            await page.locator("#zip").click()
        download = await download_info.value
        assert download.suggested_filename == "images.zip"
        archive = zipfile.ZipFile(io.BytesIO(Path(await download.path()).read_bytes()))
        assert archive.namelist() == ["red.webp", "blue.webp"]
        with Image.open(io.BytesIO(archive.read("blue.webp"))) as image:
            assert image.size == (40, 40)
            assert near(image.convert("RGB").getpixel((20, 20)), BLUE)
        await expect(status).to_contain_text("ZIP of 2 files")
        assert problems == []


async def test_phone_width(browser, make_settings: Callable[..., Settings]) -> None:
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser, viewport={"width": 390, "height": 844})
        await page.goto(f"{base}/ui/convert")
        await expect(page.locator("label[for=files]")).to_be_visible()
        assert await fits_width(page, 390)
        assert problems == []
