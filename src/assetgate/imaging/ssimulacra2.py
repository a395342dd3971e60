"""SSIMULACRA 2.1, the perceptual metric of libjxl (``tools/ssimulacra2.cc``), in libvips.

A score near 90 is visually lossless, 80 very high quality, 70 high, 50 medium, 30 low
(libjxl's own scale). It is computed exactly as libjxl does, step for step:

- pixels are sRGB (8-bit in, as every encoder here writes them); alpha is blended onto grey in
  the encoded sRGB values, twice (backgrounds 0.1 and 0.9) and the worse score is kept, as
  ``ssimulacra2_main.cc`` does; grey images are spread to three bands;
- sRGB -> linear by the exact sRGB transfer function; linear -> XYB with libjxl's opsin matrix,
  bias and cube root (no clamp at zero: sRGB values keep every opsin mix above the bias), then
  ``MakePositiveXYB`` (X*14+0.42, Y+0.01, B-Y+0.55);
- six scales, each downsampled 2x2 by box average *in linear RGB* (an odd edge repeats its last
  row or column), stopping below 8 pixels;
- libjxl's blur is its recursive Gaussian (Charalampidis 2016, sigma 1.5) with zero outside the
  image. That IIR filter is fed ``in[n-N-1] + in[n+N-1]`` and its poles lie on the unit circle at
  ``(2k+1)pi/2N``, so its response cancels after ``2N-1`` samples: it *is* a symmetric FIR
  kernel of 9 taps (N = 5), computed from the same constants (``imaging.gaussian``). Here it
  runs as a separable float convolution over a zero border. (The ``ssimulacra2`` package on
  PyPI blurs with a true Gaussian instead and scores libjxl's tank pair 21.16 where libjxl says
  17.3985.)
- SSIM without the luma denominator, the "ringing" and "blurring" edge maps, 1- and 4-norms of
  each: 108 numbers, libjxl's weights and its final polynomial.

Why numpy: libvips' per-operation overhead made the same steps 3x slower (a cube root costs
20 ms in libvips), scipy is a ~40 MB wheel for one convolution. The maps are computed channel by
channel in place (numpy's temporaries cost as much CPU as the arithmetic). An 800x533
comparison takes ~25 ms of CPU with the reference side precomputed (``bench/quality.py
--metric``). Checked against libjxl's scores in ``tests/imaging/
test_ssimulacra2.py`` (its tank crop at four JPEG qualities) and ``bench/quality.py --tank``
(the full tank pair).

Three modules, one job each: the colour steps (``imaging.xyb``), the blur (``imaging.gaussian``),
and here the scales, the maps, their norms and libjxl's weights and polynomial.

API:
- ``Reference(image)``: the reference side, computed once (per scale: XYB, its blurred mean and
  variance terms), for a search that scores many encodes of one image.
- ``Reference.score(distorted) -> float``; ``ssimulacra2(reference, distorted) -> float``.
- ``reference_bytes(width, height)``: the memory a ``Reference`` holds, for the memory budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np
import pyvips

from assetgate.imaging.gaussian import blur
from assetgate.imaging.xyb import Plane, linear_srgb, to_xyb

SCALES: Final = 6
_C2: Final = 0.0009
#: Backgrounds an image with alpha is blended onto (libjxl's ssimulacra2_main: the worse wins).
ALPHA_BACKGROUNDS: Final = (0.1, 0.9)

# tools/ssimulacra2.cc Msssim::Score: per channel X, Y, B; per scale; per norm (1, 4): the
# weights of SSIM, ringing and blurring.
_WEIGHTS: Final = (
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0,
    0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271,
    0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0, 1.8422455520539298,
    11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833,
    0.0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053,
    0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0,
    7.466890328078848, 0.0, 17.445833984131262, 0.0006235601634041466, 0.0, 0.0,
    6.683678146179332, 0.00037724407979611296, 1.027889937768264, 225.20515300849274, 0.0, 0.0,
    19.213238186143016, 0.0011401524586618361, 0.001237755635509985, 176.39317598450694, 0.0,
    0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0,
    34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0,
    0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0004179171803251336,
    0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862,
    23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353,
    0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0,
    0.0005130064588990679, 0.0, 0.00010854057858411537,
)  # fmt: skip


def _downsample(linear: Plane) -> Plane:
    """2x2 box average; an odd last row/column is averaged with itself, as libjxl clamps."""
    _, height, width = linear.shape
    if height % 2 or width % 2:
        linear = np.pad(linear, ((0, 0), (0, height % 2), (0, width % 2)), mode="edge")
    out = linear[:, 0::2, 0::2] + linear[:, 0::2, 1::2]
    out += linear[:, 1::2, 0::2]
    out += linear[:, 1::2, 1::2]
    out *= np.float32(0.25)
    return out


@dataclass(frozen=True, slots=True)
class _Scale:
    xyb: Plane
    mu: Plane
    var: Plane  # blur(xyb * xyb) - mu * mu
    dev: Plane  # |xyb - mu|
    edge: Plane  # 1 + |xyb - mu|


class _Side:
    """The reference side blended onto one background: every scale's XYB and its blurs."""

    def __init__(self, linear: Plane) -> None:
        self.scales: list[_Scale] = []
        linears = []
        for index in range(SCALES):
            # libjxl checks the size before downsampling: the last scale may be under 8.
            if linear.shape[1] < 8 or linear.shape[2] < 8:
                break
            if index:
                linear = _downsample(linear)
            linears.append(linear)
        for index, linear in enumerate(linears):
            xyb = to_xyb(linear)
            # Only the blurs a score reads (``_needs``); the variance of a channel whose SSIM
            # is not weighed stays zero.
            ssim_c, _, _ = _needs(index, len(linears))
            pick = list(ssim_c)
            blurred = blur([*xyb, *((xyb[c], xyb[c]) for c in pick)])
            mu = blurred[:3]
            var = np.zeros_like(xyb)
            var[pick] = blurred[3:] - mu[pick] * mu[pick]
            dev = np.abs(xyb - mu)
            self.scales.append(_Scale(xyb, mu, var, dev, dev + np.float32(1.0)))

    def score(self, distorted: Plane) -> float:
        norms: list[list[float]] = []
        linear = distorted
        count = len(self.scales)
        for index, ref in enumerate(self.scales):
            if index:
                linear = _downsample(linear)
            norms.append(self._norms(ref, to_xyb(linear), _needs(index, count)))
        return _combine(norms)

    @staticmethod
    def _norms(ref: _Scale, img2: Plane, needs: _Needs) -> list[float]:
        """The 18 averages of one scale: 1-norm and 4-norm of SSIM, ringing and blurring per
        channel, each computed only where libjxl weighs it (``_needs``; 0.0 elsewhere).

        Channel by channel, in place in two scratch planes and the blurred planes themselves
        once read: at 800x533 each temporary is 1.7 MB, and numpy's allocations and fancy
        indexing copies cost as much CPU as the arithmetic."""
        ssim_c, ring_c, blur_c = needs
        edge_c = tuple(sorted(set(ring_c) | set(blur_c)))
        mu_c = tuple(sorted(set(ssim_c) | set(edge_c)))
        if not mu_c:
            return [0.0] * 18
        parts: list[Plane | tuple[Plane, Plane]] = [img2[c] for c in mu_c]
        parts += [(img2[c], img2[c]) for c in ssim_c]
        parts += [(ref.xyb[c], img2[c]) for c in ssim_c]
        blurred = blur(parts)
        mu2 = {c: blurred[i] for i, c in enumerate(mu_c)}
        means = [0.0] * 18
        a = np.empty_like(img2[0])
        b = np.empty_like(img2[0])
        for i, c in enumerate(ssim_c):
            mu1, m2 = ref.mu[c], mu2[c]
            s22, s12 = blurred[len(mu_c) + i], blurred[len(mu_c) + len(ssim_c) + i]
            # SSIM' = 1 - (1 - (mu1 - mu2)^2) (2 (s12 - mu1 mu2) + C2) / (var1 + var2 + C2),
            # in libjxl's order of operations (identical images then score exactly 100).
            np.multiply(mu1, m2, out=a)
            np.subtract(s12, a, out=a)
            a *= np.float32(2.0)
            a += np.float32(_C2)
            np.subtract(mu1, m2, out=b)
            b *= b
            np.subtract(np.float32(1.0), b, out=b)
            np.multiply(b, a, out=a)
            np.multiply(m2, m2, out=b)
            np.subtract(s22, b, out=b)
            np.add(ref.var[c], b, out=b)
            b += np.float32(_C2)
            a /= b
            np.subtract(np.float32(1.0), a, out=a)
            np.maximum(a, np.float32(0.0), out=a)
            _means(a, c, 0, means, b)
        for c in edge_c:
            # d1 = (1 + |img2 - mu2|) / (1 + |img1 - mu1|) - 1, with one division.
            np.subtract(img2[c], mu2[c], out=a)
            np.abs(a, out=a)
            a -= ref.dev[c]
            a /= ref.edge[c]
            if c in blur_c:
                lost = mu2[c]  # read for the last time above
                np.negative(a, out=lost)
                np.maximum(lost, np.float32(0.0), out=lost)
                _means(lost, c, 6, means, b)
            if c in ring_c:
                np.maximum(a, np.float32(0.0), out=a)
                _means(a, c, 3, means, b)
        return means


