"""Fixtures of the package library tests: loopback upstreams and the real app pointed at them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.packages.upstream import FakeUpstream, LibraryCatalog, Registry


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    server = FakeUpstream().start()
    yield server
    server.stop()


@pytest.fixture
def registry(upstream: FakeUpstream) -> Registry:
    return Registry(upstream)


@pytest.fixture
def catalog(upstream: FakeUpstream) -> LibraryCatalog:
    return LibraryCatalog(upstream)


@pytest.fixture
def pkg_settings(
    make_settings: Callable[..., Settings], upstream: FakeUpstream, catalog: LibraryCatalog
) -> Callable[..., Settings]:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "npm_registry": upstream.url + "/",
            "library_api": catalog.api,
            "library_files": catalog.files_base,
            "upstream_timeout_s": 2.0,
        }
        values.update(overrides)
        return make_settings(**values)

    return build


@pytest.fixture
async def npm(pkg_settings: Callable[..., Settings]) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(pkg_settings()) as client:
        yield client
