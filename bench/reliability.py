"""Reliability under abuse, measured on the real server (issue 12).

    .venv/bin/python bench/reliability.py              # about 2 minutes on 2 cores
    PYTHONPATH=/some/older/checkout/src .venv/bin/python bench/reliability.py   # the "before"

Three figures, each read from the server process itself (``/proc/<pid>``), never the wall clock:

1. Abandoned work: CPU seconds one costly render takes (4000x3000 JPEG, ``blur=100&sharpen=100
   &format=png``), then the CPU seconds the server spends on 20 such requests whose clients hang
   up after 0.3 s. Target: at most 2x one render.
2. Peak RSS (VmHWM) of a fresh server answering 16 parallel renders of a 49 MP PNG to WebP,
   RGB and RGBA, and of RGBA at width=2500 (what the per-job memory limit leaves).
3. Peak RSS of a fresh server answering 16 parallel conversions of the same PNGs.
   Target for all: within the memory the server states it uses: its image jobs' budget
   (``ASSETGATE_RENDER_MEMORY_BYTES``, derived from the machine unless set: ``assetgate.machine``)
   plus the 512 MiB the derivation keeps for everything else. Before budgets were derived (a fixed
   one), the target was a flat 600 MB; ``ASSETGATE_RENDER_MEMORY_BYTES=...`` in the environment
   measures a smaller machine's budget on a large one.

The server runs with its defaults (``assetgate serve``), one process, on loopback.

``--uploads`` measures issue 35's slow uploads instead (about 30 s): 1,100 multipart heads to
``/api/convert``, each body then trickling one byte every 5 s; the latency of ordinary requests
(``/healthz``, a small file) while they are held, against the same requests with none held, and
when the body deadline (``ASSETGATE_BODY_MIN_RATE`` after ``ASSETGATE_BODY_GRACE_S``) closed them.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pyvips

from assetgate.machine import RESERVED_BYTES, render_budget, usable_memory

COSTLY = "/large.jpg?blur=100&sharpen=100&format=png"
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_inputs(root: Path) -> None:
    noise = pyvips.Image.gaussnoise(4000, 3000, sigma=50)
    photo = noise.bandjoin([noise.rot180(), noise.fliphor()]).cast("uchar")
    photo.jpegsave(str(root / "large.jpg"), Q=90)
    side = 7000  # 49 MP; a smooth gradient so the PNG fits the 25 MB upload cap
    xyz = pyvips.Image.xyz(side, side)
    gradient = (xyz[0] * 255 / side).bandjoin([xyz[1] * 255 / side, (xyz[0] + xyz[1]) % 256])
    gradient.cast("uchar").pngsave(str(root / "big.png"), compression=6)
    # The same with a smooth alpha band (issue 24: RGBA peaks), so it fits the 25 MB upload cap.
    alpha = (xyz[0] + xyz[1]) * 255 / (2 * side)
    gradient.bandjoin(alpha).cast("uchar").pngsave(str(root / "alpha.png"), compression=6)


class Server:
    def __init__(self, root: Path, **settings: str) -> None:
        self.port = free_port()
        argv = [sys.executable, "-m", "assetgate", "serve", "--root", str(root)]
        argv += ["--port", str(self.port)]
        env = {
            **os.environ,
            "ASSETGATE_LOG_LEVEL": "warning",
            # Defaults otherwise, but every server renders afresh: a result cache left by an
            # earlier run (the default directory is per user) would answer instead; a dot
            # directory under the temporary root is removed with it.
            "ASSETGATE_RESULT_CACHE_DIR": str(root / f".results-{self.port}"),  # never served
            **settings,
        }
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("server did not start")

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM")

    def settle(self, quiet_s: float = 1.5, limit_s: float = 120) -> None:
        """Wait until the server stops using CPU (its abandoned work is over)."""
        end = time.monotonic() + limit_s
        last = self.cpu()
        while time.monotonic() < end:
            time.sleep(quiet_s)
            now = self.cpu()
            if now - last < 0.05:
                return
            last = now

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def hang_up(port: int, path: str, after_s: float) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        time.sleep(after_s)


def abandoned(root: Path) -> tuple[float, float]:
    # Result cache off: each abandoned request must be a render of its own, not a share in the
    # first one's cached answer (or in one single-flight render).
    server = Server(root, ASSETGATE_RESULT_CACHE_BYTES="0")
    try:
        before = server.cpu()
        assert httpx.get(server.base + COSTLY, timeout=120).status_code == 200
        server.settle()
        one = server.cpu() - before
        before = server.cpu()
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            list(pool.map(lambda _: hang_up(server.port, COSTLY, 0.3), range(20)))
        server.settle()
        return one, server.cpu() - before
    finally:
        server.close()


def parallel_peak(root: Path, send: Callable[[httpx.Client, str], int]) -> tuple[float, str]:
    """Peak RSS of a fresh server and what the 16 requests got: status x count (slowest s)."""
    server = Server(root)

    def timed(client: httpx.Client) -> tuple[int, float]:
        started = time.monotonic()
        return send(client, server.base), time.monotonic() - started

    try:
        with httpx.Client(timeout=300) as client, concurrent.futures.ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda _: timed(client), range(16)))
        slowest: dict[int, float] = {}
        for status, took in answers:
            slowest[status] = max(took, slowest.get(status, 0.0))
        counts = collections.Counter(status for status, _ in answers)
        got = ", ".join(
            f"{counts[code]} x {code} (slowest {slowest[code]:.2f} s)" for code in sorted(counts)
        )
        return server.peak_rss_mb(), got
    finally:
        server.close()


def render(name: str, query: str = "") -> Callable[[httpx.Client, str], int]:
    def send(client: httpx.Client, base: str) -> int:
        return client.get(base + f"/{name}?format=webp&q=80{query}").status_code

    return send


def convert(root: Path, name: str) -> Callable[[httpx.Client, str], int]:
    data = (root / name).read_bytes()

    def send(client: httpx.Client, base: str) -> int:
        files = {"images": (name, data, "image/png")}
        return client.post(base + "/api/convert", files=files).status_code

    return send


UPLOAD_HEAD = (
    b"POST /api/convert HTTP/1.1\r\nHost: bench\r\nContent-Type: multipart/form-data; "
    b"boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n"
)


def ordinary(base: str, rounds: int = 10) -> list[tuple[int, float]]:
    """(status, seconds) of ``rounds`` x (/healthz, a small file), one at a time."""
    answers = []
    with httpx.Client(base_url=base, timeout=10) as client:
        for _ in range(rounds):
            for path in ("/healthz", "/small.txt"):
                started = time.monotonic()
                try:
                    status = client.get(path, headers={"Connection": "close"}).status_code
                except httpx.HTTPError:
                    status = 0
                answers.append((status, time.monotonic() - started))
    return answers


def waiting(sock: socket.socket) -> bool:
    """Nothing came back (no answer, no close): the upload is still held."""
    try:
        sock.recv(1)
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def slow_uploads(root: Path, count: int = 1100) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, count + 512)), hard))
    (root / "small.txt").write_text("hello")
    # The rate limit off (as in the run): else all but the first ~100 get a 429 at once.
    server = Server(root, ASSETGATE_RATE_LIMIT="100000/10 seconds")
    uploads: list[socket.socket] = []
    try:
        alone = ordinary(server.base)
        started = time.monotonic()
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.sendall(UPLOAD_HEAD)
            sock.setblocking(False)
            uploads.append(sock)
        opened = time.monotonic() - started
        held = ordinary(server.base)  # within the 10 s grace: all still held
        print("  held latencies (ms, in order):", [round(t * 1000) for _, t in held])
        open_now = sum(waiting(sock) for sock in uploads)
        next_byte = started + 5
        cut_at = None
        while time.monotonic() - started < 30 and cut_at is None:
            if time.monotonic() >= next_byte:
                for sock in uploads:
                    with contextlib.suppress(OSError):
                        sock.send(b"x")
                next_byte += 5
            time.sleep(0.25)
            if not any(waiting(sock) for sock in uploads):
                cut_at = time.monotonic() - started
    finally:
        for sock in uploads:
            sock.close()
        server.close()
    median_alone = statistics.median(t for _, t in alone)
    median_held = statistics.median(t for _, t in held)
    print(f"{count} trickling uploads opened in {opened:.1f} s; {open_now} still held after")
    worst_alone = max(t for _, t in alone) * 1000
    print(f"  ordinary requests alone: {collections.Counter(s for s, _ in alone)}, median "
          f"{median_alone * 1000:.0f} ms, max {worst_alone:.0f} ms")  # fmt: skip
    print(f"  with them held: {collections.Counter(s for s, _ in held)}, median "
          f"{median_held * 1000:.0f} ms ({median_held / median_alone:.1f}x), max "
          f"{max(t for _, t in held) * 1000:.0f} ms")  # fmt: skip
    when = "never (30 s)" if cut_at is None else f"{cut_at:.1f} s after the first"
    print(f"  all closed by the body deadline: {when}")


def stated_bytes() -> int:
    """What the server says it may use: its jobs' budget (as set, or derived) plus the rest."""
    given = os.environ.get("ASSETGATE_RENDER_MEMORY_BYTES", "")
    budget = int(given) if given.isdigit() else render_budget(usable_memory())
    return budget + RESERVED_BYTES


