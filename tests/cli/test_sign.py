"""``assetgate sign`` prints a URL the server accepts; bad signing or preset settings: one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from assetgate.optimizer.params import ALIASES
from assetgate.web.signing import canonical_message, verify
from tests.cli.test_serve import run_cli

KEY = "cli-key-" + "c" * 32


@pytest.mark.parametrize(
    "url", ["/photo.jpg?width=400&format=webp", "/?file=photo.jpg&f=webp&w=400"]
)
def test_sign_prints_the_url_with_a_verifiable_signature(url: str) -> None:
    result = run_cli("sign", url, env={"ASSETGATE_SIGNING_KEYS": f"{KEY},{'z' * 32}"})
    assert result.returncode == 0, result.stderr
    signed = result.stdout.strip()
    head, _, signature = signed.rpartition("&s=")
    assert head == url
    message = canonical_message("photo.jpg", [("width", "400"), ("format", "webp")], ALIASES)
    assert verify([KEY], message, signature)
    assert not verify(["z" * 32], message, signature)  # the first key signs


def test_sign_without_keys_says_which_setting() -> None:
    result = run_cli("sign", "/photo.jpg?width=4")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "assetgate: ASSETGATE_SIGNING_KEYS: not set, nothing to sign with"
    )


def test_a_short_key_is_refused_without_echoing_it() -> None:
    result = run_cli("serve", env={"ASSETGATE_SIGNING_KEYS": "hunter2"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("assetgate: ASSETGATE_SIGNING_KEYS: key 1 is shorter than 32")
    assert "hunter2" not in result.stderr


@pytest.mark.parametrize(
    ("text", "reason"),
    [("{nope", "not JSON"), ('{"thumb": {"width": 0}}', "preset 'thumb': width")],
)
def test_a_bad_preset_file_stops_serve_in_one_line(tmp_path: Path, text: str, reason: str) -> None:
    presets = tmp_path / "presets.json"
    presets.write_text(text)
    result = run_cli("serve", env={"ASSETGATE_PRESETS": str(presets)})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("assetgate: ASSETGATE_PRESETS: ")
    assert reason in lines[0]
    assert "Traceback" not in result.stderr


def test_a_missing_preset_file_stops_serve(tmp_path: Path) -> None:
    result = run_cli("serve", env={"ASSETGATE_PRESETS": str(tmp_path / "none.json")})
    assert result.returncode == 2
    missing = tmp_path / "none.json"
    assert (
        result.stderr
        == f"assetgate: ASSETGATE_PRESETS: cannot read {missing}: No such file or directory\n"
    )
