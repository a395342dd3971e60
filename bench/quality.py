"""Bytes for the same look: SSIMULACRA2 2.1 over a corpus of real images (issue 41).

    .venv/bin/python bench/quality.py                       # tests/data/corpus, no sharp
    .venv/bin/python bench/quality.py --corpus DIR --sharp  # a folder of images, and sharp
    .venv/bin/python bench/quality.py --metric --tank DIR   # the metric: speed, libjxl's pair

Every image is first rendered losslessly at ``--width`` (800) as the optimizer would
(``width=800``, PNG); every encoder then codes those same pixels, so the figures compare
encoders, not resizers. Scores are SSIMULACRA2 (``imaging.ssimulacra2``) against that PNG.

Printed, per format (JPEG, WebP, AVIF):

* bytes at equal SSIMULACRA2 (70, 75, 80, 85): each encoder's total at each score, as a ratio
  of today's encoder (before issue 41: JPEG with libjpeg's Annex K table, WebP
  effort 2, AVIF quality x 65/85), for assetgate now and for sharp (``mozjpeg: true``, WebP
  effort 4, AVIF at assetgate's effort). A ladder of qualities per encoder; bytes between two
  rungs are interpolated (log bytes linear in the score);
* ``quality=auto`` (target 75): total bytes against fixed q85 today and now, on the photos and on
  the whole set; the worst score; the single fixed quality that gives every image that worst
  score, and its total bytes (assetgate's and sharp's, interpolated on the ladder);
* the search's CPU as a multiple of one render's (process CPU time of ``process()`` for
  ``quality=auto`` against ``quality=85``, both from the source file at ``--width``).

CPU is process time (``time.process_time``), not wall time: the machine is shared.
``--metric`` times one 800x533 comparison with the reference side computed once (libvips and
numpy on one thread) and, with ``--tank DIR`` (``tank_source.png`` and ``tank_distorted.png``
of libjxl), prints the score libjxl publishes as 17.3985.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyvips

from assetgate.imaging.encode import encode
from assetgate.imaging.ssimulacra2 import Reference
from assetgate.optimizer.autoencode import auto_quality
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.render import Job, process
from assetgate.optimizer.spec import parse_spec
from assetgate.settings import Settings

BENCH = Path(__file__).resolve().parent
CORPUS = BENCH.parent / "tests" / "data" / "corpus"
SCORES = (70, 75, 80, 85)
LADDER = {
    "jpeg": (30, 40, 50, 60, 65, 70, 75, 80, 85, 90, 95),
    "webp": (30, 40, 50, 60, 65, 70, 75, 80, 85, 90, 95),
    "avif": (20, 30, 40, 45, 50, 55, 60, 65, 70, 80, 90),
}
#: Before issue 41.
OLD_JPEG = {"optimize_coding": True}
OLD_WEBP_EFFORT = 2
OLD_AVIF_FACTOR = 65 / 85
TARGET = 75

Point = tuple[int, int, float]  # quality, bytes, score


@dataclass
class Image:
    """One corpus image rendered losslessly; pixels and metric reference loaded when scored."""

    name: str
    source: Path
    png: Path
    alpha: bool

    @property
    def photo(self) -> bool:
        return not self.name.startswith(("graphic", "alpha")) and not self.alpha


@dataclass
class Loaded:
    """An image's pixels and its metric reference for one format (JPEG: alpha flattened)."""

    pixels: pyvips.Image
    reference: Reference


def load(image: Image, fmt: str) -> Loaded:
    pixels = pyvips.Image.new_from_file(str(image.png)).copy_memory()
    target = pixels
    if fmt == "jpeg" and pixels.hasalpha():
        target = pixels.flatten(background=[255] * (pixels.bands - 1)).copy_memory()
    return Loaded(pixels, Reference(target))


