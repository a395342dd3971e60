"""Where one cold optimizer request spends its CPU: per-step timers on the live server.

    .venv/bin/python bench/request_steps.py                 # 1 MP and 12 MP JPEG sources, 15 s
    .venv/bin/python bench/request_steps.py --duration 30
    .venv/bin/python bench/request_steps.py --instructions  # callgrind: instructions per request

Starts ``assetgate serve --workers 1`` (result cache off, access log on at INFO into /dev/null,
metrics on: the shipped defaults) in a child process whose functions along the request's walk are
wrapped by timers reading the calling thread's CPU clock, loads it with ``wrk`` (4 keep-alive
connections) and prints, per request: each timed step (µs), the CPU of each kind of thread from
``/proc`` (the event loop, the work gate's threads, libvips' own threads) and what is left on the
event loop beside the timed steps (HTTP parsing, the ASGI plumbing and middleware frames, asyncio's
scheduling). A step inside another is indented under it and counted once. A timer costs ~1 µs
(two clock reads), so the event loop's remainder is a little low. Figures and how to read them:
docs/benchmarks.md, "The cold path, step by step".

``--instructions`` counts instead of timing: the same server under ``valgrind --tool=callgrind
--separate-threads=yes``, 30 keep-alive requests for the 1 MP case (Chrome's image ``Accept``)
after 5 warm-ups, and prints the instructions per request of each thread (thread 1 is the event
loop). A loaded or drifting machine does not change them, so a change to the event loop's Python
shows here when a req/s or CPU figure cannot (the kernel's share, e.g. a socket write, is not
counted: callgrind sees user space only).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import loadgen
from optimizer import _photo
from optimizer_setup import ASSETGATE, WORK, clean_env, say


@dataclass(frozen=True)
class Step:
    label: str
    at: str  # "module:attribute" (dotted below the module), looked up at call time
    thread: str = "loop"  # "loop": the event loop's; "gate": a work gate thread's
    inner: bool = False  # inside the step above it (shown indented, counted once)


_HTTP = "uvicorn.protocols.http.httptools_impl"
_GUARD = "assetgate.cli.connections:GuardedHttpToolsProtocol"
_OBSERVE = "assetgate.operations.observe"
_RENDER = "assetgate.optimizer.render"

#: The sync functions timed along the walk of one request (async steps by their sync parts).
STEPS: tuple[Step, ...] = (
    Step("HTTP: read + parse the request", f"{_GUARD}.data_received"),
    Step("HTTP: write the answer", f"{_HTTP}:RequestResponseCycle.send"),
    Step("HTTP: connection bookkeeping", f"{_GUARD}.on_response_complete"),
    Step("hot lane: try a replay", "assetgate.serving.hotlane:HotLaneApp._answer"),
    Step("routing: match the routes", "starlette.routing:Route.matches"),
    Step("parameters: parse the query", "assetgate.optimizer.routes:query_reader"),
    Step("path check: lexical + lstat", "assetgate.optimizer.routes:locate"),
    Step("image ask: negotiate, key", "assetgate.optimizer.routes:image_ask"),
    Step("variant: ETag parts", "assetgate.optimizer.routes:variant_for"),
    Step("version: fingerprint lookup", "assetgate.serving.versions:FileVersions.identify"),
    Step("validators: prepared headers", "assetgate.serving.versions:FileVersion.prepare"),
    Step("hot lane: offer", "assetgate.serving.hotlane:HotLane.offer"),
    # The gate before its own pool (before 2026-11-27 afternoon) and after it: a step the
    # measured version lacks, or never calls, is left out of the report.
    Step("gate: hand the job over (before)", "assetgate.cpu.workgate:WorkGate._dispatch"),
    Step("gate: future for the loop (before)", "asyncio:wrap_future"),
    Step("gate: disconnect watch task (before)", "asyncio:ensure_future"),
    Step("gate: the ticket (future, Stop)", "assetgate.cpu.workgate:_Ticket.__init__"),
    Step("gate: hand the job to a thread", "assetgate.cpu.workgate:WorkGate._hand"),
    Step("gate: disconnect watch", "assetgate.cpu.disconnect:DisconnectWatch.__init__"),
    Step("gate: disconnect watch, close", "assetgate.cpu.disconnect:DisconnectWatch.close"),
    Step("gate: the outcome on the loop", "assetgate.cpu.workgate:_Ticket.deliver"),
    Step("job: sniff, header, probe, plan", "assetgate.optimizer.variants:prepare", "gate"),
    Step("job: decode + resize + encode", "assetgate.optimizer.variants:render", "gate"),
    Step("JPEG EOI check (a tail read)", "assetgate.imaging.integrity:complete_jpeg", "gate", True),
    Step("open + shrink-on-load graph", f"{_RENDER}:open_image", "gate", True),
    Step("pipeline graph", f"{_RENDER}:run", "gate", True),
    Step("encode (pixels computed here)", f"{_RENDER}:encode", "gate", True),
    Step("response: headers + Response", "assetgate.serving.answer:Response"),
    Step("response: Cache-Status etc.", "assetgate.optimizer.variants:_outcome_headers"),
    Step("access log line", f"{_OBSERVE}:access_log.handle"),
    Step("access log: loggable path", f"{_OBSERVE}:loggable_path"),
    Step("metrics: count + histogram", f"{_OBSERVE}:Observe._count"),
    Step("request id", f"{_OBSERVE}:request_id_from"),
)


# --- the child: the server with timers -------------------------------------------------------


def _child(out: str, argv: list[str]) -> None:
    """Runs in the server process: wrap the steps, serve, write the totals at SIGTERM."""
    import asyncio
    import importlib
    import threading
    from collections import defaultdict
    from typing import Any

    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # label -> [ns, calls]
    clock = time.thread_time_ns
    local = threading.local()

    def timed(label: str, fn: Any) -> Any:
        if asyncio.iscoroutinefunction(fn):

            async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
                start = clock()  # the coroutine's first step, up to its first suspension
                coro = fn(*args, **kwargs)
                try:
                    return await coro
                finally:
                    row = totals[label]
                    row[0] += clock() - start
                    row[1] += 1

            return wrapped_async

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(local, "depth", 0)
            local.depth = depth + 1
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                local.depth = depth
                row = totals[label]
                row[0] += clock() - start
                row[1] += 1

        return wrapped

    for step in STEPS:
        module_name, attr = step.at.split(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue  # not in the version measured
        if attr == "Route.matches":  # the router's, and the route groups' prefix tests
            from assetgate.web import routegroup

            for cls in (module.Route, routegroup.RouteGroup):
                cls.matches = timed(step.label, cls.matches)
            continue
        if attr == "query_reader":  # the reader it builds at startup is what each request calls
            made = module.query_reader

            def reader(*a: Any, _made: Any = made, _label: str = step.label, **k: Any) -> Any:
                return timed(_label, _made(*a, **k))

            module.query_reader = reader
            continue
        owner: Any = module
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is None or not hasattr(owner, name):
            continue  # not in the version measured
        setattr(owner, name, timed(step.label, getattr(owner, name)))

    def dump(*_: Any) -> None:
        """Write the totals so far and start again (SIGUSR1: after the warm-up, at the end)."""
        Path(out).write_text(json.dumps(dict(totals)))
        totals.clear()

    signal.signal(signal.SIGUSR1, dump)
    from assetgate.cli import main

    main(argv)


# --- the parent ------------------------------------------------------------------------------


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds per kind of thread: the event loop (the main thread), the gate's, libvips'."""
    tick = os.sysconf("SC_CLK_TCK")
    kinds: dict[str, float] = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = Path(f"/proc/{pid}/task/{task}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if task == str(pid):
            kind = "event loop thread"
        elif "vips" in comm:
            kind = "libvips threads"
        else:  # Python names no OS thread before 3.14: the gate's, the alarm, anyio's
            kind = "Python threads (the gate's)"
        kinds[kind] = kinds.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return kinds


def _wait_for(port: int, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while not _answers(port):
        if time.monotonic() > deadline or child.poll() is not None:
            sys.exit("bench: the timed server did not start")
        time.sleep(0.1)


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
            return True
    except OSError:
        return False


def _dump(child: subprocess.Popen[bytes], out: Path) -> dict[str, list[int]]:
    out.write_text("")
    child.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while not out.read_text():
        if time.monotonic() > deadline:
            sys.exit("bench: the timed server did not write its totals")
        time.sleep(0.05)
    totals: dict[str, list[int]] = json.loads(out.read_text())
    return totals


def measure(root: Path, path: str, duration_s: int, wrk: str) -> None:
    port = loadgen.free_port()
    out = Path(tempfile.mkstemp(prefix="assetgate-steps-", suffix=".json")[1])
    argv = ["serve", "--root", str(root), "--port", str(port), "--workers", "1"]
    env = clean_env(
        ASSETGATE_RESULT_CACHE_BYTES="0", ASSETGATE_RATE_LIMIT_PARTS="", ASSETGATE_LOG_LEVEL="info"
    )
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
    code += f"import request_steps as s; s._child({str(out)!r}, {argv!r})"
    python = ASSETGATE.parent / "python"
    url = f"http://127.0.0.1:{port}{path}"
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen([str(python), "-c", code], env=env, stderr=sink, stdout=sink)
    try:
        _wait_for(port, child)
        loadgen.run_wrk(
            wrk, url, connections=4, duration_s=2, server_pid=child.pid, script_dir=WORK
        )
        _dump(child, out)  # the warm-up's, dropped
        before = thread_cpu(child.pid)
        run = loadgen.run_wrk(
            wrk, url, connections=4, duration_s=duration_s, server_pid=child.pid, script_dir=WORK
        )
        after = thread_cpu(child.pid)
        totals = _dump(child, out)
    finally:
        child.terminate()
        child.wait(10)
        out.unlink(missing_ok=True)
    report(path, run, {k: after[k] - before.get(k, 0.0) for k in after}, totals)


def report(
    path: str, run: loadgen.LoadResult, cpu: dict[str, float], totals: dict[str, list[int]]
) -> None:
    requests = run.requests
    server = run.server_cpu_ms_per_req * 1000
    say(f"{path}: {run.rps:.1f} req/s, {requests} requests, server CPU {server:.0f} µs/request")
    for kind, seconds in sorted(cpu.items(), key=lambda item: -item[1]):
        say(f"  {kind:<36} {1e6 * seconds / requests:8.0f} µs")
    loop_steps = 0.0
    for step in STEPS:
        if step.label not in totals:
            continue  # not in the version measured, or never called
        ns, calls = totals[step.label]
        micros = ns / 1000 / requests
        indent = "      " if step.inner else "    "
        label = f"{indent}{step.label}"
        say(f"{label:<38} {micros:8.1f} µs  ({calls / requests:.2f} calls, {step.thread})")
        if step.thread == "loop" and not step.inner:
            loop_steps += micros
    loop = 1e6 * cpu.get("event loop thread", 0.0) / requests
    rest = "event loop beside the timed steps"
    say(f"  {rest:<36} {loop - loop_steps:8.0f} µs  (HTTP, ASGI, asyncio)")


CHROME_ACCEPT = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"


def instructions(root: Path, path: str, requests: int = 30) -> None:
    """Instructions per request by thread, counted by callgrind around a live server."""
    import http.client
    import shutil

    valgrind, control = shutil.which("valgrind"), shutil.which("callgrind_control")
    if valgrind is None or control is None:
        sys.exit("bench: --instructions needs valgrind (apt-get install valgrind)")
    port = loadgen.free_port()
    argv = ["serve", "--root", str(root), "--port", str(port), "--workers", "1"]
    env = clean_env(
        ASSETGATE_RESULT_CACHE_BYTES="0", ASSETGATE_RATE_LIMIT_PARTS="", ASSETGATE_LOG_LEVEL="info"
    )
    with tempfile.TemporaryDirectory(prefix="assetgate-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        command = [valgrind, "--tool=callgrind", "--separate-threads=yes"]
        command += [f"--callgrind-out-file={out}", str(ASSETGATE), *argv]
        with open(os.devnull, "wb") as sink:
            child = subprocess.Popen(command, env=env, stdout=sink, stderr=sink)
        try:
            deadline = time.monotonic() + 300
            while not _answers(port):
                if time.monotonic() > deadline or child.poll() is not None:
                    sys.exit("bench: the server under callgrind did not start")
                time.sleep(1)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            for counted in (False, True):
                if counted:
                    subprocess.run([control, "-z", str(child.pid)], check=True, capture_output=True)
                for _ in range(requests if counted else 5):
                    conn.request("GET", path, headers={"Accept": CHROME_ACCEPT})
                    reply = conn.getresponse()
                    reply.read()
                    if reply.status != 200:
                        sys.exit(f"bench: {path} answered {reply.status}")
            subprocess.run([control, "-d", str(child.pid)], check=True, capture_output=True)
            conn.close()
        finally:
            child.terminate()
            child.wait(60)
        counts: dict[int, int] = {}
        for part in Path(tmp).glob("callgrind.out.1-*"):  # the dump after the zero: part 1
            text = part.read_text(errors="replace")
            thread = re.search(r"^thread: (\d+)", text, re.MULTILINE)
            total = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
            if thread and total:
                counts[int(thread.group(1))] = int(total.group(1))
    say(f"{path}: instructions per request by thread ({requests} keep-alive requests, callgrind)")
    for thread, total in sorted(counts.items()):
        if total >= requests * 1000:
            label = "event loop" if thread == 1 else f"thread {thread}"
            say(f"  {label:<12} {total / requests:12,.0f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions (callgrind) instead"
    )
    args = parser.parse_args(argv)
    wrk = loadgen.ensure_wrk()
    import pyvips

    with tempfile.TemporaryDirectory(prefix="assetgate-steps-") as tmp:
        root = Path(tmp)
        (root / "small.jpg").write_bytes(_photo(pyvips, 1200, 900, 4).jpegsave_buffer(Q=88))
        (root / "photo.jpg").write_bytes(_photo(pyvips, 4000, 3000, 4).jpegsave_buffer(Q=90))
        if args.instructions:
            instructions(root, "/small.jpg?width=400&format=jpeg")
            return 0
        for name, width in (("small.jpg", 400), ("photo.jpg", 800)):
            measure(root, f"/{name}?width={width}&format=jpeg", args.duration, wrk)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
