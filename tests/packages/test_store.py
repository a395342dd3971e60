"""The store's index and its byte budget, on a real SQLite file and real blobs."""

from __future__ import annotations

import json
import time
from pathlib import Path

from assetgate.packages.store import Store
from assetgate.packages.tarball import StoredBlob


def put(store: Store, data: bytes, suffix: str = ".js") -> StoredBlob:
    return store.new_sink().put(iter((data,)), suffix)


def add_version(store: Store, name: str, files: dict[str, bytes]) -> None:
    stored = {path: put(store, data) for path, data in files.items()}
    store.commit_version(("npm", name, "1.0.0"), stored, next(iter(files)), "main")


def test_a_version_is_visible_only_after_commit(tmp_path: Path) -> None:
    store = Store(tmp_path, 1 << 20)
    assert store.version("npm", "a", "1.0.0") is None
    add_version(store, "a", {"a.js": b"A"})
    row = store.version("npm", "a", "1.0.0")
    assert row is not None
    assert (row.default_path, row.default_reason) == ("a.js", "main")
    found = store.file("npm", "a", "1.0.0", "a.js")
    assert found is not None
    blob = store.blob_path(found.blob)
    assert blob is not None
    assert blob.read_bytes() == b"A"
    assert store.file("npm", "a", "1.0.0", "missing.js") is None


def test_identical_files_are_stored_once_and_survive_eviction_of_one_user(tmp_path: Path) -> None:
    store = Store(tmp_path, 2500)
    shared = b"S" * 1000
    add_version(store, "old", {"x.js": shared, "own.js": b"O" * 1000})
    time.sleep(0.01)
    add_version(store, "new", {"y.js": shared})
    assert store.total_bytes() == 2000
    add_version(store, "newest", {"z.js": b"Z" * 1000})  # 3000 > 2500: "old" must go
    evicted = store.evict(keep=("npm", "newest", "1.0.0"))
    assert evicted == [("npm", "old", "1.0.0")]
    assert store.version("npm", "old", "1.0.0") is None
    kept = store.file("npm", "new", "1.0.0", "y.js")
    assert kept is not None
    assert store.blob_path(kept.blob) is not None  # the shared blob is still there
    assert store.total_bytes() == 2000
    assert sum(1 for p in store.blobs_dir.rglob("*") if p.is_file()) == 2


def test_recently_used_versions_are_kept(tmp_path: Path) -> None:
    store = Store(tmp_path, 2000)
    add_version(store, "a", {"a.js": b"a" * 1000})
    time.sleep(0.01)
    add_version(store, "b", {"b.js": b"b" * 1000})
    time.sleep(0.01)
    store.touch(("npm", "a", "1.0.0"))  # "a" is used again: "b" is now the oldest
    add_version(store, "c", {"c.js": b"c" * 1000})
    assert store.evict(keep=("npm", "c", "1.0.0")) == [("npm", "b", "1.0.0")]


def test_the_version_being_added_is_never_evicted(tmp_path: Path) -> None:
    store = Store(tmp_path, 10)
    add_version(store, "huge", {"h.js": b"h" * 100})
    assert store.evict(keep=("npm", "huge", "1.0.0")) == []
    assert store.version("npm", "huge", "1.0.0") is not None


def test_discard_never_removes_a_blob_the_index_uses(tmp_path: Path) -> None:
    store = Store(tmp_path, 1 << 20)
    add_version(store, "a", {"a.js": b"shared"})
    sink = store.new_sink()
    reused = sink.put(iter((b"shared",)), ".js")
    fresh = sink.put(iter((b"fresh",)), ".js")
    sink.discard({reused.blob, fresh.blob})
    assert store.blob_path(reused.blob) is not None
    assert store.blob_path(fresh.blob) is None


def test_packuments_persist_for_stale_if_error(tmp_path: Path) -> None:
    store = Store(tmp_path, 1 << 20)
    store.save_packument("a", {"versions": {}})
    saved = store.load_packument("a")
    assert saved is not None
    assert json.loads(saved[1]) == {"versions": {}}
    store.close()
    again = Store(tmp_path, 1 << 20).load_packument("a")
    assert again is not None
