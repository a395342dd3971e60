"""The optimizer's cold path against a peer: sharp (Node, libvips) doing the same resize.

    .venv/bin/python bench/peer_sharp.py              # 3 rounds of 10 s points, about 10 minutes
    .venv/bin/python bench/peer_sharp.py --cases small-jpeg,small-webp  # some cases only
    .venv/bin/python bench/peer_sharp.py --rss        # also peak RSS at c=16, result cache on/off
    .venv/bin/python bench/peer_sharp.py --in-process # also the render path, no HTTP either side
    .venv/bin/python bench/peer_sharp.py --rounds 20 --duration 6  # pairs: a 1-3 % difference
    .venv/bin/python bench/peer_sharp.py --variant MALLOC_ARENA_MAX=2  # also assetgate with this

Eight cases: four sources, each resized as JPEG and as WebP, at assetgate's default quality and
WebP effort (read from its settings):

* ``photo``: the 12 MP photo-like JPEG ``bench/optimizer.py`` generates (gradients, blurred
  structure, fine grain; q90) to width 800;
* ``noisy``: a 12 MP high-entropy JPEG (the same scene under heavy per-pixel grain; q90, about
  three times the bytes) to width 800;
* ``small``: the photo-like scene at 1200x900 (1.08 MP, q88) to width 400, where the fixed cost of
  a request decides;
* ``small-noisy``: the high-entropy one at 1200x900 to width 400.

1200x900, not 1200x800: a third of 800 rows is 266.67, which sharp keeps as an exact 1/3 scale
while assetgate resizes to 267 rows, so the outputs would differ by a fraction of a pixel; at
1200x900 (like 4000x3000) both scales are exact and the outputs byte-identical. Served by:

* ``assetgate serve --workers 1`` with ``ASSETGATE_RESULT_CACHE_BYTES=0``: every request renders
  (the cold path; the on-disk result cache would otherwise answer repeats);
* ``bench/peer_sharp.mjs``: ``sharp.concurrency(1)``, libuv pool ``UV_THREADPOOL_SIZE`` = cores,
  JPEG with Huffman optimisation, 4:2:0 chroma and quantisation table 2 (assetgate's JPEG
  options, ``imaging.formats.FORMATS["jpeg"].saver.options``; no other mozjpeg preset), WebP at
  the same effort.
  sharp is installed by this script with npm into ``bench/.work/sharp`` (git-ignored).

Load is ``wrk`` with 4 keep-alive connections. Within a round the two servers alternate, and the
order flips every round, so a burst of someone else's work on a shared machine hits both sides.
Printed: every round's req/s, assetgate/sharp per round, and the median over rounds; the server
CPU per request of both (ms, median over rounds: read from /proc, it is what a loaded machine
disturbs least) and their ratio. Both outputs are also checked: dimensions, bytes (identical), and
PSNR/SSIM against a full-decode Lanczos3 reference. Targets (issue 42): at least 1.0x sharp's
throughput on the 12 MP sources, at least 0.95x on the small ones.

``--variant VAR=VALUE[,VAR=VALUE]`` (repeatable) starts one more assetgate with those variables
in its environment, measured in the same rounds: a setting's effect is read against sharp in the
same minutes, as this machine's speed drifts by more than the effect between two runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import loadgen
from optimizer import _photo, make_inputs, service_defaults
from optimizer_setup import (
    BENCH_DIR,
    NCPU,
    WORK,
    AssetgateConfig,
    fetch,
    say,
    start_assetgate,
)

SHARP_DIR = WORK / "sharp"
RSS_CONNECTIONS = 16
RSS_TOLERANCE = 0.10
COLD = {"ASSETGATE_RESULT_CACHE_BYTES": "0"}


@dataclass(frozen=True)
class Source:
    name: str  # file name under the root
    width: int
    height: int
    grain: float  # per-pixel noise of ``optimizer._photo``: 4 photo-like, 32 high-entropy
    quality: int
    target_width: int
    target: float  # assetgate/sharp throughput wanted (issue 42)


SOURCES: tuple[Source, ...] = (
    Source("photo.jpg", 4000, 3000, 4, 90, 800, 1.0),  # made by optimizer.make_inputs
    Source("noisy.jpg", 4000, 3000, 32, 90, 800, 1.0),
    Source("small.jpg", 1200, 900, 4, 88, 400, 0.95),
    Source("small-noisy.jpg", 1200, 900, 32, 88, 400, 0.95),
)


@dataclass(frozen=True)
class PeerCase:
    key: str
    source: Source
    output: str  # jpeg | webp

    @property
    def path(self) -> str:
        return f"/{self.source.name}?width={self.source.target_width}&format={self.output}"


CASES: tuple[PeerCase, ...] = tuple(
    PeerCase(f"{source.name.removesuffix('.jpg')}-{output}", source, output)
    for source in SOURCES
    for output in ("jpeg", "webp")
)


def make_sources(root: Path) -> None:
    """The four sources (``photo.jpg`` as ``bench/optimizer.py`` makes it)."""
    import pyvips

    make_inputs(root)
    for source in SOURCES:
        if not (root / source.name).exists():
            image = _photo(pyvips, source.width, source.height, grain=source.grain)
            (root / source.name).write_bytes(image.jpegsave_buffer(Q=source.quality))


def ensure_sharp() -> Path:
    """sharp under bench/.work/sharp, installed once with npm (its registry from npm's config)."""
    if not (SHARP_DIR / "node_modules" / "sharp").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("bench: npm is missing; install nodejs and npm")
        SHARP_DIR.mkdir(parents=True, exist_ok=True)
        (SHARP_DIR / "package.json").write_text('{"name": "peer-sharp", "private": true}\n')
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "sharp"], cwd=SHARP_DIR, check=True
        )
    server = SHARP_DIR / "peer_sharp.mjs"  # next to node_modules, so `import "sharp"` resolves
    shutil.copyfile(BENCH_DIR / "peer_sharp.mjs", server)
    return server


