"""``assetgate purge``: the purge of POST /admin/purge from a shell, against a real server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.imaging.factory import jpeg
from tests.serve_process import Served, run_cli, serve

TOKEN = "cli-purge-token-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    tmp = tmp_path_factory.mktemp("purge")
    root = tmp / "root"
    root.mkdir()
    (root / "a.jpg").write_bytes(jpeg(64, 48))
    with serve(tmp, root=str(root), admin_token=TOKEN) as served:
        yield served, root


def test_purge_forgets_a_rendering_and_prints_the_answer(server: tuple[Served, Path]) -> None:
    served, _root = server
    url = f"{served.base}/a.jpg?width=20"
    assert httpx.get(url).headers["x-optimizer-cache"] == "MISS"
    assert httpx.get(url).headers["x-optimizer-cache"] == "HIT"
    env = {"ASSETGATE_ADMIN_TOKEN": TOKEN, "ASSETGATE_PORT": str(served.port)}
    result = run_cli("purge", "/a.jpg", "--tag", "preset:thumb", env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["paths"] == ["/a.jpg"]
    assert report["tags"] == ["path:/a.jpg", "preset:thumb"]
    (counts,) = report["nodes"].values()
    assert counts["memory"] == 1
    assert TOKEN not in result.stdout + result.stderr
    assert httpx.get(url).headers["x-optimizer-cache"] == "MISS"


def test_a_wrong_or_missing_token_exits_1(server: tuple[Served, Path]) -> None:
    served, _root = server
    wrong = run_cli("purge", "/a.jpg", "--url", served.base,
                    env={"ASSETGATE_ADMIN_TOKEN": "not-the-token-at-all-0123456789"})  # fmt: skip
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("assetgate purge: 401 ")
    assert "not-the-token" not in wrong.stderr
    missing = run_cli("purge", "/a.jpg", "--url", served.base)
    assert missing.returncode == 1
    assert missing.stderr == "assetgate purge: ASSETGATE_ADMIN_TOKEN is not set\n"
