"""web/request_checks.py: the four checks before routing, in the order the four middlewares
had, on a real uvicorn: a control character is judged before the URL's length, and a refusal
carries the edge's mark like any answer."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

from assetgate.settings import Settings
from tests.web.test_urllimit import serving


def raw(port: int, target: str, extra: str = "") -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        request = f"GET {target} HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n"
        conn.sendall(request.encode())
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1]), data.partition(b"\r\n\r\n")[0].lower()


def test_a_long_path_with_a_control_character_is_the_404_of_a_missing_file(
    make_settings: Callable[..., Settings], docroot: Path
) -> None:
    (docroot / "a.txt").write_text("a")
    with serving(make_settings(max_url_bytes=4096)) as port:
        assert raw(port, "/a.txt")[0] == 200
        assert raw(port, "/" + "b" * 4200)[0] == 414
        assert raw(port, "/a%0A" + "b" * 4200)[0] == 404
        assert raw(port, "/a%0A")[0] == 404


def test_a_refusal_is_marked_not_kept_when_the_edge_bucket_disagrees(
    make_settings: Callable[..., Settings],
) -> None:
    disagreeing = "Accept: image/webp\r\nX-Assetgate-Format-Bucket: auto\r\n"
    with serving(make_settings(max_url_bytes=4096)) as port:
        status, head = raw(port, "/" + "b" * 4200, disagreeing)
        assert status == 414
        assert b"\r\nx-accel-expires: 0" in head
        status, head = raw(port, "/" + "b" * 4200, "Accept: image/webp\r\n")
        assert status == 414
        assert b"x-accel-expires" not in head
