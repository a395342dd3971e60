"""Access times are written off the event loop, and the lifespan waits for the write.

The write used to be started and never awaited: its failure went unreported, and at shutdown it
could run into the store being closed."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assetgate.packages.state import PackagesState
from assetgate.packages.store import Store
from tests.packages.test_store import add_version

pytestmark = pytest.mark.anyio


def state_of(store: Store) -> PackagesState:
    unused: Any = None  # the flush needs only the store
    return PackagesState(store, unused, unused, unused, {})


def last_access(root: Path, name: str) -> float:
    with sqlite3.connect(root / "index.sqlite3") as db:
        (value,) = db.execute("SELECT last_access FROM versions WHERE name=?", (name,)).fetchone()
    return float(value)


async def test_settle_waits_for_the_access_times_to_be_written(tmp_path: Path) -> None:
    store = Store(tmp_path, 1 << 20)
    add_version(store, "a", {"a.js": b"A"})
    before = last_access(tmp_path, "a")
    await asyncio.sleep(0.01)
    store.touch(("npm", "a", "1.0.0"))
    state = state_of(store)
    state.flush_touches_soon()
    assert state.flushing  # held, not dropped
    await state.settle()
    assert not state.flushing
    assert last_access(tmp_path, "a") > before
    store.close()


async def test_a_failed_write_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = Store(tmp_path, 1 << 20)
    add_version(store, "a", {"a.js": b"A"})
    store.touch(("npm", "a", "1.0.0"))
    (tmp_path / "index.sqlite3").unlink()  # the index is gone under the running store
    (tmp_path / "index.sqlite3").mkdir()  # and its name is now a directory: the write fails
    state = state_of(store)
    with caplog.at_level(logging.WARNING, "assetgate.packages"):
        state.flush_touches_soon()
        await state.settle()
    assert "access times not written" in caplog.text
