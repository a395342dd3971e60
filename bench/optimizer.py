"""Benchmark of the image optimizer against raw libvips and thumbor, all measured in one run.

    .venv/bin/python bench/optimizer.py            # full run, about 9 minutes on 2 cores
    .venv/bin/python bench/optimizer.py --quick    # smoke run, about 3.5 minutes

Inputs are generated (a 12 MP photo-like JPEG and a 1920x1080 PNG with alpha) into a temporary
document root. Three cases, each resized to width 800 at quality 85:

    jpeg      12 MP JPEG -> JPEG      GET /photo.jpg?width=800&format=jpeg
    webp      12 MP JPEG -> WebP      GET /photo.jpg?width=800&format=webp
    png-webp  alpha PNG  -> WebP      GET /alpha.png?width=800&format=webp

The same work is measured three ways in the same run, so the ratios hold on a noisy shared
machine even when the absolute numbers move:

* raw pyvips in a plain Python process (the service's decode: ``thumbnail``, or for JPEG with
  the default ASSETGATE_FAST_SHRINK a DCT-scaled load + ``thumbnail_image``; then a save with the
  service's encoder settings), 1 thread, N threads and N processes, N = cores: the ceiling;
* ``assetgate serve`` on loopback with ``--workers 1`` and ``--workers N`` (``--process-per-core``
  adds N workers with one render thread each);
* thumbor (installed by this script into ``bench/.work/thumbor-venv``) with 1 and N processes.

HTTP load comes from ``wrk`` with one client thread for every server (installed from Debian if
missing), at concurrency 1, 2, 8 and 16, for a fixed duration each. Around every run the server's
process tree is sampled through /proc for peak RSS and CPU seconds, and the machine's busy time is
read so that CPU used by anyone else during the run is printed ("foreign").
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import loadgen
from optimizer_report import jsonable, load_results, write_report
from optimizer_setup import (
    CASES,
    NCPU,
    NOT_MODIFIED_CONCURRENCY,
    QUALITY,
    REPO,
    TARGET_WIDTH,
    WORK,
    Case,
    Plan,
    RawResult,
    ensure_thumbor,
    fetch,
    make_plan,
    probe,
    say,
    start_assetgate,
    start_thumbor,
    thumbor_pillow_version,
)

# --- inputs ----------------------------------------------------------------------------------


def _photo(pyvips: Any, width: int, height: int, grain: float) -> Any:
    """Colour gradients + blurred 'cloud' structure + fine grain: entropy like a real photo.

    Flat colour would make JPEG decoding (the dominant cost) unrealistically cheap.
    """
    xy = pyvips.Image.xyz(width, height)
    x = xy[0] / width
    y = xy[1] / height
    base = (x * 170 + 40).bandjoin([y * 140 + 60, (x + y) * 75 + 30])
    clouds = (
        pyvips.Image.gaussnoise(width // 8, height // 8, sigma=60, mean=0, seed=1)
        .gaussblur(3)
        .resize(8, kernel="linear")
    )
    detail = pyvips.Image.gaussnoise(width // 2, height // 2, sigma=12, mean=0, seed=5).resize(
        2, kernel="linear"
    )
    fine = pyvips.Image.gaussnoise(width, height, sigma=grain, mean=0, seed=2)
    structure = clouds.bandjoin([clouds * 0.7, clouds * 0.4]) + detail + fine
    return (base + structure).cast("uchar").copy(interpretation="srgb")


def make_inputs(root: Path) -> dict[str, dict[str, int]]:
    import pyvips

    photo = _photo(pyvips, 4000, 3000, grain=4)
    (root / "photo.jpg").write_bytes(photo.jpegsave_buffer(Q=90))
    rgb = _photo(pyvips, 1920, 1080, grain=2)
    xy = pyvips.Image.xyz(1920, 1080)
    distance = ((xy[0] - 960) ** 2 + (xy[1] - 540) ** 2) ** 0.5
    alpha = (255 - distance * 255 / 900).cast("uchar")
    rgba = rgb.bandjoin(alpha).copy(interpretation="srgb")
    (root / "alpha.png").write_bytes(rgba.pngsave_buffer())
    info = {}
    for name in ("photo.jpg", "alpha.png"):
        image = pyvips.Image.new_from_file(str(root / name))
        info[name] = {
            "width": image.width,
            "height": image.height,
            "bands": image.bands,
            "bytes": (root / name).stat().st_size,
        }
    return info


# --- raw pyvips ------------------------------------------------------------------------------


def service_defaults() -> dict[str, int]:
    """Encoder and libvips settings the service runs with, read from its own settings."""
    from assetgate.settings import Settings

    fields = Settings.model_fields
    return {
        "webp_effort": int(fields["webp_effort"].default),
        "vips_concurrency": int(fields["vips_concurrency"].default),
        "fast_shrink": int(bool(fields["fast_shrink"].default)),
        "quality": QUALITY,
    }


def encoder_options(output: str, defaults: Mapping[str, int]) -> tuple[str, dict[str, Any]]:
    """Suffix and save options mirroring the service's encoder (see imaging/encode.py)."""
    if output == "jpeg":
        return ".jpg", {"Q": defaults["quality"], "optimize_coding": True, "keep": 0}
    if output == "webp":
        return ".webp", {"Q": defaults["quality"], "effort": defaults["webp_effort"], "keep": 0}
    raise ValueError(output)