def judged(peak_mb: float, stated: int) -> str:
    verdict = "within" if peak_mb * 1e6 <= stated else "OVER"
    return f"{verdict} the stated {stated / 1e6:.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--peaks-only", action="store_true", help="skip the abandoned-work figure")
    parser.add_argument("--uploads", action="store_true", help="only the slow-upload figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.uploads:
            slow_uploads(root)
            return
        make_inputs(root)
        stated = stated_bytes()
        if not args.peaks_only:
            one, twenty = abandoned(root)
            print(f"one costly render: {one:.2f} CPU-s")
            times = twenty / one
            print(f"20 abandoned costly requests: {twenty:.2f} CPU-s ({times:.1f}x one render)")
        for name, label in (("big.png", "RGB"), ("alpha.png", "RGBA")):
            peak, got = parallel_peak(root, render(name))
            print(f"16 parallel 49 MP {label} PNG -> WebP renders: peak RSS {peak:.0f} MB, "
                  f"{judged(peak, stated)}")  # fmt: skip
            print(f"  answers: {got}")
            peak, got = parallel_peak(root, convert(root, name))
            print(f"16 parallel 49 MP {label} PNG conversions: peak RSS {peak:.0f} MB, "
                  f"{judged(peak, stated)}")  # fmt: skip
            print(f"  answers: {got}")
        # What the per-job memory limit leaves of an RGBA request: a width that fits it.
        peak, got = parallel_peak(root, render("alpha.png", "&width=2500"))
        print(f"16 parallel 49 MP RGBA PNG -> WebP width=2500 renders: peak RSS {peak:.0f} MB, "
              f"{judged(peak, stated)}")  # fmt: skip
        print(f"  answers: {got}")


if __name__ == "__main__":
    main()
