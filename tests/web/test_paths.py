from __future__ import annotations

import os
from pathlib import Path

import pytest

from assetgate.web.paths import locate, resolve_under

UNSAFE = [
    "",
    "/etc/passwd",
    "../canary.txt",
    "a/../../canary.txt",
    "%2e%2e/canary.txt",
    "%252e%252e/canary.txt",
    "..%2fcanary.txt",
    "..%5ccanary.txt",
    "a\\..\\..\\canary.txt",
    "cache/x.png",
    "CACHE/x.png",
    "cache",
    ".env",
    ".git/config",
    "a/./b.png",
    "a//b.png",
    "img.png\x00.txt",
    "img.png%00.txt",
    "C:/windows/win.ini",
    "~root/x",
    "a/" * 600 + "x",
    "link-out/canary.txt",
    "escape.txt",
    "dir",
    "dir/",
    "missing.png",
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "canary.txt").write_text("secret")
    root = tmp_path / "root"
    (root / "dir").mkdir(parents=True)
    (root / "dir" / "ok.png").write_bytes(b"x")
    (root / "cache").mkdir()
    (root / "cache" / "x.png").write_bytes(b"x")
    (root / ".env").write_text("SECRET=1")
    os.symlink(tmp_path, root / "link-out")
    os.symlink(tmp_path / "canary.txt", root / "escape.txt")
    os.symlink(root / "dir" / "ok.png", root / "inside-link.png")
    return root


@pytest.mark.parametrize("path", UNSAFE)
def test_unsafe_paths_resolve_to_nothing(root: Path, path: str) -> None:
    assert resolve_under(root, path, reserved=("cache/",)) is None


def test_safe_paths_resolve(root: Path) -> None:
    found = resolve_under(root, "dir/ok.png")
    assert found is not None
    assert found.path == (root / "dir" / "ok.png").resolve()
    assert (found.stat.st_ino, found.stat.st_size) == (found.path.stat().st_ino, 1)
    linked = resolve_under(root, "inside-link.png")
    assert linked is not None
    assert linked.path == (root / "dir" / "ok.png").resolve()


def test_locate_follows_symlinks_that_stay_inside_and_refuses_the_rest(root: Path) -> None:
    os.symlink(root / "dir", root / "alias")
    real_root = os.path.realpath(root)
    ok = Path(real_root, "dir", "ok.png")
    for inside in ("dir/ok.png", "alias/ok.png", "inside-link.png"):
        found = locate(real_root, inside)
        assert found is not None, inside
        assert (found.path, found.stat.st_ino) == (ok, ok.stat().st_ino)
    for outside in ("link-out/canary.txt", "escape.txt", "dir/ok.png/x", "alias/../x", "dir"):
        assert locate(real_root, outside) is None, outside
