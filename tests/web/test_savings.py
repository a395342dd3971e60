from __future__ import annotations

import pytest

from assetgate.web.savings import compression_ratio, savings_headers


@pytest.mark.parametrize(
    ("original", "compressed", "ratio"),
    [(1000, 250, "75.0%"), (3, 2, "33.3%"), (0, 0, "0.0%"), (10, 10, "0.0%"), (100, 150, "-50.0%")],
)
def test_compression_ratio(original: int, compressed: int, ratio: str) -> None:
    assert compression_ratio(original, compressed) == ratio


def test_savings_headers_name_both_sizes_and_the_ratio() -> None:
    assert savings_headers(1000, 250) == {
        "X-Original-Size": "1000",
        "X-Compressed-Size": "250",
        "X-Compression-Ratio": "75.0%",
    }
