"""libjxl's recursive Gaussian (sigma 1.5) as the 9-tap FIR kernel it amounts to, and the blur.

libjxl's IIR filter is fed ``in[n-N-1] + in[n+N-1]`` and its poles lie on the unit circle at
``(2k+1)pi/2N``, so its response cancels after ``2N-1`` samples: it *is* a symmetric FIR kernel
of 9 taps (N = 5), computed here from the same constants and run as a separable float32
convolution over a zero border, block by block (``imaging.ssimulacra2``'s blurs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Final

import numpy as np

from assetgate.imaging.xyb import Plane

SIGMA: Final = 1.5


@cache
def blur_kernel(sigma: float = SIGMA) -> tuple[float, ...]:
    """libjxl's ``CreateRecursiveGaussian(sigma)`` as the FIR kernel it amounts to.

    The IIR of component k is ``y[n] = n2_k (x[n-N-1] + x[n+N-1]) - d1_k y[n-1] - y[n-2]``,
    ``d1_k = -2 cos(w_k)``: its impulse response is ``n2_k sin((t+1) w_k) / sin(w_k)``, and the
    second input tap cancels it from ``t = 2N`` on because ``2N w_k`` is an odd multiple of pi.
    Output n then weighs input n+d by ``sum_k n2_k sin((N+d) w_k) / sin(w_k)`` for |d| < N."""
    radius = float(round(3.2795 * sigma + 0.2546))
    pi_div_2r = math.pi / (2.0 * radius)
    omega = (pi_div_2r, 3.0 * pi_div_2r, 5.0 * pi_div_2r)
    p = (1.0 / math.tan(0.5 * omega[0]), -1.0 / math.tan(0.5 * omega[1]),
         1.0 / math.tan(0.5 * omega[2]))  # fmt: skip
    r = (p[0] * p[0] / math.sin(omega[0]), -p[1] * p[1] / math.sin(omega[1]),
         p[2] * p[2] / math.sin(omega[2]))  # fmt: skip
    rho = [math.exp(-0.5 * sigma * sigma * w * w) / radius for w in omega]
    d_13 = p[0] * r[1] - r[0] * p[1]
    d_35 = p[1] * r[2] - r[1] * p[2]
    d_51 = p[2] * r[0] - r[2] * p[0]
    zeta_15, zeta_35 = d_35 / d_13, d_51 / d_13
    a = ((p[0], p[1], p[2]), (r[0], r[1], r[2]), (zeta_15, zeta_35, 1.0))
    gamma = (1.0, radius * radius - sigma * sigma, zeta_15 * rho[0] + zeta_35 * rho[1] + rho[2])
    beta = _solve3(a, gamma)
    n = int(radius)
    n2 = [-beta[k] * math.cos(omega[k] * (radius + 1.0)) for k in range(3)]
    return tuple(
        sum(n2[k] * math.sin((n + d) * omega[k]) / math.sin(omega[k]) for k in range(3))
        for d in range(-n + 1, n)
    )


def _solve3(a: Sequence[Sequence[float]], b: Sequence[float]) -> tuple[float, float, float]:
    """Cramer's rule for the 3x3 system of (53) in libjxl's ``CreateRecursiveGaussian``."""

    def det(m: Sequence[Sequence[float]]) -> float:
        return (
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        )

    whole = det(a)
    out = []
    for col in range(3):
        m = [[b[row] if c == col else a[row][c] for c in range(3)] for row in range(3)]
        out.append(det(m) / whole)
    return out[0], out[1], out[2]


#: Rows per block of the blur: three blocks of an 800 px row stay within a core's L2 cache,
#: which makes the memory-bound passes a third faster than whole planes.
_BLOCK_ROWS: Final = 64


def blur(planes: Sequence[Plane | tuple[Plane, Plane]]) -> Plane:
    """The recursive Gaussian: separable 9-tap float32 convolution, zero outside the image.

    Each entry is a plane, or a pair whose product is blurred: the product is written straight
    into the padded buffer (no temporary plane). Band by band through two padded buffers of one
    band each: the only whole-size allocation is the output (most of a score's memory peak)."""
    kernel = [np.float32(k) for k in blur_kernel()]
    edge = len(kernel) // 2
    first = planes[0]
    height, width = (first[0] if isinstance(first, tuple) else first).shape
    padded = np.zeros((height, width + 2 * edge), dtype=np.float32)
    across = np.zeros((height + 2 * edge, width), dtype=np.float32)
    out = np.empty((len(planes), height, width), dtype=np.float32)
    inner = padded[:, edge : edge + width]
    for band, plane in enumerate(planes):
        if isinstance(plane, tuple):
            np.multiply(plane[0], plane[1], out=inner)
        else:
            inner[...] = plane
        _fir(padded, across[edge : edge + height], kernel, horizontal=True)
        _fir(across, out[band], kernel, horizontal=False)
    return out


def _fir(src: Plane, out: Plane, kernel: list[np.float32], *, horizontal: bool) -> None:
    """``out`` = the symmetric kernel run along the rows (``horizontal``) or the columns of
    ``src``, which has ``edge`` zeros more on both ends of that axis."""
    edge = len(kernel) // 2
    width = out.shape[1]
    pair = np.empty((_BLOCK_ROWS, width), dtype=np.float32)
    for top in range(0, out.shape[0], _BLOCK_ROWS):
        bottom = min(out.shape[0], top + _BLOCK_ROWS)
        block, tmp = out[top:bottom], pair[: bottom - top]

        def tap(offset: int, top: int = top, bottom: int = bottom) -> Plane:
            if horizontal:
                return src[top:bottom, edge + offset : edge + offset + width]
            return src[top + edge + offset : bottom + edge + offset]

        np.multiply(tap(0), kernel[edge], out=block)
        for d in range(1, edge + 1):
            np.add(tap(-d), tap(d), out=tmp)
            tmp *= kernel[edge + d]
            block += tmp
