"""ETag equivalence, Vary, Last-Modified and every 304 path - answered before any decoding."""

from __future__ import annotations

import os

import httpx
import pytest

from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

OLD = {"accept": "image/jpeg,*/*"}
WEBP = {"accept": "image/webp,*/*"}


async def etag(client: httpx.AsyncClient, url: str, headers: dict[str, str] | None = None) -> str:
    response = await client.get(url, headers=headers or OLD)
    assert response.status_code == 200, response.text
    return response.headers["etag"]


@pytest.mark.parametrize(
    "variants",
    [
        ["/photo.jpg?w=100", "/photo.jpg?width=100", "/?file=photo.jpg&w=100"],
        ["/photo.jpg?w=100&h=50", "/photo.jpg?height=50&width=100", "/photo.jpg?h=50&w=100&v=9"],
        ["/photo.jpg?w=100", "/photo.jpg?w=100&rotate=0&upscaling=off&quality=85&blur=0"],
        ["/photo.jpg?w=100&f=jpg", "/photo.jpg?format=jpeg&width=100"],
        ["/photo.jpg?crop=10,10", "/photo.jpg?crop_gravity=center&crop=10,10"],
    ],
)
async def test_equivalent_queries_share_one_etag(
    opt: httpx.AsyncClient, variants: list[str]
) -> None:
    tags = {await etag(opt, url) for url in variants}
    assert len(tags) == 1


async def test_etag_changes_with_transform_format_and_source(
    opt: httpx.AsyncClient, docroot: os.PathLike[str]
) -> None:
    base = await etag(opt, "/photo.jpg?w=100")
    assert await etag(opt, "/photo.jpg?w=101") != base
    assert await etag(opt, "/photo.jpg?w=100", WEBP) != base  # negotiated format is part of it
    assert await etag(opt, "/photo.jpg?w=100&format=png") != base
    path = os.path.join(docroot, "photo.jpg")
    with open(path, "ab") as handle:
        handle.write(b"\x00")  # bytes after the JPEG's end: a new source all the same
    assert await etag(opt, "/photo.jpg?w=100") != base


async def test_explicit_format_etag_ignores_accept(opt: httpx.AsyncClient) -> None:
    assert await etag(opt, "/photo.jpg?w=100&format=png", WEBP) == await etag(
        opt, "/photo.jpg?w=100&format=png", OLD
    )


async def test_vary_accept_on_every_negotiable_response(opt: httpx.AsyncClient) -> None:
    negotiable = [
        ("/photo.jpg?w=100", OLD),
        ("/photo.jpg?w=100", WEBP),
        ("/?file=photo.jpg", OLD),  # pass-through, but WebP would have been chosen for others
        ("/still.bmp?w=10", OLD),
    ]
    for url, headers in negotiable:
        response = await opt.get(url, headers=headers)
        assert response.headers["vary"] == "Accept", url
        not_modified = await opt.get(
            url, headers={**headers, "if-none-match": response.headers["etag"]}
        )
        assert not_modified.status_code == 304
        assert not_modified.headers["vary"] == "Accept"
    for url in ("/photo.jpg?w=100&format=webp", "/photo.jpg"):
        assert "vary" not in (await opt.get(url, headers=WEBP)).headers


@pytest.mark.parametrize("url", ["/photo.jpg?w=100", "/photo.jpg", "/?file=photo.jpg&format=png"])
async def test_304_paths(opt: httpx.AsyncClient, url: str) -> None:
    first = await opt.get(url, headers=OLD)
    tag, modified = first.headers["etag"], first.headers["last-modified"]
    cases = {
        tag: 304,
        f"W/{tag}": 304,  # weak comparison
        f'"nope", {tag}': 304,  # a list
        "*": 304,
        '"nope"': 200,
    }
    for value, status in cases.items():
        response = await opt.get(url, headers={**OLD, "if-none-match": value})
        assert response.status_code == status, value
        if status == 304:
            assert response.content == b""
            assert response.headers["etag"] == tag
            assert response.headers["cache-control"] == first.headers["cache-control"]
            assert response.headers["last-modified"] == modified
    since = await opt.get(url, headers={**OLD, "if-modified-since": modified})
    assert since.status_code == 304
    older = await opt.get(
        url, headers={**OLD, "if-modified-since": "Mon, 01 Jan 2001 00:00:00 GMT"}
    )
    assert older.status_code == 200
    # If-None-Match wins over If-Modified-Since.
    both = await opt.get(
        url, headers={**OLD, "if-none-match": '"nope"', "if-modified-since": modified}
    )
    assert both.status_code == 200
    head = await opt.head(url, headers={**OLD, "if-none-match": tag})
    assert head.status_code == 304


