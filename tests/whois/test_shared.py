"""Whois answers shared through Redis: two ``assetgate serve`` processes ask upstream once."""

from __future__ import annotations

from collections.abc import Callable

import anyio.to_thread
import httpx
import pytest

from tests.conftest import RedisServer, ServeProcess
from tests.whois.conftest import Env

pytestmark = pytest.mark.anyio


async def test_a_lookup_through_two_servers_sharing_redis_reaches_upstream_once(
    env: Env,
    redis_server: RedisServer,
    serve_cli: Callable[[dict[str, str]], ServeProcess],
) -> None:
    config = {
        "ASSETGATE_WHOIS_SERVERS": str(env.servers_file),
        "ASSETGATE_RDAP_BOOTSTRAP": str(env.bootstrap_file),
        "ASSETGATE_WHOIS_TIMEOUT_S": "2",
        "ASSETGATE_REDIS_URL": redis_server.url,
    }
    # The loopback whois servers run on this event loop: block only worker threads.
    first = await anyio.to_thread.run_sync(serve_cli, config)
    second = await anyio.to_thread.run_sync(serve_cli, config)

    async def lookup(server: ServeProcess) -> dict[str, object]:
        url = f"{server.base}/api/whois/json?domain=example.com"
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.get(url)
        assert response.status_code == 200, response.text
        return dict(response.json())

    one = await lookup(first)
    two = await lookup(second)
    assert env.registry.queries == ["domain example.com"]
    assert env.registrar.queries == ["example.com"]
    assert (one["source"]["cached"], two["source"]["cached"]) == (False, True)  # type: ignore[index]
    assert {k: v for k, v in two.items() if k != "source"} == {
        k: v for k, v in one.items() if k != "source"
    }
