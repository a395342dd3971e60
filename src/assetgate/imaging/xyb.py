"""sRGB pixels -> linear light -> libjxl's XYB, as SSIMULACRA2 sees them (``imaging.ssimulacra2``).

The exact sRGB transfer function (a 256-entry table for 8-bit input), alpha blended onto a grey
background in the encoded values, then libjxl's opsin matrix, bias and cube root and
``MakePositiveXYB`` (X*14+0.42, Y+0.01, B-Y+0.55), with no clamp at zero: sRGB values keep every
opsin mix above the bias. Planes are float32 ``(3, h, w)``; the 3x3 products are written out
plane by plane (numpy's ``@`` hands them to BLAS, whose threads spin on a busy machine).
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyvips

from assetgate.imaging.vips import killable

Plane = npt.NDArray[np.float32]

# libjxl opsin_params.h: the opsin absorbance matrix and its bias.
_M02, _M00 = 0.078, 0.30
_M12, _M10 = 0.078, 0.23
_M20, _M21 = 0.24342268924547819, 0.20476744424496821
_OPSIN: Final = (
    (_M00, 1.0 - _M02 - _M00, _M02),
    (_M10, 1.0 - _M12 - _M10, _M12),
    (_M20, _M21, 1.0 - _M20 - _M21),
)
_BIAS: Final = 0.0037930732552754493
_CBRT_BIAS: Final = _BIAS ** (1.0 / 3.0)
# XYB from the cube roots, then MakePositiveXYB, as one affine map.
_POSITIVE_XYB: Final = ((7.0, -7.0, 0.0), (0.5, 0.5, 0.0), (-0.5, -0.5, 1.0))
_POSITIVE_OFFSET: Final = (0.42, 0.01 - _CBRT_BIAS, 0.55)


@cache
def _srgb_lut() -> Plane:
    """8-bit sRGB code -> linear light plus the opsin bias, as a 256-entry table."""
    return _to_linear(np.arange(256, dtype=np.float64) / 255.0).astype(np.float32)


def _to_linear(v: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The exact sRGB transfer function, plus the opsin bias.

    Each row of the opsin matrix sums to 1, so adding the bias to every linear value adds it
    to every opsin mix, and a box average keeps it: one operation fewer per score."""
    linear = np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)
    return linear + _BIAS


def to_xyb(biased: Plane) -> Plane:
    """Linear RGB (plus bias), planes (3, h, w) -> libjxl's XYB made positive.

    The 3x3 products are written out plane by plane: numpy's ``@`` hands them to BLAS, whose
    threads spin on a busy machine and cost several times the arithmetic in CPU time."""
    cubed = _mix(biased, _OPSIN)
    np.cbrt(cubed, out=cubed)
    out = _mix(cubed, _POSITIVE_XYB)
    for row, offset in enumerate(_POSITIVE_OFFSET):
        out[row] += np.float32(offset)
    return out


def _mix(planes: Plane, matrix: tuple[tuple[float, float, float], ...]) -> Plane:
    out = np.empty_like(planes)
    tmp = np.empty_like(planes[0])
    for row, (a, b, c) in enumerate(matrix):
        np.multiply(planes[0], np.float32(a), out=out[row])
        for plane, weight in ((planes[1], b), (planes[2], c)):
            if weight:
                np.multiply(plane, np.float32(weight), out=tmp)
                out[row] += tmp
    return out


def _pixels(image: pyvips.Image) -> npt.NDArray[Any]:
    """The image's pixels as an (h, w, bands) array (computed inside the job's kill switch)."""
    dtype = np.uint16 if image.format == "ushort" else np.uint8
    if image.format not in ("uchar", "ushort"):
        image = image.cast("uchar")
    with killable(image) as target:
        data = target.write_to_memory()
    return np.frombuffer(data, dtype=dtype).reshape(image.height, image.width, image.bands)


def linear_srgb(image: pyvips.Image, background: float) -> Plane:
    """8- or 16-bit sRGB (grey or colour, with or without alpha) -> planes (3, h, w) of linear
    light plus the opsin bias. Alpha is blended onto ``background`` (0..1) in the encoded
    values, as libjxl does."""
    pixels = _pixels(image)
    colours = pixels.shape[2] - (1 if image.hasalpha() else 0)
    if image.hasalpha() or pixels.dtype != np.uint8:
        top = float(np.iinfo(pixels.dtype).max)
        values = pixels.astype(np.float32) / np.float32(top)
        if image.hasalpha():
            alpha = values[:, :, colours:]
            values = values[:, :, :colours] * alpha + (1.0 - alpha) * np.float32(background)
        linear = _to_linear(values).astype(np.float32)
        planes = np.ascontiguousarray(np.moveaxis(linear[:, :, :colours], 2, 0))
    else:
        # The table straight into planes: one pass, no interleaved float copy.
        planes = np.empty((colours, image.height, image.width), dtype=np.float32)
        for band in range(colours):
            np.take(_srgb_lut(), pixels[:, :, band], out=planes[band])
    if colours == 1:
        planes = np.repeat(planes, 3, axis=0)
    return planes
