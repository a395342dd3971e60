"""Benchmark of the package library, with a reference measured in the same run.

    .venv/bin/python bench/packages.py            # full run, about 2 minutes on 2 cores
    .venv/bin/python bench/packages.py --quick    # smoke run, under a minute
    .venv/bin/python bench/packages.py --esm-only # only part 4 (needs the configured registry)

Everything runs on loopback: the npm registry is the tests' loopback registry (a real HTTP server
answering packuments and tarballs built here), and ``assetgate serve`` runs as its own process.

1. Warm file serving: a 100 KB JavaScript file of an already-ingested version, ``wrk`` with one
   thread and 4 and 16 keep-alive connections (the shared ``bench/loadgen.py``). References, under
   the same uvicorn, worker count and client: a bare Starlette route that reads the same file and
   returns its bytes (the floor of this stack: no routing table, no lookups, no headers) and
   Starlette's ``StaticFiles`` (what a plain static server on this stack costs).
   Targets (issue 4): >= 1,000 req/s and p99 <= 20 ms on 2 cores.
2. Cold first request for a small package (30 files, ~150 KB unpacked): fresh versions asked one
   by one (packument fetch, tarball download and sha512 check, unpack, index commit, answer),
   against the bare transfer of the same packument and tarball from the same loopback registry.
   Target: <= 300 ms plus transfer.
3. Peak RSS while ingesting a 25 MB-unpacked package (5,800 files and one 5.4 MB JSON file, the
   shape of the largest popular package in the research note): the server's resident memory
   sampled every 50 ms plus its ``VmHWM``, minus its RSS just before. Target: growth <= 150 MB.
4. ES modules (issue 28), with real react-dom 18.3.1 and d3 7.9.0 from the npm registry this
   machine is configured with (downloaded and their dependencies' documents fetched first, so
   the figure is the build alone): the first ``+esm`` build; warm ``+esm`` of react-dom against
   a warm pinned file of about the same size (its UMD build, ``wrk`` as in 1; target >= 0.9x);
   the built bytes against esbuild's own command line bundling and minifying the same entry with
   the same externals (target within 10 %).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

import loadgen

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

from tests.packages.upstream import FakeUpstream, Registry  # noqa: E402

from assetgate.packages.esm.bundler import Bundler, locate  # noqa: E402
from assetgate.packages.registry import pick_registry  # noqa: E402

ASSETGATE = REPO / ".venv" / "bin" / "assetgate"
CONNECTIONS = (4, 16)
TARGET_RPS = 1000.0
TARGET_P99_MS = 20.0
TARGET_COLD_OVERHEAD_MS = 300.0
TARGET_RSS_GROWTH_BYTES = 150 * 1024 * 1024
WORDS = tuple(
    [
        "function",
        "return",
        "const",
        "let",
        "var",
        "if",
        "else",
        "for",
        "while",
        "this",
        "that",
        "value",
        "item",
        "index",
        "array",
        "object",
        "string",
        "number",
        "true",
        "false",
        "null",
        "undefined",
        "length",
        "push",
        "map",
        "filter",
        "reduce",
        "export",
        "import",
        "from",
        "default",
        "class",
        "extends",
        "super",
        "new",
        "typeof",
        "instanceof",
        "await",
        "async",
        "yield",
    ]
)

REFERENCE_APP = """
from pathlib import Path

from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

DIRECTORY = {directory!r}


async def raw_bytes(request):
    with open(Path(DIRECTORY) / "file.js", "rb") as handle:
        return Response(handle.read(), media_type="text/javascript")


