"""Issue 36, item 7: a double Ctrl-C during a conversion is one log line and a 503 (or a closed
connection) for the client, not a 500 and ~90 lines of ``CancelledError`` tracebacks. A real
``assetgate serve``, a real upload, real SIGINTs."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import httpx
import pyvips

from tests.serve_process import Start
from tests.waiting import wait_until


def slow_png(path: Path) -> int:
    """A 36 MP photo-like PNG (~3 MB): its WebP takes seconds on any machine."""
    xyz = pyvips.Image.xyz(6000, 6000)
    x, y = xyz[0], xyz[1]
    bands = [
        (x * 0.013).sin() * 60 + (y * 0.021).cos() * 60 + 128,
        (x * y * 0.00001).sin() * 120 + 128,
        ((x + y) * 0.005).sin() * 100 + 128,
    ]
    bands[0].bandjoin(bands[1:]).cast("uchar").write_to_file(str(path))
    return path.stat().st_size


def test_a_double_ctrl_c_during_a_conversion_is_one_line_and_no_500(
    serve_cli: Start, tmp_path: Path
) -> None:
    image = tmp_path / "big.png"
    size = slow_png(image)
    work = tmp_path / "work"
    work.mkdir()
    server = serve_cli(work_dir=str(work), shutdown_grace_s="60")
    outcome: dict[str, object] = {}

    def post() -> None:
        try:
            response = httpx.post(
                f"{server.base}/api/convert",
                files=[("images", ("big.png", image.read_bytes(), "image/png"))],
                timeout=120,
            )
            outcome["answer"] = (response.status_code, response.headers, response.text)
        except httpx.TransportError as exc:  # a closed connection is an allowed answer
            outcome["closed"] = exc

    client = threading.Thread(target=post)
    client.start()
    try:
        # The whole upload is on disk: the conversion has been handed to the scheduler.
        wait_until(
            lambda: any(f.stat().st_size == size for f in work.glob("assetgate-convert-*/*")),
            timeout=60,
            message="the upload written to the work directory",
        )
        server.process.send_signal(signal.SIGINT)
        wait_until(lambda: "Shutting down" in server.log_text(), timeout=30)
        assert client.is_alive()  # the graceful shutdown waits for the conversion
        server.process.send_signal(signal.SIGINT)
        assert server.process.wait(timeout=60) == 0
    finally:
        client.join(timeout=120)
    log = server.log_text()
    assert "Traceback" not in log, log
    assert "CancelledError" not in log, log
    cancelled = [line for line in log.splitlines() if "cancelled by the shutdown" in line]
    assert len(cancelled) == 1, log
    assert '"level": "warning"' in cancelled[0]
    assert "POST /api/convert" in cancelled[0]
    if "answer" in outcome:
        status, headers, text = outcome["answer"]  # type: ignore[misc]
        assert status == 503, text
        assert headers["retry-after"] == "5"
        assert headers["content-type"] == "application/json"
        assert '"code":503' in text
    else:
        assert "closed" in outcome
