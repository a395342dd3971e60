"""/ui/optimizer in real Chromium: state from its URL, the result's pixels, sizes, snippet."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.async_api import expect

from assetgate.settings import Settings
from tests.conftest import live_server
from tests.ui.conftest import fits_width, keep_screenshot, open_page
from tests.ui.images import BLUE, RED, decode, near, write_halves

pytestmark = pytest.mark.anyio


def kib(size: int) -> str:
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KiB"


@pytest.fixture
def root(docroot: Path) -> Path:
    write_halves(docroot / "photos" / "photo.jpg", 800, 400)
    write_halves(docroot / "photos" / ".hidden.jpg", 8, 8)
    write_halves(docroot / "cache" / "photo-old.jpg", 8, 8)
    (docroot / "photos" / "notes.txt").write_text("not an image")
    (docroot / "style.css").write_text("body {  color : red ; }\n")
    return docroot


async def test_playground_opens_with_the_state_of_its_url(
    browser, root: Path, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    source_size = (root / "photos" / "photo.jpg").stat().st_size
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser, viewport={"width": 1200, "height": 1250})
        await page.goto(f"{base}/ui/optimizer?file=photos/photo.jpg&width=400&format=webp&flop=1")
        status = page.locator("#status")
        await expect(status).to_have_text("Done: photos/photo.jpg.", timeout=20_000)
        assert await page.locator("#file").input_value() == "photos/photo.jpg"
        assert await page.locator("#p-width").input_value() == "400"
        assert await page.locator("#p-format").input_value() == "webp"
        assert await page.locator("#p-flop").is_checked()
        # One control per optimizer parameter (aliases w/h/q/f are not controls of their own).
        names = await page.eval_on_selector_all("#params [name]", "els => els.map(e => e.name)")
        assert "width" in names
        assert "sepia" in names
        assert "safe" in names
        assert not {"w", "h", "q", "f", "file"} & set(names)

        assert await page.locator("#live-url").text_content() == (
            f"{base}/photos/photo.jpg?width=400&flop=true&format=webp"
        )
        await expect(page.locator("#result-dims")).to_have_text("400 × 200")
        assert await page.locator("#original-dims").text_content() == "800 × 400"
        assert await page.locator("#output-format").text_content() == "webp"
        assert await page.locator("#bytes-before").text_content() == kib(source_size)
        assert (await page.locator("#ratio").text_content() or "").endswith("%")
        assert "ms in the browser" in (await page.locator("#time").text_content() or "")

        # What the person sees: the result at 400 x 200, flopped (blue left, red right).
        shot = decode(await page.locator("#result").screenshot())
        # (an element screenshot may gain a pixel row from sub-pixel layout)
        assert abs(shot.width - 400) <= 1
        assert abs(shot.height - 200) <= 1
        assert near(shot.getpixel((100, 100)), BLUE)
        assert near(shot.getpixel((300, 100)), RED)
        original = decode(await page.locator("#original").screenshot())
        assert near(original.getpixel((10, 10)), RED)

        # Each variant labelled by the width it really has: the 800 px source is never enlarged,
        # so 1280 is an "800w" entry (a "1280w" would make browsers pick it for 1280 slots).
        snippet = page.locator("#snippet")
        await expect(snippet).to_contain_text("800w", timeout=20_000)
        text = await snippet.text_content() or ""
        at = f"{base}/photos/photo.jpg?flop=true&format=webp&width="
        assert f"{at}320 320w" in text
        assert f"{at}640 640w" in text
        assert f"{at}1280 800w" in text
        assert "1280w" not in text
        assert text.startswith(f'<img src="{at}640"')
        assert 'sizes="(max-width: 800px) 100vw, 800px"' in text
        path = tmp_path / "optimizer-playground.png"
        await page.screenshot(path=str(path), full_page=False)
        keep_screenshot(path)

        # Keyboard: a new width typed and Tab pressed re-renders and rewrites the page's URL.
        await page.locator("#p-width").fill("200")
        await page.keyboard.press("Tab")
        await expect(page.locator("#result-dims")).to_have_text("200 × 100")
        assert "width=200" in page.url
        assert "file=photos%2Fphoto.jpg" in page.url

        # A bad value: the service's 400 message is shown, naming the parameter.
        await page.locator("#p-crop").fill("abc")
        await page.locator("#p-crop").press("Enter")
        await expect(status).to_contain_text("HTTP 400: crop: expected")
        assert problems == []


async def test_snippet_has_one_entry_per_real_width(
    browser, root: Path, make_settings: Callable[..., Settings]
) -> None:
    """A source narrower than every width asked is one entry at its own width."""
    write_halves(root / "small.png", 300, 200)
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser)
        await page.goto(f"{base}/ui/optimizer?file=small.png&format=png")
        snippet = page.locator("#snippet")
        await expect(snippet).to_contain_text("300w", timeout=20_000)
        text = await snippet.text_content() or ""
        assert text.count(" 300w") == 1
        assert f"{base}/small.png?format=png&width=320 300w" in text
        assert "640w" not in text
        assert "1280w" not in text
        # Widths typed later are measured again.
        await page.locator("#widths").fill("100,200,5000")
        await expect(snippet).to_contain_text("100w,")
        text = await snippet.text_content() or ""
        assert "200w" in text
        assert "width=5000 300w" in text
        assert problems == []


async def test_completion_lists_only_servable_files(
    browser, root: Path, make_settings: Callable[..., Settings]
) -> None:
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser)
        await page.goto(f"{base}/ui/optimizer")
        await page.locator("#file").press_sequentially("ph", delay=20)
        options = page.locator("#file-list option")
        await expect(options).to_have_count(1)
        assert await options.get_attribute("value") == "photos/photo.jpg"
        await page.locator("#file").fill("")
        await page.locator("#file").press_sequentially("s", delay=20)
        await expect(page.locator("#file-list option[value='style.css']")).to_have_count(1)
        # A CSS file: its minified text is the result.
        await page.locator("#file").fill("style.css")
        await page.locator("#p-min").select_option("1")
        await expect(page.locator("#text-result")).to_have_text("body{color:red}")
        assert problems == []


async def test_listing_turned_off_and_phone_width(
    browser, root: Path, make_settings: Callable[..., Settings]
) -> None:
    with live_server(make_settings(ui_file_listing=False)) as base:
        page, problems = await open_page(browser, viewport={"width": 390, "height": 844})
        await page.goto(f"{base}/ui/optimizer?file=photos/photo.jpg&width=300")
        await expect(page.locator("#listing-note")).to_contain_text("turned off")
        await expect(page.locator("#result-dims")).to_have_text("300 × 150")
        assert await fits_width(page, 390)
        # The result is scaled into the phone's column, not cut off.
        box = await page.locator("#result").bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 390
        assert problems == []


async def test_playground_shows_the_quality_auto_chose_and_its_score(
    browser, docroot: Path, make_settings: Callable[..., Settings]
) -> None:
    """quality=auto is typed as text (the schema's integer-or-auto) and the answer's
    X-Output-Quality and X-Output-Score are shown (a real photo of tests/data/corpus)."""
    import shutil

    corpus = Path(__file__).parent.parent / "data" / "corpus"
    shutil.copyfile(corpus / "photo-chelsea.jpg", docroot / "cat.jpg")
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser, viewport={"width": 1200, "height": 1250})
        await page.goto(f"{base}/ui/optimizer?file=cat.jpg&quality=auto&format=jpeg")
        await expect(page.locator("#status")).to_have_text("Done: cat.jpg.", timeout=20_000)
        assert await page.locator("#p-quality").input_value() == "auto"
        quality = await page.locator("#output-quality").text_content()
        assert quality is not None
        assert 1 <= int(quality) <= 100
        score = await page.locator("#output-score").text_content()
        assert score is not None
        assert float(score) >= 74
        assert not problems
