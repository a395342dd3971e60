from __future__ import annotations

import pyvips

from assetgate.imaging.frames import (
    first_frame,
    frame_geometry,
    is_animated,
    make_roll,
    page_height,
    split_frames,
    timing,
)


def frame(value: int) -> pyvips.Image:
    return (pyvips.Image.black(6, 4) + value).cast("uchar")


def test_a_roll_of_three_frames() -> None:
    roll = make_roll([frame(10), frame(20), frame(30)], delay=[40, 50, 60], loop=2)
    assert (page_height(roll), is_animated(roll), frame_geometry(roll)) == (4, True, (6, 4, 3))
    assert [part.avg() for part in split_frames(roll)] == [10, 20, 30]
    assert (first_frame(roll).height, first_frame(roll).avg()) == (4, 10)
    assert timing(roll) == ([40, 50, 60], 2)


def test_a_still_and_a_roll_of_one_frame_are_not_animated() -> None:
    still = frame(5)
    single = make_roll([frame(5)])
    for image in (still, single):
        assert (page_height(image), is_animated(image), frame_geometry(image)) == (
            0,
            False,
            (6, 4, 1),
        )
        assert split_frames(image) == [image]
        assert first_frame(image) is image
    assert timing(still) == (None, None)
