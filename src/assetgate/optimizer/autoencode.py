"""``quality=auto`` on pixels: the search of ``optimizer.autoquality`` with the real encoder and
SSIMULACRA2 against the variant's own lossless rendering.

The pipeline's output is computed once (``copy_memory``) and is the reference: exactly what the
encoder is given (for JPEG, alpha flattened as ``imaging.encode`` flattens it), so a score
measures the encoding and nothing else. The reference side of the metric is computed once per
search; each try is an encode, a decode of its bytes and one score. With ``max_bytes`` the
search's answer stands when it fits; otherwise the highest quality below it that fits (the
best-scoring one that fits) is found as ``max_bytes`` alone finds it, and scored.

The job's stop (client gone, deadline) is checked before every encode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import pyvips

from assetgate.cpu import stop
from assetgate.imaging.encode import encode, encode_near_lossless
from assetgate.imaging.formats import OutputFormat, saver_of
from assetgate.imaging.ssimulacra2 import Reference
from assetgate.optimizer.autoquality import SearchFormat, Setting, search
from assetgate.optimizer.bytebudget import fit_quality

_WHITE = [255, 255, 255]


@dataclass(frozen=True, slots=True)
class Found:
    body: bytes
    quality: int
    score: float
    label: str  # X-Output-Quality
    met: bool  # the score reaches the target
    budget_met: bool = True
    encodes: int = 0


def auto_quality(
    image: pyvips.Image,
    output: OutputFormat,
    target: int,
    effort: int | None,
    max_bytes: int | None = None,
) -> Found:
    image = image.copy_memory()  # encoded several times, and the metric's reference
    reference = Reference(_as_encoded(image, output))

    def encode_setting(setting: Setting) -> bytes:
        stop.check()
        if setting.mode == "near-lossless":
            return encode_near_lossless(image, setting.quality, effort)
        lossless = setting.mode == "lossless"
        return encode(image, output, quality=setting.quality, effort=effort, lossless=lossless)

    def score(body: bytes) -> float:
        return reference.score(pyvips.Image.new_from_buffer(body, "").copy_memory())

    pixels = image.width * image.height
    found = search(cast(SearchFormat, output), target, encode_setting, score, pixels=pixels)
    chosen = found.chosen
    if max_bytes is None or len(chosen.body) <= max_bytes:
        return Found(
            chosen.body, chosen.setting.quality, chosen.score, chosen.setting.label(),
            found.met, encodes=found.encodes,
        )  # fmt: skip
    # Over the budget: the highest lossy quality below the chosen one that fits.
    below = min(chosen.setting.quality, 100) - (1 if chosen.setting.mode == "lossy" else 0)
    fitted = fit_quality(lambda q: encode_setting(Setting(q)), max(1, below), max_bytes)
    fitted_score = score(fitted.body)
    return Found(
        fitted.body, fitted.quality, fitted_score, str(fitted.quality), fitted_score >= target,
        budget_met=fitted.met, encodes=found.encodes + fitted.encodes,
    )  # fmt: skip


def _as_encoded(image: pyvips.Image, output: OutputFormat) -> pyvips.Image:
    """The pixels the encoder really codes (``imaging.encode`` flattens alpha for JPEG)."""
    if saver_of(output).flattens_alpha and image.hasalpha():
        return image.flatten(background=_WHITE[: image.bands - 1]).copy_memory()
    return image