app = Starlette(
    routes=[
        Route("/bytes/file.js", raw_bytes),
        Mount("/static", StaticFiles(directory=DIRECTORY)),
    ]
)
"""


@dataclass(frozen=True)
class Plan:
    duration_s: int
    cold_versions: int
    workers: tuple[int, ...]


def js_text(rng: random.Random, size: int) -> bytes:
    """Plausible, compressible JavaScript-like text of exactly ``size`` bytes."""
    out: list[str] = []
    length = 0
    while length < size:
        line = " ".join(rng.choices(WORDS, k=rng.randint(4, 12))) + ";\n"
        out.append(line)
        length += len(line)
    return "".join(out).encode()[:size]


def big_package(rng: random.Random) -> dict[str, bytes]:
    files: dict[str, bytes] = {"metadata/icons.json": json_blob(rng, 5_400_000)}
    for index in range(5_800):
        folder = ("svgs/solid", "svgs/regular", "svgs/brands", "js", "css")[index % 5]
        files[f"{folder}/f{index:04d}.js"] = js_text(rng, 3_450)
    return files


def json_blob(rng: random.Random, size: int) -> bytes:
    entries = {}
    total = 0
    index = 0
    while total < size:
        value = {"label": " ".join(rng.choices(WORDS, k=6)), "unicode": f"f{index:04x}"}
        entries[f"icon-{index}"] = value
        total += 60
        index += 1
    return json.dumps(entries).encode()[:size]


def start_assetgate(env: dict[str, str], workers: int, work: Path, name: str) -> loadgen.Server:
    port = loadgen.free_port()
    argv = [str(ASSETGATE), "serve", "--port", str(port), "--workers", str(workers)]
    # Nothing rate limited: several workers would otherwise need Redis to share the budget.
    env = {**env, "ASSETGATE_RATE_LIMIT_PARTS": ""}
    return loadgen.start_server(
        name, argv, port=port, health_path="/healthz", log=work / f"{name}.log", env=env
    )


def start_reference(directory: Path, workers: int, work: Path) -> loadgen.Server:
    app_dir = work / "reference"
    app_dir.mkdir(exist_ok=True)
    (app_dir / "reference_app.py").write_text(REFERENCE_APP.format(directory=str(directory)))
    port = loadgen.free_port()
    argv = [
        sys.executable,
        "-m",
        "uvicorn",
        "reference_app:app",
        "--app-dir",
        str(app_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
        "--no-server-header",
    ]
    return loadgen.start_server(
        f"starlette-static-{workers}w",
        argv,
        port=port,
        health_path="/bytes/file.js",
        log=work / f"reference-{workers}.log",
    )


def vm_hwm_bytes(pid: int) -> int:
    total = 0
    for child in loadgen.tree_pids(pid):
        try:
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


ESM_CASES = (  # (package, version, a pinned file of about the same size as its module)
    ("react-dom", "18.3.1", "umd/react-dom.production.min.js"),
    ("d3", "7.9.0", "src/index.js"),  # d3's module is its entry re-exporting 30 packages
)
TARGET_ESM_RATIO = 0.9
ESM_PAIRS = 3
TARGET_ESM_BYTES = 0.10


def esbuild_cli_bytes(
    bundler: Bundler, client: httpx.Client, name: str, version: str, pinned: dict[str, str]
) -> int:
    """The same entry bundled and minified by esbuild's own command line, with the same
    externals under the same URLs (``--alias`` to ``/npm/<dep>@<exact>/+esm``, external)."""
    folder = Path(tempfile.mkdtemp(prefix="assetgate-bench-esbuild-"))
    try:
        package = folder / "node_modules" / name
        listing = client.get(f"/npm/{name}@{version}/?meta").json()
        for entry in listing["files"]:
            target = package / entry["path"].lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(client.get(f"/npm/{name}@{version}{entry['path']}").content)
        binary = next(bundler.modules.glob("@esbuild/*/bin/esbuild"))
        argv = [
            str(binary),
            name,
            "--bundle",
            "--minify",
            "--format=esm",
            "--platform=browser",
            "--target=es2022",
            '--define:process.env.NODE_ENV="production"',
            "--define:global=globalThis",
            *(f"--alias:{dep}=/npm/{dep}@{exact}/+esm" for dep, exact in sorted(pinned.items())),
            "--external:/npm/*",
        ]
        done = subprocess.run(argv, cwd=folder, capture_output=True, timeout=120, check=True)
        return len(done.stdout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def bench_esm(
    plan: Plan, wrk: str, work: Path, rows: list[str], results: dict[str, object]
) -> None:
    bundler = locate(None, "node", 60.0, 2 * 1024 * 1024 * 1024)
    registry = pick_registry(None, os.environ)
    if isinstance(bundler, str) or registry is None:
        print(f"ES modules skipped: {bundler if isinstance(bundler, str) else 'no registry'}")
        return
    env = {
        **os.environ,
        "ASSETGATE_STORE": str(work / "store-esm"),
        "ASSETGATE_NPM_REGISTRY": registry,
        "ASSETGATE_LOG_LEVEL": "warning",
        "ASSETGATE_UPSTREAM_TIMEOUT_S": "60",
    }
    quiet = loadgen.Quiet(threshold_pct=15.0, per_point_s=20.0, budget_s=180.0)
    with loadgen.running(start_assetgate(env, 1, work, "assetgate-esm")) as ours:
        client = httpx.Client(base_url=ours.base_url, timeout=120)
        for name, version, same_size in ESM_CASES:
            # Download the version and learn its dependencies' versions: the build alone is timed.
            manifest = client.get(f"/npm/{name}@{version}/package.json").json()
            pinned: dict[str, str] = {}
            wants = {**manifest.get("peerDependencies", {}), **manifest.get("dependencies", {})}
            for dep, wanted in wants.items():
                moved = client.get(f"/npm/{dep}@{wanted}/package.json", follow_redirects=False)
                pinned[dep] = moved.headers.get("x-resolved-version", wanted)
            quiet.wait()
            started = time.perf_counter()
            module = client.get(f"/npm/{name}@{version}/+esm")
            build_ms = 1000 * (time.perf_counter() - started)
            assert module.status_code == 200, module.text
            again = time.perf_counter()
            client.get(f"/npm/{name}@{version}/+esm").raise_for_status()
            warm_ms = 1000 * (time.perf_counter() - again)
            cli = esbuild_cli_bytes(bundler, client, name, version, pinned)
            size_ratio = len(module.content) / cli
            same = client.get(f"/npm/{name}@{version}/{same_size}")
            same.raise_for_status()
            # Alternating pairs, the median ratio: on a shared machine one pair can be off 2x.
            runs: dict[str, list[loadgen.LoadResult]] = {"esm": [], "file": []}
            ratios: list[float] = []
            for _ in range(ESM_PAIRS):
                for kind, path in (("esm", "+esm"), ("file", same_size)):
                    quiet.wait()
                    runs[kind].append(
                        loadgen.run_wrk(
                            wrk,
                            f"{ours.base_url}/npm/{name}@{version}/{path}",
                            connections=16,
                            duration_s=plan.duration_s,
                            server_pid=ours.pid,
                            script_dir=work,
                        )
                    )
                ratios.append(runs["esm"][-1].rps / max(runs["file"][-1].rps, 0.001))
            rps_ratio = statistics.median(ratios)
            middle = ratios.index(rps_ratio) if rps_ratio in ratios else 0
            served = {kind: runs[kind][middle] for kind in runs}
            results[f"esm_{name}"] = {
                "first_build_ms": build_ms,
                "warm_get_ms": warm_ms,
                "module_bytes": len(module.content),
                "esbuild_cli_bytes": cli,
                "warm_esm": [r.as_json() for r in runs["esm"]],
                "warm_file": [r.as_json() for r in runs["file"]],
                "ratios": ratios,
            }
            rows.append(
                f"| ES module {name}@{version}: first build | {build_ms:,.0f} ms (then "
                f"{warm_ms:.1f} ms) | — | — | — |"
            )
            rows.append(
                f"| ES module {name}@{version}: warm `+esm`, {len(module.content) / 1024:.0f} KB, "
                f"c=16 | {served['esm'].rps:,.0f} req/s, p99 {served['esm'].p99_ms:.1f} ms | "
                f"warm pinned `{same_size}` ({len(same.content) / 1024:.0f} KB): "
                f"{served['file'].rps:,.0f} req/s, p99 {served['file'].p99_ms:.1f} ms | "
                f"{rps_ratio:.2f}× (median of {ESM_PAIRS} alternating pairs: "
                f"{', '.join(f'{r:.2f}' for r in ratios)}) | ≥ 0.9×: "
                f"{'met' if rps_ratio >= TARGET_ESM_RATIO else 'NOT met'} |"
            )
            rows.append(
                f"| ES module {name}@{version}: bytes | {len(module.content):,} | esbuild CLI "
                f"bundle+minify of the same entry and externals: {cli:,} | {size_ratio:.3f}× | "
                f"within 10 %: {'met' if abs(size_ratio - 1) <= TARGET_ESM_BYTES else 'NOT met'} |"
            )
        client.close()


def esm_only(quick: bool, keep: bool) -> int:
    plan = Plan(duration_s=3 if quick else 8, cold_versions=0, workers=())
    work = Path(tempfile.mkdtemp(prefix="assetgate-bench-packages-"))
    rows: list[str] = []
    results: dict[str, object] = {}
    bench_esm(plan, loadgen.ensure_wrk(), work, rows, results)
    print_results(results, rows)
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, store)")
    parser.add_argument("--esm-only", action="store_true", help="only the ES module figures (4)")
    args = parser.parse_args()
    if args.esm_only:
        return esm_only(args.quick, args.keep)
    plan = Plan(duration_s=3, cold_versions=5, workers=(1,)) if args.quick else Plan(8, 15, (1, 2))
    wrk = loadgen.ensure_wrk()
    rng = random.Random(4)
    work = Path(tempfile.mkdtemp(prefix="assetgate-bench-packages-"))
    upstream = FakeUpstream().start()
    registry = Registry(upstream)
    warm_bytes = js_text(rng, 100 * 1024)
    registry.publish("bench-warm", "1.0.0", {"dist/file.js": warm_bytes})
    static_dir = work / "static"
    static_dir.mkdir()
    (static_dir / "file.js").write_bytes(warm_bytes)
    small = {f"src/m{i:02d}.js": js_text(rng, 5_000) for i in range(30)}
    small["index.js"] = js_text(rng, 2_000)
    for i in range(plan.cold_versions + 1):
        registry.publish("bench-cold", f"1.0.{i}", small)
    registry.publish("bench-tiny", "1.0.0", {"index.js": b"tiny"})
    print("generating the 25 MB package…", file=sys.stderr)
    big = big_package(rng)
    big_tarball = registry.publish("bench-big", "1.0.0", big)
    env = {
        **os.environ,
        "ASSETGATE_STORE": str(work / "store"),
        "ASSETGATE_NPM_REGISTRY": upstream.url + "/",
        "ASSETGATE_LIBRARY_API": upstream.url + "/cdnjs",
        "ASSETGATE_LIBRARY_FILES": upstream.url + "/libs",
        "ASSETGATE_LOG_LEVEL": "warning",
    }
    results: dict[str, object] = {}
    rows: list[str] = []

    # 1. warm serving ---------------------------------------------------------------------------
    quiet = loadgen.Quiet(threshold_pct=15.0, per_point_s=20.0, budget_s=180.0)
    for workers in plan.workers:
        reference: dict[tuple[str, int], loadgen.LoadResult] = {}
        measured: dict[int, loadgen.LoadResult] = {}
        with loadgen.running(start_reference(static_dir, workers, work)) as ref:
            for kind in ("bytes", "static"):
                for connections in CONNECTIONS:
                    quiet.wait()
                    reference[kind, connections] = loadgen.run_wrk(
                        wrk,
                        f"{ref.base_url}/{kind}/file.js",
                        connections=connections,
                        duration_s=plan.duration_s,
                        server_pid=ref.pid,
                        script_dir=work,
                    )
        with loadgen.running(start_assetgate(env, workers, work, f"assetgate-{workers}w")) as ours:
            url = ours.base_url + "/npm/bench-warm@1.0.0/dist/file.js"
            first = httpx.get(url, timeout=30)
            assert first.status_code == 200, first.status_code
            assert first.content == warm_bytes
            for connections in CONNECTIONS:
                quiet.wait()
                measured[connections] = loadgen.run_wrk(
                    wrk,
                    url,
                    connections=connections,
                    duration_s=plan.duration_s,
                    server_pid=ours.pid,
                    script_dir=work,
                )
        for connections in CONNECTIONS:
            ours_run = measured[connections]
            bare, static = reference["bytes", connections], reference["static", connections]
            ratio = ours_run.rps / bare.rps if bare.rps else 0.0
            results[f"warm_{workers}w_c{connections}"] = {
                "assetgate": ours_run.as_json(),
                "reference_bare_route": bare.as_json(),
                "reference_staticfiles": static.as_json(),
                "ratio_vs_bare_route": ratio,
            }
            ok = (
                ours_run.rps >= TARGET_RPS
                and ours_run.p99_ms <= TARGET_P99_MS
                and not ours_run.errors
            )
            rows.append(
                f"| warm 100 KB file, {workers} worker(s), c={connections} | "
                f"{ours_run.rps:,.0f} req/s, p50 {ours_run.p50_ms:.1f} ms, "
                f"p99 {ours_run.p99_ms:.1f} ms, {ours_run.server_cpu_ms_per_req:.2f} CPU-ms/req"
                f" | bare Starlette route returning the bytes: {bare.rps:,.0f} req/s, "
                f"p99 {bare.p99_ms:.1f} ms, {bare.server_cpu_ms_per_req:.2f} CPU-ms/req; "
                f"StaticFiles: {static.rps:,.0f} req/s, p99 {static.p99_ms:.1f} ms"
                f" | {ratio:.2f}× the bare route (other load on the machine: "
                f"{ours_run.foreign_cpu_pct:.0f}%) | ≥ 1,000 req/s, p99 ≤ 20 ms: "
                f"{'met' if ok else 'NOT met'} |"
            )

    # 2. cold first request and 3. peak RSS (one fresh server) ----------------------------------
    with loadgen.running(start_assetgate(env, 1, work, "assetgate-cold")) as ours:
        client = httpx.Client(base_url=ours.base_url, timeout=60)
        direct = httpx.Client(base_url=upstream.url, timeout=60)
        assert client.get("/npm/bench-tiny@1.0.0/index.js").status_code == 200  # warm imports
        cold_ms: list[float] = []
        transfer_ms: list[float] = []
        for i in range(1, plan.cold_versions + 1):
            started = time.perf_counter()
            response = client.get(f"/npm/bench-cold@1.0.{i}/index.js")
            cold_ms.append(1000 * (time.perf_counter() - started))
            assert response.status_code == 200, response.text
            started = time.perf_counter()
            direct.get("/bench-cold").raise_for_status()
            direct.get(registry.tarball_path("bench-cold", f"1.0.{i}")).raise_for_status()
            transfer_ms.append(1000 * (time.perf_counter() - started))
        warm_started = time.perf_counter()
        client.get(f"/npm/bench-cold@1.0.{plan.cold_versions}/index.js").raise_for_status()
        warm_hit_ms = 1000 * (time.perf_counter() - warm_started)
        cold_median = statistics.median(cold_ms)
        transfer_median = statistics.median(transfer_ms)
        overhead = cold_median - transfer_median
        results["cold"] = {
            "cold_ms": cold_ms,
            "transfer_ms": transfer_ms,
            "median_cold_ms": cold_median,
            "median_transfer_ms": transfer_median,
            "warm_hit_ms": warm_hit_ms,
        }
        rows.append(
            f"| cold first request, small package (31 files, {len(small) * 5} KB), "
            f"{plan.cold_versions} fresh versions | median {cold_median:.0f} ms "
            f"(max {max(cold_ms):.0f} ms) | bare transfer of packument + tarball: "
            f"{transfer_median:.1f} ms; same file warm: {warm_hit_ms:.1f} ms | "
            f"{cold_median / max(transfer_median, 0.001):.1f}× transfer | "
            f"≤ 300 ms + transfer: {'met' if overhead <= TARGET_COLD_OVERHEAD_MS else 'NOT met'} |"
        )

        time.sleep(0.5)
        before = loadgen.tree_rss_bytes(ours.pid)
        unpacked = sum(len(v) for v in big.values())
        with loadgen.PeakRss(ours.pid) as peak:
            started = time.perf_counter()
            response = client.get("/npm/bench-big@1.0.0/metadata/icons.json")
            ingest_s = time.perf_counter() - started
        assert response.status_code == 200, response.text
        high = max(peak.peak, vm_hwm_bytes(ours.pid))
        growth = high - before
        results["rss"] = {
            "before_bytes": before,
            "peak_bytes": high,
            "growth_bytes": growth,
            "unpacked_bytes": unpacked,
            "tarball_bytes": len(big_tarball),
            "files": len(big),
            "ingest_s": ingest_s,
        }
        mib = 1024 * 1024
        rows.append(
            f"| peak RSS ingesting a {unpacked / mib:.0f} MB-unpacked package ({len(big):,} files, "
            f"{len(big_tarball) / mib:.1f} MB tarball) | +{growth / mib:.0f} MB "
            f"(from {before / mib:.0f} MB), ingest {ingest_s:.1f} s | the package itself: "
            f"{unpacked / mib:.0f} MB unpacked | {growth / unpacked:.2f}× unpacked size | "
            f"growth ≤ 150 MB: {'met' if growth <= TARGET_RSS_GROWTH_BYTES else 'NOT met'} |"
        )
        client.close()
        direct.close()
    upstream.stop()
    bench_esm(plan, wrk, work, rows, results)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print_results(results, rows)
    return 0


def print_results(results: dict[str, object], rows: list[str]) -> None:
    print(json.dumps(results, indent=2))
    print()
    print(f"Measured {time.strftime('%Y-%m-%d')} on {loadgen.NCPU} cores (`bench/packages.py`):")
    print()
    print("| case | assetgate | reference (same run) | ratio | target |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    raise SystemExit(main())