def raw_worker(args: argparse.Namespace) -> None:
    """One process of the raw-libvips reference: prints a JSON line with what it did."""
    import threading

    import pyvips

    defaults = service_defaults()
    pyvips.cache_set_max(0)
    pyvips.cache_set_max_mem(0)
    pyvips.cache_set_max_files(0)
    pyvips.concurrency_set(defaults["vips_concurrency"])
    case = next(c for c in CASES if c.key == args.raw_case)
    path = str(Path(args.raw_root) / case.source)
    suffix, options = encoder_options(case.output, defaults)

    factor = pyvips.Image.new_from_file(path).width / TARGET_WIDTH
    shrink = next((s for s in (8, 4, 2) if factor >= s), 1)
    fast = bool(defaults["fast_shrink"]) and path.endswith(".jpg") and shrink > 1

    def render() -> int:
        if fast:  # the service's JPEG path: decode at the largest DCT scale covering the target
            image = pyvips.Image.new_from_file(path, shrink=shrink, access="sequential")
            image = image.autorot().thumbnail_image(TARGET_WIDTH)
        else:
            image = pyvips.Image.thumbnail(path, TARGET_WIDTH)
        return len(image.write_to_buffer(suffix, **options))

    out_bytes = render()
    render()
    time.sleep(max(0.0, args.raw_start_at - time.time()))
    start = time.monotonic()
    deadline = start + args.raw_duration
    cpu0 = os.times()
    latencies: list[float] = []
    finished: list[float] = []
    lock = threading.Lock()

    def loop() -> None:
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            render()
            t1 = time.monotonic()
            with lock:
                latencies.append(t1 - t0)
                finished.append(t1)

    threads = [threading.Thread(target=loop) for _ in range(args.raw_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cpu1 = os.times()
    import resource

    print(
        json.dumps(
            {
                "count": len(latencies),
                "elapsed_s": max(finished) - start,
                "latencies_ms": [round(x * 1000, 3) for x in latencies],
                "cpu_s": (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system),
                "maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "out_bytes": out_bytes,
            }
        )
    )


def run_raw(
    case: Case, root: Path, *, threads: int, processes: int, duration_s: float
) -> RawResult:
    start_at = time.time() + 2.5  # after every process has imported pyvips and warmed up
    argv = [sys.executable, str(Path(__file__).resolve()), "--raw-case", case.key]
    argv += ["--raw-root", str(root), "--raw-threads", str(threads)]
    argv += ["--raw-duration", str(duration_s), "--raw-start-at", str(start_at)]
    children = [subprocess.Popen(argv, stdout=subprocess.PIPE, cwd=REPO) for _ in range(processes)]
    time.sleep(max(0.0, start_at - time.time()))
    busy0, wall0 = loadgen.machine_busy_s(), time.monotonic()
    reports = []
    for child in children:
        out, _ = child.communicate()
        if child.returncode != 0:
            raise RuntimeError(f"raw worker failed for {case.key}")
        reports.append(json.loads(out.decode().strip().splitlines()[-1]))
    busy = loadgen.machine_busy_s() - busy0
    wall = time.monotonic() - wall0
    count = sum(r["count"] for r in reports)
    elapsed = max(r["elapsed_s"] for r in reports)
    own_cpu = sum(r["cpu_s"] for r in reports)
    latencies = sorted(x for r in reports for x in r["latencies_ms"])
    parallel = threads * processes
    label = f"raw libvips, {parallel} thread{'s' if parallel > 1 else ''}"
    if processes > 1:
        label = f"raw libvips, {processes} processes"
    return RawResult(
        label=label,
        parallel=parallel,
        ops=count / elapsed,
        p50_ms=statistics.median(latencies),
        p99_ms=_percentile(latencies, 99),
        cpu_ms_per_op=1000 * sum(r["cpu_s"] for r in reports) / count,
        maxrss_bytes=sum(r["maxrss_bytes"] for r in reports),
        out_bytes=reports[0]["out_bytes"],
        foreign_cpu_pct=max(0.0, 100 * (busy - own_cpu) / (wall * NCPU)),
    )


RAW_SHAPES: tuple[tuple[int, int], ...] = ((1, 1), (NCPU, 1), (1, NCPU)) if NCPU > 1 else ((1, 1),)


def measure_raw(
    case: Case, root: Path, plan: Plan, shapes: Sequence[tuple[int, int]] = RAW_SHAPES
) -> list[RawResult]:
    """(threads, processes): 1 thread, NCPU threads in one process, NCPU 1-thread processes."""
    rows = []
    for threads, processes in shapes:
        plan.quiet.wait()
        row = run_raw(
            case, root, threads=threads, processes=processes, duration_s=plan.raw_duration_s
        )
        say(
            f"  {row.label:<26} {case.key:<9} {row.ops:8.1f} op/s  p50 {row.p50_ms:7.1f} ms  "
            f"cpu {row.cpu_ms_per_op:6.1f} ms/op  out {row.out_bytes} B  "
            f"foreign {row.foreign_cpu_pct:4.1f}%"
        )
        rows.append(row)
    return rows


def _percentile(ordered: Sequence[float], pct: float) -> float:
    index = min(len(ordered) - 1, max(0, math.ceil(pct / 100 * len(ordered)) - 1))
    return ordered[index]


# --- orchestration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A running server and how it spells each case's URL."""

    server: loadgen.Server
    path_of: Callable[[Case], str]
    not_modified: bool


def measure_case(
    case: Case,
    targets: Sequence[Target],
    plan: Plan,
    wrk: str,
    results: dict[str, Any],
) -> None:
    """Every server on one case, interleaved per concurrency level.

    Points that are compared in a ratio are measured within a minute of each other, so a burst of
    someone else's work on a shared machine hits both sides instead of one.
    """
    live = []
    for target in targets:
        server = target.server
        entry = results["servers"].setdefault(server.name, {"cases": {}})
        url = server.base_url + target.path_of(case)
        checked = probe(url, case)
        if not checked.ok:
            say(f"  {server.name} {case.key}: SKIPPED, probe failed: {checked.detail}")
            entry["cases"][case.key] = {"skipped": checked.detail}
            continue
        entry["cases"][case.key] = {"out_bytes": checked.out_bytes, "runs": {}}
        plan.quiet.wait()
        loadgen.run_wrk(
            wrk,
            url,
            connections=NCPU,
            duration_s=plan.warmup_s,
            server_pid=server.pid,
            script_dir=WORK,
        )
        live.append((server, url, entry["cases"][case.key]["runs"]))
    # c = cores is where the ratios are taken: measured a second time at the end, best kept.
    again = plan.repeat_at_cores and NCPU in plan.concurrency
    levels = [*plan.concurrency, *([NCPU] if again else [])]
    for connections in levels:
        for server, url, runs in live:
            plan.quiet.wait()
            run = loadgen.run_wrk(
                wrk,
                url,
                connections=connections,
                duration_s=plan.duration_s,
                server_pid=server.pid,
                script_dir=WORK,
            )
            say(f"  {server.name:<22} {case.key:<9} {_fmt_run(run)}")
            if connections not in runs or run.rps > runs[connections].rps:
                runs[connections] = run


def measure_not_modified(server: loadgen.Server, plan: Plan, wrk: str) -> Any:
    url = server.base_url + CASES[1].assetgate_path
    status, headers, _ = fetch(url)
    etag = headers.get("etag")
    if status != 200 or not etag:
        say(f"  {server.name} 304: SKIPPED (status {status}, etag {etag!r})")
        return {"skipped": f"status {status}, etag {etag!r}"}
    again, _, body = fetch(url, {"If-None-Match": etag})
    if again != 304 or body:
        say(f"  {server.name} 304: SKIPPED (revalidation answered {again})")
        return {"skipped": f"revalidation answered {again}"}
    plan.quiet.wait()
    run = loadgen.run_wrk(
        wrk,
        url,
        connections=NOT_MODIFIED_CONCURRENCY,
        duration_s=plan.duration_s,
        server_pid=server.pid,
        script_dir=WORK,
        headers={"If-None-Match": etag},
    )
    say(f"  {server.name:<22} {'304':<9} {_fmt_run(run)}")
    return run


def _fmt_run(run: loadgen.LoadResult) -> str:
    return (
        f"c={run.connections:<3} {run.rps:8.1f} req/s  p50 {run.p50_ms:7.1f} ms  "
        f"p99 {run.p99_ms:7.1f} ms  rss {run.peak_rss_bytes / 2**20:6.0f} MB  "
        f"cpu {run.server_cpu_ms_per_req:6.1f} ms/req  wrk {run.client_cpu_pct:4.1f}%  "
        f"foreign {run.foreign_cpu_pct:4.1f}%" + (f"  ERRORS {run.errors}" if run.errors else "")
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short smoke run (2 s per point)")
    parser.add_argument("--duration", type=int, default=5, help="seconds per measured point")
    parser.add_argument(
        "--skip", action="append", default=[], choices=["raw", "assetgate", "thumbor"]
    )
    parser.add_argument(
        "--process-per-core",
        action="store_true",
        help="also run assetgate with one render thread per worker process",
    )
    parser.add_argument("--report-from", type=Path, help="re-print the report of a saved run")
    for hidden in ("--raw-case", "--raw-root", "--raw-threads", "--raw-duration", "--raw-start-at"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.raw_case:
        args.raw_threads = int(args.raw_threads)
        args.raw_duration = float(args.raw_duration)
        args.raw_start_at = float(args.raw_start_at)
        raw_worker(args)
        return 0

    if args.report_from:
        results, plan = load_results(args.report_from)
        say(write_report(results, plan, results["command"]))
        return 0
    plan = make_plan(args)
    command = "python bench/optimizer.py" + (" --quick" if args.quick else "")
    if args.duration != 5 and not args.quick:
        command += f" --duration {args.duration}"
    if args.process_per_core:
        command += " --process-per-core"
    started = time.monotonic()
    wrk = loadgen.ensure_wrk()
    thumbor = None if "thumbor" in args.skip else ensure_thumbor()
    WORK.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "raw": {},
        "servers": {},
    }
    if thumbor:
        results["thumbor_versions"] = thumbor_pillow_version()
    with tempfile.TemporaryDirectory(prefix="optimizer-root-", dir=WORK) as tmp:
        root = Path(tmp)
        results["inputs"] = make_inputs(root)
        say(f"inputs: {json.dumps(results['inputs'])}")

        with contextlib.ExitStack() as stack:
            targets: list[Target] = []
            if "assetgate" not in args.skip:
                for config in plan.assetgate:
                    server = stack.enter_context(loadgen.running(start_assetgate(root, config)))
                    targets.append(Target(server, lambda c: c.assetgate_path, True))
            if thumbor:
                for processes in plan.thumbor_processes:
                    server = start_thumbor(thumbor, root, processes)
                    stack.enter_context(loadgen.running(server))
                    targets.append(Target(server, lambda c: c.thumbor_path, False))
            for target in targets:
                say(f"{target.server.name} on {target.server.base_url}")
            for case in CASES:
                say(f"{case.title}:")
                if "raw" not in args.skip:
                    results["raw"][case.key] = measure_raw(case, root, plan)
                measure_case(case, targets, plan, wrk, results)
                if "raw" not in args.skip and NCPU > 1 and plan.repeat_at_cores:
                    # The raw reference at c = cores, also a second time; best kept.
                    again = measure_raw(case, root, plan, RAW_SHAPES[1:])
                    rows = results["raw"][case.key]
                    for row in again:
                        i = next(i for i, r in enumerate(rows) if r.label == row.label)
                        if row.ops > rows[i].ops:
                            rows[i] = row
            for target in targets:
                if target.not_modified:
                    entry = results["servers"].setdefault(target.server.name, {"cases": {}})
                    entry["not_modified"] = measure_not_modified(target.server, plan, wrk)

    results["command"] = command
    results["plan"] = {
        "duration_s": plan.duration_s,
        "concurrency": plan.concurrency,
        "waited_s": plan.quiet.waited_s,
    }
    report = write_report(results, plan, command)
    (WORK / "optimizer-report.md").write_text(report + "\n")
    (WORK / "optimizer-results.json").write_text(json.dumps(jsonable(results), indent=1))
    say("")
    say(report)
    say(f"\n(total {time.monotonic() - started:.0f} s; report in {WORK / 'optimizer-report.md'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
