from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.anyio


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_openapi_document_is_3_1_with_the_spec_version(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "1.2.2"
    assert document["components"]["schemas"]["Error"]["required"] == ["error", "code"]
