"""``assetgate serve`` refuses a bad setting with one line naming it, and says where to look."""

from __future__ import annotations

import re
import socket
import subprocess
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest

import assetgate
from assetgate.cli.serve import welcome
from assetgate.settings import DEMO_ROOT, Settings
from tests.imaging.factory import bomb_png
from tests.serve_process import COMMAND, clean_env, run_cli, serve, stop, wait_healthy
from tests.waiting import wait_until


@pytest.mark.parametrize(
    ("env", "args", "named", "got"),
    [
        ({"ASSETGATE_WORKERS": "abc"}, [], "ASSETGATE_WORKERS", "'abc'"),
        ({"ASSETGATE_WORKERS": "0"}, [], "ASSETGATE_WORKERS", "'0'"),
        ({"ASSETGATE_RATE_LIMIT": "lots"}, [], "ASSETGATE_RATE_LIMIT", "'lots'"),
        ({"ASSETGATE_LOG_LEVEL": "loud"}, [], "ASSETGATE_LOG_LEVEL", "'loud'"),
        (
            {"ASSETGATE_RATE_LIMIT_PARTS": "convert,images"},
            [],
            "ASSETGATE_RATE_LIMIT_PARTS",
            "no part 'images' spends the budget (the parts that can: convert, optimizer, "
            "packages, whois)",
        ),
        ({}, ["--port", "99999"], "--port", "99999"),
        ({}, ["--root", "/nonexistent-assetgate-root"], "--root", "is not a directory"),
        # Issue 35, item 5: a shared result store needs the key that authenticates its entries.
        (
            {"ASSETGATE_RESULT_STORE": "s3://results"},
            [],
            "ASSETGATE_RESULT_STORE_KEY",
            "required when ASSETGATE_RESULT_STORE is set",
        ),
        (
            {"ASSETGATE_RESULT_STORE": "s3://results", "ASSETGATE_RESULT_STORE_KEY": "short"},
            [],
            "ASSETGATE_RESULT_STORE_KEY",
            "shorter than 32 characters",
        ),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(
    env: dict[str, str], args: list[str], named: str, got: str
) -> None:
    result = run_cli("serve", *args, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"assetgate: {named}: ")
    assert got in lines[0]
    assert "Traceback" not in result.stderr


def test_help_is_plain_text() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    assert "serve" in result.stdout
    assert "``" not in result.stdout
    served = run_cli("serve", "--help")
    assert "--workers" in served.stdout
    assert "``" not in served.stdout


def test_welcome_names_the_urls_to_open(tmp_path: Path) -> None:
    text = welcome(Settings(host="0.0.0.0", port=9000, root=DEMO_ROOT))
    assert "http://127.0.0.1:9000/index.html" in text
    assert "http://127.0.0.1:9000/npm" in text
    assert "http://127.0.0.1:9000/openapi.json" in text
    for page in ("/ui/", "/ui/optimizer", "/ui/convert", "/ui/whois", "/ui/api"):
        assert f"http://127.0.0.1:9000{page} " in text
    bare = welcome(Settings(host="::1", port=81, root=tmp_path))
    assert "http://[::1]:81/npm" in bare
    assert "index.html" not in bare


@pytest.mark.parametrize(("how", "named"), [("flag", "--port"), ("env", "ASSETGATE_PORT")])
def test_a_busy_port_is_one_line_before_the_banner(tmp_path: Path, how: str, named: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        env = {"ASSETGATE_STORE": str(tmp_path / "store"), "ASSETGATE_HOST": "127.0.0.1"}
        args = ["--port", port] if how == "flag" else []
        if how == "env":
            env["ASSETGATE_PORT"] = port
        result = run_cli("serve", *args, env=env)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"assetgate: {named}: cannot listen on 127.0.0.1:{port}: address already in use"
    )
    assert result.stdout == ""


def test_an_address_not_on_this_machine_names_the_host(tmp_path: Path) -> None:
    env = {"ASSETGATE_STORE": str(tmp_path / "store")}
    result = run_cli("serve", "--host", "192.0.2.1", "--port", "0", env=env)  # TEST-NET-1
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "assetgate: --host: cannot listen on 192.0.2.1:0: no such local address"
    )


def test_version_names_the_package_and_the_interface_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"assetgate {version('assetgate')} (interfaces 1.2.2)"
    assert assetgate.__version__ == version("assetgate")  # one version, pyproject's


def test_healthz_says_the_versions_over_a_real_socket(tmp_path: Path) -> None:
    with serve(tmp_path) as server:
        response = httpx.get(f"{server.base}/healthz", timeout=10)
    assert response.json() == {
        "status": "ok",
        "version": version("assetgate"),
        "interface_version": "1.2.2",
    }


def test_port_0_is_served_on_the_port_the_banner_names(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    env = clean_env({"ASSETGATE_STORE": str(tmp_path / "store"), "ASSETGATE_ROOT": str(tmp_path)})
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*COMMAND, "serve", "--host", "127.0.0.1", "--port", "0"],
            env=env,
            stderr=out,
            start_new_session=True,
        )
    try:
        wait_until(lambda: "/healthz" in log.read_text(), timeout=60)
        found = re.search(r"http://127\.0\.0\.1:(\d+)/healthz", log.read_text())
        assert found is not None, log.read_text()
        assert found[1] != "0"
        wait_healthy(f"http://127.0.0.1:{found[1]}", process, log)
    finally:
        stop(process)


def test_a_watermark_over_the_image_limits_stops_the_server_at_start(tmp_path: Path) -> None:
    """Issue 35, item 13: a 400 MP PNG watermark (a few hundred bytes) was accepted at start."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "logo.png").write_bytes(bomb_png(20_000))
    env = {
        "ASSETGATE_STORE": str(tmp_path / "store"),
        "ASSETGATE_ROOT": str(root),
        "ASSETGATE_WATERMARKS": '{"logo": {"path": "logo.png"}}',
    }
    result = run_cli("serve", "--port", "0", env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("assetgate: ASSETGATE_WATERMARKS: watermark 'logo': path: ")
    assert "over the input limit of 4 MP" in lines[0]
