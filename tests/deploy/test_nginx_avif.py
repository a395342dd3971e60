"""The nginx template's cache key with AVIF negotiation on: a cached AVIF never reaches a browser
that did not ask for it, and each format bucket hits its own entry."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from assetgate.imaging.formats import sniff
from tests.deploy.conftest import Edge, run_edge

pytestmark = pytest.mark.slow  # nginx in front of two servers and Redis

CHROME = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
SAFARI_15 = "image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5"
OLD = "image/png,image/*;q=0.8,*/*;q=0.5"
NO_AVIF = "image/avif;q=0,image/webp,*/*"


@pytest.fixture(scope="module")
def avif_edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    with run_edge(tmp_path_factory.mktemp("avif"), auto_formats="avif,webp") as running:
        yield running


def test_each_format_bucket_has_its_own_cache_entry(avif_edge: Edge) -> None:
    seen: dict[str, list[tuple[str, str]]] = {}
    for _ in range(2):
        for accept in (CHROME, SAFARI_15, OLD, NO_AVIF):
            response = httpx.get(
                f"{avif_edge.url}/photo.jpg?width=200", headers={"Accept": accept}, timeout=60
            )
            assert response.status_code == 200
            fmt = sniff(response.content)
            assert fmt is not None
            seen.setdefault(accept, []).append((fmt, response.headers["x-cache-status"]))
    assert seen[CHROME] == [("avif", "MISS"), ("avif", "HIT")]
    assert seen[SAFARI_15] == [("webp", "MISS"), ("webp", "HIT")]
    assert seen[OLD] == [("jpeg", "MISS"), ("jpeg", "HIT")]
    assert seen[NO_AVIF] == [("webp", "HIT"), ("webp", "HIT")]  # Safari 15's bucket
