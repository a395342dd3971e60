"""Unsafe paths are 404 exactly like a missing file, and nothing outside the root is ever opened.

Two canaries sit beside the document root: a JPEG carrying a marker that must never appear in a
response, and a FIFO watched by a thread that notices the moment anyone opens it for reading.
Symlinks inside the root point at both.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

MARKER = b"CANARY-7f3a9c"

UNSAFE = [
    "../canary.jpg",
    "..%2fcanary.jpg",
    "%2e%2e/canary.jpg",
    "%2E%2E%2Fcanary.jpg",
    "%252e%252e/canary.jpg",
    "%252e%252e%252fcanary.jpg",
    "..\\canary.jpg",
    "%2e%2e%5ccanary.jpg",
    "..%c0%afcanary.jpg",
    "dir/../../canary.jpg",
    "dir/../dir/../../canary.jpg",
    "dir/%2e%2e/%2e%2e/canary.jpg",
    "/etc/passwd",
    "//etc/passwd",
    "CANARY_ABSOLUTE",
    "~/canary.jpg",
    "~root/.profile",
    "C:\\Windows\\win.ini",
    "c:/windows/win.ini",
    "./photo.jpg",
    "%2e/photo.jpg",
    "dir/./nested.jpg",
    "dir//nested.jpg",
    "dir/nested.jpg/",
    ".git/config",
    ".env",
    "dir/.hidden.jpg",
    "cache/photo.jpg",
    "CACHE/photo.jpg",
    "cache",
    "photo.jpg%00.txt",
    "photo.jpg\x00",
    "dir/nested.jpg\r\n",
    "link.jpg",
    "linkdir/canary.jpg",
    "fifo.jpg",
    "dir",
    "a/" * 500 + "photo.jpg",  # 1009 characters: within the `file` parameter's 1024
]


@pytest.fixture
def canaries(docroot: Path, files: dict[str, bytes]) -> Iterator[threading.Event]:
    outside = docroot.parent
    canary = make.jpeg(64, 48)
    canary = canary[:2] + b"\xff\xfe" + (len(MARKER) + 2).to_bytes(2, "big") + MARKER + canary[2:]
    (outside / "canary.jpg").write_bytes(canary)
    fifo = outside / "canary.fifo"
    os.mkfifo(fifo)
    (docroot / "link.jpg").symlink_to(outside / "canary.jpg")
    (docroot / "linkdir").symlink_to(outside, target_is_directory=True)
    (docroot / "fifo.jpg").symlink_to(fifo)
    (docroot / ".git").mkdir()
    (docroot / ".git" / "config").write_bytes(make.jpeg())
    (docroot / ".env").write_bytes(make.jpeg())
    (docroot / "dir" / ".hidden.jpg").write_bytes(make.jpeg())
    (docroot / "cache").mkdir()
    (docroot / "cache" / "photo.jpg").write_bytes(make.jpeg())
    opened = threading.Event()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.002):
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # nobody has it open for reading: good
                    continue
                raise
            opened.set()
            os.close(fd)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    yield opened
    stop.set()
    watcher.join()


def public_url(path: str) -> str:
    """Percent-encode so the client keeps every byte (httpx would resolve a literal '..')."""
    return "/" + quote(path, safe="/").replace(".", "%2E")


def test_the_table_is_long_enough() -> None:
    assert len(UNSAFE) >= 30


@pytest.mark.parametrize("path", UNSAFE)
async def test_unsafe_paths_are_404_like_missing_files(
    opt: httpx.AsyncClient, canaries: threading.Event, docroot: Path, path: str
) -> None:
    if path == "CANARY_ABSOLUTE":
        path = str(docroot.parent / "canary.jpg")
    for query in ("", "&w=10", "&format=png&blur=3"):
        missing = await opt.get("/?file=no-such-file.jpg" + query)
        responses = [
            await opt.get("/?file=" + quote(path, safe="") + query),
            await opt.get(public_url(path) + ("?" + query[1:] if query else "")),
            await opt.head(public_url(path) + ("?" + query[1:] if query else "")),
        ]
        for response in responses:
            assert response.status_code == 404, (path, query, response.text[:100])
            if response.request.method == "GET":
                assert response.json() == missing.json() == {"error": "not found", "code": 404}
            assert MARKER not in response.content
    assert not canaries.is_set(), "a file outside the root was opened"


async def test_the_watcher_does_notice_a_reader(canaries: threading.Event, docroot: Path) -> None:
    """The FIFO canary is not vacuous: opening it for reading trips it."""
    fd = os.open(docroot.parent / "canary.fifo", os.O_RDONLY | os.O_NONBLOCK)
    try:
        for _ in range(2000):
            if canaries.wait(0.001):
                break
        assert canaries.is_set()
    finally:
        os.close(fd)


async def test_safe_neighbours_still_work(
    opt: httpx.AsyncClient, canaries: threading.Event
) -> None:
    for url in (
        "/dir/nested.jpg",
        "/?file=dir/nested.jpg&w=10",
        "/photo.jpg?w=10",
        "/dir%2Fnested.jpg",
    ):
        assert (await opt.get(url)).status_code == 200, url
    assert not canaries.is_set()
