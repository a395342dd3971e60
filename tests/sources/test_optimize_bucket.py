"""``assetgate optimize s3://bucket/prefix DEST``: the command line reading from a bucket."""

from __future__ import annotations

from pathlib import Path

from tests.serve_process import run_cli
from tests.sources.images import BLUE, RED, near, pixel, quadrant_bmp, size_of
from tests.sources.servers import Seaweed


def test_optimize_reads_every_image_under_the_prefix(
    weed: Seaweed, bucket: str, tmp_path: Path
) -> None:
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    weed.put(bucket, "img/deep/b.bmp", quadrant_bmp(80, 60))
    weed.put(bucket, "img/.hidden.bmp", quadrant_bmp())  # the path rules leave it out
    weed.put(bucket, "img/notes.txt", b"not an image")
    weed.put(bucket, "other/c.bmp", quadrant_bmp())  # outside the prefix
    dest = tmp_path / "out"
    done = run_cli(
        "optimize", f"s3://{bucket}/img", str(dest), "--width", "32", "--format", "png",
        env={"ASSETGATE_S3_ENDPOINT_URL": weed.endpoint, "ASSETGATE_S3_PATH_STYLE": "true"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    made = sorted(str(path.relative_to(dest)) for path in dest.rglob("*") if path.is_file())
    assert made == ["a.png", "deep/b.png"]
    body = (dest / "a.png").read_bytes()
    assert size_of(body) == (32, 24)
    assert near(pixel(body, 4, 4), RED)
    assert near(pixel(body, 4, 20), BLUE)


def test_optimize_names_an_unreadable_bucket_without_its_address(
    weed: Seaweed, bucket: str, tmp_path: Path
) -> None:
    done = run_cli(
        "optimize", f"s3://{bucket}/img", str(tmp_path / "out"), "--width", "32",
        env={"ASSETGATE_S3_ENDPOINT_URL": weed.endpoint, "ASSETGATE_S3_PATH_STYLE": "true",
             "AWS_SECRET_ACCESS_KEY": "wrong-secret-0123456789"},
    )  # fmt: skip
    assert done.returncode == 2
    assert f"assetgate: SRC: cannot list or read s3://{bucket}/img" in done.stderr
    assert weed.endpoint not in done.stderr + done.stdout
    assert "wrong-secret" not in done.stderr + done.stdout