_Needs = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


@cache
def _needs(scale: int, count: int) -> _Needs:
    """The channels whose SSIM, ringing and blurring maps libjxl weighs at ``scale`` of
    ``count`` scales (not zero in ``_WEIGHTS``: about half are zero, among them SSIM of X and B
    at full size, the most costly blurs). ``Msssim::Score`` walks the weights over the scales
    there are, so with fewer than 6 the channels read other rows, as here."""
    ssim: list[int] = []
    ring: list[int] = []
    blur: list[int] = []
    for channel in range(3):
        base = (channel * count + scale) * 6
        w = _WEIGHTS[base : base + 6]  # 1-norm: ssim, ring, blur; then the 4-norm's
        for found, wanted in ((ssim, (w[0], w[3])), (ring, (w[1], w[4])), (blur, (w[2], w[5]))):
            if any(wanted):
                found.append(channel)
    return tuple(ssim), tuple(ring), tuple(blur)


def _means(plane: Plane, channel: int, offset: int, out: list[float], scratch: Plane) -> None:
    """The mean and the 4th-power mean (``out[offset + channel]``, ``out[9 + offset +
    channel]``) of one map; pairwise float32 sums, ~1e-6 relative. ``scratch``: a plane of the
    same shape, overwritten."""
    area = plane.size
    out[offset + channel] = float(plane.sum(dtype=np.float32)) / area
    np.multiply(plane, plane, out=scratch)
    scratch *= scratch
    out[9 + offset + channel] = math.sqrt(math.sqrt(float(scratch.sum(dtype=np.float32)) / area))


