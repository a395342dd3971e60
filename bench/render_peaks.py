"""The real memory peak of one image job, per kind of job, against what the memory door counts.

    .venv/bin/python bench/render_peaks.py               # about 2 minutes on 2 cores
    .venv/bin/python bench/render_peaks.py --side 2000   # smoke run (4 MP inputs)

Each job runs alone in a fresh Python process (so no allocator reuse from an earlier job hides a
peak): the input is written, the header probed, the process' peak RSS reset
(``/proc/self/clear_refs`` 5) and the job run as the server runs it (the optimizer's ``render``,
the conversion's ``to_webp``); the figure is the rise of VmHWM over VmRSS before the job, divided
by the source's pixels, next to the cost the door admits the job by
(``imaging.cost.peak_bytes``, as the route and the conversion scheduler compute it) per pixel.
``counted / peak`` must stay >= 1: the door's budget then bounds the real peaks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

JOBS = [
    # name, input kind, what runs
    ("JPEG baseline -> WebP", "jpeg", "webp"),
    ("JPEG progressive -> WebP", "jpeg-progressive", "webp"),
    ("JPEG baseline -> WebP w=800", "jpeg", "webp-800"),
    ("JPEG progressive -> WebP w=800", "jpeg-progressive", "webp-800"),
    ("PNG RGB -> WebP", "png", "webp"),
    ("PNG RGBA -> WebP", "png-alpha", "webp"),
    ("PNG RGBA -> WebP w=800", "png-alpha", "webp-800"),
    ("PNG RGBA -> WebP rotate=90", "png-alpha", "webp-r90"),
    ("PNG RGBA -> PNG w=1600", "png-alpha", "png-1600"),
    ("PNG RGBA -> AVIF w=1600", "png-alpha", "avif-1600"),
    ("JPEG baseline -> JPEG q=80", "jpeg", "jpeg"),
    ("GIF 8 frames -> WebP animated", "gif", "webp"),
    ("convert: JPEG baseline", "jpeg", "convert"),
    ("convert: JPEG progressive", "jpeg-progressive", "convert"),
    ("convert: PNG RGB", "png", "convert"),
    ("convert: PNG RGBA", "png-alpha", "convert"),
    ("convert: PNG RGBA lossless", "png-alpha", "convert-lossless"),
    ("convert: GIF 8 frames", "gif", "convert"),
]

CHILD = r"""
import json, sys
from pathlib import Path
import pyvips

kind, task, side, directory = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
content = sys.argv[5]
pyvips.cache_set_max(0)

def photo(width, height, bands):
    xyz = pyvips.Image.xyz(width, height)
    if content == "gradient":  # bench/reliability.py's 49 MP input, smooth
        image = (xyz[0] * 255 / width).bandjoin([xyz[1] * 255 / height, (xyz[0] + xyz[1]) % 256])
    elif content == "noise":  # the encoders' worst case: every band gaussian noise
        image = noise(width, height, 3)
    else:  # a photo's entropy: gradients and grain
        base = (xyz[0] * 200 / width).bandjoin([xyz[1] * 200 / height, (xyz[0] + xyz[1]) % 200])
        image = base + pyvips.Image.gaussnoise(width, height, sigma=12, mean=0)
    image = image.cast("uchar").copy(interpretation="srgb")
    if bands == 4:
        alpha = noise(width, height, 1) if content == "noise" else xyz[0] % 256
        image = image.bandjoin(alpha.cast("uchar"))
    return image

def noise(width, height, bands):
    # A hostile alpha or colour: libwebp's lossless coder (which codes a lossy file's alpha
    # too) finds no matches and holds the most.
    planes = [pyvips.Image.gaussnoise(width, height, sigma=90, mean=128, seed=band)
              for band in range(bands)]
    return planes[0].bandjoin(planes[1:]) if bands > 1 else planes[0]

name = {"jpeg": "a.jpg", "jpeg-progressive": "a.jpg", "png": "a.png", "png-alpha": "a.png",
        "gif": "a.gif"}[kind]
