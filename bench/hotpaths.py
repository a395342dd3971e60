"""The optimizer's hot paths as a ratio of ``/healthz``, nginx on the same file as the ceiling.

    .venv/bin/python bench/hotpaths.py              # about 2 minutes on 2 cores
    .venv/bin/python bench/hotpaths.py --rounds 1   # smoke run

Most requests an optimizer sees are not renders but the same files again. One ``assetgate serve``
process (one worker, access log off) answers, in one run and interleaved round by round:

    healthz        GET /healthz: uvicorn + Starlette + our middleware, the floor
    static         GET /static.jpg (15 KB, no parameters: pass-through)
    static-304     GET /static.jpg with its ETag in If-None-Match
    image-304      GET /photo.jpg?width=800&format=jpeg with its ETag in If-None-Match
    asset-hit      GET /site.css?min=1 (3 KB, minified, from the asset cache)
    result-hit     GET /photo.jpg?width=800&format=jpeg from the result cache, when the server
                   has one (it answers ``X-Optimizer-Cache: HIT``); otherwise reported as absent

and nginx (one worker, its own prefix and temp directories, access log off) serves the same
static.jpg: the ceiling that the deployment guide puts in front. Load is ``wrk -t1 -c8`` for each
point (the shared ``loadgen``); each path's figure is the median over the rounds of its req/s
divided by the same round's ``/healthz``, so the machine's other work cancels out as far as it can.

Targets (issue 16), 2 cores, one process: static >= 0.6x, 304 >= 0.7x, asset and result-cache
hits >= 0.6x of /healthz.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import loadgen

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WORK = BENCH_DIR / ".work"
ASSETGATE = REPO / ".venv" / "bin" / "assetgate"
NGINX = "/usr/sbin/nginx"
CONNECTIONS = 8
PHOTO_URL = "/photo.jpg?width=800&format=jpeg"
TARGETS = {"static": 0.6, "static-304": 0.7, "image-304": 0.7, "asset-hit": 0.6, "result-hit": 0.6}
CSS_RULE = ".card-{n} {{\n    color : #33{n:02x}ff ;\n    margin : 0 auto ;\n}}\n/* {n} */\n"


@dataclass(frozen=True)
class Point:
    name: str
    path: str
    headers: dict[str, str]


def make_root(root: Path) -> None:
    import pyvips  # the service's own dependency; imported here so --help stays fast

    def photo(width: int, height: int, quality: int) -> bytes:
        noise = pyvips.Image.gaussnoise(width, height, sigma=40, mean=128)
        image = noise.gaussblur(2).bandjoin([noise.gaussblur(4), noise.gaussblur(8)])
        data: bytes = image.cast("uchar").jpegsave_buffer(Q=quality)
        return data

    (root / "photo.jpg").write_bytes(photo(1600, 1200, 90))
    static = photo(256, 192, 95)
    assert 10_000 < len(static) < 24_000, len(static)
    (root / "static.jpg").write_bytes(static)
    css = "".join(CSS_RULE.format(n=n) for n in range(60))[:3072]
    (root / "site.css").write_text(css)


def fetch(
    base: str, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(base + path, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            reply.read()
            return reply.status, {k.lower(): v for k, v in reply.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}


def assetgate_points(base: str) -> list[Point]:
    """Warm every path once and check it answers what the point claims to measure."""
    _, static = fetch(base, "/static.jpg")
    _, image = fetch(base, PHOTO_URL)
    fetch(base, "/site.css?min=1")
    _, asset = fetch(base, "/site.css?min=1")
    assert asset.get("x-asset-cache") == "hit", asset
    points = [
        Point("healthz", "/healthz", {}),
        Point("static", "/static.jpg", {}),
        Point("static-304", "/static.jpg", {"If-None-Match": static["etag"]}),
        Point("image-304", PHOTO_URL, {"If-None-Match": image["etag"]}),
        Point("asset-hit", "/site.css?min=1", {}),
    ]
    for point in points[1:]:
        status, _ = fetch(base, point.path, point.headers)
        assert status == (304 if "If-None-Match" in point.headers else 200), (point, status)
    _, again = fetch(base, PHOTO_URL)
    if again.get("x-optimizer-cache") == "HIT":
        points.append(Point("result-hit", PHOTO_URL, {}))
    return points


def start_assetgate(root: Path) -> loadgen.Server:
    port = loadgen.free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSETGATE_")}
    env["ASSETGATE_LOG_LEVEL"] = "warning"  # no access log, as for nginx
    argv = [str(ASSETGATE), "serve", "--root", str(root), "--port", str(port), "--workers", "1"]
    return loadgen.start_server(
        "assetgate", argv, port=port, health_path="/healthz", log=WORK / "logs" / "hot.log", env=env
    )


def start_nginx(root: Path, prefix: Path) -> loadgen.Server:
    port = loadgen.free_port()
    for sub in ("logs", "tmp"):
        (prefix / sub).mkdir(parents=True, exist_ok=True)
    temps = "".join(
        f"    {kind}_temp_path {prefix / 'tmp' / kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = prefix / "nginx.conf"
    conf.write_text(
        f"worker_processes 1;\ndaemon off;\npid {prefix / 'nginx.pid'};\n"
        f"error_log {prefix / 'logs' / 'error.log'} warn;\n"
        "events { worker_connections 1024; }\n"
        "http {\n    access_log off;\n    sendfile on;\n    tcp_nopush on;\n"
        "    types { image/jpeg jpg; text/css css; }\n"
        f"{temps}    server {{\n        listen 127.0.0.1:{port};\n        root {root};\n"
        "    }\n}\n"
    )
    argv = [NGINX, "-p", str(prefix), "-c", str(conf)]
    return loadgen.start_server(
        "nginx", argv, port=port, health_path="/static.jpg", log=prefix / "logs" / "stdout.log"
    )


def measure(wrk: str, server: loadgen.Server, point: Point, seconds: int) -> loadgen.LoadResult:
    result = loadgen.run_wrk(
        wrk,
        server.base_url + point.path,
        connections=CONNECTIONS,
        duration_s=seconds,
        server_pid=server.pid,
        script_dir=WORK,
        headers=point.headers,
    )
    if result.errors:
        raise RuntimeError(f"{point.name}: {result.errors} errors from wrk")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    parser.add_argument("--seconds", type=int, default=4, help="wrk duration per point")
    args = parser.parse_args()
    wrk = loadgen.ensure_wrk()
    if not shutil.which(NGINX) and not os.path.exists(NGINX):
        sys.exit(f"bench: {NGINX} is missing; install the nginx package")
    with tempfile.TemporaryDirectory(prefix="assetgate-hot-") as tmp:
        os.chmod(tmp, 0o755)  # nginx's worker runs as another user when we are root
        root = Path(tmp) / "root"
        root.mkdir()
        make_root(root)
        rates: dict[str, list[float]] = {}
        ratios: dict[str, list[float]] = {}
        cpu_us: dict[str, list[float]] = {}
        foreign: list[float] = []
        with (
            loadgen.running(start_assetgate(root)) as server,
            loadgen.running(start_nginx(root, Path(tmp) / "nginx")) as nginx,
        ):
            points = assetgate_points(server.base_url)
            nginx_point = Point("nginx static", "/static.jpg", {})
            for _ in range(args.rounds):
                round_rates = {p.name: measure(wrk, server, p, args.seconds) for p in points}
                round_rates["nginx static"] = measure(wrk, nginx, nginx_point, args.seconds)
                floor = round_rates["healthz"].rps
                for name, result in round_rates.items():
                    rates.setdefault(name, []).append(result.rps)
                    ratios.setdefault(name, []).append(result.rps / floor)
                    cpu_us.setdefault(name, []).append(1000 * result.server_cpu_ms_per_req)
                    foreign.append(result.foreign_cpu_pct)
        print(report(rates, ratios, cpu_us, foreign, args))
    return 0


def report(
    rates: dict[str, list[float]],
    ratios: dict[str, list[float]],
    cpu_us: dict[str, list[float]],
    foreign: list[float],
    args: argparse.Namespace,
) -> str:
    lines = [
        f"wrk -t1 -c{CONNECTIONS} -d{args.seconds}s, {args.rounds} interleaved round(s), "
        f"one assetgate process; other load on the machine: median "
        f"{statistics.median(foreign):.0f}% of the CPU",
        "",
        "| request | req/s (median) | × /healthz (per round) | server CPU µs/req | target |",
        "|---|---:|---:|---:|---|",
    ]
    for name, values in rates.items():
        ratio = statistics.median(ratios[name])
        target = TARGETS.get(name)
        verdict = (
            "" if target is None else f"≥ {target}×: {'met' if ratio >= target else 'NOT met'}"
        )
        rounds = ", ".join(f"{r:.2f}" for r in ratios[name])
        lines.append(
            f"| {name} | {statistics.median(values):,.0f} | {ratio:.2f}× ({rounds}) "
            f"| {statistics.median(cpu_us[name]):.0f} | {verdict} |"
        )
    if "result-hit" not in rates:
        lines.append("| result-hit | - | - | - | no result cache on this server (no HIT) |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
