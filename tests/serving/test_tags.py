"""Cache tags (serving/tags.py): what the CDNs read, within their limits, on every file answer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from assetgate.serving.tags import MAX_TAG_CHARS, MAX_TAGS, Tags, folders, path_tag, tag
from assetgate.settings import Settings
from tests.conftest import app_client
from tests.imaging.factory import jpeg


def test_a_file_is_tagged_by_path_folders_part_and_preset() -> None:
    tags = Tags("/img/x/a.jpg", "optimizer", "thumb")
    assert tags.values() == (
        "path:/img/x/a.jpg",
        "part:optimizer",
        "preset:thumb",
        "dir:/img/x/",
        "dir:/img/",
        "dir:/",
    )
    fields = tags.fields()
    assert fields["Cache-Tag"] == ",".join(tags.values())
    assert fields["Surrogate-Key"] == " ".join(tags.values())
    assert Tags("/a.jpg", "optimizer", headers=("surrogate-key",)).fields().keys() == {
        "Surrogate-Key"
    }
    assert Tags("/a.jpg", "optimizer", headers=()).fields() == {}


def test_a_package_file_names_the_package_and_its_version() -> None:
    tags = Tags(
        "/npm/@popperjs/core@2.11.8/dist/umd/popper.js",
        "packages",
        package=("@popperjs/core", "2.11.8"),
    )
    assert "npm:@popperjs/core" in tags.values()
    assert "npm:@popperjs/core@2.11.8" in tags.values()


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/a b.jpg", "path:/a%20b.jpg"),
        ("/a,b.jpg", "path:/a%2Cb.jpg"),
        ('/a"b.jpg', "path:/a%22b.jpg"),
        ("/100%.jpg", "path:/100%25.jpg"),
        ("/caf\u00e9.jpg", "path:/caf%C3%A9.jpg"),
        ("/a\tb.jpg", "path:/a%09b.jpg"),
    ],
)
def test_characters_a_tag_list_cannot_hold_are_encoded(path: str, expected: str) -> None:
    assert path_tag(path) == expected
    value = Tags(path, "optimizer").fields()
    assert value["Cache-Tag"].split(",")[0] == expected
    assert value["Surrogate-Key"].split(" ")[0] == expected
    assert all(32 < ord(char) < 127 for char in value["Cache-Tag"])


def test_cdn_limits_hold_for_a_deep_long_path() -> None:
    deep = "/" + "/".join(f"folder{index:03d}" for index in range(80)) + "/a.jpg"
    values = Tags(deep, "optimizer", "thumb").values()
    assert len(values) == MAX_TAGS
    assert values[:3] == (path_tag(deep), "part:optimizer", "preset:thumb")
    assert all(len(value) <= MAX_TAG_CHARS for value in values)
    assert values[3] == tag("dir", folders(deep)[0])  # the nearest folders are kept
    long = "/" + "x" * 400 + ".jpg"
    made = path_tag(long)
    assert len(made) <= MAX_TAG_CHARS
    assert made.startswith("path:~")
    assert made == path_tag(long) != path_tag(long.replace("x", "y", 1))
    header = ",".join(Tags(deep, "optimizer").values())
    assert len(header.encode()) < 16 * 1024  # Cloudflare's header limit


@pytest.mark.anyio
async def test_every_file_answer_carries_its_tags_under_both_url_forms(
    make_settings: Callable[..., Settings], docroot: Path
) -> None:
    (docroot / "img").mkdir()
    (docroot / "img" / "a.jpg").write_bytes(jpeg(64, 48))
    (docroot / "img" / "s.css").write_bytes(b"body {\n  color: red;\n}\n")
    async with app_client(make_settings()) as client:
        answers: dict[str, httpx.Response] = {}
        for url in (
            "/img/a.jpg?width=32&format=png",
            "/?file=img/a.jpg&width=32&format=png",
            "/img/a.jpg",
            "/img/s.css?min=1",
        ):
            answers[url] = await client.get(url)
            assert answers[url].status_code == 200, url
            assert "path:/img/" in answers[url].headers["cache-tag"]
        public, query = (
            answers["/img/a.jpg?width=32&format=png"],
            answers["/?file=img/a.jpg&width=32&format=png"],
        )
        assert public.headers["cache-tag"] == query.headers["cache-tag"]
        assert public.headers["cache-tag"] == "path:/img/a.jpg,part:optimizer,dir:/img/,dir:/"
        assert public.headers["surrogate-key"] == "path:/img/a.jpg part:optimizer dir:/img/ dir:/"
        assert answers["/img/a.jpg"].headers["cache-tag"].startswith("path:/img/a.jpg,")
        assert answers["/img/s.css?min=1"].headers["cache-tag"].startswith("path:/img/s.css,")
        # a 304 and a repeat (the hot lane's replay) carry the same block
        again = await client.get("/img/a.jpg?width=32&format=png")
        assert again.headers["cache-tag"] == public.headers["cache-tag"]
        unchanged = await client.get(
            "/img/a.jpg?width=32&format=png", headers={"If-None-Match": public.headers["etag"]}
        )
        assert unchanged.status_code == 304
        assert unchanged.headers["cache-tag"] == public.headers["cache-tag"]


@pytest.mark.anyio
async def test_which_headers_carry_the_tags_is_a_setting(
    make_settings: Callable[..., Settings], docroot: Path
) -> None:
    (docroot / "a.jpg").write_bytes(jpeg(64, 48))
    async with app_client(make_settings(cache_tag_headers="surrogate-key")) as client:
        answer = await client.get("/a.jpg?width=32")
        assert answer.headers["surrogate-key"].startswith("path:/a.jpg ")
        assert "cache-tag" not in answer.headers
    async with app_client(make_settings(cache_tag_headers="")) as client:
        answer = await client.get("/a.jpg?width=32")
        assert "cache-tag" not in answer.headers
        assert "surrogate-key" not in answer.headers
    with pytest.raises(ValueError, match="cache-tag and surrogate-key"):
        make_settings(cache_tag_headers="x-tags")
