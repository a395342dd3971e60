"""A purge reaches the shipped nginx front: it asks again after ASSETGATE_EDGE_REVALIDATE_S and a
purged image's 404 replaces the copy it kept (real nginx, two real ``assetgate serve``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.deploy.conftest import Edge, run_edge

TOKEN = "nginx-purge-token-0123456789abcdef"
JPEG_ONLY = "image/png,image/*;q=0.8,*/*;q=0.5"


@pytest.fixture(scope="module")
def purging_edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Edge, Path]]:
    tmp = tmp_path_factory.mktemp("purge")
    with run_edge(tmp, edge_revalidate_s="1", admin_token=TOKEN) as running:
        yield running, tmp / "root"


def get(edge: Edge, target: str) -> httpx.Response:
    return httpx.get(f"{edge.url}{target}", headers={"Accept": JPEG_ONLY}, timeout=30)


def test_a_purged_image_is_no_longer_served_through_nginx(purging_edge: tuple[Edge, Path]) -> None:
    edge, root = purging_edge
    first = get(edge, "/photo.jpg?width=100")
    assert first.status_code == 200
    assert "x-accel-expires" not in first.headers  # nginx's own, never passed on
    assert first.headers["cache-tag"].startswith("path:/photo.jpg,")
    deadline = time.monotonic() + 10
    while get(edge, "/photo.jpg?width=100").headers["x-cache-status"] != "HIT":
        assert time.monotonic() < deadline, "nginx never kept the image"
    unrelated = get(edge, "/metrics.jpg?width=40")
    assert unrelated.status_code == 200

    (root / "photo.jpg").unlink()
    purged = httpx.post(
        f"{edge.url}/admin/purge",
        json={"paths": ["/photo.jpg"]},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )
    assert purged.status_code == 200, purged.text
    assert "x-cache-status" not in purged.headers or purged.headers["x-cache-status"] != "HIT"
    # nginx asks again within a second; the one request that starts its background refresh may
    # still get the old copy (proxy_cache_background_update), every later one the 404
    deadline = time.monotonic() + 5
    answers = []
    while time.monotonic() < deadline:
        answer = get(edge, "/photo.jpg?width=100")
        answers.append((answer.status_code, answer.headers.get("x-cache-status")))
        if answer.status_code == 404:
            break
        time.sleep(0.1)
    assert answers[-1][0] == 404, answers
    after = [get(edge, "/photo.jpg?width=100") for _ in range(3)]
    assert [answer.status_code for answer in after] == [404, 404, 404]
    # a revalidation with the old ETag is no 304 either
    old = httpx.get(
        f"{edge.url}/photo.jpg?width=100",
        headers={"Accept": JPEG_ONLY, "If-None-Match": first.headers["etag"]},
        timeout=30,
    )
    assert old.status_code == 404
    assert get(edge, "/metrics.jpg?width=40").status_code == 200  # nothing else forgotten
