"""The ThumbHash of ``info=1``, encoded with numpy, against the Rust crate's bindings.

    .venv/bin/python bench/placeholders.py     # a few seconds; the reference needs fast-thumbhash

``imaging/thumbhash.py`` replaced ``fast-thumbhash`` (no arm64 or musl wheels). Both encode the
same 32x24 RGBA image ``info=1`` hashes (opaque, then with alpha), timed in process (CPU time,
best of the rounds); the ratio is numpy's time over the crate's. Then the whole placeholder step
of ``info=1`` (dominant colour, BlurHash, ThumbHash, the tiny WebP) with the numpy encoder, which
is what a request pays.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pyvips

from assetgate.imaging.thumbhash import rgba_to_thumb_hash
from assetgate.optimizer.info import placeholders

CALLS = 2000
ROUNDS = 5


def best_ms(call: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        for _ in range(CALLS):
            call()
        best = min(best, (time.process_time() - start) / CALLS)
    return best * 1000


def main() -> None:
    yy, xx = np.mgrid[0:24, 0:32]
    opaque = np.stack([xx * 8, yy * 10, (xx + yy) * 4, np.full_like(xx, 255)], -1)
    alpha = opaque.copy()
    alpha[..., 3] = (xx * 7 + yy) % 256
    try:
        import fast_thumbhash
    except ImportError:
        fast_thumbhash = None
    for name, image in (("opaque", opaque), ("alpha", alpha)):
        data = image.astype(np.uint8).tobytes()
        ours = best_ms(lambda data=data: rgba_to_thumb_hash(32, 24, data))
        line = f"{name:7} numpy {ours:.3f} ms"
        if fast_thumbhash is not None:
            theirs = best_ms(lambda data=data: fast_thumbhash.rgba_to_thumb_hash(32, 24, data))
            line += f", fast-thumbhash {theirs:.3f} ms: {ours / theirs:.2f}x"
        print(line)
    small = pyvips.Image.new_from_memory(alpha.astype(np.uint8).tobytes(), 32, 24, 4, "uchar")
    whole = best_ms(lambda: placeholders(small.copy(interpretation="srgb")))
    print(f"info=1 placeholders (32x24 RGBA, all four): {whole:.3f} ms")


if __name__ == "__main__":
    main()
