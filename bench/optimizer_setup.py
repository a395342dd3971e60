"""What the optimizer benchmark measures and against what: cases, run plans and the servers.

Shared by ``bench/optimizer.py`` (the entry point, which measures) and ``bench/optimizer_report.py``
(which writes the tables), so neither imports the other.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import loadgen

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WORK = BENCH_DIR / ".work"
ASSETGATE = REPO / ".venv" / "bin" / "assetgate"
THUMBOR_VERSION = "7.8.0"
THUMBOR_VENV = WORK / "thumbor-venv"
TARGET_WIDTH = 800
QUALITY = 85
CONCURRENCY: tuple[int, ...] = (1, 2, 8, 16)
NOT_MODIFIED_CONCURRENCY = 16
NCPU = loadgen.NCPU
QUIET_THRESHOLD_PCT = 15.0
THUMBOR_BUILD_DEPS = (
    "build-essential",
    "python3-dev",
    "libjpeg-dev",
    "zlib1g-dev",
    "libcurl4-openssl-dev",
    "libssl-dev",
)

# Targets from issue 2 ("Benchmark").
TARGET_VS_RAW = 0.90
TARGET_VS_THUMBOR = {"jpeg": 1.3, "webp": 2.5, "png-webp": 2.5}
TARGET_304_RPS = 3000.0
TARGET_RSS_BYTES = 300 * 1024 * 1024


@dataclass(frozen=True)
class Case:
    key: str
    title: str
    source: str
    output: str  # jpeg | webp
    thumbor_path: str

    @property
    def assetgate_path(self) -> str:
        return f"/{self.source}?width={TARGET_WIDTH}&format={self.output}"


CASES: tuple[Case, ...] = (
    Case("jpeg", "12 MP JPEG → 800 JPEG", "photo.jpg", "jpeg", "/unsafe/800x0/photo.jpg"),
    Case(
        "webp",
        "12 MP JPEG → 800 WebP",
        "photo.jpg",
        "webp",
        "/unsafe/800x0/filters:format(webp)/photo.jpg",
    ),
    Case(
        "png-webp",
        "1920×1080 alpha PNG → 800 WebP",
        "alpha.png",
        "webp",
        "/unsafe/800x0/filters:format(webp)/alpha.png",
    ),
)


@dataclass(frozen=True)
class Plan:
    """How long and how much: ``--quick`` shrinks every knob, never the list of cases."""

    duration_s: int
    warmup_s: int
    raw_duration_s: float
    concurrency: tuple[int, ...]
    assetgate: tuple[AssetgateConfig, ...]
    thumbor_processes: tuple[int, ...]
    quiet: loadgen.Quiet  # waited on before every measured point
    repeat_at_cores: bool = True  # measure c = cores a second time, keep the better


@dataclass(frozen=True)
class AssetgateConfig:
    workers: int
    render_workers: int | None = None  # None: the service's default (one per core)

    @property
    def name(self) -> str:
        label = f"assetgate --workers {self.workers}"
        if self.render_workers is not None:
            label += f" (render_workers={self.render_workers})"
        return label


def assetgate_configs(process_per_core: bool = False) -> tuple[AssetgateConfig, ...]:
    """One process with its render threads (one per core) and a process per core (each with as
    many render threads). ``process_per_core`` adds one render thread per process: nothing shared
    but the socket, which loses when keep-alive connections pile onto one process."""
    if NCPU == 1:
        return (AssetgateConfig(1),)
    configs = [AssetgateConfig(1), AssetgateConfig(NCPU)]
    if process_per_core:
        configs.append(AssetgateConfig(NCPU, 1))
    return tuple(configs)


def make_plan(args: argparse.Namespace) -> Plan:
    scale = tuple(sorted({1, NCPU}))
    configs = assetgate_configs(args.process_per_core)
    if args.quick:
        quiet = loadgen.Quiet(QUIET_THRESHOLD_PCT, per_point_s=3, budget_s=20)
        return Plan(2, 1, 2.0, CONCURRENCY, configs, scale, quiet, repeat_at_cores=False)
    quiet = loadgen.Quiet(QUIET_THRESHOLD_PCT, per_point_s=15, budget_s=90)
    return Plan(args.duration, 1, float(args.duration), CONCURRENCY, configs, scale, quiet)


@dataclass(frozen=True)
class RawResult:
    label: str
    parallel: int
    ops: float
    p50_ms: float
    p99_ms: float
    cpu_ms_per_op: float
    maxrss_bytes: int
    out_bytes: int
    foreign_cpu_pct: float = 0.0


def say(message: str) -> None:
    print(message, flush=True)


# --- servers ---------------------------------------------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    """Our environment minus any ASSETGATE_* the caller had set, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSETGATE_")}
    env.update(extra)
    return env