def sharp_version() -> str:
    argv = [
        "node",
        "-e",
        "const s=require('sharp');console.log(s.versions.sharp+' libvips '+s.versions.vips)",
    ]
    return subprocess.run(argv, cwd=SHARP_DIR, capture_output=True, text=True).stdout.strip()


def start_sharp(script: Path, root: Path, defaults: dict[str, int]) -> loadgen.Server:
    port = loadgen.free_port()
    argv = ["node", str(script), str(root), str(port)]
    argv += [str(defaults["quality"]), str(defaults["webp_effort"])]
    env = {**os.environ, "UV_THREADPOOL_SIZE": str(NCPU)}
    log = WORK / "logs" / "peer-sharp.log"
    return loadgen.start_server("sharp", argv, port=port, health_path="/healthz", log=log, env=env)


def _ssim(a: Any, b: Any) -> float:
    """Mean SSIM of the luma of two same-sized images (Gaussian window, sigma 1.5)."""
    x = a.colourspace("b-w")[0].cast("float")
    y = b.colourspace("b-w")[0].cast("float")
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = x.gaussblur(1.5), y.gaussblur(1.5)
    vx = (x * x).gaussblur(1.5) - mx * mx
    vy = (y * y).gaussblur(1.5) - my * my
    cxy = (x * y).gaussblur(1.5) - mx * my
    ssim = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return float(ssim.avg())


def _psnr(a: Any, b: Any) -> float:
    mse = ((a.cast("float") - b.cast("float")) ** 2).avg()
    return float("inf") if mse == 0 else float(10 * __import__("math").log10(255**2 / mse))


def quality_check(root: Path, cases: Sequence[PeerCase], urls: dict[str, dict[str, str]]) -> bool:
    """Every case's outputs against a full-decode Lanczos3 reference; True: byte-identical."""
    import pyvips

    identical = True
    for case in cases:
        source = case.source
        height = round(source.height * source.target_width / source.width)
        reference = pyvips.Image.thumbnail(
            str(root / source.name), source.target_width, size="force", height=height,
            no_rotate=True,
        ).copy_memory()  # fmt: skip
        bodies = set()
        for name, url in urls[case.key].items():
            _status, _headers, body = fetch(url)
            bodies.add(body)
            out = pyvips.Image.new_from_buffer(body, "")[0:3].copy_memory()
            ref = reference.crop(
                0, 0, min(out.width, reference.width), min(out.height, reference.height)
            )
            got = out.crop(0, 0, ref.width, ref.height)
            say(
                f"  {case.key:<17} {name:<9} {out.width}x{out.height} {len(body):>7} B  "
                f"PSNR {_psnr(got, ref):5.2f} dB  SSIM {_ssim(got, ref):.4f}"
            )
        same = len(bodies) == 1
        identical = identical and same
        say(f"  {case.key:<17} byte-identical outputs: {'yes' if same else 'NO'}")
    return identical


