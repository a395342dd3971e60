"""``quality=auto``: the lowest quality whose output reaches a SSIMULACRA2 target, in few encodes.

Pure over two callables, as ``bytebudget`` is: ``encode(setting) -> bytes`` and ``score(body) ->
float`` (the render passes the real encoder and ``imaging.ssimulacra2`` against the variant's own
lossless rendering, whose reference side is computed once). So the search is tested without
pixels, and every encode it makes is counted.

The search, at most ``MAX_ENCODES`` encodes:

1. Start where the format typically reaches the target (``START``, measured over the corpus of
   docs/benchmarks.md "quality=auto"), then step by the score's measured slope per quality point
   (``SLOPE``), and by the secant of the two nearest tries once there are two, always inside the
   bracket of the lowest passing and the highest failing quality. Stop when they are adjacent or
   a passing try is within ``CLOSE`` of the target: further encodes would save a few bytes at
   the cost of a whole encode and score.
2. JPEG and AVIF use 4:2:0 chroma below quality 90 (where libvips switches to 4:4:4). When no
   4:2:0 quality reaches the target (red text, thin coloured lines), quality 90 is tried, then
   higher ones.
3. WebP's lossy mode is always 4:2:0 and leaves some graphics below 75 at any quality: when the
   lossy search fails or needs quality 90 or more (and spends under 1.5 bits a pixel: a photo's
   lossless encoding is never smaller), lossless (and near-lossless, level 60, when two encodes
   are left) is tried too, and the smallest encode that reaches the target wins.

A flat stretch of the curve (two tries less than 0.05 points apart per quality point, below the
target) sends the search to the top of its range at once. One encode is always kept for the
fallback of step 2 or 3.

The encode of the chosen setting is the answer (never encoded again). When nothing reaches the
target, the best-scoring try is the answer and says so (``met`` False).

API: ``search(fmt, target, encode, score) -> Searched``; ``Setting``, ``Try``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from assetgate.imaging.formats import OutputFormat

Mode = Literal["lossy", "near-lossless", "lossless"]
SearchFormat = Literal["jpeg", "webp", "avif"]

#: Encodes (each followed by a score) one search may spend.
MAX_ENCODES: Final = 5
#: A passing try this close above the target ends the search.
CLOSE: Final = 1.0
#: Where libvips' JPEG and AVIF savers switch from 4:2:0 to 4:4:4 chroma.
FULL_CHROMA: Final = 90
#: The lowest quality a search goes down to.
LOWEST: Final = 10
#: WebP's near-lossless preprocessing level tried for graphics (0..100, 100 = lossless).
NEAR_LOSSLESS_LEVEL: Final = 60
#: Bits a pixel from which a lossy WebP is taken for a photo's (no lossless tries).
LOSSY_PHOTO_BITS: Final = 1.5
#: The largest first step (one try, the measured slope only): curves steepen near the top.
MAX_STEP: Final = 15
#: Score points per quality point under which the curve counts as flat (4:2:0 has stalled).
_FLAT: Final = 0.05

#: (target score, the quality that typically reaches it): the median over the corpus.
START: Final[Mapping[SearchFormat, tuple[tuple[int, int], ...]]] = {
    "jpeg": ((30, 16), (50, 26), (60, 35), (70, 56), (75, 67), (80, 76), (85, 84), (90, 90),
             (95, 97)),
    "webp": ((30, 10), (50, 22), (60, 38), (70, 62), (75, 76), (80, 83), (85, 88), (90, 93),
             (95, 96)),
    "avif": ((30, 22), (50, 34), (60, 44), (70, 53), (75, 58), (80, 66), (85, 75), (90, 87),
             (95, 97)),
}  # fmt: skip
#: Score points per quality point between q70 and q80 (the corpus' median), for the first step.
SLOPE: Final[Mapping[SearchFormat, float]] = {"jpeg": 0.45, "webp": 0.6, "avif": 0.45}


@dataclass(frozen=True, slots=True)
class Setting:
    quality: int
    mode: Mode = "lossy"

    def label(self) -> str:
        """What ``X-Output-Quality`` says: the number, or the WebP mode that was chosen."""
        if self.mode == "lossless":
            return "lossless"
        if self.mode == "near-lossless":
            return f"near-lossless:{self.quality}"
        return str(self.quality)


@dataclass(frozen=True, slots=True)
class Try:
    setting: Setting
    body: bytes
    score: float


@dataclass(frozen=True, slots=True)
class Searched:
    chosen: Try
    tries: tuple[Try, ...]
    met: bool  # the chosen encode reaches the target

    @property
    def encodes(self) -> int:
        return len(self.tries)


def searchable(fmt: OutputFormat) -> bool:
    return fmt in START


def start_quality(fmt: SearchFormat, target: float) -> int:
    """The quality where ``fmt`` typically reaches ``target`` (linear between measured points)."""
    points = START[fmt]
    if target <= points[0][0]:
        return points[0][1]
    for (t0, q0), (t1, q1) in itertools.pairwise(points):
        if target <= t1:
            return round(q0 + (q1 - q0) * (target - t0) / (t1 - t0))
    return points[-1][1]


def search(
    fmt: SearchFormat,
    target: float,
    encode: Callable[[Setting], bytes],
    score: Callable[[bytes], float],
    *,
    max_encodes: int = MAX_ENCODES,
    pixels: int = 0,
) -> Searched:
    """``pixels``: the image's, to skip WebP's lossless tries for a photo (0: always try)."""
    tries: list[Try] = []

    def attempt(setting: Setting) -> Try:
        body = encode(setting)
        done = Try(setting, body, score(body))
        tries.append(done)
        return done

    # One encode is kept for the fallback: 4:4:4 (JPEG, AVIF) or lossless (WebP).
    top = 100 if fmt == "webp" else FULL_CHROMA - 1
    first = start_quality(fmt, target)
    found = _climb(fmt, target, attempt, LOWEST, top, first, max_encodes - 1)
    if found is None and fmt != "webp":
        # 4:2:0 cannot reach it: quality 90 switches to 4:4:4, then climb from there.
        left = max_encodes - len(tries)
        found = _climb(fmt, target, attempt, FULL_CHROMA, 100, FULL_CHROMA, left)
    if fmt == "webp" and (found is None or _may_shrink_losslessly(found, pixels)):
        extras = [Setting(NEAR_LOSSLESS_LEVEL, "near-lossless"), Setting(100, "lossless")]
        for setting in extras[-(max_encodes - len(tries)) :] if len(tries) < max_encodes else []:
            candidate = attempt(setting)
            if candidate.score >= target and (
                found is None or len(candidate.body) < len(found.body)
            ):
                found = candidate
    if found is not None:
        return Searched(found, tuple(tries), True)
    best = max(tries, key=lambda t: (t.score, -len(t.body)))
    return Searched(best, tuple(tries), False)


def _may_shrink_losslessly(found: Try, pixels: int) -> bool:
    """A lossy WebP pass at quality 90 or more might lose to lossless, unless it is a photo's:
    at ``LOSSY_PHOTO_BITS`` a pixel or more, lossless never came near in the corpus (8+ bits a
    pixel)."""
    if found.setting.quality < FULL_CHROMA:
        return False
    return pixels <= 0 or len(found.body) * 8 < LOSSY_PHOTO_BITS * pixels


def _climb(
    fmt: SearchFormat,
    target: float,
    attempt: Callable[[Setting], Try],
    low: int,
    high: int,
    first: int,
    budget: int,
) -> Try | None:
    """The lowest passing lossy quality in ``low..high`` found in ``budget`` tries, or None."""
    failing = low - 1  # highest quality known to fail
    passing: Try | None = None  # lowest quality known to pass
    seen: list[Try] = []
    quality = min(high, max(low, first))
    for _ in range(budget):
        current = attempt(Setting(quality))
        seen.append(current)
        if current.score >= target:
            if passing is None or quality < passing.setting.quality:
                passing = current
        else:
            failing = max(failing, quality)
        ceiling = passing.setting.quality - 1 if passing is not None else high
        if failing + 1 > ceiling:
            break  # adjacent, or nothing left to try
        if passing is not None and passing.score - target < CLOSE:
            break
        quality = min(ceiling, max(failing + 1, _next(fmt, target, seen)))
    return passing


def _next(fmt: SearchFormat, target: float, seen: list[Try]) -> int:
    """The quality expected to land just above the target.

    With a pass and a fail, the secant of the tightest bracket (regula falsi: the curve may be
    steep at the top, where two passes say little); with tries on one side only, the secant of
    the two nearest the target; with one try, the measured slope, at most ``MAX_STEP`` away."""
    passes = [t for t in seen if t.score >= target]
    fails = [t for t in seen if t.score < target]
    slope = SLOPE[fmt]
    if passes and fails:
        high = min(passes, key=lambda t: t.setting.quality)
        below = [t for t in fails if t.setting.quality < high.setting.quality]
        low = max(below, key=lambda t: t.setting.quality) if below else high
        near = high
        pair: tuple[Try, Try] | None = (high, low) if low is not high else None
    else:
        ranked = sorted(seen, key=lambda t: abs(t.score - target))
        near = ranked[0]
        pair = (ranked[0], ranked[1]) if len(ranked) > 1 else None
    if pair is not None:
        dq = pair[0].setting.quality - pair[1].setting.quality
        ds = pair[0].score - pair[1].score
        if dq and ds / dq <= _FLAT and near.score < target:
            return 100  # flat: the top of the range says at once whether it can be reached
        if dq and ds / dq > _FLAT:
            slope = ds / dq
    # Aim a little above the target: a pass ends the search, a near miss costs another try.
    step = (target + CLOSE / 2 - near.score) / slope
    if pair is None:
        step = max(-MAX_STEP, min(MAX_STEP, step))
    move = math.ceil(step) if step > 0 else math.floor(step)
    return near.setting.quality + (move or (1 if near.score < target else -1))
