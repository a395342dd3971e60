"""The ``quality=auto`` search over counted fake encoders: bounded, lowest passing, fallbacks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assetgate.optimizer.autoquality import (
    FULL_CHROMA,
    LOWEST,
    MAX_ENCODES,
    NEAR_LOSSLESS_LEVEL,
    SearchFormat,
    Setting,
    search,
    start_quality,
)


class Encoder:
    """A fake codec: bytes grow with quality, the score is a given curve; every call counted."""

    def __init__(self, curve: Callable[[Setting], float], size: Callable[[Setting], int]) -> None:
        self.curve, self.size = curve, size
        self.calls: list[Setting] = []
        self.scores: dict[bytes, float] = {}

    def encode(self, setting: Setting) -> bytes:
        self.calls.append(setting)
        body = f"{setting.mode}:{setting.quality}:".encode().ljust(self.size(setting), b"x")
        self.scores[body] = self.curve(setting)
        return body

    def score(self, body: bytes) -> float:
        return self.scores[body]


def linear(slope: float, at_zero: float) -> Callable[[Setting], float]:
    return lambda s: 100.0 if s.mode == "lossless" else at_zero + slope * s.quality


def by_quality(s: Setting) -> int:
    return 100 + 10 * s.quality


@pytest.mark.parametrize("fmt", ["jpeg", "webp", "avif"])
@pytest.mark.parametrize("slope", [0.3, 0.6, 1.2])
@pytest.mark.parametrize("target", [50, 75, 85])
def test_finds_a_passing_quality_within_five_encodes(
    fmt: SearchFormat, slope: float, target: int
) -> None:
    codec = Encoder(linear(slope, 100 - 95 * slope), by_quality)  # every curve reaches 100 at 95
    found = search(fmt, target, codec.encode, codec.score)
    assert found.met
    assert found.chosen.score >= target
    assert len(codec.calls) == found.encodes <= MAX_ENCODES
    # The answer is one of the encodes made, not encoded again.
    assert codec.calls.count(found.chosen.setting) == 1
    # Close to the lowest passing quality: at most ~2 score points of slack.
    lowest = min(q for q in range(LOWEST, 101) if codec.curve(Setting(q)) >= target)
    assert found.chosen.setting.quality - lowest <= max(2, round(2 / slope))


def test_stops_at_once_when_the_first_guess_is_just_right() -> None:
    first = start_quality("jpeg", 75)
    codec = Encoder(lambda s: 75.2 + (s.quality - first) * 5.0, by_quality)
    found = search("jpeg", 75, codec.encode, codec.score)
    assert codec.calls == [Setting(first)]
    assert found.met


def test_jpeg_tries_full_chroma_when_420_cannot_reach() -> None:
    """Below 90 the curve stalls (4:2:0 bleeds red text); at 90 libvips codes 4:4:4."""
    codec = Encoder(lambda s: 70.0 if s.quality < FULL_CHROMA else 80.0, by_quality)
    found = search("jpeg", 75, codec.encode, codec.score)
    assert found.met
    assert found.chosen.setting == Setting(FULL_CHROMA)
    assert len(codec.calls) <= MAX_ENCODES


def test_webp_falls_back_to_near_lossless_or_lossless_whichever_is_smaller() -> None:
    """A graphic lossy WebP cannot bring to the target: the smallest passing of the others."""

    def curve(s: Setting) -> float:
        return {"lossy": 60.0, "near-lossless": 90.0, "lossless": 100.0}[s.mode]

    def size(s: Setting) -> int:
        return {"lossy": 100 + s.quality, "near-lossless": 900, "lossless": 700}[s.mode]

    codec = Encoder(curve, size)
    found = search("webp", 75, codec.encode, codec.score)
    assert found.met
    assert found.chosen.setting == Setting(100, "lossless")
    assert Setting(NEAR_LOSSLESS_LEVEL, "near-lossless") in codec.calls
    assert found.chosen.setting.label() == "lossless"
    assert len(codec.calls) <= MAX_ENCODES


def test_unreachable_target_answers_the_best_score_and_says_so() -> None:
    codec = Encoder(lambda s: 40.0 + s.quality / 10, by_quality)
    found = search("jpeg", 95, codec.encode, codec.score)
    assert not found.met
    assert found.chosen.score == max(codec.score(codec.encode(s)) for s in codec.calls[:5])
    assert found.encodes <= MAX_ENCODES


def test_start_follows_the_target() -> None:
    for fmt in ("jpeg", "webp", "avif"):
        qualities = [start_quality(fmt, t) for t in range(30, 96)]
        assert qualities == sorted(qualities)
        assert qualities[0] >= 1
        assert qualities[-1] <= 100


def test_a_photo_at_high_webp_quality_is_not_tried_losslessly() -> None:
    """A pass at q90+ that spends 2+ bits a pixel is a photo's: lossless never wins there."""
    codec = Encoder(lambda s: 60.0 + 0.2 * s.quality, lambda s: 100 + 100 * s.quality)
    found = search("webp", 78.5, codec.encode, codec.score, pixels=1000)
    assert found.met
    assert found.chosen.setting.quality >= FULL_CHROMA
    assert all(s.mode == "lossy" for s in codec.calls)
    graphic = Encoder(lambda s: 60.0 + 0.2 * s.quality, lambda s: 100 + 100 * s.quality)
    search("webp", 78.5, graphic.encode, graphic.score, pixels=10**7)  # 0.1 bit a pixel
    assert Setting(100, "lossless") in graphic.calls


def test_regula_falsi_on_a_curve_steep_at_the_top() -> None:
    """Measured on a star field in WebP: 59 at q76, 75 at q90, 79.6 at q100. The bracket, not
    two passes near the top, decides the next try: q90 is found, not q95."""
    points = {76: 59.28, 86: 71.32, 88: 72.9, 90: 75.01, 91: 76.26, 92: 76.59, 95: 78.92,
              100: 79.61}  # fmt: skip

    def curve(s: Setting) -> float:
        if s.mode != "lossy":
            return 100.0
        below = max(q for q in points if q <= s.quality) if s.quality >= 76 else 76
        return points[below] if s.quality >= 76 else 59.28 - (76 - s.quality)

    codec = Encoder(curve, by_quality)
    found = search("webp", 75, codec.encode, codec.score, pixels=1)  # a photo: lossy only
    assert found.chosen.setting == Setting(90)


def test_auto_in_a_preset_and_the_servers_default() -> None:
    from assetgate.optimizer.queries import read_query
    from assetgate.optimizer.vocabulary import AutoQuality

    presets = {"hero": {"width": "800", "quality": "auto:80"}, "card": {"quality": "auto"}}
    hero = read_query(b"preset=hero", False, presets=presets).image
    assert hero is not None
    assert hero.auto == 80
    server = AutoQuality(target=70, default=True)
    card = read_query(b"preset=card", False, presets=presets, auto=server).image
    plain = read_query(b"width=300", False, auto=server).image
    fixed = read_query(b"width=300&quality=85", False, auto=server).image
    assert card is not None
    assert plain is not None
    assert fixed is not None
    assert (card.auto, plain.auto, fixed.auto) == (70, 70, None)
    # auto is its own value in the key; 85 and auto:70 never share one.
    assert plain.cache_key() != fixed.cache_key()
