"""ThumbHash encoded with numpy (``imaging/thumbhash.py``), which replaced ``fast-thumbhash`` (no
arm64 or musl wheels): every field agrees with the reference Rust crate within one quantisation
step (the crate computes in float32, this in float64 as the reference JavaScript), and the hash
decodes, with the ``thumbhash`` package's decoder, to the image's average colour and alpha."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
import thumbhash

from assetgate.imaging.thumbhash import rgba_to_thumb_hash

Pixels = npt.NDArray[np.uint8]


def fields(hashed: bytes) -> list[int]:
    """Every quantised value of a hash: the header's fields, then one per nibble."""
    h24 = hashed[0] | hashed[1] << 8 | hashed[2] << 16
    h16 = hashed[3] | hashed[4] << 8
    alpha = h24 >> 23 & 1
    head = [h24 & 63, h24 >> 6 & 63, h24 >> 12 & 63, h24 >> 18 & 31, alpha]
    head += [h16 & 7, h16 >> 3 & 63, h16 >> 9 & 63, h16 >> 15]
    start = 6 if alpha else 5
    if alpha:
        head += [hashed[5] & 15, hashed[5] >> 4]
    return head + [n for byte in hashed[start:] for n in (byte & 15, byte >> 4)]


def images() -> list[Pixels]:
    rng = np.random.default_rng(37)
    found = []
    for index in range(120):
        w, h = int(rng.integers(1, 101)), int(rng.integers(1, 101))
        yy, xx = np.mgrid[0:h, 0:w]
        if index % 3 == 0:  # noise
            image = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
        else:  # a photo-like gradient
            image = np.stack(
                [xx * 255 // w, yy * 255 // h, (xx + 2 * yy) % 256, (xx * 11 + yy) % 256], -1
            ).astype(np.uint8)
        if index % 2:
            image[..., 3] = 255
        found.append(image)
    return found


def test_every_field_agrees_with_the_reference_crate() -> None:
    reference = pytest.importorskip("fast_thumbhash")  # x86-64 glibc and macOS wheels only
    for image in images():
        h, w = image.shape[:2]
        ours = fields(rgba_to_thumb_hash(w, h, image.tobytes()))
        theirs = fields(bytes(reference.rgba_to_thumb_hash(w, h, image.tobytes())))
        assert len(ours) == len(theirs), (w, h)
        assert max(abs(a - b) for a, b in zip(ours, theirs, strict=True)) <= 1, (w, h)


@pytest.mark.parametrize("alpha", [255, 96])
def test_the_hash_decodes_to_the_average_colour_and_alpha(alpha: int) -> None:
    yy, xx = np.mgrid[0:24, 0:32]
    image = np.stack([xx * 8, np.full_like(xx, 120), yy * 10, np.full_like(xx, alpha)], -1).astype(
        np.uint8
    )
    hashed = rgba_to_thumb_hash(32, 24, image.tobytes())
    r, g, b, a = thumbhash.thumb_hash_to_average_rgba(list(hashed))
    mean = image[..., :3].reshape(-1, 3).mean(axis=0) / 255
    assert np.allclose([r, g, b], mean, atol=0.04)
    assert a == pytest.approx(alpha / 255, abs=0.07) if alpha < 255 else a == 1.0
    assert thumbhash.thumb_hash_to_approximate_aspect_ratio(list(hashed)) == pytest.approx(
        32 / 24, rel=0.2
    )


@pytest.mark.parametrize(("w", "h"), [(0, 10), (101, 10), (10, 101)])
def test_sizes_outside_the_format_are_refused(w: int, h: int) -> None:
    with pytest.raises(ValueError, match="not within 100x100"):
        rgba_to_thumb_hash(w, h, bytes(4 * w * h))
