"""docs/deploying.md followed on Debian's stock nginx layout, default site enabled.

A private copy of /etc/nginx (nginx.conf, conf.d/, sites-enabled/default -> sites-available/…)
with only its absolute paths, the user and port 80 moved into the test's directory: the shipped
config is rendered into conf.d/ by the documented line. With Debian's default site left enabled,
nginx must refuse the config (a duplicate default server) rather than answer "Welcome to nginx!";
after the documented command that disables it, every Host reaches assetgate."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import require, require_binary
from tests.deploy.conftest import REPO, render
from tests.serve_process import Served, pick_port, serve, stop, wait_healthy

pytestmark = pytest.mark.slow  # nginx on Debian's layout

STOCK = Path("/etc/nginx")


def disable_commands() -> list[str]:
    """The documented commands that take Debian's default site out, as a reader would paste."""
    text = (REPO / "docs" / "deploying.md").read_text()
    lines = [line.strip() for line in text.splitlines() if "sites-enabled/default" in line]
    commands = [line for line in lines if line.startswith("rm ")]
    assert commands == ["rm /etc/nginx/sites-enabled/default"], lines
    return commands


def copy_stock_layout(tmp: Path, port: int) -> Path:
    """/etc/nginx copied under ``tmp``, paths and port 80 moved there; the copy's nginx.conf."""
    require(
        (STOCK / "sites-enabled" / "default").exists(),
        "Debian's nginx layout (/etc/nginx/sites-enabled/default) is not installed",
    )
    etc = tmp / "etc" / "nginx"
    shutil.copytree(STOCK, etc, symlinks=True)
    for link in etc.rglob("*"):
        if link.is_symlink() and str(link.readlink()).startswith(f"{STOCK}/"):
            target = etc / link.readlink().relative_to(STOCK)
            link.unlink()
            link.symlink_to(target)
    (tmp / "log").mkdir()
    temp = tmp / "temp"
    temp.mkdir()
    for path in (etc / "nginx.conf", etc / "sites-available" / "default"):
        text = path.read_text()
        text = text.replace(f"{STOCK}/", f"{etc}/")
        text = text.replace("/run/nginx.pid", str(tmp / "nginx.pid"))
        text = text.replace("/var/log/nginx/", f"{tmp / 'log'}/")
        # As root the workers would drop to www-data, who cannot enter pytest's private dirs.
        text = re.sub(r"^user \S+;", "user root;", text, flags=re.M)
        text = text.replace("http {", f"http {{\n\tproxy_temp_path {temp};", 1)
        text = text.replace("listen 80 default_server;", f"listen 127.0.0.1:{port} default_server;")
        text = text.replace("listen [::]:80 default_server;", "")  # loopback v4 only here
        path.write_text(text)
    assert "listen 127.0.0.1:" in (etc / "sites-enabled" / "default").read_text()
    return etc / "nginx.conf"


def nginx_test(nginx: str, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [nginx, "-t", "-c", str(config), "-e", str(config.parent.parent.parent / "log" / "t.log")],
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("debian-backend")
    root = tmp / "root"
    root.mkdir()
    with serve(tmp, root=str(root)) as served:
        yield served


def test_the_documented_steps_on_debians_layout_reach_assetgate(
    tmp_path: Path, backend: Served
) -> None:
    nginx = require_binary("nginx")
    require_binary("envsubst")
    port = pick_port()
    config = copy_stock_layout(tmp_path, port)
    site = config.parent / "conf.d" / "assetgate.conf"
    render(site, port, [backend.port], tmp_path / "cache")

    # Default site still enabled: refused loudly, never the welcome page for every host.
    refused = nginx_test(nginx, config)
    assert refused.returncode != 0
    assert "duplicate default server" in refused.stderr
    assert "sites-enabled/default" in refused.stderr

    for command in disable_commands():
        subprocess.run(
            ["bash", "-c", command.replace(f"{STOCK}/", f"{config.parent}/")],
            check=True,
            timeout=10,
        )
    assert (config.parent / "sites-available" / "default").is_file()  # only the link went
    checked = nginx_test(nginx, config)
    assert checked.returncode == 0, checked.stderr

    log = tmp_path / "stderr.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [nginx, "-c", str(config), "-e", str(tmp_path / "log" / "error.log"),
             "-g", "daemon off;"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process, log)
        for host in ("www.example.org", "localhost", "203.0.113.7"):
            answer = httpx.get(f"{url}/healthz", headers={"Host": host}, timeout=10)
            assert answer.status_code == 200
            assert answer.json()["status"] == "ok"
            front = httpx.get(f"{url}/", headers={"Host": host}, timeout=10)
            assert "Welcome to nginx" not in front.text
            assert front.json()["code"] == 400  # assetgate's optimizer: `file` is missing
    finally:
        stop(process)
