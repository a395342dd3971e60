"""CSS and JavaScript through the real app: the optimizer's two URL forms reach asset_response."""

from __future__ import annotations

import gzip
from pathlib import Path

import httpx
import pytest

from assetgate.minify.minifiers import minify_css, minify_js

pytestmark = pytest.mark.anyio

JS = b"/*! keep */\nconst greet = ( name ) => `hello  ${ name }` ;   \n\n\nexport { greet } ;\n"
CSS = b"/* drop */\n:root { --gap : 4px ; }\n.a  >  .b { margin : calc( 1px + var(--gap) ) ; }\n"


async def test_file_form_minifies_javascript(client: httpx.AsyncClient, docroot: Path) -> None:
    (docroot / "js").mkdir()
    (docroot / "js" / "x.js").write_bytes(JS)
    response = await client.get("/?file=js/x.js&min=1", headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200
    assert response.content == minify_js(JS)
    assert response.content.startswith(b"/*! keep */const greet=(name)=>`hello  ${ name }`;")
    assert response.headers["content-type"] == "application/javascript; charset=utf-8"
    assert response.headers["x-original-size"] == str(len(JS))
    assert response.headers["access-control-allow-origin"] == "*"


async def test_public_form_minifies_and_gzips_css(client: httpx.AsyncClient, docroot: Path) -> None:
    (docroot / "x.css").write_bytes(CSS * 50)  # big enough for gzip to pay off
    response = await client.get("/x.css?min=1&compress=1", headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["vary"] == "Accept-Encoding"
    assert response.content == minify_css(CSS * 50)
    assert response.content == b":root{--gap:4px}.a>.b{margin:calc(1px + var(--gap))}" * 50
    assert int(response.headers["x-compressed-size"]) < 200
    async with client.stream(
        "GET", "/x.css?min=1&compress=1", headers={"Accept-Encoding": "gzip"}
    ) as raw:
        body = b"".join([chunk async for chunk in raw.aiter_raw()])
    assert gzip.decompress(body) == minify_css(CSS * 50)
    etag = response.headers["etag"]
    again = await client.get(
        "/x.css?compress=1&min=1", headers={"Accept-Encoding": "gzip", "If-None-Match": etag}
    )
    assert again.status_code == 304


async def test_plain_public_url_is_the_file(client: httpx.AsyncClient, docroot: Path) -> None:
    (docroot / "x.mjs").write_bytes(JS)
    response = await client.get("/x.mjs")
    assert response.status_code == 200
    assert response.content == JS
    assert response.headers["content-type"] == "application/javascript; charset=utf-8"


async def test_bad_flag_through_the_app_is_400(client: httpx.AsyncClient, docroot: Path) -> None:
    (docroot / "x.js").write_bytes(JS)
    response = await client.get("/?file=x.js&min=yes")
    assert response.status_code == 400
    assert response.json()["error"].startswith("min: expected 0 or 1")


async def test_image_parameters_have_no_effect_but_are_still_checked(
    client: httpx.AsyncClient, docroot: Path
) -> None:
    """Valid image parameters change nothing on CSS/JS; an invalid one is still a 400 naming it
    (one validation for every optimizer URL: a typo is reported, not silently ignored)."""
    (docroot / "x.js").write_bytes(JS)
    plain = await client.get("/x.js?min=1", headers={"Accept-Encoding": "identity"})
    with_image = await client.get(
        "/x.js?min=1&width=300&format=webp&blur=5", headers={"Accept-Encoding": "identity"}
    )
    assert with_image.status_code == 200
    assert with_image.content == plain.content == minify_js(JS)
    assert with_image.headers["etag"] == plain.headers["etag"]
    assert "x-output-format" not in with_image.headers
    bad = await client.get("/x.js?min=1&width=abc")
    assert bad.status_code == 400
    assert bad.json()["error"] == "width: expected an integer 1..50000, got 'abc'"
    face = await client.get("/x.js?face_crop=1")
    assert face.status_code == 400
