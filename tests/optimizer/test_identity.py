"""Two servers whose roots hold copies of one file (other inodes, other mtimes) agree on ETags."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.imaging import factory as make
from tests.serve_process import Start

URLS = ("/photo.jpg", "/photo.jpg?w=50&format=png", "/site.css", "/site.css?min=1")
ACCEPT = {"accept": "image/jpeg", "accept-encoding": "identity"}


def two_roots(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "node1", tmp_path / "node2"
    first.mkdir()
    (first / "photo.jpg").write_bytes(make.jpeg(120, 90))
    (first / "site.css").write_bytes(b"/* c */\nbody {\n  color : red ;\n}\n" * 20)
    shutil.copytree(first, second)  # copies: new inodes
    for name in ("photo.jpg", "site.css"):
        os.utime(second / name, ns=(10**18, 10**18 + 7))  # and other mtimes
        assert os.stat(first / name).st_ino != os.stat(second / name).st_ino
    return first, second


@pytest.mark.anyio
async def test_two_app_instances_on_copies_answer_one_etag(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    first, second = two_roots(tmp_path)
    async with (
        app_client(make_settings(root=first)) as one,
        app_client(make_settings(root=second)) as two,
    ):
        for url in URLS:
            a, b = await one.get(url, headers=ACCEPT), await two.get(url, headers=ACCEPT)
            assert a.status_code == b.status_code == 200, url
            assert a.headers["etag"] == b.headers["etag"], url
            assert a.headers["last-modified"] != b.headers["last-modified"], url
            revalidated = await two.get(url, headers={**ACCEPT, "if-none-match": a.headers["etag"]})
            assert revalidated.status_code == 304, url


@pytest.fixture
def two_served(tmp_path: Path, serve_cli: Start) -> tuple[str, str]:
    first, second = (serve_cli(root=str(root)).base for root in two_roots(tmp_path))
    return first, second


def test_two_serve_processes_on_copies_answer_one_etag(two_served: tuple[str, str]) -> None:
    one, two = two_served
    for url in URLS:
        a, b = httpx.get(one + url, headers=ACCEPT), httpx.get(two + url, headers=ACCEPT)
        assert a.status_code == b.status_code == 200, url
        assert a.headers["etag"] == b.headers["etag"], url
        revalidated = httpx.get(two + url, headers={**ACCEPT, "if-none-match": a.headers["etag"]})
        assert revalidated.status_code == 304, url


@pytest.mark.anyio
async def test_validators_are_computed_once_per_file_change(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    root, _ = two_roots(tmp_path)
    app = app_client(make_settings(root=root))
    async with app as client:
        sources = app.state["resources"].versions
        sources.settle_s = 0  # these files were written a moment ago
        tags = {}
        for url in URLS:
            for _ in range(4):
                response = await client.get(url, headers=ACCEPT)
                assert response.status_code == 200
                tags.setdefault(url, set()).add(response.headers["etag"])
                not_modified = await client.get(
                    url, headers={**ACCEPT, "if-none-match": response.headers["etag"]}
                )
                assert not_modified.status_code == 304
        assert all(len(found) == 1 for found in tags.values())
        assert sources.fingerprinted == 2  # photo.jpg and site.css, once each
        time.sleep(0.05)  # a real rewrite comes at least one kernel clock tick later
        (root / "site.css").write_bytes(b"p { margin : 0 }\n" * 30)
        changed = await client.get("/site.css?min=1", headers=ACCEPT)
        assert changed.headers["etag"] not in tags["/site.css?min=1"]
        assert changed.content == b"p{margin:0}" * 30
        assert sources.fingerprinted == 3
