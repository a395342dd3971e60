"""The /ui/ part over HTTP: page headers (CSP, ETag, 304), 404/405, and the file listing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client

pytestmark = pytest.mark.anyio

PAGES = ("/ui/", "/ui/optimizer", "/ui/convert", "/ui/whois", "/ui/api")


@pytest.mark.parametrize("path", PAGES)
async def test_pages_have_a_strict_policy_and_validators(
    client: httpx.AsyncClient, path: str
) -> None:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self';" in csp
    assert "unsafe-inline" not in csp
    assert "unsafe-eval" not in csp
    assert "<script>" not in response.text
    assert "style=" not in response.text
    assert "http://" not in response.text
    assert "https://" not in response.text
    again = await client.get(path, headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304
    head = await client.head(path)
    assert head.status_code == 200
    assert head.content == b""


async def test_assets_misses_and_methods(client: httpx.AsyncClient) -> None:
    script = await client.get("/ui/static/optimizer.js")
    assert script.status_code == 200
    assert script.headers["content-type"] == "application/javascript; charset=utf-8"
    assert (await client.get("/ui/static/ui.css")).headers["content-type"].startswith("text/css")
    for missing in ("/ui/nope", "/ui/static/nope.js", "/ui/static/../routes.py", "/ui/index.html"):
        answer = await client.get(missing)
        assert answer.status_code == 404, missing
        assert answer.json() == {"error": "not found", "code": 404}
    posted = await client.post("/ui/optimizer")
    assert posted.status_code == 405
    assert (await client.get("/ui", follow_redirects=False)).headers["location"] == "/ui/"


async def test_listing_shows_only_servable_files(client: httpx.AsyncClient, docroot: Path) -> None:
    for name in ("b.png", "a/photo.JPG", "a/deep/x.webp", "site.css", "app.js", "notes.txt",
                 ".secret.png", "cache/old.png", "a/.git/y.png"):  # fmt: skip
        (docroot / name).parent.mkdir(parents=True, exist_ok=True)
        (docroot / name).write_bytes(b"x")
    (docroot / "link.png").symlink_to(docroot / "b.png")
    answer = await client.get("/ui/files")
    assert answer.json() == {
        "files": ["a/deep/x.webp", "a/photo.JPG", "app.js", "b.png", "site.css"],
        "truncated": False,
    }
    assert answer.headers["cache-control"] == "no-store"
    narrowed = await client.get("/ui/files", params={"q": "PHO", "limit": "1"})
    assert narrowed.json() == {"files": ["a/photo.JPG"], "truncated": False}
    capped = await client.get("/ui/files", params={"limit": "2"})
    assert capped.json() == {"files": ["a/deep/x.webp", "a/photo.JPG"], "truncated": True}
    bad = await client.get("/ui/files", params={"limit": "0"})
    assert bad.status_code == 400
    assert bad.json()["error"].startswith("limit:")


async def test_listing_can_be_turned_off(make_settings: Callable[..., Settings]) -> None:
    async with app_client(make_settings(ui_file_listing=False)) as client:
        answer = await client.get("/ui/files")
    assert answer.status_code == 404
    assert "ASSETGATE_UI_FILE_LISTING" in answer.json()["error"]


async def test_api_root_without_file_points_people_to_the_pages(client: httpx.AsyncClient) -> None:
    answer = await client.get("/")
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "file: required parameter is missing; pages for people are under /ui/",
        "code": 400,
    }