def start_assetgate(
    root: Path, config: AssetgateConfig, extra_env: Mapping[str, str] | None = None
) -> loadgen.Server:
    port = loadgen.free_port()
    argv = [str(ASSETGATE), "serve", "--root", str(root), "--port", str(port)]
    argv += ["--workers", str(config.workers)]
    # Access logs off (warning level) for every server compared, thumbor included.
    # Nothing rate limited: several workers would otherwise need Redis to share the budget.
    env = clean_env(ASSETGATE_LOG_LEVEL="warning", ASSETGATE_RATE_LIMIT_PARTS="")
    if config.render_workers is not None:
        env["ASSETGATE_RENDER_WORKERS"] = str(config.render_workers)
    env.update(extra_env or {})
    return loadgen.start_server(
        config.name,
        argv,
        port=port,
        health_path="/healthz",
        log=WORK / "logs" / f"assetgate-w{config.workers}-r{config.render_workers}.log",
        env=env,
    )


def ensure_thumbor() -> Path:
    """thumbor in its own venv under bench/.work (created once, reused afterwards)."""
    exe = THUMBOR_VENV / "bin" / "thumbor"
    if exe.exists():
        return exe
    print(f"installing thumbor {THUMBOR_VERSION} into {THUMBOR_VENV} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(THUMBOR_VENV)], check=True)
    pip = [str(THUMBOR_VENV / "bin" / "python"), "-m", "pip", "install", "-q"]
    if subprocess.run([*pip, f"thumbor=={THUMBOR_VERSION}"]).returncode != 0:
        if os.geteuid() != 0 or not shutil.which("apt-get"):
            sys.exit("bench: thumbor failed to install and we cannot apt-get its build deps")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=True)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", *THUMBOR_BUILD_DEPS], env=env, check=True
        )
        subprocess.run([*pip, f"thumbor=={THUMBOR_VERSION}"], check=True)
    return exe


def thumbor_pillow_version() -> str:
    python = THUMBOR_VENV / "bin" / "python"
    code = "import PIL, thumbor; print(thumbor.__version__, PIL.__version__)"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def start_thumbor(exe: Path, root: Path, processes: int) -> loadgen.Server:
    port = loadgen.free_port()
    conf = WORK / f"thumbor-p{processes}.conf"
    conf.write_text(
        "\n".join(
            [
                "LOADER = 'thumbor.loaders.file_loader'",
                f"FILE_LOADER_ROOT_PATH = {str(root)!r}",
                "STORAGE = 'thumbor.storages.no_storage'",
                "RESULT_STORAGE = None",
                "ALLOW_UNSAFE_URL = True",
                f"QUALITY = {QUALITY}",
                "",
            ]
        )
    )
    argv = [str(exe), "--ip", "127.0.0.1", "--port", str(port), "--conf", str(conf)]
    argv += ["--processes", str(processes), "--log-level", "warning"]
    return loadgen.start_server(
        f"thumbor --processes {processes}",
        argv,
        port=port,
        health_path="/healthcheck",
        log=WORK / "logs" / f"thumbor-p{processes}.log",
        env=clean_env(),
    )


@dataclass(frozen=True)
class Probe:
    ok: bool
    detail: str
    out_bytes: int = 0


def fetch(url: str, headers: Mapping[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, {k.lower(): v for k, v in reply.headers.items()}, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def probe(url: str, case: Case) -> Probe:
    """One request checked for what it must be: 200, the right format and width 800."""
    import pyvips

    status, headers, body = fetch(url)
    if status != 200:
        return Probe(False, f"HTTP {status}: {body[:200]!r}")
    try:
        image = pyvips.Image.new_from_buffer(body, "")
    except pyvips.Error:
        return Probe(False, f"undecodable body, content-type {headers.get('content-type')}")
    loader = str(image.get("vips-loader"))
    if not loader.startswith(case.output) or image.width != TARGET_WIDTH:
        return Probe(False, f"got {loader} {image.width}x{image.height}")
    return Probe(True, "ok", len(body))