path = directory / name
if kind == "jpeg":
    photo(side, side * 3 // 4, 3).jpegsave(str(path), Q=85)
elif kind == "jpeg-progressive":
    photo(side, side * 3 // 4, 3).jpegsave(str(path), Q=85, interlace=True)
elif kind == "png":
    photo(side, side * 3 // 4, 3).pngsave(str(path), compression=1)
elif kind == "png-alpha":
    photo(side, side * 3 // 4, 4).pngsave(str(path), compression=1)
else:
    width, height = side // 2, side * 3 // 8
    frames = [photo(width, height, 3).flip("horizontal" if i % 2 else "vertical")
              for i in range(8)]
    roll = pyvips.Image.arrayjoin(frames, across=1).copy()
    roll.set_type(pyvips.GValue.gint_type, "page-height", height)
    roll.gifsave(str(path), effort=1)

from assetgate.settings import Settings
from assetgate.imaging import vips

settings = Settings()
vips.configure(settings)

def rss(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(field)

if task.startswith("convert"):
    from assetgate.convert.convert import inspect, to_webp
    from assetgate.convert.options import ConvertOptions
    from assetgate.imaging.limits import DecodeLimits
    limits = DecodeLimits.from_settings(settings)
    found = inspect(path, name, limits)
    info = found.info
    options = ConvertOptions(lossless=task.endswith("lossless"), effort=settings.webp_effort)
    from assetgate.imaging.cost import peak_bytes
    counted = peak_bytes(info, output="webp", out_pixels=info.pixels, reduced=False,
                         lossless=options.lossless, one_pass=True)  # as convert.scheduler
    Path("/proc/self/clear_refs").write_text("5")
    before = rss("VmRSS")
    to_webp(path, directory / "out.webp", found, options, limits, 1 << 40)
else:
    from assetgate.optimizer.plan import Limits, Negotiation
    from assetgate.optimizer.render import Job, prepare, render
    from assetgate.optimizer.queries import read_query
    fmt, _, width = task.partition("-")
    if width.startswith("r"):  # a turn: the decoded image is held while the saver reads
        query = f"format={fmt}&rotate={width[1:]}"
    else:
        query = f"format={fmt}" + (f"&width={width}" if width else "")
    query += "&q=80" if fmt == "jpeg" else ""
    spec = read_query(query.encode(), False).image
    job = Job.from_settings(settings, path=path, size=path.stat().st_size, spec=spec,
                            negotiation=Negotiation.from_accept("image/webp,image/avif"),
                            limits=Limits.from_settings(settings))
    ready = prepare(job)
    info = ready.info
    counted = ready.cost
    Path("/proc/self/clear_refs").write_text("5")
    before = rss("VmRSS")
    outcome = render(job, ready)
    assert outcome.body is not None
peak = rss("VmHWM") - before
print(json.dumps({"pixels": info.pixels * (info.pages if kind == "gif" else 1),
                  "peak": peak, "counted": counted}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=4000, help="input width (height = 3/4)")
    parser.add_argument("--content", choices=["photo", "gradient", "noise"], default="photo")
    parser.add_argument("--only", default="", help="run the jobs whose name holds this text")
    args = parser.parse_args()
    print(f"{args.content} inputs {args.side}x{args.side * 3 // 4}; bytes per source pixel")
    print(f"{'job':<34} {'peak':>7} {'counted':>8} {'counted/peak':>13}")
    worst = float("inf")
    for name, kind, task in JOBS:
        if args.only.lower() not in name.lower():
            continue
        with tempfile.TemporaryDirectory(prefix="assetgate-peaks-") as directory:
            # Every job is measured, also those the per-job ceiling would refuse.
            env = {**os.environ, "MALLOC_ARENA_MAX": "2", "ASSETGATE_RENDER_JOB_MEMORY_BYTES": "0"}
            argv = [sys.executable, "-c", CHILD, kind, task, str(args.side), directory]
            argv.append(args.content)
            done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            print(f"{name:<34} failed: {done.stderr.strip().splitlines()[-1]}")
            continue
        result = json.loads(done.stdout.strip().splitlines()[-1])
        peak, counted = result["peak"] / result["pixels"], result["counted"] / result["pixels"]
        worst = min(worst, counted / peak)
        print(f"{name:<34} {peak:>7.2f} {counted:>8.2f} {counted / peak:>13.2f}")
    print(f"lowest counted/peak: {worst:.2f} (target >= 1)")
    return 0 if worst >= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
