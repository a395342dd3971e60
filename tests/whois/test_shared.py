"""Whois answers shared through Redis: two ``assetgate serve`` processes ask upstream once."""

from __future__ import annotations

import functools

import anyio.to_thread
import httpx
import pytest

from tests.conftest import RedisServer
from tests.serve_process import Served, Start
from tests.whois.conftest import Env

pytestmark = pytest.mark.anyio


async def test_a_lookup_through_two_servers_sharing_redis_reaches_upstream_once(
    env: Env,
    redis_server: RedisServer,
    serve_cli: Start,
) -> None:
    start = functools.partial(
        serve_cli,
        whois_servers=str(env.servers_file),
        rdap_bootstrap=str(env.bootstrap_file),
        whois_timeout_s="2",
        redis_url=redis_server.url,
    )
    # The loopback whois servers run on this event loop: block only worker threads.
    first = await anyio.to_thread.run_sync(start)
    second = await anyio.to_thread.run_sync(start)

    async def lookup(server: Served) -> dict[str, object]:
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
