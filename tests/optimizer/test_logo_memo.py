"""Fitted watermarks are remembered within a byte budget, not a count of entries."""

from __future__ import annotations

from assetgate.optimizer.pipeline import LOGO_CACHE_BYTES, LOGOS, _logo
from tests.imaging import factory as make


def test_fitted_watermarks_are_kept_within_a_byte_budget() -> None:
    data = make.png(20, 10, alpha=True)
    _logo.cache_clear()
    held = 0
    for width in range(3000, 4000, 100):  # each fitted logo is 18-30 MB of pixels
        logo = _logo(data, (width, width), 1.0)
        assert (logo.width, logo.height, logo.bands) == (width, width // 2, 4)
        held += logo.width * logo.height * logo.bands
    assert held > 3 * LOGO_CACHE_BYTES  # what the count-bounded memo (32 entries) kept alive
    assert 0 < LOGOS.currsize <= LOGO_CACHE_BYTES
    assert _logo(data, (3900, 3900), 1.0) is logo  # the latest is still a hit
    assert _logo(data, (10_000, 5_000), 1.0).width == 10_000  # over the whole budget: made ...
    assert LOGOS.currsize <= LOGO_CACHE_BYTES  # ... and answered, never kept
    _logo.cache_clear()