def say(text: str) -> None:
    print(text, flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--width", type=int, default=800)
    parser.add_argument("--formats", default="jpeg,webp,avif")
    parser.add_argument("--sharp", action="store_true", help="also sharp (npm install once)")
    parser.add_argument("--metric", action="store_true", help="only the metric's speed")
    parser.add_argument("--tank", type=Path, help="folder with libjxl's tank pair")
    parser.add_argument(
        "--search-only", action="store_true", help="only the search's CPU (and a 12 MP source's)"
    )
    args = parser.parse_args(argv)
    pyvips.cache_set_max(0)
    pyvips.concurrency_set(1)
    if args.metric or args.tank:
        metric(args.tank)
        return
    settings = Settings()
    with tempfile.TemporaryDirectory(prefix="quality-bench-") as scratch:
        images = prepare(args.corpus, args.width, Path(scratch), settings)
        if args.search_only:
            search_cpu(images, settings, args.width)
            large(Path(scratch), settings, args.width)
            return
        say(f"{len(images)} images ({sum(i.photo for i in images)} photos), width {args.width}")
        for fmt in args.formats.split(","):
            compare(fmt, images, settings, Path(scratch), sharp=args.sharp)
        search_cpu(images, settings, args.width)


def metric(tank: Path | None) -> None:
    source = CORPUS / "photo-coffee.jpg"
    image = pyvips.Image.new_from_file(str(source)).resize(800 / 320).crop(0, 0, 800, 533)
    image = image.copy_memory()
    distorted = pyvips.Image.new_from_buffer(image.jpegsave_buffer(Q=70), "").copy_memory()
    runs = []
    for _ in range(15):
        start = time.process_time()
        reference = Reference(image)
        built = time.process_time()
        reference.score(distorted)
        runs.append((built - start, time.process_time() - built))
    say(f"metric 800x533: reference {min(r[0] for r in runs) * 1000:.0f} ms CPU, one comparison "
        f"{min(r[1] for r in runs) * 1000:.0f} ms CPU (best of 15), "
        f"median {statistics.median(r[1] for r in runs) * 1000:.0f} ms")  # fmt: skip
    if tank is not None:
        a = pyvips.Image.new_from_file(str(tank / "tank_source.png"))
        b = pyvips.Image.new_from_file(str(tank / "tank_distorted.png"))
        score = Reference(a).score(b)
        say(f"tank pair ({b.format}): {score:.4f} (libjxl: 17.3985, difference "
            f"{score - 17.3985:+.4f})")  # fmt: skip


def prepare(corpus: Path, width: int, scratch: Path, settings: Settings) -> list[Image]:
    """Every image rendered losslessly at ``width`` by the optimizer (PNG)."""
    images = []
    for source in sorted(corpus.iterdir()):
        if source.suffix.lower() not in (".jpg", ".jpeg", ".png", ".webp"):
            continue
        query = {"width": str(width), "format": "png"}
        outcome = process(_job(settings, source, query), reencode=True)
        data = outcome.body if outcome.body is not None else source.read_bytes()
        png = scratch / f"{source.stem}.png"
        png.write_bytes(data)
        head = pyvips.Image.new_from_file(str(png))
        if head.width >= 8 and head.height >= 8:
            images.append(Image(source.stem, source, png, head.hasalpha()))
    return images


def _job(settings: Settings, source: Path, query: dict[str, str]) -> Job:
    return Job.from_settings(
        settings, path=source, size=source.stat().st_size, spec=parse_spec(query),
        negotiation=Negotiation(webp=False), limits=Limits.from_settings(settings),
    )  # fmt: skip


def _score(loaded: Loaded, body: bytes) -> float:
    return loaded.reference.score(pyvips.Image.new_from_buffer(body, "").copy_memory())


def ladder(loaded: Loaded, fmt: str, coder: Callable[[pyvips.Image, int], bytes]) -> list[Point]:
    return [
        (q, len(body), _score(loaded, body))
        for q in LADDER[fmt]
        for body in (coder(loaded.pixels, q),)
    ]


def old_coder(fmt: str, settings: Settings) -> Callable[[pyvips.Image, int], bytes]:
    if fmt == "jpeg":

        def jpeg(px: pyvips.Image, q: int) -> bytes:
            flat = px.flatten(background=[255] * (px.bands - 1)) if px.hasalpha() else px
            return bytes(flat.jpegsave_buffer(Q=q, keep="none", **OLD_JPEG))

        return jpeg
    effort = OLD_WEBP_EFFORT if fmt == "webp" else settings.avif_effort
    return lambda px, q: encode(px, fmt, quality=q, effort=effort)  # type: ignore[arg-type]


def new_coder(fmt: str, settings: Settings) -> Callable[[pyvips.Image, int], bytes]:
    effort = {"webp": settings.webp_effort, "avif": settings.avif_effort}.get(fmt)
    return lambda px, q: encode(px, fmt, quality=q, effort=effort)  # type: ignore[arg-type]


def sharp_encode(fmt: str, images: list[Image], scratch: Path, settings: Settings) -> None:
    """sharp encodes every image's PNG at every rung of the ladder, into ``scratch``."""
    sys.path.insert(0, str(BENCH))
    from peer_sharp import SHARP_DIR, ensure_sharp

    ensure_sharp()
    script = SHARP_DIR / "quality_sharp.mjs"
    script.write_bytes((BENCH / "quality_sharp.mjs").read_bytes())
    jobs = [
        {"src": str(image.png), "format": fmt, "quality": q,
         "out": str(_sharp_out(scratch, image, fmt, q))}
        for image in images
        for q in LADDER[fmt]
    ]  # fmt: skip
    listing = scratch / f"sharp-{fmt}.json"
    listing.write_text(json.dumps(jobs))
    subprocess.run(["node", str(script), str(listing), str(settings.avif_effort)], cwd=SHARP_DIR,
                   check=True, capture_output=True)  # fmt: skip


def _sharp_out(scratch: Path, image: Image, fmt: str, quality: int) -> Path:
    return scratch / f"sharp-{image.name}-{quality}.{fmt}"


def sharp_ladder(loaded: Loaded, image: Image, fmt: str, scratch: Path) -> list[Point]:
    points = []
    for q in LADDER[fmt]:
        body = _sharp_out(scratch, image, fmt, q).read_bytes()
        points.append((q, len(body), _score(loaded, body)))
    return points


def bytes_at(points: list[Point], score: float) -> float | None:
    ranked = sorted(points, key=lambda p: p[2])
    for (_, b0, s0), (_, b1, s1) in itertools.pairwise(ranked):
        if s0 <= score <= s1 and s1 > s0:
            w = (score - s0) / (s1 - s0)
            return math.exp(math.log(b0) * (1 - w) + math.log(b1) * w)
    return None


def quality_for(points: list[Point], score: float) -> float:
    """The (interpolated) lowest quality of the ladder reaching ``score``; 101 when none does."""
    ranked = sorted(points)
    if ranked[0][2] >= score:
        return ranked[0][0]
    for (q0, _, s0), (q1, _, s1) in itertools.pairwise(ranked):
        if s0 < score <= s1:
            return q0 + (q1 - q0) * (score - s0) / (s1 - s0)
    return 101.0


def bytes_at_quality(points: list[Point], quality: float) -> float:
    ranked = sorted(points)
    if quality <= ranked[0][0]:
        return ranked[0][1]
    for (q0, b0, _), (q1, b1, _) in itertools.pairwise(ranked):
        if q0 <= quality <= q1:
            w = (quality - q0) / (q1 - q0)
            return math.exp(math.log(b0) * (1 - w) + math.log(b1) * w)
    return ranked[-1][1] * (1 + (quality - ranked[-1][0]) / 20)  # past the ladder: a guess, flagged


def compare(
    fmt: str, images: list[Image], settings: Settings, scratch: Path, *, sharp: bool
) -> None:
    say(f"\n== {fmt} ==")
    if sharp:
        sharp_encode(fmt, images, scratch, settings)
    ladders: dict[str, dict[str, list[Point]]] = {"today": {}, "now": {}}
    if sharp:
        ladders["sharp"] = {}
    effort = {"webp": settings.webp_effort, "avif": settings.avif_effort}.get(fmt)
    rows = []
    for image in images:  # one image's pixels and reference in memory at a time
        loaded = load(image, fmt)
        ladders["today"][image.name] = ladder(loaded, fmt, old_coder(fmt, settings))
        ladders["now"][image.name] = ladder(loaded, fmt, new_coder(fmt, settings))
        if sharp:
            ladders["sharp"][image.name] = sharp_ladder(loaded, image, fmt, scratch)
        found = auto_quality(loaded.pixels, fmt, TARGET, effort)  # type: ignore[arg-type]
        q85_now = len(new_coder(fmt, settings)(loaded.pixels, _fixed(fmt, 85)))
        q85_old = len(old_coder(fmt, settings)(loaded.pixels, _old_fixed(fmt, 85)))
        rows.append((image, found, q85_now, q85_old))
        say(f"  auto {image.name:<32} q {found.label:>16} score {found.score:6.2f} "
            f"{len(found.body):>8} B  (q85 now {q85_now}, today {q85_old})")  # fmt: skip
    for score in SCORES:
        cells = []
        for coder in ladders:
            today, other = ladders["today"], ladders[coder]
            found_at = [
                (bytes_at(today[i.name], score), bytes_at(other[i.name], score)) for i in images
            ]
            pairs = [(a, b) for a, b in found_at if a and b]
            ratio = sum(b for _, b in pairs) / sum(a for a, _ in pairs) if pairs else float("nan")
            cells.append(f"{coder} {ratio:.3f}")
        say(f"  bytes at SSIMULACRA2 {score} (x today's): " + ", ".join(cells)
            + f" (n={len(pairs)})")  # fmt: skip
    summarise(fmt, rows, ladders)


def summarise(fmt: str, rows: list[Any], ladders: dict[str, dict[str, list[Point]]]) -> None:
    for label, subset in (("photos", [r for r in rows if r[0].photo]), ("all", rows)):
        if not subset:
            continue
        auto_bytes = sum(len(r[1].body) for r in subset)
        worst = min(r[1].score for r in subset)
        under = sum(r[1].score < TARGET - 1 for r in subset)
        say(f"  auto {label}: {auto_bytes} B = {auto_bytes / sum(r[3] for r in subset):.3f}x "
            f"today's q85, {auto_bytes / sum(r[2] for r in subset):.3f}x q85 now; worst score "
            f"{worst:.2f}, under {TARGET - 1}: {under}")  # fmt: skip
        for coder, table in ladders.items():
            if coder == "today":
                continue
            needed = max(quality_for(table[r[0].name], worst) for r in subset)
            total = sum(bytes_at_quality(table[r[0].name], needed) for r in subset)
            flag = " (past the ladder)" if needed > LADDER[fmt][-1] else ""
            ratio = auto_bytes / total
            say(f"    one fixed quality giving every image {worst:.2f} with {coder}: "
                f"q{needed:.0f}{flag}, {total:.0f} B; auto is {ratio:.3f}x")  # fmt: skip


def _fixed(fmt: str, quality: int) -> int:
    """What a request's quality becomes for this format now (the negotiated AVIF's mapping)."""
    if fmt != "avif":
        return quality
    from assetgate.optimizer.plan import avif_quality

    return avif_quality(quality)


def _old_fixed(fmt: str, quality: int) -> int:
    return round(quality * OLD_AVIF_FACTOR) if fmt == "avif" else quality


def search_cpu(images: list[Image], settings: Settings, width: int) -> None:
    say("\n== search CPU (process time, from the source file) ==")
    for fmt in ("jpeg", "webp"):
        ratios = []
        for image in images:
            query = {"width": str(width), "format": fmt}
            times = []
            for quality in ("85", "auto"):
                job = _job(settings, image.source, {**query, "quality": quality})
                best = math.inf
                for _ in range(3):
                    start = time.process_time()
                    process(job, reencode=True)
                    best = min(best, time.process_time() - start)
                times.append(best)
            ratios.append(times[1] / times[0])
        say(f"  {fmt}: search / one render: median {statistics.median(ratios):.1f}x, "
            f"max {max(ratios):.1f}x")  # fmt: skip


def large(scratch: Path, settings: Settings, width: int) -> None:
    """The search against a production-sized render: the 12 MP photo-like JPEG of
    ``bench/optimizer.py`` (generated; the one ``bench/peer_sharp.py`` renders) at ``width``."""
    sys.path.insert(0, str(BENCH))
    from optimizer import make_inputs

    make_inputs(scratch)
    source = scratch / "photo.jpg"
    for fmt in ("jpeg", "webp"):
        times = []
        for quality in ("85", "auto"):
            job = _job(settings, source, {"width": str(width), "format": fmt, "quality": quality})
            best = math.inf
            for _ in range(3):
                start = time.process_time()
                process(job)
                best = min(best, time.process_time() - start)
            times.append(best)
        say(f"  12 MP JPEG -> {width} {fmt}: one render {times[0] * 1000:.0f} ms, search "
            f"{times[1] * 1000:.0f} ms CPU = {times[1] / times[0]:.1f}x")  # fmt: skip


if __name__ == "__main__":
    os.environ.setdefault("ASSETGATE_LOG_LEVEL", "warning")
    main()
