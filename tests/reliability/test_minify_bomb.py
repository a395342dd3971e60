"""Issue 24, item 1: JavaScript that makes rjsmin quadratic (``/[`` repeated).

200 KB of it once cost 12 CPU-s per ``?min=1`` request; three such requests pinned every render
thread for minutes. Now the minifier runs in a process that is killed at its deadline: the answer
is the file unminified with ``X-Minify-Skipped: timeout`` within the deadline, images are served
meanwhile, and no CPU is spent once the answers are out.
"""

from __future__ import annotations

import concurrent.futures
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assetgate.cpu import stop as stopping
from assetgate.errors import AppError
from assetgate.minify.sandbox import MinifyTimeout, Sandbox
from assetgate.minify.spec import AssetPlan
from tests.imaging import factory as make
from tests.reliability.test_overload import cpu_seconds, settle
from tests.serve_process import Served, serve

TIMEOUT_S = 1.5
JS_MIN = AssetPlan("js", "minify", "identity", vary=False)


def quadratic_js(size: int, tag: int = 0) -> bytes:
    """The reproduction: ``/[`` repeated (a tag in front makes each file a different entry)."""
    return b"var t%d;" % tag + b"/[" * (size // 2)


def _child_pids() -> set[int]:
    me = str(os.getpid())
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if stat[1] == me:
                found.add(int(entry.name))
    return found


def test_the_sandbox_kills_the_minifier_at_the_deadline() -> None:
    sandbox = Sandbox(1)
    alarm = stopping.Alarm()
    others = _child_pids()  # servers other tests' session fixtures started (SeaweedFS, Redis)
    try:
        assert sandbox.transform(b"var  a = 1 ;", JS_MIN) == b"var a=1;"
        before = _child_pids() - others
        assert len(before) == 1  # the minifier process, kept for the next job
        stop = stopping.Stop(1.0, alarm)
        started = time.monotonic()
        bomb = quadratic_js(1_000_000)
        stop.start()
        with stopping.running(stop), pytest.raises(MinifyTimeout):
            sandbox.transform(bomb, JS_MIN)
        stop.end()
        assert time.monotonic() - started < 4  # the 1 s deadline, not the bomb's whole run
        assert _child_pids().isdisjoint(before)  # killed and reaped
        assert sandbox.transform(b"var  b = 2 ;", JS_MIN) == b"var b=2;"  # a fresh process
    finally:
        sandbox.close()
        alarm.close()


def test_a_client_leaving_kills_the_minifier() -> None:
    sandbox = Sandbox(1)
    others = _child_pids()
    try:
        sandbox.transform(b"a", JS_MIN)
        before = _child_pids() - others
        assert len(before) == 1
        stop = stopping.Stop()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:

            def job() -> bytes:
                with stopping.running(stop):
                    return sandbox.transform(quadratic_js(1_000_000), JS_MIN)

            future = pool.submit(job)
            time.sleep(0.3)
            started = time.monotonic()
            stop.abandon()
            with pytest.raises(AppError) as raised:
                future.result(timeout=5)
        assert raised.value.status == 499
        assert time.monotonic() - started < 3  # killed, not the bomb's whole run
        assert _child_pids().isdisjoint(before)
    finally:
        sandbox.close()


@pytest.fixture
def served(docroot: Path, tmp_path: Path) -> Iterator[Served]:
    for tag in range(3):
        (docroot / f"bomb{tag}.js").write_bytes(quadratic_js(1_000_000, tag))
    (docroot / "photo.jpg").write_bytes(make.jpeg(800, 600))
    with serve(
        tmp_path,
        root=str(docroot),
        log_level="warning",
        render_workers="2",
        minify_workers="1",
        minify_timeout_s=str(TIMEOUT_S),
        render_queue_wait_s="20",
    ) as server:
        yield server


def test_three_minifier_bombs_get_the_file_unminified_and_images_flow(
    served: Served, docroot: Path
) -> None:
    def bomb(tag: int) -> tuple[httpx.Response, float]:
        started = time.monotonic()
        response = httpx.get(f"{served.base}/bomb{tag}.js?min=1", timeout=60)
        return response, time.monotonic() - started

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        started = time.monotonic()
        bombs = [pool.submit(bomb, tag) for tag in range(3)]
        images: list[float] = []
        width = 100
        while not all(future.done() for future in bombs):
            asked = time.monotonic()
            image = httpx.get(f"{served.base}/photo.jpg?w={width}&format=png", timeout=30)
            images.append(time.monotonic() - asked)
            assert image.status_code == 200
            assert image.headers["content-type"] == "image/png"
            width += 1  # a new rendering each time, never a cached one
        answers = [future.result() for future in bombs]
        finished = time.monotonic() - started
    # One minifier process: the three run one after another, each stopped at its deadline.
    assert finished < 3 * TIMEOUT_S + 3.0, finished
    for tag, (response, _) in enumerate(answers):
        assert response.status_code == 200
        assert response.headers["x-minify-skipped"] == "timeout"
        assert response.headers["x-optimizer-status"] == "passthrough"
        assert response.content == (docroot / f"bomb{tag}.js").read_bytes()
    assert min(took for _, took in answers) < TIMEOUT_S + 1.5
    assert len(images) >= 3
    assert max(images) < 2.0, images
    settle(served.pid)  # nothing left running (the killed processes are the server's children)
    # The unminified answer is remembered for a while: a repeat costs no minifier time.
    before = cpu_seconds(served.pid)
    repeat = httpx.get(f"{served.base}/bomb0.js?min=1", timeout=10)
    assert repeat.headers["x-minify-skipped"] == "timeout"
    assert cpu_seconds(served.pid) - before < 0.5
