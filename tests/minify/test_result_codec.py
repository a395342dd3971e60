"""Rendered CSS/JS in the result cache: stored bytes round-trip, and a restart answers from disk."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from assetgate.cache import FOREVER, CodecError
from assetgate.minify.minifiers import minify_css
from assetgate.minify.render import Rendered
from assetgate.minify.result_codec import RENDERED, SKIPPED_TTL_S, ttl
from assetgate.settings import Settings
from tests.conftest import app_client

pytestmark = pytest.mark.anyio

CSS = b"/* drop */\n.a  >  .b { margin : 1px ; }\n" * 40


def test_rendered_round_trips_and_bad_bytes_are_refused() -> None:
    for value in (
        Rendered(b"\x1f\x8b\nbody\nwith newlines", "gzip", 1234, False),
        Rendered(b"", "identity", 0, True),
        Rendered(b"x", "identity", 1, True, skipped="timeout"),
    ):
        assert RENDERED.decode(RENDERED.encode(value)) == value
    with pytest.raises(CodecError):
        RENDERED.decode(b'{"encoding": "br", "original": 1, "same": false}\nx')
    with pytest.raises(CodecError):
        RENDERED.decode(b'{"encoding": "gzip", "original": 1, "same": false, "skipped": "x"}\nx')


def test_an_answer_without_its_transformation_is_kept_for_a_while_only() -> None:
    for skipped in ("timeout", "refused", "size"):
        value = Rendered(b"x", "identity", 1, True, skipped=skipped)  # type: ignore[arg-type]
        assert ttl(value) == SKIPPED_TTL_S
    assert ttl(Rendered(b"x", "identity", 1, True)) == FOREVER
    with pytest.raises(CodecError):
        RENDERED.decode(b"garbage")


async def test_a_restarted_app_answers_from_the_disk_and_a_rewrite_is_never_served_stale(
    make_settings: Callable[..., Settings], docroot: Path
) -> None:
    source = docroot / "x.css"
    source.write_bytes(CSS)
    settings = make_settings()
    url, accept = "/x.css?min=1", {"Accept-Encoding": "identity"}
    async with app_client(settings) as client:
        first = await client.get(url, headers=accept)
    async with app_client(settings) as client:  # a new process's memory is empty
        second = await client.get(url, headers=accept)
        assert (first.headers["x-asset-cache"], second.headers["x-asset-cache"]) == ("miss", "hit")
        assert second.content == first.content == minify_css(CSS)
        before = source.stat()
        source.write_bytes(CSS.replace(b"1px", b"2px"))  # same size ...
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))  # ... and same mtime
        third = await client.get(url, headers=accept)
    assert third.headers["x-asset-cache"] == "miss"
    assert b"margin:2px" in third.content
    assert third.headers["etag"] != first.headers["etag"]
