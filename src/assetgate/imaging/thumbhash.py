"""ThumbHash (Evan Wallace's image placeholder format) encoded with numpy.

The reference encoder, transcribed: the average colour; the pixels composited over it and turned
into luminance, yellow-blue, red-green (and alpha when any pixel is not opaque); each channel's
low-frequency DCT terms, normalised by the largest; all quantised into 5-6 header bytes and one
nibble per term. It runs in float64 as the reference JavaScript does; the Rust crate computes in
float32, so a quantised value can differ from the crate's by one step (tests/imaging/
test_thumbhash.py compares the two field by field).

Why not a package: ``fast-thumbhash`` (bindings of the Rust crate) has wheels for x86-64 glibc
and macOS only, so the image could not be built for arm64 or musl without a Rust toolchain; the
pure-Python ports are ~40x slower and the ``thumbhash`` one fails on every image with alpha.
numpy is already a dependency with wheels everywhere, and this costs about what the crate does
on the 32 px image ``info=1`` hashes (docs/benchmarks.md, ``bench/placeholders.py``).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt

LARGEST: Final = 100  # the format's limit: a larger image costs more and says nothing more

Plane = npt.NDArray[np.float64]


def _round(value: float) -> int:
    """JavaScript's ``Math.round`` (half up); every value rounded here is non-negative."""
    return math.floor(value + 0.5)


def _terms(plane: Plane, nx: int, ny: int) -> tuple[float, list[float], float]:
    """The DC term, the AC terms scaled into 0..1 (in the format's order: rows of ``cy``, each
    ``cx`` with ``cx * ny < nx * (ny - cy)``) and their scale."""
    h, w = plane.shape
    fx = np.cos(np.pi / w * np.outer(np.arange(nx), np.arange(w) + 0.5))
    fy = np.cos(np.pi / h * np.outer(np.arange(ny), np.arange(h) + 0.5))
    f = fy @ plane @ fx.T / (w * h)
    ac = [float(f[cy, cx]) for cy in range(ny) for cx in range(nx) if cx * ny < nx * (ny - cy)]
    dc = ac.pop(0)
    scale = max((abs(term) for term in ac), default=0.0)
    if scale:
        ac = [0.5 + 0.5 / scale * term for term in ac]
    return dc, ac, scale


def rgba_to_thumb_hash(width: int, height: int, rgba: bytes) -> bytes:
    """The ThumbHash of an image of at most 100x100 pixels, RGBA not premultiplied."""
    if not (0 < width <= LARGEST and 0 < height <= LARGEST):
        raise ValueError(f"{width}x{height} is not within {LARGEST}x{LARGEST}")
    pixels = np.frombuffer(rgba, dtype=np.uint8).reshape(height, width, 4) / 255.0
    alpha = pixels[..., 3]
    weighted = pixels[..., :3] * alpha[..., None]
    total = float(alpha.sum())
    average = weighted.sum(axis=(0, 1)) / total if total else np.zeros(3)
    has_alpha = total < width * height
    limit = 5 if has_alpha else 7  # fewer luminance terms when alpha needs the room
    lx = max(1, _round(limit * width / max(width, height)))
    ly = max(1, _round(limit * height / max(width, height)))
    rgb = average * (1 - alpha[..., None]) + weighted  # composited over the average
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    l_dc, l_ac, l_scale = _terms((r + g + b) / 3, max(3, lx), max(3, ly))
    p_dc, p_ac, p_scale = _terms((r + g) / 2 - b, 3, 3)
    q_dc, q_ac, q_scale = _terms(r - g, 3, 3)
    landscape = width > height
    header24 = (
        _round(63 * l_dc)
        | _round(31.5 + 31.5 * p_dc) << 6
        | _round(31.5 + 31.5 * q_dc) << 12
        | _round(31 * l_scale) << 18
        | int(has_alpha) << 23
    )
    header16 = (
        (ly if landscape else lx)
        | _round(63 * p_scale) << 3
        | _round(63 * q_scale) << 9
        | int(landscape) << 15
    )
    out = [header24 & 255, header24 >> 8 & 255, header24 >> 16, header16 & 255, header16 >> 8]
    terms = l_ac + p_ac + q_ac
    if has_alpha:
        a_dc, a_ac, a_scale = _terms(alpha, 5, 5)
        out.append(_round(15 * a_dc) | _round(15 * a_scale) << 4)
        terms += a_ac
    nibbles = [_round(15 * term) for term in terms] + [0] * (len(terms) % 2)
    out += [low | high << 4 for low, high in zip(nibbles[::2], nibbles[1::2], strict=True)]
    return bytes(out)
