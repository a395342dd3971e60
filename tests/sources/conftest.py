"""Fixtures for remote sources: a loopback origin and a canary that must never be reached (the
SeaweedFS and bucket fixtures are the root conftest's: the cache's tests use them too)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sources.servers import Origin, origin_server


@pytest.fixture
def origin() -> Iterator[Origin]:
    with origin_server() as server:
        yield server


@pytest.fixture
def canary() -> Iterator[Origin]:
    with origin_server() as server:
        yield server
    assert server.hits == [], "the canary was reached"
