"""Packuments and search answers shared through a real Redis by two app instances."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assetgate.settings import Settings
from tests.conftest import RedisServer, app_client
from tests.packages.upstream import FakeUpstream, Registry

pytestmark = pytest.mark.anyio


async def test_two_instances_ask_the_registry_once_for_a_packument_and_a_search(
    pkg_settings: Callable[..., Settings],
    registry: Registry,
    upstream: FakeUpstream,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    registry.publish("demo", "1.0.0", {"index.js": b"export default 1;\n"})
    registry.add_search("demo", "1.0.0", "A demo.")
    answers = []
    for node in ("a", "b"):  # two machines: their own stores and result caches, one Redis
        settings = pkg_settings(
            redis_url=redis_server.url,
            store=tmp_path / node / "store",
            result_cache_dir=tmp_path / node / "results",
        )
        async with app_client(settings) as client:
            pinned = await client.get("/npm/demo@^1.0.0/")
            found = await client.get("/npm/search?q=demo")
        assert pinned.status_code == 302
        assert pinned.headers["location"].startswith("/npm/demo@1.0.0/")
        assert found.status_code == 200
        answers.append(found.json())
    assert upstream.hits["/demo"] == 1
    assert upstream.hits["/-/v1/search"] == 1
    assert answers[0] == answers[1]
    assert "demo" in str(answers[0])


async def test_redis_down_still_answers_from_the_registry(
    pkg_settings: Callable[..., Settings],
    registry: Registry,
    upstream: FakeUpstream,
    redis_server: RedisServer,
) -> None:
    registry.publish("demo", "1.0.0", {"index.js": b"export default 1;\n"})
    redis_server.stop()
    async with app_client(pkg_settings(redis_url=redis_server.url)) as client:
        first = await client.get("/npm/demo@^1.0.0/")
        second = await client.get("/npm/demo@^1.0.0/")
    assert first.status_code == second.status_code == 302
    assert upstream.hits["/demo"] == 1  # the process's own memory tier still holds it
