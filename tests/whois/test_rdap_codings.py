"""Issue 35, item 2: an RDAP server's content codings. One is undone (decoded in steps on a
worker thread, the 1 MiB cap on decoded bytes); a stack is refused, and the lookup falls back to
port 43 as for any RDAP failure. ~200 bytes as ``gzip, gzip`` used to become 64 MiB in one call
on the event loop."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest

from tests.encodings import gzip_bomb, peak_memory, stacked, stacked_bomb
from tests.whois.conftest import Env
from tests.whois.fakes import HttpReply
from tests.whois.rdap_samples import registry_domain

pytestmark = pytest.mark.anyio

JSON = "/api/whois/json"


def domain_doc(domain: str) -> bytes:
    return json.dumps(registry_domain(domain, None)).encode()


async def lookup(client: httpx.AsyncClient, domain: str) -> dict[str, object]:
    response = await client.get(JSON, params={"domain": domain})
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


async def test_one_coding_is_undone(client: httpx.AsyncClient, env: Env) -> None:
    env.rdap.routes["/rdap/domain/zipped.org"] = HttpReply(
        200, gzip.compress(domain_doc("zipped.org")), {"Content-Encoding": "gzip"}
    )
    record = await lookup(client, "zipped.org")
    assert record["source"]["protocol"] == "rdap"  # type: ignore[index]
    assert record["registered"] is True
    assert env.registry.queries == []


@pytest.mark.parametrize(
    ("domain", "body", "coding"),
    [
        ("stacked.org", stacked(domain_doc("stacked.org")), "gzip, gzip"),
        ("stackbomb.org", stacked_bomb(), "gzip, gzip"),
        ("bomb.org", gzip_bomb(), "gzip"),
        ("brotli.org", b"\x00" * 16, "br"),
    ],
)
async def test_stacks_unknown_codings_and_bombs_fall_back_to_port_43(
    client: httpx.AsyncClient, env: Env, domain: str, body: bytes, coding: str
) -> None:
    env.rdap.routes[f"/rdap/domain/{domain}"] = HttpReply(200, body, {"Content-Encoding": coding})
    with peak_memory() as peak:
        record = await lookup(client, domain)
    assert record["source"]["protocol"] == "whois"  # type: ignore[index]
    assert record["warnings"] == ["rdap_failed_used_whois"]
    assert env.registry.queries == [domain]
    assert peak[0] < 16 * 1024 * 1024  # never the 64 MiB the bombs hold
