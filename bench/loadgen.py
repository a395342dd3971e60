"""Load generation and server bookkeeping shared by the HTTP benchmarks.

One load generator for every server compared (``wrk`` with one thread, the C tool Debian ships),
so the client's own CPU cost is the same whichever server answers. Around each ``wrk`` run we
sample the server's whole process tree through ``/proc`` (peak RSS summed over the tree, CPU
seconds) and the machine's busy time, so a run disturbed by someone else's work on a shared
machine is visible in the output instead of silently skewing a ratio.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
NCPU = os.cpu_count() or 1
RSS_SAMPLE_INTERVAL_S = 0.05
WRK_TIMEOUT_S = 60

_WRK_SCRIPT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,'
    .. '"status_errors":%d,"socket_errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50.0), latency:percentile(99.0),
    latency.max, e.status, e.connect + e.read + e.write + e.timeout))
end
"""


# --- processes -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree_pids(root: int) -> list[int]:
    """``root`` and all its descendants, via ``/proc/<pid>/task/<tid>/children``."""
    found: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    text = Path(f"/proc/{pid}/task/{task}/children").read_text()
                    todo.extend(int(child) for child in text.split())
    return found


def tree_rss_bytes(root: int) -> int:
    total = 0
    for pid in tree_pids(root):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_BYTES
    return total


def tree_cpu_s(root: int) -> float:
    ticks = 0
    for pid in tree_pids(root):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # Fields after the parenthesised command name; utime and stime are fields 14 and 15.
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
    return ticks / CLOCK_TICKS_PER_S


def tree_pss_bytes(root: int) -> int:
    """Proportional set size: shared pages (libvips, Python) split between the processes."""
    total = 0
    for pid in tree_pids(root):
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
    return total


def machine_busy_s() -> float:
    """CPU seconds spent not idle by the whole machine since boot (all cores)."""
    first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in first[:8])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS_PER_S


class PeakRss:
    """Samples the tree's summed RSS (and PSS) on a thread every 50 ms and keeps the peaks."""

    def __init__(self, root: int) -> None:
        self._root = root
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.peak = 0
        self.peak_pss = 0

    def _sample(self) -> None:
        self.peak = max(self.peak, tree_rss_bytes(self._root))
        self.peak_pss = max(self.peak_pss, tree_pss_bytes(self._root))

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(RSS_SAMPLE_INTERVAL_S)

    def __enter__(self) -> PeakRss:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Server:
    """A server process we started in its own session, stopped through its process group."""

    name: str
    process: subprocess.Popen[bytes]
    base_url: str
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)


