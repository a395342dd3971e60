from __future__ import annotations

from pathlib import Path

import pytest

from assetgate.errors import AppError
from assetgate.imaging.formats import SourceInfo
from assetgate.imaging.limits import DecodeLimits, check_animation
from assetgate.settings import Settings


def test_decode_limits_come_from_the_settings(tmp_path: Path) -> None:
    settings = Settings(
        root=tmp_path,
        max_input_pixels=1234,
        max_animation_frames=7,
        disabled_codecs=["avif"],
        render_job_memory_bytes=4321,
    )
    limits = DecodeLimits(1234, 7, ("avif",), max_job_bytes=4321)
    assert DecodeLimits.from_settings(settings) == limits


@pytest.mark.parametrize(
    ("pages", "message"),
    [(11, "animation has 11 frames, more than the limit of 10"), (5, "5 frames of 100x100")],
)
def test_animation_over_a_limit_is_413(pages: int, message: str) -> None:
    info = SourceInfo(100, 100, pages, False, "gif")
    with pytest.raises(AppError) as caught:
        check_animation(info, max_pixels=40_000, max_frames=10)
    assert caught.value.status == 413
    assert message in caught.value.message


def test_animation_within_the_limits_passes() -> None:
    check_animation(SourceInfo(100, 100, 4, False, "gif"), max_pixels=40_000, max_frames=4)
