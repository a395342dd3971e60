"""The JSON of a cached whois answer is rendered once per domain and replaced with the answer.

The memo used to be keyed by ``id()`` of the answer object: every new object (the answer looked up
again after its TTL, or read back from Redis) added an entry beside the old one, which kept the old
answer alive outside any budget, and an equal answer decoded from Redis was rendered again.
"""

from __future__ import annotations

import anyio
import httpx
import pytest

from tests.conftest import RedisServer
from tests.whois.conftest import Env

pytestmark = pytest.mark.anyio

JSON = "/api/whois/json"


async def _record(client: httpx.AsyncClient, domain: str) -> dict[str, object]:
    response = await client.get(JSON, params={"domain": domain})
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_a_domain_looked_up_again_replaces_its_rendering(env: Env) -> None:
    app = env.client(whois_cache_ttl_s=0.3)
    async with app as client:
        rendered = app.state["whois"].rendered
        first = await _record(client, "example.com")
        hit = await _record(client, "example.com")
        assert (first["source"]["cached"], hit["source"]["cached"]) == (False, True)  # type: ignore[index]
        assert len(rendered) == 1
        await anyio.sleep(0.4)  # the answer expires: the next request looks it up again
        again = await _record(client, "example.com")
        new_hit = await _record(client, "example.com")
        assert (again["source"]["cached"], new_hit["source"]["cached"]) == (False, True)  # type: ignore[index]
        assert len(rendered) == 1  # one rendering for the domain, not one per answer object
        await _record(client, "example.org")
        await _record(client, "example.org")
        assert len(rendered) == 2
    assert env.registry.queries == ["domain example.com", "domain example.com"]


async def test_an_answer_read_back_from_redis_is_a_hit_on_its_rendering(
    env: Env, redis_server: RedisServer
) -> None:
    app = env.client(redis_url=redis_server.url)
    async with app as client:
        state = app.state["whois"]
        await _record(client, "example.com")
        before = await client.get(JSON, params={"domain": "example.com"})
        kept = (len(state.rendered), state.rendered.used_bytes)
        assert kept[0] == 1
        held = state.cache.peek("example.com")
        state.cache.memory.clear()  # as when the memory tier evicts it: Redis still holds it
        after = await client.get(JSON, params={"domain": "example.com"})
        assert after.json()["source"]["cached"] is True
        decoded = state.cache.peek("example.com")
        assert decoded is not None
        assert decoded is not held  # a new object, decoded from Redis, equal to the old one:
        assert (len(state.rendered), state.rendered.used_bytes) == kept  # a hit on its JSON
        assert after.content == before.content
    assert env.registry.queries == ["domain example.com"]
