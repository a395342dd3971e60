"""SSIMULACRA 2.1 against the scores libjxl's own tool gives (tests/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pyvips

from assetgate.imaging.gaussian import blur_kernel
from assetgate.imaging.ssimulacra2 import Reference, ssimulacra2

DATA = Path(__file__).parent.parent / "data" / "ssimulacra2"
#: libjxl's ``ssimulacra2`` on the tank crop and its JPEG encodings.
LIBJXL = {"q20.jpg": 57.14559032, "q45.jpg": 68.62747595, "q70.jpg": 79.38805044,
          "q90.jpg": 90.85152474}  # fmt: skip


def _load(name: str) -> pyvips.Image:
    return pyvips.Image.new_from_file(str(DATA / name), access="sequential").copy_memory()


@pytest.mark.parametrize("name", sorted(LIBJXL))
def test_matches_libjxl_within_half_a_point(name: str) -> None:
    score = ssimulacra2(_load("source.png"), _load(name))
    assert abs(score - LIBJXL[name]) < 0.5, (name, score)


def test_one_reference_scores_many() -> None:
    reference = Reference(_load("source.png"))
    scores = [reference.score(_load(name)) for name in sorted(LIBJXL)]
    assert scores == sorted(scores)  # q20 < q45 < q70 < q90
    assert [round(s, 6) for s in scores] == [
        round(ssimulacra2(_load("source.png"), _load(name)), 6) for name in sorted(LIBJXL)
    ]


def test_identical_images_score_100() -> None:
    source = _load("source.png")
    assert ssimulacra2(source, source) == pytest.approx(100.0)


def test_blur_is_libjxls_recursive_gaussian_not_a_true_one() -> None:
    """The FIR form of libjxl's IIR (sigma 1.5, N = 5): 9 taps summing to 1, not a Gaussian's."""
    kernel = blur_kernel()
    assert len(kernel) == 9
    assert sum(kernel) == pytest.approx(1.0, abs=1e-12)
    assert kernel[4] == pytest.approx(0.264621, abs=1e-6)  # a true Gaussian's centre: 0.2659
    assert kernel == pytest.approx(tuple(reversed(kernel)), abs=1e-15)


def test_alpha_takes_the_worse_background() -> None:
    """An image with alpha is scored over dark and light grey; the worse one counts."""
    source = _load("source.png")
    opaque = source.bandjoin_const([255])
    half = source.bandjoin_const([128])
    # Same colours, different alpha: the two backgrounds differ, so the score drops below 100.
    assert ssimulacra2(opaque, half) < 60


def test_grey_and_odd_sizes() -> None:
    source = _load("source.png").crop(0, 0, 251, 97)
    grey = source.colourspace("b-w")
    assert ssimulacra2(grey, grey) == pytest.approx(100.0)
    damaged = pyvips.Image.new_from_buffer(source.jpegsave_buffer(Q=30), "")
    assert 0 < ssimulacra2(source, damaged) < 80


def test_refuses_mismatched_sizes() -> None:
    source = _load("source.png")
    with pytest.raises(ValueError, match="size"):
        Reference(source).score(source.crop(0, 0, 100, 100))