def measure_rounds(
    servers: Sequence[loadgen.Server],
    cases: Sequence[PeerCase],
    rounds: int,
    duration_s: int,
    wrk: str,
) -> dict[str, list[dict[str, float]]]:
    """req/s per case, server and round, the servers alternating (order flipped every round)."""
    table: dict[str, list[dict[str, float]]] = {case.key: [] for case in cases}
    for number in range(rounds):
        order = list(servers) if number % 2 == 0 else list(reversed(servers))
        for case in cases:
            figures: dict[str, float] = {}
            for server in order:
                url = server.base_url + case.path
                for seconds in (2, duration_s):  # warm-up, then the measured point
                    run = loadgen.run_wrk(
                        wrk,
                        url,
                        connections=4,
                        duration_s=seconds,
                        server_pid=server.pid,
                        script_dir=WORK,
                    )
                if run.errors:
                    sys.exit(f"bench: {server.name} answered {run.errors} errors on {case.key}")
                figures[server.name] = run.rps
                figures[server.name + " cpu"] = run.server_cpu_ms_per_req
                say(
                    f"  round {number + 1} {case.key:<17} {server.name:<9} {run.rps:7.1f} req/s  "
                    f"p50 {run.p50_ms:6.1f} ms  cpu/req {run.server_cpu_ms_per_req:6.2f} ms  "
                    f"idle {run.idle_cores:4.2f} cores  foreign {run.foreign_cpu_pct:4.1f} %"
                )
            table[case.key].append(figures)
    return table


def report_ratios(
    table: dict[str, list[dict[str, float]]], names: Sequence[str] = ("assetgate",)
) -> bool:
    """Each assetgate in ``names`` against sharp; the verdict is the first one's (the defaults)."""
    ok = True
    targets = {case.key: case.source.target for case in CASES}
    for key, rounds in table.items():
        target = targets[key]
        for number, name in enumerate(names):
            ratios = [r[name] / r["sharp"] for r in rounds]
            median = statistics.median(ratios)
            if number == 0:
                ok = ok and median >= target
            each = ", ".join(f"{r:.2f}" for r in ratios)
            ours = statistics.median(r[name + " cpu"] for r in rounds)
            peer = statistics.median(r["sharp cpu"] for r in rounds)
            cpu = statistics.median(r[name + " cpu"] / r["sharp cpu"] for r in rounds)
            ahead = sum(r > 1 for r in ratios)
            say(
                f"{key:<17} {name}/sharp median {median:.3f}x, "
                f"mean {statistics.mean(ratios):.3f}x, "
                f"ahead in {ahead} of {len(ratios)} rounds (rounds: {each}); "
                f"target >= {target:.2f}x: {'met' if median >= target else 'MISSED'}; "
                f"server CPU per request sharp {peer:.2f} ms, {name} {ours:.2f} ms "
                f"({ours - peer:+.2f} ms, ratio {cpu:.2f})"
            )
    return ok


def variant_env(spec: str) -> dict[str, str]:
    """``VAR=VALUE[,VAR=VALUE]`` -> the variables, for ``--variant``."""
    pairs = [item.split("=", 1) for item in spec.split(",") if item]
    if not pairs or any(len(pair) != 2 or not pair[0] for pair in pairs):
        sys.exit(f"bench: --variant wants VAR=VALUE[,VAR=VALUE], not {spec!r}")
    return dict(pairs)


def _assetgate_loop(root: Path, seconds: float, threads: int) -> dict[str, float]:
    """Renders/s of ``threads`` threads each running the optimizer's job (header probe, then
    render) on the JPEG case back to back, in this process: the render path without HTTP."""
    import threading
    import time

    from assetgate.imaging import vips
    from assetgate.optimizer.plan import Limits, Negotiation
    from assetgate.optimizer.render import Job, process
    from assetgate.optimizer.spec import parse_spec
    from assetgate.settings import Settings

    settings = Settings(root=root)
    vips.configure(settings)
    photo = root / "photo.jpg"
    job = Job.from_settings(
        settings,
        path=photo,
        size=photo.stat().st_size,
        spec=parse_spec({"width": "800", "format": "jpeg"}),
        negotiation=Negotiation(webp=False),
        limits=Limits.from_settings(settings),
    )
    process(job)  # warm
    stop = time.monotonic() + seconds
    done = [0] * threads

    def chain(slot: int) -> None:
        while time.monotonic() < stop:
            process(job)
            done[slot] += 1

    workers = [threading.Thread(target=chain, args=(n,)) for n in range(threads)]
    start, cpu0 = time.monotonic(), time.process_time()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall, cpu = time.monotonic() - start, time.process_time() - cpu0
    renders = sum(done)
    return {"rate": renders / wall, "cpu_ms": 1000 * cpu / renders, "busy": cpu / wall}