def _combine(norms: list[list[float]]) -> float:
    """The 108 weighted norms -> libjxl's score (``Msssim::Score``)."""
    total = 0.0
    i = 0
    for c in range(3):
        for means in norms:
            for n in range(2):
                # bands: ssim c, artifact c, lost c (1-norm: 0..8), then the same to the 4th.
                ssim = means[n * 9 + c]
                ring = means[n * 9 + 3 + c]
                blur = means[n * 9 + 6 + c]
                total += _WEIGHTS[i] * abs(ssim)
                total += _WEIGHTS[i + 1] * abs(ring)
                total += _WEIGHTS[i + 2] * abs(blur)
                i += 3
    total *= 0.9562382616834844
    total = (
        2.326765642916932 * total
        - 0.020884521182843837 * total * total
        + 6.248496625763138e-05 * total * total * total
    )
    if total <= 0:
        return 100.0
    return 100.0 - 10.0 * float(total**0.6276336467831387)


class Reference:
    """The reference side of SSIMULACRA2 for one image, computed once for many scores."""

    def __init__(self, image: pyvips.Image) -> None:
        if image.width < 8 or image.height < 8:
            raise ValueError("SSIMULACRA2 needs at least 8x8 pixels")
        self.width, self.height = image.width, image.height
        backgrounds = ALPHA_BACKGROUNDS if image.hasalpha() else (0.5,)
        self._sides = [(bg, _Side(linear_srgb(image, bg))) for bg in backgrounds]
        self._alpha = image.hasalpha()

    def score(self, distorted: pyvips.Image) -> float:
        if (distorted.width, distorted.height) != (self.width, self.height):
            raise ValueError("the distorted image must have the reference's size")
        if self._alpha and not distorted.hasalpha():
            distorted = distorted.bandjoin_const([255])
        return min(side.score(linear_srgb(distorted, bg)) for bg, side in self._sides)


def ssimulacra2(reference: pyvips.Image, distorted: pyvips.Image) -> float:
    return Reference(reference).score(distorted)


def reference_bytes(width: int, height: int, alpha: bool) -> int:
    """Memory a ``Reference`` holds: per background, 4 float images of 3 bands at scale 1
    (XYB, mean, variance, edge) and a third more for the smaller scales."""
    per_side = width * height * 3 * 4 * 4 * 4 // 3
    return per_side * (2 if alpha else 1)