async def test_304_is_answered_before_any_decoding(opt: httpx.AsyncClient) -> None:
    url = "/fake.jpg?w=100"  # not an image: only a sniff or a decode could notice
    assert (await opt.get(url, headers=OLD)).status_code == 415
    for conditional in (
        {"if-none-match": "*"},
        {"if-modified-since": "Fri, 01 Jan 2100 00:00:00 GMT"},
    ):
        response = await opt.get(url, headers={**OLD, **conditional})
        assert response.status_code == 304, conditional


async def test_a_rewrite_that_keeps_size_and_mtime_is_never_given_its_old_etag(
    opt: httpx.AsyncClient, docroot: os.PathLike[str]
) -> None:
    """``cp -p`` and ``rsync -t`` restore the mtime; the ETag is the content's, and ctime moves."""
    url = "/photo.jpg?w=100"
    first = await opt.get(url, headers=OLD)
    static = await opt.get("/photo.jpg")
    path = os.path.join(docroot, "photo.jpg")
    stat = os.stat(path)
    with open(path, "r+b") as handle:
        handle.write(b"\x00" * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert os.stat(path).st_size == stat.st_size
    response = await opt.get(url, headers={**OLD, "if-none-match": first.headers["etag"]})
    assert response.status_code == 415  # not a 304: the bytes are new, and now undecodable
    rewritten = await opt.get("/photo.jpg", headers={"if-none-match": static.headers["etag"]})
    assert rewritten.status_code == 200
    assert rewritten.content == b"\x00" * stat.st_size
    assert rewritten.headers["etag"] != static.headers["etag"]
    assert rewritten.headers["last-modified"] == static.headers["last-modified"]


async def test_mtime_alone_does_not_change_the_etag(
    opt: httpx.AsyncClient, docroot: os.PathLike[str]
) -> None:
    """Copies of one file on two machines have other mtimes: the ETag is the content's."""
    before = await opt.get("/photo.jpg?w=100", headers=OLD)
    path = os.path.join(docroot, "photo.jpg")
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    after = await opt.get("/photo.jpg?w=100", headers=OLD)
    assert after.headers["etag"] == before.headers["etag"]
    assert after.headers["last-modified"] != before.headers["last-modified"]


async def test_cache_control_is_configurable(custom_client: object) -> None:
    async with custom_client(cache_control="public, max-age=60") as client:  # type: ignore[operator]
        response = await client.get("/photo.jpg?w=10")
        assert response.headers["cache-control"] == "public, max-age=60"


async def test_shrink_mode_is_part_of_the_etag(
    opt: httpx.AsyncClient, custom_client: object
) -> None:
    """ASSETGATE_FAST_SHRINK changes JPEG bytes, so it must change the ETag too."""
    url = "/photo.jpg?w=190&format=png"
    fast = await opt.get(url)
    async with custom_client(fast_shrink=False) as client:  # type: ignore[operator]
        slow = await client.get(url)
    assert fast.status_code == slow.status_code == 200
    assert fast.headers["etag"] != slow.headers["etag"]
    assert fast.content != slow.content
    fast_image, slow_image = (make.decode(r.content) for r in (fast, slow))
    assert (
        (fast_image.width, fast_image.height) == (slow_image.width, slow_image.height) == (190, 142)
    )