def start_server(
    name: str,
    argv: Sequence[str],
    *,
    port: int,
    health_path: str,
    log: Path,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 60.0,
) -> Server:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(
            list(argv),
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    server = Server(name, process, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(server.base_url + health_path, timeout=2) as reply:
                if reply.status == 200:
                    return server
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    server.stop()
    tail = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"{name} did not become healthy on port {port}:\n{tail}")


# --- wrk -------------------------------------------------------------------------------------


def ensure_wrk() -> str:
    """Path of ``wrk``; installed from Debian when missing and we are root."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        sys.exit("bench: wrk is missing; install it with `apt-get install wrk`")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "wrk"]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=True)
        subprocess.run(install, env=env, check=True, capture_output=True)
    found = shutil.which("wrk")
    if not found:
        sys.exit("bench: wrk could not be installed")
    return found


@dataclass(frozen=True)
class LoadResult:
    connections: int
    requests: int
    rps: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    errors: int
    peak_rss_bytes: int
    peak_pss_bytes: int
    server_cpu_ms_per_req: float
    client_cpu_pct: float
    foreign_cpu_pct: float
    idle_cores: float = 0.0  # the machine's cores left idle, on average over the run

    def as_json(self) -> dict[str, float | int]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def run_wrk(
    wrk: str,
    url: str,
    *,
    connections: int,
    duration_s: int,
    server_pid: int,
    script_dir: Path,
    headers: Mapping[str, str] | None = None,
) -> LoadResult:
    """One bounded ``wrk`` run (one client thread) plus the server-side measurements around it."""
    script = script_dir / "wrk-report.lua"
    if not script.exists():
        script_dir.mkdir(parents=True, exist_ok=True)
        script.write_text(_WRK_SCRIPT)
    argv = [wrk, "-t1", f"-c{connections}", f"-d{duration_s}", f"--timeout={WRK_TIMEOUT_S}"]
    argv += ["-s", str(script)]
    for key, value in (headers or {}).items():
        argv += ["-H", f"{key}: {value}"]
    argv.append(url)

    busy0, server0, self0 = machine_busy_s(), tree_cpu_s(server_pid), _self_cpu_s()
    wall0 = time.monotonic()
    with PeakRss(server_pid) as rss:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _pid, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out = process.stdout.read().decode() if process.stdout else ""
        err = process.stderr.read().decode() if process.stderr else ""
        if process.stdout:
            process.stdout.close()
        if process.stderr:
            process.stderr.close()
    wall = time.monotonic() - wall0
    server_cpu = tree_cpu_s(server_pid) - server0
    client_cpu = usage.ru_utime + usage.ru_stime
    own_cpu = _self_cpu_s() - self0
    busy = machine_busy_s() - busy0
    foreign = busy - server_cpu - client_cpu - own_cpu
    if process.returncode != 0:
        raise RuntimeError(f"wrk failed ({process.returncode}): {err.strip()}")
    line = next(x for x in out.splitlines() if x.startswith("{"))
    report = json.loads(line)
    requests = int(report["requests"])
    seconds = report["duration_us"] / 1e6
    return LoadResult(
        connections=connections,
        requests=requests,
        rps=requests / seconds if seconds else 0.0,
        p50_ms=report["p50_us"] / 1000,
        p99_ms=report["p99_us"] / 1000,
        max_ms=report["max_us"] / 1000,
        errors=int(report["status_errors"]) + int(report["socket_errors"]),
        peak_rss_bytes=rss.peak,
        peak_pss_bytes=rss.peak_pss,
        server_cpu_ms_per_req=1000 * server_cpu / requests if requests else 0.0,
        client_cpu_pct=100 * client_cpu / wall,
        foreign_cpu_pct=max(0.0, 100 * foreign / (wall * NCPU)),
        idle_cores=max(0.0, NCPU - busy / wall),
    )


def _self_cpu_s() -> float:
    times = os.times()
    return times.user + times.system


class Quiet:
    """Waits, before a measured point, until the machine is idle: CPU busy under
    ``threshold_pct`` of all cores over a 0.5 s window.

    This drains what a previous run left behind (a server still working through the requests that
    were queued when wrk stopped) and sits out bursts of other people's work on a shared machine.
    Bounded per point and in total, so a machine that never calms down still gets measured (the
    "foreign" column then says so).
    """

    WINDOW_S: float = 0.5

    def __init__(self, threshold_pct: float, per_point_s: float, budget_s: float) -> None:
        self.threshold_pct = threshold_pct
        self.per_point_s = per_point_s
        self.budget_s = budget_s
        self.waited_s = 0.0

    def wait(self) -> None:
        start = time.monotonic()
        limit = min(self.per_point_s, self.budget_s - self.waited_s)
        while True:
            busy0 = machine_busy_s()
            time.sleep(self.WINDOW_S)
            busy_pct = 100 * (machine_busy_s() - busy0) / (self.WINDOW_S * NCPU)
            spent = time.monotonic() - start
            if busy_pct < self.threshold_pct or spent >= limit:
                self.waited_s += spent
                return


@contextlib.contextmanager
def running(server: Server) -> Iterator[Server]:
    try:
        yield server
    finally:
        server.stop()
