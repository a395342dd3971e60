"""What the pre-decode checks of hostile input cost a normal image, as a share of its decode.

    .venv/bin/python bench/decode_checks.py              # about 1 minute on 2 cores
    .venv/bin/python bench/decode_checks.py --rounds 3   # smoke run

Before libjpeg, libnsgif or Pillow read a file, ``imaging.load.probe`` walks its markers:
``jpeg_header.read_scans`` (the scan count, a progressive file cut between scans) and
``gif_header.canvas_size`` (the screen grown to every frame's extent). Per photo-like input,
in one run and interleaved round by round, on one thread:

    walk     the marker walk alone, from the file (memory-mapped, as the optimizer reads a large
             file)
    probe    the whole header probe (the walk, libvips' header read)
    decode   the strict full decode the render does (``open_image`` + ``write_to_memory``), the
             reference

Each figure is the median over the rounds; the ratio walk / decode is what a render pays for the
checks. Target: under 2 % for every input (a baseline JPEG stops at its first scan).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyvips

from assetgate.imaging import gif_header, jpeg_header
from assetgate.imaging.formats import InputFormat
from assetgate.imaging.limits import DecodeLimits
from assetgate.imaging.load import open_image, probe

LIMITS = DecodeLimits(max_pixels=50_000_000, max_frames=1000)


def photo(width: int, height: int) -> pyvips.Image:
    """Gradients, blurred structure and grain: the entropy of a camera file, not of flat colour."""
    xyz = pyvips.Image.xyz(width, height)
    base = (xyz[0] * 200 / width).bandjoin([xyz[1] * 200 / height, (xyz[0] + xyz[1]) % 200])
    structure = pyvips.Image.gaussnoise(width, height, sigma=40, mean=0).gaussblur(3)
    grain = pyvips.Image.gaussnoise(width, height, sigma=12, mean=0)
    return (base + structure + grain).cast("uchar").copy(interpretation="srgb")


def make_inputs(directory: Path) -> dict[str, tuple[Path, InputFormat]]:
    image = photo(4000, 3000)
    image.jpegsave(str(directory / "baseline.jpg"), Q=85)
    image.jpegsave(str(directory / "progressive.jpg"), Q=85, interlace=True)
    photo(6000, 4000).jpegsave(str(directory / "progressive24.jpg"), Q=85, interlace=True)
    small = photo(480, 360)
    frames = pyvips.Image.arrayjoin(
        [small.flip("horizontal") if i % 2 else small for i in range(12)], across=1
    )
    frames = frames.copy()
    frames.set_type(pyvips.GValue.gint_type, "page-height", 360)
    frames.gifsave(str(directory / "animation.gif"), effort=1)
    return {
        "JPEG 12 MP baseline": (directory / "baseline.jpg", "jpeg"),
        "JPEG 12 MP progressive": (directory / "progressive.jpg", "jpeg"),
        "JPEG 24 MP progressive": (directory / "progressive24.jpg", "jpeg"),
        "GIF 12 frames 480x360": (directory / "animation.gif", "gif"),
    }


def walk(path: Path, fmt: InputFormat) -> None:
    if fmt == "jpeg":
        jpeg_header.read_file_scans(path, stop_after=100)
    else:
        gif_header.file_canvas_size(path)


def decode(path: Path, fmt: InputFormat) -> None:
    image = open_image(path, fmt, LIMITS, animated=fmt == "gif")
    image.write_to_memory()


def timed(work: Callable[[Path, InputFormat], object], path: Path, fmt: InputFormat) -> float:
    started = time.perf_counter()
    work(path, fmt)
    return time.perf_counter() - started


def header(path: Path, fmt: InputFormat) -> None:
    probe(path, fmt, LIMITS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    pyvips.cache_set_max(0)
    with tempfile.TemporaryDirectory(prefix="assetgate-bench-") as temporary:
        inputs = make_inputs(Path(temporary))
        print(f"{'input':<24} {'MB':>6} {'walk ms':>9} {'probe ms':>9} {'decode ms':>10}", end="")
        print(f" {'walk/decode':>12}")
        worst = 0.0
        for name, (path, fmt) in inputs.items():
            walks, probes, decodes = [], [], []
            for _ in range(args.rounds):
                walks.append(timed(walk, path, fmt))
                probes.append(timed(header, path, fmt))
                decodes.append(timed(decode, path, fmt))
            w, p, d = (statistics.median(x) * 1000 for x in (walks, probes, decodes))
            worst = max(worst, w / d)
            size = path.stat().st_size / 1e6
            print(f"{name:<24} {size:>6.1f} {w:>9.2f} {p:>9.2f} {d:>10.1f} {w / d:>11.2%}")
        print(f"worst walk/decode: {worst:.2%} (target < 2 %)")
        return 0 if worst < 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
