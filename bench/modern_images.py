"""Costs of the issue-25 extensions, each as a ratio against a reference measured in the same run.

    .venv/bin/python bench/modern_images.py            # about 2 minutes on 2 cores
    .venv/bin/python bench/modern_images.py --rounds 3 # quicker, noisier

In process, one thread, no HTTP and no result cache: the optimizer's own render path
(``optimizer.render.process``) on the 12 MP photo of ``bench/optimizer.py`` (``make_inputs``).

* AVIF against WebP: ``width=800`` answered as WebP (effort 2, the default) and as AVIF at
  efforts 0..4 - time per render, time of the encode alone (on the 800 px image decoded once),
  bytes; the ratio AVIF/WebP for each. This is how ``ASSETGATE_AVIF_EFFORT``'s default is chosen.
* ``max_bytes``: ``width=800&format=webp`` with a budget of half its default-quality size, as a
  multiple of the same render without a budget (and the number of encodes the search took).
* ``info=1`` against a cold render of the same file (``width=800``, WebP): the target is <= 0.2x.

Each figure is the median of ``--rounds`` runs after one warm-up, in CPU time of the process
(all its threads): the machine is shared, and wall time there measures the neighbours.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyvips

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from assetgate.imaging import vips
from assetgate.imaging.encode import encode
from assetgate.imaging.limits import DecodeLimits
from assetgate.imaging.load import open_image, probe
from assetgate.optimizer.bytebudget import fit_quality
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.render import Job, Outcome, process
from assetgate.optimizer.spec import parse_spec
from assetgate.settings import Settings
from optimizer import make_inputs


def median_s(fn: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    result = fn()  # warm-up
    times = []
    for _ in range(rounds):
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
    return statistics.median(times), result


def paired(
    first: Callable[[], Any], second: Callable[[], Any], rounds: int
) -> tuple[float, float, Any]:
    """Medians of two measurements taken alternately, so a busy machine weighs on both alike."""
    result = first()
    second()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for index, fn in enumerate((first, second)):
            start = time.process_time()
            value = fn()
            times[index].append(time.process_time() - start)
            if index == 0:
                result = value
    return statistics.median(times[0]), statistics.median(times[1]), result


def psnr(reference: Any, data: bytes) -> float:
    decoded = pyvips.Image.new_from_buffer(data, "").extract_band(0, n=3).cast("float")
    mse = ((decoded - reference.cast("float")) ** 2).avg()
    return 10 * math.log10(255 * 255 / mse)


def render(settings: Settings, path: Path, query: dict[str, str], **knobs: Any) -> Outcome:
    job = Job.from_settings(
        settings,
        path=path,
        size=path.stat().st_size,
        spec=parse_spec(query),
        negotiation=Negotiation(webp=False),
        limits=Limits.from_settings(settings),
    )
    if knobs:
        job = Job(**{**{f: getattr(job, f) for f in job.__dataclass_fields__}, **knobs})
    return process(job)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    settings = Settings()
    vips.configure(settings)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_inputs(root)
        photo = root / "photo.jpg"
        rounds = args.rounds
        print(f"photo.jpg: {photo.stat().st_size} bytes, 4000x3000; median of {rounds} runs\n")

        print("AVIF against WebP, width=800 (render = decode + resize + encode)")
        webp_s, webp = median_s(lambda: render(settings, photo, {"w": "800", "f": "webp"}), rounds)
        limits = DecodeLimits.from_settings(settings)
        info = probe(photo, "jpeg", limits)
        small = open_image(
            photo, "jpeg", limits, size=(800, 600), info=info, fast_shrink=True
        ).copy_memory()
        webp_enc_s, _ = median_s(lambda: encode(small, "webp", effort=2), rounds)
        print(f"  webp q85 effort 2: render {webp_s * 1000:7.1f} ms, encode "
              f"{webp_enc_s * 1000:6.1f} ms, {len(webp.body)} bytes, "
              f"PSNR {psnr(small, webp.body):.2f} dB")  # fmt: skip
        for quality, efforts in ((85, range(5)), (65, (0, 2))):
            for effort in efforts:
                avif_s, avif = median_s(
                    lambda e=effort, q=quality: render(  # type: ignore[misc]
                        settings, photo, {"w": "800", "f": "avif", "q": str(q)}, avif_effort=e
                    ),
                    rounds,
                )
                enc_s, _ = median_s(
                    lambda e=effort, q=quality: encode(small, "avif", quality=q, effort=e),  # type: ignore[misc]
                    rounds,
                )
                print(
                    f"  avif q{quality} effort {effort}: render {avif_s * 1000:7.1f} ms "
                    f"({avif_s / webp_s:5.2f}x WebP), encode {enc_s * 1000:6.1f} ms "
                    f"({enc_s / webp_enc_s:5.2f}x), {len(avif.body)} bytes "
                    f"({len(avif.body) / len(webp.body):4.2f}x), "
                    f"PSNR {psnr(small, avif.body):.2f} dB"
                )

        print("\nmax_bytes, width=800&format=webp, budget = half the q85 size")
        budget = len(webp.body) // 2
        budget_s, fitted = median_s(
            lambda: render(settings, photo, {"w": "800", "f": "webp", "max_bytes": str(budget)}),
            rounds,
        )
        search_s, search = median_s(
            lambda: fit_quality(lambda q: encode(small, "webp", quality=q, effort=2), 85, budget),
            rounds,
        )
        print(
            f"  render {budget_s * 1000:.1f} ms = {budget_s / webp_s:.2f}x one render; the search "
            f"alone {search_s * 1000:.1f} ms = {search_s / webp_enc_s:.2f}x one q85 encode "
            f"({search.encodes} encodes, quality {fitted.quality}, {len(fitted.body)} bytes "
            f"<= {budget})"
        )

        print("\ninfo=1 against a cold render (width=800, WebP), measured alternately")
        info_s, render_s, facts = paired(
            lambda: render(settings, photo, {"info": "1"}),
            lambda: render(settings, photo, {"w": "800", "f": "webp"}),
            rounds * 3,
        )
        ratio = info_s / render_s
        print(f"  info=1 {info_s * 1000:.1f} ms, render {render_s * 1000:.1f} ms: {ratio:.3f}x "
              "(target <= 0.2x)")  # fmt: skip
        floor_s, _, _ = paired(
            lambda: pyvips.Image.jpegload(str(photo), shrink=8, access="sequential").avg(),
            lambda: None,
            rounds * 3,
        )
        print(f"  libjpeg's 1/8-scale decode alone (the floor): {floor_s * 1000:.1f} ms = "
              f"{floor_s / render_s:.3f}x the render")  # fmt: skip
        full_s, _ = median_s(lambda: render(settings, photo, {"f": "webp"}), max(3, rounds // 2))
        print(f"  against the full-size WebP re-encode ({full_s * 1000:.0f} ms): "
              f"{info_s / full_s:.3f}x")  # fmt: skip
        print(f"  {facts.body.decode()[:160]}...")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
