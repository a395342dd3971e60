"""/openapi.json lists ``preset`` and ``s`` when the settings give them (issue 36 item 7), and
the optimizer's answers let a page read ``Cache-Status``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.imaging.factory import pillow_bytes, quadrants

pytestmark = pytest.mark.anyio
KEY = "k" * 40


def optimizer_params(document: dict[str, object], path: str) -> dict[str, dict[str, object]]:
    operation = document["paths"][path]["get"]  # type: ignore[index]
    return {param["name"]: param for param in operation["parameters"]}  # type: ignore[index]


async def test_preset_and_s_are_listed_only_when_configured(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(make_settings()) as client:
        plain = (await client.get("/openapi.json")).json()
    presets = '{"thumb": {"width": 200}, "hero": {"width": 1600}}'
    async with app_client(make_settings(presets=presets, signing_keys=KEY)) as client:
        configured = (await client.get("/openapi.json")).json()
    for path in ("/", "/{path}"):
        assert {"preset", "s"}.isdisjoint(optimizer_params(plain, path))
        found = optimizer_params(configured, path)
        assert found["preset"]["schema"] == {"type": "string", "enum": ["hero", "thumb"]}
        assert found["s"]["in"] == "query"


async def test_a_page_may_read_cache_status(
    make_settings: Callable[..., Settings], docroot: Path
) -> None:
    (docroot / "q.png").write_bytes(pillow_bytes(quadrants(80, 40), "PNG"))
    async with app_client(make_settings()) as client:
        answer = await client.get("/q.png?width=40", headers={"Origin": "https://a.test"})
    assert answer.status_code == 200
    exposed = [h.strip() for h in answer.headers["access-control-expose-headers"].split(",")]
    assert "Cache-Status" in exposed
    assert "cache-status" in answer.headers
