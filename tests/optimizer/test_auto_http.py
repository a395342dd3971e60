"""``quality=auto`` over HTTP: headers, the cache and the ETag, 400s, the memory budget, the
operator's settings; real corpus images in the document root."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pyvips

from assetgate.optimizer import autoencode
from tests.conftest import app_client

pytestmark = pytest.mark.anyio

CORPUS = Path(__file__).parent.parent / "data" / "corpus"
JPEG = {"accept": "image/jpeg"}


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every encode a search makes, counted at the encoder (which still encodes)."""
    calls: list[str] = []
    real = autoencode.encode

    def counting(image: pyvips.Image, fmt: Any, **kwargs: Any) -> bytes:
        calls.append(fmt)
        return real(image, fmt, **kwargs)

    monkeypatch.setattr(autoencode, "encode", counting)
    return calls


@pytest.fixture
def client_with(docroot: Path, make_settings: Callable[..., Any]) -> Callable[..., app_client]:
    for name in ("photo-coffee.jpg", "graphic-text.png", "alpha-logo.png"):
        shutil.copyfile(CORPUS / name, docroot / name)

    def build(**overrides: Any) -> app_client:
        return app_client(make_settings(**overrides))

    return build


async def test_auto_answers_its_quality_and_score(client_with: Callable[..., app_client]) -> None:
    async with client_with() as client:
        response = await client.get("/photo-coffee.jpg?quality=auto&width=300", headers=JPEG)
    assert response.status_code == 200, response.text
    assert response.headers["x-output-format"] == "jpeg"
    quality = int(response.headers["x-output-quality"])
    assert 1 <= quality <= 100
    assert float(response.headers["x-output-score"]) >= 74
    assert "x-optimizer-budget" not in response.headers  # no max_bytes asked
    assert pyvips.Image.new_from_buffer(response.content, "").width == 300


async def test_an_auto_answer_is_cached_and_not_searched_again(
    client_with: Callable[..., app_client], encodes: list[str]
) -> None:
    async with client_with() as client:
        first = await client.get("/photo-coffee.jpg?q=auto&width=240", headers=JPEG)
        searched = len(encodes)
        second = await client.get("/photo-coffee.jpg?q=auto&width=240", headers=JPEG)
    assert 1 <= searched <= 5
    assert len(encodes) == searched  # the hit encoded nothing
    assert (first.headers["x-optimizer-cache"], second.headers["x-optimizer-cache"]) == (
        "MISS",
        "HIT",
    )
    assert second.content == first.content
    for header in ("etag", "x-output-quality", "x-output-score"):
        assert second.headers[header] == first.headers[header]


async def test_auto_and_85_are_different_variants(client_with: Callable[..., app_client]) -> None:
    async with client_with() as client:
        urls = ("quality=auto", "quality=85", "quality=auto:75", "q=auto", "quality=auto:60")
        answers = {u: await client.get(f"/photo-coffee.jpg?{u}", headers=JPEG) for u in urls}
    etags = {u: a.headers["etag"] for u, a in answers.items()}
    assert etags["quality=auto"] != etags["quality=85"]
    # auto is auto:<the server's target, 75>, whatever the spelling.
    assert etags["quality=auto"] == etags["quality=auto:75"] == etags["q=auto"]
    assert etags["quality=auto:60"] != etags["quality=auto"]
    assert "x-output-score" not in answers["quality=85"].headers


@pytest.mark.parametrize(
    "query", ["quality=auto:5", "quality=auto:x", "quality=auto:96", "quality=autox", "q=auto:"]
)
async def test_bad_auto_values_are_a_400_naming_quality(
    client_with: Callable[..., app_client], query: str
) -> None:
    async with client_with() as client:
        response = await client.get(f"/photo-coffee.jpg?{query}")
    assert response.status_code == 400
    body = response.json()
    name = query.split("=")[0]
    assert body["error"].startswith(f"{name}: expected an integer 0..100, auto, or auto:")
    assert "Traceback" not in response.text


async def test_the_memory_budget_counts_the_search(
    client_with: Callable[..., app_client],
) -> None:
    """A job limit between a fixed render's cost and a search's: the search is the 413."""
    # 300x200: a fixed JPEG render counts ~1 MB, a search ~16 MB (imaging.cost.AUTO_BYTES).
    async with client_with(render_job_memory_bytes=8_000_000) as client:
        fixed = await client.get("/photo-coffee.jpg?quality=80&width=300", headers=JPEG)
        searched = await client.get("/photo-coffee.jpg?quality=auto&width=300", headers=JPEG)
    assert fixed.status_code == 200
    assert searched.status_code == 413, searched.text
    assert searched.json()["error"].startswith("file: rendering it as")


async def test_the_operator_can_make_auto_the_default(
    client_with: Callable[..., app_client],
) -> None:
    async with client_with(default_quality="auto", auto_quality_target=60) as client:
        plain = await client.get("/photo-coffee.jpg?width=200", headers=JPEG)
        named = await client.get("/photo-coffee.jpg?width=200&quality=auto:60", headers=JPEG)
        fixed = await client.get("/photo-coffee.jpg?width=200&quality=85", headers=JPEG)
    assert float(plain.headers["x-output-score"]) >= 59
    assert plain.headers["etag"] == named.headers["etag"]
    assert "x-output-score" not in fixed.headers


async def test_auto_with_a_byte_budget_fits_it(client_with: Callable[..., app_client]) -> None:
    async with client_with() as client:
        free = await client.get("/photo-coffee.jpg?quality=auto", headers=JPEG)
        budget = len(free.content) * 2 // 3
        tight = await client.get(f"/photo-coffee.jpg?quality=auto&max_bytes={budget}", headers=JPEG)
    assert tight.headers["x-optimizer-budget"] == "met"
    assert len(tight.content) <= budget
    assert int(tight.headers["x-output-quality"]) < int(free.headers["x-output-quality"])
    assert float(tight.headers["x-output-score"]) < float(free.headers["x-output-score"])


async def test_webp_graphic_may_go_lossless(client_with: Callable[..., app_client]) -> None:
    async with client_with() as client:
        response = await client.get("/graphic-text.png?quality=auto&format=webp")
    assert response.status_code == 200
    assert float(response.headers["x-output-score"]) >= 74
    assert response.headers["x-output-quality"]  # a number, lossless or near-lossless:<level>


async def test_png_ignores_auto(client_with: Callable[..., app_client]) -> None:
    async with client_with() as client:
        response = await client.get("/alpha-logo.png?quality=auto&format=png&width=100")
    assert response.status_code == 200
    assert "x-output-score" not in response.headers


async def test_openapi_describes_auto(client_with: Callable[..., app_client]) -> None:
    async with client_with() as client:
        doc = (await client.get("/openapi.json")).json()
    params = {p["name"]: p for p in doc["paths"]["/"]["get"]["parameters"]}
    schema = params["quality"]["schema"]
    assert {"type": "integer", "minimum": 0, "maximum": 100} in schema["oneOf"]
    assert "auto" in params["quality"]["description"]
