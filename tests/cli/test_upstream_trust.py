"""Upstream TLS as the systemd unit starts the service (no ``SSL_CERT_FILE``): the system's trust
store decides, and a failure says why, once per upstream and change of state.

The registry is a real HTTPS server on loopback whose certificate comes from a private CA
(trustme). "In the system store" is made real without touching this machine's: the server
process runs in a private mount namespace where /etc/ssl/certs/ca-certificates.crt is the
machine's bundle plus that CA, as update-ca-certificates would leave it."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import trustme

from tests.conftest import require, require_binary
from tests.packages.upstream import FakeUpstream, Registry
from tests.serve_process import (
    COMMAND,
    NO_UPSTREAMS,
    Served,
    clean_env,
    pick_port,
    stop,
    wait_healthy,
)

SYSTEM_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
TLS_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


@contextmanager
def https_registry(ca: trustme.CA) -> Iterator[Registry]:
    upstream = FakeUpstream()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    upstream.server.socket = context.wrap_socket(
        upstream.server.socket, server_side=True, do_handshake_on_connect=False
    )
    upstream.url = upstream.url.replace("http://", "https://")
    upstream.start()
    try:
        yield Registry(upstream)
    finally:
        upstream.stop()


@contextmanager
def serve_as_systemd(tmp: Path, registry: str, bundle: Path | None) -> Iterator[Served]:
    """``assetgate serve`` with no TLS variables; with ``bundle`` mounted as the system's."""
    port = pick_port()
    settings = {
        **NO_UPSTREAMS,
        "npm_registry": registry + "/",
        "store": str(tmp / f"store-{port}"),
        "result_cache_dir": str(tmp / f"results-{port}"),
        "root": str(tmp),
        "upstream_timeout_s": "5",
    }
    env = clean_env({f"ASSETGATE_{k.upper()}": v for k, v in settings.items()})
    for name in TLS_ENV:
        env.pop(name, None)
    command = [*COMMAND, "serve", "--host", "127.0.0.1", "--port", str(port)]
    if bundle is not None:
        mount = 'mount --bind "$0" /etc/ssl/certs/ca-certificates.crt && exec "$@"'
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", mount,
                   str(bundle), *command]  # fmt: skip
    log = tmp / f"serve-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    served = Served(process, port, log)
    try:
        wait_healthy(served.base, process, log)
        yield served
    finally:
        stop(process)


def upstream_lines(served: Served) -> list[dict[str, object]]:
    return [line for line in served.json_lines() if line.get("logger") == "assetgate.upstreams"]


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def test_a_ca_in_the_system_store_is_trusted_and_failures_log_their_state(
    tmp_path: Path, ca: trustme.CA
) -> None:
    require(os.geteuid() == 0, "a private mount namespace needs root")
    require_binary("unshare")
    require(SYSTEM_BUNDLE.is_file(), f"{SYSTEM_BUNDLE} (Debian's ca-certificates) is missing")
    bundle = tmp_path / "ca-certificates.crt"
    shutil.copyfile(SYSTEM_BUNDLE, bundle)
    with bundle.open("a") as out:
        out.write(ca.cert_pem.bytes().decode())
    with https_registry(ca) as registry:
        for name in ("first", "second", "third", "fourth"):
            registry.publish(name, "1.0.0", {"index.js": f"export const n = '{name}';".encode()})
        with serve_as_systemd(tmp_path, registry.upstream.url, bundle) as served:
            ok = httpx.get(f"{served.base}/npm/first@1.0.0/index.js", timeout=30)
            assert ok.status_code == 200, ok.text
            assert ok.text == "export const n = 'first';"
            registry.upstream.down = True  # 500 for everything
            for name in ("second", "third"):
                down = httpx.get(f"{served.base}/npm/{name}@1.0.0/index.js", timeout=30)
                assert down.status_code == 502
            registry.upstream.down = False
            back = httpx.get(f"{served.base}/npm/fourth@1.0.0/index.js", timeout=30)
            assert back.status_code == 200
        lines = upstream_lines(served)
    assert [(line["level"], line["message"]) for line in lines] == [
        ("warning", "upstream npm registry failing: HTTP 500"),
        ("info", "upstream npm registry answers again"),
    ]
    assert lines[0]["upstream"] == "npm registry"


def test_an_unknown_ca_is_logged_once_with_its_cause(tmp_path: Path, ca: trustme.CA) -> None:
    with https_registry(ca) as registry:
        registry.publish("first", "1.0.0", {"index.js": b"export {};"})
        registry.publish("second", "1.0.0", {"index.js": b"export {};"})
        with serve_as_systemd(tmp_path, registry.upstream.url, None) as served:
            for name in ("first", "second", "first"):
                answer = httpx.get(f"{served.base}/npm/{name}@1.0.0/index.js", timeout=30)
                assert answer.status_code == 502
                assert "upstream unreachable" in answer.json()["error"]
        lines = upstream_lines(served)
    assert len(lines) == 1, json.dumps(lines, indent=1)
    line = lines[0]
    assert line["level"] == "warning"
    assert line["upstream"] == "npm registry"
    assert line["error"] == "ConnectError"
    assert line["cause"] == "SSLCertVerificationError"
    assert str(line["detail"]).startswith("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify")
    assert "\n" not in str(line["message"])
    assert str(line["message"]).startswith(
        "upstream npm registry failing: ConnectError (SSLCertVerificationError): [SSL: "
    )
    assert "127.0.0.1" not in str(line["message"])  # no internal address in the line
