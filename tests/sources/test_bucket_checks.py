"""Buckets on a self-hosted store (SeaweedFS on loopback) just work, or say why in one line.

Issue 36: with a custom endpoint and virtual-hosted addressing, the bucket fell out of every URL:
each file was a 404, nothing was logged, and ``/readyz`` said "ok" (its check was a HEAD of a
missing key, which a 404 satisfied). Now the addressing is path-style whenever an endpoint is set
unless ``ASSETGATE_S3_PATH_STYLE`` says otherwise, a source bucket is checked by listing one key,
the result store by a write/read round trip, and a failure is one line with the hint, at start
and in ``/readyz``."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.serve_process import run_cli
from tests.sources.images import quadrant_bmp, size_of
from tests.sources.servers import ACCESS_KEY, REGION, SECRET_KEY, Seaweed

pytestmark = pytest.mark.anyio


@pytest.fixture
def node(
    make_settings: Callable[..., Settings], tmp_path: Path, weed: Seaweed, bucket: str
) -> Callable[..., Settings]:
    """A node reading ``bucket``/img from the store by its endpoint, addressing left unset."""

    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "root": f"s3://{bucket}/img",
            "s3_endpoint_url": weed.endpoint,
            "source_cache_dir": tmp_path / "sources",
            "result_cache_dir": tmp_path / "results",
            "result_store_key": "the nodes' shared result-store secret",  # used with a store
        }
        return make_settings(**{**values, **overrides})

    return build


def test_path_style_is_the_default_with_a_custom_endpoint() -> None:
    assert Settings().path_style(None) is False  # AWS itself: virtual-hosted
    assert Settings().path_style("http://127.0.0.1:8333") is True
    assert Settings(s3_path_style=False).path_style("http://127.0.0.1:8333") is False
    assert Settings(s3_path_style=True).path_style(None) is True


async def test_a_bucket_behind_an_endpoint_serves_without_an_addressing_setting(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/q.bmp", quadrant_bmp())
    async with app_client(node(result_store=f"s3://{bucket}/results")) as client:
        answer = await client.get("/q.bmp?width=20&format=png")
        ready = await client.get("/readyz")
    assert answer.status_code == 200, answer.text
    assert size_of(answer.content) == (20, 15)
    assert ready.json()["checks"]["source /"] == "ok"
    assert ready.json()["checks"]["result_store"] == "ok"


async def test_a_missing_bucket_is_one_line_at_start_and_in_readyz(
    node: Callable[..., Settings], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with app_client(node(root="s3://no-such-bucket-here/img")) as client:
        ready = await client.get("/readyz")
    assert ready.status_code == 200  # degraded: it still serves what it holds
    said = ready.json()["checks"]["source /"]
    assert said.startswith("no such bucket (NoSuchBucket): check the bucket name")
    assert "ASSETGATE_S3_PATH_STYLE" in said
    assert ready.json()["degraded"] == ["source /"]
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("source /")]
    assert logged == [f"source /: {said}"]
    assert "127.0.0.1" not in caplog.text


async def test_virtual_hosted_addressing_against_seaweedfs_is_reported(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    """Told to keep virtual-hosted addressing, the node says what is wrong instead of "ok"."""
    weed.put(bucket, "img/q.bmp", quadrant_bmp())
    settings = node(s3_path_style=False, result_store=f"s3://{bucket}/results")
    async with app_client(settings) as client:
        ready = (await client.get("/readyz")).json()
    assert ready["checks"]["source /"].startswith("empty (no object under the prefix)")
    assert ready["checks"]["result_store"] != "ok"  # the round trip's write is refused
    assert sorted(ready["degraded"]) == ["result_store", "source /"]


def test_optimize_from_a_missing_bucket_says_so_in_one_line(weed: Seaweed, tmp_path: Path) -> None:
    done = run_cli(
        "optimize", "s3://no-such-bucket-here/photos", str(tmp_path / "out"),
        env={"ASSETGATE_S3_ENDPOINT_URL": weed.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
             "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": REGION,
             "ASSETGATE_STORE": str(tmp_path / "store"),
             "ASSETGATE_RESULT_CACHE_DIR": str(tmp_path / "results")},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "assetgate: SRC: cannot list or read s3://no-such-bucket-here/photos: no such bucket "
        "(NoSuchBucket): check the bucket name and ASSETGATE_S3_ENDPOINT_URL; a custom endpoint "
        "(SeaweedFS, MinIO) wants path-style addressing, the default unless "
        "ASSETGATE_S3_PATH_STYLE=false"
    ]
