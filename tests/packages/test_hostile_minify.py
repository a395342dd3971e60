"""Issue 24, item 1 through a package: anyone can publish JavaScript that makes rjsmin quadratic.

``?min=1`` on such a pinned file answers the file unminified with ``X-Minify-Skipped: timeout``
within the minify deadline, and the package's other files are still served meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.packages.upstream import Registry
from tests.reliability.test_minify_bomb import quadratic_js

pytestmark = pytest.mark.anyio

TIMEOUT_S = 3.0  # long enough that a small file served beside the bomb shows it is not held up


async def test_a_published_minifier_bomb_is_served_unminified_within_the_deadline(
    pkg_settings: Callable[..., Settings], registry: Registry
) -> None:
    bomb = quadratic_js(600_000)
    registry.publish("bomb", "1.0.0", {"dist/bomb.js": bomb, "dist/ok.js": b"var  a = 1 ;\n"})
    settings = pkg_settings(minify_timeout_s=TIMEOUT_S, minify_workers=1)
    async with app_client(settings) as npm:
        plain = await npm.get("/npm/bomb@1.0.0/dist/bomb.js")  # fetched and stored first
        assert plain.content == bomb
        started = time.monotonic()
        slow = asyncio.ensure_future(npm.get("/npm/bomb@1.0.0/dist/bomb.js?min=1"))
        await asyncio.sleep(0.2)
        other = await npm.get("/npm/bomb@1.0.0/dist/ok.js")  # not held up by the bomb
        assert other.status_code == 200
        assert time.monotonic() - started < TIMEOUT_S
        response = await slow
        took = time.monotonic() - started
    assert response.status_code == 200
    assert response.headers["x-minify-skipped"] == "timeout"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert response.content == bomb
    assert took < TIMEOUT_S + 1.0, took
