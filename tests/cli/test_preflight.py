"""Every unusable setting stops every entry point in one line naming it, exit 2, no banner.

Issue 36 item 5 (and issue 37 step 4): the store or the result cache under a regular file,
ASSETGATE_WHOIS_SERVERS missing or inline, ASSETGATE_RDAP_BOOTSTRAP missing printed the banner,
then a traceback, exit 3. The same checks now run in ``serve``, ``optimize`` and the app factory
uvicorn's workers call; JSON settings take inline JSON or a file path alike; a misspelt name is a
warning naming the closest setting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assetgate.cli.preflight import SettingsRefused, checked_settings, typo_warnings
from tests.serve_process import clean_env, run_cli, serve

SERVERS = {"com": "127.0.0.1:4343"}


def cases(tmp: Path) -> list[tuple[dict[str, str], str]]:
    """(environment, the one line expected) for each unusable setting."""
    blocker = tmp / "a-file"
    blocker.write_text("not a directory")
    return [
        (
            {"ASSETGATE_STORE": str(blocker / "packages")},
            f"assetgate: ASSETGATE_STORE: cannot create {blocker / 'packages'} (Not a directory)",
        ),
        (
            {"ASSETGATE_RESULT_CACHE_DIR": str(blocker)},
            f"assetgate: ASSETGATE_RESULT_CACHE_DIR: {blocker} is not a directory",
        ),
        (
            {"ASSETGATE_WHOIS_SERVERS": str(tmp / "missing.json")},
            f"assetgate: ASSETGATE_WHOIS_SERVERS: cannot read {tmp / 'missing.json'}: "
            "No such file or directory",
        ),
        (
            {"ASSETGATE_WHOIS_SERVERS": '{"com": '},
            "assetgate: ASSETGATE_WHOIS_SERVERS: not JSON (Expecting value: line 1 column 9 "
            "(char 8))",
        ),
        (
            {"ASSETGATE_RDAP_BOOTSTRAP": str(tmp / "rdap" / "dns.json")},
            f"assetgate: ASSETGATE_RDAP_BOOTSTRAP: cannot read {tmp / 'rdap' / 'dns.json'}: "
            "No such file or directory",
        ),
        (
            {"ASSETGATE_RDAP_BOOTSTRAP": '{"services": 3}'},
            "assetgate: ASSETGATE_RDAP_BOOTSTRAP: RDAP bootstrap: expected an object with a "
            "services list",
        ),
        (
            {"ASSETGATE_PRESETS": '{"thumb": {"width": 0}}'},
            "assetgate: ASSETGATE_PRESETS: preset 'thumb': width: expected an integer "
            "1..50000, got '0'",
        ),
        (
            {"ASSETGATE_WORK_DIR": str(tmp / "nowhere")},
            f"assetgate: ASSETGATE_WORK_DIR: expected an existing directory, got "
            f"'{tmp / 'nowhere'}'",
        ),
    ]


@pytest.mark.parametrize("index", range(8))
def test_serve_says_one_line_and_exits_2_before_the_banner(tmp_path: Path, index: int) -> None:
    env, line = cases(tmp_path)[index]
    done = run_cli("serve", "--port", "0", env={"ASSETGATE_STORE": str(tmp_path / "s"), **env})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [line]
    assert done.stdout == ""


def run_entry(entry: str, tmp: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One entry point with ``env``: ``serve``, ``optimize`` or uvicorn's app factory."""
    env = {"ASSETGATE_STORE": str(tmp / "s"), **env}
    if entry == "serve":
        return run_cli("serve", "--port", "0", env=env)
    if entry == "optimize":
        (tmp / "src").mkdir(exist_ok=True)
        return run_cli("optimize", str(tmp / "src"), str(tmp / "out"), env=env)
    return subprocess.run(
        [sys.executable, "-c", "from assetgate.cli.serve import app_factory; app_factory()"],
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("entry", ["optimize", "factory"])
@pytest.mark.parametrize("index", range(8))
def test_optimize_and_the_app_factory_check_the_same(
    tmp_path: Path, entry: str, index: int
) -> None:
    """Every case ``serve`` refuses, the other two entry points refuse with the same line."""
    env, line = cases(tmp_path)[index]
    done = run_entry(entry, tmp_path, env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [line]


@pytest.mark.parametrize("entry", ["serve", "optimize", "factory"])
def test_a_value_pydantic_refuses_is_one_line_at_every_entry_point(
    tmp_path: Path, entry: str
) -> None:
    done = run_entry(entry, tmp_path, {"ASSETGATE_MAX_URL_BYTES": "eighty"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "assetgate: ASSETGATE_MAX_URL_BYTES: input should be a valid integer, unable to parse "
        "string as an integer, got 'eighty'"
    ]


@pytest.mark.parametrize("entry", ["serve", "optimize", "factory"])
def test_a_part_check_is_one_line_at_every_entry_point(tmp_path: Path, entry: str) -> None:
    """The checks that need a part's own table (here: the parts that spend the budget)."""
    done = run_entry(entry, tmp_path, {"ASSETGATE_RATE_LIMIT_PARTS": "convert,wois"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "assetgate: ASSETGATE_RATE_LIMIT_PARTS: no part 'wois' spends the budget (the parts "
        "that can: convert, optimizer, packages, whois)"
    ]


def test_a_flag_is_named_as_typed(tmp_path: Path) -> None:
    done = run_cli("serve", "--port", "0", "--root", str(tmp_path / "nowhere"),
                   env={"ASSETGATE_STORE": str(tmp_path / "s")})  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"assetgate: --root: {tmp_path / 'nowhere'} is not a directory"
    ]


@pytest.mark.parametrize("inline", [True, False])
def test_json_settings_are_taken_inline_or_from_a_file(tmp_path: Path, inline: bool) -> None:
    """The whois servers as JSON text or as a file: either serves (the banner, no error)."""
    text = json.dumps(SERVERS)
    file = tmp_path / "servers.json"
    file.write_text(text)
    with serve(tmp_path, whois_servers=text if inline else str(file)) as served:
        assert "ASSETGATE_WHOIS_SERVERS" not in served.log_text()
        assert "assetgate: serving" in served.log_text()


def test_a_misspelt_setting_is_a_warning_naming_the_closest(tmp_path: Path) -> None:
    with serve(tmp_path, auto_format="avif", portt="1") as served:
        text = served.log_text()
    assert (
        "assetgate: warning: ASSETGATE_AUTO_FORMAT is no setting and is ignored; "
        "did you mean ASSETGATE_AUTO_FORMATS?"
    ) in text
    assert "ASSETGATE_PORTT is no setting and is ignored; did you mean ASSETGATE_PORT?" in text
    assert text.index("ASSETGATE_PORTT") < text.index("assetgate: serving")


def test_names_far_from_every_setting_get_no_guess() -> None:
    assert typo_warnings({"ASSETGATE_ZZZZZZZZZZZZ": "1", "ASSETGATE_SITE": "x"}) == [
        "assetgate: warning: ASSETGATE_ZZZZZZZZZZZZ is no setting and is ignored"
    ]


def test_optimize_refuses_an_unwritable_destination_and_an_unknown_watermark_once(
    tmp_path: Path,
) -> None:
    """Item 7: one line and exit 2, not one failure per file."""
    src = tmp_path / "photos"
    src.mkdir()
    for name in ("a.png", "b.png"):
        (src / name).write_bytes(b"\x89PNG\r\n\x1a\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {"ASSETGATE_STORE": str(tmp_path / "store")}
    unwritable = run_cli("optimize", str(src), str(blocker / "out"), env=env)
    assert unwritable.returncode == 2
    assert unwritable.stderr.splitlines() == [
        f"assetgate: DEST: cannot create {blocker / 'out'} (Not a directory)"
    ]
    marked = run_cli("optimize", str(src), str(tmp_path / "out"), "--watermark", "logo", env=env)
    assert marked.returncode == 2
    assert marked.stderr.splitlines() == [
        "assetgate: --watermark: no watermark 'logo' (configured: none: ASSETGATE_WATERMARKS "
        "is not set)"
    ]


def test_a_loopback_origin_is_named_at_start_with_the_setting_that_allows_it(
    tmp_path: Path,
) -> None:
    with serve(tmp_path, root="http://127.0.0.1:9/static") as served:
        text = served.log_text()
    assert (
        "assetgate: warning: ASSETGATE_ROOT: http://127.0.0.1:9/static is a private or loopback "
        "address, which origin fetches refuse; set ASSETGATE_ORIGIN_ALLOW_PRIVATE=true to allow it"
    ) in text


def test_a_long_path_is_named_whole(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A value was cut at 80 characters, so a long path named another path."""
    missing = tmp_path / ("a-long-directory-name-" * 5) / "work"
    monkeypatch.setenv("ASSETGATE_WORK_DIR", str(missing))
    with pytest.raises(SettingsRefused) as refused:
        checked_settings()
    assert str(refused.value) == (
        f"assetgate: ASSETGATE_WORK_DIR: expected an existing directory, got '{missing}'"
    )
    monkeypatch.delenv("ASSETGATE_WORK_DIR")
    monkeypatch.setenv("ASSETGATE_LOG_LEVEL", "x" * 100)
    with pytest.raises(SettingsRefused) as refused:
        checked_settings()
    assert str(refused.value).endswith(f"got '{'x' * 79}…'")