def measure_in_process(script: Path, root: Path, defaults: dict[str, int], seconds: int) -> None:
    """The same JPEG render without HTTP on either side: one chain per core, alternating."""
    import json

    say(f"in process, no HTTP ({NCPU} threads or libuv threads, {seconds} s each, JPEG case):")
    ratios = []
    for number in range(3):
        argv = ["node", str(script), str(root), "loop", str(defaults["quality"])]
        argv += [str(defaults["webp_effort"]), str(seconds)]
        env = {**os.environ, "UV_THREADPOOL_SIZE": str(NCPU)}
        peer = json.loads(subprocess.run(argv, env=env, capture_output=True, check=True).stdout)
        ours = _assetgate_loop(root, seconds, NCPU)
        ratios.append(ours["rate"] / peer["rate"])
        for name, row in (("assetgate", ours), ("sharp", peer)):
            say(
                f"  round {number + 1} {name:<9} {row['rate']:6.2f} renders/s  "
                f"cpu/render {row['cpu_ms']:5.1f} ms  busy {row['busy']:4.2f} cores"
            )
    each = ", ".join(f"{r:.2f}" for r in ratios)
    say(f"in process assetgate/sharp median {statistics.median(ratios):.2f}x (rounds: {each})")


def measure_rss(root: Path, wrk: str, duration_s: int) -> None:
    """Peak RSS of assetgate at c=16 on the JPEG case, result cache on (default) vs off."""
    peaks: dict[str, int] = {}
    for label, env in (("cache off", COLD), ("cache on", {})):
        config = AssetgateConfig(1)
        with loadgen.running(start_assetgate(root, config, env)) as server:
            url = server.base_url + CASES[0].path
            run = loadgen.run_wrk(
                wrk,
                url,
                connections=RSS_CONNECTIONS,
                duration_s=duration_s,
                server_pid=server.pid,
                script_dir=WORK,
            )
            peaks[label] = run.peak_rss_bytes
            say(
                f"  {label:<9} c={RSS_CONNECTIONS} {run.rps:7.1f} req/s  "
                f"peak RSS {run.peak_rss_bytes / 2**20:6.1f} MiB"
            )
    change = peaks["cache on"] / peaks["cache off"] - 1
    # The target bounds growth: a cache that keeps memory lower (hits instead of renders) meets it.
    verdict = "met" if change <= RSS_TOLERANCE else "MISSED"
    say(f"RSS cache on vs off: {100 * change:+.1f} % (target at most +10 %: {verdict})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--cases",
        default=",".join(case.key for case in CASES),
        help="comma-separated keys: " + ", ".join(case.key for case in CASES),
    )
    parser.add_argument("--duration", type=int, default=10, help="seconds per measured point")
    parser.add_argument("--rss", action="store_true", help="also RSS with the result cache on/off")
    parser.add_argument(
        "--in-process", action="store_true", help="also the render path without HTTP on both sides"
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="VAR=VALUE[,VAR=VALUE]",
        help="also an assetgate with these environment variables, in the same rounds",
    )
    args = parser.parse_args(argv)
    wrk = loadgen.ensure_wrk()
    script = ensure_sharp()
    defaults = service_defaults()
    say(
        f"sharp {sharp_version()}; cores {NCPU}; quality {defaults['quality']}, "
        f"WebP effort {defaults['webp_effort']}; assetgate with result cache off"
    )
    wanted = args.cases.split(",")
    cases = [case for case in CASES if case.key in wanted]
    if len(cases) != len(set(wanted)):
        sys.exit(f"bench: unknown case in {args.cases!r}")
    with tempfile.TemporaryDirectory(prefix="assetgate-peer-") as tmp:
        root = Path(tmp)
        make_sources(root)
        with contextlib.ExitStack() as running:
            ours = running.enter_context(
                loadgen.running(start_assetgate(root, AssetgateConfig(1), COLD))
            )
            ours.name = "assetgate"
            servers = [ours]
            for spec in args.variant:
                env = {**COLD, **variant_env(spec)}
                other = running.enter_context(
                    loadgen.running(start_assetgate(root, AssetgateConfig(1), env))
                )
                other.name = f"assetgate[{spec}]"
                servers.append(other)
            peer = running.enter_context(loadgen.running(start_sharp(script, root, defaults)))
            peer.name = "sharp"
            servers.append(peer)
            urls = {c.key: {s.name: s.base_url + c.path for s in servers} for c in cases}
            for case in cases:
                for url in urls[case.key].values():
                    status, headers, _body = fetch(url)
                    if status != 200 or headers.get("content-type") != f"image/{case.output}":
                        sys.exit(f"bench: {url} answered {status} {headers.get('content-type')}")
            say("output check (reference: full decode + Lanczos3 to the same size):")
            identical = quality_check(root, cases, urls)
            table = measure_rounds(servers, cases, args.rounds, args.duration, wrk)
        ok = report_ratios(table, [s.name for s in servers[:-1]]) and identical
        if args.in_process:
            measure_in_process(script, root, defaults, args.duration)
        if args.rss:
            measure_rss(root, wrk, args.duration)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
